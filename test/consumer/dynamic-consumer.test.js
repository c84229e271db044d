'use strict';
// DynamicProducer → librdkafka's mock cluster → DynamicConsumer: a spread key comes out in
// produce order, nothing is lost, and the committed offsets cover exactly what was handled.
// The client library is test/lib/clients.js's (test/kafkajs/confluent/matrix.test.js runs this file
// with Confluent's).
const t = require('tap');
const { clientOptions } = require('../lib/clients');
const { committedAtEnds } = require('../lib/mock-cluster');
const { DynamicProducer, DynamicConsumer, LagMonitor, decodeOrderHeader, ORDER_HEADER } = require('../..');

async function producerWithBrokers() {
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 3 }, { partitioner: 'murmur2_random' }, clientOptions());
  await p.connect();
  const md = await new Promise((res, rej) => p.client.getMetadata({ timeout: 5000 }, (e, m) => (e ? rej(e) : res(m))));
  return { p, brokers: md.brokers.map((b) => `${b.host}:${b.port}`).join(',') };
}

async function knownPartitions(p, topic) {
  await p.send(topic, 'warm-up', null);
  for (let i = 0; i < 100 && !(p.metrics().topics[topic].partitions > 0); i++) {
    await p.refreshMetadata(topic).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 20));
  }
}

t.test('a hot key spread over several partitions is handed over in produce order', async (t) => {
  const { p, brokers } = await producerWithBrokers();
  t.teardown(() => p.disconnect());
  const topic = 'e2e-order';
  await knownPartitions(p, topic);
  const N = 30000;
  const sequence = new Map();
  const sends = [];
  for (let i = 0; i < N; i++) {
    const key = i % 2 ? 'hot' : `cold-${i % 700}`;
    const s = (sequence.get(key) ?? 0) + 1;
    sequence.set(key, s);
    sends.push(p.send(topic, String(s), key));
  }
  const reports = await Promise.all(sends);
  const hotPartitions = new Set(reports.filter((r) => String(r.key) === 'hot').map((r) => r.partition));
  t.ok(hotPartitions.size > 1, `the hot key used ${hotPartitions.size} partitions`);

  const c = new DynamicConsumer({ 'metadata.broker.list': brokers, 'group.id': 'e2e', 'auto.offset.reset': 'earliest', log_level: 3 },
    {}, { commitIntervalMs: 100, ...clientOptions() });
  await c.connect();
  const last = new Map();
  let handled = 0;
  let misordered = 0;
  let outOfOrder = 0;
  let marked = 0;
  const done = c.run([topic], (m, info) => {
    if (m.key === null) return; // the warm-up message
    handled++;
    if (info.outOfOrder) outOfOrder++;
    if (m.headers && m.headers.some((h) => decodeOrderHeader(h[ORDER_HEADER]))) marked++;
    const key = m.key.toString();
    const s = Number(m.value.toString());
    if (s !== (last.get(key) ?? 0) + 1) misordered++;
    last.set(key, s);
    if (handled === N) setImmediate(() => c.stop());
  });
  const timer = setTimeout(() => c.stop(), 60000);
  await done;
  clearTimeout(timer);
  t.equal(handled, N, 'every message handled once');
  t.equal(misordered, 0, 'every key in produce order');
  t.equal(outOfOrder, 0, 'none released out of order');
  t.ok(marked > 1000, `${marked} messages carried an order header`);

  // The committed offsets are the end of each partition: everything was handled.
  await committedAtEnds(t, brokers, 'e2e', topic);
});

