'use strict';
// Messages in flight count against librdkafka's queue limit. librdkafka frees a message's room
// when it hands its delivery report over, and node-rdkafka passes reports to JavaScript on later
// turns of the event loop: a caller that polls and produces in the same turn piles reports up
// beyond queue.buffering.max.messages (the control below, raw node-rdkafka, shows it without
// depending on timing). DynamicProducer holds a message instead once that many are in flight:
// produce() says false, 'drain' follows, and every message is delivered.
const t = require('tap');
const Kafka = require('node-rdkafka');
const { DynamicProducer } = require('../..');

const LIMIT = 1000;
// More than the limit in one turn: with no report able to arrive in it, the limit is reached.
const PER_TURN = 1500;
const TURNS = 10;
const CONFIG = { 'test.mock.num.brokers': 1, log_level: 3, 'linger.ms': 1, 'queue.buffering.max.messages': LIMIT, dr_cb: true };
const VALUE = Buffer.alloc(50, 'v');
const turn = () => new Promise((resolve) => setImmediate(resolve));

t.test('control: raw node-rdkafka piles up more reports than its queue limit', async (t) => {
  const p = new Kafka.Producer(CONFIG);
  await new Promise((resolve, reject) => p.connect({}, (err) => (err ? reject(err) : resolve())));
  t.teardown(() => new Promise((resolve) => p.disconnect(5000, resolve)));
  let reported = 0;
  p.on('delivery-report', () => reported++);
  // All in one turn of the event loop, so no report reaches JavaScript: produce until librdkafka
  // says its queue is full, let the mock broker acknowledge, poll (librdkafka hands the reports
  // to node-rdkafka and frees their room), produce again.
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + 10000;
  let produced = 0;
  while (produced <= 2 * LIMIT && Date.now() < deadline) {
    try {
      p.produce('inflight-raw', null, VALUE, `k${produced}`);
      produced++;
    } catch (err) {
      if (err.code !== -184) throw err;
      Atomics.wait(pause, 0, 0, 5);
      p.poll();
    }
  }
  const most = produced - reported;
  t.comment(`raw: ${most} produced and not reported in one turn, limit ${LIMIT}`);
  t.ok(most > LIMIT, `produced and not yet reported exceeds queue.buffering.max.messages (${most} > ${LIMIT})`);
  await new Promise((resolve) => p.flush(10000, resolve));
});

t.test('DynamicProducer: in flight never beyond queue.buffering.max.messages, nothing lost', async (t) => {
  const p = new DynamicProducer(CONFIG);
  t.teardown(() => p.disconnect().catch(() => {}));
  await p.connect(10000, { topics: ['inflight-dynamic'] });
  let delivered = 0;
  let failed = 0;
  p.on('delivery', (err) => (err ? failed++ : delivered++));
  let most = 0;
  let refused = 0;
  for (let k = 0; k < TURNS; k++) {
    for (let i = 0; i < PER_TURN; i++) {
      if (!p.produce('inflight-dynamic', VALUE, `k${i}`)) refused++;
      most = Math.max(most, p.metrics().inflight);
    }
    await turn();
  }
  await p.flush(30000);
  t.comment(`dynamic: at most ${most} in flight; produce() said false ${refused} times`);
  t.ok(most <= LIMIT, `at most ${LIMIT} in flight (was ${most})`);
  t.ok(refused > 0, "produce() said false (the message was held) at least once");
  t.equal(failed, 0, 'no delivery failed');
  t.equal(delivered, TURNS * PER_TURN, 'every message delivered');
});
