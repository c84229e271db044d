'use strict';
// Whether the native engine's addon is built here (native/build): the tests that need it skip without it.

const path = require('node:path');

/** True when node-gyp-build finds the addon under native/. */
function nativeBuilt() {
  try {
    require('node-gyp-build')(path.join(__dirname, '..', '..', 'native'));
    return true;
  } catch {
    return false;
  }
}

module.exports = { nativeBuilt };
