// The native engine (native/, an N-API addon built on install by node-gyp): loaded once, after
// the client library, so that the librdkafka.so.1 it needs is the one already in the process
// (docs/native.md). Absent when it was not built: callers fall back to the client library.
// Its functions, tables and events: contract.ts, generated from native/contract.js.

import * as path from 'node:path';
import { InvalidOptionError } from '../core/errors';
import type { Config } from '../core/config';
import type { KafkaLibrary } from '../core/library';
import type { EventEmitter } from 'node:events';
import { EVENT_ERROR, EVENT_LOG, EVENT_STATS, type NativeAddon, type NativeEvent } from './contract';

export type { NativeAddon, NativeError } from './contract';

let loaded: NativeAddon | null | undefined;
let failure: unknown;

/** The folder holding binding.gyp, from build/native/ (compiled) or src/native/. */
const NATIVE_DIR = path.join(__dirname, '..', '..', 'native');

/**
 * The addon, or undefined when it is not built (`nativeFailure()` says why). `library`: the
 * client library whose librdkafka it must share, loaded first.
 */
export function nativeAddon(library?: KafkaLibrary): NativeAddon | undefined {
  if (loaded !== undefined) return loaded ?? undefined;
  try {
    // Loading the client library loads its librdkafka.so.1: the addon's is then that one.
    if (library === undefined) require('node-rdkafka');
    loaded = require('node-gyp-build')(NATIVE_DIR) as NativeAddon;
  } catch (err) {
    failure = err;
    loaded = null;
  }
  return loaded ?? undefined;
}

/** Why nativeAddon() gave nothing (undefined when it loaded, or was not asked yet). */
export function nativeFailure(): unknown {
  return failure;
}

/**
 * The engine asked for: the option, else KDP_ENGINE from the environment (a deployment can pin
 * it without a code change; the test suite runs on each), else the default ('auto').
 */
export function chosenEngine(given: { engine?: unknown } | undefined, resolved: 'auto' | 'native' | 'client'): 'auto' | 'native' | 'client' {
  if (given?.engine !== undefined) return resolved;
  const env = process.env.KDP_ENGINE;
  if (env === undefined || env === '') return resolved;
  if (env !== 'auto' && env !== 'native' && env !== 'client') throw new InvalidOptionError('KDP_ENGINE', "'auto', 'native' or 'client'", env);
  return env;
}

/** nativeFailure() in one line. */
function failureLine(): string {
  const failure = nativeFailure() as Error | undefined;
  return String(failure?.message ?? failure).split('\n')[0];
}

/** Why a client was not made on the native engine asked for: its load failure, in one line. */
export function nativeMissing(): string {
  return `the native engine is not built here (${failureLine()}); ${REBUILD}, or engine 'client'`;
}

/** The command that builds the native engine in an application (scripts/build-native.js). */
const REBUILD = 'npm rebuild kafka-dynamic-partitioner';

let missingTold = false;

/**
 * The addon a client is made on for `engine` ('client': none). On 'auto' without it (installed
 * before node-rdkafka, or no C toolchain) the client runs on the client library's produce() and
 * consume(), several times slower: said once per process, as a process warning with code
 * KDP_NATIVE_MISSING and the command that builds it.
 */
export function engineAddon(engine: 'auto' | 'native' | 'client', library: KafkaLibrary | undefined): NativeAddon | undefined {
  if (engine === 'client') return undefined;
  const addon = nativeAddon(library);
  if (addon === undefined && engine === 'auto' && !missingTold) {
    missingTold = true;
    process.emitWarning(`the native engine is not built here: producers and consumers run on the client library's produce() and consume(), several times slower`, {
      code: 'KDP_NATIVE_MISSING',
      detail: `Build it with \`${REBUILD}\` (node-rdkafka installed first, and a C toolchain), or choose engine 'client' to run without it. Cause: ${failureLine()}`,
    });
  }
  return addon;
}

/** node-rdkafka's settings that are JavaScript's, not librdkafka's (lib/client.js). */
const JS_ONLY = new Set(['dr_cb', 'dr_msg_cb', 'event_cb', 'rebalance_cb', 'offset_commit_cb']);

/** node-rdkafka-style configuration as the flat [name, value, ...] list the addon takes. */
export function configPairs(config: Config): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(config)) {
    if (JS_ONLY.has(name) || value === undefined || typeof value === 'function') continue;
    out.push(name, String(value));
  }
  return out;
}

/**
 * A librdkafka error event as node-rdkafka words it (lib/error.js): librdkafka's text for the
 * code, its origin ("local" or "broker") apart and the rest in lower case; the detail as `reason`.
 */
export function librdkafkaEventError(addon: NativeAddon, code: number, reason: unknown, fatal: unknown): Error {
  const text = addon.errstr(code);
  const at = text.indexOf(': ');
  return Object.assign(new Error(at === -1 ? text.toLowerCase() : text.slice(at + 2).toLowerCase()),
    { code, origin: at === -1 ? undefined : text.slice(0, at).toLowerCase(), reason: String(reason), isFatal: fatal === true });
}

/**
 * A client's own events, a producer's and a consumer's alike, emitted as node-rdkafka's
 * ('event.stats', 'event.error' when listened to, 'event.log'); false for another kind, which
 * the caller handles.
 */
export function emitClientEvent(emitter: EventEmitter, addon: NativeAddon, event: NativeEvent): boolean {
  switch (event[0]) {
    case EVENT_STATS:
      emitter.emit('event.stats', { message: event[1] });
      return true;
    case EVENT_ERROR:
      if (emitter.listenerCount('event.error') > 0) emitter.emit('event.error', librdkafkaEventError(addon, event[1], event[2], event[3]));
      return true;
    case EVENT_LOG:
      emitter.emit('event.log', { severity: event[1], fac: event[2], message: event[3] });
      return true;
    default:
      return false;
  }
}
