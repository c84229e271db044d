'use strict';
// A hot key is marked (carries an order header) only while its messages leave its own
// partition: it stays there, unmarked, while that partition has room; its chain opens with an
// anchor on its own partition as it first leaves; a relocated key comes back whole once its
// partition has room again, with a return that closes the chain; a key that never left cools
// without a return. The key's own partition is Kafka's (partitionForKey, checked against the
// Java client elsewhere), the stream is built so that each partition's load is known.
const t = require('tap');
const { DynamicPartitioner, partitionForKey, ORDER_NONE, ORDER_ANCHOR, ORDER_RETURN, ORDER_MOVED } = require('../..');
const { prng } = require('./lib/helpers');

const N = 4;

/** 200 background keys per partition, and a key H whose own partition is `home`. */
function keys() {
  const byPartition = Array.from({ length: N }, () => []);
  for (let i = 0; byPartition.some((b) => b.length < 200); i++) {
    const k = `bg-${i}`;
    const q = partitionForKey(k, N);
    if (byPartition[q].length < 200) byPartition[q].push(k);
  }
  const H = 'H';
  return { byPartition, H, home: partitionForKey(H, N) };
}

/**
 * `messages` messages: H with probability `hot`, else a background key of partition j with
 * probability share[j] / (1 - hot). Calls see(order, partition) for each of H's messages.
 */
function stream(p, k, rand, messages, hot, share, see) {
  const cdf = [];
  let acc = 0;
  for (const s of share) cdf.push((acc += s / (1 - hot)));
  for (let i = 0; i < messages; i++) {
    if (rand() < hot) {
      const q = p.decide('t', k.H, N);
      see(p.decision.order, q);
    } else {
      const u = rand();
      let j = 0;
      while (j < N - 1 && u >= cdf[j]) j++;
      const bg = k.byPartition[j];
      p.partition('t', bg[Math.floor(rand() * bg.length)], N);
    }
  }
}

/**
 * Shares of the background per partition: `own` on `home`, `room` on the next partition (when
 * given), the rest even over the others.
 */
function background(home, own, hot, room) {
  const next = (home + 1) % N;
  const rest = room === undefined ? (1 - hot - own) / (N - 1) : (1 - hot - own - room) / (N - 2);
  return Array.from({ length: N }, (_, j) => (j === home ? own : j === next && room !== undefined ? room : rest));
}

t.test('a hot key whose own partition has room stays there, unmarked, and cools without a return', async (t) => {
  const k = keys();
  const p = new DynamicPartitioner();
  const rand = prng(5);
  const hot = [];
  const cooled = [];
  p.on('hot', (h) => hot.push(h.key));
  p.on('cooled', (h) => cooled.push(h.key));
  const seen = [];
  // H: 4% of the messages (hot: above 0.1 fair shares, 2.5%); its partition 21% + 4% = the mean.
  stream(p, k, rand, 60_000, 0.04, background(k.home, 0.21, 0.04), (o, q) => seen.push([o, q]));
  t.ok(hot.includes('H'), 'H turned hot');
  t.same(p.hotKeys('t').map((h) => [h.key, h.reason]), [['H', 'share']], 'hotKeys() reports it');
  t.ok(seen.length > 2000, `${seen.length} messages of H`);
  t.same(seen.filter(([o, q]) => o !== ORDER_NONE || q !== k.home), [], 'every one on its own partition, unmarked');
  // H stops: it cools; its next message owes no return (no chain was opened).
  stream(p, k, rand, 60_000, 0, background(k.home, 0.25, 0), () => {});
  t.ok(cooled.includes('H'), 'H cooled');
  const after = [];
  stream(p, k, rand, 200, 0.05, background(k.home, 0.25, 0.05), (o, q) => after.push([o, q]));
  t.ok(after.length > 0 && after.every(([o, q]) => o === ORDER_NONE && q === k.home), 'then unmarked on its own partition, no return');
});

t.test('a relocated key opens its chain on its own partition as it leaves, and closes it when it comes back', async (t) => {
  const k = keys();
  const p = new DynamicPartitioner();
  const rand = prng(9);
  const seen = [];
  const see = (o, q) => seen.push([o, q]);
  // Phase 1: H's partition carries 24% without H, so H (4%) overloads it by 12%; the next
  // partition carries 18% (room for all of H), the other two 27% each (no room).
  stream(p, k, rand, 60_000, 0.04, background(k.home, 0.24, 0.04, 0.18), see);
  const phase1 = seen.length;
  // Phase 2: its partition's other traffic falls to 17%: room for all of H again.
  stream(p, k, rand, 120_000, 0.04, background(k.home, 0.17, 0.04, 0.18), see);
  const first = seen.findIndex(([o]) => o !== ORDER_NONE);
  t.ok(first >= 0 && first < phase1, `H is first marked in phase 1 (message ${first} of ${phase1})`);
  t.ok(seen.slice(0, first).every(([, q]) => q === k.home), 'before that, on its own partition');
  t.same(seen[first], [ORDER_ANCHOR, k.home], 'the first marked message is an anchor on its own partition');
  const ret = seen.findIndex(([o], i) => i > first && o === ORDER_RETURN);
  t.ok(ret > phase1, `a return in phase 2 (message ${ret})`);
  const away = seen.slice(first + 1, ret);
  t.ok(away.length > 100 && away.every(([o, q]) => o === ORDER_MOVED && q === (k.home + 1) % N),
    `between them ${away.length} messages, all moved whole to the partition with room`);
  t.equal(seen[ret][1], k.home, 'the return is on its own partition');
  const back = seen.slice(ret + 1);
  t.ok(back.length > 1000 && back.every(([o, q]) => o === ORDER_NONE && q === k.home),
    `then ${back.length} messages unmarked on its own partition, while it is still hot`);
  t.same(p.hotKeys('t').map((h) => h.key), ['H'], 'H is still hot');
});
