// What every consumer of the package takes for its ordered delivery (delivery.ts), documented
// once: each consumer's options extend these with what its client adds.

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
