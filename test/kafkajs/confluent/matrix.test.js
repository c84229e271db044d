'use strict';
// The main mock-cluster tests of the producer and the consumer, run again with Confluent's
// @confluentinc/kafka-javascript as the client library (KDP_TEST_CLIENT=confluent, read by
// test/lib/clients.js), each in its own process: the same assertions hold for both clients.
// node-rdkafka cannot be required in these runs (test/lib/without-node-rdkafka.js, preloaded).
// The cases are in cases/matrix.js: they run when Confluent's client is installed (an optional
// peer dependency `npm install` does not add), and are skipped, saying how to install it, when not.
const t = require('tap');
const { confluentInstalled, CONFLUENT_MISSING } = require('../../lib/clients');

if (confluentInstalled()) require('./cases/matrix');
else t.plan(0, CONFLUENT_MISSING);
