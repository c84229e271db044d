// DynamicConsumer's `transaction` option: its commits go into a DynamicProducer's transactions (the engine's
// side: src/delivery/transacted.ts). The producer is checked once, at construction: transactional, on the
// consumer's engine (node-rdkafka's sendOffsetsToTransaction takes its own KafkaConsumer only), and taken by
// one consumer at a time (one producer per consumer instance: KIP-447).

import { InvalidOptionError, StateError, TransactionError } from '../core/errors';
import type { PartitionOffset } from '../delivery/dispatch-types';
import type { TransactionFailure, TransactionSink } from '../delivery/port';
import type { DynamicProducer } from '../producer/producer';
import type { Transactions, TransactionSource } from '../producer/transactions';

/** How long each transactional call may take (ms); one that times out is retriable. */
const CALL_TIMEOUT_MS = 30_000;

export class ProducerTransactions implements TransactionSink {
  private readonly transactions: Transactions;

  constructor(
    private readonly producer: DynamicProducer,
    readonly intervalMs: number,
    private readonly consumer: TransactionSource,
  ) {
    const transactions = producer.transactionsOf;
    if (transactions === undefined) {
      throw new InvalidOptionError('options.transaction.producer', "a DynamicProducer with globalConfig['transactional.id'] (unique per consumer instance)", producer);
    }
    if (producer.engine !== consumer.engine) {
      throw new InvalidOptionError('options.transaction.producer', `a producer on this consumer's engine ('${consumer.engine}'): node-rdkafka's own transactions take its own KafkaConsumer only`, producer, `options.transaction.producer runs on engine '${producer.engine}' and this consumer on '${consumer.engine}': give both the same engine option`);
    }
    this.transactions = transactions;
  }

  /** The consumer takes the producer (a StateError if another consumer holds it) and a transaction is open; before a run. */
  async open(): Promise<void> {
    this.transactions.bind(this.consumer, 'options.transaction.producer');
    try {
      if (!this.transactions.initialized) await this.producer.initTransactions(CALL_TIMEOUT_MS);
      if (!this.transactions.inside) await this.producer.beginTransaction();
    } catch (err) {
      this.transactions.unbind(this.consumer);
      throw err;
    }
  }

  /** The run ended: another consumer may take the producer. */
  close(): void {
    this.transactions.unbind(this.consumer);
  }

  hold(): void {
    this.transactions.holdNew();
  }

  release(): void {
    this.transactions.releaseHeld();
  }

  async begin(): Promise<void> {
    if (!this.transactions.inside) await this.producer.beginTransaction();
  }

  async commit(offsets: PartitionOffset[], next: boolean): Promise<void> {
    // Committed already, then the next begin failed for a while: only the begin is made again.
    if (this.transactions.inside) {
      if (offsets.length > 0) await this.producer.sendOffsetsToTransaction(offsets as Array<PartitionOffset & { metadata?: string }>, this.consumer, CALL_TIMEOUT_MS);
      await this.producer.commitTransaction(CALL_TIMEOUT_MS);
    }
    if (next) await this.begin();
  }

  async abort(next: boolean): Promise<void> {
    if (this.transactions.inside) await this.producer.abortTransaction(CALL_TIMEOUT_MS);
    if (next) await this.begin();
  }

  failure(error: unknown): TransactionFailure {
    if (error instanceof TransactionError) return error.kind;
    // The producer disconnected, or used by hand meanwhile: nothing this consumer can mend.
    if (error instanceof StateError) return 'fatal';
    return 'abortable';
  }
}
