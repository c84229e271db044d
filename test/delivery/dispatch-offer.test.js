'use strict';
// Dispatcher.offer(): a message read goes through a real Resequencer, and one it lets go at once
// (unmarked, nothing held) while no call is under way or waiting is handed to the handler
// straight away, without a task. What a consumer sees must be what queueing it (accept(push()))
// gives: the same calls in the same order, the same safe offsets, the same retries and
// failures; a call that goes on (a promise) keeps its key's lane; the message of a call under
// way is never counted handled.
const t = require('tap');
const { Dispatcher } = require('../../build/delivery/dispatch');
const { Resequencer } = require('../../build/delivery/resequencer');
const { encodeOrderHeader, ORDER_ANCHOR, ORDER_SPREAD } = require('../..');

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

/** A dispatcher over a real Resequencer whose handler logs each call's start and end; `behave(m, log)` says what a call does. */
function harness({ concurrency = 1, ordering = 'key', retries = 0, behave = () => undefined }) {
  const log = { starts: [], ends: [], errors: [], failed: undefined, overlaps: 0, under: new Map(), most: 0, calls: 0 };
  const resequencer = new Resequencer({ maxWaitMs: 60_000 });
  const d = new Dispatcher(resequencer, { retries: retries, retryBackoffMs: 0, ordering: ordering }, {
    handle: (m, info) => {
      const key = m.key === null ? null : m.key.toString();
      log.starts.push(`${m.partition}:${m.offset}`);
      if (key !== null) {
        if ((log.under.get(key) ?? 0) > 0) log.overlaps++;
        log.under.set(key, (log.under.get(key) ?? 0) + 1);
      }
      log.calls++;
      const end = () => {
        if (key !== null) log.under.set(key, log.under.get(key) - 1);
      };
      let out;
      try {
        out = behave(m, log, info);
      } catch (err) {
        end();
        throw err;
      }
      if (out && typeof out.then === 'function') {
        return out.then(() => {
          end();
          log.ends.push(`${m.partition}:${m.offset}`);
        }, (err) => {
          end();
          throw err;
        });
      }
      end();
      log.ends.push(`${m.partition}:${m.offset}`);
      return out;
    },
    owns: () => true,
    handlerError: (error) => log.errors.push(error.offset),
    fail: (error) => {
      log.failed = error.offset;
    },
    progress: () => {},
  });
  d.begin(concurrency);
  return { d, log, resequencer };
}

async function idle(d) {
  for (let i = 0; i < 3000 && d.busy; i++) await tick(1);
}

/** `n` unmarked messages over 3 partitions and 5 keys, each partition's offsets from 0. */
function messages(n) {
  const next = [0, 0, 0];
  return Array.from({ length: n }, (_, i) => {
    const partition = i % 3;
    return { topic: 't', partition, offset: next[partition]++, key: Buffer.from(`k${i % 5}`), value: null, headers: [] };
  });
}

/** Feeds `input` one message at a time, by offer() or by accept(push()), awaiting `gap` between some. */
async function feed(d, resequencer, input, how, gap) {
  for (const [i, m] of input.entries()) {
    const copy = { ...m };
    if (how === 'offer') d.offer(copy);
    else d.accept(resequencer.push(copy));
    if (gap(i)) await tick(1);
  }
  await idle(d);
}

t.test('offer() makes the same calls, in the same order, with the same commits as accept(push())', async (t) => {
  const behaviours = {
    'returns at once': () => undefined,
    'a promise now and then': (m) => (m.offset % 4 === 1 ? tick(2) : undefined),
    'always a promise': () => tick(0),
  };
  for (const [name, behave] of Object.entries(behaviours)) {
    for (const concurrency of [1, 4]) {
      for (const ordering of ['key', 'partition', 'none']) {
        const input = messages(60);
        const runs = {};
        for (const how of ['offer', 'accept']) {
          const { d, log, resequencer } = harness({ concurrency, ordering, behave });
          await feed(d, resequencer, input, how, (i) => i % 7 === 0);
          runs[how] = { log, safe: [0, 1, 2].map((p) => d.ledger.safeOffset('t', p)) };
        }
        const label = `${name}, concurrency ${concurrency}, ordering '${ordering}'`;
        t.equal(runs.offer.log.ends.length, 60, `${label}: every message handled`);
        if (concurrency === 1) t.same(runs.offer.log.starts, runs.accept.log.starts, `${label}: the same calls in the same order`);
        else t.same([...runs.offer.log.starts].sort(), [...runs.accept.log.starts].sort(), `${label}: the same calls`);
        if (ordering === 'key') t.equal(runs.offer.log.overlaps, 0, `${label}: no two calls of one key at once`);
        t.same(runs.offer.safe, [20, 20, 20], `${label}: every partition committable to its end`);
      }
    }
  }
});

