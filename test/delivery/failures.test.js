'use strict';
// A message the handler keeps failing on stops nothing else (the Dispatcher on its own, no broker): the backoff
// (exponential, capped, jittered), onFailure's verdicts and their bad answers, dead letters written before the key's
// next message, a dead-letter write that fails parking the key (bounded by maxParkMs), a resting call holding no
// handler slot, and under a transaction a failed message read again going on from what was decided for it.
const t = require('tap');
const { Dispatcher } = require('../../build/delivery/dispatch');
const { FailurePolicy } = require('../../build/delivery/failures');
const { DEAD_LETTER_HEADERS } = require('../../build/delivery/dead-letters');

/** Read up to offset 99: with nothing unhandled, the safe offset is END. */
const END = 100;
const NO_HELD = { committable: () => END, setCommitted: () => [], forget: () => 0, unreleased: () => {}, assign: () => {} };
const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

function release(partition, offset, key) {
  return { message: { topic: 't', partition, offset, key: key === null ? null : Buffer.from(key), value: Buffer.from(`v${offset}`), headers: [{ h: Buffer.from('x') }] }, ordered: true, order: null };
}

/**
 * A dispatcher whose handler fails on the offsets `poison` (a Set) and takes `wait` ms; `write(messages, added)` is the
 * dead-letter sink (absent: no dead-letter topic). The log has each call, each end, the dead letters and the warnings.
 */
function harness({ concurrency = 4, ordering = 'key', retries = 2, backoff = 5, backoffMax, poison = new Set(), wait = 1, onFailure, write, maxParkMs, transactional, owns = () => true }) {
  const log = { calls: [], ends: [], errors: [], letters: [], parked: [], failed: undefined, under: 0, most: 0, spoiled: 0 };
  const d = new Dispatcher(NO_HELD, {
    retries, retryBackoffMs: backoff, retryBackoffMaxMs: backoffMax, ordering, onFailure, maxParkMs, transactional,
    deadLetterTopic: write === undefined ? undefined : 'dlq',
  }, {
    handle: async (m) => {
      log.calls.push(m.offset);
      log.under++;
      log.most = Math.max(log.most, log.under);
      await tick(wait);
      log.under--;
      if (poison.has(m.offset)) throw Object.assign(new TypeError(`bad ${m.offset}`), { code: 'E_BAD' });
      log.ends.push(m.offset);
    },
    owns,
    handlerError: (error) => log.errors.push(error),
    fail: (error) => {
      log.failed = error;
    },
    progress: () => {},
    deadLetter: write === undefined ? undefined : (messages, added) => write(messages, added),
    deadLettered: (messages) => {
      for (const m of messages) log.ends.push(`dlq:${m.offset}`);
    },
    parked: (error) => log.parked.push(error),
    spoiled: () => log.spoiled++,
  });
  d.begin(concurrency);
  return { d, log };
}

async function until(test, ms = 3000) {
  const deadline = Date.now() + ms;
  while (!test() && Date.now() < deadline) await tick(2);
  return test();
}

t.test('the backoff doubles from retryBackoffMs up to retryBackoffMaxMs, less up to a fifth at random', async (t) => {
  const policy = new FailurePolicy({ retries: 9, retryBackoffMs: 100, retryBackoffMaxMs: 1000, deadLetter: false });
  const full = [100, 200, 400, 800, 1000, 1000, 1000];
  for (let n = 1; n <= full.length; n++) {
    const seen = Array.from({ length: 200 }, () => policy.backoff(n));
    t.ok(seen.every((ms) => ms <= full[n - 1] && ms >= 0.8 * full[n - 1]), `attempt ${n}: within [${0.8 * full[n - 1]}, ${full[n - 1]}]`);
    t.ok(new Set(seen).size > 1, `attempt ${n}: jittered`);
  }
  t.equal(new FailurePolicy({ retries: 1, retryBackoffMs: 0, deadLetter: false }).backoff(5), 0, 'no backoff: none');
  t.equal(new FailurePolicy({ retries: 1, retryBackoffMs: 50_000, deadLetter: false }).backoff(1) <= 50_000, true, 'the default cap is never below the base');
  t.ok(new FailurePolicy({ retries: 1, retryBackoffMs: 1000, deadLetter: false }).backoff(10) <= 30_000, 'the default cap: 30 s');
});

