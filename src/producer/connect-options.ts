// connect()'s options (its second argument, after the timeout): `topics` lists the topics whose
// partition counts connect() reads before it resolves, so that their first messages are
// already partitioned here. Checked with the options schema, once per connect().

import { InvalidOptionError } from '../core/errors';
import { custom, name, object, resolve } from '../core/schema';

export interface ConnectOptions {
  /** Topics whose partition counts are read before connect() resolves (a name given twice is read once). */
  readonly topics?: readonly string[];
}

export interface ResolvedConnectOptions {
  readonly topics: readonly string[];
}

const topicName = name('a topic name');

const CONNECT_SCHEMA = object<ResolvedConnectOptions>({
  topics: custom<readonly string[]>('an array of topic names', Array.isArray).default(Object.freeze([])),
});

/** connect()'s options resolved (the argument named `options`); `maxTopics` bounds the topics listed. */
export function resolveConnectOptions(given: unknown, maxTopics: number): ResolvedConnectOptions {
  const resolved = resolve(CONNECT_SCHEMA, given);
  const names = [...new Set(resolved.topics.map((t, i) => topicName.check(t, `options.topics[${i}]`)))];
  if (names.length > maxTopics) {
    throw new InvalidOptionError('options.topics', `at most maxTopics (${maxTopics}) topics: the partitioner keeps state for no more`, resolved.topics);
  }
  return Object.freeze({ topics: Object.freeze(names) });
}
