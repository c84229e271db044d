'use strict';
// wrapPlatformaticConsumer over a fake @platformatic/kafka Consumer and MessagesStream (no
// broker, Node 20): a spread key's messages handed out in produce order across partitions,
// commits that stay below what is not handled, the stream paused at maxPending, handler
// retries then a stop with the HandlerError, a join's new assignment (partitions leaving
// committed and forgotten, a kept partition's messages read again dropped), and the options
// refused at the edge. test/kafka/platformatic-consumer.test.js runs it against a real cluster.

const t = require('tap');
const { wrapPlatformaticConsumer, encodeOrderHeader, ORDER_ANCHOR, ORDER_SPREAD, HandlerError, InvalidOptionError } = require('../..');
const { TOPIC, FakeConsumer, streamMessage } = require('./lib/fakes');

const PRODUCER = '0123456789abcdef';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A stream message; `order`: [kind, sequence, previous, afterPartition] of a spread key's header. */
function message(partition, offset, key, order) {
  const headerEntries = order ? [[Buffer.from('kdp-order'), Buffer.from(encodeOrderHeader(order[0], PRODUCER, order[1], order[2], 2, 2, 0, order[3] ?? -1))]] : [];
  return streamMessage(partition, offset, key, `${key}@${partition}/${offset}`, headerEntries);
}

t.test('a spread key read out of order over two partitions reaches the handler in produce order; commits stay below what waits', async (t) => {
  const consumer = new FakeConsumer([0, 1]);
  const dc = wrapPlatformaticConsumer(consumer, { commitIntervalMs: 20 });
  const seen = [];
  let gate;
  const blocked = new Promise((resolve) => { gate = resolve; });
  await dc.run({
    topics: [TOPIC],
    handler: async (m, info) => {
      seen.push(`${m.value}${info.ordered ? '' : ' flagged'}`);
      if (m.partition === 1 && m.offset === 0n) await blocked;
    },
  });
  t.equal(consumer.consumeOptions.autocommit, false, 'consume() with autocommit false');
  t.equal(consumer.consumeOptions.mode, 'committed', "mode 'committed' by default");
  const s = consumer.stream;
  // Sequence 2 (partition 0) is read before sequence 1 (partition 1): it waits for it.
  s.emit('data', message(0, 0, 'hot', [ORDER_SPREAD, 2, 1, 1]));
  s.emit('data', message(0, 1, 'cold'));
  t.same(seen, ['cold@0/1'], 'the unmarked message goes; the spread one waits for its predecessor');
  await sleep(60);
  t.ok(consumer.committed(0) <= 0, `nothing of partition 0 committed past its offset 0, held (${consumer.committed(0)})`);
  s.emit('data', message(1, 0, 'hot', [ORDER_ANCHOR, 1, 0]));
  t.same(seen, ['cold@0/1', 'hot@1/0'], 'the predecessor is handed out (and its call is under way)');
  await sleep(60);
  t.ok(consumer.committed(0) <= 0, `still nothing past partition 0's offset 0: it waits behind a call of its key (${consumer.committed(0)})`);
  gate();
  await sleep(60);
  t.same(seen, ['cold@0/1', 'hot@1/0', 'hot@0/0'], 'then its successor, in order');
  t.equal(consumer.committed(0), 2, 'partition 0 committed past what was handled');
  t.equal(consumer.committed(1), 1, 'partition 1 too');
  await dc.stop();
  t.ok(s.closed, 'stop() closes the stream');
  t.equal(consumer.listenerCount('consumer:group:join'), 0, "the consumer's events are left alone after stop()");
});

t.test('the stream pauses while maxPending messages wait, and goes on at half', async (t) => {
  const consumer = new FakeConsumer([0]);
  const dc = wrapPlatformaticConsumer(consumer, { maxPending: 4 });
  const gates = [];
  let open = false;
  await dc.run({ topics: [TOPIC], handler: () => (open ? undefined : new Promise((resolve) => gates.push(resolve))) });
  for (let i = 0; i < 5; i++) consumer.stream.emit('data', message(0, i, `k${i}`));
  t.ok(consumer.stream.paused, `paused with ${dc.metrics().waiting} waiting`);
  while (consumer.stream.paused && gates.length > 0) {
    gates.shift()();
    await sleep(1);
  }
  t.notOk(consumer.stream.paused, `resumed once the handler caught up (${dc.metrics().waiting} waiting)`);
  open = true;
  for (const g of gates) g();
  await dc.stop();
});

t.test('a handler that keeps failing: retried, then the run stops with the HandlerError, committing below the message', async (t) => {
  const consumer = new FakeConsumer([0]);
  const dc = wrapPlatformaticConsumer(consumer, { handlerRetries: 2, retryBackoffMs: 1 });
  let calls = 0;
  const failures = [];
  dc.on('handlerError', (err) => failures.push(err));
  const stopped = new Promise((resolve) => dc.once('stopped', resolve));
  await dc.run({
    topics: [TOPIC],
    handler: (m) => {
      if (m.offset === 1n) {
        calls++;
        throw new Error('boom');
      }
    },
  });
  consumer.stream.emit('data', message(0, 0, 'a'));
  consumer.stream.emit('data', message(0, 1, 'b'));
  const error = await stopped;
  t.ok(error instanceof HandlerError, 'stopped with a HandlerError');
  t.equal(calls, 3, 'the message was handed over 1 + handlerRetries times');
  t.equal(failures.length, 3, "each failure is a 'handlerError'");
  t.equal(consumer.committed(0), 1, 'committed below the failed message');
});

