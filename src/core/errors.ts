// Every error this package throws, rejects with or emits is a KdpError with a stable `code`.
// Argument and option errors also extend the built-in TypeError / RangeError, so that
// ordinary checks (`err instanceof TypeError`) keep working; a class cannot extend both, so
// `instanceof KdpError` reads a brand that every error class of the package carries.

export type ErrorCode =
  | 'KDP_INVALID_ARG_TYPE'
  | 'KDP_OUT_OF_RANGE'
  | 'KDP_INVALID_VALUE'
  | 'KDP_INVALID_OPTION'
  | 'KDP_KAFKA_ERROR'
  | 'KDP_STATE'
  | 'KDP_UNDELIVERED'
  | 'KDP_BATCH_FAILED'
  | 'KDP_HANDLER_ERROR'
  | 'KDP_CALLBACK_ERROR'
  | 'KDP_TOPIC_CAPACITY'
  | 'KDP_TRANSACTION'
  | 'KDP_DEAD_LETTER'
  | 'KDP_INTERNAL';

const BRAND = Symbol('kafka-dynamic-partitioner.error');

/** Marks the prototype of an error class of this package (what `instanceof KdpError` reads). */
function brand(ctor: { prototype: object }): void {
  Object.defineProperty(ctor.prototype, BRAND, { value: true });
}

/**
 * The base of every error of this package: `code` is stable across versions (match on it, not
 * on the message). `err instanceof KdpError` holds for all of them, the TypeError and
 * RangeError ones included.
 */
export abstract class KdpError extends Error {
  abstract readonly code: ErrorCode;

