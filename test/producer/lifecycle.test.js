'use strict';
// DynamicProducer's lifecycle (src/core/lifecycle.ts) on a mock cluster: connect() calls while
// one is under way share it, disconnect() during a connect waits for it and then disconnects
// the client, disconnect() stops for good whether connected or not, one disconnect under way
// is shared, and what produce(), send(), sendBatch() and connect() say in each phase.
const t = require('tap');
const { DynamicProducer } = require('../..');

const make = () => new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0 });

/** The StateError message of produce(), or null. */
function refusal(p) {
  try {
    p.produce('lc', 'v', 'k');
  } catch (err) {
    return `${err.code}: ${err.message}`;
  }
  return null;
}

t.test('connect() calls while one is under way share it; a connected producer connects again without a new connect', async (t) => {
  const p = make();
  t.teardown(() => p.disconnect());
  let ready = 0;
  p.on('ready', () => ready++);
  const first = p.connect(10000);
  const second = p.connect(10000);
  t.equal(refusal(p), 'KDP_STATE: connect() first', 'produce() while connecting');
  await t.rejects(p.send('lc', 'v', 'k'), { code: 'KDP_STATE', message: 'connect() first' }, 'send() while connecting');
  await Promise.all([first, second]);
  t.equal(ready, 2, "each connect() emits 'ready'");
  await p.connect(10000);
  t.equal(ready, 3, 'connect() on a connected producer resolves');
  const report = await p.send('lc', 'v', 'k');
  t.equal(report.topic, 'lc', 'and it sends');
});

t.test('disconnect(): one under way shared, for good; what the send path says while and after', async (t) => {
  const p = make();
  await p.connect(10000);
  const first = p.disconnect(10000);
  const second = p.disconnect(10000);
  t.equal(second, first, "a second call gets the first call's promise");
  t.equal(refusal(p), 'KDP_STATE: this producer is disconnecting', 'produce() while disconnecting');
  await t.rejects(p.send('lc', 'v', 'k'), { code: 'KDP_STATE', message: 'this producer is disconnecting' }, 'send() while disconnecting');
  await t.rejects(p.sendBatch('lc', [{ value: 'v' }]), { code: 'KDP_STATE', message: 'this producer is disconnecting' }, 'sendBatch() while disconnecting');
  await t.rejects(p.connect(), { code: 'KDP_STATE', message: 'this producer was disconnected' }, 'connect() while disconnecting');
  await first;
  t.equal(refusal(p), 'KDP_STATE: this producer was disconnected', 'produce() after');
  await t.rejects(p.send('lc', 'v', 'k'), { code: 'KDP_STATE', message: 'this producer was disconnected' }, 'send() after');
  await t.rejects(p.connect(), { code: 'KDP_STATE', message: 'this producer was disconnected' }, 'connect() after');
  await t.resolves(p.disconnect(), 'disconnect() after resolves');
});

t.test('disconnect() during a connect waits for it, then disconnects the client', async (t) => {
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0 }, {}, { engine: 'client' });
  const connecting = p.connect(10000);
  const closing = p.disconnect(10000);
  t.equal(refusal(p), 'KDP_STATE: connect() first', 'produce() while the connect is under way');
  await t.resolves(connecting, 'the connect resolves');
  await t.resolves(closing, 'the disconnect resolves');
  t.notOk(p.client.isConnected(), 'the client is disconnected');
  t.equal(refusal(p), 'KDP_STATE: this producer was disconnected', 'the producer is closed');
});

t.test('disconnect() of a producer never connected closes it for good', async (t) => {
  const p = make();
  await t.resolves(p.disconnect(1000));
  t.equal(refusal(p), 'KDP_STATE: this producer was disconnected', 'produce() after');
  await t.rejects(p.connect(), { code: 'KDP_STATE', message: 'this producer was disconnected' }, 'connect() after');
});
