// What every consumer takes for a message its handler keeps failing on (src/delivery/failures.ts): the backoff's cap,
// the application's onFailure, the dead-letter topic; checked with the other consumer options (group-options.ts).

import { InvalidOptionError } from './errors';
import { type Fields, MAX_TIMER_MS, custom, integer, name, object } from './schema';

/** The failure options of a consumer, checked. */
export interface ResolvedFailureOptions {
  /** The backoff's cap (ms); absent: max(30,000, retryBackoffMs). */
  readonly retryBackoffMaxMs?: number;
  /** The application's verdict on a failed handler call (docs/consumer.md, "Handler errors"). */
  readonly onFailure?: (message: any, error: any, attempts: number) => unknown;
  /** The dead-letter topic, the producer that writes to it (checked by the consumer), how long a message may stay parked. */
  readonly deadLetter?: ResolvedDeadLetter;
  /** A prom-client Registry the consumer's gauges go into (src/delivery/consumer-metrics.ts). */
  readonly prometheus?: unknown;
}

export interface ResolvedDeadLetter {
  readonly topic: string;
  readonly producer?: object;
  readonly maxParkMs?: number;
}

/** What every consumer takes for its failed calls (failures.ts): the cap of the backoff, onFailure, deadLetter; and its gauges' Registry. */
export const FAILURE_FIELDS: Fields = {
  retryBackoffMaxMs: integer(0, MAX_TIMER_MS),
  onFailure: custom<(message: unknown, error: unknown, attempts: number) => unknown>("a function (message, error, attempts) => 'retry' | 'skip' | 'deadLetter' | 'stop'",
    (v) => typeof v === 'function'),
  deadLetter: object<ResolvedDeadLetter>({
    topic: name('the dead-letter topic').require(),
    producer: custom<object>('a producer (a DynamicProducer, or the client\'s own)', (v) => typeof v === 'object' && v !== null),
    maxParkMs: integer(0, MAX_TIMER_MS),
  }),
  prometheus: custom('a prom-client Registry', (v) => typeof v === 'object' && v !== null),
};

/** A cap of the backoff below its base is refused. */
export function checkBackoff(resolved: { retryBackoffMs: number; retryBackoffMaxMs?: number }, path: string): void {
  const cap = resolved.retryBackoffMaxMs;
  if (cap !== undefined && cap < resolved.retryBackoffMs) {
    throw new InvalidOptionError(`${path}.retryBackoffMaxMs`, `at least ${path}.retryBackoffMs (${resolved.retryBackoffMs})`, cap);
  }
}

/** A dead-letter topic that is one of the run's topics is refused (its letters would be read, fail and be written again). */
export function checkDeadLetterTopic(deadLetter: ResolvedDeadLetter | undefined, topics: ReadonlyArray<string | RegExp>, path = 'options.deadLetter.topic'): void {
  if (deadLetter === undefined) return;
  for (const t of topics) {
    if (t === deadLetter.topic || (t instanceof RegExp && t.test(deadLetter.topic))) {
      throw new InvalidOptionError(path, 'a topic the consumer does not read', deadLetter.topic,
        `${path} ${JSON.stringify(deadLetter.topic)} is a topic this consumer reads: its dead letters would be read, fail and be written again`);
    }
  }
}
