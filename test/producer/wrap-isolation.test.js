'use strict';
// wrapProducer(): docs/producer.md "neither side's delivery accounting sees the other's messages", from
// the application's side too: its own 'delivery-report' listeners get the reports of its own
// messages only, never the wrapper's (nor the wrapper's internal opaque). send() resolves with a
// report carrying the key as the caller gave it (a string stays a string) and no opaque. And a
// wrapped producer nobody polls (pollIntervalMs 0, the application never polls) does not leave
// send() hanging in silence: one process warning (code KDP_NO_POLL), then the wrapper polls.
const t = require('tap');
const { wrapProducer, DynamicProducer } = require('../..');
const { mockProducer, disconnect } = require('../lib/mock-cluster');
const { sleep, knownPartitions } = require('./lib/helpers');

/** Waits until `check()` is true (at most `ms`). */
async function until(check, ms = 20000) {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await sleep(20);
  return check();
}

/** Collects the process warnings with code KDP_NO_POLL while the test runs. */
function noPollWarnings(t) {
  const seen = [];
  const listener = (w) => { if (w.code === 'KDP_NO_POLL') seen.push(w); };
  process.on('warning', listener);
  t.teardown(() => process.removeListener('warning', listener));
  return seen;
}

t.test("the application's 'delivery-report' listeners see only its own messages", async (t) => {
  const topic = 'wrapiso-own';
  const app = await mockProducer({ log_level: 0 }, { partitioner: 'murmur2' });
  t.teardown(() => disconnect(app));
  app.setPollInterval(5);
  const appReports = [];
  app.on('delivery-report', (err, report) => appReports.push({ err, report }));
  const w = wrapProducer(app);
  await knownPartitions(w, topic);
  let wDeliveries = 0;
  w.on('delivery', () => wDeliveries++);
  const sends = [];
  const appOpaques = new Set();
  for (let i = 0; i < 300; i++) {
    sends.push(w.send(topic, `w-send-${i}`, `k${i % 13}`));
    w.produce(topic, `w-produce-${i}`, `k${i % 13}`);
    if (i % 3 === 0) {
      const opaque = { mine: i };
      appOpaques.add(opaque);
      app.produce(topic, null, Buffer.from(`a-${i}`), `a${i % 5}`, null, opaque);
    } else {
      app.produce(topic, null, Buffer.from(`a-${i}`), `a${i % 5}`);
    }
  }
  await Promise.all(sends);
  await w.flush(20000);
  t.ok(await until(() => appReports.length >= 300), `the application got its 300 reports (${appReports.length})`);
  await sleep(200);
  t.equal(appReports.length, 300, "and no more: none of the wrapper's 600");
  t.ok(appReports.every((r) => r.report.value.toString().startsWith('a-')), 'each one of its own messages (by value)');
  t.ok(appReports.every((r) => r.report.opaque === undefined || r.report.opaque === null || appOpaques.has(r.report.opaque)),
    'each with its own opaque, or none');
  t.equal(wDeliveries, 600, "the wrapper's 'delivery' events: its own 600");
  t.match(w.metrics(), { inflight: 0, topics: { [topic]: { produced: 600, delivered: 600, failed: 0 } } }, "the wrapper's counts: its own 600");

  await w.disconnect();
  const before = appReports.length;
  app.produce(topic, null, Buffer.from('a-after'), 'a');
  t.ok(await until(() => appReports.length === before + 1), 'after the wrapper is gone, the application still gets its reports');
});

t.test('send() reports the key as given, and no opaque (wrapped and owned producers)', async (t) => {
  const app = await mockProducer({ log_level: 0 });
  t.teardown(() => disconnect(app));
  app.setPollInterval(5);
  const owned = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0 });
  await owned.connect();
  t.teardown(() => owned.disconnect());
  const buffer = Buffer.from('buffer-key');
  const bytes = new Uint8Array([1, 2, 3]);
  for (const [name, p] of [['wrapped', wrapProducer(app)], ['owned', owned]]) {
    const topic = `wrapiso-keys-${name}`;
    const keys = [['a string', 'user-42'], ['a string with U+0000', 'a\u0000b'], ['a Buffer', buffer], ['a Uint8Array', bytes], ['null', null], ['undefined', undefined]];
    for (const [what, key] of keys) {
      const report = await p.send(topic, 'v', key);
      const expected = key === undefined ? null : key;
      t.ok(report.key === expected, `${name}, ${what} key: the report's key is the caller's (got ${typeof report.key} ${JSON.stringify(report.key)})`);
      t.notOk('opaque' in report, `${name}, ${what} key: no opaque in the report`);
      t.ok(Number.isInteger(report.partition) && report.partition >= 0 && Number.isInteger(report.offset) && report.topic === topic,
        `${name}, ${what} key: topic, partition and offset`);
    }
    const events = [];
    p.on('delivery', (err, r) => events.push(r));
    await p.send(topic, 'v', 'evented');
    t.ok(events.length === 1 && events[0].key === 'evented' && !('opaque' in events[0]), `${name}: the 'delivery' event of a send() carries the same report`);
    if (name === 'wrapped') await p.disconnect();
  }
});

t.test('nothing polls a wrapped producer: one KDP_NO_POLL warning, and send() still settles', async (t) => {
  const warnings = noPollWarnings(t);
  const app = await mockProducer({ log_level: 0 }); // no setPollInterval, no poll() calls
  t.teardown(() => disconnect(app));
  const w = wrapProducer(app);
  const first = await Promise.all(Array.from({ length: 50 }, (_, i) => w.send('wrapiso-nopoll', 'v', `k${i}`)));
  t.equal(first.length, 50, 'the 50 send()s resolve');
  t.equal(warnings.length, 1, 'one KDP_NO_POLL warning');
  t.match(warnings[0] && warnings[0].message, /pollIntervalMs/, 'saying what to do');
  await Promise.all(Array.from({ length: 50 }, (_, i) => w.send('wrapiso-nopoll', 'v', `k${i}`)));
  await sleep(2500);
  t.equal(warnings.length, 1, 'later send()s settle with no second warning');
  await w.disconnect();
});

t.test('an application that polls gets no warning', async (t) => {
  const warnings = noPollWarnings(t);
  const app = await mockProducer({ log_level: 0 });
  t.teardown(() => disconnect(app));
  // Polled slowly, but polled: the reports come with its polls, the wrapper stays out of it.
  app.setPollInterval(300);
  const w = wrapProducer(app);
  for (let round = 0; round < 3; round++) {
    await Promise.all(Array.from({ length: 50 }, (_, i) => w.send('wrapiso-polled', 'v', `k${i}`)));
    await sleep(1000);
  }
  t.equal(warnings.length, 0, 'no KDP_NO_POLL warning');
  await w.disconnect();
});
