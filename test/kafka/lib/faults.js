'use strict';
// The harness of the fault scenarios (test/kafka/faults-*.test.js): producer and consumer
// PROCESSES (lib/faults-producer.js, lib/faults-consumer.js) on one topic, a fault script run
// while they work, then every figure counted from the message values:
//   - acknowledged: the message numbers each producer process appended to its ack file, at
//     once, in its delivery callback (survives a SIGKILL of that process);
//   - handled: the records each consumer process appended to its log, at once, in its handler;
//   - lost: acknowledged, never handled;
//   - duplicated: handled more than once. A re-read (allowed) is a message handled by a later
//     consumer process that an earlier one handled at or above the offset committed on its
//     partition when that one was gone; anything else is a bad duplicate;
//   - order: per chain (producer process, key), in handling order across the consumer
//     processes, re-reads aside: a message not flagged whose number is not above the last one
//     handled is a violation. A flagged message starts a new run (docs/ordering.md: what
//     follows it is in order after it, not necessarily after everything before it); a message
//     handled after a later one of its chain that way is counted as explained by a flag;
//   - flagged (ordered: false): allowed only where the scenario's flag rule says
//     docs/ordering.md allows it;
//   - longest stall: the longest time from a message's send to its handling.
// Each scenario appends its figures as one JSON line to the summary file (KDP_FAULTS_SUMMARY,
// else <tmpdir>/kdp-faults-summary.jsonl); summaryLine() folds them into the suite's last line.
//
// Sizes: FAULTS_LONG=1 multiplies the message counts and the fault durations (README).
//
// Run directly with --summary [file], prints the summary line. Has no tests.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fork } = require('node:child_process');
const K = require('./kafka');
const F = require('./faults-values');
const { FaultProxy, routesFromEnv } = require('../../lib/fault-proxy');

const LONG = process.env.FAULTS_LONG === '1';
/**
 * librdkafka's error events while a broker's connections go away (reset, or the broker stopped):
 * transient, the client reconnects; what was not delivered meanwhile is counted by the figures.
 */
const TRANSIENT_CONNECTION_ERRORS = /all broker connections are down|broker transport failure/;
const SUMMARY = process.env.KDP_FAULTS_SUMMARY || path.join(os.tmpdir(), 'kdp-faults-summary.jsonl');
const PRODUCER = path.join(__dirname, 'faults-producer.js');
const CONSUMER = path.join(__dirname, 'faults-consumer.js');

/** tap options skipping a test that needs the proxied cluster (KAFKA_PROXY, scripts/kafka.sh proxy-map). */
function needsProxy() {
  if (!K.brokers()) return K.needsCluster();
  return routesFromEnv() ? {} : { skip: 'KAFKA_PROXY is not set: the cluster needs KAFKA_PROXY_PORT (npm run test:kafka starts it so)' };
}