t.test('without onFailure: retries, then the dead-letter topic where there is one, else a stop', async (t) => {
  const policy = new FailurePolicy({ retries: 2, retryBackoffMs: 1, deadLetter: true });
  t.same([1, 2, 3].map((n) => policy.verdict({}, new Error('x'), n)), ['retry', 'retry', 'deadLetter']);
  const none = new FailurePolicy({ retries: 0, retryBackoffMs: 1, deadLetter: false });
  t.equal(none.verdict({}, new Error('x'), 1), 'stop');
});

t.test('a message that keeps failing goes to the dead-letter topic after its retries; its key waits for the write, other keys go on', async (t) => {
  const writes = [];
  let ack;
  const { d, log } = harness({
    poison: new Set([0]), backoff: 10,
    write: (messages, added) => {
      writes.push({ messages, added });
      return new Promise((resolve) => { ack = resolve; });
    },
  });
  // offset 0 (key a) fails always; 1, 3 are a's next; 2, 4 key b.
  d.accept([release(0, 0, 'a'), release(0, 1, 'a'), release(0, 2, 'b'), release(0, 3, 'a'), release(0, 4, 'b')]);
  t.ok(await until(() => writes.length === 1), 'the dead-letter write came');
  t.same(log.calls.filter((o) => o === 0).length, 3, 'three calls: one and its two retries');
  t.same(log.ends.filter((o) => o === 2 || o === 4), [2, 4], 'key b went on meanwhile');
  t.notOk(log.calls.includes(1), "key a's next message waits for the write");
  t.equal(d.ledger.safeOffset('t', 0), 0, 'nothing committed past the message while its write is under way');
  const [{ messages, added }] = writes;
  t.equal(messages[0].offset, 0);
  const headers = Object.fromEntries(added[0]);
  t.same(headers, {
    [DEAD_LETTER_HEADERS.topic]: 't', [DEAD_LETTER_HEADERS.partition]: '0', [DEAD_LETTER_HEADERS.offset]: '0',
    [DEAD_LETTER_HEADERS.errorClass]: 'TypeError', [DEAD_LETTER_HEADERS.errorMessage]: 'bad 0', [DEAD_LETTER_HEADERS.errorCode]: 'E_BAD',
    [DEAD_LETTER_HEADERS.attempts]: '3',
  }, 'the origin, the error and the attempts');
  ack();
  t.ok(await until(() => log.ends.includes(3)), "then key a's next messages");
  t.same(log.ends.filter((o) => o === 'dlq:0' || o === 1 || o === 3), ['dlq:0', 1, 3], 'in order after the dead letter');
  t.equal(d.ledger.safeOffset('t', 0), END, 'the dead-lettered offset counts as handled');
  t.equal(log.failed, undefined, 'the run goes on');
  t.same(d.failureCounts, { retries: 2, deadLettered: 1, skipped: 0, deadLetterFailures: 0, parked: 0 });
});

t.test('a resting call holds no handler slot: its lane waits, the others go on', async (t) => {
  // concurrency 2: key a rests 300 ms; b's and c's calls both run meanwhile.
  const { d, log } = harness({ concurrency: 2, poison: new Set([0]), retries: 1, backoff: 300, write: () => Promise.resolve(), wait: 20 });
  d.accept([release(0, 0, 'a'), release(0, 1, 'b'), release(0, 2, 'c'), release(0, 3, 'b'), release(0, 4, 'c')]);
  t.ok(await until(() => log.ends.length === 4), 'the other keys ended while a rested');
  t.equal(log.most, 2, 'two calls at once while a rested');
  t.equal(d.inFlight, 0, 'a resting call is not under way');
  t.ok(d.busy, 'but the dispatcher is busy');
  t.ok(await until(() => log.ends.includes('dlq:0')), 'a was dead-lettered after its retry');
  // concurrency 1 (no lanes until then): the resting key gets its lane, the others go on, one call at a time, in release order.
  const one = harness({ concurrency: 1, poison: new Set([0]), retries: 1, backoff: 100, write: () => Promise.resolve(), wait: 1 });
  one.d.accept([release(0, 0, 'a'), release(0, 1, 'b'), release(0, 2, 'a'), release(0, 3, 'c'), release(1, 7, null)]);
  await tick(60);
  t.same(one.log.ends, [1, 3, 7], 'concurrency 1: the other keys (and a message of no key) went on while it rested, in release order');
  t.equal(one.log.most, 1, 'one call at a time');
  t.ok(await until(() => one.log.ends.length === 5));
  t.same(one.log.ends.slice(3), ['dlq:0', 2], "then its key: its dead letter, its next message");
  one.d.accept([release(0, 4, 'b'), release(0, 5, 'b')]);
  t.ok(await until(() => one.log.ends.length === 7));
  t.same(one.log.ends.slice(5), [4, 5], 'and on as before');
});

