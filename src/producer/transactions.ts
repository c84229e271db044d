// DynamicProducer's transactions (KIP-98; KIP-447's fencing through the consumer group's metadata), under
// node-rdkafka's names: on the native engine's one handle, or node-rdkafka's own Producer (engine 'client', a
// wrapped producer). One call at a time, each allowed only where librdkafka's state machine allows it:
//
//   uninitialized → initTransactions → ready → beginTransaction → open → commitTransaction / abortTransaction → ready
//                                                                  open (must abort): abortTransaction only
//   any → fatal (fenced: nothing more)
//
// Messages are taken only while a transaction is open (take/intake.ts reads `outside`). A commit or an abort
// first hands over every message the producer still holds (the caller's `handOver`), so that each one is in
// the transaction it was produced in: delivered with its commit, or failed with its abort, never silently lost.

import { EventEmitter } from 'node:events';
import { InvalidArgTypeError, StateError, TransactionError, type TransactionErrorKind, checkTimeout } from '../core/errors';

/** librdkafka's codes the messages below name. */
const ERR__FENCED = -144;
const ERR_PRODUCER_FENCED = 90;
const ERR_INVALID_PRODUCER_EPOCH = 47;

type Callback = (err: any) => void;

/** The transactional calls of the client underneath: node-rdkafka's Producer, or the native engine's (src/native/produce.ts). */
export interface TransactionalClient {
  initTransactions(timeoutMs: number, cb: Callback): void;
  beginTransaction(cb: Callback): void;
  commitTransaction(timeoutMs: number, cb: Callback): void;
  abortTransaction(timeoutMs: number, cb: Callback): void;
  sendOffsetsToTransaction(offsets: TransactionOffset[], consumer: unknown, timeoutMs: number, cb: Callback): void;
}

/** An offset sent to a transaction: the next message to read of a partition, with the metadata committed with it. */
export interface TransactionOffset {
  topic: string;
  partition: number;
  offset: number;
  metadata?: string;
}

/**
 * A consumer whose offsets go to a transaction (DynamicConsumer): its client (the native engine's consumer, or
 * node-rdkafka's KafkaConsumer), and its safe offsets, each with its handled record.
 */
export interface TransactionSource {
  readonly engine: 'native' | 'client';
  readonly client: object;
  transactionOffsets(): TransactionOffset[];
}

/** Whether `value` is a TransactionSource (a DynamicConsumer). */
export function isTransactionSource(value: unknown): value is TransactionSource {
  return typeof value === 'object' && value !== null && typeof (value as TransactionSource).transactionOffsets === 'function';
}

type State = 'uninitialized' | 'ready' | 'open' | 'fatal';

/** Why messages are not taken, by state (undefined: they are). */
const OUTSIDE: Record<State, string | undefined> = {
  uninitialized: 'this producer has transactional.id: call initTransactions() and beginTransaction() before producing',
  ready: 'no transaction is open: call beginTransaction() before producing (this producer has transactional.id)',
  open: undefined,
  fatal: 'this producer was fenced or failed for good (a TransactionError of kind "fatal"): disconnect it and make a new one',
};

export interface TransactionHooks {
  /** Whether the producer is connected (a transactional call needs it). */
  connected(): boolean;
  /** Every message the producer holds is handed to librdkafka (within `timeoutMs`): before a commit or an abort. */
  handOver(timeoutMs: number): Promise<void>;
  /** Messages are taken (undefined) or refused with this reason. */
  outside(reason: string | undefined): void;
  /** New messages wait (`true`, counted) for the next transaction, or go (`false`, the last of the holds). */
  hold(on: boolean): void;
  /** Reads the delivery reports librdkafka has (after a commit or an abort). */
  poll(): void;
  /** What was produced is written for good (initialized, or a commit): spread keys' chains go on from here. */
  written(): void;
  /** A transaction aborted: spread keys' chains go back to what was written. */
  aborted(): void;
}

export class Transactions {
  private state: State = 'uninitialized';
  /** The open transaction failed in a way only an abort mends. */
  private mustAbort = false;
  /** The call under way (one at a time). */
  private busy: string | undefined;
  /** The consumer whose `transaction` option names this producer (one at most). */
  private owner: object | undefined;

