'use strict';
// kdp simulate, run as a user runs it: the bin of the package.
const t = require('tap');
const { spawnSync } = require('node:child_process');
const { readFileSync, mkdtempSync } = require('node:fs');
const { join } = require('node:path');
const os = require('node:os');
const { partitionForKeys } = require('../..');

const CLI = join(__dirname, '..', '..', 'build', 'tools', 'cli.js');
const kdp = (...args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 120000 });

t.test('--help lists the workloads and the options with their defaults', async (t) => {
  const r = kdp('simulate', '--help');
  t.equal(r.status, 0);
  for (const word of ['zipf:<s>', 'uniform', 'shift:<s>:<every>', '--json', '--svg', 'hotThreshold = 0.1']) t.match(r.stdout, word);
});

t.test('--json: static placement is Kafka\'s, dynamic is balanced, nothing cold moved', async (t) => {
  const r = kdp('simulate', '--workload', 'zipf:1.2', '--keys', '2000', '--messages', '200000', '--partitions', '12', '--window', '50000', '--json');
  t.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  t.equal(out.static.load.reduce((a, b) => a + b, 0), 200000);
  t.equal(out.dynamic.load.reduce((a, b) => a + b, 0), 200000);
  t.equal(out.static.windows.length, 4);
  // The static figure must be what Kafka's partitioner gives: recompute it from the key
  // probabilities of Zipf 1.2 over 2000 keys (independent of the simulator) within sampling noise.
  const names = Array.from({ length: 2000 }, (_, i) => `key-${i}`);
  const parts = partitionForKeys(names, 12);
  let h = 0;
  for (let r = 1; r <= 2000; r++) h += Math.pow(r, -1.2);
  const expected = new Array(12).fill(0);
  names.forEach((_, i) => { expected[parts[i]] += Math.pow(i + 1, -1.2) / h; });
  const expectedMax = Math.max(...expected) * 12;
  t.ok(Math.abs(out.static.maxOverMean - expectedMax) < 0.05, `static ${out.static.maxOverMean} vs expected ${expectedMax}`);
  t.ok(out.dynamic.maxOverMean < 1.05, `dynamic ${out.dynamic.maxOverMean}`);
  t.equal(out.dynamic.coldMessagesMoved, 0);
  t.ok(out.dynamic.keysSpread > 0 && out.dynamic.keysSpread < 200);
  t.equal(out.detection.missed, 0);
  // Spread and moved messages: counted per message, between 0 and every message, and at
  // least as many spread as moved (a moved message is one of a spread key's).
  t.ok(out.dynamic.movedMessages > 0 && out.dynamic.movedMessages <= out.dynamic.spreadMessages + out.dynamic.coldMessagesMoved);
  t.ok(out.dynamic.spreadMessages < 200000);
  t.ok(out.dynamic.offlineMinimum > 0 && out.dynamic.offlineMinimum < 1, `offline minimum ${out.dynamic.offlineMinimum}`);
});

t.test('offlineMinimum: the least traffic of whole keys that brings every partition within the tolerance', async (t) => {
  const { offlineMinimum } = require('../../build/tools/simulate');
  // 2 partitions, mean 0.5, bound 0.55 at tolerance 0.1. Partition 0: keys 0.3, 0.2, 0.15
  // (0.65: excess 0.1; the smallest single key covering it is 0.15, the largest keys 0.3:
  // 0.15 it is). Partition 1: 0.35 (within the bound).
  t.equal(offlineMinimum([0.3, 0.2, 0.15, 0.35], [0, 0, 0, 1], 2, 0.1), 0.15);
  // A key above the mean must go (split) whatever else: 0.6 on partition 0, plus 0.05 there;
  // after it the partition holds 0.05, within the bound.
  t.equal(offlineMinimum([0.6, 0.05, 0.35], [0, 0, 1], 2, 0.1), 0.6);
  // Partition 0 holds 0.8: no single key covers its excess of 0.25, so its largest keys
  // until covered (0.2 + 0.15).
  t.equal(+offlineMinimum([0.2, 0.15, 0.15, 0.15, 0.15, 0.2], [0, 0, 0, 0, 0, 1], 2, 0.1).toFixed(12), 0.35);
  t.equal(offlineMinimum([0.25, 0.25, 0.25, 0.25], [0, 1, 2, 3], 4, 0), 0, 'balanced: nothing moves');
});

t.test('the terminal report shows both columns per partition; --svg writes a chart', async (t) => {
  const svg = join(mkdtempSync(join(os.tmpdir(), 'kdp-')), 'chart.svg');
  const r = kdp('simulate', '--workload', 'shift:1.0:50000', '--keys', '5000', '--messages', '150000', '--partitions', '8', '--window', '25000', '--svg', svg);
  t.equal(r.status, 0, r.stderr);
  const rows = r.stdout.split('\n').filter((l) => /^\s+\d+\s+\S/.test(l));
  t.equal(rows.length, 8, 'one row per partition');
  t.match(r.stdout, /max\/mean static\s+\d\.\d{3}\s+dynamic \d\.\d{3}/);
  t.match(r.stdout, /window after each move of the hot set: \d/);
  t.match(r.stdout, /messages of spread keys: [\d,]+ \(\d+\.\d%\); moved off their partition: [\d,]+/);
  const text = readFileSync(svg, 'utf8');
  t.match(text, /^<svg /);
  t.equal((text.match(/<rect x=/g) || []).length, 8 * 2 + 2, 'two bars per partition and the legend');
  t.match(text, /messages of spread keys: /);
});

