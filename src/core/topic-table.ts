// The rule every per-topic table follows (the partitioner's topics without state, the
// producers' counts and counters): it keeps up to topicsKept(maxTopics) topics; the next one
// makes it forget the least recently used quarter at once, so that a producer writing to an
// endless stream of topic names (per tenant, per day) keeps bounded memory and pays one sort
// per quarter rather than a scan per new topic.

/** The fewest topics a table keeps (16 × maxTopics when more). */
const MIN_TOPICS_KEPT = 1024;

/** How many topics a per-topic table keeps before it forgets the least recently used quarter. */
export function topicsKept(maxTopics: number): number {
  return Math.max(MIN_TOPICS_KEPT, 16 * maxTopics);
}

/** The names of the least recently used quarter (at least one) of `entries`, which it sorts by lastUsed. */
export function leastRecentQuarter<T extends { readonly lastUsed: number }>(entries: Array<[string, T]>): string[] {
  entries.sort((x, y) => x[1].lastUsed - y[1].lastUsed);
  const count = Math.min(entries.length, Math.max(1, entries.length >> 2));
  const names = new Array<string>(count);
  for (let i = 0; i < count; i++) names[i] = entries[i][0];
  return names;
}
