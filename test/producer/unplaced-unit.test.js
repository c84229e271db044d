'use strict';
// Unplaced (src/producer/place/unplaced.ts) alone: a disconnect takes back every message still
// waiting for its topic's partition count, in call order, however many (more than one spread
// call's arguments, about 120,000 on Node 20), and ends their waits.

const t = require('tap');
const { Unplaced } = require('../../build/producer/place/unplaced');

t.test('take() hands back 300,000 held messages of two topics, each topic in call order', (t) => {
  const released = [];
  const unplaced = new Unplaced(60000, (m) => released.push(m), () => {});
  const N = 300000;
  for (let i = 0; i < N; i++) unplaced.hold({ topic: i % 3 === 0 ? 'a' : 'b', value: null, key: String(i), timestamp: undefined, headers: undefined, forwarded: -1, pending: undefined });
  t.equal(unplaced.size, N);
  const out = unplaced.take();
  t.equal(out.length, N, 'every message back');
  t.equal(unplaced.size, 0, 'none held after');
  t.equal(unplaced.holds('a') || unplaced.holds('b'), false, 'no topic held after');
  const order = { a: -1, b: -1 };
  let misordered = 0;
  for (const m of out) {
    if (Number(m.key) <= order[m.topic]) misordered++;
    order[m.topic] = Number(m.key);
  }
  t.equal(misordered, 0, 'each topic in call order');
  t.equal(released.length, 0, 'none placed: they were taken back');
  t.end();
});
