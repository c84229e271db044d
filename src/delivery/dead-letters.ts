// What a dead letter carries besides its message (a consumer's `deadLetter` option: failures.ts decides, the Dispatcher
// writes through the client's DeadLetterSink): headers naming where it came from, the failure and the attempts, and the
// message's own order header kept under another name (a consumer of the dead-letter topic must not wait for its chain).
// And the sink of a DynamicProducer, which every consumer may write through.

import type { HandlerError } from '../core/errors';
import { ORDER_HEADER } from '../partitioner/headers';

/**
 * Where a consumer's dead letters go (its `deadLetter` option), implemented per client: each message, in the client's own
 * form, with what the engine adds (`added`: the origin headers) to its headers, to `topic`. Part of the engine's port (port.ts).
 */
export interface DeadLetterSink<M> {
  readonly topic: string;
  /** Writes each message with its added headers; resolves once every write is acknowledged, else rejects. */
  write(messages: M[], added: DeadLetterHeaders[]): Promise<void>;
}

/** Headers a dead letter gets, as names and text values. */
export type DeadLetterHeaders = ReadonlyArray<readonly [string, string]>;

/** The headers of a dead letter: the names are the contract (docs/consumer.md, "Dead letters"); values are text. */
export const DEAD_LETTER_HEADERS = Object.freeze({
  topic: 'kdp-dlt-original-topic',
  partition: 'kdp-dlt-original-partition',
  offset: 'kdp-dlt-original-offset',
  /** The message's own order header (kdp-order), when it had one: a spread key's place in its chain. */
  order: 'kdp-dlt-original-order',
  errorClass: 'kdp-dlt-exception-class',
  errorMessage: 'kdp-dlt-exception-message',
  errorCode: 'kdp-dlt-exception-code',
  attempts: 'kdp-dlt-attempts',
} as const);

/** The handler's message is cut at this many characters in its header. */
const MAX_ERROR_TEXT = 4096;

/** The headers a dead letter gets: its origin, what the handler threw (class, message, code) and its failed calls. */
export function originHeaders(topic: string, partition: number, offset: number, error: HandlerError, attempts: number): DeadLetterHeaders {
  const cause = error.cause;
  const name = cause instanceof Error ? cause.name || cause.constructor?.name || 'Error' : typeof cause;
  const text = cause instanceof Error ? cause.message : String(cause);
  const code = (cause as { code?: unknown } | null)?.code;
  const headers: Array<[string, string]> = [
    [DEAD_LETTER_HEADERS.topic, topic],
    [DEAD_LETTER_HEADERS.partition, String(partition)],
    [DEAD_LETTER_HEADERS.offset, String(offset)],
    [DEAD_LETTER_HEADERS.errorClass, name],
    [DEAD_LETTER_HEADERS.errorMessage, text.length > MAX_ERROR_TEXT ? text.slice(0, MAX_ERROR_TEXT) : text],
    [DEAD_LETTER_HEADERS.attempts, String(attempts)],
  ];
  if (typeof code === 'string' || typeof code === 'number') headers.push([DEAD_LETTER_HEADERS.errorCode, String(code)]);
  return headers;
}

/** A header value as node-rdkafka and DynamicProducer take it. */
type HeaderValue = string | Buffer;

/**
 * A consumed message's headers (node-rdkafka's array of one-name objects, or an object of values or arrays of values) with
 * `added`, as a DynamicProducer takes them: its order header renamed DEAD_LETTER_HEADERS.order, every other one as it came.
 */
export function deadLetterHeaders(headers: unknown, added: DeadLetterHeaders): Array<Record<string, HeaderValue>> {
  const out: Array<Record<string, HeaderValue>> = [];
  const push = (name: string, value: unknown): void => {
    if (value === undefined || value === null) return;
    const v: HeaderValue = typeof value === 'string' || Buffer.isBuffer(value) ? value : value instanceof Uint8Array ? Buffer.from(value) : String(value);
    out.push({ [name === ORDER_HEADER ? DEAD_LETTER_HEADERS.order : name]: v });
  };
  if (Array.isArray(headers)) {
    for (const h of headers) if (h !== null && typeof h === 'object') for (const name of Object.keys(h)) push(name, (h as Record<string, unknown>)[name]);
  } else if (headers instanceof Map) {
    for (const [name, value] of headers) push(Buffer.isBuffer(name) ? name.toString('latin1') : String(name), value);
  } else if (headers !== null && typeof headers === 'object') {
    for (const name of Object.keys(headers)) {
      const value = (headers as Record<string, unknown>)[name];
      if (Array.isArray(value)) for (const v of value) push(name, v);
      else push(name, value);
    }
  }
  for (const [name, value] of added) out.push({ [name]: value });
  return out;
}

/** What of a DynamicProducer a dead-letter sink uses (its sendBatch). */
export interface DeadLetterProducer {
  sendBatch(topic: string, messages: ReadonlyArray<{ value: Buffer | null; key?: Buffer | string | null; headers?: Array<Record<string, HeaderValue>> }>): Promise<unknown>;
}

/** Whether `producer` is a DynamicProducer (what its sink needs of it). */
export function isDynamicProducer(producer: unknown): producer is DeadLetterProducer {
  return typeof producer === 'object' && producer !== null && 'transactionsOf' in producer && typeof (producer as { sendBatch?: unknown }).sendBatch === 'function';
}

/**
 * A sink writing through a DynamicProducer (`producer()`: it, once there is one to write with), each message's key and
 * value as `parts` gives them, with its headers and the added ones (deadLetterHeaders()).
 */
export function producerSink<M>(topic: string, producer: () => Promise<DeadLetterProducer>,
  parts: (m: M) => { key: Buffer | string | null | undefined; value: Buffer | null | undefined; headers: unknown }): DeadLetterSink<M> {
  return {
    topic,
    async write(messages, added) {
      const batch = messages.map((m, i) => {
        const { key, value, headers } = parts(m);
        return { key: key ?? null, value: value ?? null, headers: deadLetterHeaders(headers, added[i]) };
      });
      await (await producer()).sendBatch(topic, batch);
    },
  };
}
