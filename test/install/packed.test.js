'use strict';
// The package as users install it: `npm pack`, then `npm install` of the tarball into a fresh
// project with each kind of client. With KafkaJS or @platformatic/kafka nothing is compiled
// (node-rdkafka is an optional peer dependency; the install step says it built no native
// engine) and the package works there (its partition of a key agrees with the client's own
// Kafka-compatible partitioner). With node-rdkafka (KDP_INSTALL_NATIVE=1: it compiles librdkafka,
// about 3 minutes here) the native engine is built and a producer runs on it. Each install's
// wall time is printed (docs/operations.md gives the figures).
const t = require('tap');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');
const NODE_PREFIX = path.dirname(path.dirname(process.execPath));
const ENV = {
  ...process.env, npm_config_nodedir: NODE_PREFIX, npm_config_fund: 'false', npm_config_audit: 'false',
  npm_config_update_notifier: 'false', KDP_NATIVE_REQUIRED: '', KDP_ENGINE: '',
};

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kdp-packed-'));
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));

/** The packed tarball (build/ as it is: the suite runs after the build). */
function pack() {
  const run = spawnSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: ROOT, env: ENV, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`npm pack failed: ${run.stderr}`);
  return path.join(work, JSON.parse(run.stdout)[0].filename);
}

/** A fresh project with the tarball and `deps` installed (scripts shown): its folder, the install's output and seconds. */
function install(name, tarball, deps) {
  const dir = path.join(work, name);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true, version: '1.0.0' }));
  const started = process.hrtime.bigint();
  const run = spawnSync('npm', ['install', '--foreground-scripts', '--no-progress', tarball, ...deps], { cwd: dir, env: ENV, encoding: 'utf8', timeout: 900_000 });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { dir, status: run.status, output: `${run.stdout}\n${run.stderr}`, seconds };
}

/** Runs `script` with `node` in `dir`; its stdout's last line as JSON. */
function runIn(dir, script, node = process.execPath) {
  const run = spawnSync(node, ['-e', script], { cwd: dir, env: ENV, encoding: 'utf8', timeout: 60_000 });
  const line = run.stdout.trim().split('\n').pop();
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`no result (exit ${run.status}): ${run.stdout}\n${run.stderr}`);
  }
}

/** What a project's install must not have when no librdkafka client was asked for. */
function compiledNothing(t, project) {
  t.equal(project.status, 0, 'npm install succeeds');
  t.notOk(fs.existsSync(path.join(project.dir, 'node_modules', 'node-rdkafka')), 'node-rdkafka is not installed');
  t.notOk(fs.existsSync(path.join(project.dir, 'node_modules', 'kafka-dynamic-partitioner', 'native', 'build')), 'no native build was made');
  t.notMatch(project.output, /gyp info|CXX\(target\)|CC\(target\)/, 'node-gyp never ran');
  t.match(project.output, /node-rdkafka is not installed, so the native engine is not built/, 'the install says why no native engine was built');
  t.comment(`npm install took ${project.seconds.toFixed(1)} s`);
}

const KEYS = ['', 'a', 'tenant-42', 'hot-key', '\u00e9t\u00e9', 'x'.repeat(100)];

let tarball;
t.before(() => {
  tarball = pack();
});

t.test('with KafkaJS: nothing compiled, the package and its KafkaJS partitioner work', async (t) => {
  const project = install('with-kafkajs', tarball, ['kafkajs@2.2.4']);
  compiledNothing(t, project);
  const out = runIn(project.dir, `
    const kdp = require('kafka-dynamic-partitioner');
    const { Partitioners } = require('kafkajs');
    const theirs = Partitioners.DefaultPartitioner();
    const ours = kdp.createKafkaJsPartitioner()();
    const partitionMetadata = Array.from({ length: 12 }, (_, i) => ({ partitionId: i, leader: 0 }));
    const keys = ${JSON.stringify(KEYS)};
    console.log(JSON.stringify(keys.map((key) => [
      ours({ topic: 't', partitionMetadata, message: { key } }),
      theirs({ topic: 't', partitionMetadata, message: { key } }),
    ])));`);
  for (const [ours, theirs] of out) t.equal(ours, theirs, 'the partition KafkaJS own DefaultPartitioner gives');
});

t.test('with @platformatic/kafka: nothing compiled, the package loads on Node 22 beside it', async (t) => {
  const { peerNode } = require('../../bench/node22');
  const node = peerNode();
  if (node === undefined) return t.skip('Node 22 could not be installed from the npm registry');
  const project = install('with-platformatic', tarball, ['@platformatic/kafka@2.12.1']);
  compiledNothing(t, project);
  const out = runIn(project.dir, `
    const kdp = require('kafka-dynamic-partitioner');
    import('@platformatic/kafka').then(({ compatibilityPartitioner }) => {
      const keys = ${JSON.stringify(KEYS)};
      console.log(JSON.stringify(keys.map((key) => [
        kdp.partitionForKey(key, 12, 'murmur2_random'),
        compatibilityPartitioner(undefined, Buffer.from(key)) % 12,
      ])));
    });`, node);
  for (const [ours, theirs] of out) t.equal(ours, theirs, "the partition @platformatic/kafka's Kafka-compatible partitioner gives");
});

t.test('with node-rdkafka: the native engine is built and a producer runs on it', { skip: process.env.KDP_INSTALL_NATIVE !== '1' && 'KDP_INSTALL_NATIVE=1 runs it (it compiles librdkafka: about 3 minutes)' }, async (t) => {
  const project = install('with-node-rdkafka', tarball, ['node-rdkafka@3.6.1']);
  t.equal(project.status, 0, 'npm install succeeds');
  t.comment(`npm install took ${project.seconds.toFixed(1)} s`);
  t.ok(fs.existsSync(path.join(project.dir, 'node_modules', 'kafka-dynamic-partitioner', 'native', 'build', 'Release', 'kdp_native.node')), 'the native engine was built');
  const out = runIn(project.dir, `
    const { DynamicProducer } = require('kafka-dynamic-partitioner');
    const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0 });
    p.connect().then(() => p.send('packed', 'v', 'k')).then((report) =>
      p.disconnect().then(() => console.log(JSON.stringify({ engine: p.metrics().engine, offset: report.offset }))));`);
  t.equal(out.engine, 'native', 'the producer runs on the native engine');
  t.equal(out.offset, 0, 'its message is delivered');
});
