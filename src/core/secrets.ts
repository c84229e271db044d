// Secrets in a librdkafka configuration. node-rdkafka keeps the configuration a client was made
// with as a plain property (`client.globalConfig`), so that logging a DynamicProducer,
// DynamicConsumer or LagMonitor (console.log, util.inspect, JSON.stringify, a logger that
// serialises objects) printed `sasl.password` and `ssl.key.password`. librdkafka has its own
// copy (parsed when the client is made), so the clients made here keep a redacted one.

import type { Config } from './config';

/** What a secret's value shows instead. */
export const REDACTED = '[redacted]';

/**
 * librdkafka's sensitive properties (CONFIGURATION.md: sasl.password, ssl.key.password,
 * ssl.keystore.password, ssl.key.pem, ssl_key, sasl.oauthbearer.config,
 * sasl.oauthbearer.client.secret, the assertion's private key and passphrase), and any other
 * name that says password, secret or passphrase.
 */
const SENSITIVE = /password|secret|passphrase|private\.key|^ssl\.key\.pem$|^ssl_key$|^sasl\.oauthbearer\.config$/i;

export function isSensitive(name: string): boolean {
  return SENSITIVE.test(name);
}

/** A copy of `config` with the values of sensitive properties replaced by REDACTED. */
export function redactConfig(config: Config): Config {
  const copy: Config = {};
  for (const [name, value] of Object.entries(config)) copy[name] = isSensitive(name) && value !== undefined ? REDACTED : value;
  return copy;
}

/** Replaces the configuration node-rdkafka keeps on a client made here by a redacted copy. */
export function hideSecrets(client: unknown): void {
  const c = client as { globalConfig?: unknown } | null;
  if (c !== null && typeof c === 'object' && typeof c.globalConfig === 'object' && c.globalConfig !== null) {
    c.globalConfig = redactConfig(c.globalConfig as Config);
  }
}
