// Messages of a topic whose partition count is not known yet (its first messages, sent before
// the metadata answer), held here in call order and placed once the count is known, so that a
// burst to a new topic is partitioned here, hot keys spread, from its first message, even when
// it is produced in one synchronous loop. librdkafka would hold them as long (a message without
// a partition waits in its queue for the topic's metadata): they wait here instead, where they
// can still be decided.
//
// Bounded in time and in number: when a topic's count is still unknown UNPLACED_WAIT_MS after
// its first held message, or when the producer holds half of maxQueued, that topic's messages go
// to librdkafka unassigned (it places them with the same partitioner), in call order, and its
// later messages follow them there until the count is known.

import type { Key } from '../../core/key';
import type { Headers, Pending } from '../types';

/** How long a topic's first messages wait here for its partition count. */
export const UNPLACED_WAIT_MS = 2000;

/** A message taken before its topic's partition count was known, not yet decided. */
export interface UnplacedMessage {
  readonly topic: string;
  readonly value: Buffer | null;
  readonly key: Key | null | undefined;
  readonly timestamp: number | null | undefined;
  readonly headers: Headers | undefined;
  /** The index of a forwarded order header among `headers` (-1: none). */
  readonly forwarded: number;
  readonly pending: Pending | undefined;
}

interface TopicQueue {
  readonly items: UnplacedMessage[];
  readonly timer: NodeJS.Timeout;
}

export class Unplaced {
  private readonly queues = new Map<string, TopicQueue>();
  /** Messages held, all topics. */
  size = 0;

  /**
   * `release(m)`: places and sends one message (unassigned while its topic's count is unknown).
   * `unassigned(topic)`: the topic's wait ended without a count: its next messages go unassigned too.
   */
  constructor(
    private readonly waitMs: number,
    private readonly release: (m: UnplacedMessage) => void,
    private readonly unassigned: (topic: string) => void,
  ) {}

  /** Whether `topic` has messages held here (a new one goes behind them). */
  holds(topic: string): boolean {
    return this.size > 0 && this.queues.has(topic);
  }

  /** Holds a message until its topic's count is known, or its wait ends. */
  hold(m: UnplacedMessage): void {
    let q = this.queues.get(m.topic);
    if (q === undefined) {
      const topic = m.topic;
      q = { items: [], timer: setTimeout(() => this.giveUp(topic), this.waitMs) };
      this.queues.set(topic, q);
    }
    q.items.push(m);
    this.size++;
  }

  /** `topic`'s count is known: its messages are placed and sent, in call order. */
  known(topic: string): void {
    this.flushTopic(topic);
  }

  /** `topic`'s messages go unassigned, in call order, and so do its next ones until its count is known. */
  giveUp(topic: string): void {
    if (!this.queues.has(topic)) return;
    this.unassigned(topic);
    this.flushTopic(topic);
  }

  /** Empties it (disconnect): the held messages, for their callers to be told. */
  take(): UnplacedMessage[] {
    const out: UnplacedMessage[] = [];
    for (const q of this.queues.values()) {
      clearTimeout(q.timer);
      for (const m of q.items) out.push(m);
    }
    this.queues.clear();
    this.size = 0;
    return out;
  }

  private flushTopic(topic: string): void {
    const q = this.queues.get(topic);
    if (q === undefined) return;
    clearTimeout(q.timer);
    this.queues.delete(topic);
    this.size -= q.items.length;
    for (const m of q.items) this.release(m);
  }
}
