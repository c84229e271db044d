'use strict';
// npm's install step for the native engine (native/, compiled against node-rdkafka's rdkafka.h
// and linked to the librdkafka it built). Where node-rdkafka is not installed (an application
// on KafkaJS or @platformatic/kafka, or on Confluent's client alone) nothing is compiled: the
// WebAssembly core and those adapters need no native code, and the install says so in one line.
// Otherwise node-gyp-build loads a build that is there, or builds one with node-gyp (against the
// Node headers npm_config_nodedir names, as node-rdkafka's build is). A failed build leaves the
// package working on the client library's produce() (engine 'auto', which warns once at run
// time); KDP_NATIVE_REQUIRED=1 makes it fail the install instead (CI).

const { spawnSync } = require('node:child_process');
const path = require('node:path');

const native = path.join(__dirname, '..', 'native');
const REBUILD = 'npm rebuild kafka-dynamic-partitioner';
const required = process.env.KDP_NATIVE_REQUIRED === '1';

/** node-rdkafka's folder as the addon's build would find it (binding.gyp resolves it from native/), or undefined. */
function nodeRdkafka() {
  try {
    return path.dirname(require.resolve('node-rdkafka/package.json', { paths: [native] }));
  } catch {
    return undefined;
  }
}

if (nodeRdkafka() === undefined) {
  console.error('kafka-dynamic-partitioner: node-rdkafka is not installed, so the native engine is not built ' +
    '(the WebAssembly core and the KafkaJS and @platformatic/kafka adapters need none). ' +
    `To use node-rdkafka: npm install node-rdkafka, then ${REBUILD}.`);
  process.exit(required ? 1 : 0);
}

const bin = require.resolve('node-gyp-build/bin.js');
const run = spawnSync(process.execPath, [bin], { cwd: native, stdio: 'inherit' });
if (run.status !== 0) {
  console.error(`kafka-dynamic-partitioner: the native engine did not build (node-gyp exit ${run.status})` +
    (required ? '' : `: producers and consumers use the client library's produce() and consume() instead (engine 'auto'); ${REBUILD} tries again`));
  process.exit(required ? 1 : 0);
}
