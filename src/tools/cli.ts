#!/usr/bin/env node
// kdp: the package's command line. `kdp simulate` compares static and dynamic placement; `kdp dead-letters list` and
// `kdp dead-letters replay` show a dead-letter topic and send its records back (dead-letters.ts does the Kafka work).

import { accessSync, constants, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { simulate, minWindow, SIMULATION_DEFAULTS, SIMULATION_LIMITS } from './simulate';
import { terminalReport, svgReport } from './chart';
import { DEFAULTS, resolveOptions } from '../core/options';
import { WORKLOAD_FORMS } from './workload';
import { type Command, UsageError, helpText, parseFlags, usageErrorText } from './args';
import { CommandError, listDeadLetters, replayDeadLetters } from './dead-letters';

const L = SIMULATION_LIMITS;
const d = SIMULATION_DEFAULTS;

const SIMULATE = {
  name: 'kdp',
  usage: 'kdp simulate',
  description: `Runs a synthetic key stream through Kafka's static placement and through
DynamicPartitioner, and prints both per partition, side by side.`,
  flags: {
    workload: {
      type: 'string', arg: 'W', default: d.workload,
      help: `${WORKLOAD_FORMS.join(' | ')}: the keys' distribution; shift:<s>:<every> moves the hot set every <every> messages`,
    },
    keys: { type: 'number', integer: true, min: 1, max: L.keys, default: d.keys, help: 'distinct keys' },
    messages: { type: 'number', integer: true, min: 1, max: L.messages, default: d.messages, help: 'messages' },
    partitions: {
      type: 'number', integer: true, min: 1, max: (v) => maxPartitions(v.set as string[]), default: d.partitions,
      accepts: 'an integer in [1, maxPartitions]', why: ' (the partitioner\'s maxPartitions; --set maxPartitions=N raises it)', help: 'partitions',
    },
    window: {
      type: 'number', integer: true, min: (v) => minWindow(v.messages as number), max: L.messages, default: d.window,
      accepts: `an integer in [messages / ${L.windows}, ${L.messages}]`, why: (v) => ` (at most ${L.windows} windows of ${v.messages} messages)`,
      help: 'messages per window, for the worst-window figure',
    },
    seed: { type: 'number', integer: true, min: 0, max: L.seed, default: d.seed, help: 'random seed' },
    topics: { type: 'number', integer: true, min: 1, max: L.topics, default: d.topics, help: 'topics written, each with as many messages; the figures are the first\'s' },
    set: {
      type: 'string', multiple: true, arg: 'PATH=VALUE',
      help: 'a DynamicPartitioner option (VALUE as JSON, else text), e.g. --set hotThreshold=0.2 --set horizon.messages=50000 --set spread=false',
    },
    json: { type: 'boolean', help: 'print the result as JSON' },
    svg: { type: 'string', arg: 'FILE', help: 'also draw the comparison as an SVG chart into FILE' },
  },
  notes: `Partitioner options and their defaults:
${Object.entries(DEFAULTS).map(([k, v]) => `  ${k} = ${JSON.stringify(v)}`).join('\n')}`,
} as const satisfies Command;

/** The flags both dead-letters commands take. */
const CONNECTION_FLAGS = {
  brokers: { type: 'string', arg: 'HOST:PORT,...', help: "the cluster's bootstrap list (required)" },
  topic: { type: 'string', arg: 'TOPIC', help: 'the dead-letter topic (required)' },
  timeout: { type: 'number', arg: 'S', min: 0.1, max: 600, default: 10, help: 'seconds to wait to connect, for an answer, and for the next record of a partition' },
} as const;

const DEAD_LETTERS_LIST = {
  name: 'kdp',
  usage: 'kdp dead-letters list',
  description: `Prints the records of a dead-letter topic, partition by partition, from each partition's first
offset to the end it had when the command began: no consumer group is joined, nothing is committed.`,
  flags: {
    ...CONNECTION_FLAGS,
    limit: { type: 'number', integer: true, min: 1, max: Number.MAX_SAFE_INTEGER, help: 'print at most N records' },
    json: { type: 'boolean', help: 'one JSON object per record, with its value and every header' },
  },
  notes: `A line: the record's partition:offset in the dead-letter topic, the original topic [partition] offset,
the attempts, the exception's class (and code) and message, the key (quoted text, or 0x and hex).
--json: partition, offset, timestamp, original {topic, partition, offset, order}, attempts,
exception {class, message, code}, key, value and headers [{name, ...}], each as {"text"} when it is
printable UTF-8, else {"base64"}; an absent header is null.`,
} as const satisfies Command;

const DEAD_LETTERS_REPLAY = {
  name: 'kdp',
  usage: 'kdp dead-letters replay',
  description: `Sends dead letters back to their original topic (the kdp-dlt-original-topic header, or --to) with
their key, value and headers, without the dead-letter headers and without any order header: a replayed
message is a new message, placed by its key.`,
  flags: {
    ...CONNECTION_FLAGS,
    to: { type: 'string', arg: 'TOPIC', help: "send to TOPIC instead of each record's original topic" },
    partition: { type: 'number', integer: true, min: 0, max: 2 ** 31 - 1, help: "one record's partition in the dead-letter topic, with --offset" },
    offset: { type: 'number', integer: true, min: 0, max: Number.MAX_SAFE_INTEGER, help: "one record's offset, with --partition" },
    all: { type: 'boolean', help: 'every record of the dead-letter topic, up to its end when the command began' },
    'dry-run': { type: 'boolean', help: 'print what would be sent, send nothing' },
  },
  notes: `Either --all or --partition P --offset O. A record without kdp-dlt-original-topic is skipped
unless --to is given. Each record sent prints its partition:offset -> topic [partition] offset, as
its delivery report gives them.`,
} as const satisfies Command;

/** What kdp --help prints: the commands. */
const OVERVIEW = `usage: kdp <command> [flags]

The command line of kafka-dynamic-partitioner.

  simulate               compare Kafka's static placement with DynamicPartitioner's on a synthetic workload
  dead-letters list      print the records of a dead-letter topic
  dead-letters replay    send dead letters back to their original topic

kdp <command> --help lists a command's flags.
`;

/** Fails before the simulation, not after it, when `file` cannot be written. */
function checkWritable(file: string): void {
  const dir = dirname(resolve(file));
  const fail = (why: string): never => {
    throw new CommandError(`cannot write ${file}: ${why}`);
  };
  try {
    if (!statSync(dir).isDirectory()) fail(`${dir} is not a directory`);
    accessSync(dir, constants.W_OK);
  } catch (err) {
    if (err instanceof CommandError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    fail(code === 'ENOENT' || code === 'ENOTDIR' ? `directory ${dir} does not exist` : `directory ${dir} is not writable`);
  }
  try {
    const existing = statSync(file);
    if (existing.isDirectory()) fail('it is a directory');
    accessSync(file, constants.W_OK);
  } catch (err) {
    if (err instanceof CommandError) throw err;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') fail('the file is not writable');
  }
}

/** `a.b=value` pairs into a nested object; values are JSON when they parse, strings otherwise. */
function optionsFrom(pairs: string[]): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--set takes PATH=VALUE, got ${JSON.stringify(pair)}`);
    const path = pair.slice(0, eq).split('.');
    const text = pair.slice(eq + 1);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = text;
    }
    let at = options;
    for (const part of path.slice(0, -1)) {
      if (typeof at[part] !== 'object' || at[part] === null) at[part] = {};
      at = at[part] as Record<string, unknown>;
    }
    at[path[path.length - 1]] = value;
  }
  return options;
}

/** The partitioner's maxPartitions with the --set options. */
function maxPartitions(set: string[]): number {
  return resolveOptions(optionsFrom(set)).maxPartitions;
}

function simulateCommand(args: string[]): void {
  // Every flag is checked before any work: a run that cannot finish or cannot be written fails at once.
  const values = parseFlags(SIMULATE, args);
  if (values === null) {
    process.stdout.write(helpText(SIMULATE));
    return;
  }
  const settings = {
    workload: values.workload,
    keys: values.keys,
    messages: values.messages,
    partitions: values.partitions,
    window: values.window,
    seed: values.seed,
    topics: values.topics,
    options: optionsFrom(values.set),
  };
  if (values.svg) checkWritable(values.svg);
  const result = simulate(settings);
  process.stdout.write(values.json ? JSON.stringify(result, null, 2) + '\n' : terminalReport(result) + '\n');
  if (values.svg) {
    try {
      writeFileSync(values.svg, svgReport(result));
    } catch (err) {
      throw new CommandError(`cannot write ${values.svg}: ${(err as Error).message}`);
    }
  }
}

/** A line of output on stdout. */
const print = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

async function listCommand(args: string[]): Promise<void> {
  const values = parseFlags(DEAD_LETTERS_LIST, args);
  if (values === null) {
    process.stdout.write(helpText(DEAD_LETTERS_LIST));
    return;
  }
  await listDeadLetters({ brokers: values.brokers, topic: values.topic, timeoutMs: values.timeout * 1000, limit: values.limit, json: values.json }, print);
}

async function replayCommand(args: string[]): Promise<void> {
  const values = parseFlags(DEAD_LETTERS_REPLAY, args);
  if (values === null) {
    process.stdout.write(helpText(DEAD_LETTERS_REPLAY));
    return;
  }
  await replayDeadLetters(
    {
      brokers: values.brokers, topic: values.topic, timeoutMs: values.timeout * 1000,
      to: values.to, partition: values.partition, offset: values.offset, all: values.all, dryRun: values['dry-run'],
    },
    print,
  );
}

const COMMANDS = 'simulate, dead-letters list, dead-letters replay';

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // Whose flags a usage error points to.
  let usage: Command = SIMULATE;
  try {
    if (command === 'simulate') simulateCommand(rest);
    else if (command === 'dead-letters') {
      const [sub, ...flags] = rest;
      if (sub === 'list') {
        usage = DEAD_LETTERS_LIST;
        await listCommand(flags);
      } else if (sub === 'replay') {
        usage = DEAD_LETTERS_REPLAY;
        await replayCommand(flags);
      } else if (sub === '-h' || sub === '--help' || sub === 'help') process.stdout.write(OVERVIEW);
      else {
        usage = DEAD_LETTERS_LIST;
        throw new UsageError(sub === undefined ? 'dead-letters needs list or replay' : `unknown command "dead-letters ${sub}" (dead-letters takes list or replay)`);
      }
    } else if (command === undefined || command === '-h' || command === '--help' || command === 'help') process.stdout.write(OVERVIEW);
    else throw new UsageError(`unknown command ${JSON.stringify(command)} (the commands: ${COMMANDS})`);
    return 0;
  } catch (err) {
    const e = err as Error & { code?: string };
    if (e instanceof CommandError) {
      process.stderr.write(`kdp: ${e.message}\n`);
      return 1;
    }
    // Bad flags (UsageError) and bad option values (KDP_*) are the user's to fix.
    if (e instanceof UsageError || e.code?.startsWith('KDP_')) {
      process.stderr.write(usageErrorText(usage, e instanceof UsageError ? e : new UsageError(e.message)));
      return 2;
    }
    throw err;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`kdp: ${(err as Error)?.stack ?? err}\n`);
    process.exitCode = 1;
  },
);
