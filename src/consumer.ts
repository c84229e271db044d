// DynamicConsumer: node-rdkafka's KafkaConsumer → Resequencer → the application.
//   - cooperative-sticky assignment (incremental assign / unassign on rebalance);
//   - each spread key's messages handed to the handler in produce order (src/resequencer.ts);
//   - offsets committed only up to the lowest message not yet handled on each partition, so a
//     crash loses nothing (at-least-once);
//   - partitions paused while the application is behind, resumed when it catches up.

import { EventEmitter } from 'node:events';
import * as Kafka from 'node-rdkafka';
import { Resequencer, ResequencerOptions, ConsumedMessage, Release } from './resequencer';
import { splitConfig, Config } from './config';
import { InvalidArgTypeError, InvalidOptionError, KafkaError, StateError } from './errors';

export interface DynamicConsumerOptions {
  readonly resequencer?: ResequencerOptions;
  /** Committed offsets are written this often (ms). */
  readonly commitIntervalMs?: number;
  /** Messages fetched per consume call. */
  readonly batchSize?: number;
  /** Pause fetching while this many released messages wait for the handler; resume at half. */
  readonly maxPending?: number;
}

export const CONSUMER_DEFAULTS = Object.freeze({ commitIntervalMs: 1000, batchSize: 500, maxPending: 5000 });

/** What the handler gets besides the message. */
export interface HandledInfo {
  /** True when the message was released before its predecessor (see Resequencer). */
  readonly outOfOrder: boolean;
  readonly reason?: Release['reason'];
}

export type MessageHandler = (message: Kafka.Message, info: HandledInfo) => void | Promise<void>;

interface TopicPartitionOffset { topic: string; partition: number; offset?: number }

export class DynamicConsumer extends EventEmitter {
  readonly client: Kafka.KafkaConsumer;
  readonly resequencer: Resequencer<Kafka.Message & ConsumedMessage>;
  private readonly options: typeof CONSUMER_DEFAULTS;
  private readonly queue: Release<Kafka.Message & ConsumedMessage>[] = [];
  /** Per topic-partition: offsets released to the queue but not yet handled. */
  private readonly unhandled = new Map<string, Set<number>>();
  private readonly assigned = new Map<string, TopicPartitionOffset>();
  private readonly lastCommitted = new Map<string, number>();
  private handler: MessageHandler | undefined;
  private running = false;
  private paused = false;
  private working = false;
  private timers: NodeJS.Timeout[] = [];
  private stopped: Promise<void> | undefined;

  constructor(globalConfig: Config, topicConfig: Config = {}, options: DynamicConsumerOptions = {}) {
    super();
    if (typeof globalConfig !== 'object' || globalConfig === null) throw new InvalidArgTypeError('globalConfig', 'an object', globalConfig);
    if (typeof options !== 'object' || options === null) throw new InvalidOptionError('options', 'an object', options);
    for (const name of Object.keys(options)) {
      if (name !== 'resequencer' && !(name in CONSUMER_DEFAULTS)) throw InvalidOptionError.unknown(`options.${name}`, ['resequencer', ...Object.keys(CONSUMER_DEFAULTS)]);
    }
    const o = { ...CONSUMER_DEFAULTS, ...options } as typeof CONSUMER_DEFAULTS & DynamicConsumerOptions;
    for (const name of Object.keys(CONSUMER_DEFAULTS) as Array<keyof typeof CONSUMER_DEFAULTS>) {
      const v = o[name];
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new InvalidOptionError(`options.${name}`, 'an integer >= 1', v);
    }
    this.options = { commitIntervalMs: o.commitIntervalMs, batchSize: o.batchSize, maxPending: o.maxPending };
    this.resequencer = new Resequencer(o.resequencer ?? {});
    const split = splitConfig(globalConfig, topicConfig);
    if (split.global['enable.auto.commit'] === true || split.topic['enable.auto.commit'] === true) {
      throw new InvalidOptionError("globalConfig['enable.auto.commit']", 'false or absent: the consumer commits only what was handled', true);
    }
    const global: Config = {
      'partition.assignment.strategy': 'cooperative-sticky',
      ...split.global,
      'enable.auto.commit': false,
      // The periodic commits are asynchronous: their results come as 'offset.commit' events.
      offset_commit_cb: split.global.offset_commit_cb ?? true,
      rebalance_cb: (err: any, assignment: TopicPartitionOffset[]) => this.rebalance(err, assignment),
    };
    this.client = new Kafka.KafkaConsumer(global as any, split.topic as any);
    this.client.on('event.error', (err) => this.emit('error', new KafkaError(`librdkafka: ${err.message}`, (err as any).code, err)));
    (this.client as any).on('offset.commit', (err: any, offsets: TopicPartitionOffset[]) => this.commitDone(err, offsets, true));
  }

