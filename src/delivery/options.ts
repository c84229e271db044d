// What every consumer of the package takes for its ordered delivery (delivery.ts), documented
// once and extended by each consumer's options; and the checks of what every run() takes.

import { InvalidArgTypeError, InvalidOptionError } from '../core/errors';
import type { ResequencerOptions } from './resequencer-types';

export interface DeliveryOptions {
  readonly resequencer?: ResequencerOptions;
  /**
   * Committed offsets are written this often (ms; default 250). Keep it short: another member
   * taking over a moved key waits for this commit of its earlier messages.
   */
  readonly commitIntervalMs?: number;
  /** Reading is held while this many released messages wait for the handler; it goes on at half (default 5000). */
  readonly maxPending?: number;
  /** A message whose handler throws or rejects is handed to it again this many times before the consumer stops (default 2). */
  readonly handlerRetries?: number;
  /** Wait before each new attempt (ms; default 100). */
  readonly retryBackoffMs?: number;
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
