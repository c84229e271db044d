'use strict';
// A message that keeps failing stops nothing else, on the real cluster. A DynamicProducer writes Zipf keys with one key
// too hot for a partition (spread); a group of two member processes (lib/dead-letter-member.js: concurrency 32, a handler
// that awaits 2-5 ms) reads them with `deadLetter`, the handler always throwing on one cold-key message and one message of
// the spread key. Member A is SIGKILLed at half the run and started again. Then:
//   - the run never stopped;
//   - every message handled (at least once: the kill re-reads what was in flight) or dead-lettered, none lost;
//   - each poisoned message in the dead-letter topic with its key, value and origin (topic, partition, offset from the
//     broker's delivery report), the error and the attempts; written twice only where the kill fell between its write
//     and the commit right after it (counted: at most the poisoned messages);
//   - each poisoned key's later messages handled after its dead letter was written, and in order (the spread key's
//     across the group), but after a message released flagged (its predecessor waited for past maxWaitMs: what it
//     jumped ahead of comes after it), at most 1% of the key flagged;
//   - the group's committed offsets at the end of every partition.
// And a dead-letter topic that does not exist and cannot be created (a producer that may not create topics): the poisoned
// keys park, the others are all handled, the run stops with a DeadLetterError after maxParkMs, nothing committed past the
// parked messages.
// KDP_GROUP_PROTOCOLS picks the group protocols (default both); FAULTS_LONG=1: 200,000 messages (the issue's size).
//
// Needs KAFKA_BROKERS (npm run test:kafka).

const t = require('tap');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fork } = require('node:child_process');
const K = require('./lib/kafka');
const { produceHot, until, offsetsOf } = require('./lib/hot-key');
const { size, PROTOCOLS } = require('./lib/faults');
const { DEAD_LETTER_HEADERS } = require('../..');

const MESSAGES = size(20_000, 10);
const PARTITIONS = 6;
const MEMBER = path.join(__dirname, 'lib', 'dead-letter-member.js');

