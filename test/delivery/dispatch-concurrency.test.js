'use strict';
// The Dispatcher on its own (no broker): handler calls up to `concurrency` at once; never two
// of one key ('key'), of one partition ('partition'), any ('none'); each lane's messages in
// release order; commits below the lowest offset not handled, gaps above it or not; a failed
// message retried in place while other keys go on; what leaves dropped, calls under way waited for.
const t = require('tap');
const { Dispatcher } = require('../../build/delivery/dispatch');

const NO_HELD = { committable: () => undefined, setCommitted: () => [], forget: () => 0 };
const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

function release(topic, partition, offset, key) {
  return { message: { topic, partition, offset, key: key === null ? null : Buffer.from(key) }, ordered: true, order: null, released: true };
}

/** A dispatcher whose handler records each call's start and end, and waits `wait(message)` ms (0: returns no promise; a promise: until it settles). */
function harness({ concurrency, ordering, retries = 0, wait = () => 1, fails = () => false, owns = () => true, laneOf = () => undefined }) {
  // overlaps: calls started while another of the same lane (laneOf(message)) was under way.
  const log = { starts: [], ends: [], most: 0, errors: [], failed: undefined, overlaps: 0 };
  const lanes = new Map();
  let under = 0;
  const d = new Dispatcher(NO_HELD, { retries: retries, retryBackoffMs: 0, ordering: ordering }, {
    handle: (m) => {
      log.starts.push(m);
      const lane = laneOf(m);
      if (lane !== undefined) {
        if ((lanes.get(lane) ?? 0) > 0) log.overlaps++;
        lanes.set(lane, (lanes.get(lane) ?? 0) + 1);
      }
      under++;
      log.most = Math.max(log.most, under);
      const ms = wait(m);
      const finish = () => {
        under--;
        if (lane !== undefined) lanes.set(lane, lanes.get(lane) - 1);
        if (fails(m)) throw new Error(`failed at ${m.offset}`);
        log.ends.push(m);
      };
      if (ms === 0) return finish();
      return (typeof ms === 'number' ? tick(ms) : ms).then(finish);
    },
    owns,
    handlerError: (error) => log.errors.push(error),
    fail: (error) => {
      log.failed = error;
    },
    progress: () => {},
  });
  d.begin(concurrency);
  return { d, log };
}

async function idle(d) {
  for (let i = 0; i < 2000 && d.busy; i++) await tick(1);
}

/** Messages: `perKey` consecutive offsets on each of `keys` keys, over `partitions` partitions, interleaved. */
function workload(keys, perKey, partitions) {
  const out = [];
  const next = new Array(partitions).fill(0);
  for (let s = 0; s < perKey; s++) {
    for (let k = 0; k < keys; k++) {
      const partition = k % partitions;
      out.push(release('t', partition, next[partition]++, `k${k}`));
    }
  }
  return out;
}

t.test("concurrency 1: one call at a time, in release order (the behaviour before 'concurrency')", async (t) => {
  for (const ordering of ['key', 'partition', 'none']) {
    const { d, log } = harness({ concurrency: 1, ordering, wait: (m) => (m.offset % 3 === 0 ? 2 : 0) });
    const input = workload(7, 5, 3);
    d.accept(input);
    await idle(d);
    t.equal(log.most, 1, `${ordering}: never two calls at once`);
    t.same(log.starts.map((m) => `${m.partition}:${m.offset}`), input.map((r) => `${r.message.partition}:${r.message.offset}`), `${ordering}: release order`);
  }
});

t.test("ordering 'key': keys at once, never two calls of one key, each key's messages in release order", async (t) => {
  const { d, log } = harness({ concurrency: 8, ordering: 'key', laneOf: (m) => m.key.toString(), wait: (m) => 1 + (m.offset % 3) });
  const input = workload(20, 10, 4);
  d.accept(input);
  await idle(d);
  t.equal(log.overlaps, 0, 'no two calls of one key overlapped');
  t.equal(log.most, 8, 'up to 8 calls at once, and 8 reached');
  t.equal(log.ends.length, input.length, 'every message handled once');
  const order = (list) => {
    const byKey = new Map();
    for (const m of list) {
      const k = m.key.toString();
      if (!byKey.has(k)) byKey.set(k, []);
      byKey.get(k).push(m.offset);
    }
    return byKey;
  };
  t.same(order(log.starts), order(input.map((r) => r.message)), "each key's calls in release order");
});

