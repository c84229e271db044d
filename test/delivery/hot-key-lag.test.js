'use strict';
// The hot keys' lag table (src/delivery/hot-key-lag.ts) on its own: a key's lag is the age of its last handled
// message when it was handled (that time less the message's timestamp, in each client's form: node-rdkafka's number,
// KafkaJS's string, @platformatic/kafka's bigint; none: null), its idle time since then; keys are told apart by topic
// and by key as text (a string and a Buffer of its bytes are one key, as their gauge label is); listed lagging most first, at most 20;
// forgotten once idle past HOT_KEY_IDLE_MS; the table stays bounded under many keys.
const t = require('tap');
const { HotKeyLags, HOT_KEY_IDLE_MS, HOT_KEYS_SHOWN } = require('../../build/delivery/hot-key-lag');

const NOW = 1_800_000_000_000;

t.test("a key's lag in each client's timestamp form", async (t) => {
  const lags = new HotKeyLags();
  lags.handled({ topic: 't', partition: 0, offset: 1, key: Buffer.from('rd'), timestamp: NOW - 1500 }, NOW);
  lags.handled({ topic: 't', partition: 0, offset: 2, key: 'kjs', timestamp: String(NOW - 2500) }, NOW);
  lags.handled({ topic: 't', partition: 0, offset: 3, key: Buffer.from('pl'), timestamp: BigInt(NOW - 3500) }, NOW);
  lags.handled({ topic: 't', partition: 0, offset: 4, key: 'none' }, NOW);
  t.same(lags.list(NOW + 100).map((h) => [h.key, h.lagMs, h.idleMs, h.handled]),
    [['pl', 3500, 100, 1], ['kjs', 2500, 100, 1], ['rd', 1500, 100, 1], ['none', null, 100, 1]], 'lagging most first; no timestamp: null');
});

t.test('the last handled message counts; keys by topic and key', async (t) => {
  const lags = new HotKeyLags();
  lags.handled({ topic: 'a', partition: 0, offset: 1, key: 'k', timestamp: NOW - 9000 }, NOW);
  lags.handled({ topic: 'a', partition: 1, offset: 7, key: Buffer.from('k'), timestamp: NOW + 1000 - 200 }, NOW + 1000);
  lags.handled({ topic: 'b', partition: 0, offset: 1, key: 'k', timestamp: NOW - 50 }, NOW);
  lags.handled({ topic: 'a', partition: 0, offset: 2, key: 'k', timestamp: NOW + 5000 }, NOW + 1000);
  t.same(lags.list(NOW + 1000).map((h) => [h.topic, h.key, h.lagMs, h.handled]),
    [['b', 'k', 50, 1], ['a', 'k', 0, 3]], 'a clock ahead of ours: lag 0, not negative');
});

t.test('at most HOT_KEYS_SHOWN listed; idle keys forgotten; bounded', async (t) => {
  const lags = new HotKeyLags();
  for (let i = 0; i < 3000; i++) lags.handled({ topic: 't', partition: 0, offset: i, key: `k${i}`, timestamp: NOW - i }, NOW + i);
  const shown = lags.list(NOW + 3000);
  t.equal(shown.length, HOT_KEYS_SHOWN);
  t.same(shown.map((h) => h.lagMs), Array.from({ length: HOT_KEYS_SHOWN }, (_, i) => 2 * (2999 - i)), 'the most lagging');
  t.ok(lags.keys.size <= 1024, `bounded (${lags.keys.size} keys noted)`);
  t.ok(lags.keys.has('t\u0000k2999'), 'the newest kept');
  t.same(lags.list(NOW + 3000 + HOT_KEY_IDLE_MS + 1), [], 'all idle past HOT_KEY_IDLE_MS: forgotten');
  t.equal(lags.keys.size, 0);
});
