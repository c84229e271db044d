// The client library the producer, consumer and lag monitor drive: node-rdkafka, or a module of
// the same API given as the option `kafka` (Confluent's @confluentinc/kafka-javascript, whose
// callback API is node-rdkafka's). node-rdkafka is required only when a class needs it and none
// was given, so that an application using another client never loads it.

import { sep } from 'node:path';

/** What is used of a node-rdkafka-style module. */
export interface KafkaLibrary {
  readonly Producer: new (global: any, topic: any) => any;
  readonly KafkaConsumer: new (global: any, topic: any) => any;
  readonly CODES: { readonly ERRORS: Readonly<Record<string, number>> };
  readonly librdkafkaVersion?: string;
}

/** Whether `value` looks like a node-rdkafka-style module (what the options schema checks). */
export function isKafkaLibrary(value: unknown): value is KafkaLibrary {
  const v = value as Partial<KafkaLibrary> | null;
  return (
    typeof v === 'object' && v !== null &&
    typeof v.Producer === 'function' && typeof v.KafkaConsumer === 'function' &&
    typeof v.CODES === 'object' && v.CODES !== null && typeof v.CODES.ERRORS === 'object'
  );
}

let nodeRdkafka: KafkaLibrary | undefined;

/** node-rdkafka, required on first use. */
function loadNodeRdkafka(): KafkaLibrary {
  if (!nodeRdkafka) nodeRdkafka = require('node-rdkafka') as KafkaLibrary;
  return nodeRdkafka;
}

/** The packages whose native addon bundles (or links) its own librdkafka. */
const CLIENT_PACKAGES = ['node-rdkafka', '@confluentinc/kafka-javascript'] as const;

/** Whether a module of `pkg` is among those `require` has loaded. */
export function loaded(pkg: string): boolean {
  const marker = `${sep}node_modules${sep}${pkg.replace('/', sep)}${sep}`;
  for (const file of Object.keys(require.cache)) if (file.includes(marker)) return true;
  return false;
}

let warned = false;

/**
 * Both clients in one process load one librdkafka between them (the native library that the
 * first one opened serves the second one's addon too, whatever version that one was built
 * with): said once, as a process warning with code KDP_SHARED_LIBRDKAFKA.
 */
export function warnIfBothLoaded(): void {
  if (warned) return;
  if (!CLIENT_PACKAGES.every(loaded)) return;
  warned = true;
  process.emitWarning(
    'node-rdkafka and @confluentinc/kafka-javascript are both loaded: they share one librdkafka, the one loaded first',
    { code: 'KDP_SHARED_LIBRDKAFKA', detail: 'Use one client library per process (the option `kafka` selects it).' },
  );
}

/** The library `given` (checked by the options schema), or node-rdkafka when none was. */
export function kafkaLibrary(given: KafkaLibrary | undefined): KafkaLibrary {
  const library = given ?? loadNodeRdkafka();
  warnIfBothLoaded();
  return library;
}

/** For tests: the warning may be given again. */
export function resetSharedLibrdkafkaWarning(): void {
  warned = false;
}
