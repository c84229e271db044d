// The client a DynamicConsumer (consumer.ts) drives, made from its configuration: the native engine's NativeConsumer
// (src/native/consume.ts) when the addon is built and allowed, else the client library's KafkaConsumer.

import type * as Kafka from 'node-rdkafka';
import { splitConfig, configError, type Config } from '../core/config';
import { InvalidOptionError, StateError } from '../core/errors';
import { type GroupProtocol, groupProtocolOf } from '../core/group-protocol';
import { kafkaLibrary, type KafkaLibrary } from '../core/library';
import type { ResolvedConsumerOptions } from '../core/group-options';
import { hideSecrets } from '../core/secrets';
import { chosenEngine, engineAddon, nativeMissing } from '../native/addon';
import { NativeConsumer } from '../native/consume';
import type { TopicPartitionOffset } from './client-port';
import type { DynamicConsumerOptions } from './consumer-options';

/** The consumer's default fetch.queue.backoff.ms: librdkafka's (1000 ms, its pause once a queue is full) leaves a slower reader waiting. */
const FETCH_QUEUE_BACKOFF_MS = 10;

/** The client made, the engine it is, the client library (options.kafka, or node-rdkafka), and the group protocol it joins with. */
export interface ConsumerClient {
  readonly client: Kafka.KafkaConsumer;
  readonly engine: 'native' | 'client';
  readonly library: KafkaLibrary;
  readonly groupProtocol: GroupProtocol;
}

/** Makes the consumer's client (`options` as given, `resolved` checked); a configuration the client refuses throws as a configuration error. */
export function makeConsumerClient(globalConfig: Config, topicConfig: Config, options: DynamicConsumerOptions, resolved: ResolvedConsumerOptions,
  rebalance: (err: any, assignment: TopicPartitionOffset[]) => void): ConsumerClient {
  const split = splitConfig(globalConfig, topicConfig);
  if (split.global['enable.auto.commit'] === true || split.topic['enable.auto.commit'] === true) {
    throw new InvalidOptionError("globalConfig['enable.auto.commit']", 'false or absent: the consumer commits only what was handled', true);
  }
  const groupProtocol = groupProtocolOf(split.global);
  const global: Config = {
    // Under KIP-848 the broker assigns, incrementally: librdkafka refuses an assignor set here.
    ...(groupProtocol === 'classic' ? { 'partition.assignment.strategy': 'cooperative-sticky' } : {}),
    'fetch.queue.backoff.ms': FETCH_QUEUE_BACKOFF_MS,
    ...split.global,
    'enable.auto.commit': false,
    // The answers of the periodic commits (client-port.ts).
    offset_commit_cb: split.global.offset_commit_cb ?? true,
    rebalance_cb: (err: any, assignment: TopicPartitionOffset[]) => rebalance(err, assignment),
  };
  const library = kafkaLibrary(resolved.kafka);
  const engine = chosenEngine(options as { engine?: unknown } | undefined, resolved.engine);
  const addon = engineAddon(engine, resolved.kafka);
  if (engine === 'native' && addon === undefined) throw new StateError(`engine 'native': ${nativeMissing()}`);
  if (resolved.groupOrder === 'wait' && addon === undefined) {
    throw new InvalidOptionError('options.groupOrder', "'flag' on engine 'client' (node-rdkafka commits no metadata: no handled records to wait for)", 'wait');
  }
  let client: Kafka.KafkaConsumer;
  try {
    client = addon !== undefined
      ? new NativeConsumer(addon, global, split.topic) as unknown as Kafka.KafkaConsumer
      : new library.KafkaConsumer(global as any, split.topic as any);
  } catch (err) {
    throw configError(err, globalConfig, topicConfig);
  }
  hideSecrets(client);
  // node-rdkafka's default, 1000 ms: an idle consume call holds one of the pool's 4 threads that long, and idle consumers starve it.
  client.setDefaultConsumeTimeout(resolved.fetchTimeoutMs);
  return { client, engine: addon !== undefined ? 'native' : 'client', library, groupProtocol };
}
