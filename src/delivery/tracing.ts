// The engine's handler calls traced with OpenTelemetry (src/core/tracing.ts), for every consumer
// on it (DynamicConsumer, wrapKafkaJsConsumer, wrapPlatformaticConsumer), when a tracer provider
// is registered by the time its run starts: a span of kind CONSUMER around each handler
// call, a child of the producer's span that the message's `traceparent` names (or of the active
// context when it has none), the handler running in its context (a batch handler's call: one span
// linked to its messages' producer spans); with the messaging conventions'
// attributes and what the engine knows of the message: whether it carries an order header and of
// which kind, whether it went out of order and why, how long it waited between being read and
// its call (the resequencer's hold and its lane's queue), its attempt, its dead letter.

import { Buffer } from 'node:buffer';
import { headerText } from '../core/header-value';
import { activeTracer, type OtelApi, type OtelSpan, type OtelSpanContext, type OtelTracer, parseTraceparent, TRACEPARENT, TRACESTATE } from '../core/tracing';
import { isPromise, type HandledInfo } from './dispatch-types';
import { HEADER_TEXT } from '../native/consume';
import type { ConsumedMessage } from './resequencer-types';

type Attributes = Record<string, string | number | boolean>;

/** The OpenTelemetry API parts the engine needs beyond core/tracing.ts's. */
interface ContextApi extends OtelApi {
  trace: OtelApi['trace'] & { setSpan(context: unknown, span: OtelSpan): unknown };
}

const TRACEPARENT_NAME = Buffer.from(TRACEPARENT, 'latin1');
const TRACESTATE_NAME = Buffer.from(TRACESTATE, 'latin1');
type NativeFind = { [HEADER_TEXT]?: (name: Buffer) => string | null | undefined };

/** A message's headers wherever its client keeps them (@platformatic/kafka's: on the stream's message). */
function headersOf(m: ConsumedMessage): unknown {
  return m.headers ?? (m as { message?: { headers?: unknown } }).message?.headers;
}

function keyText(key: unknown): string | undefined {
  if (typeof key === 'string') return key;
  if (key instanceof Uint8Array) return Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('utf8');
  return undefined;
}

/** When a message was read (Date.now()), and its failed calls so far: on the message itself while traced. */
const READ_AT = Symbol('kdp.readAt');
const FAILED = Symbol('kdp.failedCalls');
type Traced = { [READ_AT]?: number; [FAILED]?: number };

/** What every span of one topic starts with: its name and the conventions' attributes. */
interface TopicStart {
  readonly name: string;
  readonly attributes: Attributes;
}

/** At most this many topics' starts are kept (then they are made again). */
const TOPICS_KEPT = 1000;

export class HandlerTracing<M extends ConsumedMessage> {
  private readonly topics = new Map<string, TopicStart>();

  private constructor(
    private readonly api: ContextApi,
    private readonly tracer: OtelTracer,
    private readonly groupId: string | undefined,
  ) {}

  /** The engine's tracing when a tracer provider is registered, else undefined. */
  static ifActive<M extends ConsumedMessage>(groupId: string | undefined): HandlerTracing<M> | undefined {
    const found = activeTracer();
    return found === undefined ? undefined : new HandlerTracing<M>(found.api as ContextApi, found.tracer, groupId === '' ? undefined : groupId);
  }

  /** A message was read. */
  arrived(m: M): void {
    (m as Traced)[READ_AT] = Date.now();
  }

  private topicStart(topic: string): TopicStart {
    let start = this.topics.get(topic);
    if (start === undefined) {
      if (this.topics.size >= TOPICS_KEPT) this.topics.clear();
      const attributes: Attributes = { 'messaging.system': 'kafka', 'messaging.operation.type': 'process', 'messaging.operation.name': 'process', 'messaging.destination.name': topic };
      if (this.groupId !== undefined) attributes['messaging.consumer.group.name'] = this.groupId;
      start = { name: `process ${topic}`, attributes };
      this.topics.set(topic, start);
    }
    return start;
  }

  /** The context a message's producer sent it in (its `traceparent`), else the active one. */
  private parentOf(m: M): unknown {
    const active = this.api.context.active();
    const sc = this.remoteOf(m);
    return sc === undefined ? active : this.api.trace.setSpanContext(active, sc);
  }

  /** The span context a message's `traceparent` (and `tracestate`) carries, if it carries a valid one. */
  private remoteOf(m: M): OtelSpanContext | undefined {
    let parent: string | null | undefined;
    let state: string | null | undefined;
    const find = (m as NativeFind)[HEADER_TEXT];
    // A native batch's message: found in its batch, no header list made (unless one was: it may have been changed).
    if (find !== undefined && (parent = find.call(m, TRACEPARENT_NAME)) !== undefined) {
      if (parent !== null) state = find.call(m, TRACESTATE_NAME);
    } else {
      const headers = headersOf(m);
      parent = headerText(headers, TRACEPARENT);
      if (parent !== undefined) state = headerText(headers, TRACESTATE);
    }
    return parent === undefined || parent === null ? undefined : parseTraceparent(this.api, parent, state ?? undefined);
  }

