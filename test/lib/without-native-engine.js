'use strict';
// Preloaded (node --require) by test/native/missing.test.js: node-gyp-build finds no
// build of the native engine, as in an application installed before node-rdkafka or without a
// C toolchain.
const Module = require('node:module');

const load = Module._load;
Module._load = function loadWithoutNativeEngine(request, ...rest) {
  if (request === 'node-gyp-build') return () => { throw new Error('No native build was found for the test'); };
  return load.call(this, request, ...rest);
};
