// What every consumer of the package takes for its ordered delivery (delivery.ts), documented
// once: each consumer's options extend these with what its client adds; and the checks of what
// every consumer's run() takes.

import { InvalidArgTypeError, InvalidOptionError } from '../core/errors';
import type { ResequencerOptions } from './resequencer-types';

export interface DeliveryOptions {
  readonly resequencer?: ResequencerOptions;
  /**
   * Committed offsets are written this often (ms; default 250). Also how soon another member of
   * the group can hand on a relocated key whose earlier messages this consumer handled (it
   * waits for this commit), so keep it short.
   */
  readonly commitIntervalMs?: number;
  /** Reading is held while this many released messages wait for the handler; it goes on at half (default 5000). */
  readonly maxPending?: number;
  /** A message whose handler throws or rejects is handed to it again this many times before the consumer stops (default 2). */
  readonly handlerRetries?: number;
  /** Wait before each new attempt (ms; default 100). */
  readonly retryBackoffMs?: number;
  /**
   * Which handler calls may overlap when more than one may run at once: 'key' (the default:
   * one call at a time per key, in the order the resequencer releases its messages — a spread
   * key's across its partitions —, different keys at once; messages without a key are
   * independent), 'partition' (one per partition, KafkaJS's model) or 'none' (any, in no order).
   */
  readonly ordering?: 'key' | 'partition' | 'none';
  /**
   * A spread key's message whose predecessor is on a partition another member of the group
   * owns, at an offset not known: 'wait' waits until that member's handled record shows the
   * predecessor handled (docs/ordering.md, "Order in a group"); 'flag' hands it out at once,
   * flagged `reason: 'unowned'`. 'wait' needs a client whose commits carry metadata; 'auto'
   * (the default) is 'wait' where they do, 'flag' where they do not. Each change of a split key
   * to another member's partition costs a commit and a read: DynamicProducer's splitRunMs keeps
   * those changes to one per run.
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