class Scenario {
  /**
   * o: name, partitions (6), proxy (clients through the fault proxy), maxWaitMs (consumers'),
   * sessionTimeoutMs (45,000), concurrency and handlerMs (consumers': calls at once, and how
   * long each waits, 0 to twice that), mergeByTime (the members' logs read as one, by when each
   * call started: members that handle a key side by side), flagRule(record, ctx) → allowed
   * (default: none allowed), groupProtocol (consumers': 'classic' or 'consumer', KIP-848).
   */
  constructor(t, o) {
    this.t = t;
    this.o = { partitions: 6, maxWaitMs: 30000, sessionTimeoutMs: 45000, flagRule: () => false, ...o };
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), `kdp-faults-${o.name}-`));
    this.topic = K.topicName(`faults-${o.name}`);
    this.group = `${this.topic}-group`;
    this.salt = Math.random().toString(36).slice(2, 6);
    this.producers = []; // by incarnation
    this.consumers = []; // by incarnation
    this.committedAfter = []; // committed offsets after consumer i was gone
    /** Per consumer incarnation SIGKILLed, when (ms): the re-read bound counts what it handled just before. */
    this.killedAt = [];
    this.proxy = null;
    this.bootstrap = K.brokers();
    this.events = [];
    this.started = 0;
    t.teardown(() => this.cleanup());
  }

  note(text) {
    this.events.push(`${((Date.now() - this.started) / 1000).toFixed(1)} s ${text}`);
  }

  async setup() {
    const replication = Math.min(3, K.brokers().split(',').length);
    await K.createTopic(this.topic, this.o.partitions, replication, { 'min.insync.replicas': String(Math.min(2, replication)) });
    if (this.o.proxy) {
      this.proxy = await FaultProxy.start(routesFromEnv());
      this.bootstrap = this.proxy.ports().map((p) => `127.0.0.1:${p}`).join(',');
    }
    this.t.comment(`topic ${this.topic}: ${this.o.partitions} partitions, replication ${replication}; clients ${this.o.proxy ? `through the fault proxy ${this.bootstrap}` : `direct ${this.bootstrap}`}`);
  }

  /** Forks producer incarnation (a new process); resolves once it is ready and sending. */
  async startProducer({ count, rate }) {
    const incarnation = this.producers.length;
    const ackFile = path.join(this.dir, `acked-${incarnation}`);
    const child = fork(PRODUCER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const p = { incarnation, count, ackFile, child, sent: 0, acked: 0, report: null, killed: false };
    let ready;
    const isReady = new Promise((resolve) => { ready = resolve; });
    p.done = new Promise((resolve) => {
      child.on('message', (m) => {
        if (m.type === 'ready') ready();
        else if (m.type === 'progress') {
          p.sent = m.sent;
          p.acked = m.acked;
        } else if (m.type === 'done') p.report = m;
        else if (m.type === 'burst-sent' && p.onBurst) p.onBurst(m);
      });
      child.on('exit', (code, signal) => {
        ready();
        resolve({ code, signal });
      });
    });
    child.send({ type: 'start', incarnation, topic: this.topic, bootstrap: this.bootstrap, count, rate, salt: this.salt, ackFile, seed: incarnation });
    await isReady;
    child.send({ type: 'go' });
    this.producers.push(p);
    return p;
  }

  /**
   * SIGKILLs a producer process; resolves once it is gone. burst > 0: it first sends that many
   * messages at once and is killed as soon as it reports them handed to librdkafka.
   */
  async killProducer(p, burst = 0) {
    p.killed = true;
    if (burst > 0) {
      const sent = new Promise((resolve) => { p.onBurst = resolve; });
      p.child.send({ type: 'burst', messages: burst });
      await Promise.race([sent, p.done]);
    }
    p.child.kill('SIGKILL');
    await p.done;
    this.note(`producer ${p.incarnation} SIGKILLed (${fs.statSync(p.ackFile).size / 4} acknowledged)`);
  }

  /** Forks consumer incarnation (a new process in the group); resolves once it has its first assignment. */
  async startConsumer() {
    const incarnation = this.consumers.length;
    const logFile = path.join(this.dir, `handled-${incarnation}`);
    const child = fork(CONSUMER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const c = { incarnation, logFile, child, handled: 0, held: 0, report: null, killed: false, assigned: [], gaveUp: new Map() };
    let assigned;
    const isAssigned = new Promise((resolve) => { assigned = resolve; });
    c.done = new Promise((resolve) => {
      child.on('message', (m) => {
        if (m.type === 'assigned') {
          c.assigned.push(m.partitions);
          c.assignedAt ??= Date.now();
          assigned();
        } else if (m.type === 'revoked') {
          for (const { partition, committed } of m.partitions) c.gaveUp.set(partition, committed);
        } else if (m.type === 'progress') {
          c.handled = m.handled;
          c.held = m.held;
        } else if (m.type === 'done') c.report = m;
      });
      child.on('exit', (code, signal) => {
        assigned();
        resolve({ code, signal });
      });
    });
    child.send({
      type: 'start', topic: this.topic, group: this.group, bootstrap: this.bootstrap, maxWaitMs: this.o.maxWaitMs,
      sessionTimeoutMs: this.o.sessionTimeoutMs, logFile, concurrency: this.o.concurrency, handlerMs: this.o.handlerMs, groupProtocol: this.o.groupProtocol,
    });
    this.consumers.push(c);
    await isAssigned;
    return c;
  }

  /** SIGKILLs a consumer process; resolves with the group's committed offsets once it is gone. */
  async killConsumer(c) {
    c.killed = true;
    this.killedAt[c.incarnation] = Date.now();
    c.child.kill('SIGKILL');
    await c.done;
    const { committed } = await require('./hot-key').offsetsOf(this.group, this.topic, this.o.partitions);
    this.committedAfter[c.incarnation] = committed;
    this.note(`consumer ${c.incarnation} SIGKILLed after handling ${fs.statSync(c.logFile).size / F.RECORD}; committed then ${committed.join(',')}`);
    return committed;
  }

  async stopConsumer(c) {
    if (c.child.exitCode === null && c.child.signalCode === null) c.child.send({ type: 'stop' });
    await c.done;
  }

  /** Messages sent by all producer processes so far. */
  sent() {
    return this.producers.reduce((n, p) => n + p.sent, 0);
  }

  /** Waits until the producers have sent `n` messages in all (polled). */
  async untilSent(n, timeoutMs = 600000) {
    return require('./hot-key').until(() => this.sent() >= n || this.producers.every((p) => p.child.exitCode !== null || p.child.signalCode !== null), timeoutMs);
  }

  acked() {
    return this.producers.map((p) => {
      const b = fs.existsSync(p.ackFile) ? fs.readFileSync(p.ackFile) : Buffer.alloc(0);
      const seen = new Uint8Array(p.count);
      let n = 0;
      for (let o = 0; o + 4 <= b.length; o += 4) {
        const id = b.readUInt32BE(o);
        if (!seen[id]) n++;
        seen[id] = 1;
      }
      return { seen, n };
    });
  }

  logs() {
    return this.consumers.map((c) => (fs.existsSync(c.logFile) ? F.readRecords(fs.readFileSync(c.logFile)) : []));
  }

  /** Waits until every acknowledged message has been handled and the last consumer holds nothing. */
  async untilAllHandled(timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const acked = this.acked();
      const handled = new Set();
      for (const log of this.logs()) for (const r of log) handled.add(r.id);
      let missing = 0;
      acked.forEach(({ seen }, inc) => {
        for (let n = 0; n < seen.length; n++) if (seen[n] && !handled.has(inc * F.ID_SPAN + n)) missing++;
      });
      const last = this.consumers[this.consumers.length - 1];
      if (missing === 0 && last.held === 0) return { missing, at: Date.now() };
      if (Date.now() > deadline) return { missing, at: Date.now() };
      await K.sleep(1000);
    }
  }

  /**
   * Counts everything from the values (see the file's head). Returns the figures and the
   * problem lists (up to 5 examples each, with counts).
   */
  analyse() {
    const acked = this.acked();
    const logs = this.logs();
    const problems = {};
    const problem = (kind, text) => {
      const p = problems[kind] ?? (problems[kind] = { count: 0, examples: [] });
      p.count++;
      if (p.examples.length < 5) p.examples.push(text);
    };
    const first = new Map(); // id -> { consumer, partition, offset }
    const handledBy = new Map(); // id -> consumer incarnations
    let handled = 0;
    let duplicates = 0;
    let rereads = 0;
    let flagged = 0;
    let longestStall = 0;
    let foreign = 0;
    const reasons = {};
    const chains = new Map(); // chain -> { run: seq of the last handled in the current run, max: highest seq handled, flags: seqs handled flagged }
    let explained = 0; // handled after a later message of its chain, with a flag on the way
    const chainKey = (r) => Math.floor(r.id / F.ID_SPAN) * 65536 + r.keyId;
    const seqHandled = new Map(); // `${chain}:${seq}` -> consumer incarnation that handled it first
    const isReread = (r, c) => {
      const f = first.get(r.id);
      if (!f || f.consumer >= c) return false;
      const committed = this.committedAfter[f.consumer];
      return committed !== undefined && f.offset >= committed[f.partition];
    };
    // One member after another (members that ran one after the other), or all of them merged
    // by when each call started (members handling a spread key side by side: mergeByTime).
    const entries = [];
    logs.forEach((log, c) => {
      for (const r of log) entries.push({ c, r, i: entries.length });
    });
    if (this.o.mergeByTime) entries.sort((a, b) => a.r.at - b.r.at || a.c - b.c || a.i - b.i);
    for (const { c, r } of entries) {
      const inc = Math.floor(r.id / F.ID_SPAN);
      if (inc >= this.producers.length || r.id % F.ID_SPAN >= this.producers[inc].count) {
        foreign++;
        continue;
      }
      handled++;
      longestStall = Math.max(longestStall, r.at - r.sentAt);
      const name = `producer ${inc} #${r.id % F.ID_SPAN} (key ${r.keyId} seq ${r.seq}, ${r.partition}/${r.offset}, consumer ${c})`;
      let reread = false;
      if (first.has(r.id)) {
        duplicates++;
        if (handledBy.get(r.id).has(c)) problem('twice', `${name} handled twice by one consumer`);
        else if (isReread(r, c)) {
          rereads++;
          reread = true;
        } else problem('duplicate', `${name} handled again below the committed offset`);
        handledBy.get(r.id).add(c);
      } else {
        first.set(r.id, { consumer: c, partition: r.partition, offset: r.offset });
        handledBy.set(r.id, new Set([c]));
      }
      const chain = chainKey(r);
      const state = chains.get(chain) ?? { run: -1, max: -1, flags: [] };
      chains.set(chain, state);
      if (r.flagged) {
        flagged++;
        reasons[r.reason] = (reasons[r.reason] ?? 0) + 1;
        const prev = seqHandled.get(`${chain}:${r.seq - 1}`);
        const ctx = { consumer: c, incarnation: inc, predecessorHandledBy: prev === undefined ? -1 : prev, producer: this.producers[inc] };
        if (!this.o.flagRule(r, ctx)) problem('flag', `${name} flagged ${r.reason}; predecessor ${prev === undefined ? 'not handled before' : `handled by consumer ${prev}`}`);
      }
      if (!reread) {
        // docs/ordering.md: a run of ordered messages is in send order; a flagged message
        // starts a new run, in order after it but not necessarily after everything before it;
        // and the message it went before (its predecessor, or one before that, held up
        // elsewhere) comes later, after the run: explained by the flag between them.
        const late = !r.flagged && r.seq <= state.run;
        if (late && state.flags.some((f) => f > r.seq && f <= state.run)) explained++;
        else {
          if (late) problem('order', `${name} after #${state.run} of its chain`);
          else if (r.seq <= state.max) explained++;
          state.run = r.seq;
        }
        if (r.flagged) state.flags.push(r.seq);
        state.max = Math.max(state.max, r.seq);
      }
      if (!seqHandled.has(`${chain}:${r.seq}`)) seqHandled.set(`${chain}:${r.seq}`, c);
    }
    let ackedTotal = 0;
    acked.forEach(({ seen, n }, inc) => {
      ackedTotal += n;
      for (let m = 0; m < seen.length; m++) if (seen[m] && !first.has(inc * F.ID_SPAN + m)) problem('lost', `producer ${inc} #${m} acknowledged, never handled`);
    });
    const count = (k) => (problems[k] ? problems[k].count : 0);
    return {
      acked: ackedTotal, handled, distinct: first.size, duplicates, rereads, rereadBound: this.rereadBound(logs), flagged, reasons, foreign, explained,
      lost: count('lost'), badDuplicates: count('duplicate') + count('twice'), orderViolations: count('order'), badFlags: count('flag'),
      longestStallMs: Math.round(longestStall), problems,
    };
  }

  /**
   * What may be handled again after the SIGKILLs, with handled records (docs/ordering.md,
   * "Restart and rebalance"): what each killed consumer handled in its last commit interval
   * (200 ms) before the kill, and 250 ms more for the commit's round trip; null when none was killed.
   */
  rereadBound(logs) {
    let bound = null;
    this.killedAt.forEach((at, c) => {
      if (at === undefined || logs[c] === undefined) return;
      bound = (bound ?? 0) + logs[c].filter((r) => r.at >= at - 450).length;
    });
    return bound;
  }

  /** Standard assertions on the figures, and the scenario's JSON line in the summary file. */
  report(fig, extra = {}) {
    const t = this.t;
    const ex = (k) => (fig.problems[k] ? fig.problems[k].examples : []);
    t.comment(`events: ${this.events.join('; ')}`);
    t.comment(`acknowledged ${fig.acked}, handled ${fig.handled} (${fig.distinct} distinct), duplicated ${fig.duplicates} (re-reads ${fig.rereads}), flagged ${fig.flagged} ${JSON.stringify(fig.reasons)}, handled after a later message of their chain with a flag on the way ${fig.explained}, longest stall ${(fig.longestStallMs / 1000).toFixed(1)} s`);
    if (fig.rereadBound !== null) t.comment(`re-reads ${fig.rereads} against the bound ${fig.rereadBound}: what the killed consumer handled in its last commit interval (200 ms) before the kill, and 250 ms more`);
    if (this.proxy) t.comment(`proxy: ${JSON.stringify(this.proxy.stats())}`);
    t.equal(fig.foreign, 0, 'no message that was not produced');
    t.same(ex('lost'), [], `no acknowledged message lost (${fig.lost})`);
    t.same([...ex('duplicate'), ...ex('twice')], [], `duplicates only re-reads of what was not committed (${fig.duplicates}, re-reads ${fig.rereads})`);
    t.same(ex('order'), [], `per producer process and key, handled in send order but where a flag breaks the run (${fig.orderViolations} violations, ${fig.explained} explained by a flag)`);
    t.same(ex('flag'), [], `flagged only where docs/ordering.md allows (${fig.flagged} flagged)`);
    const line = {
      scenario: this.o.name, acked: fig.acked, lost: fig.lost, duplicated: fig.duplicates, rereads: fig.rereads, rereadBound: fig.rereadBound,
      badDuplicates: fig.badDuplicates, orderViolations: fig.orderViolations, flagExplained: fig.explained, flagged: fig.flagged, badFlags: fig.badFlags,
      longestStallMs: fig.longestStallMs, long: LONG, ...extra,
    };
    fs.appendFileSync(SUMMARY, `${JSON.stringify(line)}\n`);
  }

  async cleanup() {
    for (const p of this.producers) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    for (const c of this.consumers) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    if (this.proxy) await this.proxy.close();
    this.proxy = null;
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The suite's last line from the summary file's JSON lines (the last run of each scenario), or null. */
function summaryLine(file = SUMMARY) {
  if (!fs.existsSync(file)) return null;
  const byName = new Map();
  for (const l of fs.readFileSync(file, 'utf8').split('\n')) if (l.trim()) byName.set(JSON.parse(l).scenario, JSON.parse(l));
  if (byName.size === 0) return null;
  const all = [...byName.values()];
  const sum = (k) => all.reduce((n, x) => n + x[k], 0);
  const dups = sum('duplicated');
  const bad = sum('badDuplicates');
  return {
    all,
    line: `faults: ${all.length} scenarios, lost ${sum('lost')}, duplicated ${dups} (${bad === 0 ? 're-reads only' : `${bad} not re-reads`}), order violations ${sum('orderViolations')}, longest stall ${(Math.max(...all.map((x) => x.longestStallMs)) / 1000).toFixed(1)} s`,
  };
}

/** FAULTS_LONG=1: n * long, else n. */
const size = (n, long) => (LONG ? n * long : n);

if (require.main === module && process.argv[2] === '--summary') {
  const s = summaryLine(process.argv[3] || SUMMARY);
  if (s) console.log(s.line);
}

/** The group protocols each scenario runs under: KDP_GROUP_PROTOCOLS (default both: 'classic,consumer', KIP-848). */
const PROTOCOLS = (process.env.KDP_GROUP_PROTOCOLS || 'classic,consumer').split(',');

/** A scenario's name under a protocol: as it was on classic, with the protocol after it otherwise. */
const underProtocol = (name, groupProtocol) => (groupProtocol === 'classic' ? name : `${name}-${groupProtocol}`);

module.exports = { Scenario, needsProxy, summaryLine, size, LONG, SUMMARY, TRANSIENT_CONNECTION_ERRORS, PROTOCOLS, underProtocol };
