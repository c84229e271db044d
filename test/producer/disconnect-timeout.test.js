'use strict';
// disconnect(timeoutMs) is one budget: the flush gets what is left of it, the client's own
// disconnect (which flushes again before it stops) the rest, with a small floor; nothing
// after the deadline is given a fresh timeout of its own. Calls made while a disconnect is
// under way get that disconnect's promise: none resolves before the flush is done.
const t = require('tap');
const { DynamicProducer, UndeliveredError } = require('../..');

// The slack a floor for the client's disconnect may add past the deadline.
const FLOOR_SLACK_MS = 250;

t.test('disconnect(T): the flush and the client disconnect share T; a client slow to stop does not hold it', async (t) => {
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 0 });
  await p.connect();
  // A client whose messages never get confirmed (its flush waits its whole timeout, then
  // times out) and whose destroy outlasts any budget (it answers only once this test is over).
  const client = p.client;
  const calls = [];
  const hung = [];
  const realDisconnect = client.disconnect;
  t.teardown(() => new Promise((resolve) => realDisconnect.call(client, 1000, () => resolve())).then(() => hung.forEach((cb) => cb())));
  client.flush = (timeout, cb) => {
    calls.push({ method: 'flush', at: Date.now(), timeout });
    setTimeout(() => cb(Object.assign(new Error('Local: Timed out'), { code: -185 })), timeout);
  };
  client.disconnect = (timeout, cb) => {
    calls.push({ method: 'disconnect', at: Date.now(), timeout });
    hung.push(cb);
  };
  const T = 1500;
  const started = Date.now();
  const error = await p.disconnect(T).then(() => null, (e) => e);
  const elapsed = Date.now() - started;
  t.ok(error instanceof UndeliveredError, `disconnect() rejects with UndeliveredError (got ${error && error.name}: ${error && error.message})`);
  t.same(calls.map((c) => c.method), ['flush', 'disconnect'], 'the client is flushed, then disconnected');
  t.equal(hung.length, 1, "disconnect() settled while the client's own disconnect had not called back");
  for (const c of calls) {
    const end = c.at - started + c.timeout;
    t.ok(end <= T + FLOOR_SLACK_MS, `client.${c.method}(${c.timeout}) at +${c.at - started} ms may wait until +${end} ms: within ${T} ms (+${FLOOR_SLACK_MS}); disconnect() took ${elapsed} ms`);
  }
});

t.test('a disconnect() called while one is under way returns the same promise, settled after the flush', async (t) => {
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, 'test.mock.broker.rtt': 50, log_level: 0 });
  await p.connect();
  let delivered = 0;
  p.on('delivery', (err) => { if (!err) delivered++; });
  for (let i = 0; i < 2000; i++) p.produce('dt-twice', String(i), `k${i % 37}`);
  const first = p.disconnect(10000);
  const second = p.disconnect(10000);
  t.equal(second, first, 'the second call returns the first call\'s promise');
  await second;
  t.equal(delivered, 2000, 'when the second call resolves, all 2,000 messages have their delivery report');
  await t.resolves(p.disconnect(), 'a call after it settled resolves');
});
