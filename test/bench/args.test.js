'use strict';
// The command-line parser of kdp, the demos and the benchmarks (src/tools/args.ts, built):
// defaults, numbers and their ranges, the errors of a bad command line, --help.
const t = require('tap');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { parseFlags, helpText, fileHeader, UsageError, usageErrorText } = require('../../build/tools/args');

const ARGS = path.join(__dirname, '..', '..', 'build', 'tools', 'args.js');

const FLAGS = {
  rounds: { type: 'number', integer: true, min: 1, default: 3, help: 'rounds' },
  ratio: { type: 'number', min: 0, max: 1, default: 0.5, help: 'a share' },
  seed: { type: 'number', integer: true, min: 0, max: 10, help: 'a seed, none by default' },
  brokers: { type: 'string', arg: 'LIST', help: 'a real cluster' },
  client: { type: 'string', choices: ['a', 'b'], default: 'a', help: 'which client' },
  set: { type: 'string', multiple: true, arg: 'K=V', help: 'an option' },
  json: { type: 'boolean', help: 'print JSON' },
  child: { type: 'string', internal: true, help: 'a row, for the parent' },
};
const COMMAND = {
  name: 'bench/x.js',
  usage: 'node bench/x.js',
  description: 'Measures x against y.',
  flags: FLAGS,
  notes: 'The last line is the verdict.',
};
const parse = (...argv) => parseFlags(COMMAND, argv);
/** The UsageError message of parsing `argv`, or undefined when it parses. */
const error = (argv, command = COMMAND) => {
  try {
    parseFlags(command, argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    return err.message;
  }
  return undefined;
};

t.test('without flags: every declared flag, at its default (booleans false, repeatable ones empty, the rest undefined)', async (t) => {
  t.same(parse(), { rounds: 3, ratio: 0.5, seed: undefined, brokers: undefined, client: 'a', set: [], json: false, child: undefined });
  t.same(Object.keys(parse()), Object.keys(FLAGS), 'in the order declared');
});

t.test('flags as --name=value and --name value; numbers read with Number(); the last of a repeated flag wins', async (t) => {
  const v = parse('--rounds=7', '--ratio', '0.25', '--brokers=h:1,h:2', '--json', '--set', 'a=1', '--set=b=2', '--seed', '1e1');
  t.same(v, { rounds: 7, ratio: 0.25, seed: 10, brokers: 'h:1,h:2', client: 'a', set: ['a=1', 'b=2'], json: true, child: undefined });
  t.equal(parse('--rounds=2', '--rounds=5').rounds, 5, "a child process given the parent's flags and then its own");
  t.equal(parse('--brokers=a=b').brokers, 'a=b', 'a value may hold =');
  t.equal(parse('--ratio=-0', '--seed=0').seed, 0, 'the bounds are inclusive');
  t.equal(parse('--ratio=1').ratio, 1);
});

t.test('a number that is not one, not an integer or out of range: the flag, what it accepts and what was given', async (t) => {
  for (const [argv, message] of [
    [['--rounds=x'], '--rounds must be an integer >= 1, got "x"'],
    [['--rounds=2.5'], '--rounds must be an integer >= 1, got "2.5"'],
    [['--rounds=0'], '--rounds must be an integer >= 1, got "0"'],
    [['--rounds= '], '--rounds must be an integer >= 1, got " "'],
    [['--rounds=Infinity'], '--rounds must be an integer >= 1, got "Infinity"'],
    [['--ratio=1.01'], '--ratio must be a number in [0, 1], got "1.01"'],
    [['--ratio=NaN'], '--ratio must be a number in [0, 1], got "NaN"'],
    [['--seed=11'], '--seed must be an integer in [0, 10], got "11"'],
  ]) {
    t.equal(error(argv), message, argv.join(' '));
  }
  const upTo = {
    name: 'x',
    usage: 'x',
    description: 'x',
    flags: { n: { type: 'number', max: 5, help: 'n' }, m: { type: 'number', help: 'm' } },
  };
  t.equal(error(['--n=6'], upTo), '--n must be a number <= 5, got "6"');
  t.equal(error(['--m=a'], upTo), '--m must be a number, got "a"');
});

t.test('strings: an empty value, a value not among the choices, a parse that throws', async (t) => {
  t.equal(error(['--brokers=']), '--brokers needs a value (LIST)');
  t.equal(error(['--client=c']), '--client must be one of a, b, got "c"');
  t.equal(error(['--set=']), '--set needs a value (K=V)');
  const json = { name: 'x', usage: 'x', description: 'x', flags: { options: { type: 'string', parse: JSON.parse, help: 'JSON' } } };
  t.same(parseFlags(json, ['--options={"a":1}']).options, { a: 1 });
  t.match(error(['--options={a'], json), /^--options: .*JSON.*, got "\{a"$/);
});

t.test('the command line itself: an unknown flag, a missing value, a value to a boolean, a positional argument', async (t) => {
  for (const [argv, message] of [
    [['--bogus'], 'unknown flag --bogus'],
    [['-x'], 'unknown flag -x'],
    [['--rounds'], '--rounds needs a value'],
    [['--brokers', '--json'], "--brokers needs a value (one starting with '-' goes as --brokers=-...)"],
    [['--json=1'], '--json takes no value'],
    [['extra'], 'unexpected argument "extra" (flags only)'],
  ]) {
    t.equal(error(argv), message, argv.join(' '));
  }
  t.equal(new UsageError('m').code, 'ERR_USAGE');
  t.equal(
    usageErrorText(COMMAND, new UsageError('unknown flag --bogus')),
    'bench/x.js: unknown flag --bogus\n(node bench/x.js --help lists the flags)\n',
  );
});

t.test('computed defaults and bounds see the other flags, whatever the order they are declared in', async (t) => {
  const command = {
    name: 'x',
    usage: 'x',
    description: 'x',
    flags: {
      window: {
        type: 'number',
        integer: true,
        min: 1,
        max: (v) => Math.floor(v.messages / 2),
        default: (v) => Math.min(100, v.messages / 2),
        why: (v) => ` (two windows of ${v.messages} messages)`,
        help: 'window',
      },
      concurrency: { type: 'number', default: (v) => (v['handler-ms'] > 0 ? 64 : 1), help: 'calls at once' },
      messages: { type: 'number', integer: true, min: 2, default: 1000, help: 'messages' },
      'handler-ms': { type: 'number', min: 0, default: 0, help: 'wait' },
    },
  };
  t.same(parseFlags(command, []), { window: 100, concurrency: 1, messages: 1000, 'handler-ms': 0 });
  t.same(parseFlags(command, ['--messages=10', '--handler-ms=2']), { window: 5, concurrency: 64, messages: 10, 'handler-ms': 2 });
  t.equal(error(['--messages=10', '--window=6'], command), '--window must be an integer in [1, 5] (two windows of 10 messages), got "6"');
  t.equal(error(['--window=x'], command), '--window must be an integer in [1, 500], got "x"', 'why, only for a number out of range');
});

t.test('a flag that needs another', async (t) => {
  const command = {
    name: 'x',
    usage: 'x',
    description: 'x',
    flags: {
      brokers: { type: 'string', help: 'cluster' },
      partitions: { type: 'number', default: 4, needs: { flag: 'brokers', why: 'the mock cluster makes 4' }, help: 'partitions' },
    },
  };
  t.equal(error(['--partitions=8'], command), '--partitions needs --brokers (the mock cluster makes 4)');
  t.equal(parseFlags(command, ['--partitions=8', '--brokers=h:1']).partitions, 8);
  t.equal(parseFlags(command, []).partitions, 4, 'the default goes without it');
});

t.test('--help and -h: null from parseFlags, whatever else is given; helpText lists every flag with its help and default', async (t) => {
  t.equal(parse('--help'), null);
  t.equal(parse('-h', '--rounds=0'), null, 'before the values are checked');
  const text = helpText(COMMAND);
  const lines = text.split('\n');
  t.equal(lines[0], 'usage: node bench/x.js [flags]');
  t.equal(lines[2], 'Measures x against y.');
  t.match(text, /^ {2}--rounds N +rounds \(an integer >= 1; default 3\)$/m);
  t.match(text, /^ {2}--ratio X +a share \(a number in \[0, 1\]; default 0\.5\)$/m);
  t.match(text, /^ {2}--seed N +a seed, none by default \(an integer in \[0, 10\]\)$/m);
  t.match(text, /^ {2}--brokers LIST +a real cluster$/m);
  t.match(text, /^ {2}--client VALUE +which client \(one of a, b; default a\)$/m);
  t.match(text, /^ {2}--set K=V +an option \(repeatable\)$/m);
  t.match(text, /^ {2}--json +print JSON$/m);
  t.match(text, /^ {2}-h, --help +this text$/m);
  t.match(text, /\nInternal .*\n {2}--child VALUE +a row, for the parent\n/, 'internal flags after the others, under their own heading');
  t.match(text, /\n\nThe last line is the verdict\.\n$/, 'the notes last');
  t.ok(
    lines.every((l) => l.length <= 100),
    'lines of at most 100 characters',
  );
  const shown = helpText({
    ...COMMAND,
    flags: { n: { type: 'number', default: (v) => 1, defaultText: 'messages / 10', accepts: 'an integer in [1, messages]', help: 'n' } },
  });
  t.match(
    shown,
    /--n X +n \(an integer in \[1, messages\]; default messages \/ 10\)/,
    'a computed default and range as the command describes them',
  );
});

t.test("fileHeader: the first paragraph of a file's header comment", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kdp-args-'));
  const file = path.join(dir, 'x.js');
  fs.writeFileSync(
    file,
    "#!/usr/bin/env node\n'use strict';\n// npm run x — measures x\n// against y.\n//\n// More on it.\n\nconst a = 1;\n",
  );
  t.equal(fileHeader(file), 'npm run x — measures x\nagainst y.');
  fs.writeFileSync(
    file,
    '"use strict";\n// One line.\n//   indented, kept so.\nObject.defineProperty(exports, "__esModule", { value: true });\n',
  );
  t.equal(fileHeader(file), 'One line.\n  indented, kept so.', 'as tsc emits it');
});