  async connect(timeoutMs = 30_000): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.client.connect({ timeout: timeoutMs }, (err) => (err ? reject(new KafkaError(`connect: ${err.message}`, (err as any).code, err)) : resolve()));
    });
  }

  /**
   * Subscribes to `topics` and hands every message to `handler`, one at a time: spread keys in
   * produce order, everything else as it comes. Resolves when stop() is called.
   */
  run(topics: string[], handler: MessageHandler): Promise<void> {
    if (!Array.isArray(topics) || topics.length === 0 || !topics.every((t) => typeof t === 'string' && t.length > 0)) {
      throw new InvalidArgTypeError('topics', 'a non-empty array of topic names', topics);
    }
    if (typeof handler !== 'function') throw new InvalidArgTypeError('handler', 'a function', handler);
    if (this.running) throw new StateError('already running');
    this.handler = handler;
    this.running = true;
    this.client.subscribe(topics);
    this.timers.push(setInterval(() => this.commitHandled(undefined, false), this.options.commitIntervalMs));
    this.timers.push(setInterval(() => this.accept(this.resequencer.expire()), Math.max(10, Math.min(1000, this.resequencer.options.maxWaitMs / 4))));
    this.stopped = new Promise<void>((resolve) => {
      this.once('stopped', resolve);
    });
    this.fetch();
    return this.stopped;
  }

  private fetch(): void {
    if (!this.running) return;
    // Also while paused (the partitions are paused in librdkafka, so nothing new comes): a
    // consume call is what serves rebalance callbacks, and keeps max.poll.interval.ms.
    this.client.consume(this.options.batchSize, (err, messages) => {
      if (!this.running) return; // stopping: what came in is read again from the committed offsets
      if (err) {
        this.emit('error', new KafkaError(`consume: ${err.message}`, (err as any).code, err));
      } else {
        for (const m of messages) {
          if (!this.assigned.has(`${m.topic}\u0000${m.partition}`)) continue; // revoked meanwhile
          this.accept(this.resequencer.push(m as Kafka.Message & ConsumedMessage));
        }
      }
      setImmediate(() => this.fetch());
    });
  }

  private accept(released: Release<Kafka.Message & ConsumedMessage>[]): void {
    for (const r of released) {
      const tp = `${r.message.topic}\u0000${r.message.partition}`;
      let set = this.unhandled.get(tp);
      if (!set) this.unhandled.set(tp, (set = new Set()));
      set.add(r.message.offset);
      this.queue.push(r);
    }
    if (this.queue.length >= this.options.maxPending && !this.paused) this.setPaused(true);
    if (!this.working) void this.work();
  }

  private async work(): Promise<void> {
    this.working = true;
    try {
      while (this.queue.length > 0) {
        const r = this.queue.shift()!;
        const info: HandledInfo = r.outOfOrder ? { outOfOrder: true, reason: r.reason } : { outOfOrder: false };
        try {
          await this.handler!(r.message, info);
        } catch (err) {
          // The message stays unhandled: its offset is never committed past, so it is read again after a restart.
          this.emit('error', err);
          continue;
        }
        this.unhandled.get(`${r.message.topic}\u0000${r.message.partition}`)?.delete(r.message.offset);
        if (this.paused && this.queue.length <= this.options.maxPending / 2) this.setPaused(false);
      }
    } finally {
      this.working = false;
    }
  }

  private setPaused(paused: boolean): void {
    const partitions = [...this.assigned.values()].map(({ topic, partition }) => ({ topic, partition }));
    if (partitions.length > 0) {
      if (paused) this.client.pause(partitions);
      else this.client.resume(partitions);
    }
    this.paused = paused;
    this.emit(paused ? 'paused' : 'resumed');
  }

  /** The offset that may be committed for a partition: below every message held or not yet handled. */
  safeOffset(topic: string, partition: number): number | undefined {
    let offset = this.resequencer.committable(topic, partition);
    const pending = this.unhandled.get(`${topic}\u0000${partition}`);
    if (pending) for (const o of pending) if (offset === undefined || o < offset) offset = o;
    return offset;
  }

  /**
   * Commits the safe offset of each partition (all assigned ones by default). Periodic commits
   * are asynchronous, and skip partitions whose offset did not move: a synchronous commit
   * blocks the event loop, for seconds while the group rebalances. Those on revoke and stop
   * are synchronous, so that the next owner starts where this consumer left off.
   */
  private commitHandled(partitions: TopicPartitionOffset[] | undefined, sync: boolean): void {
    const offsets: TopicPartitionOffset[] = [];
    for (const { topic, partition } of partitions ?? [...this.assigned.values()]) {
      const offset = this.safeOffset(topic, partition);
      const tp = `${topic}\u0000${partition}`;
      if (offset === undefined || (!sync && this.lastCommitted.get(tp) === offset)) continue;
      offsets.push({ topic, partition, offset });
      this.lastCommitted.set(tp, offset);
    }
    if (offsets.length === 0) return;
    try {
      if (sync) {
        this.client.commitSync(offsets as Kafka.TopicPartitionOffset[]);
        this.emit('committed', offsets);
      } else {
        this.client.commit(offsets as Kafka.TopicPartitionOffset[]);
      }
    } catch (err: any) {
      this.commitDone(err, offsets, false);
    }
  }

  /** The result of a commit: 'committed', or 'error' (and the offsets are committed again next time). */
  private commitDone(err: any, offsets: TopicPartitionOffset[], periodic: boolean): void {
    const list = (offsets ?? []).map(({ topic, partition, offset }) => ({ topic, partition, offset }));
    if (!err) {
      this.emit('committed', list);
      return;
    }
    for (const { topic, partition, offset } of list) {
      const tp = `${topic}\u0000${partition}`;
      if (this.lastCommitted.get(tp) === offset) this.lastCommitted.delete(tp);
    }
    // A periodic commit refused because the group is rebalancing is simply made again next time.
    if (periodic && (err?.code === Kafka.CODES.ERRORS.ERR_ILLEGAL_GENERATION || err?.code === Kafka.CODES.ERRORS.ERR_REBALANCE_IN_PROGRESS)) return;
    this.emit('error', new KafkaError(`commit: ${err?.message ?? err}`, err?.code, err));
  }

  /**
   * Forgets partitions that leave: what is held or not yet handled of them is dropped (their
   * next owner reads it again from the committed offset), and nothing remembered of them is
   * committed if they come back.
   */
  private forget(partitions: TopicPartitionOffset[]): void {
    const gone = new Set<string>();
    for (const { topic, partition } of partitions) {
      const tp = `${topic}\u0000${partition}`;
      gone.add(tp);
      this.assigned.delete(tp);
      this.unhandled.delete(tp);
      this.lastCommitted.delete(tp);
      this.resequencer.forget(topic, partition);
    }
    let kept = 0;
    for (const r of this.queue) if (!gone.has(`${r.message.topic}\u0000${r.message.partition}`)) this.queue[kept++] = r;
    this.queue.length = kept;
    if (this.paused && this.queue.length <= this.options.maxPending / 2) this.setPaused(false);
  }

  /** Incremental (cooperative) rebalancing: only the partitions that move are touched. */
  private rebalance(err: any, assignment: TopicPartitionOffset[]): void {
    const cooperative = this.client.rebalanceProtocol() === 'COOPERATIVE';
    if (err.code === Kafka.CODES.ERRORS.ERR__ASSIGN_PARTITIONS) {
      for (const tp of assignment) this.assigned.set(`${tp.topic}\u0000${tp.partition}`, { topic: tp.topic, partition: tp.partition });
      if (cooperative) this.client.incrementalAssign(assignment);
      else this.client.assign(assignment);
      if (this.paused) this.client.pause(assignment.map(({ topic, partition }) => ({ topic, partition })));
      this.emit('assigned', assignment);
    } else if (err.code === Kafka.CODES.ERRORS.ERR__REVOKE_PARTITIONS) {
      // Commit what is safe for the partitions leaving (stop() already did, if stopping); what
      // is held or unhandled for them is read again by their next owner (at-least-once).
      if (this.running) this.commitHandled(assignment, true);
      this.forget(assignment);
      if (cooperative) this.client.incrementalUnassign(assignment);
      else this.client.unassign();
      this.emit('revoked', assignment);
    } else {
      this.emit('error', new KafkaError(`rebalance: ${err.message}`, err.code, err));
    }
  }

  /** Stops fetching, lets the handler finish what was released, commits, and disconnects. */
  async stop(timeoutMs = 30_000): Promise<void> {
    if (!this.running) return;
    this.running = false;
    const deadline = Date.now() + timeoutMs;
    while ((this.working || this.queue.length > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    this.commitHandled(undefined, true);
    await new Promise<void>((resolve) => this.client.disconnect(() => resolve()));
    this.emit('stopped');
  }
}