t.test('a call that returns no promise gets no task: offer() hands each message out within the call', async (t) => {
  const { d, log } = harness({});
  for (const m of messages(30)) {
    d.offer(m);
    t.equal(d.busy, false, `after ${m.partition}:${m.offset}: nothing under way or waiting`);
  }
  t.equal(log.ends.length, 30);
});

t.test('while the handler has a message, it is not handled: the safe offset stays at it, its offset is unhandled', async (t) => {
  const seen = [];
  const { d } = harness({
    behave: (m) => {
      seen.push([m.offset, d.ledger.safeOffset('t', m.partition), [...d.ledger.unhandledOf('t', m.partition)[0]], d.inFlight, d.busy]);
    },
  });
  for (let o = 0; o < 5; o++) d.offer({ topic: 't', partition: 0, offset: o, key: Buffer.from('k'), value: null, headers: [] });
  t.same(seen, [0, 1, 2, 3, 4].map((o) => [o, o, [o], 1, true]), 'each call: safe offset = its own offset, counted unhandled and under way');
  t.equal(d.ledger.safeOffset('t', 0), 5, 'after the calls: past them');
});

t.test('a direct call that throws is retried in place; when retries run out the run fails there and nothing passes it', async (t) => {
  let attempts = 0;
  const { d, log } = harness({
    retries: 2,
    behave: (m) => {
      if (m.offset === 2 && ++attempts < 3) throw new Error('not yet');
    },
  });
  for (const m of messages(9)) d.offer(m);
  await idle(d);
  t.same(log.errors, [2, 2], 'the message at offset 2 failed twice');
  t.equal(log.failed, undefined, 'then handled: the run goes on');
  t.equal(log.ends.length, 9, 'everything handled once');

  const bad = harness({ retries: 1, behave: (m) => { if (m.partition === 0 && m.offset === 1) throw new Error('never'); } });
  for (const m of messages(9)) bad.d.offer(m);
  await idle(bad.d);
  t.equal(bad.log.failed, 1, 'the message that keeps failing fails the run');
  t.equal(bad.log.errors.length, 2, 'after its retries');
  t.equal(bad.d.ledger.safeOffset('t', 0), 1, 'its partition commits below it');
});

t.test('a direct call that goes on (a promise) keeps its key: the next message of the key waits for it, others go', async (t) => {
  let open;
  const gate = new Promise((resolve) => {
    open = resolve;
  });
  const { d, log } = harness({ concurrency: 4, behave: (m) => (m.offset === 0 && m.partition === 0 ? gate : undefined) });
  const key = (k) => Buffer.from(k);
  d.offer({ topic: 't', partition: 0, offset: 0, key: key('a'), value: null, headers: [] });
  d.offer({ topic: 't', partition: 0, offset: 1, key: key('a'), value: null, headers: [] });
  d.offer({ topic: 't', partition: 0, offset: 2, key: key('b'), value: null, headers: [] });
  await tick(2);
  t.same(log.starts, ['0:0', '0:2'], "key a's second message waits; key b goes");
  t.equal(d.ledger.safeOffset('t', 0), 0, 'nothing committable past the call under way');
  open();
  await idle(d);
  t.same(log.ends, ['0:2', '0:0', '0:1'], 'then key a, in order');
  t.equal(log.overlaps, 0);
  t.equal(d.ledger.safeOffset('t', 0), 3);
});

t.test("what the handler's own code offers while it has a message waits for that call (no two calls of a key)", async (t) => {
  const k = Buffer.from('a');
  let fed = false;
  const { d, log } = harness({
    concurrency: 2,
    behave: (m) => {
      if (!fed) {
        fed = true;
        d.offer({ topic: 't', partition: 0, offset: 1, key: k, value: null, headers: [] });
        return tick(3);
      }
      return undefined;
    },
  });
  d.offer({ topic: 't', partition: 0, offset: 0, key: k, value: null, headers: [] });
  await tick(1);
  t.same(log.starts, ['0:0'], 'the second waits while the first goes on');
  await idle(d);
  t.same(log.ends, ['0:0', '0:1'], 'in order');
  t.equal(log.overlaps, 0);
});

t.test('a marked message, or one behind something held, is never handed out straight away', async (t) => {
  const { d, log } = harness({});
  const order = (kind, sequence, previous) => [{ 'kdp-order': encodeOrderHeader(kind, '9f86d081884c7d65', sequence, previous, 2, 3, 0) }];
  // A spread message of sequence 2 whose predecessor (sequence 1, an anchor on partition 0) is not read yet: held.
  d.offer({ topic: 't', partition: 1, offset: 0, key: Buffer.from('hot'), value: null, headers: order(ORDER_SPREAD, 2, 1) });
  t.same(log.starts, [], 'the spread message waits for its predecessor');
  d.offer({ topic: 't', partition: 0, offset: 0, key: Buffer.from('hot'), value: null, headers: order(ORDER_ANCHOR, 1, 0) });
  await idle(d);
  t.same(log.starts, ['0:0', '1:0'], 'then both, in produce order');
});
