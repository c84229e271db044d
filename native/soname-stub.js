'use strict';
// Run by binding.gyp when it is read (node-gyp configure): makes build/soname/librdkafka.so.1,
// an empty shared library whose only content is the soname librdkafka.so.1, and prints its
// folder. The addon is linked against it, not against node-rdkafka's built library, so that it
// builds as soon as node-rdkafka's sources are unpacked: npm runs the install steps of an
// application's packages in one queue, by name at equal depth, so this package's build comes
// before node-rdkafka's. The link records the needed soname (the symbols stay undefined until
// load, where -z now resolves them all at once); at load time the dynamic loader matches it to
// the librdkafka.so.1 already in the process, node-rdkafka's (docs/native.md).

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const dir = path.join(__dirname, 'build', 'soname');
const lib = path.join(dir, 'librdkafka.so.1');
if (!fs.existsSync(lib)) {
  fs.mkdirSync(dir, { recursive: true });
  const source = path.join(dir, 'empty.c');
  fs.writeFileSync(source, '/* nothing: only the soname matters */\n');
  execFileSync(process.env.CC || 'cc', ['-shared', '-fPIC', '-nostdlib', '-Wl,-soname,librdkafka.so.1', '-o', lib, source], { stdio: 'inherit' });
}
process.stdout.write(dir);