t.test("ordering 'key': one hot key's backlog does not hold the other keys back", async (t) => {
  let open;
  const gate = new Promise((resolve) => {
    open = resolve;
  });
  const { d, log } = harness({ concurrency: 4, ordering: 'key', wait: (m) => (m.key.toString() === 'hot' ? gate : 1) });
  const input = [];
  for (let i = 0; i < 20; i++) input.push(release('t', 0, input.length, 'hot'));
  for (let i = 0; i < 20; i++) input.push(release('t', 0, input.length, `cold${i}`));
  d.accept(input);
  for (let i = 0; i < 2000 && log.ends.length < 20; i++) await tick(1);
  t.equal(log.ends.filter((m) => m.key.toString() !== 'hot').length, 20, 'every cold key handled while the hot key is stuck on its first message');
  t.equal(log.starts.filter((m) => m.key.toString() === 'hot').length, 1, 'the hot key one call at a time');
  open();
  await idle(d);
  t.same(log.ends.filter((m) => m.key.toString() === 'hot').map((m) => m.offset), [...Array(20).keys()], 'the hot key in release order');
});

t.test("ordering 'key': messages without a key are independent of each other", async (t) => {
  const { d, log } = harness({ concurrency: 5, ordering: 'key', wait: () => 5 });
  d.accept([0, 1, 2, 3, 4].map((o) => release('t', 0, o, null)));
  await tick(1);
  t.equal(log.starts.length, 5, 'all five at once');
  await idle(d);
});

t.test("ordering 'partition': partitions at once, never two calls of one partition, each in offset order", async (t) => {
  const { d, log } = harness({ concurrency: 16, ordering: 'partition', laneOf: (m) => m.partition, wait: () => 2 });
  const input = workload(30, 4, 3);
  d.accept(input);
  await idle(d);
  t.equal(log.overlaps, 0, 'no two calls of one partition overlapped');
  t.equal(log.most, 3, 'one call per partition: 3 at most, and 3 reached');
  for (const p of [0, 1, 2]) {
    const offsets = log.starts.filter((m) => m.partition === p).map((m) => m.offset);
    t.same(offsets, [...offsets].sort((a, b) => a - b), `partition ${p} in offset order`);
  }
});

t.test("ordering 'none': up to concurrency at once, even on one key", async (t) => {
  let open;
  const gate = new Promise((resolve) => {
    open = resolve;
  });
  const { d, log } = harness({ concurrency: 6, ordering: 'none', laneOf: (m) => m.key.toString(), wait: () => gate });
  d.accept([...Array(12).keys()].map((o) => release('t', 0, o, 'same')));
  t.equal(log.starts.length, 6, 'six calls of one key at once');
  t.equal(log.overlaps, 5, 'each overlapping the others');
  open();
  await idle(d);
  t.equal(log.ends.length, 12);
});

t.test('a handler that returns no promise is called again at once: the whole batch is handled within accept()', async (t) => {
  const { d, log } = harness({ concurrency: 1, ordering: 'key', wait: () => 0 });
  d.accept(workload(10, 10, 2));
  t.equal(log.ends.length, 100, 'handled before accept() returned');
  t.notOk(d.busy);
});

