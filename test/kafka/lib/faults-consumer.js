'use strict';
// One consumer process of the fault scenarios (test/kafka/faults-*.test.js, lib/faults.js),
// forked: a DynamicConsumer in the scenario's group. Every message handed to its handler is
// appended at once to a log file (faults-values.js RECORD bytes, synchronous write), so that
// after a SIGKILL the file holds everything this process handled. Protocol over IPC:
//   parent → { type: 'start', topic, group, bootstrap, maxWaitMs, sessionTimeoutMs, logFile,
//              concurrency?, handlerMs? (each call then waits 0 to 2 * handlerMs ms after its record),
//              groupProtocol? ('consumer': KIP-848, whose session timeout is the brokers' (scripts/kafka.sh)) }
//   worker → { type: 'assigned', partitions } on each assignment
//   worker → { type: 'revoked', partitions: [{ partition, committed }] } on each revoke (its last commit of each)
//   worker → { type: 'progress', handled, held } every 250 ms
//   parent → { type: 'stop' }  (stop(): commits what was handled)
//   worker → { type: 'done', handled, errors }
//
// Run directly (tap does when named), this file has no tests: it waits for a parent.

const fs = require('node:fs');
const { DynamicConsumer } = require('../../..');
const { serveWorker } = require('./worker');
const F = require('./faults-values');

async function run(o) {
  const fd = fs.openSync(o.logFile, 'a');
  const c = new DynamicConsumer({
    'bootstrap.servers': o.bootstrap,
    'group.id': o.group,
    'auto.offset.reset': 'earliest',
    'fetch.wait.max.ms': 50,
    ...(o.groupProtocol === 'consumer' ? { 'group.protocol': 'consumer' } : {
      'session.timeout.ms': o.sessionTimeoutMs,
      'heartbeat.interval.ms': Math.min(3000, Math.floor(o.sessionTimeoutMs / 4)),
    }),
    'log_level': 2,
  }, {}, { commitIntervalMs: 200, concurrency: o.concurrency ?? 1, resequencer: { maxWaitMs: o.maxWaitMs, maxBufferedMessages: 1000000 } });
  const errors = [];
  c.on('error', (err) => { if (errors.length < 5) errors.push(String(err)); });
  c.on('assigned', (a) => process.send({ type: 'assigned', partitions: a.map((tp) => tp.partition) }));
  // What this member last committed of each partition: where its next owner starts, told when it gives partitions up.
  const committed = new Map();
  c.on('committed', (offsets) => {
    for (const o of offsets) committed.set(o.partition, o.offset);
  });
  c.on('revoked', (a) => process.send({ type: 'revoked', partitions: a.map((tp) => ({ partition: tp.partition, committed: committed.get(tp.partition) ?? -1 })) }));
  let handled = 0;
  const record = Buffer.alloc(F.RECORD);
  await c.connect();
  const timer = setInterval(() => process.send({ type: 'progress', handled, held: c.resequencer.held }), 250);
  const done = c.run([o.topic], (m, info) => {
    const v = F.parseValue(m.value);
    if (v === null) return;
    F.writeRecord(record, v, m, info, Date.now());
    fs.writeSync(fd, record);
    handled++;
    // A handler that waits on I/O: the record is written when its call starts.
    if (o.handlerMs > 0) return new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 2 * o.handlerMs)));
  });
  process.on('message', (m) => {
    if (m.type === 'stop') c.stop();
  });
  await done;
  clearInterval(timer);
  fs.closeSync(fd);
  process.send({ type: 'done', handled, errors });
}

serveWorker(module, run, (stack) => ({ type: 'done', handled: -1, errors: [stack] }));
