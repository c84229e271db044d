'use strict';
// Messages in flight count against librdkafka's queue limit. librdkafka frees a message's room
// when it hands its delivery report over, and node-rdkafka passes reports to JavaScript in
// batches on later turns of the event loop: a caller producing a few hundred messages a turn
// piles reports up beyond queue.buffering.max.messages (the control below, raw node-rdkafka,
// shows it). DynamicProducer holds a message instead once that many are in flight: produce()
// says false, 'drain' follows, and every message is delivered.
const t = require('tap');
const Kafka = require('node-rdkafka');
const { DynamicProducer } = require('../..');

const LIMIT = 1000;
const PER_TURN = 400;
const TURNS = 25;
const CONFIG = { 'test.mock.num.brokers': 1, log_level: 3, 'linger.ms': 1, 'queue.buffering.max.messages': LIMIT, dr_cb: true };
const VALUE = Buffer.alloc(50, 'v');
const turn = () => new Promise((resolve) => setImmediate(resolve));

t.test('control: raw node-rdkafka piles up more reports than its queue limit', async (t) => {
  const p = new Kafka.Producer(CONFIG);
  await new Promise((resolve, reject) => p.connect({}, (err) => (err ? reject(err) : resolve())));
  t.teardown(() => new Promise((resolve) => p.disconnect(5000, resolve)));
  p.setPollInterval(1);
  let reported = 0;
  p.on('delivery-report', () => reported++);
  let produced = 0;
  let most = 0;
  for (let k = 0; k < TURNS; k++) {
    for (let i = 0; i < PER_TURN; i++) {
      try {
        p.produce('inflight-raw', null, VALUE, `k${i}`);
        produced++;
      } catch (err) {
        if (err.code !== -184) throw err;
      }
    }
    most = Math.max(most, produced - reported);
    await turn();
  }
  t.comment(`raw: at most ${most} produced and not reported, limit ${LIMIT}`);
  t.ok(most > LIMIT, 'produced and not yet reported exceeds queue.buffering.max.messages');
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