t.test('commits: below the lowest offset not handled, whatever was handled above it', async (t) => {
  const gates = new Map();
  // Each call waits for its own gate.
  const { d } = harness({ concurrency: 10, ordering: 'key', wait: (m) => new Promise((resolve) => gates.set(m.offset, resolve)) });
  d.accept([0, 1, 2, 3, 4, 5].map((o) => release('t', 0, o, `k${o}`)));
  t.equal(d.ledger.safeOffset('t', 0), 0, 'nothing handled: offset 0');
  gates.get(3)();
  gates.get(4)();
  await tick(1);
  t.equal(d.ledger.safeOffset('t', 0), 0, '3 and 4 handled, 0 not: still 0');
  gates.get(0)();
  await tick(1);
  t.equal(d.ledger.safeOffset('t', 0), 1, '0 handled: 1');
  gates.get(1)();
  gates.get(2)();
  await tick(1);
  t.equal(d.ledger.safeOffset('t', 0), 5, '0 to 4 handled: 5 (the gap closed)');
  gates.get(5)();
  await tick(1);
  t.equal(d.ledger.safeOffset('t', 0), undefined, 'all handled: nothing held back (the consumer commits the next offset it read)');
});

t.test("a failed message is retried in place: its key waits, other keys go on; when retries run out nothing more starts", async (t) => {
  const attempts = new Map();
  const { d, log } = harness({
    concurrency: 4,
    ordering: 'key',
    retries: 2,
    wait: () => 1,
    fails: (m) => {
      if (m.key.toString() !== 'bad') return false;
      attempts.set(m.offset, (attempts.get(m.offset) ?? 0) + 1);
      return m.offset === 0 ? attempts.get(0) < 2 : true; // offset 0 succeeds on its 2nd try; offset 3 always fails
    },
  });
  d.accept([release('t', 0, 0, 'bad'), release('t', 0, 1, 'good'), release('t', 0, 2, 'good'), release('t', 0, 3, 'bad'), release('t', 0, 4, 'good')]);
  await idle(d);
  t.equal(attempts.get(0), 2, 'offset 0: failed once, then handled');
  t.equal(attempts.get(3), 3, 'offset 3: 1 + 2 retries');
  t.equal(log.errors.length, 4, 'each failed call reported');
  t.ok(log.failed, 'the consumer told to stop');
  t.equal(log.failed.offset, 3);
  t.same(log.ends.filter((m) => m.key.toString() === 'good').map((m) => m.offset), [1, 2, 4], 'the other key went on meanwhile');
  t.equal(d.ledger.safeOffset('t', 0), 3, 'the commit stays below the failed message');
});

t.test('drop(): what waits of a partition leaving is dropped, calls under way go on and settled() waits for them', async (t) => {
  const { d, log } = harness({ concurrency: 2, ordering: 'partition', wait: () => 20 });
  d.accept([release('t', 0, 0, 'a'), release('t', 0, 1, 'a'), release('t', 1, 0, 'b'), release('t', 1, 1, 'b')]);
  await tick(1);
  t.equal(d.inFlight, 2);
  d.drop([{ topic: 't', partition: 0 }]);
  t.equal(d.waiting, 1, "only partition 1's second message still waits");
  const t0 = Date.now();
  await d.callsOver([{ topic: 't', partition: 0 }], 5000);
  t.ok(Date.now() - t0 >= 10, 'settled() waited for the call under way');
  t.ok(log.ends.some((m) => m.partition === 0 && m.offset === 0), "partition 0's call ended before settled() resolved");
  // Released after drop(): marked unhandled (no commit passes it), never handed out.
  d.accept([release('t', 0, 2, 'a')]);
  await idle(d);
  t.notOk(log.starts.some((m) => m.partition === 0 && m.offset >= 1), 'nothing of partition 0 started after drop()');
  t.equal(d.ledger.safeOffset('t', 0), 1, 'its commit stays below what was not handled');
  t.same(log.ends.filter((m) => m.partition === 1).map((m) => m.offset), [0, 1]);
});

t.test('settled() gives up after its timeout', async (t) => {
  const { d } = harness({ concurrency: 1, ordering: 'key', wait: () => 200 });
  d.accept([release('t', 0, 0, 'a')]);
  const t0 = Date.now();
  await d.callsOver([{ topic: 't', partition: 0 }], 20);
  const waited = Date.now() - t0;
  t.ok(waited >= 15 && waited < 150, `resolved after ~20 ms (${waited})`);
  await idle(d);
});

