'use strict';
// wrapKafkaJsConsumer(): Confluent's KafkaJS-compatible consumer with the Resequencer between it
// and the application's eachMessage, against librdkafka's mock cluster, fed by producers wrapped
// with wrapKafkaJsProducer. The cases (cases/kafkajs-consumer.js) run in a child process that
// cannot require node-rdkafka (test/lib/without-node-rdkafka.js, preloaded): one librdkafka, the
// one Confluent's client ships. They run when Confluent's client is installed (an optional peer
// dependency `npm install` does not add), and are skipped, saying how to install it, when not.
const t = require('tap');
const path = require('node:path');
const { confluentInstalled, CONFLUENT_MISSING } = require('../../lib/clients');

const root = path.join(__dirname, '..', '..', '..');

if (!confluentInstalled()) {
  t.plan(0, CONFLUENT_MISSING);
} else {
  t.spawn(process.execPath, ['--require', path.join(root, 'test', 'lib', 'without-node-rdkafka.js'), path.join(__dirname, 'cases', 'kafkajs-consumer.js')], {
    cwd: root,
    env: { ...process.env, KDP_TEST_CLIENT: 'confluent' },
    timeout: 300_000,
  }, "cases/kafkajs-consumer.js, node-rdkafka refused");
}
