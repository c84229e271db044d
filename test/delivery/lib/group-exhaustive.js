'use strict';
// A consumer group with handled records, checked exhaustively on small scenarios
// (resequencer-group-exhaustive.test.js says what it models and checks). One path is a
// deterministic function of its choices: where each spread or moved message goes, how each
// partition's log interleaves the producers, and, at each step, which of the enabled actions
// runs. explore() runs every path, each on fresh Resequencers, so nothing is cloned.
const { Resequencer, encodeOrderHeader, ORDER_ANCHOR, ORDER_SPREAD, ORDER_RETURN, ORDER_MOVED } = require('../../..');
const { encodeRecord, decodeRecord, fitRecord, RecordView } = require('../../../build/delivery/handled-record');
const { orderOf } = require('../../../build/delivery/message-order');
const { createHash } = require('node:crypto');
const { toMessage } = require('./simulation');

const KIND = { a: ORDER_ANCHOR, s: ORDER_SPREAD, r: ORDER_RETURN, m: ORDER_MOVED };
const NAMES = 'ABC';

/**
 * The partitions' logs of one path. Scripts as in resequencer-exhaustive.test.js: c cold
 * (unmarked, partition 0), a anchor (0), s spread and m moved (any partition), r return (0).
 * Each partition's log is any merge of the producers' messages to it, each producer's in send
 * order. Headers as a producer writes them (src/producer/hold/key-handoffs.ts): a move to
 * another partition than its predecessor, a spread after such a move and a return after a move
 * name their predecessor's offset; the others name its partition only.
 */
function buildLogs(scripts, n, choose) {
  const sent = scripts.map((script, producer) => [...script].map((kind, index) => ({
    producer, index, key: 0, kind, label: `${NAMES[producer]}${index}${kind}`,
    partition: kind === 's' || kind === 'm' ? choose(n) : 0, offset: -1, header: undefined, after: -1,
  })));
  const logs = [];
  for (let p = 0; p < n; p++) {
    const queues = sent.map((ms) => ms.filter((m) => m.partition === p));
    const at = queues.map(() => 0);
    const log = [];
    for (;;) {
      const ready = [];
      for (let i = 0; i < queues.length; i++) if (at[i] < queues[i].length) ready.push(i);
      if (ready.length === 0) break;
      const i = ready[choose(ready.length)];
      const m = queues[i][at[i]++];
      m.offset = log.length;
      log.push(m);
    }
    logs.push(log);
  }
  for (const ms of sent) {
    const id = (ms[0].producer + 1).toString(16).padStart(16, '0');
    let sequence = 0;
    let before = null; // the producer's previous marked message
    for (const m of ms) {
      if (m.kind === 'c') continue;
      sequence++;
      const away = before !== null && before.partition !== m.partition;
      const named = away && (m.kind === 'm' || (m.kind === 's' && before.kind === 'm') || (m.kind === 'r' && before.kind !== 's'));
      m.header = m.kind === 'a'
        ? encodeOrderHeader(ORDER_ANCHOR, id, sequence, 0, 2, n, 0)
        : encodeOrderHeader(KIND[m.kind], id, sequence, before.sequence, m.kind === 'm' ? 1 : 2, n, 0,
          before.partition, named ? before.offset : -1);
      m.sequence = sequence;
      if (m.kind !== 'a') m.after = before.partition;
      before = m;
    }
  }
  for (const log of logs) for (const v of log) v.message = toMessage(v, v.offset);
  return logs;
}

/**
 * Calls body(choose, fresh, chosen) for every vector of choices, in order: an odometer (a run
 * takes the prefix and option 0 beyond it, noting each choice's option count; the next advances
 * the last choice with options left). fresh(): the prefix is behind (what comes is new to this
 * run). body returns false to stop.
 */
function odometer(body) {
  let prefix = [];
  for (;;) {
    const chosen = [];
    const counts = [];
    const choose = (k) => {
      if (k <= 1) return 0;
      const i = chosen.length;
      const c = i < prefix.length ? prefix[i] : 0;
      chosen.push(c);
      counts.push(k);
      return c;
    };
    if (body(choose, () => chosen.length >= prefix.length, chosen) === false) return;
    let i = chosen.length - 1;
    while (i >= 0 && chosen[i] + 1 === counts[i]) i--;
    if (i < 0) return;
    prefix = chosen.slice(0, i + 1);
    prefix[i]++;
  }
}

/** Every placement and merge of the scenario's messages: the logs a path may start from (those `place` keeps). */
function allLogs({ scripts, partitions, place = () => true }) {
  const out = [];
  odometer((choose) => {
    const logs = buildLogs(scripts, partitions, choose);
    if (place(logs)) out.push(logs);
  });
  return out;
}

