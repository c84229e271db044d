// librdkafka configuration as node-rdkafka takes it: global properties in the constructor's
// first argument, topic-level ones in the second (node-rdkafka ignores topic-level properties
// given in the first, without a word).

import { PARTITIONERS, PartitionerName } from './hash';
import { InvalidOptionError } from './errors';

/** librdkafka's topic-level properties (CONFIGURATION.md, "Topic configuration properties", v2.12). */
export const TOPIC_PROPERTIES: ReadonlySet<string> = new Set([
  'request.required.acks', 'acks', 'request.timeout.ms', 'message.timeout.ms', 'delivery.timeout.ms',
  'queuing.strategy', 'produce.offset.report', 'partitioner', 'partitioner_cb', 'msg_order_cmp', 'opaque',
  'compression.codec', 'compression.type', 'compression.level', 'auto.commit.enable', 'enable.auto.commit',
  'auto.commit.interval.ms', 'auto.offset.reset', 'offset.store.path', 'offset.store.sync.interval.ms',
  'offset.store.method', 'consume.callback.max.messages',
]);

/** librdkafka's default `partitioner`, and so node-rdkafka's. */
export const LIBRDKAFKA_DEFAULT_PARTITIONER: PartitionerName = 'consistent_random';

export type Config = Record<string, unknown>;

/**
 * Moves topic-level properties found in the global configuration to the topic
 * configuration (where node-rdkafka reads them); a property given in both is an error.
 */
export function splitConfig(globalConfig: Config, topicConfig: Config): { global: Config; topic: Config } {
  const global: Config = {};
  const topic: Config = { ...topicConfig };
  for (const [name, value] of Object.entries(globalConfig)) {
    if (!TOPIC_PROPERTIES.has(name)) {
      global[name] = value;
      continue;
    }
    if (name in topicConfig && topicConfig[name] !== value) {
      throw new InvalidOptionError(`globalConfig['${name}']`, `absent or equal to topicConfig['${name}'] (${String(topicConfig[name])})`, value);
    }
    topic[name] = value;
  }
  return { global, topic };
}

/**
 * The base partitioner: the one named in our options or in the topic configuration (they
 * must agree), else librdkafka's default, so that swapping the SDK in moves no cold key.
 */
export function basePartitioner(fromOptions: unknown, fromTopicConfig: unknown): PartitionerName {
  const check = (value: unknown, path: string): PartitionerName => {
    if (typeof value !== 'string' || !(PARTITIONERS as readonly string[]).includes(value)) {
      throw new InvalidOptionError(path, `one of ${PARTITIONERS.map((p) => `'${p}'`).join(', ')} (a partitioner the SDK can reproduce)`, value);
    }
    return value as PartitionerName;
  };
  const a = fromOptions === undefined ? undefined : check(fromOptions, 'options.partitioner');
  const b = fromTopicConfig === undefined ? undefined : check(fromTopicConfig, "topicConfig['partitioner']");
  if (a !== undefined && b !== undefined && a !== b) {
    throw new InvalidOptionError('options.partitioner', `equal to topicConfig['partitioner'] ('${b}')`, a);
  }
  return a ?? b ?? LIBRDKAFKA_DEFAULT_PARTITIONER;
}

/**
 * Names in the librdkafka configuration that are options of ours (a classic slip: options
 * passed as the second argument): refused with a message that says where they belong.
 * `partitioner` is both, and stays allowed.
 */
export function checkNotOptions(config: Config, argument: 'globalConfig' | 'topicConfig', optionNames: Iterable<string>): void {
  for (const name of optionNames) {
    if (name in config && !TOPIC_PROPERTIES.has(name)) {
      throw new InvalidOptionError(`${argument}['${name}']`, 'absent', config[name],
        `${argument}['${name}'] is not a librdkafka property but an option of the SDK: pass it in options (the third argument)`);
    }
  }
}

/**
 * librdkafka's refusal of a configuration (node-rdkafka throws a plain Error from the
 * constructor: 'No such configuration property: "x"', 'Invalid value for configuration
 * property "x"') as an InvalidOptionError naming the property where the caller put it.
 */
export function configError(err: unknown, globalConfig: Config, topicConfig: Config): InvalidOptionError {
  const message = err instanceof Error ? err.message : String(err);
  const name = /configuration property:? "([^"]+)"/.exec(message)?.[1];
  // An alias (acks) is reported under its canonical name (request.required.acks): then only the argument is known.
  const where = name !== undefined && name in topicConfig ? 'topicConfig' : name !== undefined && name in globalConfig ? 'globalConfig' : undefined;
  const path = where !== undefined ? `${where}['${name}']` : 'globalConfig / topicConfig';
  return new InvalidOptionError(path, 'a librdkafka property librdkafka accepts', undefined, `${path}: librdkafka refused the configuration: ${message}`, err);
}
