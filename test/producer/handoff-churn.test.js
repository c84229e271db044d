'use strict';
// Ordered handoffs under churn: DynamicProducer around a fake client (no librdkafka) whose
// delivery reports come late and in any order across partitions (in order within one, as
// librdkafka's), with a small table of tracked keys and a hot set that changes every few
// thousand messages, so keys turn hot, relocate, cool, return and leave the table while their
// moves wait. Several seeds. Asserted, from what the fake client was handed:
//   - every message handed over once;
//   - per key, hand-over order = produce order (so per partition, offsets follow it);
//   - every marked message names its chain's previous marked message's partition, and where
//     it moved (a relocated key's move or return) that message's offset: the handoff waited
//     for its report.
const t = require('tap');
const { EventEmitter } = require('node:events');
const { wrapProducer, decodeOrderHeader, ORDER_HEADER } = require('../..');
const { prng } = require('../lib/random-keys');

const PARTITIONS = 6;
const MESSAGES = 40_000;

/** A node-rdkafka-like producer: offsets given at produce(), reports handed out by poll(). */
class FakeClient extends EventEmitter {
  constructor(rand) {
    super();
    this.rand = rand;
    this.next = new Array(PARTITIONS).fill(0);
    this.pending = Array.from({ length: PARTITIONS }, () => []);
    this.log = [];
  }

  produce(topic, partition, value, key, timestamp, opaque, headers) {
    if (!Number.isInteger(partition) || partition < 0 || partition >= PARTITIONS) throw new Error(`partition ${partition} handed over`);
    const offset = this.next[partition]++;
    this.log.push({ partition, offset, i: Number(value.toString()), key, headers });
    this.pending[partition].push({ topic, partition, offset, key, opaque, size: value.length });
  }

  /** Reports: a random prefix of each partition's, the partitions in a random order; all with `all`. */
  poll(all = false) {
    const order = [...this.pending.keys()].sort(() => this.rand() - 0.5);
    for (const p of order) {
      const q = this.pending[p];
      const n = all ? q.length : Math.floor(this.rand() * (q.length + 1));
      for (const report of q.splice(0, n)) this.emit('delivery-report', null, report);
    }
  }

  get inFlight() {
    return this.pending.reduce((a, q) => a + q.length, 0);
  }

  getMetadata(options, cb) {
    setImmediate(() => cb(null, {
      brokers: [{ id: 0, host: 'fake', port: 9092 }],
      topics: [{ name: options.topic, partitions: Array.from({ length: PARTITIONS }, (_, id) => ({ id, leader: 0, replicas: [0], isrs: [0] })) }],
    }));
  }

  flush(timeout, cb) {
    this.poll(true);
    setImmediate(() => cb(null));
  }

  isConnected() {
    return true;
  }
}

/**
 * Keys: 60 warm keys (0.5% each: above the admission level, so they fill the table and compete
 * for it), of which a hot set of three that changes every `every` messages gets 20%, 10% and
 * 5% more; 2,000 background keys.
 */
function workload(rand, every) {
  const keys = [];
  let hot = [];
  for (let i = 0; i < MESSAGES; i++) {
    // Hot keys come from the warm ones, and go on sending as warm keys once out of the hot set.
    if (i % every === 0) hot = [0, 1, 2].map(() => `warm-${Math.floor(rand() * 60)}`);
    const u = rand();
    keys.push(u < 0.2 ? hot[0] : u < 0.3 ? hot[1] : u < 0.35 ? hot[2] : u < 0.65 ? `warm-${Math.floor(rand() * 60)}` : `bg-${Math.floor(rand() * 2000)}`);
  }
  return keys;
}

const headerOf = (m) => {
  const h = (m.headers ?? []).find((x) => x[ORDER_HEADER] !== undefined);
  return h === undefined ? null : decodeOrderHeader(h[ORDER_HEADER]);
};

