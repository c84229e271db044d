'use strict';
// Fakes of @platformatic/kafka's Consumer and MessagesStream, and of the stream's messages, for wrapPlatformaticConsumer's
// tests without a broker: test/platformatic/consumer.test.js and test/platformatic/dead-letters.test.js; and of its
// Producer, for wrapPlatformaticProducer's spans (test/tracing/).

const { EventEmitter } = require('node:events');

/** The topic the fake consumer is assigned. */
const TOPIC = 't';

/** A MessagesStream: its messages are emitted as 'data' by the test; pause(), resume() and close() recorded. */
class FakeStream extends EventEmitter {
  paused = false;
  closed = false;
  pause() {
    this.paused = true;
  }
  resume() {
    this.paused = false;
  }
  async close() {
    this.closed = true;
  }
}

/** A Consumer of group 'g' joining with `partitions` of TOPIC: consume()'s options and each commit recorded, nothing committed before. */
class FakeConsumer extends EventEmitter {
  groupId = 'g';
  assignments = null;
  commits = [];
  consumeOptions = null;
  stream = new FakeStream();
  constructor(partitions) {
    super();
    this.joined = [{ topic: TOPIC, partitions }];
  }
  async consume(options) {
    this.consumeOptions = options;
    this.assignments = this.joined;
    this.emit('consumer:group:join', { groupId: 'g', assignments: this.joined });
    return this.stream;
  }
  async commit({ offsets }) {
    this.commits.push(...offsets.map((o) => ({ ...o, offset: Number(o.offset) })));
  }
  async listCommittedOffsets() {
    return new Map();
  }
  /** The last committed offset of a partition, or -1. */
  committed(partition) {
    const list = this.commits.filter((c) => c.partition === partition);
    return list.length ? list[list.length - 1].offset : -1;
  }
  /** A rebalance, then a join with `partitions` of TOPIC. */
  join(partitions) {
    this.emit('consumer:group:rebalance', { groupId: 'g' });
    this.assignments = [{ topic: TOPIC, partitions }];
    this.emit('consumer:group:join', { groupId: 'g', assignments: this.assignments });
  }
}

/** A stream message of TOPIC; `headerEntries`: [name, value] Buffer pairs, also given as a Map (`headers`). */
function streamMessage(partition, offset, key, value, headerEntries = []) {
  return { topic: TOPIC, partition, offset: BigInt(offset), key: Buffer.from(key), value: Buffer.from(value), headerEntries, headers: new Map(headerEntries) };
}

/** A Producer whose every topic has `partitions`: each message sent is pushed to `sent`. */
function fakeProducer(sent, partitions) {
  return {
    async send(options) {
      sent.push(...options.messages);
      return { offsets: [] };
    },
    async metadata({ topics }) {
      return { topics: new Map(topics.map((x) => [x, { partitionsCount: partitions }])) };
    },
    async close() {},
  };
}

module.exports = { TOPIC, FakeStream, FakeConsumer, streamMessage, fakeProducer };
