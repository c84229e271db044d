// What every consumer of the package takes for its ordered delivery (delivery.ts), documented
// once and extended by each consumer's options; and the checks of what every run() takes.

import { type HandlerError, InvalidArgTypeError, InvalidOptionError } from '../core/errors';
import type { FailureVerdict } from './failures';
import type { ResequencerOptions } from './resequencer-types';

/** A consumer's dead-letter topic (docs/consumer.md, "Dead letters"). */
export interface DeadLetterOptions<Producer = object> {
  /** Where messages go that the handler keeps failing on; never a topic the consumer reads. */
  readonly topic: string;
  /**
   * The producer that writes them: a DynamicProducer, or the client's own (a KafkaJS producer for wrapKafkaJsConsumer, an
   * @platformatic/kafka Producer for wrapPlatformaticConsumer). DynamicConsumer makes one when absent; under its
   * `transaction` option, the transaction's producer writes them.
   */
  readonly producer?: Producer;
  /** How long a message may stay parked on dead-letter writes that fail before the run stops (ms; default 60,000). */
  readonly maxParkMs?: number;
}

/** `P`: the message as the consumer's handler gets it. */
export interface DeliveryOptions<P = any> {
  readonly resequencer?: ResequencerOptions;
  /**
   * Committed offsets are written this often (ms; default 250). Keep it short: another member
   * taking over a moved key waits for this commit of its earlier messages.
   */
  readonly commitIntervalMs?: number;
  /** Reading is held while this many released messages wait for the handler; it goes on at half (default 5000). */
  readonly maxPending?: number;
  /**
   * A message whose handler throws or rejects is handed to it again this many times (default 2); then it goes to the
   * dead-letter topic (`deadLetter`), or the run stops. `onFailure`, when given, decides instead.
   */
  readonly handlerRetries?: number;
  /** Wait before the first new attempt (ms; default 100); each next one waits twice as long, up to `retryBackoffMaxMs`, less up to a fifth at random. */
  readonly retryBackoffMs?: number;
  /** The longest wait between attempts (ms; default 30,000, or retryBackoffMs when larger). */
  readonly retryBackoffMaxMs?: number;
  /**
   * The application's say after each failed call (`attempts` counts them): 'retry' (after the backoff), 'skip' (handled as it
   * is), 'deadLetter' (needs `deadLetter`) or 'stop' (the run stops); a promise of one is awaited.
   */
  readonly onFailure?: (message: P, error: HandlerError, attempts: number) => FailureVerdict | Promise<FailureVerdict>;
  /** Where messages go that the handler keeps failing on, so that nothing else stops. */
  readonly deadLetter?: DeadLetterOptions;
  /**
   * A prom-client Registry: the consumer's gauges go into it (`kdp_consumer_*`: held, waiting, in flight, retries, dead
   * letters, skips, failed dead-letter writes, parked messages, transactions), read from metrics() on each scrape. One
   * Registry per consumer.
   */
  readonly prometheus?: unknown;
  /**
   * Which handler calls may overlap: 'key' (the default: one call at a time per key, in release
   * order, a spread key's across its partitions; messages without a key are independent),
   * 'partition' (one per partition, KafkaJS's model) or 'none' (any, in no order).
   */
  readonly ordering?: 'key' | 'partition' | 'none';
  /**
   * A spread key's message whose predecessor is on another member's partition, offset unknown:
   * 'wait' waits for that member's handled record to show it handled (docs/ordering.md, "Order
   * in a group"); 'flag' hands it out at once with `reason: 'unowned'`. 'wait' needs commits that
   * carry metadata; 'auto' (the default) is 'wait' where they do. Each crossing of a spread key
   * to another member's partition costs a commit and a read: the producer's splitRunMs keeps
   * them to one per run.
   */
  readonly groupOrder?: 'auto' | 'flag' | 'wait';
}

/** A run's topics: a non-empty array of topic names, else an InvalidArgTypeError naming `name`. */
export function checkTopics(topics: unknown, name: string): asserts topics is string[] {
  if (!Array.isArray(topics) || topics.length === 0 || !topics.every((t) => typeof t === 'string' && t.length > 0)) {
    throw new InvalidArgTypeError(name, 'a non-empty array of topic names', topics);
  }
}

/** A run's handler calls at once: an integer from 1 to 65536, else an InvalidOptionError naming `name`. */
export function checkConcurrency(concurrency: unknown, name: string): asserts concurrency is number {
  if (!Number.isInteger(concurrency) || (concurrency as number) < 1 || (concurrency as number) > 65_536) {
    throw new InvalidOptionError(name, 'an integer from 1 to 65536', concurrency);
  }
}
