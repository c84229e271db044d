'use strict';
// npm run demo / npm run demo:consumer, run as a user runs them (build/tools/demo.js,
// build/tools/demo-consumer.js): bad command lines, and output piped to a file.
const t = require('tap');
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

const BUILD = join(__dirname, '..', '..', 'build', 'tools');
const run = (script, ...args) => spawnSync(process.execPath, [join(BUILD, script), ...args], { encoding: 'utf8', timeout: 60000 });

for (const [script, usage] of [['demo.js', /^usage: npm run demo -- /m], ['demo-consumer.js', /^usage: npm run demo:consumer -- /m]]) {
  t.test(`${script}: a bad command line is "demo: <message>", the usage and exit code 2, without a stack`, async (t) => {
    for (const [args, message] of [
      [['--bogus'], /^demo: Unknown option '--bogus'/],
      [['--rate', 'abc'], /^demo: --rate must be a number in \[\d+, \d+\], got "abc"/],
      [['--seconds', '1'], /^demo: --seconds must be a number in \[\d+, \d+\], got "1"/],
      [['--brokers'], /^demo: Option '--brokers <value>' argument missing/],
      [['--brokers', ''], /^demo: --brokers needs a host:port list/],
      [['positional'], /^demo: Unexpected argument 'positional'/],
      // The mock cluster creates topics with its own partition count (4): --partitions would be ignored.
      [['--partitions', '8'], /^demo: --partitions needs --brokers \(the mock cluster auto-creates the topics? with 4 partitions\)/],
    ]) {
      const r = run(script, ...args);
      t.equal(r.status, 2, args.join(' '));
      t.match(r.stderr, message, args.join(' '));
      t.match(r.stderr, usage);
      t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
      t.equal(r.stdout, '', 'nothing run');
    }
  });

  t.test(`${script}: --help prints the usage, exit code 0`, async (t) => {
    const r = run(script, '--help');
    t.equal(r.status, 0);
    t.match(r.stdout, usage);
    t.match(r.stdout, /--partitions needs --brokers/);
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
