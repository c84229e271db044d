// The one name of a topic-partition in the consumer side's maps (src/delivery/dispatch.ts, the
// consumers' assignments, src/native/consume.ts's), and topic-partitions grouped by topic: kept
// below every layer that keys by them.

/** The key of a topic-partition in a map. */
export function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/** Topic-partitions grouped by topic: each topic's partitions, in the order given. */
export function partitionsByTopic(partitions: Iterable<{ topic: string; partition: number }>): Map<string, number[]> {
  const byTopic = new Map<string, number[]>();
  for (const { topic, partition } of partitions) {
    const list = byTopic.get(topic);
    if (list) list.push(partition);
    else byTopic.set(topic, [partition]);
  }
  return byTopic;
}
