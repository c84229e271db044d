'use strict';
// The handled records a DynamicConsumer on the native engine commits with each partition's
// offset (src/delivery/handled-record.ts, src/delivery/records.ts), seen from the handlers of
// a consumer group on librdkafka's mock cluster:
//   - three members reading a topic over which one DynamicProducer spread a hot key: each
//     message whose chain predecessor is on another member's partition waits for that
//     partition's record to show it handled, so the key comes out in produce order across the
//     members, nothing flagged 'unowned', nothing lost;
//   - a member (a child process) killed with SIGKILL in the middle of slow handler calls: its
//     successor reads the record the dead member last committed and hands out again only what
//     was in flight at the kill or handled since that commit, and nothing is lost.
// Every figure is computed from the messages' values (key and sequence number, or the
// producer's index), which the producer wrote, and from what the handlers logged.
// On engine 'client' (KDP_ENGINE=client) there are no records: metrics().records is null.
const t = require('tap');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const Kafka = require('node-rdkafka');
const { nativeBuilt } = require('../lib/native-built');
const { producerCluster: cluster, createTopic } = require('../lib/mock-cluster');
const { DynamicConsumer, decodeOrderHeader, ORDER_HEADER } = require('../..');

// Run directly with node as well as by tap's runner: about a minute in all.
t.setTimeout(300_000);

const ROOT = path.join(__dirname, '..', '..');
const PARTITIONS = 4; // of a topic the mock cluster creates on first use
const skip = !nativeBuilt() ? 'the native engine is not built here'
  : process.env.KDP_ENGINE === 'client' ? 'KDP_ENGINE=client: no handled records on the client engine' : false;

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function member(brokers, group, options) {
  // A short session: the mock cluster's coordinator waits up to it for a member to rejoin.
  return new DynamicConsumer({
    'metadata.broker.list': brokers, 'group.id': group, 'auto.offset.reset': 'earliest',
    'session.timeout.ms': 6000, 'heartbeat.interval.ms': 500, log_level: 3,
  }, {}, { engine: 'native', ...options });
}

t.test("engine 'client' commits no records: metrics().records is null, and groupOrder 'wait' is refused there", async (t) => {
  const config = { 'metadata.broker.list': '127.0.0.1:1', 'group.id': 'group-records-client' };
  const client = new DynamicConsumer(config, {}, { engine: 'client' });
  t.equal(client.metrics().engine, 'client');
  t.equal(client.metrics().records, null, 'no records on the client engine');
  t.throws(() => new DynamicConsumer(config, {}, { engine: 'client', groupOrder: 'wait' }), { name: 'InvalidOptionError', message: /groupOrder/ },
    "groupOrder 'wait' needs the records the client engine does not commit");
  t.throws(() => new DynamicConsumer(config, {}, { groupOrder: 'always' }), { name: 'InvalidOptionError', message: /groupOrder/ }, 'an unknown groupOrder');
  if (!skip) {
    const native = new DynamicConsumer(config, {}, { engine: 'native' });
    t.equal(native.metrics().engine, 'native');
    t.match(native.metrics().records, { committed: 0, committedChars: 0, tooLarge: 0, reads: 0, recordsRead: 0, foreign: 0, skipped: 0 },
      'the native engine counts its records from zero');
  }
});

