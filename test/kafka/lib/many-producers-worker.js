'use strict';
// One producer process of test/kafka/many-producers.test.js (child_process.fork): a
// DynamicProducer (idempotent, acks=all) sending the run's shared hot keys over Zipf background
// keys to one topic. Protocol over the IPC channel:
//   parent → { type: 'start', index, topic, count, salt, rate, linger, horizon }
//   worker → { type: 'ready' } once connected and the topic's partition count is known
//   parent → { type: 'go' }
//   worker → { type: 'progress', sent } every 1,000 messages
//   worker → { type: 'done', acked, failed, errors, hot, cooled, producedMs } after flush(),
//            acked: the numbers n of its messages with a delivery report without error
// Message n of worker i: key keys[keyId], value lib/kafka.js value(i * ID_SPAN + n, keyId,
// seq), seq its number among worker i's messages of that key (from 0).
//
// Run directly (tap does when named), this file has no tests: it waits for a parent.

const { once } = require('node:events');
const { DynamicProducer } = require('../../..');
const { serveWorker } = require('./worker');
const { KeyStream, parseWorkload, prng } = require('../../../build/tools/workload');
const K = require('./kafka');

/** Message ids of worker i are i * ID_SPAN + n. */
const ID_SPAN = 1 << 24;
const BACKGROUND_KEYS = 10000;

/**
 * The run's keys, the same in every worker: `k<i>-<salt>` (Zipf background), then the hot
 * keys `hot<j>-<salt>`.
 */
function keysOf(salt, hot) {
  const keys = Array.from({ length: BACKGROUND_KEYS }, (_, i) => `k${i}-${salt}`);
  for (let j = 0; j < hot; j++) keys.push(`hot${j}-${salt}`);
  return keys;
}

/**
 * The hot keys' shares at fraction f of worker `index`'s run: hot0 at 30%, cold (0.2%) in the
 * middle third (shifted by the worker's index, so that workers cool at different times),
 * hot1 at 12% throughout.
 */
function hotShares(index, f) {
  const g = f - index * 0.05;
  return [g >= 0.3 && g < 0.6 ? 0.002 : 0.3, 0.12];
}

async function run(o) {
  const keys = keysOf(o.salt, 2);
  const stream = new KeyStream(parseWorkload('zipf:1.0'), BACKGROUND_KEYS, 0x3a7 + o.index);
  const rand = prng(0x5e9 + o.index);
  const perKey = new Uint32Array(keys.length);
  const p = new DynamicProducer({
    'bootstrap.servers': K.brokers(),
    'enable.idempotence': true,
    'linger.ms': o.linger,
    'queue.buffering.max.messages': 200000,
    'dr_msg_cb': true,
    'log_level': 3,
  }, { acks: 'all', partitioner: 'murmur2_random' }, { metadataRefreshMs: 5000, horizon: { messages: o.horizon } });
  const acked = [];
  let failed = 0;
  const errors = [];
  p.on('delivery', (err, report) => {
    const v = K.parseValue(report && report.value);
    if (err) {
      failed++;
      if (errors.length < 5) errors.push(String(err));
    } else if (v !== null) acked.push(v.id - o.index * ID_SPAN);
  });
  p.on('error', (err) => { if (errors.length < 5) errors.push(String(err)); });
  const hot = new Set();
  const cooled = new Set();
  p.on('hot', (h) => hot.add(String(h.key)));
  p.on('cooled', (h) => cooled.add(String(h.key)));
  await p.connect();
  await p.refreshMetadata(o.topic);
  process.send({ type: 'ready' });
  await new Promise((resolve) => process.on('message', (m) => m.type === 'go' && resolve()));
  const started = Date.now();
  for (let n = 0; n < o.count; n++) {
    const shares = hotShares(o.index, n / o.count);
    let u = rand();
    let keyId = -1;
    for (let j = 0; j < shares.length && keyId < 0; j++) {
      if (u < shares[j]) keyId = BACKGROUND_KEYS + j;
      else u -= shares[j];
    }
    if (keyId < 0) keyId = stream.next();
    if (!p.produce(o.topic, K.value(o.index * ID_SPAN + n, keyId, perKey[keyId]++), keys[keyId])) await once(p, 'drain');
    if ((n + 1) % 1000 === 0) {
      const ahead = started + ((n + 1) * 1000) / o.rate - Date.now();
      if (ahead > 0) await K.sleep(ahead);
      process.send({ type: 'progress', sent: n + 1 });
    }
  }
  const producedMs = Date.now() - started;
  await p.flush(60000);
  await p.disconnect();
  process.send({ type: 'done', acked, failed, errors, hot: [...hot], cooled: [...cooled], producedMs });
}

serveWorker(module, run, (stack) => ({ type: 'done', acked: [], failed: -1, errors: [stack], hot: [], cooled: [], producedMs: 0 }));

module.exports = { ID_SPAN, BACKGROUND_KEYS, keysOf };
