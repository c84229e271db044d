'use strict';
// stop() while fetching is paused for back-pressure and a handler call is still running: the
// call finishes after the client began to disconnect, and its progress must not resume the
// partitions of that client (node-rdkafka throws "Local: Erroneous state", -172). Before the
// fix that escaped as an unhandled rejection and the process stayed alive. Each case runs in
// a child process that must exit by itself, with nothing unhandled, within a bound.
const t = require('tap');
const { spawn } = require('node:child_process');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');

function child(stopMs) {
  const script = `
    const { DynamicProducer, DynamicConsumer } = require(${JSON.stringify(ROOT)});
    process.on('unhandledRejection', (e) => { console.log('UNHANDLED ' + (e && e.message)); process.exitCode = 3; });
    (async () => {
      const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0 });
      await p.connect();
      const md = await new Promise((res, rej) => p.client.getMetadata({ timeout: 5000 }, (e, m) => (e ? rej(e) : res(m))));
      const brokers = md.brokers.map((b) => b.host + ':' + b.port).join(',');
      const topic = 'stop-while-paused';
      await Promise.all(Array.from({ length: 2000 }, (_, i) => p.send(topic, String(i), 'k' + (i % 50))));
      const c = new DynamicConsumer({ 'metadata.broker.list': brokers, 'group.id': 'swp', 'auto.offset.reset': 'earliest', log_level: 0 }, {}, { maxPending: 20 });
      await c.connect();
      let paused = false;
      c.on('paused', () => { paused = true; });
      c.on('error', () => {});
      c.on('warning', () => {});
      const run = c.run([topic], () => new Promise((resolve) => setTimeout(resolve, 50))).catch(() => {});
      const deadline = Date.now() + 20000;
      while (!paused && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      // Let a handler call be under way, then stop with less time than it needs.
      await new Promise((r) => setTimeout(r, 20));
      await c.stop(${stopMs});
      await run;
      await p.disconnect();
      console.log(JSON.stringify({ paused }));
    })().catch((e) => { console.log('FAILED ' + (e && e.stack)); process.exitCode = 2; });`;
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ['-e', script], { cwd: ROOT });
    let out = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => proc.kill('SIGKILL'), 45000);
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out });
    });
  });
}

for (const stopMs of [0, 1000]) {
  t.test(`stop(${stopMs}) while paused, a handler call in flight: the process exits by itself, nothing unhandled`, async (t) => {
    const r = await child(stopMs);
    t.equal(r.signal, null, `exited by itself (not killed after 45 s)${r.signal ? `: ${r.out.slice(-500)}` : ''}`);
    t.equal(r.code, 0, `exit code 0 (${r.out.trim().slice(-400)})`);
    t.notMatch(r.out, /UNHANDLED/, 'no unhandled rejection');
    t.match(r.out, /"paused":true/, 'premise: fetching was paused for back-pressure when stop() came');
  });
}
