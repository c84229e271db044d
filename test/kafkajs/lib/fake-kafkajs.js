'use strict';
// A stand-in of KafkaJS 2.x's consumer and of an admin client reading what it committed, for wrapKafkaJsConsumer's tests
// without a broker: test/kafkajs/consumer-kafkajs.test.js and test/kafkajs/dead-letters.test.js.

/**
 * The consumer (its calls, commits and instrumentation listeners recorded; join(list) is a GROUP_JOIN of group 'g' with
 * partitions `list` of `topic`), the admin client answering for `partitions` partitions, and `committed`
 * (partition -> { offset, metadata }).
 */
function fakeKafkaJs({ topic, partitions }) {
  const listeners = new Map();
  const committed = new Map(); // partition -> { offset, metadata }
  const consumer = {
    events: { REBALANCING: 'consumer.rebalancing', GROUP_JOIN: 'consumer.group_join', CRASH: 'consumer.crash', HEARTBEAT: 'consumer.heartbeat' },
    calls: [],
    commits: [],
    running: false,
    eachBatch: null,
    async connect() { consumer.calls.push('connect'); },
    async disconnect() { consumer.calls.push('disconnect'); },
    async stop() { consumer.calls.push('stop'); consumer.running = false; },
    async subscribe(s) { consumer.calls.push(`subscribe ${s.topic}`); },
    async run(config) {
      consumer.calls.push(`run autoCommit=${config.autoCommit} eachBatchAutoResolve=${config.eachBatchAutoResolve}`);
      consumer.eachBatch = config.eachBatch;
      consumer.running = true;
    },
    // As KafkaJS's: nothing is committed once its run is stopped.
    async commitOffsets(offsets) {
      if (!consumer.running) return;
      consumer.commits.push(offsets);
      for (const o of offsets) committed.set(o.partition, { offset: o.offset, metadata: o.metadata ?? null });
    },
    on(name, listener) {
      if (!listeners.has(name)) listeners.set(name, new Set());
      const wrapped = (event) => listener(event);
      listeners.get(name).add(wrapped);
      return () => listeners.get(name).delete(wrapped);
    },
    emit(name, payload) {
      for (const l of listeners.get(name) ?? []) l({ type: name, payload });
    },
    listening: (name) => listeners.get(name)?.size ?? 0,
    join(list) {
      consumer.emit(consumer.events.GROUP_JOIN, { groupId: 'g', memberAssignment: { [topic]: list } });
    },
  };
  const admin = {
    async connect() {},
    async fetchOffsets({ groupId, topics }) {
      if (groupId !== 'g') throw new Error(`unknown group ${groupId}`);
      return topics.map((name) => ({
        topic: name,
        partitions: Array.from({ length: partitions }, (_, partition) => ({
          partition, offset: committed.get(partition)?.offset ?? '-1', metadata: committed.get(partition)?.metadata ?? null,
        })),
      }));
    },
  };
  return { consumer, admin, committed };
}

module.exports = { fakeKafkaJs };
