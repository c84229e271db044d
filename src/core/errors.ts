// Every error this package throws or rejects with carries a stable `code`. Argument errors
// extend the built-in TypeError / RangeError so that ordinary checks keep working.

export type ErrorCode =
  | 'KDP_INVALID_ARG_TYPE'
  | 'KDP_OUT_OF_RANGE'
  | 'KDP_INVALID_VALUE'
  | 'KDP_INVALID_OPTION'
  | 'KDP_KAFKA_ERROR'
  | 'KDP_STATE'
  | 'KDP_UNDELIVERED'
  | 'KDP_HANDLER_ERROR';

/** A value of the wrong type: `argument` names it, `expected` says what would do. */
export class InvalidArgTypeError extends TypeError {
  readonly code = 'KDP_INVALID_ARG_TYPE' as const;
  constructor(readonly argument: string, readonly expected: string, actual: unknown) {
    super(`${argument} must be ${expected}, got ${describe(actual)}`);
    this.name = 'InvalidArgTypeError';
  }
}

/** A number outside what the argument allows. */
export class OutOfRangeError extends RangeError {
  readonly code = 'KDP_OUT_OF_RANGE' as const;
  constructor(readonly argument: string, readonly expected: string, actual: unknown) {
    super(`${argument} must be ${expected}, got ${describe(actual)}`);
    this.name = 'OutOfRangeError';
  }
}

/** A value that is not one of a fixed set; the message lists the valid ones. */
export class InvalidValueError extends RangeError {
  readonly code = 'KDP_INVALID_VALUE' as const;
  constructor(readonly argument: string, readonly valid: readonly string[], actual: unknown) {
    super(`${argument} must be one of ${valid.map((v) => `'${v}'`).join(', ')}, got ${describe(actual)}`);
    this.name = 'InvalidValueError';
  }
}

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
  constructor(readonly path: string, readonly expected: string, actual: unknown, message?: string) {
    super(message ?? `${path} must be ${expected}, got ${describe(actual)}`);
    this.name = 'InvalidOptionError';
  }

  /** An option name that does not exist. */
  static unknown(path: string, valid: readonly string[]): InvalidOptionError {
    return new InvalidOptionError(path, 'absent', undefined, `${path} is not an option (valid here: ${valid.join(', ')})`);
  }
}

/** A librdkafka error, from produce() or a delivery report; `librdkafkaCode` is its numeric code. */
export class KafkaError extends Error {
  readonly code = 'KDP_KAFKA_ERROR' as const;
  constructor(message: string, readonly librdkafkaCode: number | undefined, override readonly cause?: unknown) {
    super(message);
    this.name = 'KafkaError';
  }
}

/** The producer was used in a state that does not allow it (not connected, disconnected, ...). */
export class StateError extends Error {
  readonly code = 'KDP_STATE' as const;
  constructor(message: string) {
    super(message);
    this.name = 'StateError';
  }
}

/** Messages that could not be confirmed before disconnect() gave up waiting. */
export class UndeliveredError extends Error {
  readonly code = 'KDP_UNDELIVERED' as const;
  constructor(message: string, readonly undelivered: number) {
    super(message);
    this.name = 'UndeliveredError';
  }
}

/**
 * A consumer's message handler threw or rejected (`cause`) on the message at `offset` of
 * `topic` / `partition`; `attempts` counts its failed calls on that message so far.
 */
export class HandlerError extends Error {
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
