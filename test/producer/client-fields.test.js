'use strict';
// The node-rdkafka private fields DynamicProducer reads (src/producer/hand-over/client-fields.ts), checked on the
// installed node-rdkafka itself: this fails when an upgrade renames or reshapes one of them.

const t = require('tap');
const Kafka = require('node-rdkafka');
const { DynamicProducer } = require('../../build');
const { nativeBinding, deliversReports, isHighLevel } = require('../../build/producer/hand-over/client-fields');

t.test('Producer: _client is the native binding with produce(); _cb_configs.event.delivery_cb follows dr_cb / dr_msg_cb', async (t) => {
  const withReports = new Kafka.Producer({ 'metadata.broker.list': '127.0.0.1:1', dr_cb: true });
  const withMsgReports = new Kafka.Producer({ 'metadata.broker.list': '127.0.0.1:1', dr_msg_cb: true });
  const without = new Kafka.Producer({ 'metadata.broker.list': '127.0.0.1:1' });
  t.type(withReports._client, 'object', '_client is there');
  t.type(withReports._client.produce, 'function', '_client.produce is a function');
  t.equal(nativeBinding(withReports), withReports._client);
  t.type(withReports._cb_configs, 'object', '_cb_configs is there');
  t.type(withReports._cb_configs.event.delivery_cb, 'function', 'dr_cb sets event.delivery_cb');
  t.equal(deliversReports(withReports), true);
  t.equal(deliversReports(withMsgReports), true);
  t.equal(without._cb_configs.event.delivery_cb, undefined, 'without dr_cb there is no delivery_cb');
  t.equal(deliversReports(without), false);
  t.equal(isHighLevel(withReports), false, 'a plain Producer is not high level');
});

t.test('HighLevelProducer: _oldProduce is Producer.prototype.produce and _hl an object', async (t) => {
  const hl = new Kafka.HighLevelProducer({ 'metadata.broker.list': '127.0.0.1:1' });
  t.equal(hl._oldProduce, Kafka.Producer.prototype.produce, '_oldProduce is the plain produce()');
  t.type(hl._hl, 'object', '_hl is there');
  t.not(hl._hl, null);
  t.equal(isHighLevel(hl), true);
});

t.test('a producer-like object of another shape: no binding, reports assumed, not high level', async (t) => {
  const other = { produce() {}, on() {}, isConnected: () => true };
  t.equal(nativeBinding(other), undefined);
  t.equal(deliversReports(other), true);
  t.equal(isHighLevel(other), false);
  t.equal(nativeBinding(null), undefined);
});

t.test('DynamicProducer on the mock cluster, engine \'client\', produces through node-rdkafka\'s native binding', async (t) => {
  const producer = new DynamicProducer({ 'test.mock.num.brokers': 1, 'log_level': 0 }, {}, { engine: 'client' });
  await producer.connect();
  t.teardown(() => producer.disconnect(5000));
  t.equal(producer.native, nativeBinding(producer.client), 'the binding found at connect()');
  t.ok(producer.native, 'and it is there');
  const report = await producer.send('kdp-client-fields', Buffer.from('v'), 'k');
  t.type(report.offset, 'number');
});