t.test("onFailure decides: 'deadLetter' at once, 'skip', 'retry' past handlerRetries, 'stop'; it gets the message, the error and the attempts", async (t) => {
  const seen = [];
  const { d, log } = harness({
    retries: 0, backoff: 1, write: () => Promise.resolve(),
    poison: new Set([0, 1, 2]),
    onFailure: (m, error, attempts) => {
      seen.push([m.offset, error.code, attempts]);
      if (m.offset === 0) return 'deadLetter';
      if (m.offset === 1) return Promise.resolve('skip');
      return attempts < 4 ? 'retry' : 'skip';
    },
  });
  d.accept([release(0, 0, 'a'), release(0, 1, 'b'), release(0, 2, 'c')]);
  t.ok(await until(() => d.ledger.safeOffset('t', 0) === END), 'all three done with');
  t.same(seen.filter(([o]) => o === 0), [[0, 'KDP_HANDLER_ERROR', 1]], 'dead-lettered after one call');
  t.same(seen.filter(([o]) => o === 2).map(([, , a]) => a), [1, 2, 3, 4], "retried past handlerRetries (0) while onFailure said so");
  t.same(d.failureCounts, { retries: 3, deadLettered: 1, skipped: 2, deadLetterFailures: 0, parked: 0 });
  t.ok(log.ends.includes('dlq:0'));
  const stop = harness({ poison: new Set([0]), onFailure: () => 'stop' });
  stop.d.accept([release(0, 0, 'a')]);
  t.ok(await until(() => stop.log.failed !== undefined));
  t.equal(stop.log.failed.code, 'KDP_HANDLER_ERROR', "'stop': the run stops with the HandlerError");
});

t.test('a bad answer of onFailure stops the run with a typed error', async (t) => {
  const cases = [
    [() => 'later', 'KDP_INVALID_VALUE', /'retry', 'skip', 'deadLetter', 'stop'/],
    [() => 'deadLetter', 'KDP_INVALID_VALUE', /no options\.deadLetter/],
    [() => { throw new Error('boom'); }, 'KDP_CALLBACK_ERROR', /options\.onFailure threw: boom/],
    [() => Promise.reject(new Error('late boom')), 'KDP_CALLBACK_ERROR', /late boom/],
  ];
  for (const [onFailure, code, message] of cases) {
    const { d, log } = harness({ poison: new Set([0]), onFailure });
    d.accept([release(0, 0, 'a'), release(0, 1, 'a')]);
    t.ok(await until(() => log.failed !== undefined));
    t.equal(log.failed.code, code);
    t.match(log.failed.message, message);
    t.equal(d.ledger.safeOffset('t', 0), 0, 'nothing committed past it');
    t.notOk(log.calls.includes(1), 'its key went no further');
  }
});

t.test('a dead-letter write that fails parks the key: warned, written again after a backoff; its key waits, others go on, reading is not held back for it', async (t) => {
  let tries = 0;
  const { d, log } = harness({
    retries: 0, backoff: 5, poison: new Set([0]),
    write: () => (++tries < 3 ? Promise.reject(new Error('UNKNOWN_TOPIC')) : Promise.resolve()),
  });
  d.accept([release(0, 0, 'a'), release(0, 1, 'a'), release(0, 2, 'a'), release(0, 3, 'b')]);
  t.ok(await until(() => log.ends.includes(3)), 'key b went on');
  t.ok(await until(() => log.parked.length >= 1));
  t.equal(log.parked[0].code, 'KDP_DEAD_LETTER');
  t.equal(log.parked[0].deadLetterTopic, 'dlq');
  t.equal(log.parked[0].offset, 0);
  t.match(log.parked[0].message, /UNKNOWN_TOPIC/);
  t.ok(await until(() => log.ends.includes(2)), 'written the third time; then its key went on');
  t.same(log.ends.filter((o) => typeof o === 'string' || o < 3), ['dlq:0', 1, 2]);
  t.equal(log.parked.length, 2, 'a warning per failed write');
  t.same(d.failureCounts, { retries: 0, deadLettered: 1, skipped: 0, deadLetterFailures: 2, parked: 0 });
  t.equal(log.failed, undefined);

  // While parked, its lane's waiting messages do not count against maxPending.
  let hold;
  const parked = harness({ retries: 0, backoff: 5, poison: new Set([0]), write: () => new Promise((_, reject) => { hold = reject; }) });
  parked.d.accept([release(0, 0, 'a'), release(0, 1, 'a'), release(0, 2, 'a')]);
  t.ok(await until(() => hold !== undefined));
  hold(new Error('down'));
  t.ok(await until(() => parked.log.parked.length === 1));
  t.equal(parked.d.waiting, 2, 'two messages of its key wait');
  t.equal(parked.d.pending(100), 0, 'none of them holds reading back');
  t.equal(parked.d.pending(1), 1, 'up to maxPending of them');
  parked.d.halt();
});