const NUMBERS = new WeakMap();
const resequencer = (now) => new Resequencer({ maxBufferedMessages: 1e9, maxWaitMs: 1e12 }, now);

/**
 * Runs one path of a scenario: { scripts, partitions, owners (the member of each partition),
 * members, fault: 'none' | 'revoke' | 'kill', make (a member's Resequencer), records (members
 * read each other's records; default true) }. choose(k) picks one of k options. `seen(key)`,
 * asked of each state past the replayed prefix, says whether an earlier path reached it: the
 * path ends there. Returns { broken (the first promise broken, or null), cut }; with `trace`,
 * pushes what each step did into it.
 */
function runPath(scenario, choose, seen, trace) {
  const { scripts, partitions: n, owners, fault = 'none', only, make = resequencer, records = true, timer = 'idle', maxChars = Infinity } = scenario;
  // The faults enumerated: every one, or those `only` lists ([partition, to] revoked, [member, heir] killed).
  const allows = (a, b) => only === undefined || only.some(([x, y]) => x === a && y === b);
  const which = choose(scenario.logs.length);
  const logs = scenario.logs[which];
  const labels = logs.flat().map((v) => v.label);
  // Records by number (the same across the scenario's paths), to keep the states' keys short.
  if (!NUMBERS.has(scenario)) NUMBERS.set(scenario, new Map());
  const numbers = NUMBERS.get(scenario);
  const numbered = (record) => {
    let i = numbers.get(record);
    if (i === undefined) numbers.set(record, (i = numbers.size));
    return i;
  };
  const broker = new Map(); // partition -> the last commit that reached it
  const transit = new Map(); // partition -> its latest commit not landed yet
  const times = new Map(); // label -> times handled
  const firstHandled = scripts.map(() => -1); // per producer, the last index first handled
  // What may be handled again: what a killed member handled after its last landed commit, and
  // (records with a limit) what a record inherited leaves untold.
  const allowed = new Set();
  let broken = null;
  let faulted = false;
  const fail = (what) => {
    if (broken === null) broken = what;
  };

  // A member's Resequencer is a function of what it was given (its clock stands still): `given`
  // lists it, for the state's key.
  const members = Array.from({ length: scenario.members }, (_, id) => {
    const m = { id, r: make(() => 0), given: '', owned: new Set(), cursor: new Map(), unhandled: new Map(), lane: [], handled: new Map(), landed: new Map(), read: new Map(), sent: new Map(), alive: true };
    if (records) m.r.useRecords();
    m.r.assign('t', []);
    return m;
  });

  function take(m, releases) {
    for (const x of releases) {
      const v = x.message.value;
      if (x.ordered === false || x.outOfOrder) fail(`${v.label} released flagged (${x.reason}) by m${m.id}`);
      m.unhandled.get(v.partition)?.set(x.message.offset, x.order);
      m.lane.push(x.message);
    }
  }

  function give(m, p) {
    m.owned.add(p);
    m.r.assign('t', [p]);
    m.given += ` A${p}`;
    const c = broker.get(p);
    if (c !== undefined) {
      m.given += ` I${p}:${c.record}`;
      const record = decodeRecord(c.text, c.offset);
      if (maxChars !== Infinity) {
        const view = new RecordView(record);
        for (let o = Math.max(c.offset, view.known); o < Math.min(record.end, logs[p].length); o++) {
          const v = logs[p][o];
          const order = orderOf(v.message);
          if ((times.get(v.label) ?? 0) > 0 && (order === null ? !view.handledOffset(o) : !view.handledAt(o, order.producerId, order.sequence))) allowed.add(v.label);
        }
      }
      take(m, m.r.inherit('t', p, record));
    }
    m.cursor.set(p, c === undefined ? 0 : c.offset);
    m.unhandled.set(p, new Map());
    m.handled.set(p, []);
    m.landed.set(p, 0);
  }

  function commit(m, p) {
    const unhandled = m.unhandled.get(p);
    let offset = m.r.committable('t', p) ?? m.cursor.get(p);
    for (const o of unhandled.keys()) if (o < offset) offset = o;
    const record = m.r.recordOf('t', p, offset, unhandled.keys(), [...unhandled.values()].filter((o) => o !== null));
    let text = encodeRecord(record);
    if (text.length > maxChars) {
      const fitted = fitRecord(record, maxChars);
      text = fitted.text;
      // Records cut, over the scenario's paths.
      scenario.cuts = (scenario.cuts ?? 0) + 1;
    }
    return { offset, text, record: numbered(`${offset}:${text}`), member: m, handled: m.handled.get(p).length };
  }

  /** m commits p: the commit is in transit (the latest one per partition). */
  function send(m, p, c = commit(m, p)) {
    m.sent.set(p, c.record);
    if (matters(p)) transit.set(p, c);
  }

  function land(p, c) {
    const last = broker.get(p);
    // A later commit of an earlier owner never overwrites the next owner's (the group's generation fences it).
    if (last !== undefined && last.member !== c.member && !c.member.owned.has(p)) return;
    broker.set(p, c);
    if (c.handled > c.member.landed.get(p)) c.member.landed.set(p, c.handled);
  }

  /** The handler ends the call of the head of m's lane; m commits its partition, in transit. */
  function handle(m) {
    const msg = m.lane.shift();
    const v = msg.value;
    const count = (times.get(v.label) ?? 0) + 1;
    times.set(v.label, count);
    if (count > 1 && !(count === 2 && allowed.has(v.label))) fail(`${v.label} handled ${count} times (by m${m.id})`);
    if (count === 1) {
      if (firstHandled[v.producer] !== v.index - 1) fail(`${v.label} first handled after ${NAMES[v.producer]}${firstHandled[v.producer]} (by m${m.id})`);
      firstHandled[v.producer] = Math.max(firstHandled[v.producer], v.index);
    }
    m.unhandled.get(msg.partition).delete(msg.offset);
    m.handled.get(msg.partition).push(v.label);
    send(m, msg.partition);
    return v.label;
  }

  function read(m, p) {
    const o = m.cursor.get(p);
    m.cursor.set(p, o + 1);
    m.given += ` P${p}.${o}`;
    take(m, m.r.push(logs[p][o].message));
    return logs[p][o].label;
  }

  /** Its calls of p end first, it commits and the commit lands at once, it forgets p; `to` inherits. */
  function revoke(m, p, to) {
    while (m.lane.some((x) => x.partition === p)) handle(m);
    transit.delete(p);
    land(p, commit(m, p));
    m.sent.delete(p);
    m.r.forget('t', p);
    m.given += ` F${p}`;
    m.owned.delete(p);
    m.unhandled.delete(p);
    give(to, p);
  }

  /** Its commits in transit are lost; `heir` inherits its partitions' last landed records. */
  function kill(m, heir) {
    m.alive = false;
    for (const p of m.owned) {
      for (const label of m.handled.get(p).slice(m.landed.get(p))) allowed.add(label);
      transit.delete(p);
    }
    for (const p of [...m.owned]) give(heir, p);
    m.owned.clear();
  }

  /**
   * Members read the records of the partitions they await that changed since they last read
   * them: eagerly, after every step (reading later only delays).
   */
  function readRecords() {
    if (!records) return;
    for (const m of members) {
      if (!m.alive) continue;
      for (const { partition: p } of m.r.awaited()) {
        const c = broker.get(p);
        if (c === undefined || m.read.get(p) === c.record) continue;
        m.read.set(p, c.record);
        m.given += ` S${p}:${c.record}`;
        take(m, m.r.setRecord('t', p, decodeRecord(c.text, c.offset)));
      }
    }
  }

  /**
   * Whether a commit of p may still be read: by a fault's heir, or by a live member that owns
   * other partitions (it may wait for a predecessor on p). Once none can read it, its commits
   * are not sent: landing them would change nothing that follows.
   */
  function matters(p) {
    return (!faulted && fault !== 'none') || members.some((m) => m.alive && !m.owned.has(p) && m.owned.size > 0);
  }

  /** The enabled actions, in a fixed order. */
  function enabled() {
    const out = [];
    const alive = members.filter((m) => m.alive);
    for (const m of alive) for (const p of [...m.owned].sort()) if (m.cursor.get(p) < logs[p].length) out.push(['read', m, p]);
    for (const m of alive) if (m.lane.length > 0) out.push(['handle', m]);
    for (let p = 0; p < n; p++) {
      if (!transit.has(p)) continue;
      if (matters(p)) out.push(['land', p]);
      else transit.delete(p);
    }
    // The commit timer: a member commits a partition whose record changed since its last commit
    // (its offset moved past messages skipped, say); at any step, or ('idle') once nothing else
    // can; 'off': never (a member commits only after handling).
    if (timer === 'any' || (timer === 'idle' && out.length === 0)) {
      for (const m of alive) {
        for (const p of [...m.owned].sort()) {
          if (!matters(p)) continue;
          const c = commit(m, p);
          if (c.record !== m.sent.get(p)) out.push(['tick', m, p, c]);
        }
      }
    }
    if (!faulted && fault === 'revoke') {
      for (const m of alive) for (const p of [...m.owned].sort()) for (const to of alive) if (to !== m && allows(p, to.id)) out.push(['revoke', m, p, to]);
    }
    if (!faulted && fault === 'kill') {
      for (const m of alive) for (const to of alive) if (to !== m && allows(m.id, to.id)) out.push(['kill', m, to]);
    }
    return out;
  }

  /** Everything the rest of the path and its checks depend on. */
  function key() {
    const parts = [which, faulted, [...allowed].join(), firstHandled.join(), labels.map((l) => times.get(l) ?? 0).join('')];
    for (let p = 0; p < n; p++) parts.push(`${broker.get(p)?.record}/${broker.get(p)?.member.id}`, `${transit.get(p)?.record}/${transit.get(p)?.handled - transit.get(p)?.member.landed.get(p)}`);
    for (const m of members) {
      // A member with no partition left holds nothing and has nothing to handle: it does nothing more.
      if (!m.alive || ((faulted || fault === 'none') && m.owned.size === 0 && m.lane.length === 0 && m.r.held === 0)) parts.push('out');
      else {
        parts.push(m.given, m.lane.map((x) => x.value.label).join(), [...m.read].join(), [...m.sent].join());
        // What it handled since its last landed commit: read by a kill only.
        if (!faulted && fault === 'kill') for (const p of [...m.owned].sort()) parts.push(`${p}:${m.handled.get(p).slice(m.landed.get(p)).join()}`);
      }
    }
    return parts.join('\n');
  }

  owners.forEach((m, p) => give(members[m], p));
  for (;;) {
    if (broken !== null) break;
    if (seen !== null && seen(key)) return { broken: null, cut: true };
    const actions = enabled();
    if (actions.length === 0) break;
    const [kind, a, b, c] = actions[choose(actions.length)];
    let did;
    if (kind === 'read') did = `read m${a.id} ${read(a, b)}`;
    else if (kind === 'handle') did = `handle m${a.id} ${handle(a)}`;
    else if (kind === 'tick') {
      did = `commit m${a.id} p${b}`;
      send(a, b, c);
    } else if (kind === 'land') {
      did = `land p${a}`;
      land(a, transit.get(a));
      transit.delete(a);
    } else {
      faulted = true;
      did = kind === 'revoke' ? `revoke p${b} m${a.id}->m${c.id}` : `kill m${a.id} (heir m${b.id})`;
      if (kind === 'revoke') revoke(a, b, c);
      else kill(a, b);
    }
    readRecords();
    if (trace) trace.push(did);
  }

  if (broken === null) {
    const held = members.filter((m) => m.alive).reduce((s, m) => s + m.r.held, 0);
    if (held > 0) fail(`${held} held at the end`);
    for (const label of labels) if (!times.has(label)) fail(`${label} never handled`);
  }
  if (trace) trace.logs = logs.map((log) => log.map((v) => v.label).join(' '));
  return { broken, cut: false };
}

