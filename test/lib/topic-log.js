'use strict';
// What a node-rdkafka-style client (node-rdkafka's or Confluent's) can tell of a topic's log: metadata, and each partition's
// watermark offsets (a topic read back whole is read up to these). Shared by the
// mock-cluster tests (test/producer/lib/helpers.js) and the broker suite (test/kafka/lib/kafka.js).

/** The cluster's metadata for `query` ({ topic } or { allTopics }), through a connected client. */
function metadataOf(client, query = {}) {
  return new Promise((resolve, reject) => {
    client.getMetadata({ timeout: 10000, ...query }, (err, m) => (err ? reject(err) : resolve(m)));
  });
}

/**
 * Each partition's { lowOffset, highOffset } of `topic`, in partition order, through a
 * connected consumer; throws when the topic has no partitions.
 */
async function watermarks(consumer, topic, timeoutMs = 10000) {
  const metadata = await metadataOf(consumer, { topic });
  const entry = metadata.topics.find((t) => t.name === topic);
  if (!entry || entry.partitions.length === 0) throw new Error(`no partitions for ${topic}`);
  const out = [];
  for (let partition = 0; partition < entry.partitions.length; partition++) {
    out.push(await new Promise((resolve, reject) => {
      consumer.queryWatermarkOffsets(topic, partition, timeoutMs, (err, o) => (err ? reject(err) : resolve(o)));
    }));
  }
  return out;
}

module.exports = { metadataOf, watermarks };
