'use strict';
// OpenTelemetry as an application registers it for its tests: the SDK's tracer provider, every span kept by its
// in-memory exporter, and the AsyncLocalStorage context manager; both taken down when the test `t` ends.

const api = require('@opentelemetry/api');
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');

/** Registers the provider and the context manager for the rest of `t`; returns the exporter. */
function inMemoryTracing(t) {
  const exporter = new InMemorySpanExporter();
  api.trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  t.teardown(() => {
    api.trace.disable();
    api.context.disable();
  });
  return exporter;
}

module.exports = { inMemoryTracing };