  static override [Symbol.hasInstance](value: unknown): boolean {
    // A subclass (KafkaError, ...) inherits this: for it, the ordinary prototype-chain test.
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class instanceof was asked about, KdpError or a subclass
    if (this !== KdpError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}
brand(KdpError);

/** A value of the wrong type: `argument` names it, `expected` says what would do. */
export class InvalidArgTypeError extends TypeError {
  readonly code = 'KDP_INVALID_ARG_TYPE' as const;
  constructor(readonly argument: string, readonly expected: string, actual: unknown) {
    super(`${argument} must be ${expected}, got ${describe(actual)}`);
    this.name = 'InvalidArgTypeError';
  }
}
brand(InvalidArgTypeError);

/** A number outside what the argument allows. */
export class OutOfRangeError extends RangeError {
  readonly code = 'KDP_OUT_OF_RANGE' as const;
  constructor(readonly argument: string, readonly expected: string, actual: unknown) {
    super(`${argument} must be ${expected}, got ${describe(actual)}`);
    this.name = 'OutOfRangeError';
  }
}
brand(OutOfRangeError);

/**
 * Throws unless `n` is a usable partition count: an integer in [1, 2^31 - 1]. Checked where a
 * count enters the library (partitionForKey(s), allowedPartitions, DynamicPartitioner).
 */
export function checkPartitionCount(n: unknown, argument = 'numPartitions'): void {
  if (typeof n !== 'number') throw new InvalidArgTypeError(argument, 'an integer >= 1', n);
  if (!(n >= 1 && n <= 0x7fffffff && Math.floor(n) === n)) {
    throw new OutOfRangeError(argument, 'an integer >= 1 and < 2^31', n);
  }
}

/**
 * Throws unless `ms` is a usable timeout: a number of milliseconds, 0 or more, and finite unless
 * `infinite` (a wait with no end, where the call allows one: a consumer's stop()). A value that
 * is not a number is an InvalidArgTypeError, a number out of range (NaN, negative) an
 * OutOfRangeError. The one check of every timeout argument the package takes.
 */
export function checkTimeout(argument: string, ms: unknown, infinite = false): void {
  const error = timeoutError(argument, ms, infinite);
  if (error !== undefined) throw error;
}

/** checkTimeout()'s error for `ms`, or undefined: for a call that rejects rather than throws. */
export function timeoutError(argument: string, ms: unknown, infinite = false): InvalidArgTypeError | OutOfRangeError | undefined {
  if (typeof ms !== 'number') return new InvalidArgTypeError(argument, 'a number of milliseconds', ms);
  if (!(ms >= 0 && (infinite || ms < Infinity))) {
    return new OutOfRangeError(argument, infinite ? 'a number of milliseconds, 0 or more (Infinity: no limit)' : 'a finite number of milliseconds, 0 or more', ms);
  }
  return undefined;
}

/** A value that is not one of a fixed set; the message lists the valid ones. */
export class InvalidValueError extends RangeError {
  readonly code = 'KDP_INVALID_VALUE' as const;
  constructor(readonly argument: string, readonly valid: readonly string[], actual: unknown) {
    super(`${argument} must be one of ${valid.map((v) => `'${v}'`).join(', ')}, got ${describe(actual)}`);
    this.name = 'InvalidValueError';
  }
}
brand(InvalidValueError);

/** Describes a value for an error message without dumping large objects or buffers. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  switch (typeof value) {
    case 'string':
      return value.length > 40 ? `a string of length ${value.length}` : JSON.stringify(value);
    case 'number':
    case 'boolean':
    case 'bigint':
      return `${typeof value} ${String(value)}`;
    case 'symbol':
      return value.toString();
    case 'function':
      return 'a function';
    default: {
      const name = (value as object).constructor?.name;
      return name ? `an instance of ${name}` : 'an object';
    }
  }
}

/** An option that is unknown, of the wrong type or out of range; `path` names it (e.g. options.sketch.width). */
export class InvalidOptionError extends TypeError {
  readonly code = 'KDP_INVALID_OPTION' as const;
  /** `cause`: what refused it, when that was not this package (librdkafka, prom-client). */
  constructor(readonly path: string, readonly expected: string, actual: unknown, message?: string, cause?: unknown) {
    super(message ?? `${path} must be ${expected}, got ${describe(actual)}`, cause === undefined ? undefined : { cause });
    this.name = 'InvalidOptionError';
  }

  /** An option name that does not exist. */
  static unknown(path: string, valid: readonly string[]): InvalidOptionError {
    return new InvalidOptionError(path, 'absent', undefined, `${path} is not an option (valid here: ${valid.join(', ')})`);
  }
}
brand(InvalidOptionError);

/** A librdkafka error, from produce() or a delivery report; `librdkafkaCode` is its numeric code. */
export class KafkaError extends KdpError {
  readonly code = 'KDP_KAFKA_ERROR' as const;
  constructor(message: string, readonly librdkafkaCode: number | undefined, override readonly cause?: unknown) {
    super(message);
    this.name = 'KafkaError';
  }
}

/** The producer was used in a state that does not allow it (not connected, disconnected, ...). */
export class StateError extends KdpError {
  readonly code = 'KDP_STATE' as const;
  constructor(message: string) {
    super(message);
    this.name = 'StateError';
  }
}

/** Messages that could not be confirmed before disconnect() gave up waiting. */
export class UndeliveredError extends KdpError {
  readonly code = 'KDP_UNDELIVERED' as const;
  constructor(message: string, readonly undelivered: number) {
    super(message);
    this.name = 'UndeliveredError';
  }
}

/**
 * A sendBatch() with at least one message not written: `outcomes[i]` is message i's outcome,
 * its delivery report (`{ topic, partition, offset, ... }`) or the error that says why it was not
 * written; `failed` counts the errors.
 */
export class BatchError extends KdpError {
  readonly code = 'KDP_BATCH_FAILED' as const;
  readonly failed: number;
  constructor(readonly outcomes: ReadonlyArray<object>, failed: number) {
    const first = outcomes.find((o) => o instanceof Error) as Error | undefined;
    super(`${failed} of ${outcomes.length} messages were not written${first ? ` (first: ${first.message})` : ''}`);
    this.name = 'BatchError';
    this.failed = failed;
  }
}
brand(BatchError);

/**
 * A consumer's message handler threw or rejected (`cause`) on the message at `offset` of
 * `topic` / `partition`; `attempts` counts its failed calls on that message so far.
 */
export class HandlerError extends KdpError {
  readonly code = 'KDP_HANDLER_ERROR' as const;
  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly offset: number,
    readonly attempts: number,
    override readonly cause: unknown,
  ) {
    super(`handler failed on ${topic} [${partition}] offset ${offset} (attempt ${attempts}): ${cause instanceof Error ? cause.message : describe(cause)}`);
    this.name = 'HandlerError';
  }
}

/** A function the application gave as an option (`option`, e.g. options.spreadable) threw `cause`. */
export class CallbackError extends KdpError {
  readonly code = 'KDP_CALLBACK_ERROR' as const;
  constructor(readonly option: string, override readonly cause: unknown) {
    super(`${option} threw: ${cause instanceof Error ? cause.message : describe(cause)}`);
    this.name = 'CallbackError';
  }
}

/**
 * Emitted as a 'warning' (never thrown): `topic` is partitioned without state, as Kafka's
 * partitioner would (no hot-key detection, no spreading), because the `maxTopics` topic slots
 * are held by topics that were not idle long enough to give theirs up. It gets a slot when one
 * frees; stats().topicsWithoutState counts such topics (up to max(1024, 16 x maxTopics) are
 * kept; a forgotten one gets this warning again when it comes back).
 */
export class TopicCapacityError extends KdpError {
  readonly code = 'KDP_TOPIC_CAPACITY' as const;
  constructor(readonly topic: string, readonly maxTopics: number) {
    super(`topic ${JSON.stringify(topic)} is partitioned without hot-key detection: all ${maxTopics} topic slots (options.maxTopics) are busy`);
    this.name = 'TopicCapacityError';
  }
}

/**
 * What a transactional call's failure leaves to do, as librdkafka classifies it
 * (rd_kafka_error_is_retriable, _txn_requires_abort, _is_fatal):
 *   'retriable'  the same call may be made again;
 *   'abortable'  the transaction cannot commit: abortTransaction(), then begin the next;
 *   'fatal'      the producer can go on no more (fenced: another instance took its transactional.id);
 *                disconnect it and make a new one.
 */
export type TransactionErrorKind = 'retriable' | 'abortable' | 'fatal';

/** A transactional call failed: `kind` says what to do (TransactionErrorKind), `librdkafkaCode` is librdkafka's code. */
export class TransactionError extends KdpError {
  readonly code = 'KDP_TRANSACTION' as const;
  constructor(message: string, readonly kind: TransactionErrorKind, readonly librdkafkaCode: number | undefined, override readonly cause?: unknown) {
    super(message);
    this.name = 'TransactionError';
  }
}

/**
 * A consumer could not write a message to its dead-letter topic (`deadLetter.topic`): emitted as a 'warning' on each failed
 * write while the message's key stays parked, and the error a run stops with once it stayed parked `maxParkMs`. `topic`,
 * `partition`, `offset` name the message, `handlerError` is the handler's failure that sent it there, `cause` the write's.
 */
export class DeadLetterError extends KdpError {
  readonly code = 'KDP_DEAD_LETTER' as const;
  constructor(
    readonly deadLetterTopic: string,
    readonly topic: string,
    readonly partition: number,
    readonly offset: number,
    readonly parkedMs: number,
    readonly handlerError: HandlerError,
    override readonly cause: unknown,
  ) {
    super(`could not write ${topic} [${partition}] offset ${offset} to the dead-letter topic ${JSON.stringify(deadLetterTopic)} ` +
      `(parked ${Math.round(parkedMs)} ms): ${cause instanceof Error ? cause.message : describe(cause)}`);
    this.name = 'DeadLetterError';
  }
}

/**
 * A broken invariant of this package (the WebAssembly core aborted, a state that cannot
 * happen): a bug to report, never the caller's input.
 */
export class InternalError extends KdpError {
  readonly code = 'KDP_INTERNAL' as const;
  constructor(message: string) {
    super(`kafka-dynamic-partitioner: ${message}`);
    this.name = 'InternalError';
  }
}

/** Wraps what a dependency (librdkafka through node-rdkafka) threw or reported; a KafkaError stays as it is. */
export function toKafkaError(err: unknown, context: string): KafkaError {
  if (err instanceof KafkaError) return err;
  const e = err as { code?: unknown; message?: unknown } | null | undefined;
  // Kafka's code, of the error or of one it wraps (a KafkaJS retry that gave up wraps the refusal as its cause).
  let code: number | undefined;
  for (let c = err as { code?: unknown; cause?: unknown } | null | undefined, depth = 0; c && depth < 5 && code === undefined; c = c.cause as typeof c, depth++) {
    if (typeof c.code === 'number') code = c.code;
  }
  const message = typeof e?.message === 'string' ? e.message : describeCause(err);
  return new KafkaError(`${context}: ${message}`, code, err);
}

function describeCause(err: unknown): string {
  return typeof err === 'string' ? err : describe(err);
}
