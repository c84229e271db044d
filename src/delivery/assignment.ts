// The partitions a consumer owns, for every client, and what each change of the group does to
// their messages (the adapter reports the changes: AssignmentEvents, port.ts).
//
//   - assigned: with handled records, nothing of them goes out before their previous owner's
//     record is read (docs/ordering.md, "Order in a group"); what is read meanwhile waits here;
//   - revoked: nothing more of them goes out; what is safe is committed before the client lets
//     them go, after their calls under way end (up to revokeTimeoutMs) where it waits (letGo);
//   - rebalancing (an eager group about to join again): what is safe is committed at once; with
//     rejoin 'restart' nothing new goes out, and it is committed again once the calls are over;
//   - joined: partitions no longer here are revoked; with rejoin 'restart' the kept ones start
//     anew from their committed offsets once their calls are over; new ones are assigned.

import { partitionKey } from '../core/partition-key';
import { type KafkaError, toKafkaError } from '../core/errors';
import type { Commits } from './commits';
import type { Dispatcher } from './dispatch';
import type { CommittedOffset, HandledRecords } from './records';
import type { ConsumedMessage } from './resequencer';
import type { AssignmentEvents, ConsumerPort, TopicPartition } from './port';

/** How long a rejoin waits for the calls under way on the kept partitions before it commits them (ms). */
export const REJOIN_SETTLE_MS = 10_000;
/** Periodic commits wait at most this long for a join after a rebalance began (ms): a change may come without one. */
const REJOIN_HOLD_MS = 10_000;

/** What the rebalances of an eager group did (metrics().rejoins). */
export interface RejoinCounts {
  /** Rebalances met while running. */
  rebalancing: number;
  /** Commits made on them (at once, and once the calls under way were over) that landed, and that were refused or failed. */
  committed: number;
  refused: number;
  /** How long the last of those commits took, from the rebalance to its answer (ms). */
  lastCommitMs: number;
  /** Joins, and how long the last took from the rebalance (ms). */
  joins: number;
  lastJoinMs: number;
  /** Messages skipped because they were below their partition's committed offset when read (handled already). */
  belowCommitted: number;
  /** Commits made again after a refusal for a stale member epoch (KIP-848; commits.ts). */
  staleRetries: number;
}

export interface AssignmentHooks<M> {
  running(): boolean;
  /** Bumped when a run ends: work of an earlier run gives way. */
  generation(): number;
  /** A stop is under way (a revoke it meets still lets its partitions go). */
  stopping(): boolean;
  emit(event: 'assigned' | 'revoked', partitions: TopicPartition[]): void;
  emit(event: 'warning', error: KafkaError): void;
  /** A message read goes to the dispatcher. */
  offer(message: M): void;
  /** Messages were released to the dispatcher. */
  released(): void;
}

export class Assignment<M extends ConsumedMessage> implements AssignmentEvents {
  /** The partitions owned, by partitionKey. */
  readonly owned = new Map<string, TopicPartition>();
  /** Partitions revoked whose calls under way are waited for before they go (still this consumer's to commit). */
  readonly revoking = new Map<string, TopicPartition>();
  /** Per topic, by partition: what a partition owned holds for the messages read of it. */
  private readonly states = new Map<string, Array<Owned<M> | undefined>>();
  /** Partitions whose messages wait (their records being read, or their restart after a join). */
  private readonly waits = new Map<string, Promise<void>>();
  /**
   * Per partition that left, the offset and record this consumer would have committed for it
   * then: its commit may not have landed (a lost assignment: the coordinator out of reach, a
   * KIP-848 member fenced), and when the partition comes back with nothing committed past it,
   * what it handled is not handed out again.
   */
  private readonly left = new Map<string, { offset: number; metadata: string }>();
  /** Since when an eager group rejoins (0: it does not). */
  private rejoiningSince = 0;
  /** Joins so far: work of an earlier one that is still under way gives way. */
  private joins = 0;
  /** rejoin 'keep' (else 'restart'): what the client reads again is dropped here, kept partitions keep what they hold. */
  private readonly keepsReads: boolean;
  /** The commits go into a producer's transaction (transacted.ts). */
  transactional = false;
  readonly counts: Omit<RejoinCounts, 'staleRetries'> = { rebalancing: 0, committed: 0, refused: 0, lastCommitMs: 0, joins: 0, lastJoinMs: 0, belowCommitted: 0 };

  constructor(
    private readonly port: ConsumerPort,
    private readonly dispatch: Dispatcher<M>,
    private readonly commits: Commits<M>,
    private readonly records: HandledRecords<M> | undefined,
    private readonly revokeTimeoutMs: number,
    private readonly hooks: AssignmentHooks<M>,
  ) {
    this.keepsReads = port.rejoin === 'keep';
  }

