// kdp dead-letters: what a consumer's `deadLetter` option wrote to its dead-letter topic, listed, or sent back to the
// topics it came from. Its headers are the ones src/delivery/dead-letters.ts names; each partition is read by assignment
// (no group joined, nothing committed) up to the end it had when the command began; a replay writes through a
// DynamicProducer (src/producer/producer.ts). cli.ts reads the command line and calls listDeadLetters and replayDeadLetters.

import { randomUUID } from 'node:crypto';
import { kafkaLibrary } from '../core/library';
import { DEAD_LETTER_HEADERS } from '../delivery/dead-letters';
import { ORDER_HEADER } from '../partitioner/headers';
import { type DeliveryReport, DynamicProducer, type Headers } from '../producer/producer';
import { UsageError } from './args';

/** Something a kdp command could not do (a file to write, the cluster, a topic, a record): kdp ends with exit code 1. */
export class CommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandError';
  }
}

/** Where a command's output goes: one call per line, without its newline. */
export type Write = (line: string) => void;

/** What both commands take. */
export interface ConnectionOptions {
  /** The cluster's bootstrap list, host:port,... */
  readonly brokers?: string;
  /** The dead-letter topic. */
  readonly topic?: string;
  /** How long to wait to connect, for an answer, and for a partition's next record (default 10 s). */
  readonly timeoutMs?: number;
}

export interface ListOptions extends ConnectionOptions {
  /** At most this many records are printed. */
  readonly limit?: number;
  /** One JSON object per record (DeadLetterRecord) instead of a line of text. */
  readonly json?: boolean;
}

export interface ReplayOptions extends ConnectionOptions {
  /** The topic every selected record goes to, instead of its kdp-dlt-original-topic. */
  readonly to?: string;
  /** One record: its partition and offset in the dead-letter topic. */
  readonly partition?: number;
  readonly offset?: number;
  /** Every record of the dead-letter topic. */
  readonly all?: boolean;
  /** Print what would be sent, send nothing. */
  readonly dryRun?: boolean;
}

/** Bytes as JSON carries them: text when they are printable UTF-8, else base64. */
export type Encoded = { readonly text: string } | { readonly base64: string };

/** One dead letter as `list --json` prints it. A header that is absent, or not a number where one is meant, is null. */
export interface DeadLetterRecord {
  /** Where it is in the dead-letter topic. */
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number | null;
  readonly original: { readonly topic: string | null; readonly partition: number | null; readonly offset: number | null; readonly order: string | null };
  readonly attempts: number | null;
  readonly exception: { readonly class: string | null; readonly message: string | null; readonly code: string | null };
  readonly key: Encoded | null;
  readonly value: Encoded | null;
  /** Every header in its order, the dead letter's own included. */
  readonly headers: ReadonlyArray<{ readonly name: string } & Encoded>;
}

/** What a replay did. */
export interface ReplaySummary {
  readonly sent: number;
  readonly skipped: number;
  readonly failed: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** Records asked of the client per call. */
const BATCH = 500;
/** Sends under way at once in a replay: each window's reports are printed in the order the records were read. */
const SEND_WINDOW = 256;

/** What every dead-letter header name starts with: none of them goes back with a replayed message. */
const DEAD_LETTER_PREFIX = Object.values(DEAD_LETTER_HEADERS).reduce<string>((prefix, name) => {
  let n = 0;
  while (n < prefix.length && prefix[n] === name[n]) n++;
  return prefix.slice(0, n);
}, DEAD_LETTER_HEADERS.topic);

/** A record of the dead-letter topic, as read. */
interface Letter {
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number | null;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: ReadonlyArray<readonly [string, Buffer]>;
}

/** A partition of the dead-letter topic and its first and next offsets when the command began. */
interface Extent {
  readonly partition: number;
  readonly low: number;
  readonly high: number;
}

const seconds = (ms: number): string => `${+(ms / 1000).toFixed(3)} s`;
/** `n` and the word, plural unless n is 1: "1 dead letter", "3 dead letters". */
const count = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
const reason = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** A node-rdkafka call that answers through a callback, as a promise. */
function call<T>(fn: (done: (err: unknown, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value))));
}

/** The checked options both commands share. */
function connection(options: ConnectionOptions): { brokers: string; topic: string; timeoutMs: number } {
  if (!options.brokers) throw new UsageError('--brokers is required (the cluster\'s bootstrap list, host:port,...)');
  if (!options.topic) throw new UsageError('--topic is required (the dead-letter topic)');
  return { brokers: options.brokers, topic: options.topic, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS };
}

