// DynamicProducer's sends traced with OpenTelemetry (src/core/tracing.ts), when a tracer
// provider is registered by the time the producer connects: a span of kind PRODUCER per
// message of send(), sendBatch() and produce(), the message's `traceparent` (and `tracestate`)
// header carrying it to the consumer, and what the partitioner decided for it as attributes.
// The producer's intake (take/intake.ts) is wrapped in place, once; without a provider nothing
// changes and nothing of this runs per message.

import { Buffer } from 'node:buffer';
import { ORDER_ANCHOR, ORDER_MOVED, ORDER_NONE, ORDER_RETURN, ORDER_SPREAD } from '../../core/abi';
import type { Key } from '../../core/key';
import { headerText } from '../../core/header-value';
import { activeTracer, type OtelApi, type OtelSpan, type OtelTracer, parseTraceparent, TRACEPARENT, TRACESTATE, traceparentOf, tracestateOf, withoutTraceHeaders } from '../../core/tracing';
import type { DecisionRecord } from '../../partitioner/decision';
import type { DynamicPartitioner } from '../../partitioner/partitioner';
import type { DeliveryReport, Headers, OutgoingMessage, Pending, Value } from '../types';

/** Where messages are placed (place/placement.ts): each placing is read for its message's span. */
interface Placing {
  enqueue(topic: string, value: Value, key: Key | null | undefined, headers: Headers | undefined, timestamp: number | null | undefined, pending: Pending | undefined): boolean;
  placeUnplaced(m: { readonly headers?: Headers }): void;
}

/** The calls of the send path (take/intake.ts) that are traced. */
interface SendPath {
  produce(topic: string, value: Value, key: Key | null | undefined, headers: Headers | undefined, timestamp: number | null | undefined): boolean;
  send(topic: string, value: Value, key: Key | null | undefined, headers: Headers | undefined, timestamp: number | null | undefined): Promise<DeliveryReport>;
  sendBatch(topic: string, messages: readonly OutgoingMessage[]): Promise<DeliveryReport[]>;
}

/** The order marker's name in the `kdp.order` attribute. */
const ORDER_NAMES: Record<number, string> = { [ORDER_ANCHOR]: 'anchor', [ORDER_SPREAD]: 'spread', [ORDER_RETURN]: 'return', [ORDER_MOVED]: 'moved' };

/** Written into the partitioner's decision record before a message is placed: still there after, it was not placed at once. */
const NOT_PLACED = -2;

const TRACED = Symbol('kdp.traced');

/** What every span of one topic starts with: its name and the conventions' attributes. */
interface TopicStart {
  readonly name: string;
  readonly attributes: Record<string, string>;
}

/** The span a traced message's headers list (made by ProducerSpans.headers()) stands for. */
const SPAN = Symbol('kdp.span');
type TracedHeaders = Headers & { [SPAN]?: OtelSpan };

/** At most this many topics' starts are kept (then they are made again). */
const TOPICS_KEPT = 1000;

/** PRODUCER spans of messages: DynamicProducer's (below), and the KafkaJS and @platformatic/kafka wrappers'. */
export class ProducerSpans {
  private readonly topics = new Map<string, TopicStart>();

  /**
   * Spans when a tracer provider is registered, else undefined. The producer's settings:
   * `orderHeaders`, whether hot keys' messages carry an order header; `traceHeaders`, whether a
   * message's own `traceparent` gives way to its span's.
   */
  static ifActive(partitioner: DynamicPartitioner, settings: { readonly orderHeaders: 'spread' | 'none'; readonly traceHeaders: 'keep' | 'replace' }): ProducerSpans | undefined {
    const found = activeTracer();
    return found === undefined ? undefined
      : new ProducerSpans(found.api, found.tracer, partitioner, settings.orderHeaders === 'spread', settings.traceHeaders === 'replace');
  }

  constructor(
    private readonly api: OtelApi,
    private readonly tracer: OtelTracer,
    private readonly partitioner: DynamicPartitioner,
    private readonly marking: boolean,
    private readonly replace = false,
  ) {}

