// The host (consumer-host.ts) of KafkaJS 2.x's consumer (`new Kafka({...}).consumer({ groupId })`) for KafkaJsDynamicConsumer.
// Its runner (src/consumer/runner.js) has no revoke callback: it emits REBALANCING, rejoins (eager), and GROUP_JOIN carries the assignment.

import { StateError, toKafkaError } from '../core/errors';
import { within } from '../core/time';
import type { PartitionOffset } from '../delivery/dispatch';
import type { CommittedOffset } from '../delivery/records';
import { ConsumerHost, type HostEvents, type TopicPartition } from './consumer-host';
import type { KafkaJsAdminClient, KafkaJsBatchPayload, KafkaJsSubscription, KafkaJs2ConsumerLike } from './consumer-types';

/** How long connect() waits for the admin client's metadata (ms): past it, the first fetchOffsets() reads it. */
const WARM_ADMIN_MS = 5000;

/** Whether `consumer` looks like KafkaJS 2.x's consumer (its instrumentation events, stop()). */
export function isKafkaJs2Consumer(consumer: unknown): consumer is KafkaJs2ConsumerLike {
  const c = consumer as Partial<KafkaJs2ConsumerLike> | null;
  return typeof c === 'object' && c !== null && typeof c.connect === 'function' && typeof c.run === 'function' &&
    typeof c.commitOffsets === 'function' && typeof c.stop === 'function' && typeof c.on === 'function' &&
    typeof c.events === 'object' && c.events !== null && typeof c.events.GROUP_JOIN === 'string' && typeof c.events.REBALANCING === 'string';
}

/** Whether `admin` looks like a KafkaJS admin client (kafka.admin()). */
export function isKafkaJsAdmin(admin: unknown): admin is KafkaJsAdminClient {
  const a = admin as Partial<KafkaJsAdminClient> | null;
  return typeof a === 'object' && a !== null && typeof a.connect === 'function' && typeof a.fetchOffsets === 'function';
}

export class KafkaJsHost extends ConsumerHost {
  readonly name = "KafkaJS's consumer";
  readonly runsAgain = true;
  /** The group's id, from the last GROUP_JOIN. */
  private groupId: string | undefined;
  private removers: Array<() => void> = [];
  /** The admin client was connected here. */
  private adminConnected = false;

  constructor(private readonly consumer: KafkaJs2ConsumerLike, private readonly admin: KafkaJsAdminClient) {
    super();
  }

  async connect(events: HostEvents): Promise<void> {
    try {
      await this.consumer.connect();
      if (!this.adminConnected) {
        await this.admin.connect();
        this.adminConnected = true;
        await this.warmAdmin();
      }
    } catch (err) {
      throw toKafkaError(err, 'connect');
    }
    const { REBALANCING, GROUP_JOIN, CRASH } = this.consumer.events;
    this.unlisten();
    this.removers = [
      this.consumer.on(REBALANCING, () => events.rebalancing()),
      this.consumer.on(GROUP_JOIN, (event: { payload?: { groupId?: unknown; memberAssignment?: unknown } }) => {
        const payload = event?.payload;
        if (typeof payload?.groupId === 'string') this.groupId = payload.groupId;
        events.joined(partitionsOf(payload?.memberAssignment));
      }),
      // A crash it restarts from (it disconnects, runs and joins again) is met as a rebalance; one it does not restart from ends the run.
      this.consumer.on(CRASH, (event: { payload?: { error?: unknown; restart?: unknown } }) => {
        if (event?.payload?.restart === false) events.crashed(event.payload.error);
        else events.rebalancing();
      }),
    ];
  }

  /** Reads the admin's cluster metadata now: knowing only its seed broker, its first fetchOffsets() (every first batch's) would wait a retry. */
  private async warmAdmin(): Promise<void> {
    const describeCluster = (this.admin as { describeCluster?: unknown }).describeCluster;
    if (typeof describeCluster !== 'function') return;
    const reading = Promise.resolve().then(() => (describeCluster as () => Promise<unknown>).call(this.admin));
    reading.catch(() => undefined); // fetchOffsets() reads the metadata itself
    await within(reading.then(() => true, () => false), WARM_ADMIN_MS);
  }

  subscribe(subscription: KafkaJsSubscription): Promise<void> {
    return this.consumer.subscribe(subscription);
  }

  run(eachBatch: (payload: KafkaJsBatchPayload) => Promise<void>): Promise<void> {
    return this.consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch });
  }

  /**
   * commitOffsets() with the records, each followed by a NUL as the librdkafka-based clients write it (Confluent's reads metadata less
   * its last byte): members on either client, or on DynamicConsumer's native engine, read each other's records whole.
   */
  protected async commitOffsets(offsets: PartitionOffset[]): Promise<void> {
    try {
      await this.consumer.commitOffsets(offsets.map(({ topic, partition, offset, metadata }) =>
        (metadata === undefined ? { topic, partition, offset: String(offset) } : { topic, partition, offset: String(offset), metadata: `${metadata}\0` })));
    } catch (err) {
      throw toKafkaError(err, 'commit');
    }
  }

  /** admin.fetchOffsets() of the partitions' topics, the partitions asked for kept ('-1': none committed). */
  async committed(partitions: TopicPartition[], timeoutMs: number): Promise<CommittedOffset[]> {
    const groupId = this.groupId;
    if (groupId === undefined) throw new StateError('the group is not joined yet (its id comes with the consumer\'s GROUP_JOIN)');
    const wanted = new Set(partitions.map(({ topic, partition }) => `${partition}:${topic}`));
    const topics = [...new Set(partitions.map(({ topic }) => topic))];
    let read: Awaited<ReturnType<KafkaJsAdminClient['fetchOffsets']>>;
    try {
      const fetching = this.admin.fetchOffsets({ groupId, topics });
      fetching.catch(() => undefined); // a late failure, after the timeout, is nobody's
      // It resolves an array: undefined is the timeout.
      if (await within(fetching, timeoutMs) === undefined) throw new Error(`no answer within ${timeoutMs} ms`);
      read = await fetching;
    } catch (err) {
      throw toKafkaError(err, 'fetchOffsets');
    }
    const out: CommittedOffset[] = [];
    for (const { topic, partitions: list } of read ?? []) {
      for (const { partition, offset, metadata } of list ?? []) {
        if (wanted.has(`${partition}:${topic}`)) out.push({ topic, partition, offset: Number(offset), metadata });
      }
    }
    return out;
  }

  unlisten(): void {
    for (const remove of this.removers) remove();
    this.removers = [];
  }

  /** Ends the run, leaving the consumer connected; its commitOffsets() does nothing after it, so the engine's last commit goes first. */
  async stop(): Promise<void> {
    this.unlisten();
    try {
      await this.consumer.stop();
    } catch (err) {
      throw toKafkaError(err, 'stop');
    }
  }

  async disconnect(): Promise<void> {
    this.unlisten();
    try {
      await this.consumer.disconnect();
    } catch (err) {
      throw toKafkaError(err, 'disconnect');
    }
  }
}

/** GROUP_JOIN's memberAssignment ({ topic: [partitions] }) as a list. */
function partitionsOf(assignment: unknown): TopicPartition[] {
  const out: TopicPartition[] = [];
  if (typeof assignment !== 'object' || assignment === null) return out;
  for (const [topic, partitions] of Object.entries(assignment as Record<string, unknown>)) {
    if (!Array.isArray(partitions)) continue;
    for (const partition of partitions) if (Number.isInteger(partition)) out.push({ topic, partition });
  }
  return out;
}
