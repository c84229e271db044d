#!/usr/bin/env node
// kdp: the package's command line. `kdp simulate` compares static and dynamic placement.

import { parseArgs } from 'node:util';
import { writeFileSync } from 'node:fs';
import { simulate, SIMULATION_DEFAULTS } from './simulate';
import { terminalReport, svgReport } from './chart';
import { DEFAULTS } from './options';
import { WORKLOAD_FORMS } from './workload';

const USAGE = `usage: kdp simulate [options]

Runs a synthetic key stream through Kafka's static placement and through
DynamicPartitioner, and prints both per partition, side by side.

  --workload W      ${WORKLOAD_FORMS.join(' | ')}   (default ${SIMULATION_DEFAULTS.workload})
                    shift:<s>:<every> moves the hot set every <every> messages
  --keys N          distinct keys                      (default ${SIMULATION_DEFAULTS.keys})
  --messages N      messages                           (default ${SIMULATION_DEFAULTS.messages})
  --partitions N    partitions                         (default ${SIMULATION_DEFAULTS.partitions})
  --window N        messages per window                (default ${SIMULATION_DEFAULTS.window})
  --seed N          random seed                        (default ${SIMULATION_DEFAULTS.seed})
  --set PATH=VALUE  a DynamicPartitioner option, e.g. --set hotThreshold=0.2
                    --set horizon.messages=50000 --set spread=false (repeatable)
  --json            print the result as JSON
  --svg FILE        also draw the comparison as an SVG chart
  -h, --help        this text

Partitioner options and their defaults:
${Object.entries(DEFAULTS).map(([k, v]) => `  ${k} = ${JSON.stringify(v)}`).join('\n')}
`;

class UsageError extends Error {}

function integer(name: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const v = Number(text);
  if (!Number.isInteger(v) || v < min) throw new UsageError(`--${name} must be an integer >= ${min}, got ${JSON.stringify(text)}`);
  return v;
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
  const result = simulate({
    workload: values.workload ?? d.workload,
    keys: integer('keys', values.keys, d.keys, 1),
    messages: integer('messages', values.messages, d.messages, 1),
    partitions: integer('partitions', values.partitions, d.partitions, 1),
    window: integer('window', values.window, d.window, 1),
    seed: integer('seed', values.seed, d.seed, 0),
    options: optionsFrom(values.set ?? []),
  });
  if (values.svg) writeFileSync(values.svg, svgReport(result));
  process.stdout.write(values.json ? JSON.stringify(result, null, 2) + '\n' : terminalReport(result) + '\n');
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
    // Bad flags (UsageError, parseArgs' ERR_PARSE_ARGS_*) and bad option values (KDP_*) are the user's to fix.
    if (e instanceof UsageError || e.code?.startsWith('ERR_PARSE_ARGS') || e.code?.startsWith('KDP_')) {
      process.stderr.write(`kdp: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    throw err;
  }
}

process.exitCode = main(process.argv.slice(2));