  private topicStart(topic: string): TopicStart {
    let start = this.topics.get(topic);
    if (start === undefined) {
      if (this.topics.size >= TOPICS_KEPT) this.topics.clear();
      start = {
        name: `send ${topic}`,
        attributes: { 'messaging.system': 'kafka', 'messaging.operation.type': 'send', 'messaging.operation.name': 'send', 'messaging.destination.name': topic },
      };
      this.topics.set(topic, start);
    }
    return start;
  }

  /**
   * A PRODUCER span for a message to `topic` (its `headers` as given), a child of the active
   * context; linked to the trace the message carried when its span's replaces it.
   */
  start(topic: string, key: unknown, headers?: unknown): OtelSpan {
    const { name, attributes } = this.topicStart(topic);
    const replaced = this.replace ? headerText(headers, TRACEPARENT) : undefined;
    const carried = replaced === undefined ? undefined : parseTraceparent(this.api, replaced, headerText(headers, TRACESTATE));
    const options = carried === undefined ? { kind: this.api.SpanKind.PRODUCER, attributes } : { kind: this.api.SpanKind.PRODUCER, attributes, links: [{ context: carried }] };
    const span = this.tracer.startSpan(name, options, this.api.context.active());
    // A key of another type gets no attribute: the intake refuses it with its typed error (a wrapper's client serializes it).
    if ((typeof key === 'string' || key instanceof Uint8Array) && span.isRecording()) {
      span.setAttribute('messaging.kafka.message.key', typeof key === 'string' ? key : Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('utf8'));
    }
    return span;
  }

  /**
   * A message's headers (any client's shape) as its span's trace headers go in: null when it
   * keeps the `traceparent` it carries (traceHeaders 'keep'), else without its own trace headers.
   */
  replacing<H>(headers: H): H | null {
    if (!this.replace) return headerText(headers, TRACEPARENT) === undefined ? headers : null;
    return withoutTraceHeaders(headers);
  }

  /** The span's trace headers, [name, value] (what a message carried of its own: replacing()). */
  traceHeaders(span: OtelSpan): Array<[string, string]> {
    const sc = span.spanContext();
    const state = tracestateOf(sc);
    return state === undefined ? [[TRACEPARENT, traceparentOf(sc)]] : [[TRACEPARENT, traceparentOf(sc)], [TRACESTATE, state]];
  }

  /** A wrapper's message just placed on `partition` by the partitioner's decide(): what it decided, on its span. */
  decided(span: OtelSpan, partition: number): void {
    if (!span.isRecording()) return;
    span.setAttribute('messaging.destination.partition.id', String(partition));
    this.placed(span);
  }

  /**
   * The caller's headers with the span's trace headers added, unless they keep a `traceparent`
   * of their own (replacing()): a new list either way, by which the placement finds the message's
   * span. (A span ended before its message is placed, produce()'s held for room, is left as it ended.)
   */
  headers(span: OtelSpan, headers: Headers | undefined): Headers {
    // Not a list: left as it is, for the intake to refuse with its typed error.
    if (headers !== undefined && !Array.isArray(headers)) return headers;
    const rest = this.replacing(headers);
    let out: TracedHeaders;
    if (rest === null) out = [...headers!];
    else {
      const ours = Object.fromEntries(this.traceHeaders(span));
      out = rest === undefined ? [ours] : [...rest, ours];
    }
    out[SPAN] = span;
    return out;
  }

  /** `place()` of a message (its `headers` list, ours), and what the partitioner decided for it on its span. */
  placing<T>(headers: Headers | undefined, place: () => T): T {
    const span = (headers as TracedHeaders | undefined)?.[SPAN];
    if (span === undefined || !span.isRecording()) return place();
    (this.partitioner.decision as DecisionRecord).partition = NOT_PLACED;
    const result = place();
    this.placed(span);
    return result;
  }

  /**
   * What the partitioner decided for the message just placed, as attributes: a hot key's (one
   * with an order marker) only, a cold key's have none (nothing when it waits to be placed).
   */
  private placed(span: OtelSpan): void {
    const d = this.partitioner.decision;
    const order = d.order;
    if (d.partition === NOT_PLACED || order === ORDER_NONE) return;
    span.setAttributes({
      'kdp.order': ORDER_NAMES[order] ?? String(order),
      'kdp.hot': order !== ORDER_RETURN,
      'kdp.spread': order === ORDER_SPREAD,
      'kdp.moved': order === ORDER_MOVED,
      'kdp.order.marked': this.marking,
    });
    if (order === ORDER_SPREAD) span.setAttribute('kdp.spread.width', d.width);
  }

