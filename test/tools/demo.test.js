'use strict';
// npm run demo / npm run demo:consumer, run as a user runs them (build/tools/demo.js,
// build/tools/demo-consumer.js): bad command lines, and output piped to a file.
const t = require('tap');
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

const BUILD = join(__dirname, '..', '..', 'build', 'tools');
const run = (script, ...args) => spawnSync(process.execPath, [join(BUILD, script), ...args], { encoding: 'utf8', timeout: 60000 });

for (const [script, usage] of [['demo.js', 'npm run demo --'], ['demo-consumer.js', 'npm run demo:consumer --']]) {
  t.test(`${script}: a bad command line is "demo: <message>" and where the flags are listed, exit code 2, without a stack`, async (t) => {
    for (const [args, message] of [
      [['--bogus'], /^demo: unknown flag --bogus\n/],
      [['--rate', 'abc'], /^demo: --rate must be a number in \[\d+, \d+\], got "abc"\n/],
      [['--seconds', '1'], /^demo: --seconds must be a number in \[\d+, \d+\], got "1"\n/],
      [['--brokers'], /^demo: --brokers needs a value\n/],
      [['--brokers', ''], /^demo: --brokers needs a value \(host:port,\.\.\.\)\n/],
      [['positional'], /^demo: unexpected argument "positional" \(flags only\)\n/],
      // The mock cluster creates topics with its own partition count (4): --partitions would be ignored.
      [['--partitions', '8'], /^demo: --partitions needs --brokers \(the mock cluster auto-creates the topics? with 4 partitions\)\n/],
      [['--brokers', 'localhost:1', '--partitions', '8.5'], /^demo: --partitions must be an integer in \[\d+, \d+\], got "8\.5"\n/],
    ]) {
      const r = run(script, ...args);
      t.equal(r.status, 2, args.join(' '));
      t.match(r.stderr, message, args.join(' '));
      t.equal(r.stderr.split('\n')[1], `(${usage} --help lists the flags)`);
      t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
      t.equal(r.stdout, '', 'nothing run');
    }
  });

  t.test(`${script}: --help prints the usage, the description and the flags, exit code 0`, async (t) => {
    const r = run(script, '--help');
    t.equal(r.status, 0);
    t.equal(r.stdout.split('\n')[0], `usage: ${usage} [flags]`);
    t.match(r.stdout, /librdkafka's in-process mock cluster/, 'the description');
    t.match(r.stdout, /^ {2}--partitions N +partitions [\s\S]*?; default \d+\)$/m, 'a flag, its help, range and default');
    t.match(r.stdout, /piped/, 'the notes');
  });
}

t.test('demo.js piped: no screen redraws, the summary once', async (t) => {
  const r = run('demo.js', '--seconds', '3', '--rate', '1000');
  t.equal(r.status, 0, r.stderr);
  t.notMatch(r.stdout, /\x1b\[/, 'no terminal control sequences');
  t.notMatch(r.stdout, /partition\s+static: where Kafka/, 'no per-partition screen');
  t.equal(r.stdout.match(/^done: produced \d+, delivered \d+, failed 0$/gm)?.length, 1, 'one summary');
  t.equal(r.stdout.match(/hottest partition \/ mean over the run/g)?.length, 1);
  t.match(r.stdout, /^kafka-dynamic-partitioner demo — librdkafka mock cluster, topic \S+, 4 partitions, 1000 msg\/s, 3 s$/m);
});
