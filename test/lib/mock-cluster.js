'use strict';
// librdkafka's in-process mock cluster through node-rdkafka (or the client test/lib/clients.js
// selects): no broker needed.
const { kafka } = require('./clients');

/** A connected node-rdkafka Producer on a fresh mock cluster (topics get 4 partitions). */
function mockProducer(globalConfig = {}, topicConfig = {}) {
  const producer = new (kafka().Producer)(
    { 'test.mock.num.brokers': 3, 'dr_msg_cb': true, 'log_level': 3, ...globalConfig },
    topicConfig,
  );
  return new Promise((resolve, reject) => {
    producer.once('ready', () => resolve(producer));
    producer.once('connection.failure', reject);
    producer.connect({ timeout: 10000 });
  });
}

/**
 * The partition count the cluster reports for `topic`, asking again while it reports none
 * (a topic being auto-created answers with no partitions at first).
 */
async function partitionCount(producer, topic, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const metadata = await new Promise((resolve, reject) => {
      producer.getMetadata({ topic, timeout: 5000 }, (err, m) => (err ? reject(err) : resolve(m)));
    });
    const entry = metadata.topics.find((x) => x.name === topic);
    if (entry && entry.partitions.length > 0) return entry.partitions.length;
    if (Date.now() > deadline) throw new Error(`no partitions for ${topic} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Resolves when `producer` has `count` delivery reports, with them in order of arrival. */
function collectReports(producer, count, timeoutMs = 60000) {
  const reports = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      producer.removeListener('delivery-report', onReport);
      reject(new Error(`only ${reports.length} of ${count} delivery reports within ${timeoutMs} ms`));
    }, timeoutMs);
    function onReport(err, report) {
      reports.push(err ? { error: err, ...report } : report);
      if (reports.length === count) {
        clearTimeout(timer);
        producer.removeListener('delivery-report', onReport);
        resolve(reports);
      }
    }
    producer.on('delivery-report', onReport);
    producer.setPollInterval(5);
  });
}

function disconnect(producer) {
  return new Promise((resolve) => producer.disconnect(5000, () => resolve()));
}

module.exports = { mockProducer, partitionCount, collectReports, disconnect };
