'use strict';
// Every benchmark and tool that reads its flags with build/tools/args (src/tools/args.ts), run
// with --help as a user runs it: exit code 0, the usage line and the description first, and
// every flag the command declares (read from the util.parseArgs call itself, by the preloaded
// lib/declared-flags.js) listed. --help ends the command before any work: no cluster, no run.
const t = require('tap');
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

const ROOT = join(__dirname, '..', '..');
const PRELOAD = join(__dirname, 'lib', 'declared-flags.js');

// [the command as run, its usage line]
const COMMANDS = [
  [['bench/hash.js'], 'node bench/hash.js'],
  [['bench/partitioner.js'], 'node bench/partitioner.js'],
  [['bench/resequencer.js'], 'node bench/resequencer.js'],
  [['bench/spread.js'], 'npm run bench:spread --'],
  [['bench/scale.js'], 'npm run bench:scale --'],
  [['bench/produce.js'], 'npm run bench:produce --'],
  [['bench/facade.js'], 'npm run bench:facade --'],
  [['bench/clients.js'], 'npm run bench:clients --'],
  [['bench/consume.js'], 'npm run bench:consume --'],
  [['bench/new-topic.js'], 'node bench/new-topic.js'],
  [['bench/soak.js'], 'npm run soak --'],
  [['build/tools/cli.js', 'simulate'], 'kdp simulate'],
  [['build/tools/demo.js'], 'npm run demo --'],
  [['build/tools/demo-consumer.js'], 'npm run demo:consumer --'],
];

for (const [command, usage] of COMMANDS) {
  t.test(`${command.join(' ')} --help`, async (t) => {
    const r = spawnSync(process.execPath, ['-r', PRELOAD, ...command, '--help'], { cwd: ROOT, encoding: 'utf8', timeout: 30000 });
    t.equal(r.status, 0, `exit code 0 ${r.stderr}`);
    const lines = r.stdout.split('\n');
    t.equal(lines[0], `usage: ${usage} [flags]`, 'the usage line');
    t.equal(lines[1], '', 'then a blank line');
    t.ok(lines[2].length > 20, `then the description: ${lines[2]}`);
    const declared = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('declared-flags '))
      .map((l) => JSON.parse(l.slice('declared-flags '.length)));
    t.equal(declared.length, 1, 'one parseArgs call: the flags read once, nothing run after --help');
    for (const name of declared[0] ?? []) {
      t.match(r.stdout, new RegExp(`^ {2}(-\\w, )?--${name}( |$)`, 'm'), `--${name} listed`);
    }
    t.equal(r.stderr.replace(/^declared-flags .*\n/gm, ''), '', 'nothing else on stderr');
  });
}

t.test('-h is --help', async (t) => {
  const r = spawnSync(process.execPath, ['bench/spread.js', '-h'], { cwd: ROOT, encoding: 'utf8', timeout: 30000 });
  t.equal(r.status, 0);
  t.match(r.stdout, /^usage: npm run bench:spread -- \[flags\]\n/);
});

t.test('internal flags (what a benchmark passes to its own child processes) are listed apart', async (t) => {
  const r = spawnSync(process.execPath, ['bench/consume.js', '--help'], { cwd: ROOT, encoding: 'utf8', timeout: 30000 });
  const [pub, internal] = r.stdout.split(/^Internal .*$/m);
  t.ok(internal, 'an internal section');
  for (const name of ['child', 'bootstrap', 'topic']) {
    t.match(internal, new RegExp(`^ {2}--${name} `, 'm'), `--${name} under it`);
    t.notMatch(pub, new RegExp(`^ {2}--${name} `, 'm'));
  }
});
