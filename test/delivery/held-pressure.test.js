'use strict';
// Backpressure per partition on what the resequencer holds (src/delivery/held-pressure.ts): from
// a quarter of maxBufferedMessages held, a partition read from that holds at least its share is
// paused; it goes on once it holds less than half its share, or an eighth of the bound or fewer
// are held in all; a partition paused for another reason is not resumed; a port that cannot
// pause never pauses.
const t = require('tap');
const { HeldPressure } = require('../../build/delivery/held-pressure');

function setup({ canPause = true, blocked = new Set() } = {}) {
  const held = new Map([[0, 0], [1, 0], [2, 0], [3, 0]]);
  const port = { paused: [], resumed: [] };
  if (canPause) {
    port.pause = (list) => port.paused.push(...list.map((p) => p.partition));
    port.resume = (list) => port.resumed.push(...list.map((p) => p.partition));
  }
  const total = () => [...held.values()].reduce((a, b) => a + b, 0);
  const h = new HeldPressure(port, 10_000, total, (_, p) => held.get(p), () => held.size, (tp) => !blocked.has(tp.partition));
  return { h, held, port, total };
}

t.test('bounds from maxBufferedMessages: pausing from a quarter of it', async (t) => {
  t.equal(setup().h.high, 2500);
  t.equal(setup({ canPause: false }).h.high, Number.POSITIVE_INFINITY, 'a port that cannot pause: never');
});

t.test('a partition read from that holds its share or more pauses, once; the others keep being read', async (t) => {
  const { h, held, port } = setup();
  held.set(0, 2000);
  held.set(1, 600);
  held.set(2, 10);
  for (const p of [0, 1, 2, 3, 0]) h.read('t', p);
  t.same(port.paused, [0], '2,610 held, a share of 652.5: partition 0 (2,000) pauses, 1 (600), 2 and 3 do not; 0 not twice');
  held.set(1, 1200);
  h.read('t', 1);
  t.same(port.paused, [0, 1], 'partition 1 past its share (1,200 of 3,210 / 4)');
});

t.test('a paused partition goes on once it holds less than half its share, or few are held in all', async (t) => {
  const { h, held, port } = setup();
  held.set(0, 2000);
  held.set(1, 2000);
  h.read('t', 0);
  h.read('t', 1);
  t.same(port.paused, [0, 1]);
  held.set(0, 290);
  h.progress();
  t.same(port.resumed, [], '2,290 held, a share of 572.5: partition 0 (290) holds half of it or more');
  held.set(0, 280);
  h.progress();
  t.same(port.resumed, [0], '2,280 held, a share of 570: partition 0 (280) holds less than half');
  held.set(0, 200);
  held.set(1, 1000);
  h.progress();
  t.same(port.resumed, [0, 1], '1,200 held in all, an eighth of the bound or fewer: partition 1 goes on though it holds most');
});

t.test('a partition paused for another reason (or gone) is not resumed here', async (t) => {
  const { h, held, port } = setup({ blocked: new Set([0]) });
  held.set(0, 3000);
  h.read('t', 0);
  t.same(port.paused, [0]);
  held.set(0, 0);
  h.progress();
  t.same(port.resumed, [], 'not resumed');
  held.set(0, 3000);
  h.read('t', 0);
  t.same(port.paused, [0, 0], 'forgotten here: paused again once it holds many');
});