t.test('halt(): nothing more starts; a call under way that ends still marks its offset handled', async (t) => {
  const { d, log } = harness({ concurrency: 2, ordering: 'key', wait: () => 10 });
  d.accept([0, 1, 2, 3].map((o) => release('t', 0, o, `k${o}`)));
  await tick(1);
  d.halt();
  t.equal(d.waiting, 0);
  await tick(30);
  t.equal(log.starts.length, 2, 'the two under way, nothing after');
  t.equal(d.ledger.safeOffset('t', 0), 2, 'the commit stays below what never started');
});


t.test("batches (batchLimit): a call takes its lane's consecutive waiting messages, up to the limit, in order; a failed batch is retried whole", async (t) => {
  const calls = [];
  let failOnce = true;
  const d = new Dispatcher(NO_HELD, { retries: 1, retryBackoffMs: 0, ordering: 'key' }, {
    handle: () => t.fail('the single-message handler is not called in batch mode'),
    handleBatch: async (messages, infos) => {
      calls.push(messages.map((m) => `${m.key}:${m.offset}`));
      t.equal(infos.length, messages.length, 'one info per message');
      await tick(2);
      if (failOnce && messages.some((m) => m.offset === 7)) {
        failOnce = false;
        throw new Error('once');
      }
    },
    owns: () => true,
    handlerError: () => {},
    fail: () => t.fail('no batch fails twice'),
    progress: () => {},
  });
  d.begin(4, 3);
  // Key a: offsets 0, 2, 4, 6, 8, 10, 12 (7 messages); key b: 1, 3, 5, 7, 9, 11 (6 messages).
  d.accept([...Array(12).keys()].map((o) => release('t', 0, o, o % 2 === 0 ? 'a' : 'b')).concat([release('t', 0, 12, 'a')]));
  await idle(d);
  const ofKey = (k) => calls.filter((c) => c[0].startsWith(`${k}:`));
  for (const c of calls) t.equal(new Set(c.map((x) => x.split(':')[0])).size, 1, `one key per call (${c.join(' ')})`);
  t.ok(calls.every((c) => c.length <= 3), 'at most 3 messages a call');
  t.same(ofKey('a').map((c) => c.join(' ')), ['a:0 a:2 a:4', 'a:6 a:8 a:10', 'a:12'], 'key a: in release order, in threes');
  const b = ofKey('b').map((c) => c.join(' '));
  t.same(b, ['b:1 b:3 b:5', 'b:7 b:9 b:11', 'b:7 b:9 b:11'], 'key b: the failed batch retried whole, nothing of b overtaking it');
  t.equal(d.ledger.safeOffset('t', 0), undefined, 'everything handled');
});

for (const concurrency of [1, 4]) {
  t.test(`concurrency ${concurrency}, ordering 'key': the message behind one of its key that left with a partition goes flagged 'unowned', never held; other keys go on`, async (t) => {
    const infos = new Map();
    const { d, log } = harness({ concurrency, ordering: 'key', wait: () => 5 });
    const handle = d.hooks.handle;
    d.hooks.handle = (m, info) => {
      infos.set(`${m.key}:${m.partition}:${m.offset}`, info);
      return handle(m, info);
    };
    // k's p1:2 waits (behind k's p0:1) when it leaves with partition 1; k's p0:3 was behind it.
    d.accept([release('t', 0, 0, 'x'), release('t', 0, 1, 'k'), release('t', 1, 2, 'k'), release('t', 0, 3, 'k'), release('t', 0, 4, 'k'), release('t', 0, 5, 'j')]);
    d.drop([{ topic: 't', partition: 1 }]);
    await idle(d);
    const handled = log.ends.map((m) => `${m.key}:${m.partition}:${m.offset}`);
    t.same(handled.filter((h) => h.startsWith('k')), ['k:0:1', 'k:0:3', 'k:0:4'], "k's kept messages in order, the dropped one not handed out");
    t.same(handled.slice().sort(), ['j:0:5', 'k:0:1', 'k:0:3', 'k:0:4', 'x:0:0'], 'every kept message handled');
    t.match(infos.get('k:0:3'), { ordered: false, outOfOrder: true, reason: 'unowned' }, 'the first behind the dropped one: flagged');
    t.match(infos.get('k:0:4'), { ordered: true }, 'the next: in order after it');
    t.match(infos.get('k:0:1'), { ordered: true }, 'the one before: untouched');
    t.match(infos.get('j:0:5'), { ordered: true }, 'another key: untouched');
    t.equal(d.ledger.safeOffset('t', 1), 2, "the dropped message's partition: its commit stays below it");
  });
}