t.test('flagsOrExit: --help prints and exits 0; a bad command line one line and the hint, exit code 2, no stack', async (t) => {
  const script = `const { flagsOrExit } = require(${JSON.stringify(ARGS)});
    const v = flagsOrExit({ name: 'bench/x.js', usage: 'node bench/x.js', description: 'Measures x.', flags: { rounds: { type: 'number', integer: true, min: 1, default: 3, help: 'rounds' } } },
      process.argv.slice(1)); // node -e: no script name in argv
    console.log('ran', v.rounds);`;
  const run = (...argv) => spawnSync(process.execPath, ['-e', script, '--', ...argv], { encoding: 'utf8' });
  const help = run('--help');
  t.equal(help.status, 0);
  t.match(help.stdout, /^usage: node bench\/x.js \[flags\]\n\nMeasures x\.\n\n {2}--rounds N/);
  t.notMatch(help.stdout, /ran/, 'nothing run');
  const bad = run('--rounds=0');
  t.equal(bad.status, 2);
  t.equal(bad.stderr, 'bench/x.js: --rounds must be an integer >= 1, got "0"\n(node bench/x.js --help lists the flags)\n');
  t.equal(bad.stdout, '');
  const ok = run('--rounds', '4');
  t.equal(ok.status, 0);
  t.equal(ok.stdout, 'ran 4\n');
});