t.test('bad flags and options exit 2 with a one-line message and where the flags are listed, no stack', async (t) => {
  for (const [args, message] of [
    [['simulate', '--workload', 'zipf'], /workload must be one of/],
    [['simulate', '--partitions', '0'], /--partitions must be an integer in \[1, 1024\]/],
    [['simulate', '--set', 'hotThresh=1'], /options\.hotThresh is not an option/],
    [['simulate', '--set', 'sketch.width=3'], /options\.sketch\.width must be/],
    [['simulate', '--bogus'], /unknown flag --bogus/],
    [['simulate', '--keys'], /--keys needs a value/],
    [['simulate', '--json=yes'], /--json takes no value/],
    [['simulate', 'extra'], /unexpected argument "extra"/],
    [['frobnicate'], /unknown command/],
  ]) {
    const r = kdp(...args);
    t.equal(r.status, 2, args.join(' '));
    t.match(r.stderr, new RegExp(`^kdp: ${message.source}.*\n\\(kdp simulate --help lists the flags\\)\n$`), args.join(' '));
    t.equal(r.stdout, '', 'nothing run');
  }
});

t.test('sizes beyond what the simulator can hold are usage errors naming the flag and its range, before any work', async (t) => {
  // The limits are the documented ones: 10^7 keys, 10^9 messages, 10^5 windows, partitions up
  // to maxPartitions (1024 by default), a 32-bit seed.
  for (const [args, message] of [
    [['--keys', '1e9'], /--keys must be an integer in \[1, 10000000\], got "1e9"/],
    [['--keys', '10000001'], /--keys must be an integer in \[1, 10000000\]/],
    [['--messages', '1000000001'], /--messages must be an integer in \[1, 1000000000\]/],
    [['--partitions', '1025'], /--partitions must be an integer in \[1, 1024\].*maxPartitions/],
    [['--partitions', '70', '--set', 'maxPartitions=64'], /--partitions must be an integer in \[1, 64\]/],
    [['--messages', '1000000', '--window', '9'], /--window must be an integer in \[10, 1000000000\].*100000 windows/],
    [['--seed', '4294967296'], /--seed must be an integer in \[0, 4294967295\]/],
  ]) {
    const r = kdp('simulate', ...args);
    t.equal(r.status, 2, args.join(' '));
    t.match(r.stderr, message, args.join(' '));
    t.match(r.stderr, /\(kdp simulate --help lists the flags\)/);
    t.equal(r.stdout, '', 'nothing simulated');
  }
  // The bounds are inclusive and maxPartitions can be raised.
  const r = kdp('simulate', '--keys', '50', '--messages', '1000', '--window', '1', '--partitions', '2000', '--set', 'maxPartitions=2048', '--json');
  t.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  t.equal(out.static.load.length, 2000);
  t.equal(out.static.windows.length, 1000);
});

t.test('--svg: an unwritable path fails before simulating; a failed write is one line, exit 1', async (t) => {
  for (const [file, why] of [
    ['/nonexistent/x.svg', /directory \/nonexistent does not exist/],
    [os.tmpdir(), /it is a directory/],
  ]) {
    const r = kdp('simulate', '--messages', '1000000000', '--svg', file);
    t.equal(r.status, 1, file);
    t.equal(r.stdout, '', 'nothing simulated');
    t.match(r.stderr, new RegExp(`^kdp: cannot write ${file.replace(/[/\\.]/g, '\\$&')}: `));
    t.match(r.stderr, why);
    t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
  // /dev/full takes the checks and fails the write (ENOSPC): the report is printed, then the error.
  const r = kdp('simulate', '--keys', '100', '--messages', '1000', '--svg', '/dev/full');
  t.equal(r.status, 1);
  t.match(r.stdout, /max\/mean static/);
  t.match(r.stderr, /^kdp: cannot write \/dev\/full: .*ENOSPC/);
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
}, { skip: process.platform === 'win32' && 'POSIX paths' });

t.test('--topics N: the simulated topic balances as well with other topics\' traffic; a bad count is a usage error', async (t) => {
  const args = ['simulate', '--workload', 'zipf:1.0', '--keys', '5000', '--messages', '60000', '--partitions', '12', '--window', '20000', '--json'];
  const alone = kdp(...args);
  const crowded = kdp(...args, '--topics', '17');
  t.equal(alone.status, 0, alone.stderr);
  t.equal(crowded.status, 0, crowded.stderr);
  const a = JSON.parse(alone.stdout);
  const c = JSON.parse(crowded.stdout);
  t.equal(c.settings.topics, 17, 'the setting is reported');
  t.equal(c.dynamic.load.reduce((x, y) => x + y, 0), 60000, "the figures are the simulated topic's messages");
  t.ok(c.static.maxOverMeanAfterWarmup > c.dynamic.maxOverMeanAfterWarmup + 0.1, `premise: Kafka's placement is unbalanced (${c.static.maxOverMeanAfterWarmup.toFixed(3)})`);
  t.ok(Math.abs(c.dynamic.maxOverMeanAfterWarmup - a.dynamic.maxOverMeanAfterWarmup) < 0.05,
    `balanced as well with 16 other topics (${c.dynamic.maxOverMeanAfterWarmup.toFixed(3)} vs ${a.dynamic.maxOverMeanAfterWarmup.toFixed(3)} alone)`);
  const bad = kdp('simulate', '--topics', '0');
  t.equal(bad.status, 2);
  t.match(bad.stderr, /--topics must be an integer in \[1, 100000\]/);
});