/**
 * Runs every path (odometer()). A path that reaches a state an earlier path reached ends there
 * (`cut`): the same state has the same futures, explored once (reduce: false explores them
 * all). Stops after `limit` runs. Returns { paths (run to their end), cut, states, logs,
 * failures, first, shortest }; a failure is { broken, choices, steps }.
 */
function explore(scenario, { limit = Infinity, reduce = true, collect = null } = {}) {
  if (scenario.logs === undefined) scenario.logs = allLogs(scenario);
  const states = new Set();
  let paths = 0;
  let cut = 0;
  let failures = 0;
  let first = null;
  let shortest = null;
  odometer((choose, fresh, chosen) => {
    let steps = 0;
    const counted = (k) => {
      steps++;
      return choose(k);
    };
    // Only states past the prefix can be new (those on it are this path's own).
    const seen = reduce ? (key) => {
      if (!fresh()) return false;
      const h = createHash('sha1').update(key()).digest('base64');
      if (states.has(h)) return true;
      states.add(h);
      return false;
    } : null;
    const r = runPath(scenario, counted, seen, null);
    if (r.cut) cut++;
    else paths++;
    if (r.broken !== null) {
      failures++;
      if (collect !== null) collect.add(r.broken);
      const f = { broken: r.broken, choices: chosen.slice(), steps };
      if (first === null) first = f;
      if (shortest === null || steps < shortest.steps) shortest = f;
    }
    return paths + cut < limit;
  });
  return { paths, cut, states: states.size, logs: scenario.logs.length, failures, first, shortest };
}

/** A failure's path in words: the logs and each step, by replaying its choices. */
function describe(scenario, failure) {
  let i = 0;
  const trace = [];
  const { broken } = runPath(scenario, (k) => (k <= 1 ? 0 : failure.choices[i++]), null, trace);
  return `${broken}; logs ${trace.logs.map((l, p) => `p${p}: [${l}]`).join(', ')}; steps: ${trace.join(', ')}`;
}

module.exports = { allLogs, odometer, runPath, explore, describe };
