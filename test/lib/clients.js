'use strict';
// The client library the mock-cluster tests drive: node-rdkafka by default, Confluent's
// @confluentinc/kafka-javascript when KDP_TEST_CLIENT=confluent (test/kafkajs/confluent/matrix.test.js
// runs the main producer and consumer tests that way, each in its own process, so that one
// process never loads both: they would share one librdkafka).

const PACKAGES = { 'node-rdkafka': 'node-rdkafka', confluent: '@confluentinc/kafka-javascript' };

/** 'node-rdkafka' or 'confluent'. */
function clientName() {
  const name = process.env.KDP_TEST_CLIENT || 'node-rdkafka';
  if (!Object.hasOwn(PACKAGES, name)) throw new Error(`KDP_TEST_CLIENT=${name}: expected one of ${Object.keys(PACKAGES).join(', ')}`);
  return name;
}

/** The selected client library (required on first call). */
function kafka() {
  return require(PACKAGES[clientName()]);
}

/** The options that make DynamicProducer, DynamicConsumer and LagMonitor use it ({} for node-rdkafka, their default). */
function clientOptions() {
  return clientName() === 'node-rdkafka' ? {} : { kafka: kafka() };
}

/** Whether Confluent's client is installed (it is an optional peer dependency, not installed by `npm install`). */
function confluentInstalled() {
  try {
    require.resolve(PACKAGES.confluent);
    return true;
  } catch {
    return false;
  }
}

/** Why the tests of Confluent's client are skipped when it is not installed. */
const CONFLUENT_MISSING = `${PACKAGES.confluent} is not installed (an optional peer dependency): bash scripts/install-confluent.sh`;

module.exports = { PACKAGES, clientName, kafka, clientOptions, confluentInstalled, CONFLUENT_MISSING };
