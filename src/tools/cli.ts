#!/usr/bin/env node
// kdp: the package's command line. `kdp simulate` compares static and dynamic placement.

import { accessSync, constants, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { simulate, minWindow, SIMULATION_DEFAULTS, SIMULATION_LIMITS } from './simulate';
import { terminalReport, svgReport } from './chart';
import { DEFAULTS, resolveOptions } from '../core/options';
import { WORKLOAD_FORMS } from './workload';
import { type Command, UsageError, helpText, parseFlags, usageErrorText } from './args';

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

/** Something the command could not do (exit code 1). */
class CommandError extends Error {}

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

function main(argv: string[]): number {
  const [command, ...rest] = argv;
  try {
    if (command === 'simulate') simulateCommand(rest);
    else if (command === undefined || command === '-h' || command === '--help' || command === 'help') process.stdout.write(helpText(SIMULATE));
    else throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    return 0;
  } catch (err) {
    const e = err as Error & { code?: string };
    if (e instanceof CommandError) {
      process.stderr.write(`kdp: ${e.message}\n`);
      return 1;
    }
    // Bad flags (UsageError) and bad option values (KDP_*) are the user's to fix.
    if (e instanceof UsageError || e.code?.startsWith('KDP_')) {
      process.stderr.write(usageErrorText(SIMULATE, e instanceof UsageError ? e : new UsageError(e.message)));
      return 2;
    }
    throw err;
  }
}

process.exitCode = main(process.argv.slice(2));
