'use strict';
// While a topic's partition count is unknown (a brand-new topic, right after connect()) and the
// producer cannot hold its messages until it is known (here: more than half of maxQueued is
// held, so none can wait; the wait also ends after UNPLACED_WAIT_MS, new-topic.test.js), the
// producer hands them over with the partition unassigned (-1) and librdkafka places
// them, with the same partitioner the producer was given. They must land exactly where
// partitionForKey says, for every base partitioner; and a key's messages must stay in order
// across the moment the count becomes known (librdkafka-placed messages first, then the
// producer's own choices, on the same partition).
const t = require('tap');
const { DynamicProducer, partitionForKey, PARTITIONERS } = require('../..');
const { randomKeys, wireBytes } = require('../lib/random-keys');
const { brokersOf, consumeAll, recordHandOvers } = require('./lib/helpers');

const N = 4;

for (const name of PARTITIONERS) {
  t.test(`'${name}': messages produced before the partition count is known land on partitionForKey`, async (t) => {
    const topic = `unknown-${name}`;
    // maxQueued 2: no message waits for the count (unplaced.ts), each goes to librdkafka at once.
    const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 3 }, { partitioner: name }, { maxQueued: 2 });
    t.teardown(() => p.disconnect().catch(() => {}));
    const hot = [];
    p.on('hot', (h) => hot.push(h.key));
    await p.connect();
    const log = recordHandOvers(p.client);
    // Phase 1, synchronously after connect(): random keys of every kind (long ones, Buffers,
    // lone surrogates, empty), and null keys.
    // Then the 1,000 keys phase 2 goes on with, so that their first messages are placed by
    // librdkafka and the later ones by the producer.
    const pool = Array.from({ length: 1000 }, (_, i) => `pool-${i}`);
    const early = randomKeys(1200, 0x0dd + name.length, 300);
    for (let i = 0; i < 100; i++) early.push(null);
    early.push(...pool);
    const keys = [];
    for (const k of early) {
      p.produce(topic, String(keys.length), k);
      keys.push(k);
    }
    t.equal(p.metrics().topics[topic].partitions, 0, 'the partition count was not known while they were produced');
    // Phase 2: keep producing (1,000 keys, none hot) a little at a time until the count is
    // known, and a while after.
    let after = 0;
    for (let tick = 0; after < 20 && tick < 2000; tick++) {
      for (let j = 0; j < 50; j++) {
        const k = pool[(tick * 50 + j) % pool.length];
        p.produce(topic, String(keys.length), k);
        keys.push(k);
      }
      if (p.metrics().topics[topic].partitions > 0) after++;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    t.equal(p.metrics().topics[topic].partitions, N, `then it became known: ${N}`);
    await p.flush(10000);
    const unassigned = log.filter((m) => m.partition === -1).length;
    t.ok(unassigned >= early.length, `${unassigned} messages handed over unassigned (-1), the rest with a partition`);
    t.ok(log.length - unassigned > 500, `${log.length - unassigned} with an explicit partition`);
    t.same(hot, [], 'no key turned hot');

    const read = await consumeAll(await brokersOf(p.client), topic, keys.length);
    t.equal(read.total, keys.length, 'every message in the log once');
    let wrong = 0;
    let decided = 0;
    let badKey = 0;
    const lastId = new Map();
    const placedBy = new Map(keys.map((k) => [k === null ? 'null' : wireBytes(k).toString('hex'), 0]));
    log.forEach((m) => {
      const k = m.key === null || m.key === undefined ? 'null' : wireBytes(m.key).toString('hex');
      placedBy.set(k, placedBy.get(k) | (m.partition === -1 ? 1 : 2));
    });
    const switched = [...placedBy.values()].filter((v) => v === 3).length;
    let reordered = 0;
    for (const m of read.messages.sort((a, b) => a.offset - b.offset)) {
      const id = Number(m.value.toString());
      const key = keys[id];
      const want = partitionForKey(key, N, name);
      if (want !== -1) {
        decided++;
        if (m.partition !== want && wrong++ < 3) t.fail(`message ${id} on ${m.partition}, partitionForKey ${want}`);
      }
      const arrived = m.key === null ? null : m.key;
      if (!(key === null ? arrived === null : arrived !== null && arrived.equals(wireBytes(key))) && badKey++ < 3) t.fail(`message ${id}: key damaged`);
      if (key !== null) {
        const kp = `${wireBytes(key).toString('hex')}/${m.partition}`;
        if (lastId.has(kp) && lastId.get(kp) > id) reordered++;
        lastId.set(kp, id);
      }
    }
    t.equal(wrong, 0, `all ${decided} messages decided by their key on partitionForKey(key, ${N}, '${name}')`);
    t.equal(badKey, 0, 'every key arrived intact');
    t.ok(switched > 900, `${switched} keys had messages placed both ways`);
    t.equal(reordered, 0, 'per key, offset order is production order across the switch from librdkafka placing to explicit partitions');
  });
}
