// OpenTelemetry, when the application uses it: `@opentelemetry/api` is an optional peer
// dependency, loaded here once. Tracing is on for a client when that package loads and a tracer
// provider is registered (trace.setGlobalTracerProvider(), or an SDK's start()) by the time the
// client connects; otherwise nothing of this runs per message. The trace context travels in the
// W3C Trace Context headers (`traceparent`, `tracestate`), written and read here whatever
// propagator the application registered (docs/observability.md).

import { headerText, named } from './header-value';

/** The parts of `@opentelemetry/api` used here (its 1.x API). */
export interface OtelApi {
  trace: {
    getTracerProvider(): { getDelegate?(): unknown; getTracer(name: string, version?: string): OtelTracer };
    getSpan(context: unknown): OtelSpan | undefined;
    setSpanContext(context: unknown, spanContext: OtelSpanContext): unknown;
  };
  context: { active(): unknown; with<T>(context: unknown, fn: () => T): T };
  ProxyTracerProvider: new () => { getDelegate(): unknown };
  createTraceState?(raw: string): unknown;
  SpanKind: { PRODUCER: number; CONSUMER: number; INTERNAL: number };
  SpanStatusCode: { ERROR: number };
}

export interface OtelSpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
  traceState?: { serialize(): string } | unknown;
}

export interface OtelSpan {
  spanContext(): OtelSpanContext;
  setAttribute(name: string, value: string | number | boolean): unknown;
  setAttributes(attributes: Record<string, string | number | boolean>): unknown;
  addEvent(name: string, attributes?: Record<string, string | number | boolean>): unknown;
  recordException(error: unknown): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(): void;
  isRecording(): boolean;
}

export interface OtelTracer {
  startSpan(name: string, options?: { kind?: number; attributes?: Record<string, string | number | boolean>; links?: Array<{ context: OtelSpanContext }> }, context?: unknown): OtelSpan;
}

/** The instrumentation's name and version, as its tracers are asked for. */
export const INSTRUMENTATION = 'kafka-dynamic-partitioner';
const VERSION = '0.1.0';

/** The W3C Trace Context headers (https://www.w3.org/TR/trace-context/). */
export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

let loaded: OtelApi | null | undefined;
/** The API's no-op tracer provider (a proxy's delegate until a provider is registered). */
let noop: unknown;

/** `@opentelemetry/api`, or null when it is not installed. */
export function otelApi(): OtelApi | null {
  if (loaded === undefined) {
    try {
      loaded = require('@opentelemetry/api') as OtelApi;
    } catch {
      loaded = null;
    }
  }
  return loaded;
}

/** A tracer of this package when a tracer provider is registered, else undefined (tracing off). */
export function activeTracer(): { api: OtelApi; tracer: OtelTracer } | undefined {
  const api = otelApi();
  if (api === null) return undefined;
  const provider = api.trace.getTracerProvider();
  // The global provider is a proxy whose delegate is the no-op provider until one is registered.
  noop ??= new api.ProxyTracerProvider().getDelegate();
  if (typeof provider.getDelegate === 'function' && provider.getDelegate() === noop) return undefined;
  return { api, tracer: provider.getTracer(INSTRUMENTATION, VERSION) };
}

/** A span's context as a W3C `traceparent` value. */
export function traceparentOf(sc: OtelSpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A span's `tracestate`, or undefined when it has none. */
export function tracestateOf(sc: OtelSpanContext): string | undefined {
  const state = sc.traceState as { serialize?(): string } | undefined;
  const text = state !== undefined && typeof state.serialize === 'function' ? state.serialize() : '';
  return text === '' ? undefined : text;
}

/** Whether `text[from, to)` is lowercase hex digits (`nonZero`: and not all zeros, as W3C ids must be). */
function isHex(text: string, from: number, to: number, nonZero: boolean): boolean {
  let seen = !nonZero;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
    if (c !== 48) seen = true;
  }
  return seen;
}

/**
 * The remote span context a `traceparent` (and `tracestate`) carries, or undefined for a value
 * that is not one (the W3C rules: version 00 exactly 55 characters, a later version at least
 * that with a dash after; version ff invalid; ids of lowercase hex, not all zeros). Parsed by
 * hand, no string made to check it: it runs for every message read.
 */
export function parseTraceparent(api: OtelApi, value: string, state: string | undefined): OtelSpanContext | undefined {
  const n = value.length;
  if (n < 55 || value.charCodeAt(2) !== 45 || value.charCodeAt(35) !== 45 || value.charCodeAt(52) !== 45) return undefined;
  if (!isHex(value, 0, 2, false) || (value.charCodeAt(0) === 102 && value.charCodeAt(1) === 102)) return undefined;
  const v00 = value.charCodeAt(0) === 48 && value.charCodeAt(1) === 48;
  if (v00 ? n !== 55 : n > 55 && value.charCodeAt(55) !== 45) return undefined;
  if (!isHex(value, 3, 35, true) || !isHex(value, 36, 52, true) || !isHex(value, 53, 55, false)) return undefined;
  const sc: OtelSpanContext = { traceId: value.slice(3, 35), spanId: value.slice(36, 52), traceFlags: Number.parseInt(value.slice(53, 55), 16), isRemote: true };
  if (state !== undefined && state !== '' && typeof api.createTraceState === 'function') sc.traceState = api.createTraceState(state);
  return sc;
}

/** Whether a header name (a string or bytes) is a W3C Trace Context header's. */
const isTraceName = (name: unknown): boolean => named(name, TRACEPARENT) || named(name, TRACESTATE);

/**
 * A copy of a message's headers without `traceparent` and `tracestate` (for a span's to replace
 * them), in the shape given (any headerText() reads); the same headers when they have neither.
 */
export function withoutTraceHeaders<H>(headers: H): H {
  if (headerText(headers, TRACEPARENT) === undefined && headerText(headers, TRACESTATE) === undefined) return headers;
  if (headers instanceof Map) return new Map([...headers].filter(([k]) => !isTraceName(k))) as H;
  if (Array.isArray(headers)) {
    const out: unknown[] = [];
    for (const h of headers) {
      if (Array.isArray(h) || h === null || typeof h !== 'object') {
        if (!(Array.isArray(h) && isTraceName(h[0]))) out.push(h);
        continue;
      }
      const kept = Object.entries(h as Record<string, unknown>).filter(([k]) => !isTraceName(k));
      if (kept.length > 0) out.push(Object.fromEntries(kept));
    }
    return out as H;
  }
  return Object.fromEntries(Object.entries(headers as Record<string, unknown>).filter(([k]) => !isTraceName(k))) as H;
}

