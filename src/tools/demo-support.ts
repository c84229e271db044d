// What the two demos (demo.ts, demo-consumer.ts) share: their command-line flags, how they
// end on an error, how they report when not on a terminal, and topic creation on a real cluster.

import { parseArgs } from 'node:util';
import * as Kafka from 'node-rdkafka';

/** A numeric flag: `fallback` when absent; `integer` ones are rounded down. */
export interface NumberFlag {
  readonly fallback: number;
  readonly min: number;
  readonly max: number;
  readonly integer?: boolean;
  /** The flag only means something with --brokers; the text says why (a usage error without it). */
  readonly needsBrokers?: string;
}

/** A bad command line: the demo prints `demo: <message>` and its usage, and exits with code 2. */
export class DemoUsageError extends Error {}

/**
 * Whether the demo redraws a screen: on a terminal it does every second; otherwise (piped to
 * a file, in CI) it prints a short progress line every PROGRESS_EVERY_S seconds.
 */
export const interactive = (): boolean => process.stdout.isTTY === true;
export const PROGRESS_EVERY_S = 5;

/**
 * Runs a demo's main(): a bad flag (a DemoUsageError or one of parseArgs' errors) prints
 * `demo: <message>` and `usage` with exit code 2; any other failure its stack with exit code 1.
 */
export function runDemo(usage: string, main: () => Promise<void>): void {
  main().catch((err) => {
    const e = err as Error & { code?: string };
    if (e instanceof DemoUsageError || (typeof e?.code === 'string' && e.code.startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`demo: ${e.message}\n\n${usage}`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`demo failed: ${e?.stack ?? e}\n`);
    process.exitCode = 1;
  });
}

/**
 * A demo's flags: --help (then null), --brokers, the string flags `strings` and the numeric
 * flags `numbers` (each checked by numberFlag).
 */
export function demoFlags<N extends string, S extends string>(
  argv: string[], numbers: Record<N, NumberFlag>, strings: readonly S[] = [],
): ({ brokers?: string } & Record<N, number> & Partial<Record<S, string>>) | null {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = { brokers: { type: 'string' }, help: { type: 'boolean', short: 'h' } };
  for (const name of [...Object.keys(numbers), ...strings]) options[name] = { type: 'string' };
  const { values } = parseArgs({ args: argv, options }) as { values: Record<string, string | boolean | undefined> };
  if (values.help) return null;
  if (values.brokers === '') throw new DemoUsageError('--brokers needs a host:port list');
  const out: Record<string, unknown> = { brokers: values.brokers };
  for (const name of strings) out[name] = values[name];
  for (const [name, f] of Object.entries(numbers) as Array<[string, NumberFlag]>) {
    if (f.needsBrokers && values[name] !== undefined && !values.brokers) throw new DemoUsageError(`--${name} needs --brokers (${f.needsBrokers})`);
    const v = numberFlag(name, values[name] as string | undefined, f.fallback, f.min, f.max);
    out[name] = f.integer ? Math.floor(v) : v;
  }
  return out as { brokers?: string } & Record<N, number> & Partial<Record<S, string>>;
}

/** A numeric command-line flag: `fallback` when absent, an error naming the flag when outside [min, max]. */
function numberFlag(name: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const v = Number(text);
  if (!(v >= min && v <= max)) throw new DemoUsageError(`--${name} must be a number in [${min}, ${max}], got ${JSON.stringify(text)}`);
  return v;
}

/** Creates `topic` with `partitions` partitions (replication 1) unless it exists. */
export async function createTopic(brokers: string, topic: string, partitions: number): Promise<void> {
  const admin = Kafka.AdminClient.create({ 'metadata.broker.list': brokers });
  try {
    await new Promise<void>((resolve, reject) => {
      admin.createTopic({ topic, num_partitions: partitions, replication_factor: 1 }, 15_000, (err) => {
        // 36: TOPIC_ALREADY_EXISTS
        if (err && (err as any).code !== 36) reject(err);
        else resolve();
      });
    });
  } finally {
    admin.disconnect();
  }
}
