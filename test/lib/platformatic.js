'use strict';
// Runs a script under Node 22 with @platformatic/kafka available, for the tap tests (which run on
// Node 20: @platformatic/kafka needs Node >= 22.19 and is an ES module). Both are installed by
// bench/node22.js into bench/.peers/ (gitignored) on first use; when that gives nothing, the tests
// skip with PLATFORMATIC_MISSING.
//
// Parent (tap, Node 20):
//   const { platformaticSkip, runPlatformatic } = require('../lib/platformatic');
//   t.test('...', { skip: platformaticSkip() }, async (t) => {
//     const { result } = await runPlatformatic(path.join(__dirname, 'fixtures', 'x.js'), { args: ['12'] });
//     // or: await runPlatformatic({ code: "require('./test/lib/platformatic').reportResult(1)" });
//   });
// Child (Node 22, CommonJS; cwd is the repository root):
//   const { platformatic, reportResult } = require('../../lib/platformatic');
//   const { Producer } = await platformatic();
//   ...
//   reportResult({ any: 'JSON value' });

const { spawn } = require('node:child_process');
const path = require('node:path');
const { peerNode, platformatic } = require('../../bench/node22');

const ROOT = path.join(__dirname, '..', '..');
const MARK = 'KDP-PLATFORMATIC-RESULT ';

/** Why the @platformatic/kafka tests are skipped when Node 22 or the package cannot be installed. */
const PLATFORMATIC_MISSING = 'Node 22 and @platformatic/kafka could not be installed into bench/.peers (node bench/node22.js needs the npm registry once)';

let cachedNode;

/** The Node 22 binary (installing it and @platformatic/kafka on first use), or undefined. */
function platformaticNode() {
  if (cachedNode === undefined) {
    try {
      cachedNode = peerNode() || null;
    } catch {
      cachedNode = null;
    }
  }
  return cachedNode || undefined;
}

/** false when the Node 22 side is available, else the reason to skip: use as `{ skip: platformaticSkip() }`. */
function platformaticSkip() {
  return platformaticNode() === undefined ? PLATFORMATIC_MISSING : false;
}

/**
 * Runs `script` (a file path, or `{ code }` run with `node -e`) under Node 22, with cwd the repository
 * root, the environment of this process plus `env`, and `args` after the script. Resolves with
 * `{ result, status, stdout, stderr }`, where `result` is the value the child gave reportResult()
 * (its last one). Rejects when the child exits non-zero, is killed (timeout, default 120 s), or
 * reports nothing (unless `allowNoResult`); the error carries the child's stderr.
 */
function runPlatformatic(script, { args = [], env = {}, timeout = 120000, input, allowNoResult = false } = {}) {
  const node = platformaticNode();
  if (node === undefined) return Promise.reject(new Error(PLATFORMATIC_MISSING));
  const argv = typeof script === 'string' ? [script, ...args] : ['-e', script.code, '--', ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(node, argv, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (b) => out.push(b));
    child.stderr.on('data', (b) => err.push(b));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      const lines = stdout.split('\n').filter((l) => l.startsWith(MARK));
      const what = typeof script === 'string' ? path.relative(ROOT, script) : 'node -e';
      if (status !== 0 || signal) {
        const e = new Error(`${what} under Node 22 ${signal ? `was killed (${signal}${signal === 'SIGKILL' ? `, timeout ${timeout} ms?` : ''})` : `exited with ${status}`}\n${stderr.slice(-4000)}`);
        Object.assign(e, { status, signal, stdout, stderr });
        reject(e);
        return;
      }
      if (lines.length === 0 && !allowNoResult) {
        reject(Object.assign(new Error(`${what} under Node 22 reported no result\n${stderr.slice(-4000)}`), { status, stdout, stderr }));
        return;
      }
      const result = lines.length === 0 ? undefined : JSON.parse(lines[lines.length - 1].slice(MARK.length));
      resolve({ result, status, stdout, stderr });
    });
    if (input !== undefined) child.stdin.end(input);
    else child.stdin.end();
  });
}

/** In the child: hands `value` (JSON-serialisable) back to runPlatformatic's caller. */
function reportResult(value) {
  process.stdout.write(`${MARK}${JSON.stringify(value)}\n`);
}

module.exports = { PLATFORMATIC_MISSING, platformaticNode, platformaticSkip, runPlatformatic, reportResult, platformatic, ROOT };
