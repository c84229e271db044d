'use strict';
// An application that uses only Confluent's client never loads node-rdkafka: the package's
// index loads no client, and DynamicProducer, DynamicConsumer and LagMonitor given
// options.kafka use that one. Checked in a child process (its require.cache), so that this
// process's modules do not count. Loading both clients in one process is warned about once.
const t = require('tap');
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..', '..', '..', '..');

/** Runs `code` in a fresh Node process (cwd: the package root); its stdout as JSON. */
function child(code) {
  const out = execFileSync(process.execPath, ['-e', code], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
  return JSON.parse(out.trim().split('\n').pop());
}

const LOADED = `
  const loaded = (pkg) => Object.keys(require.cache).some((f) => f.includes(require('node:path').join('node_modules', pkg) + require('node:path').sep));
`;

t.test('importing the package loads no client library', async (t) => {
  const r = child(`${LOADED}
    require('./');
    console.log(JSON.stringify({ rdkafka: loaded('node-rdkafka'), confluent: loaded('@confluentinc/kafka-javascript') }));`);
  t.same(r, { rdkafka: false, confluent: false });
});

t.test('the ESM entry point loads no client library either', async (t) => {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', `
    import { createRequire } from 'node:module';
    const require = createRequire(process.cwd() + '/x.js');
    await import('./build/index.mjs');
    const loaded = (pkg) => Object.keys(require.cache).some((f) => f.includes('node_modules/' + pkg + '/'));
    console.log(JSON.stringify({ rdkafka: loaded('node-rdkafka') }));`], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  t.same(JSON.parse(out.trim()), { rdkafka: false });
});

t.test("an app using only Confluent's client never loads node-rdkafka", async (t) => {
  const r = child(`${LOADED}
    const warnings = [];
    process.on('warning', (w) => warnings.push(w.code));
    const Confluent = require('@confluentinc/kafka-javascript');
    const { DynamicProducer, DynamicConsumer, LagMonitor, wrapKafkaJsProducer } = require('./');
    (async () => {
      const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0 }, {}, { kafka: Confluent });
      await p.connect();
      const report = await p.send('isolated', 'v', 'k');
      const md = await new Promise((res, rej) => p.client.getMetadata({ timeout: 5000 }, (e, m) => (e ? rej(e) : res(m))));
      const brokers = md.brokers.map((b) => b.host + ':' + b.port).join(',');
      const c = new DynamicConsumer({ 'metadata.broker.list': brokers, 'group.id': 'iso', log_level: 0 }, {}, { kafka: Confluent });
      await c.connect();
      const lag = new LagMonitor({ 'metadata.broker.list': brokers, log_level: 0 }, { groupId: 'iso', topics: ['isolated'], kafka: Confluent });
      await lag.start();
      const read = await lag.read();
      await lag.stop();
      await c.stop();
      const k = new Confluent.KafkaJS.Kafka({ kafkaJS: { brokers: [brokers], logLevel: Confluent.KafkaJS.logLevel.NOTHING } });
      const w = wrapKafkaJsProducer(k.producer());
      await w.connect();
      await w.send({ topic: 'isolated', messages: [{ key: 'k', value: 'v' }] });
      await w.disconnect();
      await p.disconnect();
      setImmediate(() => console.log(JSON.stringify({
        rdkafka: loaded('node-rdkafka'), confluent: loaded('@confluentinc/kafka-javascript'),
        // The producer's client: Confluent's, or the native engine's over Confluent's librdkafka (docs/native.md).
        clientIsConfluents: (p.client instanceof Confluent.Producer || (p.metrics().engine === 'native' && p.client.librdkafkaVersion === Confluent.librdkafkaVersion)) &&
          (c.client instanceof Confluent.KafkaConsumer || (c.engine === 'native' && p.metrics().engine === 'native' && p.client.librdkafkaVersion === Confluent.librdkafkaVersion)) && lag.client instanceof Confluent.KafkaConsumer,
        delivered: report.partition >= 0, lag: read.isolated.reduce((a, b) => a + b, 0), warnings,
      })));
    })().catch((e) => { console.error(e); process.exit(1); });`);
  t.equal(r.rdkafka, false, 'node-rdkafka never loaded');
  t.equal(r.confluent, true, "Confluent's client loaded");
  t.equal(r.clientIsConfluents, true, "the producer's, consumer's and lag monitor's clients are Confluent's (the producer's and consumer's: or the native engine over Confluent's librdkafka)");
  t.equal(r.delivered, true, 'a message delivered');
  t.equal(r.lag, 1, "the lag monitor reads the message sent as the group's lag (it committed nothing)");
  t.same(r.warnings, [], 'no warning');
});

t.test('both clients in one process: one KDP_SHARED_LIBRDKAFKA warning', async (t) => {
  const r = child(`
    const warnings = [];
    process.on('warning', (w) => warnings.push(w.code));
    const Confluent = require('@confluentinc/kafka-javascript');
    const { DynamicProducer } = require('./');
    const a = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0 });
    const b = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0 }, {}, { kafka: Confluent });
    Promise.all([a.disconnect(0), b.disconnect(0)]).then(() => setImmediate(() => console.log(JSON.stringify({ warnings }))));`);
  t.same(r.warnings, ['KDP_SHARED_LIBRDKAFKA'], 'warned once, with its code');
});

t.test('options.kafka must be a node-rdkafka-style module', async (t) => {
  const { DynamicProducer, DynamicConsumer, LagMonitor } = require('../../../..');
  const GROUP = { 'metadata.broker.list': 'localhost:1', 'group.id': 'g', log_level: 0 };
  for (const bad of [null, 42, 'node-rdkafka', {}, { Producer() {} }, { KafkaJS: {} }]) {
    t.throws(() => new DynamicProducer({ 'test.mock.num.brokers': 1 }, {}, { kafka: bad }), { code: 'KDP_INVALID_OPTION', path: 'options.kafka' }, `DynamicProducer: ${JSON.stringify(bad)}`);
    t.throws(() => new DynamicConsumer(GROUP, {}, { kafka: bad }), { code: 'KDP_INVALID_OPTION', path: 'options.kafka' }, `DynamicConsumer: ${JSON.stringify(bad)}`);
    t.throws(() => new LagMonitor(GROUP, { groupId: 'g', topics: ['t'], kafka: bad }), { code: 'KDP_INVALID_OPTION', path: 'options.kafka' }, `LagMonitor: ${JSON.stringify(bad)}`);
  }
});
