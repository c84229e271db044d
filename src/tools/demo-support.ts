// What the two demos (demo.ts, demo-consumer.ts) share: their command-line flags, how they
// end on an error, how they report when not on a terminal, and topic creation on a real cluster.

import * as Kafka from 'node-rdkafka';
import { type Command, type FlagValues, type Flags, UsageError, helpText, parseFlags, usageErrorText } from './args';

/** The flag both demos take: a real cluster instead of the mock one. */
export const BROKERS_FLAG = {
  type: 'string',
  arg: 'host:port,...',
  help: "a real cluster's bootstrap list (default: librdkafka's in-process mock cluster, no broker needed)",
} as const;

/** A number flag's range and default, as each demo sets them. */
interface Range {
  readonly min: number;
  readonly max: number;
  readonly default: number;
}

/** --partitions: of `topics`, the ones a demo makes on a real cluster (--brokers only: the mock cluster gives each 4). */
export const partitionsFlag = (range: Range, topics: string, help: string) => ({
  type: 'number', integer: true, ...range,
  needs: { flag: 'brokers', why: `the mock cluster auto-creates ${topics} with 4 partitions` },
  help,
}) as const;

/** --rate: messages per second. */
export const rateFlag = (range: Range) => ({ type: 'number', arg: 'MSG_PER_S', ...range, help: 'messages per second' }) as const;

/** --seconds: how long the demo runs. */
export const secondsFlag = (range: Range, help: string) => ({ type: 'number', arg: 'S', ...range, help }) as const;

/**
 * Whether the demo redraws a screen: on a terminal it does every second; otherwise (piped to
 * a file, in CI) it prints a short progress line every PROGRESS_EVERY_S seconds.
 */
export const interactive = (): boolean => process.stdout.isTTY === true;
export const PROGRESS_EVERY_S = 5;

/**
 * Runs a demo's main() with its flags: --help prints the command's help (exit code 0); a bad
 * command line `demo: <message>` and where the flags are listed (exit code 2, no stack); a
 * failure of main() its stack (exit code 1).
 */
export function runDemo<F extends Flags>(command: Command<F>, main: (flags: FlagValues<F>) => Promise<void>): void {
  let flags: FlagValues<F> | null;
  try {
    flags = parseFlags(command, process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(usageErrorText(command, err));
    process.exitCode = 2;
    return;
  }
  if (flags === null) {
    process.stdout.write(helpText(command));
    return;
  }
  main(flags).catch((err) => {
    process.stderr.write(`demo failed: ${(err as Error)?.stack ?? err}\n`);
    process.exitCode = 1;
  });
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