t.test("a group of three: a spread key's order holds across members", { skip, timeout: 150000 }, async (t) => {
  // A message whose chain predecessor is another member's waits for that member's commit (made
  // within 10 ms of handling a marked message) and for the next read of it (every 20 ms while
  // something waits): a hop of the chain from one member to another costs tens of ms. The
  // producer keeps its defaults; the messages are sent over about 20 s while the group reads.
  const { p, brokers } = await cluster(t);
  const topic = 'group-records-order';
  const group = 'group-records-order';
  await createTopic(p, topic);

  const members = [0, 1, 2].map(() => member(brokers, group, { groupOrder: 'wait', commitIntervalMs: 100, resequencer: { maxWaitMs: 20000 } }));
  const owned = members.map(() => new Set());
  const moves = [];
  members.forEach((c, i) => {
    c.on('assigned', (list) => {
      for (const { partition } of list) owned[i].add(partition);
      moves.push(`${i}+${list.map((x) => x.partition)}`);
    });
    c.on('revoked', (list) => {
      for (const { partition } of list) owned[i].delete(partition);
      moves.push(`${i}-${list.map((x) => x.partition)}`);
    });
  });
  const warnings = [];
  for (const c of members) c.on('warning', (e) => warnings.push(e.message));

  const seen = new Set();
  const top = new Map();
  const flagged = {};
  const inverted = [];
  let handled = 0;
  let duplicates = 0;
  let hotMarked = 0;
  let lastCall = Date.now();
  const handler = (m, info) => {
    lastCall = Date.now();
    if (m.key === null) return; // the warm-up message
    const key = m.key.toString();
    const s = Number(m.value.toString());
    const id = `${key}:${s}`;
    if (seen.has(id)) {
      duplicates++;
      return;
    }
    seen.add(id);
    handled++;
    if (key === 'hot' && Array.isArray(m.headers) && m.headers.some((h) => h[ORDER_HEADER] !== undefined && decodeOrderHeader(h[ORDER_HEADER]))) hotMarked++;
    if (!info.ordered) flagged[info.reason] = (flagged[info.reason] ?? 0) + 1;
    const highest = top.get(key) ?? 0;
    // One producer: a key's sequence numbers are its send order; a lower one after a higher one is an inversion.
    if (s < highest) inverted.push(`${key}:${s} after ${highest} (partition ${m.partition}, ${info.ordered ? 'ordered' : info.reason})`);
    else top.set(key, s);
  };

  // Subscribed together: the coordinator's first rebalance takes in all three.
  await Promise.all(members.map((c) => c.connect()));
  const runs = members.map((c) => c.run([topic], handler));
  const joinDeadline = Date.now() + 30000;
  while (owned.some((s) => s.size === 0) && Date.now() < joinDeadline) await delay(50);
  t.ok(owned.every((s) => s.size > 0), `every member owns partitions: ${owned.map((s) => `[${[...s]}]`).join(' ')}`);
  const ownerAtStart = new Map();
  owned.forEach((s, i) => s.forEach((partition) => ownerAtStart.set(partition, i)));
  t.equal(ownerAtStart.size, PARTITIONS, 'between them, every partition');
  for (const c of members) t.equal(c.metrics().engine, 'native');

  let mostHeld = 0;
  const sampler = setInterval(() => {
    mostHeld = Math.max(mostHeld, ...members.map((c) => c.metrics().held));
  }, 100);
  // Sent while the group reads: 1000 messages a second, every other one on the hot key.
  const N = 20000;
  const RATE = 1000;
  const sequence = new Map();
  const sends = [];
  const hotSends = [];
  const startedAt = Date.now();
  for (let i = 0; i < N; i++) {
    const key = i % 2 === 0 ? 'hot' : `cold-${i % 701}`;
    const s = (sequence.get(key) ?? 0) + 1;
    sequence.set(key, s);
    const sent = p.send(topic, String(s), key);
    sends.push(sent);
    if (key === 'hot') hotSends.push(sent);
    if (i % 100 === 99) await delay(Math.max(0, startedAt + ((i + 1) * 1000) / RATE - Date.now()));
  }
  const hotReports = await Promise.all(hotSends);
  await Promise.all(sends);
  const producedIn = Date.now() - startedAt;

  const deadline = Date.now() + 90000;
  while (!(handled === N && Date.now() - lastCall > 1000) && Date.now() < deadline) await delay(50);
  const drainedIn = Date.now() - startedAt;
  clearInterval(sampler);
  const metrics = members.map((c) => c.metrics());
  await Promise.all(members.map((c) => c.stop()));
  await Promise.all(runs);

  // The records as the group holds them, read through the native engine's own client: the text,
  // then one NUL, as Confluent's client writes (it reads every metadata less its last byte).
  const { nativeAddon } = require('../../build/native/addon');
  const { NativeConsumer } = require('../../build/native/consume');
  const { decodeRecord, RECORD_PREFIX } = require('../../build/delivery/handled-record');
  const reader = new NativeConsumer(nativeAddon(), { 'metadata.broker.list': brokers, 'group.id': group, log_level: 3 }, {});
  await new Promise((resolve, reject) => reader.connect({}, (e) => (e ? reject(e) : resolve())));
  const raw = await new Promise((resolve, reject) => reader.committed(
    Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition })), 5000, (e, x) => (e ? reject(e) : resolve(x))));
  await new Promise((resolve) => reader.disconnect(resolve));
  const withRecord = raw.filter((c) => Buffer.isBuffer(c.metadata) && c.metadata.length > 0);
  t.ok(withRecord.length > 0, `${withRecord.length} of ${PARTITIONS} partitions committed with metadata`);
  for (const c of withRecord) {
    const text = c.metadata.toString('latin1');
    t.ok(text.startsWith(RECORD_PREFIX) && text.indexOf('\0') === text.length - 1, `partition ${c.partition}: the record's text and one NUL after it`);
    t.ok(decodeRecord(c.metadata.subarray(0, -1), c.offset), `partition ${c.partition}: the text before the NUL is a record`);
  }

  // The hot key's chain in send order: its partitions, and the hops between partitions of different members.
  const hotPartitions = new Set(hotReports.map((r) => r.partition));
  let hops = 0;
  let crossHops = 0;
  for (let i = 1; i < hotReports.length; i++) {
    if (hotReports[i].partition === hotReports[i - 1].partition) continue;
    hops++;
    if (ownerAtStart.get(hotReports[i].partition) !== ownerAtStart.get(hotReports[i - 1].partition)) crossHops++;
  }
  const flaggedCount = Object.values(flagged).reduce((a, b) => a + b, 0);
  const records = metrics.map((m) => m.records);
  t.comment(`produced ${N} in ${producedIn} ms, all handled ${drainedIn} ms after the first send; assignments ${moves.join(' ')}`);
  t.comment(`hot key: ${hotReports.length} messages (${hotMarked} with an order header) over ${hotPartitions.size} partitions, ` +
    `${hops} changes of partition, ${crossHops} of them to another member's`);
  t.comment(`handled ${handled}, duplicates ${duplicates}, flagged ${JSON.stringify(flagged)}, inversions ${inverted.length}, most held by a member ${mostHeld}`);
  t.comment(`records per member: ${records.map((r) => `committed ${r.committed} (${Math.round(r.committedChars / Math.max(1, r.committed))} chars each), ` +
    `too large ${r.tooLarge}, reads ${r.reads}, read ${r.recordsRead}`).join('; ')}`);
  if (warnings.length > 0) t.comment(`warnings: ${[...new Set(warnings)].join(', ')}`);
  if (inverted.length > 0) t.comment(`first inversions: ${inverted.slice(0, 10).join('; ')}`);

  t.ok(hotPartitions.size > 1, `the hot key was spread over ${hotPartitions.size} partitions`);
  t.ok(crossHops > 0, `its chain went from one member's partition to another's ${crossHops} times`);
  t.ok(hotMarked > 1000, `${hotMarked} of its messages carried an order header`);
  t.equal(handled, N, 'every message handled');
  t.same([...top.entries()].sort(), [...sequence.entries()].sort(), "each key's last message reached");
  t.equal(duplicates, 0, 'none handled twice (the group did not rebalance while reading)');
  t.equal(inverted.length, 0, 'per key, no message handled after a later one');
  t.notOk(flagged.unowned, "none flagged 'unowned'");
  t.ok(flaggedCount <= hotMarked / 100, `flagged ${flaggedCount}: at most 1% of the hot key's marked messages`);
  t.ok(records.reduce((a, r) => a + r.recordsRead, 0) > 0, "the members read each other's records");
});