t.test('LagMonitor reads a group\'s lag and turns it into penalties', async (t) => {
  const { p, brokers } = await producerWithBrokers();
  t.teardown(() => p.disconnect());
  const topic = 'e2e-lag';
  await knownPartitions(p, topic);
  const reports = await Promise.all(Array.from({ length: 4000 }, (_, i) => p.send(topic, 'v', `k${i % 97}`)));
  const perPartition = [0, 0, 0, 0];
  for (const r of reports) perPartition[r.partition]++;
  // The group has committed nothing: lag = the whole log of each partition (plus the warm-up message).
  const monitor = new LagMonitor({ 'metadata.broker.list': brokers, log_level: 3 }, { groupId: 'nobody', topics: [topic], intervalMs: 100, ...clientOptions() });
  monitor.attach(p);
  await monitor.start();
  t.teardown(() => monitor.stop());
  const lag = await monitor.read();
  // The warm-up message adds one to a partition.
  t.ok(lag[topic].every((l, i) => l === perPartition[i] || l === perPartition[i] + 1), `lag ${lag[topic]} vs produced ${perPartition}`);
  t.equal(lag[topic].reduce((a, b) => a + b, 0), 4001);
  const per = p.partitioner.recentMessagesPerPartition(topic);
  const least = Math.min(...lag[topic]);
  const penalty = p.partitioner.stats().topics[topic].penalty;
  // One producer (its share of the topic's writes 1): 3 × the lag above the least over its messages per partition.
  lag[topic].forEach((l, i) => t.ok(Math.abs(penalty[i] - 3 * (l - least) / per) < 1e-9, `partition ${i}: penalty ${penalty[i]}`));
  t.ok(Math.max(...penalty) > 0, 'the most lagging partition is penalised');
  t.throws(() => monitor.attach({}), { code: 'KDP_INVALID_ARG_TYPE' });
  t.throws(() => new LagMonitor({}, { topics: [topic] }), { code: 'KDP_INVALID_OPTION' });
});

t.test("a message's headers come as node-rdkafka gives them: read, in JSON and in util.inspect", async (t) => {
  const { p, brokers } = await producerWithBrokers();
  t.teardown(() => p.disconnect());
  const topic = 'e2e-headers';
  await knownPartitions(p, topic);
  // Headers as the caller gave them (name and bytes, repeated names kept, in order); none at all on the second.
  // Any bytes on the native engine; node-rdkafka's produce() (the client engine's) sends a header
  // value as UTF-8 text, cut at its first NUL byte, so there the bytes are text.
  const bytes = p.metrics().engine === 'native' ? Buffer.from([0, 255, 1]) : Buffer.from('é☃');
  await p.send(topic, 'with', 'k', [{ trace: 'abc' }, { empty: Buffer.alloc(0) }, { trace: bytes }]);
  await p.send(topic, 'without', 'k');
  const c = new DynamicConsumer({ 'metadata.broker.list': brokers, 'group.id': 'e2e-headers', 'auto.offset.reset': 'earliest', log_level: 3 }, {}, clientOptions());
  await c.connect();
  const seen = [];
  const done = c.run([topic], (m) => {
    if (m.key === null) return; // the warm-up message
    seen.push(m);
    if (seen.length === 2) setImmediate(() => c.stop());
  });
  const timer = setTimeout(() => c.stop(), 30000);
  await done;
  clearTimeout(timer);
  t.equal(seen.length, 2);
  const [withHeaders, without] = seen;
  const asText = (list) => list.map((h) => Object.entries(h).map(([name, v]) => [name, Buffer.from(v).toString('hex')])[0]);
  t.same(asText(withHeaders.headers), [['trace', Buffer.from('abc').toString('hex')], ['empty', ''], ['trace', bytes.toString('hex')]], 'every header, in order');
  t.ok(withHeaders.headers.every((h) => Buffer.isBuffer(Object.values(h)[0])), 'values are Buffers');
  t.equal(withHeaders.headers, withHeaders.headers, 'the same array on every read');
  t.equal(without.headers, undefined, 'no headers: undefined, as node-rdkafka');
  const json = JSON.parse(JSON.stringify(withHeaders));
  t.equal(json.headers.length, 3, 'JSON carries the headers');
  t.equal(Buffer.from(json.value.data).toString(), 'with');
  t.match(require('node:util').inspect(withHeaders), /trace/, 'util.inspect shows them');
  t.notOk('headers' in JSON.parse(JSON.stringify(without)), 'no headers key in JSON without headers');
});
