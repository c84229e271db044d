'use strict';
// One Zipf-keyed run through a DynamicProducer against the real cluster, and the check of
// what the topic holds afterwards. Used by the exactly-once, broker-crash and
// partitions-added tests. Run directly (tap does when named), this file has no tests.
//
// Messages: value = lib/kafka.js value(id, keyId, seq) (16 bytes), key = `k<keyId>-<salt>`
// with keyId drawn from build/tools/workload.js KeyStream (Zipf over `keys` keys).

const { DynamicProducer, partitionForKeys, allowedPartitions, decodeOrderHeader } = require('../../..');
const { KeyStream, parseWorkload } = require('../../../build/tools/workload');
const K = require('./kafka');

/**
 * Produces `count` messages to `topic`. Options: keys, workload ('zipf:1.0'), seed,
 * ratePerSec (0: as fast as back-pressure allows), producerOptions, globalConfig,
 * onConnect(producer), onProgress(sent) called every 1,000 messages (may return a promise to
 * wait for).
 * Resolves with { p, keys, keyOf, perKey, hot, deliveries, errors, gaps, ms }.
 */
async function produceZipf(topic, count, o = {}) {
  const keyCount = o.keys ?? 100000;
  const salt = Math.random().toString(36).slice(2, 6);
  const keys = Array.from({ length: keyCount }, (_, i) => `k${i}-${salt}`);
  const stream = new KeyStream(parseWorkload(o.workload ?? 'zipf:1.0'), keyCount, o.seed ?? 0x5eed);
  const keyOf = new Int32Array(count);
  const perKey = new Uint32Array(keyCount);
  const p = new DynamicProducer({
    'bootstrap.servers': K.brokers(),
    'enable.idempotence': true,
    'linger.ms': 10,
    'batch.num.messages': 10000,
    'queue.buffering.max.messages': 200000,
    'compression.codec': 'lz4',
    'log_level': 3,
    ...(o.globalConfig ?? {}),
  }, { acks: 'all', partitioner: 'murmur2_random', ...(o.topicConfig ?? {}) }, { metadataRefreshMs: 5000, ...K.clientOptions(), ...(o.producerOptions ?? {}) });
  const hot = K.trackHot(p);
  const errors = [];
  let deliveries = 0;
  let lastDelivery = Date.now();
  let longestGap = 0;
  let started = Date.now();
  const perSecond = [];
  p.on('delivery', (err) => {
    const now = Date.now();
    const s = Math.floor((now - started) / 1000);
    while (perSecond.length <= s) perSecond.push(0);
    perSecond[s]++;
    if (now - lastDelivery > longestGap) longestGap = now - lastDelivery;
    lastDelivery = now;
    if (err) {
      if (errors.length < 20) errors.push(err);
      else errors.length++;
    } else deliveries++;
  });
  const producerErrors = [];
  p.on('error', (err) => producerErrors.push(err));
  await p.connect();
  if (o.onConnect) o.onConnect(p);
  const handed = recordHandOvers(p, count);
  started = Date.now();
  lastDelivery = started;
  await K.produceMessages(p, topic, count, { keys, nextKey: () => stream.next(), keyOf, perKey, started }, o);
  const producedMs = Date.now() - started;
  await p.flush(o.flushTimeoutMs ?? 300000);
  const ms = Date.now() - started;
  const metrics = p.metrics();
  await p.disconnect();
  return { p, keys, keyOf, perKey, hot, handed, deliveries, errors, producerErrors, longestGap, perSecond, started, producedMs, ms, metrics };
}

/** A header value as the bytes the client should put on the wire (a string as its UTF-8). */
function bytesOf(v) {
  return typeof v === 'string' ? Buffer.from(v, 'utf8') : Buffer.from(v);
}

/**
 * Records, per message id, what the DynamicProducer handed to the client's native binding
 * (the producer it owns calls producer._client.produce, in node-rdkafka and in Confluent's
 * client alike; on the native engine, its client's produce(), with the same arguments): the explicit partition and the kdp-order header value (text or bytes),
 * before the client turns it into what goes on the wire.
 */
function recordHandOvers(p, count) {
  const binding = p.client._client ?? (p.metrics().engine === 'native' ? p.client : undefined);
  if (!binding || typeof binding.produce !== 'function') throw new Error(`no ${K.clientName()} binding to record at`);
  const original = binding.produce;
  const partition = new Int16Array(count).fill(-2); // -2: never handed over; -1: librdkafka placed it
  const headers = new Map(); // id -> the kdp-order header Buffer handed over
  binding.produce = function produce(topic, part, value, key, timestamp, opaque, hs) {
    const code = original.call(this, topic, part, value, key, timestamp, opaque, hs);
    if (code === 0 || code === undefined) {
      const v = K.parseValue(value);
      if (v !== null && v.id < count) {
        partition[v.id] = part;
        if (Array.isArray(hs)) for (const h of hs) if (h['kdp-order'] !== undefined) headers.set(v.id, h['kdp-order']);
      }
    }
    return code;
  };
  return { partition, headers };
}

