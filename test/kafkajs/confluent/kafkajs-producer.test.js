'use strict';
// wrapKafkaJsProducer(): Confluent's KafkaJS-compatible producer with the partition of each
// message chosen by a DynamicPartitioner, against librdkafka's mock cluster; the topic read
// back with Confluent's own KafkaConsumer (an independent check of where messages landed).
// The cases are in cases/kafkajs-producer.js: they run when Confluent's client is installed (an optional
// peer dependency `npm install` does not add), and are skipped, saying how to install it, when not.
const t = require('tap');
const { confluentInstalled, CONFLUENT_MISSING } = require('../../lib/clients');

if (confluentInstalled()) require('./cases/kafkajs-producer');
else t.plan(0, CONFLUENT_MISSING);
