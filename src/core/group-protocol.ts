// The consumer group protocol a librdkafka configuration asks for: 'classic' (JoinGroup / SyncGroup, the
// assignor on a member) or 'consumer' (KIP-848: the broker assigns, heartbeats carry the changes). Checked
// once, where a consumer's configuration enters (src/consumer/consumer-client.ts), so that a setting the
// protocol refuses is an InvalidOptionError that says what to use instead, before librdkafka's connect().

import { describe, InvalidOptionError, InvalidValueError } from './errors';
import type { Config } from './config';

export type GroupProtocol = 'classic' | 'consumer';

export const GROUP_PROTOCOLS: readonly GroupProtocol[] = ['classic', 'consumer'];

/**
 * What librdkafka 2.12 refuses with group.protocol 'consumer' (src/rdkafka_conf.c, rd_kafka_conf_finalize),
 * its words, and ours: what takes the setting's place.
 */
const REFUSED_UNDER_CONSUMER: ReadonlyArray<readonly [name: string, librdkafka: string, instead: string]> = [
  ['partition.assignment.strategy', 'Use `group.remote.assignor` instead',
    "the broker assigns the partitions: choose its assignor with globalConfig['group.remote.assignor'] ('uniform' or 'range'; absent: the broker's default)"],
  ['session.timeout.ms', 'It is defined broker side',
    "the broker's group.consumer.session.timeout.ms (45000 by default) sets it, for every group of the cluster"],
  ['heartbeat.interval.ms', 'It is defined broker side',
    "the broker's group.consumer.heartbeat.interval.ms (5000 by default) sets it, for every group of the cluster"],
  ['group.protocol.type', '', 'it has no use under this protocol: leave it out'],
];

/**
 * The group protocol `global` asks for (librdkafka's default, 'classic', when absent); throws an
 * InvalidValueError for a value librdkafka does not know, and an InvalidOptionError for a setting the
 * 'consumer' protocol refuses, carrying librdkafka's words and what to use instead.
 */
export function groupProtocolOf(global: Config): GroupProtocol {
  const value = global['group.protocol'];
  if (value === undefined) return 'classic';
  // librdkafka reads the name whatever its case.
  const protocol = typeof value === 'string' ? GROUP_PROTOCOLS.find((p) => p === value.toLowerCase()) : undefined;
  if (protocol === undefined) throw new InvalidValueError("globalConfig['group.protocol']", GROUP_PROTOCOLS, value);
  if (protocol === 'classic') return 'classic';
  for (const [name, words, instead] of REFUSED_UNDER_CONSUMER) {
    if (global[name] === undefined) continue;
    const path = `globalConfig['${name}']`;
    throw new InvalidOptionError(path, "absent with group.protocol 'consumer'", global[name],
      `${path} (${describe(global[name])}): librdkafka refuses it with group.protocol 'consumer' ("\`${name}\` is not supported for ` +
      `\`group.protocol=consumer\`${words === '' ? '' : `. ${words}`}"): ${instead}`);
  }
  // group.remote.assignor goes to the broker as it is: a cluster may offer assignors of its own.
  return 'consumer';
}
