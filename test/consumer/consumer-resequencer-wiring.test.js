'use strict';
// DynamicConsumer ↔ Resequencer on librdkafka's mock cluster: the handler sees each
// Release's ordered / outOfOrder / reason / order; every assignment reaches
// resequencer.assign(); the group's committed offsets of the partitions the resequencer
// awaits are read and fed to setCommitted(), and what that releases is handled.
const t = require('tap');
const { DynamicConsumer } = require('../..');
const { mockProducer, partitionCount, collectReports, bootstrapOf, disconnect } = require('../lib/mock-cluster');

let producer;
let brokers;

t.before(async () => {
  producer = await mockProducer();
  brokers = await bootstrapOf(producer);
});
t.teardown(() => disconnect(producer));

/** Produces [partition, value, orderHeaderText | null] rows in order; resolves with the reports in produce order. */
async function produce(topic, rows) {
  await partitionCount(producer, topic);
  const reports = collectReports(producer, rows.length);
  rows.forEach(([partition, value, header], i) => {
    producer.produce(topic, partition, Buffer.from(value), 'key', null, i, header === null ? undefined : [{ 'kdp-order': header }]);
  });
  const got = await reports;
  for (const r of got) if (r.error) throw r.error;
  return got.sort((a, b) => a.opaque - b.opaque);
}

