'use strict';
// decide()'s Decision.keyZero: whether the key just decided has a zero byte. The producer uses
// it instead of scanning every string key for U+0000 (node-rdkafka cuts a string key there).
// The expected answer comes from the key itself (includes('\0') / Buffer.includes(0)).
const t = require('tap');
const { DynamicPartitioner } = require('../..');

t.test('every position of a zero byte, every length up to 40, strings and Buffers', async (t) => {
  const p = new DynamicPartitioner();
  let wrong = 0;
  let checked = 0;
  const fillers = ['a', '\u00e9', '\u20ac', '\u0001', '\u00ff'];
  for (let length = 0; length <= 40; length++) {
    for (let at = -1; at < length; at++) {
      for (const filler of fillers) {
        const chars = Array.from({ length }, (_, i) => (i === at ? '\u0000' : filler));
        const key = chars.join('');
        for (const k of [key, Buffer.from(key)]) {
          p.decide('t', k, 12);
          const want = (typeof k === 'string' ? k.includes('\u0000') : k.includes(0)) ? 1 : 0;
          checked++;
          if (p.decision.keyZero !== want && wrong++ < 5) t.fail(`${JSON.stringify(key)} (${typeof k}): ${p.decision.keyZero}, want ${want}`);
        }
      }
    }
  }
  t.equal(wrong, 0, `${checked} keys answered right`);
});

t.test('a key too long for the key region is not looked at: -1', async (t) => {
  const p = new DynamicPartitioner();
  p.decide('t', 'x'.repeat(70_000), 12);
  t.equal(p.decision.keyZero, -1);
  p.decide('t', 'short', 12);
  t.equal(p.decision.keyZero, 0);
});
