'use strict';
// A producer or consumer on a librdkafka client whose native engine is not built (installed
// before node-rdkafka, or no C toolchain): engine 'auto' runs on the client library and says so
// once per process (a process warning, code KDP_NATIVE_MISSING, with the command that builds
// it); engine 'client' says nothing; engine 'native' is refused naming the command. Each case
// runs in a child process where node-gyp-build finds no build (test/lib/without-native-engine.js).
const t = require('tap');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');
const PRELOAD = path.join(__dirname, '..', 'lib', 'without-native-engine.js');

/** Runs `body` (an async function's text, given the package as `kdp`) in a child without the native engine; its printed JSON and the warnings it got. */
function child(body) {
  const script = `
    const kdp = require(${JSON.stringify(ROOT)});
    const warnings = [];
    process.on('warning', (w) => warnings.push({ code: w.code, message: w.message, detail: w.detail }));
    (async () => { ${body} })().then((out) => setImmediate(() => console.log(JSON.stringify({ out, warnings }))),
      (err) => console.log(JSON.stringify({ error: { code: err.code, message: err.message }, warnings })));`;
  const run = spawnSync(process.execPath, ['--require', PRELOAD, '-e', script], {
    env: { ...process.env, KDP_ENGINE: '' }, encoding: 'utf8', timeout: 60_000,
  });
  const line = run.stdout.trim().split('\n').pop();
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`the child printed no result (exit ${run.status}): ${run.stdout}\n${run.stderr}`);
  }
}

const MOCK = "{ 'test.mock.num.brokers': 1, log_level: 0 }";

t.test("engine 'auto' without the native engine: the client library, said once per process with the command", async (t) => {
  const { out, warnings, error } = child(`
    const a = new kdp.DynamicProducer(${MOCK});
    const b = new kdp.DynamicProducer(${MOCK});
    const c = new kdp.DynamicConsumer({ ...${MOCK}, 'group.id': 'native-missing' });
    await a.connect();
    const report = await a.send('native-missing', 'v', 'k');
    await Promise.all([a.disconnect(), b.disconnect(), c.stop()]);
    return { engines: [a.metrics().engine, b.metrics().engine, c.metrics().engine], partition: report.partition };`);
  t.equal(error, undefined, 'no error');
  t.same(out.engines, ['client', 'client', 'client'], 'both producers and the consumer run on the client library');
  t.type(out.partition, 'number', 'a message is delivered on it');
  const missing = warnings.filter((w) => w.code === 'KDP_NATIVE_MISSING');
  t.equal(missing.length, 1, 'one warning for two producers and a consumer');
  t.match(missing[0].message, /native engine is not built/);
  t.match(missing[0].detail, /npm rebuild kafka-dynamic-partitioner/, 'the warning gives the command that builds it');
});

t.test("engine 'client' says nothing; engine 'native' is refused naming the command", async (t) => {
  const quiet = child(`
    const p = new kdp.DynamicProducer(${MOCK}, {}, { engine: 'client' });
    await p.disconnect();
    return p.metrics().engine;`);
  t.equal(quiet.out, 'client');
  t.same(quiet.warnings.filter((w) => w.code === 'KDP_NATIVE_MISSING'), [], 'no warning when the client engine is chosen');
  const refused = child(`new kdp.DynamicProducer(${MOCK}, {}, { engine: 'native' });`);
  t.equal(refused.error?.code, 'KDP_STATE');
  t.match(refused.error?.message, /npm rebuild kafka-dynamic-partitioner/);
});