t.test('concurrency 4 by key: a call under way keeps its key\'s next message waiting, not the others; commits stay below it', async (t) => {
  const consumer = new FakeConsumer([0]);
  const dc = wrapPlatformaticConsumer(consumer, { commitIntervalMs: 10 });
  const calls = [];
  let gate;
  let slow = false;
  await dc.run({
    topics: [TOPIC],
    concurrency: 4,
    handler: (m) => {
      calls.push(`start ${m.offset}`);
      if (!slow) return undefined;
      slow = false;
      return new Promise((resolve) => { gate = () => { calls.push(`end ${m.offset}`); resolve(); }; });
    },
  });
  consumer.stream.emit('data', message(0, 0, 'a'));
  consumer.stream.emit('data', message(0, 1, 'b'));
  slow = true;
  consumer.stream.emit('data', message(0, 2, 'c'));
  consumer.stream.emit('data', message(0, 3, 'c'));
  consumer.stream.emit('data', message(0, 4, 'd'));
  t.same(calls, ['start 0', 'start 1', 'start 2', 'start 4'], "another key's message is handled beside the call under way");
  t.equal(dc.metrics().waiting, 1, "the call's key's next message waits behind it");
  await sleep(40);
  t.equal(consumer.committed(0), 2, 'commits stay below the call under way');
  gate();
  await sleep(40);
  t.same(calls.slice(4), ['end 2', 'start 3'], 'then the waiting one');
  t.equal(consumer.committed(0), 5, 'and the commit moves past them');
  await dc.stop();
});

t.test('a handler that throws once is called again once, after retryBackoffMs: only its key waits', async (t) => {
  const consumer = new FakeConsumer([0]);
  const dc = wrapPlatformaticConsumer(consumer, { retryBackoffMs: 20 });
  const failures = [];
  dc.on('handlerError', (err) => failures.push(`${err.offset}:${err.attempts}`));
  const calls = [];
  await dc.run({
    topics: [TOPIC],
    handler: (m) => {
      calls.push(Number(m.offset));
      if (m.offset === 1n && calls.filter((o) => o === 1).length === 1) throw new Error('once');
    },
  });
  // Offset 2 has offset 1's key; 3 another.
  for (const [i, key] of [[0, 'k0'], [1, 'k1'], [2, 'k1'], [3, 'k3']]) consumer.stream.emit('data', message(0, i, key));
  await sleep(1);
  t.same(calls, [0, 1, 3], "nothing of the failed message's key before its retry; another key goes on meanwhile");
  await sleep(60);
  t.same(calls, [0, 1, 3, 1, 2], 'retried once, then its key goes on');
  t.same(failures, ['1:1'], "one 'handlerError'");
  await dc.stop();
  t.equal(consumer.committed(0), 4, 'all committed at stop');
});

t.test('a join: partitions leaving are committed and forgotten, a kept partition read again is not handed out twice', async (t) => {
  const consumer = new FakeConsumer([0, 1]);
  const dc = wrapPlatformaticConsumer(consumer);
  const seen = [];
  const events = [];
  dc.on('revoked', (list) => events.push(`revoked ${list.map((tp) => tp.partition)}`));
  dc.on('assigned', (list) => events.push(`assigned ${list.map((tp) => tp.partition)}`));
  await dc.run({ topics: [TOPIC], handler: (m) => { seen.push(`${m.partition}/${m.offset}`); } });
  consumer.stream.emit('data', message(0, 0, 'a'));
  consumer.stream.emit('data', message(1, 0, 'b'));
  consumer.stream.emit('data', message(1, 1, 'c'));
  consumer.join([0, 2]);
  await sleep(5);
  t.same(events, ['assigned 0,1', 'revoked 1', 'assigned 2'], 'the assignment changes, as events');
  t.equal(consumer.committed(1), 2, 'partition 1 committed as it left');
  // The stream reads partition 0 again from its committed offset, and an old fetch of 1 comes late.
  consumer.stream.emit('data', message(0, 0, 'a'));
  consumer.stream.emit('data', message(1, 2, 'c'));
  consumer.stream.emit('data', message(0, 1, 'd'));
  consumer.stream.emit('data', message(2, 5, 'e'));
  t.same(seen, ['0/0', '1/0', '1/1', '0/1', '2/5'], 'nothing twice, nothing of a partition gone');
  await dc.stop();
  t.equal(consumer.committed(0), 2, 'partition 0 committed at stop');
  t.equal(consumer.committed(2), 6, 'partition 2 too');
});