/** Reads a topic's partitions by assignment: a throwaway group id that never joins a group nor commits. */
class Reader {
  private constructor(
    private readonly consumer: any,
    readonly topic: string,
    private readonly timeoutMs: number,
  ) {}

  static async open(brokers: string, topic: string, timeoutMs: number): Promise<Reader> {
    const Kafka = kafkaLibrary(undefined);
    const consumer = new Kafka.KafkaConsumer(
      {
        'bootstrap.servers': brokers,
        'group.id': `kdp-dead-letters-${randomUUID()}`,
        'enable.auto.commit': false,
        'enable.auto.offset.store': false,
        // The end of what may be read now (the last stable offset under read_committed) ends a partition's read.
        'enable.partition.eof': true,
        'allow.auto.create.topics': false,
        log_level: 2,
      },
      { 'auto.offset.reset': 'earliest' },
    );
    try {
      await call((done) => consumer.connect({ timeout: timeoutMs }, done));
    } catch (err) {
      throw new CommandError(`cannot connect to ${brokers} within ${seconds(timeoutMs)}: ${reason(err)}`);
    }
    consumer.setDefaultConsumeTimeout(Math.min(200, timeoutMs));
    return new Reader(consumer, topic, timeoutMs);
  }

  /** The topic's partitions, in order, with their offsets now. */
  async extents(): Promise<Extent[]> {
    const { topic, timeoutMs } = this;
    let metadata: { topics: Array<{ name: string; partitions: Array<{ id: number }> }> };
    try {
      metadata = await call((done) => this.consumer.getMetadata({ topic, timeout: timeoutMs }, done));
    } catch (err) {
      throw new CommandError(`cannot read the metadata of ${topic}: ${reason(err)}`);
    }
    const entry = metadata.topics.find((t) => t.name === topic);
    if (!entry || entry.partitions.length === 0) throw new CommandError(`topic ${topic} does not exist`);
    const out: Extent[] = [];
    for (const partition of entry.partitions.map((p) => p.id).sort((a, b) => a - b)) {
      try {
        const w = await call<{ lowOffset: number; highOffset: number }>((done) => this.consumer.queryWatermarkOffsets(topic, partition, timeoutMs, done));
        out.push({ partition, low: w.lowOffset, high: w.highOffset });
      } catch (err) {
        throw new CommandError(`cannot read the offsets of ${topic} [${partition}]: ${reason(err)}`);
      }
    }
    return out;
  }

