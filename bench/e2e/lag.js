'use strict';
// A consumer group's lag, per partition: log end offset minus the group's committed offset,
// read through a KafkaConsumer that carries the group id but never subscribes (it does not
// join the group, it only asks the group coordinator).

const Kafka = require('node-rdkafka');

class LagSampler {
  constructor(brokers, group, topic, partitions) {
    this.topic = topic;
    this.partitions = Array.from({ length: partitions }, (_, partition) => ({ topic, partition }));
    this.client = new Kafka.KafkaConsumer({
      'metadata.broker.list': brokers, 'group.id': group, 'enable.auto.commit': false, 'log_level': 3,
    }, {});
  }

  connect() {
    return new Promise((resolve, reject) => this.client.connect({ timeout: 30000 }, (err) => (err ? reject(err) : resolve())));
  }

  /** { total, partitions: [lag by partition] }; a partition never committed counts from offset 0 (the topic is fresh). */
  async sample() {
    const [committed, ends] = await Promise.all([
      new Promise((resolve, reject) => this.client.committed(this.partitions, 10000, (err, c) => (err ? reject(err) : resolve(c)))),
      Promise.all(this.partitions.map(({ partition }) => new Promise((resolve, reject) => {
        this.client.queryWatermarkOffsets(this.topic, partition, 10000, (err, w) => (err ? reject(err) : resolve(w.highOffset)));
      }))),
    ]);
    const lag = ends.slice();
    for (const c of committed) {
      if (typeof c.offset === 'number' && c.offset >= 0) lag[c.partition] = Math.max(0, ends[c.partition] - c.offset);
    }
    return { total: lag.reduce((s, x) => s + x, 0), partitions: lag };
  }

  disconnect() {
    return new Promise((resolve) => this.client.disconnect(() => resolve()));
  }
}

module.exports = { LagSampler };
