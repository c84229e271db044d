'use strict';
// Writes build/index.mjs and build/index.d.mts so that `import` gets the same named exports
// as `require` (the package is compiled to CommonJS once; the ESM entry re-exports it).
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const build = join(__dirname, '..', 'build');
const names = Object.keys(require(join(build, 'index.js'))).filter((name) => name !== 'default');
writeFileSync(
  join(build, 'index.mjs'),
  `import cjs from './index.js';\nexport const { ${names.join(', ')} } = cjs;\nexport default cjs;\n`,
);
// The default export is the whole CommonJS module, typed as its namespace.
writeFileSync(join(build, 'index.d.mts'), `import * as kdp from './index.js';\nexport * from './index.js';\nexport default kdp;\n`);