t.test('a member killed mid-run: its successor hands out again only what was in flight or recently handled', { skip, timeout: 150000 }, async (t) => {
  const { p, brokers } = await cluster(t);
  const topic = 'group-records-restart';
  const group = 'group-records-restart';
  const COMMIT_MS = 250;
  const MARGIN_MS = 250; // the commit's round trip, and the timer's lateness
  await createTopic(p, topic);
  // Each value names the message: its index in send order, its key and its sequence number in the key.
  const N = 20000;
  const sequence = new Map();
  const all = [];
  const sends = [];
  for (let i = 1; i <= N; i++) {
    const key = `k${i % 499}`;
    const s = (sequence.get(key) ?? 0) + 1;
    sequence.set(key, s);
    all.push(`${i}:${key}:${s}`);
    sends.push(p.send(topic, all[i - 1], key));
  }
  // Where each message went, by its value (the producer's delivery reports).
  const where = new Map((await Promise.all(sends)).map((r, i) => [all[i], r]));

  // The first member: a child process logging each handler call's start and end, with the time,
  // synchronously (what it logged survives the kill). Every 50th message takes a second.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kdp-group-records-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const log = path.join(dir, 'calls.log');
  const script = `
    const fs = require('node:fs');
    const { DynamicConsumer } = require(${JSON.stringify(ROOT)});
    const fd = fs.openSync(${JSON.stringify(log)}, 'a');
    (async () => {
      const c = new DynamicConsumer({ 'metadata.broker.list': ${JSON.stringify(brokers)}, 'group.id': ${JSON.stringify(group)},
        'auto.offset.reset': 'earliest', 'session.timeout.ms': 6000, 'heartbeat.interval.ms': 500, log_level: 0 }, {},
        { engine: 'native', concurrency: 64, commitIntervalMs: ${COMMIT_MS} });
      c.on('error', (e) => console.error('error', e.message));
      await c.connect();
      await c.run([${JSON.stringify(topic)}], async (m) => {
        if (m.key === null) return;
        const value = m.value.toString();
        fs.writeSync(fd, 'S ' + value + ' ' + Date.now() + '\\n');
        await new Promise((r) => setTimeout(r, Number(value.split(':')[0]) % 50 === 0 ? 1000 : 1));
        fs.writeSync(fd, 'E ' + value + ' ' + Date.now() + '\\n');
      });
    })().catch((e) => { console.error(e); process.exit(1); });`;
  const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const firstDeadline = Date.now() + 30000;
  while (!(fs.existsSync(log) && fs.statSync(log).size > 0) && child.exitCode === null && Date.now() < firstDeadline) await delay(20);
  t.ok(fs.existsSync(log) && fs.statSync(log).size > 0, `the child handles messages${stderr ? `: ${stderr.slice(-500)}` : ''}`);
  await delay(3500);
  const killedAt = Date.now();
  child.kill('SIGKILL');
  t.same(await exited, { code: null, signal: 'SIGKILL' }, 'the child was killed');

  const started = new Map();
  const ended = new Map();
  for (const line of fs.readFileSync(log, 'utf8').split('\n')) {
    const [kind, value, at] = line.split(' ');
    if (kind === 'S') started.set(value, Number(at));
    else if (kind === 'E') ended.set(value, Number(at));
  }
  const inFlight = [...started.keys()].filter((v) => !ended.has(v));
  const since = killedAt - COMMIT_MS - MARGIN_MS;
  const recent = [...ended.values()].filter((at) => at >= since).length;
  t.ok(ended.size > 0 && ended.size < N, `the child handled ${ended.size} of ${N} before the kill`);
  t.ok(inFlight.length > 0, `${inFlight.length} calls were under way at the kill`);

  // What the group's committed offsets alone cover (without the records): child-handled
  // messages at or above them would all be read again.
  const check = new Kafka.KafkaConsumer({ 'metadata.broker.list': brokers, 'group.id': group, log_level: 3 }, {});
  await new Promise((resolve, reject) => check.connect({}, (e) => (e ? reject(e) : resolve())));
  const committed = await new Promise((resolve, reject) => check.committed(
    Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition })), 5000, (e, x) => (e ? reject(e) : resolve(x))));
  await new Promise((resolve) => check.disconnect(resolve));
  const committedOf = new Map(committed.map((c) => [c.partition, c.offset]));

  // The successor, in this process: same group, same settings, a quick handler.
  const successor = member(brokers, group, { concurrency: 64, commitIntervalMs: COMMIT_MS });
  const warnings = [];
  successor.on('warning', (e) => warnings.push(e.message));
  await successor.connect();
  const mine = new Map(); // value -> times handled
  let lastCall = Date.now();
  const run = successor.run([topic], async (m) => {
    lastCall = Date.now();
    if (m.key === null) return;
    const value = m.value.toString();
    mine.set(value, (mine.get(value) ?? 0) + 1);
    await delay(1);
  });
  const covered = () => all.every((v) => ended.has(v) || mine.has(v));
  const deadline = Date.now() + 60000;
  const joinedAt = Date.now();
  while (!(mine.size > 0 && Date.now() - lastCall > 1500 && covered()) && Date.now() < deadline) await delay(200);
  const tookMs = Date.now() - joinedAt;
  const records = successor.metrics().records;
  await successor.stop();
  await run;

  const rehandled = [...mine.keys()].filter((v) => ended.has(v));
  const unexplained = rehandled.filter((v) => ended.get(v) < since);
  const twice = [...mine.values()].filter((n) => n > 1).length;
  const lost = all.filter((v) => !ended.has(v) && !mine.has(v));
  let aboveCommitted = 0;
  for (const v of ended.keys()) {
    const { partition, offset } = where.get(v);
    if (offset >= committedOf.get(partition)) aboveCommitted++;
  }
  t.comment(`child: ${started.size} calls started, ${ended.size} ended, ${inFlight.length} under way at the kill, ${recent} ended in its last ${COMMIT_MS} + ${MARGIN_MS} ms`);
  t.comment(`committed offsets at the kill ${committed.map((c) => `${c.partition}:${c.offset}`).join(' ')}: ${aboveCommitted} child-handled messages at or above them`);
  t.comment(`successor (${tookMs} ms): handled ${mine.size}, of them again ${rehandled.length} (bound ${inFlight.length + recent}), skipped ${records.skipped}, ` +
    `twice ${twice}, lost ${lost.length}`);
  if (warnings.length > 0) t.comment(`warnings: ${[...new Set(warnings)].join(', ')}`);
  if (unexplained.length > 0) {
    t.comment(`handled again though ended earlier: ${unexplained.slice(0, 10).map((v) => `${v} (${killedAt - ended.get(v)} ms before the kill)`).join('; ')}`);
  }

  t.equal(lost.length, 0, `nothing lost${lost.length ? `: ${lost.slice(0, 10).join(', ')}` : ''}`);
  t.equal(twice, 0, 'the successor handled nothing twice itself');
  t.ok(records.skipped > 0, `the successor skipped ${records.skipped} messages the child had handled`);
  t.ok(rehandled.length <= inFlight.length + recent,
    `handled again ${rehandled.length} <= in flight at the kill ${inFlight.length} + ended in the last ${COMMIT_MS + MARGIN_MS} ms ${recent}`);
  t.equal(unexplained.length, 0, `each message handled again was in flight at the kill or ended in its last ${COMMIT_MS + MARGIN_MS} ms`);
});
