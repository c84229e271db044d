#!/usr/bin/env node
// kdp: the package's command line. `kdp simulate` compares static and dynamic placement.

import { parseArgs } from 'node:util';
import { accessSync, constants, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { simulate, minWindow, SIMULATION_DEFAULTS, SIMULATION_LIMITS } from './simulate';
import { terminalReport, svgReport } from './chart';
import { DEFAULTS, resolveOptions } from '../core/options';
import { WORKLOAD_FORMS } from './workload';

const USAGE = `usage: kdp simulate [options]

Runs a synthetic key stream through Kafka's static placement and through
DynamicPartitioner, and prints both per partition, side by side.

  --workload W      ${WORKLOAD_FORMS.join(' | ')}   (default ${SIMULATION_DEFAULTS.workload})
                    shift:<s>:<every> moves the hot set every <every> messages
  --keys N          distinct keys, 1 to ${SIMULATION_LIMITS.keys}          (default ${SIMULATION_DEFAULTS.keys})
  --messages N      messages, 1 to ${SIMULATION_LIMITS.messages}          (default ${SIMULATION_DEFAULTS.messages})
  --partitions N    partitions, 1 to maxPartitions     (default ${SIMULATION_DEFAULTS.partitions})
  --window N        messages per window, at most ${SIMULATION_LIMITS.windows} windows a run
                                                       (default ${SIMULATION_DEFAULTS.window})
  --seed N          random seed, 0 to ${SIMULATION_LIMITS.seed}         (default ${SIMULATION_DEFAULTS.seed})
  --topics N        topics written, each with as many messages; figures are the first's
                    (default ${SIMULATION_DEFAULTS.topics}, at most ${SIMULATION_LIMITS.topics})
  --set PATH=VALUE  a DynamicPartitioner option, e.g. --set hotThreshold=0.2
                    --set horizon.messages=50000 --set spread=false (repeatable)
  --json            print the result as JSON
  --svg FILE        also draw the comparison as an SVG chart
  -h, --help        this text

Partitioner options and their defaults:
${Object.entries(DEFAULTS).map(([k, v]) => `  ${k} = ${JSON.stringify(v)}`).join('\n')}
`;

/** A bad command line: exit code 2, with the usage. */
class UsageError extends Error {}

/** Something the command could not do (exit code 1). */
class CommandError extends Error {}

function integer(name: string, text: string | undefined, fallback: number, min: number, max: number, why = ''): number {
  if (text === undefined) return fallback;
  const v = Number(text);
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new UsageError(`--${name} must be an integer in [${min}, ${max}]${why}, got ${JSON.stringify(text)}`);
  }
  return v;
}

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

function simulateCommand(args: string[]): void {
  const { values } = parseArgs({
    args,
    options: {
      workload: { type: 'string' },
      keys: { type: 'string' },
      messages: { type: 'string' },
      partitions: { type: 'string' },
      window: { type: 'string' },
      seed: { type: 'string' },
      topics: { type: 'string' },
      set: { type: 'string', multiple: true },
      json: { type: 'boolean' },
      svg: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const d = SIMULATION_DEFAULTS;
  const L = SIMULATION_LIMITS;
  const options = optionsFrom(values.set ?? []);
  // Every flag is checked before any work: a run that cannot finish or cannot be written fails at once.
  const { maxPartitions } = resolveOptions(options);
  const messages = integer('messages', values.messages, d.messages, 1, L.messages);
  const settings = {
    workload: values.workload ?? d.workload,
    keys: integer('keys', values.keys, d.keys, 1, L.keys),
    messages,
    partitions: integer('partitions', values.partitions, d.partitions, 1, maxPartitions, ' (the partitioner\'s maxPartitions; --set maxPartitions=N raises it)'),
    window: integer('window', values.window, d.window, minWindow(messages), L.messages, ` (at most ${L.windows} windows of ${messages} messages)`),
    seed: integer('seed', values.seed, d.seed, 0, L.seed),
    topics: integer('topics', values.topics, d.topics, 1, L.topics),
    options,
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
    else if (command === undefined || command === '-h' || command === '--help' || command === 'help') process.stdout.write(USAGE);
    else throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    return 0;
  } catch (err) {
    const e = err as Error & { code?: string };
    if (e instanceof CommandError) {
      process.stderr.write(`kdp: ${e.message}\n`);
      return 1;
    }
    // Bad flags (UsageError, parseArgs' ERR_PARSE_ARGS_*) and bad option values (KDP_*) are the user's to fix.
    if (e instanceof UsageError || e.code?.startsWith('ERR_PARSE_ARGS') || e.code?.startsWith('KDP_')) {
      process.stderr.write(`kdp: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    throw err;
  }
}

process.exitCode = main(process.argv.slice(2));