function consumer(group, options = {}) {
  return new DynamicConsumer(
    { 'metadata.broker.list': brokers, 'group.id': group, 'auto.offset.reset': 'earliest', 'session.timeout.ms': 6000, log_level: 3 },
    {},
    { commitIntervalMs: 50, ...options },
  );
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Follows a consumer's assignment through its 'assigned' and 'revoked' events. */
function owned(c) {
  const set = new Set();
  c.on('assigned', (list) => list.forEach(({ partition }) => set.add(partition)));
  c.on('revoked', (list) => list.forEach(({ partition }) => set.delete(partition)));
  return set;
}

t.test('the handler gets ordered, outOfOrder and the decoded order header; assign() gets every assignment', async (t) => {
  const topic = 'wiring-info';
  const id = '0123456789abcdef';
  // Version 2 texts written by hand from the format in docs/ordering.md:
  // 2;<kind>;<producer id>;<sequence>;<previous>;<width>;<partitions>;<partitioner>;<after>
  await produce(topic, [
    [0, 'plain', null],
    [0, 'anchor', `2;a;${id};1;0;1;4;0;`],
    [0, 'spread', `2;s;${id};2;1;2;4;0;0`],
  ]);
  const c = consumer('wiring-info');
  const assigns = [];
  const assign = c.resequencer.assign.bind(c.resequencer);
  c.resequencer.assign = (tp, partitions) => {
    assigns.push([tp, [...partitions]]);
    return assign(tp, partitions);
  };
  await c.connect();
  const seen = [];
  await c.run([topic], (m, info) => {
    seen.push([m.value.toString(), info]);
    if (seen.length === 3) setImmediate(() => c.stop());
  });
  t.same(seen.map(([v]) => v), ['plain', 'anchor', 'spread']);
  const [plain, anchor, spread] = seen.map(([, info]) => info);
  t.same(plain, { ordered: true, outOfOrder: false, order: null }, 'a message without the header');
  t.match(anchor, { ordered: true, outOfOrder: false, order: { version: 2, kind: 'anchor', producerId: id, sequence: 1, previous: 0 } });
  t.match(spread, { ordered: true, outOfOrder: false, order: { version: 2, kind: 'spread', producerId: id, sequence: 2, previous: 1, width: 2, afterPartition: 0, afterOffset: -1 } });
  t.notOk('reason' in spread, 'no reason when ordered');
  t.ok(assigns.length >= 1 && assigns.every(([tp]) => tp === topic), 'assign() called with the topic');
  t.same([...new Set(assigns.flatMap(([, p]) => p))].sort(), [0, 1, 2, 3], 'with every partition assigned');
});

t.test('committed offsets of awaited partitions reach setCommitted() (through setRecord() with a handled record), and its releases reach the handler', async (t) => {
  const topic = 'wiring-committed';
  const reports = await produce(topic, [[0, 'm0', null], [0, 'm1', null], [0, 'm2', null]]);
  const end = reports[2].offset + 1; // what the group commits once all three are handled
  const c = consumer('wiring-committed');
  // The resequencer is made to await partition 0 (as if another consumer owned it) and to
  // release one held message once the group's committed offset there reaches `end`.
  const fed = [];
  const late = { topic, partition: 0, offset: end, value: Buffer.from('held'), key: null, size: 4 };
  let released = false;
  c.resequencer.awaited = () => [{ topic, partition: 0 }];
  c.resequencer.setCommitted = (tp, partition, offset) => {
    fed.push([tp, partition, offset]);
    if (offset !== end || released) return [];
    released = true;
    return [{ message: late, ordered: false, outOfOrder: true, reason: 'unowned', order: null }];
  };
  // On the native engine the group's commits carry handled records: their offset is the committed one.
  c.resequencer.setRecord = (tp, partition, record) => c.resequencer.setCommitted(tp, partition, record.offset);
  await c.connect();
  const seen = [];
  const deadline = setTimeout(() => c.stop(), 30000);
  await c.run([topic], (m, info) => {
    seen.push([m.value.toString(), info]);
    if (m === late) setImmediate(() => c.stop());
  });
  clearTimeout(deadline);
  t.same(seen.map(([v]) => v), ['m0', 'm1', 'm2', 'held'], 'the released message handled after the others');
  t.same(seen[3][1], { ordered: false, outOfOrder: true, reason: 'unowned', order: null });
  t.ok(fed.length > 0 && fed.every(([tp, p]) => tp === topic && p === 0), 'only the awaited partition is read');
  const offsets = fed.map(([, , o]) => o);
  t.same(offsets.filter((o) => o !== end && !(o >= 0 && o < end)), [], `every offset fed is one the group committed (${offsets})`);
});

t.test('a handoff between two members: the successor waits for the group to commit its predecessor, then goes in order', async (t) => {
  const topic = 'wiring-handoff';
  const group = 'wiring-handoff';
  await produce(topic, [[0, 'warm', null]]);
  const log = [];
  const a = consumer(group);
  const b = consumer(group, { resequencer: { maxWaitMs: 60000 } }); // a timeout release would be ordered: false
  const ownedA = owned(a);
  const ownedB = owned(b);
  let bInfo;
  await a.connect();
  const doneA = a.run([topic], async (m) => {
    if (m.value.toString() !== 'anchor') return;
    // Handled only once B holds the successor: B must not have let it go before.
    for (let i = 0; i < 2000 && b.resequencer.held === 0; i++) await sleep(10);
    log.push(['A', 'anchor', b.resequencer.held]);
  });
  for (let i = 0; i < 3000 && ownedA.size < 4; i++) await sleep(10);
  await b.connect();
  const doneB = b.run([topic], (m, info) => {
    if (m.value.toString() !== 'spread') return;
    log.push(['B', 'spread']);
    bInfo = info;
  });
  // Cooperative: A gives up some partitions, then B gets them.
  for (let i = 0; i < 3000 && !(ownedB.size > 0 && ownedA.size + ownedB.size === 4 && [...ownedB].every((p) => !ownedA.has(p))); i++) await sleep(10);
  t.ok(ownedA.size > 0 && ownedB.size > 0, `A owns ${[...ownedA]}, B owns ${[...ownedB]}`);
  const pA = Math.min(...ownedA);
  const pB = Math.min(...ownedB);
  const id = 'fedcba9876543210';
  const [anchor] = await produce(topic, [[pA, 'anchor', `2;a;${id};1;0;1;4;0;`]]);
  // The producer knew the anchor's offset before sending its successor elsewhere: an ordered handoff.
  await produce(topic, [[pB, 'spread', `2;s;${id};2;1;2;4;0;${pA}:${anchor.offset}`]]);
  for (let i = 0; i < 4000 && bInfo === undefined; i++) await sleep(10);
  await Promise.all([a.stop(), b.stop()]);
  await Promise.all([doneA, doneB]);
  t.same(log, [['A', 'anchor', 1], ['B', 'spread']], 'A handled the anchor while B held the successor; B handled it after');
  t.match(bInfo, { ordered: true, outOfOrder: false, order: { kind: 'spread', producerId: id, afterPartition: pA, afterOffset: anchor.offset } });
  t.notOk(bInfo && 'reason' in bInfo, 'released in order, not by a bound');
});
