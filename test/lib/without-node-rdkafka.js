'use strict';
// Preloaded (node --require) in the runs of test/kafkajs/confluent/matrix.test.js: node-rdkafka cannot
// be required, so a run that passes used Confluent's client throughout.
const Module = require('node:module');

const load = Module._load;
Module._load = function loadWithoutNodeRdkafka(request, ...rest) {
  if (request === 'node-rdkafka') throw new Error("node-rdkafka required in a run on Confluent's client");
  return load.call(this, request, ...rest);
};
