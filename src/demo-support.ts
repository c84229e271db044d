// What the two demos (demo.ts, demo-consumer.ts) share: numeric flags and topic creation on
// a real cluster.

import * as Kafka from 'node-rdkafka';

/** A numeric command-line flag: `fallback` when absent, an error naming the flag when outside [min, max]. */
export function numberFlag(name: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const v = Number(text);
  if (!(v >= min && v <= max)) throw new Error(`--${name} must be a number in [${min}, ${max}], got ${JSON.stringify(text)}`);
  return v;
}

/** Creates `topic` with `partitions` partitions (replication 1) unless it exists. */
export async function createTopic(brokers: string, topic: string, partitions: number): Promise<void> {
  const admin = Kafka.AdminClient.create({ 'metadata.broker.list': brokers });
  try {
    await new Promise<void>((resolve, reject) => {
      admin.createTopic({ topic, num_partitions: partitions, replication_factor: 1 }, 15_000, (err) => {
        // 36: TOPIC_ALREADY_EXISTS
        if (err && (err as any).code !== 36) reject(err);
        else resolve();
      });
    });
  } finally {
    admin.disconnect();
  }
}
