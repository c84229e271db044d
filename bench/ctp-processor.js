'use strict';
// One processor of bench/transactions.js, a child process: reads `input` in `group`, and for each message awaits
// 1-3 ms (the transform), then writes it to `output` under its key. Modes:
//   transactions    DynamicConsumer with its `transaction` option over a transactional DynamicProducer; the
//                   handler produces without awaiting (the transaction's commit waits for every message), or
//                   awaits send() with --await-send;
//   at-least-once   the same pipeline without transactions: an idempotent DynamicProducer, the handler awaits send();
//   kafkajs         KafkaJS 2.2.4's consume-transform-produce: eachBatch, one transaction per batch (send, sendOffsets,
//                   commit), three partitions at once, each key's messages in order, `concurrency` / 3 keys of a batch
//                   at once (as many handler calls at once as a DynamicConsumer's). A key spread over partitions is
//                   handled per partition, its order across them not restored.
// Talks to its parent over IPC: { type: 'ready' }, { type: 'progress', handled, seen } every 5 ms (seen: messages whose
// handling began), then { type: 'done', handled, commits } after { type: 'stop' }.

const { DynamicProducer, DynamicConsumer } = require('..');

const transform = () => new Promise((resolve) => setTimeout(resolve, 1 + Math.random() * 2));

/** What a processor counted: messages whose handling began (`seen`), and handled (written; KafkaJS: committed). */
const counts = { handled: 0, seen: 0 };

async function dynamic(o) {
  const transactional = o.mode === 'transactions';
  const producer = new DynamicProducer({
    'bootstrap.servers': o.brokers,
    ...(transactional ? { 'transactional.id': o.transactionalId } : { 'enable.idempotence': true }),
    'linger.ms': 5,
    log_level: 2,
  }, { acks: 'all' }, {});
  producer.on('error', () => {});
  await producer.connect(30000, { topics: [o.output] });
  const consumer = new DynamicConsumer({ 'bootstrap.servers': o.brokers, 'group.id': o.group, 'auto.offset.reset': 'earliest', 'fetch.wait.max.ms': 50, log_level: 2 }, {}, {
    concurrency: o.concurrency, ...(transactional ? { transaction: { producer, intervalMs: o.intervalMs } } : {}),
  });
  consumer.on('error', (err) => process.stderr.write(`processor: ${err.message}\n`));
  consumer.on('warning', (err) => process.stderr.write(`processor warning: ${err.message}\n`));
  await consumer.connect();
  const awaitSend = !transactional || o.awaitSend;
  const run = consumer.run([o.input], async (m) => {
    counts.seen++;
    await transform();
    if (awaitSend) await producer.send(o.output, m.value, m.key);
    else producer.produce(o.output, m.value, m.key);
    counts.handled++;
  });
  return {
    stop: async () => {
      await consumer.stop();
      await run;
      const commits = consumer.metrics().transactions;
      await producer.disconnect();
      return commits;
    },
  };
}

async function kafkajs(o) {
  const { Kafka, logLevel } = require('kafkajs');
  const kafka = new Kafka({ clientId: o.transactionalId, brokers: o.brokers.split(','), logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ transactionalId: o.transactionalId, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const consumer = kafka.consumer({ groupId: o.group, readUncommitted: false });
  await consumer.connect();
  await consumer.subscribe({ topic: o.input, fromBeginning: true });
  const times = [];
  // One transaction at a time on the producer: the batches of three partitions take turns for it.
  let turn = Promise.resolve();
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: 3,
    eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning }) => {
      if (!isRunning() || batch.messages.length === 0) return;
      // Each key's messages in order, up to `concurrency` keys at once.
      const byKey = new Map();
      for (const m of batch.messages) {
        const k = m.key === null ? `#${m.offset}` : m.key.toString('latin1');
        if (!byKey.has(k)) byKey.set(k, []);
        byKey.get(k).push(m);
      }
      const lanes = [...byKey.values()];
      const out = [];
      let next = 0;
      // Three partitions at once: each of their batches gets a third of the handler calls.
      await Promise.all(Array.from({ length: Math.min(Math.ceil(o.concurrency / 3), lanes.length) }, async () => {
        while (next < lanes.length) {
          for (const m of lanes[next++]) {
            counts.seen++;
            await transform();
            out.push({ key: m.key, value: m.value });
          }
        }
      }));
      const commit = async () => {
        const since = performance.now();
        const transaction = await producer.transaction();
        try {
          await transaction.send({ topic: o.output, messages: out });
          const last = batch.messages[batch.messages.length - 1].offset;
          await transaction.sendOffsets({ consumerGroupId: o.group, topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: String(BigInt(last) + 1n) }] }] });
          await transaction.commit();
        } catch (err) {
          await transaction.abort();
          throw err;
        }
        times.push(performance.now() - since);
      };
      const mine = turn.then(commit);
      turn = mine.catch(() => undefined);
      await mine;
      for (const m of batch.messages) resolveOffset(m.offset);
      counts.handled += batch.messages.length;
      await heartbeat();
    },
  });
  return {
    stop: async () => {
      await consumer.disconnect();
      await producer.disconnect();
      const sorted = times.sort((a, b) => a - b);
      const at = (q) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
      return { committed: sorted.length, commitMsP50: at(0.5), commitMsP99: at(0.99) };
    },
  };
}

process.once('message', async (o) => {
  // From the start: a client may begin handling before its run() resolves.
  const timer = setInterval(() => process.send({ type: 'progress', ...counts }), 5);
  try {
    const p = o.mode === 'kafkajs' ? await kafkajs(o) : await dynamic(o);
    process.send({ type: 'ready' });
    process.once('message', async () => {
      clearInterval(timer);
      const commits = await p.stop();
      process.send({ type: 'done', handled: counts.handled, commits });
      process.disconnect();
    });
  } catch (err) {
    clearInterval(timer);
    process.send({ type: 'failed', stack: String(err && err.stack) });
    process.disconnect();
  }
});