  constructor(
    private readonly client: TransactionalClient,
    /** The native engine's client (else node-rdkafka's Producer): what sendOffsetsToTransaction() takes as its consumer. */
    private readonly native: boolean,
    private readonly hooks: TransactionHooks,
  ) {
    hooks.outside(OUTSIDE.uninitialized);
  }

  /** Whether a transaction is open (and may still commit). */
  get open(): boolean {
    return this.state === 'open' && !this.mustAbort;
  }

  /** A producer's transactions: undefined without `config['transactional.id']`. */
  static of(client: TransactionalClient, native: boolean, config: Record<string, unknown> | undefined, hooks: TransactionHooks): Transactions | undefined {
    const id = config?.['transactional.id'];
    return id === undefined || id === '' ? undefined : new Transactions(client, native, hooks);
  }

  /**
   * A consumer's transaction ends (its `transaction` option): from now until releaseHeld(), new messages wait, for the
   * next transaction, while the handler calls that produce them go on during the commit. @internal
   */
  holdNew(): void {
    this.hooks.hold(true);
  }

  /** Ends a holdNew(): what waited goes, into the transaction then open (refused if none is). @internal */
  releaseHeld(): void {
    this.hooks.hold(false);
  }

  /** Whether a transaction is open, may it commit or must it abort. */
  get inside(): boolean {
    return this.state === 'open';
  }

  /** Whether initTransactions() succeeded and the producer is not fenced. */
  get initialized(): boolean {
    return this.state === 'ready' || this.state === 'open';
  }

  /** `consumer` commits through this producer (DynamicConsumer's `transaction` option); a second one is refused. */
  bind(consumer: object, name: string): void {
    if (this.owner !== undefined && this.owner !== consumer) {
      throw new StateError(`${name}: this producer already commits the transactions of another consumer: give each consumer a transactional producer of its own (its own transactional.id)`);
    }
    this.owner = consumer;
  }

  unbind(consumer: object): void {
    if (this.owner === consumer) this.owner = undefined;
  }

  initTransactions(timeoutMs: number): Promise<void> {
    return this.call('initTransactions()', timeoutMs, ['uninitialized'], async () => {
      await this.run((cb) => this.client.initTransactions(timeoutMs, cb), 'initTransactions()');
      this.hooks.written();
      this.to('ready');
    });
  }

  beginTransaction(): Promise<void> {
    return this.call('beginTransaction()', 0, ['ready'], async () => {
      await this.run((cb) => this.client.beginTransaction(cb), 'beginTransaction()');
      this.to('open');
    });
  }

  async sendOffsetsToTransaction(offsets: TransactionOffset[] | undefined, consumer: object, timeoutMs: number): Promise<void> {
    const { list, group } = offsetsFor(offsets, consumer, this.native);
    return this.call('sendOffsetsToTransaction()', timeoutMs, ['open'], async () => {
      if (list.length === 0) return;
      await this.run((cb) => this.client.sendOffsetsToTransaction(list, group, timeoutMs, cb), 'sendOffsetsToTransaction()');
    });
  }

  commitTransaction(timeoutMs: number): Promise<void> {
    return this.call('commitTransaction()', timeoutMs, ['open'], async () => {
      // What was taken before goes in this transaction; nothing is taken while the commit is under way (librdkafka refuses
      // a message between commit and begin), unless a consumer's transaction holds new messages for the next (holdNew()).
      await this.ending('commitTransaction()', timeoutMs, 'committed', false, (ms, cb) => this.client.commitTransaction(ms, cb));
      this.hooks.written();
      this.to('ready');
    });
  }

  abortTransaction(timeoutMs: number): Promise<void> {
    return this.call('abortTransaction()', timeoutMs, ['open'], async () => {
      // Handed over, each held message gets its report: purged by the abort (ERR__PURGE_QUEUE).
      await this.ending('abortTransaction()', timeoutMs, 'aborted', true, (ms, cb) => this.client.abortTransaction(ms, cb));
      this.hooks.aborted();
      this.mustAbort = false;
      this.to('ready');
    }, true);
  }

  /**
   * A transaction's end: every message held is handed over (`anyway`: a failure to is no failure of the end), then no
   * new one is taken while `end` runs with what is left of `timeoutMs`; the reports it brought are read after.
   */
  private async ending(name: string, timeoutMs: number, doing: string, anyway: boolean, end: (ms: number, cb: Callback) => void): Promise<void> {
    const since = performance.now();
    try {
      const handedOver = this.hooks.handOver(timeoutMs);
      await (anyway ? handedOver.catch(() => undefined) : handedOver);
      this.hooks.outside(`a transaction is being ${doing}: produce after the next beginTransaction()`);
      await this.run((cb) => end(Math.max(1, timeoutMs - (performance.now() - since)), cb), name);
    } finally {
      this.hooks.poll();
      this.hooks.outside(OUTSIDE[this.state]);
    }
  }

