'use strict';
// Helpers of the secure broker tests (test/kafka/secure*.test.js): the cluster that
// `scripts/kafka.sh start --secure` runs (SASL_SSL with SCRAM-SHA-512, ACLs), found through
// KAFKA_SECURE_BROKERS (its bootstrap list) and KAFKA_SECURE_CONFIG (the client.json it writes:
// CA and client-certificate paths, users and passwords). Without both, the tests are skipped.
//
// Run directly (tap does when named), this file has no tests.

const fs = require('node:fs');
const Kafka = require('node-rdkafka');

/** The secure cluster's client settings, or null when the environment does not name one. */
function secureCluster() {
  const brokers = (process.env.KAFKA_SECURE_BROKERS || '').trim();
  const file = (process.env.KAFKA_SECURE_CONFIG || '').trim();
  if (!brokers || !file || !fs.existsSync(file)) return null;
  return { ...JSON.parse(fs.readFileSync(file, 'utf8')), brokers };
}

function needsSecureCluster() {
  return secureCluster()
    ? {}
    : { skip: 'KAFKA_SECURE_BROKERS / KAFKA_SECURE_CONFIG are not set: start one with scripts/kafka.sh start --secure 1 (npm run test:kafka does)' };
}

/**
 * librdkafka settings for `user` (a name in client.json's users) over SASL_SSL; `password`
 * overrides the user's. With `certificate`, the client also presents the client certificate,
 * whose key is encrypted with ssl.key.password.
 */
function clientConfig(c, user, { password, certificate = false } = {}) {
  const config = {
    'metadata.broker.list': c.brokers,
    'security.protocol': c.securityProtocol,
    'sasl.mechanisms': c.saslMechanism,
    'sasl.username': c.users[user].username,
    'sasl.password': password ?? c.users[user].password,
    'ssl.ca.location': c.caLocation,
    'log_level': 3,
  };
  if (certificate) {
    config['ssl.certificate.location'] = c.certificateLocation;
    config['ssl.key.location'] = c.keyLocation;
    config['ssl.key.password'] = c.keyPassword;
  }
  return config;
}

/** Creates topics as the super user `admin` (user `app` may not create topics). */
async function createTopics(c, topics, partitions) {
  const admin = Kafka.AdminClient.create(clientConfig(c, 'admin'));
  try {
    for (const topic of topics) {
      await new Promise((resolve, reject) => admin.createTopic({ topic, num_partitions: partitions, replication_factor: 1 }, 30000,
        (err) => (err ? reject(err) : resolve())));
    }
  } finally {
    admin.disconnect();
  }
}

/** A name unique to this run, after `prefix`. */
function unique(prefix) {
  return `${prefix}${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;
}

module.exports = { secureCluster, needsSecureCluster, clientConfig, createTopics, unique };
