// librdkafka's codes as the layers above read them: the code of a full queue both engines answer,
// and the codes node-rdkafka loses. node-rdkafka hands a failed delivery report over as an
// Error holding only librdkafka's text, lower-cased and cut after its origin ('Broker: Topic authorization failed' becomes
// 'topic authorization failed'), with code -1 (lib/error.js): the code is lost. It is found
// again here in librdkafka's own table of texts (err2str over node-rdkafka's CODES.ERRORS).

import { loaded } from './library';

/** librdkafka's RD_KAFKA_RESP_ERR__QUEUE_FULL (rdkafka.h): hold the message and retry (both engines' hand-over answer it). */
export const ERR_QUEUE_FULL = -184;

/** node-rdkafka's code for an Error it could not read a code from. */
const UNREAD = -1;

let table: Map<string, number> | undefined;

function texts(): Map<string, number> {
  if (table !== undefined) return table;
  // Only node-rdkafka drops the code, and a failure it reported means it is loaded: never load
  // it here (an application on another client library must not get it).
  if (!loaded('node-rdkafka')) return new Map();
  table = new Map();
  try {
    const Kafka = require('node-rdkafka');
    const native = require('node-rdkafka/librdkafka') as { err2str?: (code: number) => string };
    const codes = (Kafka as unknown as { CODES?: { ERRORS?: Record<string, number> } }).CODES?.ERRORS ?? {};
    if (typeof native.err2str !== 'function') return table;
    for (const code of Object.values(codes)) {
      if (typeof code !== 'number' || code === 0 || code === UNREAD) continue;
      const text = native.err2str(code);
      const cut = text.split(': ');
      // As node-rdkafka reads it: the part after 'Broker: ' / 'Local: ', lower-cased.
      const key = (cut.length > 1 ? cut[1] : text).toLowerCase();
      if (!table.has(key)) table.set(key, code);
    }
  } catch {
    // Without the table the code stays as node-rdkafka gave it.
  }
  return table;
}

/**
 * The error with librdkafka's code put back when node-rdkafka lost it (code -1 and a message
 * that is one of librdkafka's texts); any other error as it is.
 */
export function withLibrdkafkaCode(err: unknown): unknown {
  const e = err as { code?: unknown; message?: unknown } | null | undefined;
  if (e === null || e === undefined || e.code !== UNREAD || typeof e.message !== 'string') return err;
  const code = texts().get(e.message.toLowerCase());
  if (code === undefined) return err;
  return { code, message: e.message, cause: err };
}
