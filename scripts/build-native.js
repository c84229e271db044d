'use strict';
// npm's install step for the native engine (native/): node-gyp-build loads a build that is
// there, or builds one with node-gyp (against the Node headers npm_config_nodedir names, as
// node-rdkafka's build is). A failed build leaves the package working on the client library's
// produce() (engine 'auto'); KDP_NATIVE_REQUIRED=1 makes it fail the install instead (CI).

const { spawnSync } = require('node:child_process');
const path = require('node:path');

const native = path.join(__dirname, '..', 'native');
const bin = require.resolve('node-gyp-build/bin.js');
const run = spawnSync(process.execPath, [bin], { cwd: native, stdio: 'inherit' });
if (run.status !== 0) {
  const required = process.env.KDP_NATIVE_REQUIRED === '1';
  console.error(`kafka-dynamic-partitioner: the native engine did not build (node-gyp exit ${run.status})` +
    (required ? '' : ': producers use the client library\'s produce() instead (engine \'auto\')'));
  process.exit(required ? 1 : 0);
}