  /** produce()'s message, which no report follows: its partition as placed (none when it waits to be placed). */
  handedOver(span: OtelSpan): void {
    const partition = this.partitioner.decision.partition;
    if (partition !== NOT_PLACED && span.isRecording()) span.setAttribute('messaging.destination.partition.id', String(partition));
  }

  /** The span ends with its message's report (partition and offset), or its error. */
  end(span: OtelSpan, report: DeliveryReport | undefined, error?: unknown): void {
    if (error !== undefined) {
      span.recordException(error as Error);
      span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    } else if (report !== undefined && span.isRecording()) {
      span.setAttribute('messaging.destination.partition.id', String(report.partition));
      if (report.offset >= 0) span.setAttribute('messaging.kafka.offset', report.offset);
    }
    span.end();
  }
}

/**
 * When a tracer provider is registered: `intake`'s produce(), send() and sendBatch() traced from
 * now on (once per intake), `placement` telling each message's span where it went.
 * `settings`: the producer's (ProducerSpans.ifActive()).
 */
export function traceSends(intake: SendPath, placement: Placing, partitioner: DynamicPartitioner,
  settings: { readonly orderHeaders: 'spread' | 'none'; readonly traceHeaders: 'keep' | 'replace' }): void {
  const owner = intake as SendPath & { [TRACED]?: true };
  if (owner[TRACED]) return;
  const t = ProducerSpans.ifActive(partitioner, settings);
  if (t === undefined) return;
  owner[TRACED] = true;
  const enqueue = placement.enqueue.bind(placement);
  const placeUnplaced = placement.placeUnplaced.bind(placement);
  // Where a message is placed, at once or once its topic's partition count is known: its span learns what was decided.
  placement.enqueue = (topic, value, key, headers, timestamp, pending) => t.placing(headers, () => enqueue(topic, value, key, headers, timestamp, pending));
  placement.placeUnplaced = (m) => t.placing(m.headers, () => placeUnplaced(m));
  const produce = intake.produce.bind(intake);
  const send = intake.send.bind(intake);
  const sendBatch = intake.sendBatch.bind(intake);
  intake.produce = (topic, value, key, headers, timestamp) => {
    // No report comes back to produce(): its span covers the hand-over, and carries its trace.
    const span = t.start(topic, key, headers);
    try {
      const taken = produce(topic, value, key, t.headers(span, headers), timestamp);
      t.handedOver(span);
      t.end(span, undefined);
      return taken;
    } catch (err) {
      t.end(span, undefined, err);
      throw err;
    }
  };
  intake.send = (topic, value, key, headers, timestamp) => {
    const span = t.start(topic, key, headers);
    return send(topic, value, key, t.headers(span, headers), timestamp).then((report) => {
      t.end(span, report);
      return report;
    }, (err) => {
      t.end(span, undefined, err);
      throw err;
    });
  };
  intake.sendBatch = (topic, messages) => {
    if (!Array.isArray(messages)) return sendBatch(topic, messages);
    const spans = messages.map((m: OutgoingMessage) => (m !== null && typeof m === 'object' ? t.start(topic, m.key, m.headers) : undefined));
    const traced = messages.map((m: OutgoingMessage, i) => (spans[i] === undefined ? m : { ...m, headers: t.headers(spans[i]!, m.headers) }));
    return sendBatch(topic, traced).then((reports) => {
      reports.forEach((report, i) => spans[i] !== undefined && t.end(spans[i]!, report));
      return reports;
    }, (err: { outcomes?: Array<DeliveryReport | Error> }) => {
      // A BatchError's outcomes say each message's fate; a refusal of the whole call, every one's.
      spans.forEach((span, i) => {
        if (span === undefined) return;
        const outcome = err?.outcomes?.[i];
        if (outcome !== undefined && !(outcome instanceof Error)) t.end(span, outcome);
        else t.end(span, undefined, outcome ?? err);
      });
      throw err;
    });
  };
}