  /**
   * The records of `partition` from offset `from` up to `end` (excluded), or to the end of what may be read if that comes
   * first. Nothing new for timeoutMs is an error: the read never waits for ever.
   */
  async *read(partition: number, from: number, end: number): AsyncGenerator<Letter> {
    if (from >= end) return;
    const { consumer, topic } = this;
    let atEnd = false;
    const onEnd = (e: { topic: string; partition: number }) => {
      if (e.topic === topic && e.partition === partition) atEnd = true;
    };
    consumer.on('partition.eof', onEnd);
    consumer.assign([{ topic, partition, offset: from }]);
    let next = from;
    let since = Date.now();
    try {
      while (next < end && !atEnd) {
        let batch: any[];
        try {
          batch = await call((done) => consumer.consume(BATCH, done));
        } catch (err) {
          throw new CommandError(`cannot read ${topic} [${partition}] at offset ${next}: ${reason(err)}`);
        }
        for (const m of batch) {
          if (m.topic !== topic || m.partition !== partition || m.offset < next) continue;
          if (m.offset >= end) {
            next = end;
            break;
          }
          next = m.offset + 1;
          since = Date.now();
          yield letterOf(m);
        }
        if (next < end && !atEnd && Date.now() - since > this.timeoutMs) {
          throw new CommandError(`${topic} [${partition}]: nothing read for ${seconds(this.timeoutMs)} at offset ${next} (its end was ${end})`);
        }
      }
    } finally {
      consumer.removeListener('partition.eof', onEnd);
      consumer.unassign();
    }
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.timeoutMs);
      this.consumer.disconnect(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** A consumed message (node-rdkafka's: headers an array of one-name objects) as a Letter. */
function letterOf(m: any): Letter {
  const headers: Array<[string, Buffer]> = [];
  for (const h of m.headers ?? []) {
    for (const name of Object.keys(h)) {
      const v = h[name];
      headers.push([name, Buffer.isBuffer(v) ? v : Buffer.from(v instanceof Uint8Array ? v : String(v))]);
    }
  }
  return { partition: m.partition, offset: m.offset, timestamp: typeof m.timestamp === 'number' && m.timestamp >= 0 ? m.timestamp : null, key: toBuffer(m.key), value: toBuffer(m.value), headers };
}

function toBuffer(x: unknown): Buffer | null {
  if (x === null || x === undefined) return null;
  return Buffer.isBuffer(x) ? x : Buffer.from(x instanceof Uint8Array ? x : String(x));
}

/** Whether `b` is UTF-8 text with no control character but tab, newline and carriage return. */
function isText(b: Buffer): boolean {
  const text = b.toString('utf8');
  return Buffer.from(text, 'utf8').equals(b) && !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/.test(text);
}

function encoded(b: Buffer): Encoded {
  return isText(b) ? { text: b.toString('utf8') } : { base64: b.toString('base64') };
}

/** The first header named `name`, as text. */
function header(letter: Letter, name: string): string | null {
  const found = letter.headers.find(([n]) => n === name);
  return found ? found[1].toString('utf8') : null;
}

function integer(text: string | null): number | null {
  return text !== null && /^\d+$/.test(text) ? Number(text) : null;
}

/** A dead letter's fields, read from its headers. */
function deadLetterRecord(letter: Letter): DeadLetterRecord {
  const h = DEAD_LETTER_HEADERS;
  return {
    partition: letter.partition,
    offset: letter.offset,
    timestamp: letter.timestamp,
    original: {
      topic: header(letter, h.topic),
      partition: integer(header(letter, h.partition)),
      offset: integer(header(letter, h.offset)),
      order: header(letter, h.order),
    },
    attempts: integer(header(letter, h.attempts)),
    exception: { class: header(letter, h.errorClass), message: header(letter, h.errorMessage), code: header(letter, h.errorCode) },
    key: letter.key === null ? null : encoded(letter.key),
    value: letter.value === null ? null : encoded(letter.value),
    headers: letter.headers.map(([name, value]) => ({ name, ...encoded(value) })),
  };
}

/** A key as a line shows it: quoted text, or hex. */
function keyText(key: Buffer | null): string {
  if (key === null) return '(none)';
  return isText(key) ? JSON.stringify(key.toString('utf8')) : `0x${key.toString('hex')}`;
}

/** The line `list` prints for a dead letter: where it is, where it came from, the attempts, the failure, the key. */
function line(letter: Letter): string {
  const r = deadLetterRecord(letter);
  const o = r.original;
  const e = r.exception;
  const failure = `${e.class ?? '?'}${e.code === null ? '' : ` (code ${e.code})`}: ${JSON.stringify(e.message ?? '')}`;
  return `${letter.partition}:${letter.offset}  ${o.topic ?? '?'} [${o.partition ?? '?'}] ${o.offset ?? '?'}  attempts ${r.attempts ?? '?'}  ${failure}  key ${keyText(letter.key)}`;
}

/**
 * Prints the records of the dead-letter topic, partition by partition from its first offset to the end it had when this
 * began (at most `limit`), and resolves with how many it printed.
 */
export async function listDeadLetters(options: ListOptions, write: Write): Promise<number> {
  const { brokers, topic, timeoutMs } = connection(options);
  const limit = options.limit ?? Infinity;
  const reader = await Reader.open(brokers, topic, timeoutMs);
  let printed = 0;
  let total = 0;
  try {
    const extents = await reader.extents();
    total = extents.reduce((n, x) => n + x.high - x.low, 0);
    for (const { partition, low, high } of extents) {
      if (printed >= limit) break;
      for await (const letter of reader.read(partition, low, high)) {
        write(options.json ? JSON.stringify(deadLetterRecord(letter)) : line(letter));
        if (++printed >= limit) break;
      }
    }
  } finally {
    await reader.close();
  }
  if (!options.json) {
    write(printed < total && printed >= limit ? `${count(printed, 'dead letter')} shown (--limit ${limit}) of at most ${total}` : `${count(printed, 'dead letter')} in ${topic}`);
  }
  return printed;
}

/** The record's headers that go back with it: none of the dead letter's, no order header. */
function replayHeaders(letter: Letter): Headers {
  return letter.headers.filter(([name]) => name !== ORDER_HEADER && !name.startsWith(DEAD_LETTER_PREFIX)).map(([name, value]) => ({ [name]: value }));
}

/** The selection, checked before anything connects: one record or every one. */
function selection(options: ReplayOptions): { partition: number; offset: number } | 'all' {
  const one = options.partition !== undefined || options.offset !== undefined;
  if (options.all && one) throw new UsageError('--all or --partition with --offset, not both');
  if (options.all) return 'all';
  if (!one) throw new UsageError('nothing selected: --all, or --partition P --offset O for one record');
  if (options.partition === undefined || options.offset === undefined) throw new UsageError('--partition and --offset go together (one record)');
  return { partition: options.partition, offset: options.offset };
}

/**
 * Sends the selected dead letters back to their original topic (or `options.to`) through a DynamicProducer: their key,
 * value and headers but the dead letter's and the order header, placed by their key as any new message. A record without
 * an original topic, and no `to`, is skipped. Resolves with the counts once the reports are in; a send that failed makes
 * it reject with a CommandError after everything was tried and printed.
 */
export async function replayDeadLetters(options: ReplayOptions, write: Write): Promise<ReplaySummary> {
  const { brokers, topic, timeoutMs } = connection(options);
  const selected = selection(options);
  const reader = await Reader.open(brokers, topic, timeoutMs);
  let producer: DynamicProducer | undefined;
  let sent = 0;
  let skipped = 0;
  let failed = 0;
  try {
    const extents = await reader.extents();
    let ranges = extents;
    if (selected !== 'all') {
      const x = extents.find((e) => e.partition === selected.partition);
      if (!x) throw new CommandError(`${topic} has no partition ${selected.partition} (it has ${extents.length})`);
      if (selected.offset < x.low || selected.offset >= x.high) {
        const held = x.high > x.low ? `offsets ${x.low} to ${x.high - 1}` : 'no record';
        throw new CommandError(`no record at ${selected.partition}:${selected.offset} (${topic} [${selected.partition}] holds ${held})`);
      }
      ranges = [{ partition: x.partition, low: selected.offset, high: selected.offset + 1 }];
    }
    if (!options.dryRun) producer = await connectProducer(brokers, timeoutMs);
    const pending: Array<Promise<string>> = [];
    const flush = async () => {
      for (const text of await Promise.all(pending.splice(0))) write(text);
    };
    let found = false;
    for (const { partition, low, high } of ranges) {
      for await (const letter of reader.read(partition, low, high)) {
        found = true;
        const at = `${letter.partition}:${letter.offset}`;
        const target = options.to ?? header(letter, DEAD_LETTER_HEADERS.topic);
        if (!target) {
          skipped++;
          write(`${at} skipped: no ${DEAD_LETTER_HEADERS.topic} header (--to names a topic for it)`);
          continue;
        }
        const headers = replayHeaders(letter);
        if (!producer) {
          const names = headers.map((h) => Object.keys(h)[0]);
          sent++;
          write(`${at} would go to ${target}: key ${keyText(letter.key)}, value ${letter.value === null ? '(none)' : count(letter.value.length, 'byte')}, headers ${names.length ? names.join(', ') : '(none)'}`);
          continue;
        }
        pending.push(
          producer.send(target, letter.value, letter.key, headers.length ? headers : undefined).then(
            (r: DeliveryReport) => {
              sent++;
              return `${at} -> ${r.topic} [${r.partition}] ${r.offset}`;
            },
            (err: unknown) => {
              failed++;
              return `${at} not sent to ${target}: ${reason(err)}`;
            },
          ),
        );
        if (pending.length >= SEND_WINDOW) await flush();
      }
    }
    await flush();
    if (!found && selected !== 'all') throw new CommandError(`no record at ${selected.partition}:${selected.offset} (not one that may be read)`);
  } finally {
    if (producer) await producer.disconnect().catch(() => undefined);
    await reader.close();
  }
  const verb = options.dryRun ? 'would be sent' : 'sent';
  write(`${count(sent, 'dead letter')} ${verb}${skipped ? `, ${skipped} skipped` : ''}${failed ? `, ${failed} failed` : ''}`);
  if (failed) throw new CommandError(`${failed} of ${count(sent + failed, 'dead letter')} could not be sent`);
  return { sent, skipped, failed };
}

/** A DynamicProducer placing by key alone (no spreading), idempotent so that a retried send neither doubles nor reorders. */
async function connectProducer(brokers: string, timeoutMs: number): Promise<DynamicProducer> {
  const producer = new DynamicProducer({ 'bootstrap.servers': brokers, 'enable.idempotence': true, log_level: 2 }, {}, { spread: false });
  // Its failures reach the sends they concern; an 'error' event without a listener would end the process.
  producer.on('error', () => undefined);
  try {
    await producer.connect(timeoutMs);
  } catch (err) {
    await producer.disconnect().catch(() => undefined);
    throw new CommandError(`cannot connect a producer to ${brokers} within ${seconds(timeoutMs)}: ${reason(err)}`);
  }
  return producer;
}
