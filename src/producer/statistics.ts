// librdkafka statistics (statistics.interval.ms): each partition's queue depth, kept for
// metrics() and turned into a penalty the partitioner steers hot keys away by.

import type { DynamicPartitioner } from '../partitioner/partitioner';
import type { TopicInfo } from './place/metadata';

/**
 * Reads one 'event.stats' message into the topics' queue depths (and, with `penalize`, the
 * partitioner's penalties). Returns the parsed statistics, undefined when they are not JSON.
 */
export function applyStatistics(message: string, topics: ReadonlyMap<string, TopicInfo>, partitioner: DynamicPartitioner, penalize: boolean): unknown {
  let stats: any;
  try {
    stats = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (!stats?.topics) return stats;
  for (const [name, t] of Object.entries<any>(stats.topics)) {
    const info = topics.get(name);
    if (!info || info.partitions === 0) continue;
    const depth: number[] = new Array(info.partitions).fill(0);
    for (const [id, p] of Object.entries<any>(t.partitions ?? {})) {
      const i = Number(id);
      if (i >= 0 && i < info.partitions) depth[i] = (p.msgq_cnt ?? 0) + (p.xmit_msgq_cnt ?? 0);
    }
    info.queueDepth = depth;
    if (!penalize) continue;
    // A queued message is load not yet visible to the broker: as a share of what a
    // partition receives over the load horizon, above the least queued partition.
    const perPartition = partitioner.recentMessagesPerPartition(name);
    if (perPartition <= 0) continue;
    const least = Math.min(...depth);
    depth.forEach((d, p) => partitioner.setPartitionPenalty(name, p, (d - least) / perPartition));
  }
  return stats;
}
