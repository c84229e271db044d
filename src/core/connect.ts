// Connecting a node-rdkafka client in bounded time, with a failed login told as such.
//
// librdkafka raises a refused SASL login or a failed TLS handshake as an error event only to a
// client that polls, and node-rdkafka's connect() (3.6, lib/client.js) polls nothing while it
// waits for metadata: with a wrong password it retries in silence and, at its timeout, reports
// only "broker transport failure". Each refused attempt is logged at once, though (librdkafka's
// rd_kafka_broker_fail, level LOG_ERR): connectClient() watches those log lines and rejects at
// the first one with librdkafka's code for it. The lines hold the broker's address and the
// broker's reason, never the configuration (librdkafka does not log passwords).

import { KafkaError, toKafkaError } from './errors';

/** librdkafka's RD_KAFKA_RESP_ERR__AUTHENTICATION: a SASL login the broker refused. */
export const ERR__AUTHENTICATION = -169;
/** librdkafka's RD_KAFKA_RESP_ERR__SSL: a TLS handshake that failed (certificate, protocol). */
export const ERR__SSL = -181;
/** librdkafka's RD_KAFKA_RESP_ERR__TIMED_OUT. */
export const ERR__TIMED_OUT = -185;

/** How long past its own timeout the client's connect callback is waited for before connect() gives up. */
const CALLBACK_GRACE_MS = 2000;

const AUTHENTICATION_FAILED = /SASL authentication error|SASL handshake failed|Failed to initialize SASL authentication|SASL authentication failed/;
const TLS_FAILED = /SSL handshake failed|certificate verify failed/;

/** The part of node-rdkafka's clients (Producer, KafkaConsumer) connectClient() uses. */
export interface Connectable {
  connect(options: { timeout: number }, callback: (err: unknown) => void): unknown;
  disconnect(callback?: () => void): unknown;
  on(event: 'event.log', listener: (entry: unknown) => void): unknown;
  removeListener(event: 'event.log', listener: (entry: unknown) => void): unknown;
}

/**
 * The librdkafka code of a log line that reports a refused login (ERR__AUTHENTICATION) or a
 * failed TLS handshake (ERR__SSL), or undefined for any other line.
 */
export function securityFailureOf(entry: unknown): number | undefined {
  const e = entry as { severity?: unknown; message?: unknown } | null | undefined;
  if (typeof e?.message !== 'string') return undefined;
  // syslog levels: 0-3 are emergency to error; these failures are logged as errors (3).
  if (typeof e.severity === 'number' && e.severity > 3) return undefined;
  if (AUTHENTICATION_FAILED.test(e.message)) return ERR__AUTHENTICATION;
  if (TLS_FAILED.test(e.message)) return ERR__SSL;
  return undefined;
}

/**
 * Connects `client` (node-rdkafka's connect with a metadata timeout of `timeoutMs`). Rejects
 * with a KafkaError: at the first refused login (librdkafkaCode ERR__AUTHENTICATION) or failed
 * TLS handshake (ERR__SSL) without waiting for the timeout; with the client's own error at
 * its timeout; and, should the client never call back, a little after the timeout
 * (ERR__TIMED_OUT). After an early rejection the client ends its attempt in the background
 * (within `timeoutMs`); a connection that still came up is closed again.
 */
export function connectClient(client: Connectable, timeoutMs: number, context = 'connect'): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const finish = (err: KafkaError | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.removeListener('event.log', onLog);
      if (err) reject(err);
      else resolve();
    };
    const onLog = (entry: unknown): void => {
      const code = securityFailureOf(entry);
      if (code === undefined) return;
      // '[thrd:sasl_ssl://host:port/bootstrap]: sasl_ssl://host:port/bootstrap: SASL authentication error: ...'
      const text = String((entry as { message: string }).message).replace(/^\[thrd:[^\]]*\]:\s*/, '');
      finish(new KafkaError(`${context}: ${code === ERR__AUTHENTICATION ? 'authentication failed' : 'TLS handshake failed'}: ${text}`, code));
    };
    const timer = setTimeout(() => finish(new KafkaError(`${context}: no answer within ${timeoutMs} ms`, ERR__TIMED_OUT)), timeoutMs + CALLBACK_GRACE_MS);
    client.on('event.log', onLog);
    try {
      client.connect({ timeout: timeoutMs }, (err: unknown) => {
        if (!settled) {
          finish(err ? toKafkaError(err, context) : undefined);
        } else if (!err) {
          // connect() rejected already: a connection that came up after all is not kept.
          client.disconnect(() => undefined);
        }
      });
    } catch (err) {
      finish(toKafkaError(err, context));
    }
  });
}
