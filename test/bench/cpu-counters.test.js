'use strict';
// The benchmarks' CPU counters (bench/common.js) against what the measured process says of
// itself: spawnCounted() reads a child's CPU from this process's cutime and cstime,
// processesCpuNs() another process's from its utime and stime (/proc). A child that keeps one
// core busy for a while reports its own CPU time (process.cpuUsage(), from the kernel's
// getrusage), and the counters must agree with it within the kernel's ticks and the child's exit.
// Then bench:clients, short, on librdkafka's mock cluster: librdkafka's own rdkafka_performance
// gives its two rows (its summary parsed, its CPU counted: 100,000 messages, some tens of ms,
// several of the kernel's ticks), and every row's ratio to it.
const t = require('tap');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { spawnSync } = require('node:child_process');
const { spawnCounted, processesCpuNs, brokerPids } = require('../../bench/common');

// Busy for BUSY_MS of CPU, then prints the process's own CPU time (ns) and exits.
const BUSY_MS = 400;
const BUSY = `const until = process.cpuUsage().user / 1000 + ${BUSY_MS}; let x = 0;
while (process.cpuUsage().user / 1000 < until) x += Math.sqrt(x + 1);
const u = process.cpuUsage(); console.log((u.user + u.system) * 1000);`;
// Ticks of 10 ms, on each of utime and stime, and what the process does after measuring itself.
const SLACK_NS = 60e6;

const skip = process.platform !== 'linux' ? 'the counters read /proc (Linux)' : false;

t.test('spawnCounted() gives the CPU a child says it spent', { skip }, async (t) => {
  const { run, cpuNs } = spawnCounted(process.execPath, ['-e', BUSY], { encoding: 'utf8' });
  t.equal(run.status, 0, 'the child ran');
  const own = Number(run.stdout.trim());
  t.ok(own >= BUSY_MS * 1e6, `premise: the child spent ${Math.round(own / 1e6)} ms`);
  t.ok(Math.abs(cpuNs - own) <= SLACK_NS, `counted ${Math.round(cpuNs / 1e6)} ms, the child's own ${Math.round(own / 1e6)} ms`);
});

t.test('processesCpuNs() gives the CPU another process spent meanwhile', { skip }, async (t) => {
  // The child waits for a line, then is busy and reports; read before the line and after the report.
  const child = spawn(process.execPath, ['-e', `process.stdin.once('data', () => { ${BUSY} process.stdin.pause(); });`], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const before = processesCpuNs([child.pid]);
  const out = new Promise((resolve) => child.stdout.once('data', (d) => resolve(String(d))));
  child.stdin.write('go\n');
  const reported = Number((await out).trim());
  const after = processesCpuNs([child.pid]);
  child.stdin.end();
  await new Promise((resolve) => child.once('exit', resolve));
  t.ok(Number.isFinite(before) && Number.isFinite(after), 'both read');
  // The child's own figure counts its start too, read here before the line: the busy part is what both share.
  t.ok(after - before >= BUSY_MS * 1e6 - SLACK_NS && after - before <= reported + SLACK_NS,
    `counted ${Math.round((after - before) / 1e6)} ms of the child's ${Math.round(reported / 1e6)} ms (${BUSY_MS} ms busy)`);
  t.ok(Number.isNaN(processesCpuNs([])), 'no process: NaN');
  t.ok(Number.isNaN(processesCpuNs([child.pid])), 'a process gone: NaN');
  t.same(brokerPids('12, 34,x,-1'), [12, 34], '--broker-pids: the pids it names');
});

t.test('bench:clients gives the C client\'s rows and every row\'s ratio to them', async (t) => {
  const run = spawnSync(process.execPath, [path.join(__dirname, '../../bench/clients.js'), '--messages=100000', '--rounds=1', '--json', '--only=rdkafka_performance,produce() + flush()'],
    { encoding: 'utf8', timeout: 120_000 });
  t.equal(run.status, 0, `the bench ran (${run.stderr.slice(-500)})`);
  const rows = Object.fromEntries(JSON.parse(run.stdout).rows.map((r) => [r.name, r.cold]));
  for (const name of ['rdkafka_performance (the limit)', 'rdkafka_performance, every message a partition']) {
    t.ok(rows[name].msgPerSec > 0, `${name}: its rate (${rows[name].msgPerSec} msg/s)`);
    t.ok(rows[name].processCpuUsPerMsg > 0, `${name}: its CPU per message (${rows[name].processCpuUsPerMsg} µs)`);
    t.equal(rows[name].lost, 0, `${name}: everything delivered`);
  }
  const ours = rows['produce() + flush()'];
  t.equal(ours.lost, 0, 'produce(): everything written');
  t.ok(Math.abs(ours.vsLimit - ours.msgPerSec / rows['rdkafka_performance (the limit)'].msgPerSec) < 1e-3, `produce(): its ratio to the limit (${ours.vsLimit.toFixed(3)})`);
  t.equal(ours.brokerCpuUsPerMsg, null, "no --broker-pids: no brokers' CPU");
});
