'use strict';
// Live oracle: librdkafka itself partitions keyed messages (partition left unassigned, the
// `partitioner` topic property set) in its in-process mock cluster; every delivery report's
// partition must equal partitionForKey for the same key and partitioner.
const t = require('tap');
const { partitionForKey, PARTITIONERS } = require('../..');
const { randomKeys } = require('../lib/random-keys');
const { mockProducer, partitionCount, collectReports, disconnect } = require('../lib/mock-cluster');

// Two kinds of key are left out, because node-rdkafka (3.6, src/producer.cc) changes them
// before librdkafka sees them (the last test below pins that down): an empty Buffer goes out
// as a null key, and a string is cut at its first U+0000 (it is copied through a C string).
// The random strings hold no U+0000; empty Buffers are dropped.
const keys = [
  'qqk42v', Buffer.from('e7a3006e79', 'hex'), // FNV-1a 0x80000000
  '', 'x'.repeat(70001), Buffer.alloc(65537, 3),
  ...randomKeys(2400, 0x6f72636c, 512).filter((key) => typeof key === 'string' || key.length > 0),
];

for (const name of PARTITIONERS) {
  t.test(`librdkafka '${name}' places every keyed message where partitionForKey says`, async (t) => {
    const producer = await mockProducer({}, { partitioner: name });
    t.teardown(() => disconnect(producer));
    const topic = `oracle-${name}`;
    const n = await partitionCount(producer, topic);
    const reports = collectReports(producer, keys.length);
    keys.forEach((key, i) => producer.produce(topic, null, Buffer.from('v'), key, Date.now(), i));
    let decided = 0;
    let bad = 0;
    let failed = 0;
    for (const report of await reports) {
      if (report.error) failed++;
      const want = partitionForKey(keys[report.opaque], n, name);
      if (want === -1) {
        if (!(report.partition >= 0 && report.partition < n)) bad++;
        continue;
      }
      decided++;
      if (report.partition !== want && bad++ < 3) {
        t.fail(`key #${report.opaque}: librdkafka ${report.partition}, partitionForKey ${want}`);
      }
    }
    t.equal(failed, 0, 'every message delivered');
    t.equal(bad, 0, `${keys.length} messages, ${n} partitions`);
    t.ok(decided >= 2000, `${decided} messages placed by key`);
  });
}

t.test('node-rdkafka sends an empty Buffer key as null and cuts a string key at U+0000', async (t) => {
  const producer = await mockProducer({}, { partitioner: 'murmur2' });
  t.teardown(() => disconnect(producer));
  await partitionCount(producer, 'oracle-quirks');
  const reports = collectReports(producer, 3);
  producer.produce('oracle-quirks', null, Buffer.from('v'), Buffer.alloc(0), 0, 'empty Buffer');
  producer.produce('oracle-quirks', null, Buffer.from('v'), '', 0, 'empty string');
  producer.produce('oracle-quirks', null, Buffer.from('v'), 'a\u0000b', 0, 'NUL');
  const byName = Object.fromEntries((await reports).map((r) => [r.opaque, r]));
  t.equal(byName['empty Buffer'].key, null, 'an empty Buffer key arrives as a null key');
  t.same(byName['empty string'].key, Buffer.alloc(0), 'an empty string key stays an empty key');
  t.same(byName.NUL.key, Buffer.from('a'), 'a string key is cut at its first U+0000');
});
