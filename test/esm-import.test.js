'use strict';
// `import kdp from 'kafka-dynamic-partitioner'` and the named imports both work at run time and
// type-check (build/index.mjs and build/index.d.mts, written by scripts/esm-wrapper.js).
const t = require('tap');
const { execFileSync } = require('node:child_process');
const { join } = require('node:path');

const root = join(__dirname, '..');

t.test('default and named imports type-check', async (t) => {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const args = [tsc, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', join(__dirname, 'fixtures', 'esm-import.mts')];
  let output = '';
  try {
    execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  } catch (err) {
    output = `${err.stdout}${err.stderr}`;
  }
  t.equal(output, '', 'tsc reports nothing');
});

t.test('default and named imports at run time', async (t) => {
  const code = "import kdp, { partitionForKey } from 'kafka-dynamic-partitioner'; console.log(kdp.partitionForKey('21', 12), partitionForKey('21', 12), typeof kdp.DynamicProducer);";
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' }).trim().split(' ');
  // murmur2('21') is -973932308 (Kafka's UtilsTest); toPositive → 1173551340, % 12 = 0.
  t.same(out, ['0', '0', 'function']);
});
