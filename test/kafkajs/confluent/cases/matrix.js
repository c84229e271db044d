'use strict';
// The main mock-cluster tests of the producer and the consumer, run again with Confluent's
// @confluentinc/kafka-javascript as the client library (KDP_TEST_CLIENT=confluent, read by
// test/lib/clients.js), each in its own process: the same assertions hold for both clients.
// node-rdkafka cannot be required in these runs (test/lib/without-node-rdkafka.js, preloaded).
const t = require('tap');
const path = require('node:path');

const FILES = [
  'test/producer/order-headers.test.js',
  'test/producer/delivery-exactly-once.test.js',
  'test/producer/wrap-producer.test.js',
  'test/consumer/dynamic-consumer.test.js',
];

const root = path.join(__dirname, '..', '..', '..', '..');

for (const file of FILES) {
  t.spawn(process.execPath, ['--require', path.join(__dirname, '..', '..', '..', 'lib', 'without-node-rdkafka.js'), path.join(root, file)], {
    cwd: root,
    env: { ...process.env, KDP_TEST_CLIENT: 'confluent' },
  }, `${file} with @confluentinc/kafka-javascript`);
}
