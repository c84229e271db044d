'use strict';
// The calls waiting for room (src/producer/take/room.ts) alone: send() calls waiting for room go
// in call order, as room frees, however many wait (the queue of waiters is compacted as it is
// read), and a disconnect runs every one still waiting; the backlog (src/producer/hold/backlog.ts)
// gives back the messages it held.
const t = require('tap');
const { Backlog } = require('../../build/producer/hold/backlog');
const { Room } = require('../../build/producer/take/room');

/** The calls waiting for room over `held` messages held elsewhere (the test moves it), maxQueued 10. */
function room() {
  const state = { held: 10 };
  const b = new Room(10, () => state.held);
  return { b, state };
}

t.test('20,000 waiting calls go in call order, each once, as room frees', async (t) => {
  const { b, state } = room();
  const ran = [];
  const N = 20_000;
  for (let i = 0; i < N; i++) {
    b.wait(() => {
      ran.push(i);
      state.held++; // each call that goes takes the room it found
    });
  }
  t.equal(b.waiting, N);
  b.wake();
  t.same(ran, [], 'no room: none goes');
  // Room for 7 at a time, over and over: past the compaction threshold (4,096) many times.
  while (b.waiting > 0) {
    const before = ran.length;
    state.held -= 7;
    b.wake();
    t.equal(ran.length - before, Math.min(7, N - before), 'as many go as there is room for');
    if (ran.length - before === 0) break;
  }
  t.equal(ran.length, N);
  t.ok(ran.every((v, i) => v === i), 'in call order');
  t.equal(b.waiting, 0);
});

t.test('a call that waits again goes behind the others; releaseAll() runs every waiting call once', async (t) => {
  const { b, state } = room();
  const ran = [];
  let again = true;
  const first = () => {
    ran.push('first');
    if (again) {
      again = false;
      b.wait(first); // found no room after all: waits again, behind
    } else state.held++;
  };
  b.wait(first);
  for (let i = 0; i < 5; i++) b.wait(() => ran.push(i));
  state.held = 9;
  b.wake();
  t.same(ran, ['first', 0, 1, 2, 3, 4, 'first'], 'the first went, queued itself again behind the rest, and went last');
  t.equal(b.waiting, 0);
  const taken = [];
  const { b: b2 } = room();
  for (let i = 0; i < 5000; i++) b2.wait(() => taken.push(i));
  b2.releaseAll();
  const held = new Backlog(10, { poll() {}, handOver: () => 0, refused() {}, held: () => 0, wake() {}, drained() {} });
  t.same(held.take(), [], 'no held messages');
  t.equal(taken.length, 5000);
  t.ok(taken.every((v, i) => v === i), 'each waiting call run once, in order');
  t.equal(b2.waiting, 0);
});
