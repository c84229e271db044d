// Connecting a node-rdkafka client in bounded time, with a failed login told as such.
//
// librdkafka raises a refused SASL login or a failed TLS handshake as an error event only to a
// client that polls, and node-rdkafka's connect() (lib/client.js) polls nothing while it
// waits for metadata: with a wrong password it retries in silence and, at its timeout, reports
// only "broker transport failure". Each refused attempt is logged at once, though (librdkafka's
// rd_kafka_broker_fail, level LOG_ERR): connectClient() watches those log lines and rejects at
// the first one with librdkafka's code for it. The lines hold the broker's address and the
// broker's reason, never the configuration (librdkafka does not log passwords).
//
// node-rdkafka's wait for metadata blocks a libuv threadpool thread (4 by default, shared with
// every consume, commit and metadata call of the process) until it ends, and cannot be cut
// short: an attempt abandoned after a refused login would hold its thread for the whole
// timeout. So the client is asked in attempts of at most ATTEMPT_MS each, repeated while the
// cluster does not answer, until the timeout: an abandoned attempt ends within ATTEMPT_MS.

import { KafkaError, checkTimeout, toKafkaError } from './errors';

/** librdkafka's RD_KAFKA_RESP_ERR__AUTHENTICATION: a SASL login the broker refused. */
export const ERR__AUTHENTICATION = -169;
/** librdkafka's RD_KAFKA_RESP_ERR__SSL: a TLS handshake that failed (certificate, protocol). */
export const ERR__SSL = -181;
/** librdkafka's RD_KAFKA_RESP_ERR__TIMED_OUT. */
export const ERR__TIMED_OUT = -185;

/** librdkafka's RD_KAFKA_RESP_ERR__TRANSPORT and __ALL_BROKERS_DOWN: no broker answered (yet). */
const ERR__TRANSPORT = -195;
const ERR__ALL_BROKERS_DOWN = -187;

/** The longest single attempt (node-rdkafka's metadata timeout) of a connect. */
const ATTEMPT_MS = 5000;
/** The pause before the next attempt. */
const RETRY_MS = 100;

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
 * Connects `client` within `timeoutMs` (node-rdkafka's connect, in attempts of at most
 * ATTEMPT_MS while no broker answers). Rejects with a KafkaError: at the first refused login
 * (librdkafkaCode ERR__AUTHENTICATION) or failed TLS handshake (ERR__SSL) without waiting for
 * the timeout; with the client's error when an attempt fails otherwise (a bad setting) or the
 * last one fails; and, should the client never call back, a little after the timeout
 * (ERR__TIMED_OUT). After an early rejection the client ends its attempt in the background
 * within ATTEMPT_MS; a connection that still came up then is closed again.
 */
export function connectClient(client: Connectable, timeoutMs: number, context = 'connect'): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    // Thrown here, it rejects: a connect() or start() given a bad timeout.
    checkTimeout('timeoutMs', timeoutMs);
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
    const deadline = Date.now() + timeoutMs;
    const timer = setTimeout(() => finish(new KafkaError(`${context}: no answer within ${timeoutMs} ms`, ERR__TIMED_OUT)), timeoutMs + CALLBACK_GRACE_MS);
    client.on('event.log', onLog);
    const attempt = (): void => {
      if (settled) return;
      try {
        client.connect({ timeout: Math.max(1, Math.min(ATTEMPT_MS, deadline - Date.now())) }, (err: unknown) => {
          if (settled) {
            // connect() rejected already: a connection that came up after all is not kept.
            if (!err) client.disconnect(() => undefined);
            return;
          }
          if (!err) {
            finish(undefined);
            return;
          }
          const code = (err as { code?: unknown }).code;
          const unanswered = code === ERR__TIMED_OUT || code === ERR__TRANSPORT || code === ERR__ALL_BROKERS_DOWN;
          if (unanswered && deadline - Date.now() > RETRY_MS) setTimeout(attempt, RETRY_MS);
          else finish(toKafkaError(err, context));
        });
      } catch (err) {
        finish(toKafkaError(err, context));
      }
    };
    attempt();
  });
}
