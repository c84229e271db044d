'use strict';
// The group protocol a consumer asks for (src/core/group-protocol.ts), checked at construction
// without a broker: KIP-848's 'consumer' on both engines of DynamicConsumer, the settings
// librdkafka refuses under it (its words, read from librdkafka itself, and ours: what to use
// instead), a value librdkafka does not know, and wrapKafkaJsConsumer's refusal of KIP-848 for
// KafkaJS 2.x, which has no such protocol. The protocol against a real cluster:
// test/kafka/group-protocol.test.js.

const t = require('tap');
const Kafka = require('node-rdkafka');
const { Kafka: KafkaJs } = require('kafkajs');
const { DynamicConsumer, InvalidOptionError, InvalidValueError, wrapKafkaJsConsumer } = require('../..');

const BASE = { 'group.id': 'group-protocol', 'metadata.broker.list': '127.0.0.1:1', log_level: 0 };
const ENGINES = ['native', 'client'];

/** What `fn` throws (null if nothing). */
function thrown(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return null;
}

/** librdkafka's own refusal of `config` (rd_kafka_new() checks the protocol's settings: node-rdkafka's connect() fails with it). */
function librdkafkaRefusal(config) {
  const client = new Kafka.KafkaConsumer({ ...BASE, ...config }, {});
  return new Promise((resolve) => client.connect({ timeout: 2000 }, (err) => {
    if (err) resolve(err.message);
    else client.disconnect(() => resolve(null));
  }));
}

t.test("group.protocol 'consumer' (KIP-848): both engines take it, without the cooperative-sticky assignor classic groups get", async (t) => {
  for (const engine of ENGINES) {
    const c = new DynamicConsumer({ ...BASE, 'group.protocol': 'consumer' }, {}, { engine });
    t.equal(c.groupProtocol, 'consumer', engine);
    t.notOk('partition.assignment.strategy' in c.client.globalConfig, `${engine}: no assignor set (the broker assigns)`);
    const classic = new DynamicConsumer(BASE, {}, { engine });
    t.equal(classic.groupProtocol, 'classic', `${engine}: librdkafka's default`);
    t.equal(classic.client.globalConfig['partition.assignment.strategy'], 'cooperative-sticky', `${engine}: classic stays cooperative`);
    const assigned = new DynamicConsumer({ ...BASE, 'group.protocol': 'consumer', 'group.remote.assignor': 'range' }, {}, { engine });
    t.equal(assigned.client.globalConfig['group.remote.assignor'], 'range', `${engine}: group.remote.assignor passed through`);
  }
});

t.test("the settings librdkafka refuses under 'consumer': an InvalidOptionError with librdkafka's words and what takes their place", async (t) => {
  const rows = [
    // [setting, value, what our message must name instead] — librdkafka 2.12 src/rdkafka_conf.c, rd_kafka_conf_finalize()
    ['partition.assignment.strategy', 'cooperative-sticky', ["group.remote.assignor", "'uniform'", "'range'"]],
    ['session.timeout.ms', 10000, ['group.consumer.session.timeout.ms']],
    ['heartbeat.interval.ms', 1000, ['group.consumer.heartbeat.interval.ms']],
    ['group.protocol.type', 'consumer', []],
  ];
  for (const [name, value, instead] of rows) {
    const config = { 'group.protocol': 'consumer', [name]: value };
    const words = await librdkafkaRefusal(config);
    t.ok(words, `librdkafka itself refuses ${name}: ${words}`);
    for (const engine of ENGINES) {
      const err = thrown(() => new DynamicConsumer({ ...BASE, ...config }, {}, { engine }));
      t.ok(err instanceof InvalidOptionError, `${engine}, ${name}: an InvalidOptionError`);
      t.equal(err?.code, 'KDP_INVALID_OPTION');
      t.equal(err?.path, `globalConfig['${name}']`);
      // node-rdkafka's message is librdkafka's, its first letters lowered.
      t.ok(err?.message.toLowerCase().includes(words.toLowerCase().replace(/\.$/, '')), `${engine}, ${name}: carries librdkafka's words`);
      for (const w of instead) t.ok(err?.message.includes(w), `${engine}, ${name}: names ${w}`);
    }
  }
});

t.test("a group.protocol librdkafka does not know: an InvalidValueError naming both", async (t) => {
  t.throws(() => new Kafka.KafkaConsumer({ ...BASE, 'group.protocol': 'eager' }, {}), /Invalid value "eager" for configuration property "group.protocol"/,
    'librdkafka refuses it too');
  for (const engine of ENGINES) {
    for (const bad of ['eager', '', 1, true]) {
      const err = thrown(() => new DynamicConsumer({ ...BASE, 'group.protocol': bad }, {}, { engine }));
      t.ok(err instanceof InvalidValueError, `${engine}: ${JSON.stringify(bad)} is an InvalidValueError`);
      t.match(err?.message, /^globalConfig\['group\.protocol'\] must be one of 'classic', 'consumer'/);
    }
    // librdkafka reads the names whatever their case (rd_strcasecmp in rd_kafka_anyconf_set_prop0).
    t.doesNotThrow(() => new Kafka.KafkaConsumer({ ...BASE, 'group.protocol': 'CONSUMER' }, {}), 'librdkafka takes CONSUMER');
    t.equal(new DynamicConsumer({ ...BASE, 'group.protocol': 'CONSUMER' }, {}, { engine }).groupProtocol, 'consumer', `${engine}: so do we`);
  }
});

t.test("wrapKafkaJsConsumer: KIP-848 asked of KafkaJS 2.x's consumer is refused, with what to use instead", async (t) => {
  // KafkaJS 2.2.4 knows API keys 0..46 only: no ConsumerGroupHeartbeat (68), the request of KIP-848's protocol.
  const apiKeys = require('kafkajs/src/protocol/requests/apiKeys');
  t.equal(apiKeys.ConsumerGroupHeartbeat, undefined, 'KafkaJS has no ConsumerGroupHeartbeat');
  t.ok(Math.max(...Object.values(apiKeys)) < 68);
  const kafka = new KafkaJs({ clientId: 'group-protocol', brokers: ['127.0.0.1:1'], logLevel: 0 });
  const consumer = kafka.consumer({ groupId: 'g' });
  const admin = kafka.admin();
  const err = thrown(() => wrapKafkaJsConsumer(consumer, { admin, groupProtocol: 'consumer' }));
  t.ok(err instanceof InvalidOptionError, 'an InvalidOptionError');
  t.equal(err?.path, 'options.groupProtocol');
  t.match(err?.message, /KafkaJS 2\.x's consumer has no such protocol/);
  t.match(err?.message, /DynamicConsumer or Confluent's KafkaJS-compatible consumer/);
  t.doesNotThrow(() => wrapKafkaJsConsumer(consumer, { admin, groupProtocol: 'classic' }), "'classic' is what it joins with");
  t.throws(() => wrapKafkaJsConsumer(consumer, { admin, groupProtocol: 'eager' }), InvalidOptionError, 'a value of neither');
});