for (const [concurrency, when] of [[4, 'waiting'], [1, 'waiting'], [1, 'released after the revoke']]) {
  t.test(`concurrency ${concurrency}, ordering 'key': a call of a revoked partition that fails is left to the next owner; the next message of its key (${when}) goes flagged 'unowned'`, async (t) => {
    let owned = new Set([0, 1]);
    let fail;
    const infos = new Map();
    const calls = [];
    const d = new Dispatcher(NO_HELD, { retries: 3, retryBackoffMs: 0, ordering: 'key' }, {
      handle: (m, info) => {
        calls.push(`${m.partition}:${m.offset}`);
        infos.set(`${m.partition}:${m.offset}`, info);
        if (m.partition === 1) return new Promise((resolve, reject) => { fail = reject; });
        return tick(1);
      },
      owns: (tp) => owned.has(Number(tp.split('\u0000')[1])),
      handlerError: () => {},
      fail: () => t.fail('nothing gives up'),
      progress: () => {},
    });
    d.begin(concurrency);
    // k's message on partition 1 is under way when partition 1 leaves; k's next ones are on partition 0.
    const next = [release('t', 0, 0, 'k'), release('t', 0, 1, 'k')];
    d.accept([release('t', 1, 0, 'k'), ...(when === 'waiting' ? next : [])]);
    owned = new Set([0]);
    d.drop([{ topic: 't', partition: 1 }]);
    if (when !== 'waiting') d.accept(next);
    t.same(calls, ['1:0'], "k's first message under way, the next ones wait for it");
    fail(new Error('down'));
    await idle(d);
    t.same(calls, ['1:0', '0:0', '0:1'], 'not called again (its partition left); the next ones after it');
    t.match(infos.get('0:0'), { ordered: false, outOfOrder: true, reason: 'unowned' }, 'the next: flagged, its predecessor not handled');
    t.match(infos.get('0:1'), { ordered: true }, 'the one after it: in order after it');
    t.equal(d.ledger.safeOffset('t', 1), 0, "the revoked partition's commit stays below the message");
  });
}

t.test('batches: a failed call of one key spanning partitions is retried whole while one of its partitions stays', async (t) => {
  let owned = new Set([0, 1]);
  const calls = [];
  let first = true;
  let gate;
  const d = new Dispatcher(NO_HELD, { retries: 2, retryBackoffMs: 0, ordering: 'key' }, {
    handle: () => t.fail('batch mode'),
    handleBatch: async (messages) => {
      calls.push(messages.map((m) => `${m.partition}:${m.offset}`).join(' '));
      if (first) {
        first = false;
        await new Promise((resolve) => { gate = resolve; });
        throw new Error('down');
      }
    },
    owns: (tp) => owned.has(Number(tp.split('\u0000')[1])),
    handlerError: () => {},
    fail: () => t.fail('nothing gives up'),
    progress: () => {},
  });
  d.begin(2, 3);
  d.accept([release('t', 1, 0, 'k'), release('t', 0, 0, 'k'), release('t', 0, 1, 'k')]);
  // The batch's first message leaves with partition 1 while the call is under way; the others stay.
  owned = new Set([0]);
  d.drop([{ topic: 't', partition: 1 }]);
  gate();
  await idle(d);
  t.same(calls, ['1:0 0:0 0:1', '1:0 0:0 0:1'], 'retried whole');
  t.equal(d.ledger.safeOffset('t', 0), undefined, "partition 0's messages handled: nothing held back");
});
