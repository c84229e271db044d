// The one name of a topic-partition in the consumer side's maps (src/consumer/dispatch.ts, the
// consumers' assignments, src/native/consume.ts's): kept below every layer that keys by it.

/** The key of a topic-partition in a map. */
export function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}
