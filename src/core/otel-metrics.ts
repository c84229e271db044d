// The gauges of core/prometheus.ts through OpenTelemetry's metrics API as well, when the
// application registered a meter provider (metrics.setGlobalMeterProvider(), or an SDK's start())
// by the time a client is made (a consumer: its run starts): the same definitions and the same
// snapshot, each gauge an observable gauge named in OpenTelemetry's manner by otelName()
// (kdp_consumer_held: kdp.consumer.held; a producer's kdp_hot_keys: kdp.producer.hot_keys), its
// labels as attributes, plus `kdp.client.id` naming the client, all read from one snapshot per
// collection. Without @opentelemetry/api or a provider, nothing.

import type { GaugeOf } from './prometheus';
import { INSTRUMENTATION, otelApi } from './tracing';

type Attributes = Record<string, string>;

interface OtelMeter {
  createObservableGauge(name: string, options?: { description?: string }): unknown;
  addBatchObservableCallback(callback: (result: OtelBatchResult) => void, instruments: unknown[]): void;
  removeBatchObservableCallback(callback: (result: OtelBatchResult) => void, instruments: unknown[]): void;
}

interface OtelBatchResult {
  observe(instrument: unknown, value: number, attributes?: Attributes): void;
}

interface MetricsApi {
  metrics?: { getMeterProvider(): { getMeter(name: string): OtelMeter } };
  createNoopMeter?(): OtelMeter;
}

/** A gauge's OpenTelemetry name: `kdp.<kind>.` and its Prometheus name's own part (kdp_ and kdp_<kind>_ taken off). */
export function otelName(prometheusName: string, kind: 'producer' | 'consumer'): string {
  const own = prometheusName.replace(/^kdp_/, '').replace(new RegExp(`^${kind}_`), '');
  return `kdp.${kind}.${own}`;
}

/**
 * Registers `gauges` of a `kind` of client with the global meter provider, attributed `kdp.client.id` = `clientId`, each
 * collection reading `read()` once; returns what removes them again, or undefined (no provider).
 */
export function registerOtelGauges<S>(kind: 'producer' | 'consumer', clientId: string, read: () => S, gauges: ReadonlyArray<GaugeOf<S>>): (() => void) | undefined {
  const api = otelApi() as MetricsApi | null;
  if (api === null || api.metrics === undefined || typeof api.createNoopMeter !== 'function') return undefined;
  const meter = api.metrics.getMeterProvider().getMeter(INSTRUMENTATION);
  // No provider registered: the API's no-op meter.
  if (meter.constructor === api.createNoopMeter().constructor) return undefined;
  const instruments = gauges.map(([name, help]) => meter.createObservableGauge(otelName(name, kind), { description: help }));
  const client: Attributes = { 'kdp.client.id': clientId };
  const callback = (result: OtelBatchResult): void => {
    const snapshot = read();
    gauges.forEach(([, , , fill], i) => {
      const instrument = instruments[i];
      // prom-client's gauge calls as the definitions make them: set(value) or set(labels, value).
      fill({
        set: (labels: Attributes | number, value?: number) => {
          if (typeof labels === 'number') result.observe(instrument, labels, client);
          else result.observe(instrument, value!, { ...client, ...labels });
        },
      }, snapshot);
    });
  };
  meter.addBatchObservableCallback(callback, instruments);
  return () => meter.removeBatchObservableCallback(callback, instruments);
}
