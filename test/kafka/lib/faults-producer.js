'use strict';
// One producer process of the fault scenarios (test/kafka/faults-*.test.js, lib/faults.js),
// forked: a DynamicProducer (enable.idempotence, acks=all) sending two shared hot keys (30% and
// 12%) over Zipf background keys. Every acknowledgement is appended to a file at once (4 bytes,
// the message number), with a synchronous write: after a SIGKILL the file still holds every
// message this process saw acknowledged. Protocol over the IPC channel:
//   parent → { type: 'start', incarnation, topic, bootstrap, count, rate, salt, ackFile, seed }
//   worker → { type: 'ready' }      parent → { type: 'go' }
//   worker → { type: 'progress', sent, acked } every 500 messages (paced to `rate` every 50)
//   parent → { type: 'burst', messages }: the next `messages` sent at once, without pacing, then
//   worker → { type: 'burst-sent', sent, acked } (a kill then finds messages in flight)
//   worker → { type: 'done', sent, acked, failed, errors, producedMs } after flush()
// Message n of incarnation i: value faults.value(i * ID_SPAN + n, keyId, seq, sentAt), seq its
// number among this incarnation's messages of that key (a restarted producer starts new chains).
//
// Run directly (tap does when named), this file has no tests: it waits for a parent.

const fs = require('node:fs');
const { once } = require('node:events');
const { DynamicProducer } = require('../../..');
const { serveWorker } = require('./worker');
const { KeyStream, parseWorkload, prng } = require('../../../build/tools/workload');
const F = require('./faults-values');

async function run(o) {
  const keys = F.keysOf(o.salt);
  const stream = new KeyStream(parseWorkload('zipf:1.0'), F.BACKGROUND_KEYS, 0x3a7 + o.seed);
  const rand = prng(0x5e9 + o.seed);
  const perKey = new Uint32Array(keys.length);
  const ackFd = fs.openSync(o.ackFile, 'a');
  const p = new DynamicProducer({
    'bootstrap.servers': o.bootstrap,
    'enable.idempotence': true,
    'linger.ms': 5,
    'queue.buffering.max.messages': 200000,
    'dr_msg_cb': true,
    'log_level': 2,
  }, { acks: 'all', partitioner: 'murmur2_random' }, { metadataRefreshMs: 5000, horizon: { messages: 1000 } });
  let acked = 0;
  let failed = 0;
  const errors = [];
  const ack = Buffer.allocUnsafe(4);
  p.on('delivery', (err, report) => {
    const v = F.parseValue(report && report.value);
    if (err) {
      failed++;
      if (errors.length < 5) errors.push(String(err));
    } else if (v !== null) {
      ack.writeUInt32BE(v.id % F.ID_SPAN, 0);
      fs.writeSync(ackFd, ack);
      acked++;
    }
  });
  p.on('error', (err) => { if (errors.length < 5) errors.push(String(err)); });
  await p.connect();
  await p.refreshMetadata(o.topic);
  process.send({ type: 'ready' });
  let burst = 0;
  process.on('message', (m) => {
    if (m.type === 'burst') burst = m.messages;
  });
  await new Promise((resolve) => process.on('message', (m) => m.type === 'go' && resolve()));
  const started = Date.now();
  let sent = 0;
  for (let n = 0; n < o.count; n++) {
    let u = rand();
    let keyId = -1;
    for (let j = 0; j < F.HOT_SHARES.length && keyId < 0; j++) {
      if (u < F.HOT_SHARES[j]) keyId = F.BACKGROUND_KEYS + j;
      else u -= F.HOT_SHARES[j];
    }
    if (keyId < 0) keyId = stream.next();
    if (!p.produce(o.topic, F.value(o.incarnation * F.ID_SPAN + n, keyId, perKey[keyId]++, Date.now()), keys[keyId])) await once(p, 'drain');
    sent = n + 1;
    if (burst > 0) {
      // Handed to librdkafka without pacing; then reported, so that a kill finds them in flight.
      if (--burst === 0 || sent === o.count) process.send({ type: 'burst-sent', sent, acked });
      continue;
    }
    if (sent % 50 === 0) {
      const ahead = started + (sent * 1000) / o.rate - Date.now();
      if (ahead > 0) await new Promise((resolve) => setTimeout(resolve, ahead));
    }
    if (sent % 500 === 0) process.send({ type: 'progress', sent, acked });
  }
  const producedMs = Date.now() - started;
  await p.flush(120000);
  await p.disconnect();
  fs.closeSync(ackFd);
  process.send({ type: 'done', sent, acked, failed, errors, producedMs });
}

serveWorker(module, run, (stack) => ({ type: 'done', sent: 0, acked: 0, failed: -1, errors: [stack], producedMs: 0 }));