/** A member process; what it handled and dead-lettered is read from its log file (read()). */
function startMember(o) {
  const child = fork(MEMBER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const log = path.join(os.tmpdir(), `kdp-dl-${process.pid}-${Math.random().toString(36).slice(2)}.log`);
  const m = { child, log, count: 0, handled: [], lettered: [], metrics: null, ended: null, failed: null, report: null };
  /** The log's lines so far, into handled ([id, seq, ms, flagged]) and lettered ([id, ms, attempts]). */
  m.read = () => {
    m.handled = [];
    m.lettered = [];
    const text = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
    for (const line of text.split('\n')) {
      const f = line.split(' ');
      if (f[0] === 'h' && f.length === 5) m.handled.push([Number(f[1]), Number(f[2]), Number(f[3]), Number(f[4])]);
      else if (f[0] === 'd' && f.length === 4) m.lettered.push([Number(f[1]), Number(f[2]), Number(f[3])]);
    }
    return m;
  };
  let ready;
  m.ready = new Promise((resolve) => { ready = resolve; });
  m.done = new Promise((resolve) => {
    child.on('message', (x) => {
      if (x.type === 'ready') ready();
      else if (x.type === 'progress') {
        m.count = x.handled;
        m.metrics = x.metrics;
      } else if (x.type === 'ended') m.ended = x;
      else if (x.type === 'done') m.report = x;
      else if (x.type === 'failed') m.failed = x.stack;
    });
    child.on('exit', (code, signal) => {
      ready();
      resolve({ code, signal });
    });
  });
  child.send({ type: 'start', concurrency: 32, log, ...o });
  return m;
}

/** Produces the input; picks the poisoned messages: a cold key's (with later messages) at ~10%, the spread key's at ~30%. */
async function input(topic) {
  const offsets = new Float64Array(MESSAGES).fill(-1);
  const run = await produceHot(topic, MESSAGES, {
    keys: 5000, hotShare: 0.2, seed: 0xd1e,
    onDelivery: (v, report) => { offsets[v.id] = report.offset; },
  });
  const { keyOf, hotId } = run;
  const later = new Map();
  for (let id = MESSAGES - 1; id >= 0; id--) later.set(keyOf[id], (later.get(keyOf[id]) ?? 0) + 1);
  let cold = -1;
  const seen = new Map();
  for (let id = 0; id < MESSAGES; id++) {
    const k = keyOf[id];
    seen.set(k, (seen.get(k) ?? 0) + 1);
    if (id >= MESSAGES * 0.1 && k !== hotId && later.get(k) - seen.get(k) >= 3) {
      cold = id;
      break;
    }
  }
  let hot = Math.floor(MESSAGES * 0.3);
  while (keyOf[hot] !== hotId) hot++;
  return { ...run, offsets, poison: [cold, hot] };
}

/** The dead-letter topic's records, read from the start of every partition. */
async function deadLetters(topic) {
  const out = [];
  await K.consumeAll(topic, (m) => out.push(m), 60000);
  return out;
}

function headers(m) {
  const out = {};
  for (const h of m.headers ?? []) for (const [name, value] of Object.entries(h)) out[name] = Buffer.from(value).toString();
  return out;
}

for (const groupProtocol of PROTOCOLS) {
  t.test(`group protocol ${groupProtocol}: poisoned messages go to the dead-letter topic, nothing else stops; a member SIGKILLed`, { ...K.needsCluster(), timeout: 900000 }, async (t) => {
    const topic = K.topicName('dl-in');
    const dlq = K.topicName('dl-out');
    const replication = Math.min(3, K.brokers().split(',').length);
    await K.createTopic(topic, PARTITIONS, replication);
    await K.createTopic(dlq, PARTITIONS, replication);
    const run = await input(topic);
    t.equal(run.deliveries, MESSAGES, `${MESSAGES} messages written`);
    t.ok(run.hot.ever.size > 0, 'the hot key was spread');
    const { poison, keyOf, hotId } = run;
    const group = `dl-${topic}`;
    const base = { bootstrap: K.brokers(), group, input: topic, dlq, poison, groupProtocol };
    const members = [startMember(base), startMember(base)];
    await Promise.all(members.map((m) => m.ready));
    for (const m of members) t.equal(m.failed, null, `member started${m.failed ? `: ${m.failed}` : ''}`);
    const all = [...members];
    const handledCount = () => all.reduce((n, m) => n + m.count, 0);

    // A SIGKILLed at half the run (once it handled some), started again.
    const a = members[0];
    t.ok(await until(() => handledCount() >= MESSAGES * 0.5 && a.count >= MESSAGES * 0.05, 300000), 'half handled, A some of it');
    a.child.kill('SIGKILL');
    await a.done;
    t.comment(`member A SIGKILLed after handling ${a.read().handled.length}`);
    members[0] = startMember(base);
    all.push(members[0]);
    await members[0].ready;

    const firstHandled = new Float64Array(MESSAGES).fill(0);
    const handledTimes = new Uint8Array(MESSAGES);
    const fold = () => {
      for (const m of all) {
        for (const [id, , ms] of m.handled) {
          if (handledTimes[id] < 255) handledTimes[id]++;
          if (firstHandled[id] === 0 || ms < firstHandled[id]) firstHandled[id] = ms;
        }
      }
    };
    // Distinct messages handled so far (each member's reports taken once), and the poisoned ones dead-lettered.
    const seen = new Uint8Array(MESSAGES);
    let distinct = 0;
    const cursors = new Map();
    const lettered = new Set();
    const tally = () => {
      for (const m of all) {
        m.read();
        for (let i = cursors.get(m) ?? 0; i < m.handled.length; i++) {
          const id = m.handled[i][0];
          if (seen[id] === 0) distinct++;
          seen[id] = 1;
        }
        cursors.set(m, m.handled.length);
        for (const [id] of m.lettered) lettered.add(id);
      }
      return distinct >= MESSAGES - poison.length && lettered.size === poison.length;
    };
    const finished = await until(() => tally() || all.some((m) => m.ended !== null), 180000) && tally();
    // Everything read: stop, then count.
    await K.sleep(1000);
    for (const m of members) if (m.child.exitCode === null) m.child.send({ type: 'stop' });
    await Promise.all(members.map((m) => m.done));
    for (const m of all) {
      m.read();
      fs.rmSync(m.log, { force: true });
    }
    fold();
    t.ok(finished, 'every message handled or dead-lettered');
    for (const m of all) t.equal(m.ended, null, `no run stopped${m.ended ? `: ${JSON.stringify(m.ended)}` : ''}`);

    let lost = 0;
    let again = 0;
    for (let id = 0; id < MESSAGES; id++) {
      if (poison.includes(id)) continue;
      if (handledTimes[id] === 0) lost++;
      else again += handledTimes[id] - 1;
    }
    t.equal(lost, 0, 'no message lost');
    t.comment(`handled again after the kill (at least once): ${again}`);
    for (const id of poison) t.equal(handledTimes[id], 0, `poisoned message ${id} never counted as handled`);

    const letters = await deadLetters(dlq);
    const byId = new Map();
    for (const l of letters) {
      const v = K.parseValue(l.value);
      t.ok(v !== null && poison.includes(v.id), 'a dead letter is a poisoned message');
      if (v === null) continue;
      if (!byId.has(v.id)) byId.set(v.id, []);
      byId.get(v.id).push(l);
    }
    const twice = [...byId.values()].filter((l) => l.length > 1).length;
    t.comment(`dead letters: ${letters.length} (${twice} written twice: the kill between a write and its commit)`);
    t.ok(twice <= poison.length, 'written twice at most where the kill fell after a write');
    for (const id of poison) {
      const ls = byId.get(id) ?? [];
      t.ok(ls.length >= 1 && ls.length <= 2, `message ${id}: dead-lettered (${ls.length})`);
      if (ls.length === 0) continue;
      const l = ls[0];
      const h = headers(l);
      t.equal(l.key.toString(), run.keys[keyOf[id]], 'its key');
      t.same({
        topic: h[DEAD_LETTER_HEADERS.topic], partition: h[DEAD_LETTER_HEADERS.partition], offset: h[DEAD_LETTER_HEADERS.offset],
        class: h[DEAD_LETTER_HEADERS.errorClass], code: h[DEAD_LETTER_HEADERS.errorCode], attempts: h[DEAD_LETTER_HEADERS.attempts],
      }, {
        topic, partition: String(run.partitionOf[id]), offset: String(run.offsets[id]), class: 'Error', code: 'E_POISON', attempts: '3',
      }, 'its origin (the delivery report\'s partition and offset), the error and the attempts');
      t.match(h[DEAD_LETTER_HEADERS.errorMessage], `poison ${id}`);
      if (keyOf[id] === hotId) t.ok(h[DEAD_LETTER_HEADERS.order] !== undefined, "the spread key's order header kept, renamed");
    }

    // Each poisoned key: later messages after the dead letter, in order (first handling of each; flagged ones apart).
    const letteredAt = new Map();
    for (const m of all) for (const [id, ms] of m.lettered) if (!letteredAt.has(id) || ms < letteredAt.get(id)) letteredAt.set(id, ms);
    const flagged = new Set();
    for (const m of all) for (const [id, , , f] of m.handled) if (f) flagged.add(id);
    /** Which member (index in `all`: 0 A, 1 B, 2 A again) first handled each message. */
    const firstBy = new Int8Array(MESSAGES).fill(-1);
    all.forEach((m, i) => { for (const [id, , ms] of m.handled) if (ms === firstHandled[id]) firstBy[id] = i; });
    // A message released flagged (its predecessor waited for past maxWaitMs) explains what it jumped ahead of: the
    // messages after it are in order after it only (docs/ordering.md, Limits). Counted apart, at most 1% of the key.
    for (const id of poison) {
      const key = keyOf[id];
      const flaggedOfKey = [];
      for (let j = id + 1; j < MESSAGES; j++) if (keyOf[j] === key && flagged.has(j)) flaggedOfKey.push(j);
      /** Whether a flagged message of the key in (from, to] was handled before `ms` (or at it). */
      const jumpedBefore = (from, to, ms) => flaggedOfKey.some((k) => k > from && k <= to && firstHandled[k] <= ms);
      let before = 0;
      let inversions = 0;
      let explained = 0;
      let laterCount = 0;
      let last = 0;
      let lastId = id;
      for (let j = id + 1; j < MESSAGES; j++) {
        if (keyOf[j] !== key || firstHandled[j] === 0) continue;
        laterCount++;
        if (firstHandled[j] < (letteredAt.get(id) ?? Infinity)) {
          if (jumpedBefore(id, j, firstHandled[j])) explained++;
          else {
            if (before < 3) t.comment(`before its dead letter: ${j} by member ${firstBy[j]}, ${Math.round((letteredAt.get(id) ?? 0) - firstHandled[j])} ms before`);
            before++;
          }
        }
        if (firstHandled[j] < last) {
          if (flagged.has(j) || jumpedBefore(j, lastId, firstHandled[j]) || flaggedOfKey.some((k) => k > j && firstHandled[k] <= firstHandled[j])) explained++;
          else {
            if (inversions < 3) t.comment(`inversion: ${j} by member ${firstBy[j]}, after ${lastId} by member ${firstBy[lastId]}`);
            inversions++;
          }
        } else {
          last = firstHandled[j];
          lastId = j;
        }
      }
      const what = key === hotId ? 'the spread key' : 'the cold key';
      t.ok(laterCount >= 3, `${what}: ${laterCount} later messages`);
      t.equal(before, 0, `${what}: none of its later messages handled before its dead letter was written, but after a flagged one`);
      t.equal(inversions, 0, `${what}: its later messages in order, but after a flagged one (${explained} so explained)`);
      t.ok(flaggedOfKey.length <= Math.ceil(laterCount * 0.01), `${what}: at most 1% of its later messages flagged (${flaggedOfKey.length})`);
    }
    const { committed, ends } = await offsetsOf(group, topic, PARTITIONS);
    t.same(committed, ends, "the group's committed offsets at the end of every partition");
    const failures = members.map((m) => m.report?.metrics?.consumer?.failures);
    t.comment(`failures: ${JSON.stringify(failures)}`);
  });
}

t.test('a dead-letter topic that cannot be written: the poisoned keys park, the others finish, a DeadLetterError, nothing committed past them', { ...K.needsCluster(), timeout: 300000 }, async (t) => {
  const topic = K.topicName('dl-park');
  const missing = K.topicName('dl-missing');
  await K.createTopic(topic, PARTITIONS, Math.min(3, K.brokers().split(',').length));
  const total = 6000;
  const offsets = new Float64Array(total).fill(-1);
  const run = await produceHot(topic, total, { keys: 2000, hotShare: 0.25, seed: 0xd1f, onDelivery: (v, report) => { offsets[v.id] = report.offset; } });
  const { keyOf, hotId } = run;
  let cold = Math.floor(total * 0.1);
  while (keyOf[cold] === hotId) cold++;
  let hot = Math.floor(total * 0.2);
  while (keyOf[hot] !== hotId) hot++;
  const poison = [cold, hot];
  const group = `dl-${topic}`;
  const member = startMember({
    bootstrap: K.brokers(), group, input: topic, dlq: missing, poison, groupProtocol: 'classic', maxParkMs: 30000,
    // A cluster that creates no topic for this producer: its writes to a missing topic fail.
    deadLetterProducer: { 'allow.auto.create.topics': false, 'topic.metadata.propagation.max.ms': 1000, 'message.timeout.ms': 3000 },
  });
  await member.ready;
  t.equal(member.failed, null);
  const ended = await until(() => member.ended !== null, 120000);
  t.ok(ended, 'the run stopped');
  const others = new Set();
  for (let id = 0; id < total; id++) if (keyOf[id] !== keyOf[cold] && keyOf[id] !== hotId) others.add(id);
  const handled = new Set(member.read().handled.map(([id]) => id));
  t.ok([...others].every((id) => handled.has(id)), 'every message of the other keys was handled');
  t.equal(member.ended?.code, 'KDP_DEAD_LETTER', `a DeadLetterError: ${member.ended?.message}`);
  t.match(member.ended?.message, missing, 'naming the dead-letter topic');
  t.ok((member.metrics?.parkWarnings ?? 0) >= 2, `a warning per failed write (${member.metrics?.parkWarnings})`);
  const parkedPartitions = new Map([[run.partitionOf[cold], offsets[cold]]]);
  const hotFirst = new Map();
  for (let id = hot; id < total; id++) {
    if (keyOf[id] !== hotId) continue;
    const p = run.partitionOf[id];
    if (!hotFirst.has(p)) hotFirst.set(p, offsets[id]);
  }
  for (const [p, o] of hotFirst) parkedPartitions.set(p, Math.min(parkedPartitions.get(p) ?? Infinity, o));
  member.child.send({ type: 'stop' });
  await member.done;
  fs.rmSync(member.log, { force: true });
  const { committed } = await offsetsOf(group, topic, PARTITIONS);
  for (const [p, o] of parkedPartitions) t.ok(committed[p] <= o, `partition ${p}: committed ${committed[p]}, not past the parked key's first unhandled message (${o})`);
  t.same(handled.has(cold) || handled.has(hot), false, 'the poisoned messages never counted as handled');
  // The parked keys' later messages never handled.
  let laterHandled = 0;
  for (let id = 0; id < total; id++) if (id > cold && keyOf[id] === keyOf[cold] && handled.has(id)) laterHandled++;
  for (let id = 0; id < total; id++) if (id > hot && keyOf[id] === hotId && handled.has(id)) laterHandled++;
  t.equal(laterHandled, 0, "the parked keys' later messages waited");
  // The dead-letter topic was never made (the cluster's topics, all of them: asking for it by name could create it).
  const client = await K.connected(new (require('../lib/clients').kafka().Producer)({ 'metadata.broker.list': K.brokers(), log_level: 3 }));
  const md = await new Promise((resolve, reject) => client.getMetadata({ timeout: 10000 }, (err, m) => (err ? reject(err) : resolve(m))));
  await K.disconnected(client);
  t.notOk(md.topics.some((x) => x.name === missing), 'the dead-letter topic was not created');
});

t.test('under a transaction: the dead letter commits with the offsets past it and the output, exactly once', { ...K.needsCluster(), timeout: 300000 }, async (t) => {
  const { DynamicProducer, DynamicConsumer } = require('../..');
  const topic = K.topicName('dl-txn-in');
  const out = K.topicName('dl-txn-out');
  const dlq = K.topicName('dl-txn-dlq');
  const replication = Math.min(3, K.brokers().split(',').length);
  for (const x of [topic, out, dlq]) await K.createTopic(x, 3, replication);
  const total = 3000;
  const run = await produceHot(topic, total, { keys: 500, hotShare: 0, seed: 0xd20 });
  t.equal(run.deliveries, total);
  const poisoned = 1000;
  const producer = new DynamicProducer({ 'bootstrap.servers': K.brokers(), 'transactional.id': `dl-txn-${topic}`, log_level: 2 }, { acks: 'all' }, {});
  producer.on('error', () => {});
  await producer.connect();
  const c = new DynamicConsumer({ 'bootstrap.servers': K.brokers(), 'group.id': `dl-txn-${topic}`, 'auto.offset.reset': 'earliest', log_level: 2 }, {},
    { concurrency: 8, retryBackoffMs: 20, handlerRetries: 1, transaction: { producer, intervalMs: 100 }, deadLetter: { topic: dlq } });
  c.on('error', () => {});
  await c.connect();
  let handled = 0;
  let lettered = 0;
  c.on('deadLettered', () => lettered++);
  const done = c.run([topic], async (m) => {
    const v = K.parseValue(m.value);
    if (v.id === poisoned) throw new Error('poison');
    producer.produce(out, m.value, m.key);
    handled++;
  });
  t.ok(await until(() => lettered >= 1 && handled >= total - 1, 120000), 'handled, and the poisoned message dead-lettered');
  await K.sleep(500);
  await c.stop();
  await done;
  const m = c.metrics();
  t.ok(m.transactions.abortedForHandlers >= 1, `its failed calls aborted their transactions (${m.transactions.abortedForHandlers})`);
  t.same({ retries: m.failures.retries, deadLettered: m.failures.deadLettered }, { retries: 1, deadLettered: 1 }, 'one retry (its attempts counted across the aborts), one dead letter');
  await producer.disconnect();
  // What read_committed readers see: the dead letter once, every other input once in the output.
  const readCommitted = async (name) => {
    const seen = [];
    const reader = new (require('../lib/clients').kafka().KafkaConsumer)({
      'metadata.broker.list': K.brokers(), 'group.id': `r-${name}-${Date.now()}`, 'enable.auto.commit': false, 'isolation.level': 'read_committed', log_level: 3,
    }, { 'auto.offset.reset': 'earliest' });
    await K.connected(reader);
    reader.subscribe([name]);
    const deadline = Date.now() + 30000;
    let quiet = 0;
    while (Date.now() < deadline && quiet < 6) {
      const batch = await new Promise((resolve, reject) => reader.consume(1000, (err, x) => (err ? reject(err) : resolve(x))));
      quiet = batch.length === 0 && seen.length > 0 ? quiet + 1 : 0;
      for (const x of batch) seen.push(x);
    }
    await K.disconnected(reader);
    return seen;
  };
  const letters = await readCommitted(dlq);
  t.equal(letters.length, 1, 'one dead letter committed');
  t.equal(K.parseValue(letters[0]?.value)?.id, poisoned, 'the poisoned message');
  const counts = new Uint8Array(total);
  for (const x of await readCommitted(out)) counts[K.parseValue(x.value).id]++;
  let lost = 0;
  let twice = 0;
  for (let id = 0; id < total; id++) {
    if (id === poisoned) continue;
    if (counts[id] === 0) lost++;
    if (counts[id] > 1) twice++;
  }
  t.equal(counts[poisoned], 0, 'no output of the poisoned message');
  t.equal(lost, 0, 'every other input in the output');
  t.equal(twice, 0, 'none twice (aborted output never read)');
  const { committed, ends } = await offsetsOf(`dl-txn-${topic}`, topic, 3);
  t.same(committed, ends, "the group's committed offsets (in the transactions) at the end of every partition");
});
