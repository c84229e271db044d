// Where a DynamicConsumer's dead letters go (its `deadLetter` option; src/delivery/failed-calls.ts writes them): through the
// DynamicProducer given, the transaction's producer (the write belongs to the transaction), or one the consumer makes from
// its own connection settings, connected at the first dead letter and disconnected when the run ends.

import type * as Kafka from 'node-rdkafka';
import type { Config } from '../core/config';
import { InvalidOptionError } from '../core/errors';
import type { ResolvedDeadLetter } from '../core/failure-options';
import { type DeadLetterProducer, isDynamicProducer, producerSink } from '../delivery/dead-letters';
import type { DeadLetterSink } from '../delivery/port';
import { DynamicProducer } from '../producer/producer';

/** The consumer's settings a producer it makes takes: how to reach and log in to the cluster, and how it logs. */
const CONNECTION = /^(bootstrap\.servers|metadata\.broker\.list|client\.id|client\.rack|security\.protocol|ssl[._.]|sasl[._.]|oauthbearer_|enable\.ssl\.|enable\.sasl\.|https?\.|broker\.address\.|broker\.version\.fallback|api\.version\.|socket\.|reconnect\.backoff|connections\.max\.idle\.ms|log_level|log\.|debug$)/;

/** A made producer's wait for a write before it fails (librdkafka's message.timeout.ms; its default, 300 s, would park a key that long unseen). */
const WRITE_TIMEOUT_MS = 30_000;

/** How long a made producer's disconnect waits for writes under way (ms). */
const CLOSE_MS = 5000;

/** The sink of a DynamicConsumer's dead letters, with what ends it (a producer it made is disconnected). */
export interface ConsumerDeadLetters {
  readonly sink: DeadLetterSink<Kafka.Message>;
  /** The run ended: a producer the consumer made is disconnected (the next dead letter makes another). */
  close(): Promise<void>;
}

/**
 * The sink of `deadLetter`: through its producer (a DynamicProducer), else the transaction's, else one made from
 * `globalConfig`'s connection settings. A producer that is not a DynamicProducer, or one other than the transaction's, is an
 * InvalidOptionError.
 */
export function consumerDeadLetters(deadLetter: ResolvedDeadLetter, globalConfig: Config, transactionProducer: object | undefined): ConsumerDeadLetters {
  const given = deadLetter.producer;
  if (given !== undefined && !isDynamicProducer(given)) {
    throw new InvalidOptionError('options.deadLetter.producer', 'a DynamicProducer (or absent: the consumer makes one)', given);
  }
  if (given !== undefined && transactionProducer !== undefined && given !== transactionProducer) {
    throw new InvalidOptionError('options.deadLetter.producer', "options.transaction.producer, or absent", given,
      'options.deadLetter.producer: under options.transaction the dead letters are written in the transaction, through its producer: leave deadLetter.producer out');
  }
  const parts = (m: Kafka.Message) => ({ key: m.key, value: m.value, headers: m.headers });
  const fixed = (given ?? transactionProducer) as DeadLetterProducer | undefined;
  if (fixed !== undefined) return { sink: producerSink(deadLetter.topic, () => Promise.resolve(fixed), parts), close: () => Promise.resolve() };
  const made = new MadeProducer(globalConfig);
  return { sink: producerSink(deadLetter.topic, () => made.get(), parts), close: () => made.close() };
}

/** A producer made from the consumer's connection settings, at the first write; after a failed connect, the next write tries again. */
class MadeProducer {
  private producer: DynamicProducer | undefined;
  private connecting: Promise<DynamicProducer> | undefined;

  constructor(private readonly globalConfig: Config) {}

  get(): Promise<DynamicProducer> {
    if (this.connecting !== undefined) return this.connecting;
    const config: Config = { 'message.timeout.ms': WRITE_TIMEOUT_MS };
    for (const [name, value] of Object.entries(this.globalConfig)) if (CONNECTION.test(name)) config[name] = value;
    // Never spread: each key's dead letters stay on Kafka's partition for it, in order, with no order header of their own.
    const producer = new DynamicProducer(config, {}, { spread: false });
    this.producer = producer;
    const connecting = producer.connect().then(() => producer, (err) => {
      if (this.connecting === connecting) this.connecting = undefined;
      producer.disconnect().catch(() => undefined);
      throw err;
    });
    this.connecting = connecting;
    return connecting;
  }

  async close(): Promise<void> {
    const producer = this.producer;
    this.producer = undefined;
    this.connecting = undefined;
    if (producer !== undefined) await producer.disconnect(CLOSE_MS).catch(() => undefined);
  }
}