  /**
   * Runs one transactional call: refused (a StateError naming the fix) unless connected, no other
   * call is under way and the state is one of `from`; its failure as a TransactionError.
   */
  private async call(name: string, timeoutMs: number, from: readonly State[], run: () => Promise<void>, aborting = false): Promise<void> {
    checkTimeout('timeoutMs', timeoutMs);
    if (this.state === 'fatal') throw new TransactionError(`${name}: ${OUTSIDE.fatal}`, 'fatal', undefined);
    if (!this.hooks.connected()) throw new StateError(`${name} before connect() (or after disconnect())`);
    if (this.busy !== undefined) throw new StateError(`${name} while ${this.busy} is under way: transactional calls go one at a time`);
    if (!from.includes(this.state)) throw new StateError(`${name} ${name === 'initTransactions()' ? 'was called already' : misplaced(this.state)}`);
    if (this.mustAbort && !aborting) {
      throw new TransactionError(`${name}: the open transaction failed and cannot commit: call abortTransaction(), then beginTransaction()`, 'abortable', undefined);
    }
    this.busy = name;
    try {
      await run();
    } finally {
      this.busy = undefined;
    }
  }

  /** A call of the client, its failure classified; a fatal or abortable one changes the state. */
  private run(call: (cb: Callback) => void, name: string): Promise<void> {
    return new Promise((resolve, reject) => {
      try {
        call((err) => (err ? reject(this.failed(err, name)) : resolve()));
      } catch (err) {
        reject(this.failed(err, name));
      }
    });
  }

  private failed(err: any, name: string): TransactionError {
    const kind = kindOf(err, this.state === 'open');
    if (kind === 'fatal') this.to('fatal');
    else if (kind === 'abortable' && this.state === 'open') this.mustAbort = true;
    const code = typeof err?.code === 'number' ? err.code : undefined;
    const message = typeof err?.message === 'string' ? err.message : String(err);
    return new TransactionError(`${name}: ${message}${fenced(code) ? ' (fenced: another producer took this transactional.id, or the group moved on)' : ''}: ${WHAT_TO_DO[kind]}`, kind, code, err);
  }

  private to(state: State): void {
    this.state = state;
    this.hooks.outside(OUTSIDE[state]);
  }
}

/** DynamicProducer's transactional calls (its base class), over its Transactions (set by its constructor). */
export abstract class TransactionCalls extends EventEmitter {
  /** With transactional.id: the transactions; undefined without. */
  protected transactions: Transactions | undefined;

  /** This producer's transactions, for a consumer's `transaction` option (undefined without transactional.id). @internal */
  get transactionsOf(): Transactions | undefined {
    return this.transactions;
  }

  /** `act` on the transactions of a producer with transactional.id; without, a StateError naming the setting. */
  private transactional(call: string, act: (transactions: Transactions) => Promise<void>): Promise<void> {
    const t = this.transactions;
    return t !== undefined ? act(t) : Promise.reject(new StateError(`${call} needs globalConfig['transactional.id'] (unique per producing instance)`));
  }

  // Transactions under node-rdkafka's names (transactions.ts, docs/exactly-once.md): each rejects with a TransactionError
  // whose `kind` says what to do, or a StateError for a call out of place.

  /** Once, after connect(): fences an earlier producer of this transactional.id and ends what it left open. */
  initTransactions(timeoutMs = 30_000): Promise<void> {
    return this.transactional('initTransactions()', (t) => t.initTransactions(timeoutMs));
  }

  /** Opens a transaction: what is produced until its commit or abort is in it. */
  beginTransaction(): Promise<void> {
    return this.transactional('beginTransaction()', (t) => t.beginTransaction());
  }

  /** Consumed offsets into the open transaction: of a DynamicConsumer (`offsets` undefined: its own, with records) or a KafkaConsumer. */
  sendOffsetsToTransaction(offsets: TransactionOffset[] | undefined, consumer: object, timeoutMs = 30_000): Promise<void> {
    return this.transactional('sendOffsetsToTransaction()', (t) => t.sendOffsetsToTransaction(offsets, consumer, timeoutMs));
  }