t.test("KIP-848 (groupProtocol 'consumer'): changes come with heartbeats, no join event; a stale member epoch's refusal is made again", async (t) => {
  // As @platformatic/kafka 2.12's consumer under that protocol (consumer.js): its join event carries no generation
  // nor assignment; a revocation emits 'consumer:group:rebalance' before the assignment changes, an addition nothing;
  // each heartbeat's answer ends with 'consumer:heartbeat:end'. OffsetCommit refused: a ResponseError gathering
  // ProtocolErrors (apiCode 113, STALE_MEMBER_EPOCH, canRetry false).
  const consumer = new FakeConsumer([0, 1]);
  consumer.consume = async function (options) {
    this.consumeOptions = options;
    this.emit('consumer:group:join', { groupId: 'g', memberId: 'm' });
    this.assignments = [{ topic: TOPIC, partitions: [0, 1] }];
    this.emit('consumer:heartbeat:end');
    return this.stream;
  };
  let stale = 0;
  const commit = consumer.commit.bind(consumer);
  consumer.commit = async (request) => {
    if (stale-- > 0) {
      throw Object.assign(new Error('Received response with error while executing API OffsetCommit(v9)'),
        { errors: [Object.assign(new Error('The member epoch is stale.'), { apiId: 'STALE_MEMBER_EPOCH', apiCode: 113, canRetry: false })] });
    }
    return commit(request);
  };
  const dc = wrapPlatformaticConsumer(consumer);
  const events = [];
  dc.on('revoked', (list) => events.push(`revoked ${list.map((tp) => tp.partition)}`));
  dc.on('assigned', (list) => events.push(`assigned ${list.map((tp) => tp.partition)}`));
  dc.on('warning', (err) => events.push(`warning ${err.message}`));
  dc.on('error', (err) => events.push(`error ${err.message}`));
  await dc.run({ topics: [TOPIC], handler: () => {} });
  t.same(events, ['assigned 0,1'], "the first heartbeat's assignment");
  consumer.stream.emit('data', message(0, 0, 'a'));
  consumer.stream.emit('data', message(1, 0, 'b'));
  stale = 1;
  // Partition 1 is revoked: the event, then the assignment changes, then a heartbeat.
  consumer.emit('consumer:group:rebalance', { groupId: 'g' });
  consumer.assignments = [{ topic: TOPIC, partitions: [0] }];
  consumer.emit('consumer:heartbeat:end');
  await sleep(400);
  t.same(events, ['assigned 0,1', 'revoked 1'], 'partition 1 revoked at the heartbeat, no warning nor error');
  t.equal(consumer.committed(1), 1, 'committed as it left, the stale refusal made again');
  // Partition 2 comes, without any event but the heartbeat's end.
  consumer.assignments = [{ topic: TOPIC, partitions: [0, 2] }];
  consumer.emit('consumer:heartbeat:end');
  t.same(events.slice(2), ['assigned 2'], 'partition 2 assigned at the heartbeat');
  await dc.stop();
  t.equal(consumer.committed(0), 1, 'partition 0 committed at stop');
  t.equal(consumer.listenerCount('consumer:heartbeat:end'), 0, 'the heartbeat listener left after stop()');
});

t.test('refused at the edge', async (t) => {
  t.throws(() => wrapPlatformaticConsumer({}), { name: 'InvalidArgTypeError' }, 'not a consumer');
  t.throws(() => wrapPlatformaticConsumer(new FakeConsumer([0]), { groupOrder: 'wait' }), InvalidOptionError, "groupOrder 'wait': no records to wait for");
  t.throws(() => wrapPlatformaticConsumer(new FakeConsumer([0]), { admin: { connect() {}, fetchOffsets() {} } }), { code: 'KDP_INVALID_OPTION', message: /options\.admin/ },
    "admin (KafkaJS's consumer's option) is not taken silently");
  t.throws(() => wrapPlatformaticConsumer(new FakeConsumer([0]), { maxPending: 0 }), InvalidOptionError, 'maxPending 0');
  t.throws(() => wrapPlatformaticConsumer(new FakeConsumer([0]), { groupProtocol: 'consumer' }), { code: 'KDP_INVALID_OPTION', message: /options\.groupProtocol/ },
    "groupProtocol: the consumer's own option, not the wrapper's");
  t.throws(() => wrapPlatformaticConsumer(new FakeConsumer([0]), { nope: 1 }), InvalidOptionError, 'an unknown option');
  const dc = wrapPlatformaticConsumer(new FakeConsumer([0]));
  await t.rejects(dc.run({ topics: [TOPIC], handler: () => {}, consume: { autocommit: true } }), InvalidOptionError, 'autocommit true');
  await t.rejects(dc.run({ topics: [TOPIC], handler: () => {}, eachMessage: () => {} }), InvalidOptionError, 'an unknown run() field');
  await t.rejects(dc.run({ topics: [], handler: () => {} }), { name: 'InvalidArgTypeError' }, 'no topics');
  await t.rejects(dc.run({ topics: [TOPIC], handler: () => {}, concurrency: 0 }), InvalidOptionError, 'concurrency 0');
  await dc.run({ topics: [TOPIC], handler: () => {} });
  await t.rejects(dc.run({ topics: [TOPIC], handler: () => {} }), { name: 'StateError' }, 'run() while running');
  await dc.stop();
});