/**
 * Reads `topic` back and checks it against a produceZipf run `run`:
 * every message once, nothing more; keys intact; per key the counts produced; cold keys
 * (never hot) on their hashed partition without order header; anchors / returns on the
 * hashed partition; spread messages within allowedPartitions(key, n, width) of their
 * header; per key and partition, offsets increasing with the key's sequence number.
 * `countsAt(id)`: the partition counts message `id` may have been placed for (default:
 * the topic's count now); a cold key's message must be on its hash for one of them.
 * Returns the figures and a list of problems (at most a few of each kind).
 */
async function checkTopic(topic, run, o = {}) {
  const { keys, keyOf, perKey, hot } = run;
  const partitionsNow = (await K.leadersOf(topic)).length;
  const nowCounts = [partitionsNow];
  const count = keyOf.length;
  const keyCount = keys.length;
  const seen = new Uint8Array(count);
  const readPerKey = new Uint32Array(keyCount);
  const partitionsUsed = new Uint32Array(keyCount); // bitmask (partitions < 32) of where a key's messages went
  const lastSeq = new Map(); // keyId * 1024 + partition -> last seq read there
  const lastSeqCold = new Int32Array(keyCount).fill(-1);
  const lastPartitionCold = new Int32Array(keyCount).fill(-1);
  const maxWidth = new Uint32Array(keyCount);
  const neverHotOn = new Float64Array(partitionsNow); // messages of never-hot keys, by partition
  const homes = new Map(); // partition count -> Int32Array of each key's hashed partition
  const home = (n) => {
    let h = homes.get(n);
    if (!h) homes.set(n, (h = partitionForKeys(keys, n, 'murmur2_random')));
    return h;
  };
  const allowedCache = new Map();
  const allowed = (keyId, n, width) => {
    const c = `${keyId}/${n}/${width}`;
    let a = allowedCache.get(c);
    if (!a) allowedCache.set(c, (a = new Set(allowedPartitions(keys[keyId], n, width, 'murmur2_random'))));
    return a;
  };
  const wasHot = new Uint8Array(keyCount);
  for (let k = 0; k < keyCount; k++) if (hot.wasHot(keys[k])) wasHot[k] = 1;
  const problems = {};
  const problem = (kind, text) => {
    const list = problems[kind] ?? (problems[kind] = []);
    if (list.length < 5) list.push(text);
    else list.count = (list.count ?? 5) + 1;
  };
  let marked = 0;
  let spread = 0;
  let moved = 0;
  let coldOrderChecked = 0;
  // Marked messages by producer and sequence: where each went, and the links to check after
  // the read (a message's `after` names its predecessor's partition, and its offset when known).
  const placed = new Map();
  const links = [];
  const read = await K.consumeAll(topic, (m) => {
    const v = K.parseValue(m.value);
    if (v === null || v.id >= count) return problem('unknown', `a message not of this run at ${m.partition}/${m.offset}`);
    const { id, keyId, seq } = v;
    if (seen[id]++) return problem('duplicate', `message ${id} read again at ${m.partition}/${m.offset}`);
    if (keyOf[id] !== keyId) problem('value', `message ${id}: key id ${keyId}, produced with ${keyOf[id]}`);
    readPerKey[keyId]++;
    const key = keys[keyId];
    if (!m.key || m.key.toString() !== key) problem('key', `message ${id}: key ${key} arrived as ${m.key}`);
    partitionsUsed[keyId] |= 1 << m.partition;
    const counts = o.countsAt ? o.countsAt(id) : nowCounts;
    const raw = K.headerOf(m);
    const given = run.handed.headers.get(id);
    if (run.handed.partition[id] >= 0 && run.handed.partition[id] !== m.partition) {
      problem('handed', `message ${id} handed over for partition ${run.handed.partition[id]}, read on ${m.partition}`);
    }
    if ((raw === undefined) !== (given === undefined)) {
      problem('header-lost', `message ${id}: ${given === undefined ? 'no' : 'a'} kdp-order header handed over, ${raw === undefined ? 'none' : 'one'} read back`);
    } else if (raw !== undefined && !raw.equals(bytesOf(given))) {
      problem('header-damaged', `message ${id}: kdp-order header handed over as ${bytesOf(given).toString('hex')} (${bytesOf(given).length} bytes), read back as ${raw.toString('hex')} (${raw.length} bytes)`);
    }
    if (given !== undefined) {
      marked++;
      // Judged by the header the producer gave (what it decided), whatever reached the log.
      const h = decodeOrderHeader(given);
      if (!wasHot[keyId]) problem('header-on-cold', `message ${id}: key ${key} never reported hot, but has a kdp-order header`);
      if (h !== null) {
        placed.set(`${h.producerId}/${h.sequence}`, [m.partition, m.offset]);
        if (h.previous > 0 && h.afterPartition >= 0) links.push({ id, h });
      }
      if (h === null) problem('header', `message ${id}: unreadable kdp-order header ${bytesOf(given).toString('hex')}`);
      else {
        if (!counts.includes(h.partitions)) problem('header', `message ${id}: header for ${h.partitions} partitions, expected one of ${counts}`);
        if (h.kind === 'spread') {
          spread++;
          if (h.width > maxWidth[keyId]) maxWidth[keyId] = h.width;
          if (!allowed(keyId, h.partitions, h.width).has(m.partition)) {
            problem('spread', `message ${id} of hot key ${key} on partition ${m.partition}, outside allowedPartitions(key, ${h.partitions}, ${h.width}) = ${[...allowed(keyId, h.partitions, h.width)]}`);
          }
        } else if (h.kind === 'moved') {
          // A relocated key goes whole (width 1) to whichever partition had room.
          moved++;
          if (h.width !== 1) problem('moved', `message ${id} of key ${key}: moved with width ${h.width}`);
        } else if (home(h.partitions)[keyId] !== m.partition) {
          problem('anchor', `message ${id} (${h.kind}) of key ${key} on ${m.partition}, its hashed partition is ${home(h.partitions)[keyId]}`);
        }
      }
    } else if (!counts.some((n) => home(n)[keyId] === m.partition)) {
      problem('cold', `message ${id} of key ${key} (${wasHot[keyId] ? 'hot at times' : 'never hot'}, no header) on partition ${m.partition}, its hashed partition is ${counts.map((n) => `${home(n)[keyId]} of ${n}`).join(' or ')}`);
    }
    // Order: within a partition, a key's messages in the order they were produced.
    const slot = keyId * 1024 + m.partition;
    const before = lastSeq.get(slot);
    if (before !== undefined && seq <= before) problem('order', `key ${key} on partition ${m.partition}: seq ${seq} at offset ${m.offset} after seq ${before}`);
    lastSeq.set(slot, seq);
    if (!wasHot[keyId]) {
      coldOrderChecked++;
      neverHotOn[m.partition]++;
      if (lastPartitionCold[keyId] !== -1 && lastPartitionCold[keyId] !== m.partition && !o.countsAt) {
        problem('cold-split', `cold key ${key} on partitions ${lastPartitionCold[keyId]} and ${m.partition}`);
      }
      if (lastPartitionCold[keyId] === m.partition && seq <= lastSeqCold[keyId]) problem('cold-order', `cold key ${key}: seq ${seq} after ${lastSeqCold[keyId]}`);
      lastPartitionCold[keyId] = m.partition;
      lastSeqCold[keyId] = seq;
    }
  }, o.consumeTimeoutMs ?? 600000);
  let handoffs = 0;
  for (const { id, h } of links) {
    const at = placed.get(`${h.producerId}/${h.previous}`);
    if (at === undefined) continue; // its predecessor went to another topic's run, or is missing (counted below)
    if (at[0] !== h.afterPartition) problem('after', `message ${id} (${h.kind}): after names partition ${h.afterPartition}, its predecessor is on ${at[0]}`);
    if (h.afterOffset >= 0) {
      handoffs++;
      if (at[1] !== h.afterOffset) problem('after', `message ${id} (${h.kind}): after names offset ${h.afterOffset}, its predecessor is at ${at[0]}/${at[1]}`);
    }
  }
  let missing = 0;
  for (let id = 0; id < count; id++) if (!seen[id] && missing++ < 5) problem('missing', `message ${id} (key ${keys[keyOf[id]]}) never read`);
  let countsDiffer = 0;
  for (let k = 0; k < keyCount; k++) {
    if (readPerKey[k] !== perKey[k] && countsDiffer++ < 5) problem('per-key', `key ${keys[k]}: ${perKey[k]} produced, ${readPerKey[k]} read`);
  }
  // Hot keys: where they went.
  const hotKeys = [];
  for (let k = 0; k < keyCount; k++) {
    if (!wasHot[k]) continue;
    let used = 0;
    for (let b = partitionsUsed[k]; b; b &= b - 1) used++;
    hotKeys.push({ key: keys[k], messages: perKey[k], partitions: used, maxWidth: maxWidth[k] });
  }
  hotKeys.sort((a, b) => b.messages - a.messages);
  return { read, partitions: partitionsNow, missing, marked, spread, moved, handoffs, coldOrderChecked, hotKeys, problems, readPerKey, partitionsUsed, neverHotOn };
}

/**
 * What every broker test of a Zipf run asserts of `run` (produceZipf) and `check`
 * (checkTopic): no delivery error, a report for each of the `messages`, and the topic holding
 * each exactly once, with each key's count as produced.
 */
function assertNothingLost(t, run, check, messages) {
  const problems = (kind) => check.problems[kind] ?? [];
  t.equal(run.errors.length, 0, 'no delivery errors', { first: run.errors.slice(0, 5).map(String) });
  t.equal(run.deliveries, messages, 'a successful delivery report for every message');
  t.equal(check.read.total, messages, 'the topic holds exactly as many messages as were produced');
  t.equal(check.missing, 0, 'every message read back', { first: problems('missing') });
  t.same(problems('duplicate'), [], 'no message read twice');
  t.same(problems('per-key'), [], 'each key\'s message count as produced');
}

module.exports = { produceZipf, checkTopic, assertNothingLost };