t.test('a key parked maxParkMs stops the run with a DeadLetterError, nothing committed past it', async (t) => {
  const { d, log } = harness({ retries: 0, backoff: 5, poison: new Set([1]), maxParkMs: 80, write: () => Promise.reject(new Error('no such topic')) });
  d.accept([release(0, 0, 'a'), release(0, 1, 'b'), release(0, 2, 'b'), release(0, 3, 'c')]);
  t.ok(await until(() => log.failed !== undefined));
  t.equal(log.failed.code, 'KDP_DEAD_LETTER');
  t.ok(log.failed.parkedMs >= 80, `parked ${log.failed.parkedMs} ms`);
  t.equal(log.failed.handlerError.code, 'KDP_HANDLER_ERROR');
  t.match(log.failed.message, /dead-letter topic "dlq"/);
  t.equal(d.ledger.safeOffset('t', 0), 1, 'committed only below the parked message');
  t.notOk(log.calls.includes(2), "its key's next never ran");
});

t.test('under a transaction a retry is made in place (the transaction then aborts); a dead letter waits for the message to be read again', async (t) => {
  const attemptsSeen = [];
  const writes = [];
  const { d, log } = harness({
    transactional: true, retries: 1, backoff: 1, poison: new Set([0]),
    onFailure: (m, e, attempts) => {
      attemptsSeen.push(attempts);
      return attempts < 2 ? 'retry' : 'deadLetter';
    },
    write: (messages) => {
      writes.push(messages[0].offset);
      return Promise.resolve();
    },
  });
  d.accept([release(0, 0, 'a'), release(0, 1, 'a')]);
  t.ok(await until(() => log.errors.length === 2), 'retried in place, within the transaction it failed in');
  await tick(30);
  t.same(attemptsSeen, [1, 2]);
  t.same(writes, [], 'not written in the doomed transaction');
  t.equal(d.inFlight, 0, 'a call waiting to be read again: not under way (the barrier does not wait for it)');
  // The abort: every partition read again (Assignment.rewind(): drop, forget, then the messages again).
  d.drop([{ topic: 't', partition: 0 }]);
  d.forget([{ topic: 't', partition: 0 }]);
  d.assign([{ topic: 't', partition: 0 }]);
  d.accept([release(0, 0, 'a'), release(0, 1, 'a')]);
  t.ok(await until(() => log.ends.includes(1)));
  t.same(writes, [0], 'read again: written at once, the handler not called');
  t.same(log.calls.filter((o) => o === 0).length, 2);
  t.same(log.ends, ['dlq:0', 1], 'then its key went on');
});

t.test('under a transaction a retry resting for its backoff counts as under way (the barrier waits for it, as before)', async (t) => {
  const { d, log } = harness({ transactional: true, retries: 2, backoff: 200, poison: new Set([0]) });
  d.accept([release(0, 0, 'a')]);
  t.ok(await until(() => log.errors.length === 1));
  t.equal(d.inFlight, 1, 'its rest is under way');
  d.halt();
  t.equal(d.inFlight, 0);
});

t.test('halt() ends resting calls (not waited for by stop): their messages stay unhandled', async (t) => {
  const { d, log } = harness({ retries: 3, backoff: 10_000, poison: new Set([0]), write: () => Promise.resolve() });
  d.accept([release(0, 0, 'a'), release(0, 1, 'b')]);
  t.ok(await until(() => log.ends.includes(1) && log.errors.length === 1));
  const since = Date.now();
  await d.drain(5000, () => false);
  t.ok(Date.now() - since < 1000, 'drain() does not wait for the resting call');
  d.halt();
  t.equal(d.inFlight, 0);
  t.notOk(d.busy, 'nothing left');
  t.equal(d.ledger.safeOffset('t', 0), 0, 'its message unhandled');
});