  has(name: string): boolean {
    return this.owned.has(name);
  }

  /** Between a rebalance and the join: an eager group takes every partition back. */
  get rejoining(): boolean {
    return this.rejoiningSince > 0;
  }

  /** Periodic commits wait (a refusal makes some clients join again), for REJOIN_HOLD_MS at most. */
  holdsCommits(): boolean {
    return this.rejoiningSince > 0 && Date.now() - this.rejoiningSince < REJOIN_HOLD_MS;
  }

  /** What a partition's messages wait for before they go in, if anything. */
  waitOf(name: string): Promise<void> | undefined {
    return this.waits.get(name);
  }

  /**
   * A message read: to the dispatcher, or kept here while its partition waits; false when the
   * partition is not owned; dropped when below its committed offset or, with rejoin 'keep', read already.
   */
  admit(m: M): boolean {
    const state = this.states.get(m.topic)?.[m.partition];
    if (state === undefined) return false;
    if (state.early !== undefined) {
      state.early.push(m);
      this.records?.fetchedEarly();
    } else if (m.offset < state.next) {
      if (m.offset < state.floor) this.counts.belowCommitted++;
    } else {
      if (this.keepsReads) state.next = m.offset + 1;
      if (state.first < 0) state.first = m.offset;
      this.hooks.offer(m);
    }
    return true;
  }

  private stateOf(tp: TopicPartition): Owned<M> | undefined {
    return this.states.get(tp.topic)?.[tp.partition];
  }

  assigned(partitions: TopicPartition[]): void {
    const fresh = partitions.filter(({ topic, partition }) => !this.owned.has(partitionKey(topic, partition)));
    for (const tp of fresh) this.own(tp);
    if (fresh.length === 0) return;
    this.dispatch.assign(fresh);
    if (this.records !== undefined) this.wait(fresh, this.inherit(fresh));
    this.hooks.emit('assigned', fresh);
  }

  revoked(partitions: TopicPartition[], letGo?: () => void): void {
    const leaving = partitions.filter(({ topic, partition }) => this.owned.has(partitionKey(topic, partition)));
    if (letGo === undefined) {
      if (leaving.length === 0) return;
      // Before the client lets them go: their next owner starts where this one left off.
      if (this.hooks.running()) void this.commitLeaving(leaving);
      this.forget(leaving);
      this.hooks.emit('revoked', leaving);
      return;
    }
    for (const tp of leaving) {
      this.disown(tp);
      this.revoking.set(partitionKey(tp.topic, tp.partition), tp);
    }
    this.dispatch.drop(partitions);
    const generation = this.hooks.generation();
    const release = (): void => {
      for (const { topic, partition } of partitions) this.revoking.delete(partitionKey(topic, partition));
      this.forget(partitions);
      letGo();
      this.hooks.emit('revoked', partitions);
    };
    const go = (): void => {
      // Stopped meanwhile (and maybe run again): the stop committed and forgot them.
      if (generation !== this.hooks.generation() && !this.hooks.stopping()) return;
      const commit = this.hooks.running() ? this.commitLeaving(partitions) : undefined;
      // A commit made again (a stale member epoch) lands before the partitions go.
      if (commit === undefined) release();
      else void commit.then(release);
    };
    if (this.dispatch.inFlight === 0) go();
    else void this.dispatch.callsOver(partitions, this.revokeTimeoutMs).then(go);
  }

  /** Commits what is safe of partitions leaving; undefined when there is nothing to commit. */
  private commitLeaving(partitions: TopicPartition[]): Promise<boolean> | undefined {
    const offsets = this.commits.offsetsOf(partitions, false);
    return offsets.length > 0 ? this.commits.commit(offsets, 'revoke') : undefined;
  }

  rebalancing(): void {
    if (!this.hooks.running() || this.rejoiningSince > 0) return;
    this.counts.rebalancing++;
    this.rejoiningSince = Date.now();
    const all = [...this.owned.values()];
    if (all.length === 0) return;
    if (this.keepsReads) {
      this.commitOnRebalance(all, true);
      return;
    }
    const joins = this.joins;
    this.dispatch.drop(all);
    this.commitOnRebalance(all, false);
    // Once the calls under way are over, what they handled too, if the join has not ended yet.
    void this.dispatch.callsOver(all, REJOIN_SETTLE_MS).then(() => {
      if (this.rejoiningSince > 0 && this.joins === joins && this.hooks.running()) this.commitOnRebalance(all, true);
    });
  }

  /** A commit on a rebalance, counted (a refusal is a 'warning': what it held is read again). */
  private commitOnRebalance(partitions: TopicPartition[], onlyMoved: boolean): void {
    const offsets = this.commits.offsetsOf(partitions, onlyMoved);
    if (offsets.length === 0) return;
    const at = this.rejoiningSince;
    void this.commits.commit(offsets, 'revoke').then((landed) => {
      this.counts.lastCommitMs = Date.now() - at;
      if (landed) this.counts.committed++;
      else this.counts.refused++;
    });
  }