  /**
   * A call's own attributes: where its message is, its key, its attempt, its wait from being read
   * (a first call's); what its order header says, for a message that has one or went out of order.
   */
  private describe(span: OtelSpan, m: M, info: HandledInfo): void {
    const traced = m as Traced;
    const attempt = (traced[FAILED] ?? 0) + 1;
    const a: Attributes = {
      'messaging.destination.partition.id': String(m.partition),
      'messaging.kafka.offset': m.offset,
      'kdp.attempt': attempt,
    };
    const key = keyText(m.key);
    if (key !== undefined) a['messaging.kafka.message.key'] = key;
    const read = traced[READ_AT];
    if (read !== undefined && attempt === 1) a['kdp.wait_ms'] = Math.max(0, Date.now() - read);
    if (info.order !== null) {
      a['kdp.order'] = info.order.kind;
      a['kdp.order.marked'] = true;
      a['kdp.spread'] = info.order.kind === 'spread';
      a['kdp.moved'] = info.order.kind === 'moved';
    }
    if (info.outOfOrder) {
      a['kdp.out_of_order'] = true;
      if (info.reason !== undefined) a['kdp.release.reason'] = info.reason;
    }
    span.setAttributes(a);
  }

  /** `handle(m, info)` inside a CONSUMER span (the handler's own spans its children). */
  call(m: M, info: HandledInfo, handle: (m: M, info: HandledInfo) => void | Promise<void>): void | Promise<void> {
    const parent = this.parentOf(m);
    const { name, attributes } = this.topicStart(m.topic);
    const span = this.tracer.startSpan(name, { kind: this.api.SpanKind.CONSUMER, attributes }, parent);
    if (span.isRecording()) this.describe(span, m, info);
    return this.within(span, parent, m, () => handle(m, info));
  }

  /**
   * `handleBatch(ms, infos)` (a batch handler, runBatches()) inside one CONSUMER span, a child of
   * the active context linked to each message's producer span (the conventions' way for a batch).
   */
  callBatch(ms: M[], infos: HandledInfo[], handleBatch: (ms: M[], infos: HandledInfo[]) => void | Promise<void>): void | Promise<void> {
    const first = ms[0];
    const links: Array<{ context: OtelSpanContext }> = [];
    for (const m of ms) {
      const sc = this.remoteOf(m);
      if (sc !== undefined) links.push({ context: sc });
    }
    const { name, attributes } = this.topicStart(first.topic);
    const active = this.api.context.active();
    const span = this.tracer.startSpan(name, { kind: this.api.SpanKind.CONSUMER, attributes, links }, active);
    if (span.isRecording()) {
      span.setAttributes({
        'messaging.batch.message_count': ms.length,
        'messaging.destination.partition.id': String(first.partition),
        'kdp.attempt': ((first as Traced)[FAILED] ?? 0) + 1,
        'kdp.order.marked': infos.some((info) => info.order !== null),
      });
    }
    return this.within(span, active, first, () => handleBatch(ms, infos));
  }

  /**
   * `call()` in `span`'s context (a child of `parent`), the span ended with its result: at once, or
   * when its promise settles; a throw or a rejection counted as a failed call of `m` (its attempts).
   */
  private within(span: OtelSpan, parent: unknown, m: M, call: () => void | Promise<void>): void | Promise<void> {
    let result: void | Promise<void>;
    try {
      result = this.api.context.with(this.api.trace.setSpan(parent, span), call);
    } catch (err) {
      this.failed(m, span, err);
      throw err;
    }
    if (!isPromise(result)) {
      span.end();
      return result;
    }
    return result.then(() => span.end(), (err) => {
      this.failed(m, span, err);
      throw err;
    });
  }

  private failed(m: M, span: OtelSpan, err: unknown): void {
    const traced = m as Traced;
    traced[FAILED] = (traced[FAILED] ?? 0) + 1;
    span.recordException(err as Error);
    span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    span.end();
  }

  /** Messages written to the dead-letter topic `topic` after `error`: a PRODUCER span each, a child of the message's producer's. */
  deadLettered(messages: readonly M[], topic: string | undefined, error: Error): void {
    for (const m of messages) {
      const attributes: Attributes = {
        'messaging.system': 'kafka',
        'messaging.operation.type': 'send',
        'messaging.operation.name': 'send',
        'kdp.dead_letter': true,
        'kdp.dead_letter.origin': `${m.topic}/${m.partition}/${m.offset}`,
        'kdp.attempt': (m as Traced)[FAILED] ?? 0,
      };
      if (topic !== undefined) attributes['messaging.destination.name'] = topic;
      const span = this.tracer.startSpan(`send ${topic ?? 'dead letters'}`, { kind: this.api.SpanKind.PRODUCER, attributes }, this.parentOf(m));
      span.addEvent('dead-lettered', { 'exception.message': error.message });
      span.end();
    }
  }
}
