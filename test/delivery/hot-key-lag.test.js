'use strict';
// The hot keys' lag table (src/delivery/hot-key-lag.ts) on its own: a key's lag is the age of its last handled
// message when it was handled (that time less the message's timestamp, in each client's form: node-rdkafka's number,
// KafkaJS's string, @platformatic/kafka's bigint; none: null), its idle time since then; keys are told apart by topic
// and by key as text (a string and a Buffer of its bytes are one key, as their gauge label is); listed lagging most first, at most 20;
// forgotten once idle past HOT_KEY_IDLE_MS; the table stays bounded under many keys. By default one message in
// SAMPLE_EVERY is noted, at random: every key of a strict rotation is noted, about as often as the rate says.
const t = require('tap');
const { HotKeyLags, HOT_KEY_IDLE_MS, HOT_KEYS_SHOWN, SAMPLE_EVERY } = require('../../build/delivery/hot-key-lag');

const NOW = 1_800_000_000_000;

t.test("a key's lag in each client's timestamp form", async (t) => {
  const lags = new HotKeyLags(1);
  lags.handled({ topic: 't', partition: 0, offset: 1, key: Buffer.from('rd'), timestamp: NOW - 1500 }, () => NOW);
  lags.handled({ topic: 't', partition: 0, offset: 2, key: 'kjs', timestamp: String(NOW - 2500) }, () => NOW);
  lags.handled({ topic: 't', partition: 0, offset: 3, key: Buffer.from('pl'), timestamp: BigInt(NOW - 3500) }, () => NOW);
  lags.handled({ topic: 't', partition: 0, offset: 4, key: 'none' }, () => NOW);
  t.same(lags.list(NOW + 100).map((h) => [h.key, h.lagMs, h.idleMs]),
    [['pl', 3500, 100], ['kjs', 2500, 100], ['rd', 1500, 100], ['none', null, 100]], 'lagging most first; no timestamp: null');
});

t.test('the last handled message counts; keys by topic and key', async (t) => {
  const lags = new HotKeyLags(1);
  lags.handled({ topic: 'a', partition: 0, offset: 1, key: 'k', timestamp: NOW - 9000 }, () => NOW);
  lags.handled({ topic: 'a', partition: 1, offset: 7, key: Buffer.from('k'), timestamp: NOW + 1000 - 200 }, () => NOW + 1000);
  lags.handled({ topic: 'b', partition: 0, offset: 1, key: 'k', timestamp: NOW - 50 }, () => NOW);
  lags.handled({ topic: 'a', partition: 0, offset: 2, key: 'k', timestamp: NOW + 5000 }, () => NOW + 1000);
  t.same(lags.list(NOW + 1000).map((h) => [h.topic, h.key, h.lagMs]),
    [['b', 'k', 50], ['a', 'k', 0]], 'a clock ahead of ours: lag 0, not negative');
});

t.test('at most HOT_KEYS_SHOWN listed; idle keys forgotten; bounded', async (t) => {
  const lags = new HotKeyLags(1);
  for (let i = 0; i < 3000; i++) lags.handled({ topic: 't', partition: 0, offset: i, key: `k${i}`, timestamp: NOW - i }, () => NOW + i);
  const shown = lags.list(NOW + 3000);
  t.equal(shown.length, HOT_KEYS_SHOWN);
  t.same(shown.map((h) => h.lagMs), Array.from({ length: HOT_KEYS_SHOWN }, (_, i) => 2 * (2999 - i)), 'the most lagging');
  t.ok(lags.keys.size <= 1024, `bounded (${lags.keys.size} keys noted)`);
  t.ok(lags.keys.has('t\u0000k2999'), 'the newest kept');
  t.same(lags.list(NOW + 3000 + HOT_KEY_IDLE_MS + 1), [], 'all idle past HOT_KEY_IDLE_MS: forgotten');
  t.equal(lags.keys.size, 0);
});

t.test('one message in SAMPLE_EVERY noted, at random: no key of a rotation is missed', async (t) => {
  t.equal(SAMPLE_EVERY, 16);
  const lags = new HotKeyLags();
  let clock = 0;
  const noted = new Map();
  // Keys in a strict rotation of SAMPLE_EVERY: a count would note one of them only.
  for (let i = 0; i < 160_000; i++) {
    const key = `k${i % SAMPLE_EVERY}`;
    lags.handled({ topic: 't', partition: 0, offset: i, key, timestamp: 1 }, () => {
      noted.set(key, (noted.get(key) ?? 0) + 1);
      return ++clock;
    });
  }
  t.equal(noted.size, SAMPLE_EVERY, 'every key noted');
  const total = [...noted.values()].reduce((a, b) => a + b, 0);
  // 160,000 draws at 1/16: 10,000 expected, sd about 97.
  t.ok(total > 9500 && total < 10500, `${total} of 160,000 noted (10,000 expected)`);
  for (const [key, n] of noted) t.ok(n > 400 && n < 850, `${key}: ${n} (625 expected)`);
  t.equal(lags.list(clock).length, Math.min(HOT_KEYS_SHOWN, SAMPLE_EVERY));
});