  joined(partitions: TopicPartition[]): void {
    if (!this.hooks.running()) return;
    if (this.rejoiningSince > 0) this.counts.lastJoinMs = Date.now() - this.rejoiningSince;
    this.rejoiningSince = 0;
    this.joins++;
    this.counts.joins++;
    const now = new Set(partitions.map(({ topic, partition }) => partitionKey(topic, partition)));
    const old = [...this.owned.values()];
    const leaving = old.filter(({ topic, partition }) => !now.has(partitionKey(topic, partition)));
    const kept = old.filter(({ topic, partition }) => now.has(partitionKey(topic, partition)));
    if (leaving.length > 0) {
      // An eager group's rebalance committed them; a client that keeps reading commits what was handled since.
      if (this.keepsReads) void this.commitLeaving(leaving);
      this.forget(leaving);
      this.hooks.emit('revoked', leaving);
    }
    if (kept.length > 0 && !this.keepsReads) {
      // Without a rebalance first (a client joins again by itself), what waits of them is dropped here.
      this.dispatch.drop(kept);
      this.restart(kept);
    }
    this.assigned(partitions);
  }

  /** Kept partitions after a join, fetched again: once their calls are over, committed, then started anew with their record read back. */
  private restart(kept: TopicPartition[]): void {
    const joins = this.joins;
    const restarted = this.dispatch.callsOver(kept, REJOIN_SETTLE_MS).then(async () => {
      if (this.joins !== joins || !this.hooks.running()) return;
      const offsets = this.commits.offsetsOf(kept, false);
      if (offsets.length > 0) await this.commits.commit(offsets, 'revoke');
      if (this.joins !== joins || !this.hooks.running()) return;
      this.dispatch.forget(kept);
      this.dispatch.assign(kept);
      for (const tp of kept) {
        const state = this.stateOf(tp);
        if (state !== undefined) state.floor = state.next = 0;
      }
      if (this.records !== undefined) await this.inherit(kept);
    });
    this.wait(kept, restarted);
  }

  /**
   * After an aborted transaction: every partition owned is read again from its committed offset (where
   * nothing is committed, from the first offset taken of it), what it held dropped; its record read back.
   * Resolves once they are read again. Calls are not under way (the transaction's barrier).
   */
  rewind(): Promise<void> {
    const partitions = [...this.owned.values()];
    if (!this.hooks.running()) return Promise.resolve();
    if (partitions.length === 0) {
      this.dispatch.forget([...this.revoking.values()]);
      return Promise.resolve();
    }
    const joins = this.joins;
    const firsts = new Map<string, number>();
    for (const tp of partitions) firsts.set(partitionKey(tp.topic, tp.partition), this.stateOf(tp)?.first ?? -1);
    this.dispatch.drop(partitions);
    this.dispatch.forget(partitions);
    this.dispatch.assign(partitions);
    // Partitions leaving: what they handled in the aborted transaction must not be committed by their revoke; nothing
    // of them is, and their next owner reads them from the offset committed last.
    const leaving = [...this.revoking.values()];
    if (leaving.length > 0) this.dispatch.forget(leaving);
    const rewound = this.commits.committedOf(partitions).then(async (read) => {
      if (this.joins !== joins || !this.hooks.running()) return;
      const seeks: Array<{ topic: string; partition: number; offset: number }> = [];
      for (const c of read) {
        const committed = !c.error && typeof c.offset === 'number' && Number.isSafeInteger(c.offset) && c.offset >= 0 ? c.offset : -1;
        const offset = committed >= 0 ? committed : firsts.get(partitionKey(c.topic, c.partition)) ?? -1;
        if (offset >= 0) seeks.push({ topic: c.topic, partition: c.partition, offset });
      }
      if (seeks.length > 0) await this.port.seek!(seeks);
      for (const tp of partitions) {
        const state = this.stateOf(tp);
        if (state === undefined) continue;
        // What was read before the seek comes again after it.
        if (state.early !== undefined) state.early = [];
        state.floor = state.next = 0;
        state.first = -1;
      }
      if (this.records !== undefined) await this.inherit(partitions);
    });
    this.wait(partitions, rewound.catch((err) => {
      if (this.hooks.running()) this.hooks.emit('warning', toKafkaError(err, 'rewind after an aborted transaction'));
    }));
    return rewound;
  }

