'use strict';
// The broker suite's agreement, exactly-once and order tests run again with Confluent's
// @confluentinc/kafka-javascript as the client library (KDP_TEST_CLIENT=confluent, read by
// test/lib/clients.js): DynamicProducer, DynamicConsumer, the topic's admin and the consumer
// that reads it back are all Confluent's. Each file runs in its own process, where
// node-rdkafka cannot be required (test/lib/without-node-rdkafka.js, preloaded): the two
// clients would share one librdkafka in one process. The same assertions hold for both.
//
// Needs KAFKA_BROKERS (npm run test:kafka), and Confluent's client installed (an optional peer
// dependency `npm install` does not add): skipped, saying how to install it, when it is not.

const t = require('tap');
const path = require('node:path');
const K = require('./lib/kafka');
const { confluentInstalled, CONFLUENT_MISSING } = require('../lib/clients');

const FILES = [
  'test/kafka/java-agreement.test.js',
  'test/kafka/exactly-once.test.js',
  'test/kafka/consumer-order.test.js',
];

if (!K.brokers()) t.plan(0, K.needsCluster().skip);
else if (!confluentInstalled()) t.plan(0, CONFLUENT_MISSING);
else {
  for (const file of FILES) {
    t.spawn(process.execPath, ['--require', path.join(__dirname, '..', 'lib', 'without-node-rdkafka.js'), path.join(K.ROOT, file)], {
      cwd: K.ROOT,
      env: { ...process.env, KDP_TEST_CLIENT: 'confluent' },
    }, `${file} with @confluentinc/kafka-javascript`);
  }
}
