// Gauges in a prom-client Registry (prom-client is an optional peer dependency), read from a metrics snapshot on each
// scrape: what a producer (src/producer/metrics.ts) and a consumer (src/delivery/consumer-metrics.ts) register through
// their `prometheus` option.

import { InvalidOptionError } from './errors';

/** One gauge: its name, help, labels, and how a snapshot sets it. */
export type GaugeOf<S> = readonly [name: string, help: string, labelNames: readonly string[], fill: (gauge: any, snapshot: S) => void];

/**
 * Registers `gauges` in `registry`, each filled from `read()` on scrape; returns what takes them out again. Not a
 * Registry, prom-client missing, a name the Registry has already (`owner`'s, not closed yet?) or refused: an
 * InvalidOptionError naming `options.prometheus`, and none left in.
 */
export function registerGauges<S>(registry: unknown, owner: string, read: () => S, gauges: ReadonlyArray<GaugeOf<S>>): () => void {
  let client: any;
  try {
    client = require('prom-client');
  } catch {
    throw new InvalidOptionError('options.prometheus', 'used with the prom-client package installed (npm install prom-client)', registry);
  }
  if (!(registry instanceof client.Registry)) {
    throw new InvalidOptionError('options.prometheus', 'a prom-client Registry', registry);
  }
  const registered: string[] = [];
  const unregister = (): void => {
    for (const name of registered.splice(0)) (registry as any).removeSingleMetric(name);
  };
  for (const [name, help, labelNames, fill] of gauges) {
    if ((registry as any).getSingleMetric(name) !== undefined) {
      unregister();
      throw new InvalidOptionError('options.prometheus', `a Registry without a metric named ${name}`, registry,
        `options.prometheus: the Registry already has a metric named ${name} (another ${owner}'s, not closed yet?): give each its own Registry`);
    }
    try {
      // eslint-disable-next-line no-new
      new client.Gauge({
        name, help, labelNames, registers: [registry],
        collect(this: any) {
          this.reset();
          fill(this, read());
        },
      });
    } catch (err) {
      // prom-client's own refusal (a plain Error): typed, and nothing of ours left behind.
      unregister();
      throw new InvalidOptionError('options.prometheus', 'a Registry that takes the gauge', registry,
        `options.prometheus: the Registry refused the gauge ${name}: ${err instanceof Error ? err.message : String(err)}`, err);
    }
    registered.push(name);
  }
  return unregister;
}