  /** Hands over every message held here, then commits them, with the offsets sent, for read_committed readers. */
  commitTransaction(timeoutMs = 30_000): Promise<void> {
    return this.transactional('commitTransaction()', (t) => t.commitTransaction(timeoutMs));
  }

  /** Aborts the open transaction: its messages are not written (their send() promises reject), its offsets not committed. */
  abortTransaction(timeoutMs = 30_000): Promise<void> {
    return this.transactional('abortTransaction()', (t) => t.abortTransaction(timeoutMs));
  }
}

/**
 * The offsets (checked) and the consumer argument of the client's call: on the native engine a native consumer's
 * handle (KIP-447's group metadata), or a group id alone; on node-rdkafka's Producer its own KafkaConsumer.
 */
function offsetsFor(offsets: TransactionOffset[] | undefined, consumer: object, native: boolean): { list: TransactionOffset[]; group: unknown } {
  const source = isTransactionSource(consumer) ? consumer : undefined;
  const client = (source?.client ?? consumer) as { globalConfig?: Record<string, unknown>; groupHandle?: object; getClient?: unknown } | null;
  if (typeof client !== 'object' || client === null) throw new InvalidArgTypeError('consumer', 'a DynamicConsumer or a node-rdkafka KafkaConsumer', consumer);
  let list = offsets;
  if (list === undefined) {
    if (source === undefined) throw new InvalidArgTypeError('offsets', 'an array of { topic, partition, offset } (undefined only with a DynamicConsumer)', offsets);
    list = source.transactionOffsets();
  }
  if (!Array.isArray(list)) throw new InvalidArgTypeError('offsets', 'an array of { topic, partition, offset, metadata? }', list);
  for (let i = 0; i < list.length; i++) {
    const o = list[i];
    if (typeof o !== 'object' || o === null || typeof o.topic !== 'string' || !Number.isInteger(o.partition) || o.partition < 0 || !Number.isSafeInteger(o.offset) || o.offset < 0) {
      throw new InvalidArgTypeError(`offsets[${i}]`, 'an object { topic, partition, offset } (an offset of 0 or more: the next to read)', o);
    }
    if (o.metadata !== undefined && typeof o.metadata !== 'string') throw new InvalidArgTypeError(`offsets[${i}].metadata`, 'a string', o.metadata);
  }
  if (!native) {
    if (typeof client.getClient !== 'function') {
      throw new StateError("sendOffsetsToTransaction(): this producer runs on engine 'client', which needs a node-rdkafka KafkaConsumer: run the consumer on engine 'client' too, or both on the native engine");
    }
    return { list, group: client };
  }
  if (client.groupHandle !== undefined) return { list, group: { handle: client.groupHandle, groupId: '' } };
  const groupId = client.globalConfig?.['group.id'];
  if (typeof groupId !== 'string' || groupId === '') throw new InvalidArgTypeError('consumer', "a consumer of a group (globalConfig['group.id'])", consumer);
  return { list, group: { handle: null, groupId } };
}

const WHAT_TO_DO: Record<TransactionErrorKind, string> = {
  retriable: 'the call may be made again',
  abortable: 'call abortTransaction(), then beginTransaction() (what the transaction held is not written)',
  fatal: 'this producer can go on no more: disconnect it and make a new one',
};

/** librdkafka's class of a transactional call's error; one it does not class is abortable inside a transaction, else retriable. */
export function kindOf(err: any, inTransaction: boolean): TransactionErrorKind {
  if (err?.isFatal === true) return 'fatal';
  if (err?.isTxnRequiresAbort === true) return 'abortable';
  if (err?.isRetriable === true) return 'retriable';
  return inTransaction ? 'abortable' : 'retriable';
}

function fenced(code: number | undefined): boolean {
  return code === ERR__FENCED || code === ERR_PRODUCER_FENCED || code === ERR_INVALID_PRODUCER_EPOCH;
}

function misplaced(state: State): string {
  switch (state) {
    case 'uninitialized': return 'before initTransactions()';
    case 'ready': return 'while no transaction is open: call beginTransaction() first';
    case 'open': return 'while a transaction is open: commitTransaction() or abortTransaction() first';
    default: return 'after a fatal error';
  }
}
