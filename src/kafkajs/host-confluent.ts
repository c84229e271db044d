// The host (consumer-host.ts) of Confluent's KafkaJS-compatible consumer, @confluentinc/kafka-javascript's `new KafkaJS.Kafka(...).consumer()`.
// It takes a rebalance_cb only from the config it was built with, so the changes come from its internal client's 'rebalance' events,
// emitted before it assigns or unassigns (sometimes twice): on revoke, that client's commitSync() commits before the partitions go.

import { InvalidOptionError, StateError, toKafkaError } from '../core/errors';
import type { GroupProtocol } from '../core/group-protocol';
import type { PartitionOffset } from '../delivery/dispatch';
import type { CommittedOffset } from '../delivery/records';
import { ConsumerHost, type HostEvents, type TopicPartition } from './consumer-host';
import type { ConfluentConsumerLike, InternalClient, KafkaJsBatchPayload, KafkaJsSubscription } from './consumer-types';

// librdkafka's codes of a rebalance callback.
const ERR__ASSIGN_PARTITIONS = -175;
const ERR__REVOKE_PARTITIONS = -174;

/** Whether `consumer` is Confluent's KafkaJS consumer (it has an internal client). */
export function isConfluentConsumer(consumer: unknown): consumer is ConfluentConsumerLike {
  const c = consumer as Partial<ConfluentConsumerLike> | null;
  return typeof c === 'object' && c !== null && typeof c.connect === 'function' && typeof c.run === 'function' &&
    typeof c.commitOffsets === 'function' && typeof c.committed === 'function' && typeof c._getInternalClient === 'function';
}

export class ConfluentHost extends ConsumerHost {
  readonly name = "Confluent's KafkaJS consumer";
  readonly runsAgain = false;
  private client: InternalClient | null = null;
  private events: HostEvents | undefined;
  private readonly onRebalance = (err: { code?: number } | undefined, assignment: TopicPartition[]) => {
    const partitions = (assignment ?? []).map(({ topic, partition }) => ({ topic, partition }));
    if (err?.code === ERR__ASSIGN_PARTITIONS) this.events?.assigned(partitions);
    else if (err?.code === ERR__REVOKE_PARTITIONS) this.events?.revoked(partitions);
  };

  /** `groupProtocol`: what the application expects the consumer to join with (its configuration's 'group.protocol' must say so). */
  constructor(private readonly consumer: ConfluentConsumerLike, private readonly groupProtocol?: GroupProtocol) {
    super();
  }

  /** Connects (unless connected); a consumer configured to commit by itself is disconnected again and refused. */
  async connect(events: HostEvents): Promise<void> {
    try {
      const client = this.consumer._getInternalClient();
      if (!client || client.isConnected?.() !== true) await this.consumer.connect();
    } catch (err) {
      throw toKafkaError(err, 'connect');
    }
    const client = this.consumer._getInternalClient();
    const autoCommit = client?.globalConfig?.['enable.auto.commit'];
    if (!client || typeof client.on !== 'function' || autoCommit !== false) {
      await this.consumer.disconnect().catch(() => undefined);
      if (!client || typeof client.on !== 'function') throw new StateError("the consumer has no internal client after connect() (not Confluent's KafkaJS consumer?)");
      throw new InvalidOptionError("the consumer's kafkaJS.autoCommit", 'false (or enable.auto.commit false): offsets are committed here, only below what was handled', autoCommit ?? 'absent (librdkafka commits by itself by default)');
    }
    const protocol = String(client.globalConfig?.['group.protocol'] ?? 'classic').toLowerCase();
    if (this.groupProtocol !== undefined && protocol !== this.groupProtocol) {
      await this.consumer.disconnect().catch(() => undefined);
      throw new InvalidOptionError('options.groupProtocol', `'${protocol}', the consumer's 'group.protocol'`, this.groupProtocol,
        `options.groupProtocol '${this.groupProtocol}': the consumer joins with '${protocol}' (set 'group.protocol' in its configuration, beside kafkaJS: {...})`);
    }
    this.client = client;
    this.events = events;
    client.on('rebalance', this.onRebalance);
  }

  subscribe(subscription: KafkaJsSubscription): Promise<void> {
    return this.consumer.subscribe(subscription);
  }

  run(eachBatch: (payload: KafkaJsBatchPayload) => Promise<void>): Promise<void> {
    return this.consumer.run({ eachBatch, eachBatchAutoResolve: false });
  }

  protected commitOffsets(offsets: PartitionOffset[]): Promise<void> {
    return this.consumer.commitOffsets(offsets.map(({ topic, partition, offset, metadata }) =>
      (metadata === undefined ? { topic, partition, offset: String(offset) } : { topic, partition, offset: String(offset), metadata })));
  }

  protected override commitNow(offsets: PartitionOffset[]): void {
    const client = this.client;
    if (typeof client?.commitSync !== 'function') throw new StateError('the consumer has no client to commit with');
    client.commitSync(offsets);
  }

  /** The API's committed() as the records read it: offsets as numbers (it gives strings, and null for 0), metadata as it gives it. */
  async committed(partitions: TopicPartition[], timeoutMs: number): Promise<CommittedOffset[]> {
    const offsets = await this.consumer.committed(partitions, timeoutMs);
    return (offsets ?? []).map(({ topic, partition, offset, metadata }) => ({ topic, partition, offset: offset === null ? 0 : Number(offset), metadata }));
  }

  unlisten(): void {
    this.client?.removeListener('rebalance', this.onRebalance);
    this.events = undefined;
  }

  /** Its stop() throws: the run ends by disconnecting (for good). */
  async stop(): Promise<void> {
    this.unlisten();
    try {
      await this.consumer.disconnect();
    } catch (err) {
      throw toKafkaError(err, 'disconnect');
    }
  }

  async disconnect(): Promise<void> {}
}