  /** Messages of `partitions` wait for `until`; then what was read meanwhile goes, and the client fetches them again. */
  private wait(partitions: TopicPartition[], until: Promise<void>): void {
    this.port.pause?.(partitions);
    const generation = this.hooks.generation();
    const done = until.finally(() => {
      const mine: TopicPartition[] = [];
      for (const tp of partitions) {
        const name = partitionKey(tp.topic, tp.partition);
        if (this.waits.get(name) !== done) continue;
        this.waits.delete(name);
        const state = this.stateOf(tp);
        // Stopping, or stopped meanwhile: nothing more of it is taken (read again from the committed offset).
        if (state === undefined || generation !== this.hooks.generation() || !this.hooks.running()) continue;
        const early = state.early;
        state.early = undefined;
        mine.push(tp);
        if (early !== undefined) for (const m of early) this.admit(m);
      }
      if (mine.length > 0) this.port.resume?.(mine);
    });
    for (const tp of partitions) {
      this.waits.set(partitionKey(tp.topic, tp.partition), done);
      const state = this.stateOf(tp);
      if (state !== undefined) state.early ??= [];
    }
  }

  /**
   * Reads the commits of partitions coming here, so that what their previous owner handled is
   * not handed out again; a failed read is a 'warning', and what was handled above the offset comes again.
   */
  private inherit(partitions: TopicPartition[]): Promise<void> {
    const generation = this.hooks.generation();
    return this.commits.committedOf(partitions).then((read) => {
      if (!this.hooks.running() || generation !== this.hooks.generation()) return;
      const offsets = read.map((c) => this.orLeft(c));
      for (const { topic, partition, offset, error } of offsets) {
        const state = this.stateOf({ topic, partition });
        if (!error && typeof offset === 'number' && Number.isSafeInteger(offset) && offset > 0 && state !== undefined) state.floor = state.next = offset;
      }
      this.dispatch.accept(this.records!.inherit(offsets));
      this.hooks.released();
    }, (err) => {
      if (this.hooks.running() && generation === this.hooks.generation()) this.hooks.emit('warning', toKafkaError(err, 'committed'));
    });
  }

  private own(tp: TopicPartition): void {
    this.owned.set(partitionKey(tp.topic, tp.partition), tp);
    let states = this.states.get(tp.topic);
    if (states === undefined) this.states.set(tp.topic, (states = []));
    states[tp.partition] = { early: undefined, floor: 0, next: 0, first: -1 };
  }

  private disown(tp: TopicPartition): void {
    const name = partitionKey(tp.topic, tp.partition);
    this.owned.delete(name);
    this.waits.delete(name);
    const states = this.states.get(tp.topic);
    if (states !== undefined) states[tp.partition] = undefined;
  }

  /** Whether `tp` is owned and not paused for its previous owner's record: reading it may go on. */
  mayRead(tp: TopicPartition): boolean {
    const name = partitionKey(tp.topic, tp.partition);
    return this.owned.has(name) && !this.waits.has(name);
  }

  /** Partitions leave: what is held or waits of them is dropped (read again by their next owner). */
  private forget(partitions: TopicPartition[]): void {
    const records = this.records;
    // In a transaction, what was handled counts only once its commit lands: nothing is remembered before.
    if (records !== undefined && !this.transactional) {
      for (const { topic, partition } of partitions) {
        const offset = this.dispatch.ledger.safeOffset(topic, partition);
        if (offset !== undefined) this.left.set(partitionKey(topic, partition), { offset, metadata: records.textOf(topic, partition, offset) });
      }
    }
    for (const tp of partitions) this.disown(tp);
    this.dispatch.forget(partitions);
  }

  /** A partition's committed offset as read, or what this consumer had handled of it when it left, when that is further on. */
  private orLeft(c: CommittedOffset): CommittedOffset {
    const name = partitionKey(c.topic, c.partition);
    const mine = this.left.get(name);
    if (mine === undefined) return c;
    this.left.delete(name);
    const offset = typeof c.offset === 'number' && Number.isSafeInteger(c.offset) ? c.offset : -1;
    return !c.error && offset <= mine.offset ? { topic: c.topic, partition: c.partition, offset: mine.offset, metadata: mine.metadata } : c;
  }

  /** The run ended: nothing is owned. */
  clear(): void {
    this.left.clear();
    this.dispatch.forget([...this.owned.values(), ...this.revoking.values()]);
    this.owned.clear();
    this.revoking.clear();
    this.waits.clear();
    this.states.clear();
    this.rejoiningSince = 0;
    this.joins++;
  }
}

/** What a partition owned holds for the messages read of it. */
interface Owned<M> {
  /** Read while the partition waits: they go when it is over. */
  early: M[] | undefined;
  /** The committed offset read when it came here: a message below it was handled already. */
  floor: number;
  /** The offset below which a message read is dropped: the floor, or (rejoin 'keep') past the last read. */
  next: number;
  /** The first offset taken since it came here (or was read again): where a rewind goes when nothing is committed (-1: none). */
  first: number;
}