for (let seed = 1; seed <= 12; seed++) {
  t.test(`seed ${seed}: reports late and out of order, a table of 16 keys: nothing lost, per-key order, every handoff names its predecessor`, async (t) => {
    const rand = prng(seed);
    const client = new FakeClient(prng(seed * 7919));
    const p = wrapProducer(client, { maxTrackedKeys: 16, horizon: { messages: 1000 }, loadHorizon: { messages: 500 }, pollIntervalMs: 0 });
    t.teardown(() => p.disconnect(1000).catch(() => {}));
    const errors = [];
    p.on('error', (e) => errors.push(e));
    let hotEvents = 0;
    let cooledEvents = 0;
    p.on('hot', () => hotEvents++);
    p.on('cooled', () => cooledEvents++);
    const topic = 'churn';
    await p.refreshMetadata(topic);
    const keys = workload(rand, 2000 + Math.floor(rand() * 3000));
    let mostHeld = 0;
    // Stretches with reports now and then, and stretches without any (a burst).
    let pollChance = 0.3;
    for (let i = 0; i < keys.length; i++) {
      if (i % 1000 === 0) pollChance = rand() < 0.3 ? 0 : rand() * 0.5;
      p.produce(topic, String(i), keys[i]);
      if (rand() < pollChance) client.poll();
      if (i % 100 === 0) mostHeld = Math.max(mostHeld, p.metrics().held);
      if (i % 5000 === 4999) await new Promise(setImmediate);
    }
    for (let round = 0; round < 1000 && (client.inFlight > 0 || p.metrics().held > 0); round++) {
      client.poll(true);
      await new Promise(setImmediate);
    }
    t.equal(p.metrics().held, 0, 'nothing held at the end');

    const log = client.log;
    const seen = new Uint8Array(keys.length);
    for (const m of log) seen[m.i]++;
    t.equal(log.length, keys.length, 'every message handed over');
    t.equal(seen.filter((c) => c !== 1).length, 0, 'each once');

    const lastOf = new Map();
    const overtaken = [];
    for (const m of log) {
      const before = lastOf.get(m.key);
      if (before !== undefined && before > m.i && overtaken.length < 5) overtaken.push(`${m.key}: message ${m.i} handed over after ${before}`);
      lastOf.set(m.key, Math.max(before ?? -1, m.i));
    }
    t.same(overtaken, [], 'per key, hand-over order = produce order');

    const bySequence = new Map();
    for (const m of log) {
      const h = headerOf(m);
      if (h !== null) bySequence.set(h.sequence, { m, h });
    }
    const wrong = [];
    let handoffs = 0;
    for (const { m, h } of bySequence.values()) {
      if (h.kind === 'anchor') continue;
      const before = bySequence.get(h.previous);
      if (before === undefined) {
        wrong.push(`${h.sequence}: previous ${h.previous} not handed over`);
        continue;
      }
      if (before.m.key !== m.key) wrong.push(`${h.sequence} (${m.key}): previous ${h.previous} is of ${before.m.key}`);
      if (h.afterPartition !== before.m.partition) wrong.push(`${h.sequence}: after partition ${h.afterPartition}, previous on ${before.m.partition}`);
      const moved = before.m.partition !== m.partition && (h.kind === 'moved' || (h.kind === 'return' && before.h.kind !== 'spread'));
      if (moved) {
        handoffs++;
        if (h.afterOffset !== before.m.offset) wrong.push(`${h.sequence} (${h.kind}): after ${h.afterPartition}:${h.afterOffset}, previous at ${before.m.partition}:${before.m.offset}`);
      }
    }
    t.same(wrong.slice(0, 5), [], 'every marked message names its predecessor\'s partition, and each move or return its offset');

    const stats = p.partitioner.stats();
    t.ok(hotEvents >= 10 && cooledEvents >= 5, `premise: keys turned hot (${hotEvents}) and cooled (${cooledEvents})`);
    t.ok(handoffs >= 10, `premise: ${handoffs} handoffs`);
    t.ok(mostHeld > 0, `premise: messages waited (up to ${mostHeld} at once)`);
    t.ok(stats.trackedKeys.refused > 0, `premise: the table was full (${stats.trackedKeys.refused} admissions refused)`);
    t.same(errors, [], "no 'error' events");
  });
}
