'use strict';
// The README's code runs as pasted, and every relative link of the README and docs/ leads to a
// file (and, for a `#fragment` into a Markdown file, to one of its headings).
//
// Convention: a fenced ```js, ```javascript or ```ts block whose previous non-blank line is
// `<!-- runnable -->` is run; `<!-- runnable: with <package> -->` is run when that optional
// package is installed (skipped, saying so, otherwise). Each runs alone in a fresh `node` process (its own temporary
// directory, NODE_PATH at this package's node_modules so `node-rdkafka` and `kafkajs`
// resolve), after two rewrites:
//   - require('kafka-dynamic-partitioner') / from 'kafka-dynamic-partitioner' → the local build
//     (build/index.js), as an installed package would resolve it;
//   - a librdkafka bootstrap entry, 'metadata.broker.list' or 'bootstrap.servers' with any
//     value, → 'test.mock.num.brokers': 3, librdkafka's in-process mock cluster. The README
//     shows the addresses a user types; the mock cluster creates topics on first use.
// A block fails when its process exits with a non-zero code or has not exited after
// RUN_LIMIT_MS (a hang guard, not a performance limit: it is then killed).
// ```ts blocks are type-checked with tsc against build/index.d.ts (all of them), and the
// runnable ones are transpiled to CommonJS and run like the JS ones. Every JS block, runnable
// or not, must compile as a CommonJS script (so no top-level await in a require example).

const { test } = require('tap');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const vm = require('node:vm');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..');
const BUILD = path.join(ROOT, 'build', 'index.js');
const RUN_LIMIT_MS = 120_000;
const PACKAGE = 'kafka-dynamic-partitioner';

/** Fenced code blocks of a Markdown text: { lang, code, line, runnable }. */
function codeBlocks(markdown) {
  const lines = markdown.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    let prev = start - 1;
    while (prev >= 0 && lines[prev].trim() === '') prev--;
    blocks.push({
      lang: open[1],
      code: lines.slice(start + 1, end).join('\n'),
      line: start + 1,
      runnable: prev >= 0 && /^<!-- runnable(: with [@\w/.-]+)? -->$/.test(lines[prev].trim()),
      // `<!-- runnable: with <package> -->`: run when that optional package is installed.
      needs: prev >= 0 ? (/^<!-- runnable: with ([@\w/.-]+) -->$/.exec(lines[prev].trim()) || [])[1] : undefined,
    });
    i = end;
  }
  return blocks;
}

const isJs = (b) => b.lang === 'js' || b.lang === 'javascript';
const isTs = (b) => b.lang === 'ts' || b.lang === 'typescript';

/** The rewrites described above. */
function forTest(code) {
  return code
    .replace(/require\((['"])kafka-dynamic-partitioner\1\)/g, `require(${JSON.stringify(BUILD)})`)
    .replace(/(['"])(?:metadata\.broker\.list|bootstrap\.servers)\1\s*:\s*(['"])[^'"]*\2/g, "'test.mock.num.brokers': 3");
}

/** Runs CommonJS `code` in a fresh node process: { status, signal, stdout, stderr }. */
function runNode(code, limitMs = RUN_LIMIT_MS) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kdp-readme-'));
  try {
    const file = path.join(dir, 'block.js');
    fs.writeFileSync(file, code);
    const r = spawnSync(process.execPath, [file], {
      cwd: dir,
      env: { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules') },
      encoding: 'utf8',
      timeout: limitMs,
      killSignal: 'SIGKILL',
    });
    return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const blocks = codeBlocks(readme);
const runnable = blocks.filter((b) => b.runnable);

test('the runner fails a block that throws, rejects or hangs, and passes one that ends', (t) => {
  t.equal(runNode('console.log("ok")').status, 0);
  t.not(runNode('throw new Error("thrown")').status, 0, 'a throw is a non-zero exit');
  t.not(runNode('(async () => { throw new Error("rejected"); })()').status, 0, 'an unhandled rejection is a non-zero exit');
  const hung = runNode('setInterval(() => {}, 1000)', 2000);
  t.equal(hung.signal, 'SIGKILL', 'a block still running at the limit is killed');
  t.equal(hung.status, null);
  t.end();
});

test('the rewrites: the local build, and the mock cluster for a bootstrap list', (t) => {
  const code = forTest(
    "const k = require('kafka-dynamic-partitioner');\nnew P({ 'metadata.broker.list': 'localhost:9092', x: 1 }, { \"bootstrap.servers\": \"a:1,b:2\" });",
  );
  t.equal(code, `const k = require(${JSON.stringify(BUILD)});\nnew P({ 'test.mock.num.brokers': 3, x: 1 }, { 'test.mock.num.brokers': 3 });`);
  t.end();
});

test('the README marks its Quick start blocks runnable', (t) => {
  const quickStart = readme.indexOf('\n## Quick start');
  const next = readme.indexOf('\n## ', quickStart + 1);
  const startLine = readme.slice(0, quickStart).split('\n').length;
  const endLine = readme.slice(0, next).split('\n').length;
  const inQuickStart = runnable.filter((b) => b.line > startLine && b.line < endLine);
  t.ok(inQuickStart.length >= 4, `${inQuickStart.length} runnable blocks under Quick start`);
  t.ok(
    inQuickStart.some((b) => b.code.includes('new DynamicProducer(')),
    'the DynamicProducer example is among them',
  );
  t.ok(runnable.some(isTs), 'a TypeScript block is among them');
  t.end();
});

test('every JS block of the README compiles as a CommonJS script', (t) => {
  const js = blocks.filter(isJs);
  t.ok(js.length > 0);
  for (const b of js) {
    t.doesNotThrow(() => new vm.Script(b.code, { filename: `README.md:${b.line}` }), `README.md:${b.line}`);
  }
  t.end();
});

/** Whether an optional package resolves from this package. */
const installed = (name) => {
  try {
    require.resolve(name, { paths: [ROOT] });
    return true;
  } catch {
    return false;
  }
};

for (const b of runnable.filter(isJs)) {
  const skip = b.needs && !installed(b.needs) ? `${b.needs} is not installed (see the README's install section)` : false;
  test(`README.md:${b.line} runs (js)`, { skip }, (t) => {
    const code = forTest(b.code);
    t.notMatch(code, /metadata\.broker\.list|bootstrap\.servers|require\(['"]kafka-dynamic-partitioner/, 'rewritten');
    const r = runNode(code);
    t.equal(r.signal, null, `finished within ${RUN_LIMIT_MS} ms`);
    t.equal(r.status, 0, `exit code 0; stderr: ${r.stderr}`);
    t.end();
  });
}

const tsBlocks = blocks.filter(isTs);
const ts = require('typescript');

test('the README\'s TypeScript blocks type-check against build/index.d.ts', (t) => {
  t.ok(tsBlocks.length > 0);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kdp-readme-ts-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const files = tsBlocks.map((b, i) => {
    const file = path.join(dir, `block${i}.ts`);
    // Each block is a module of its own (its `import` makes it one).
    fs.writeFileSync(file, b.code);
    return file;
  });
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    esModuleInterop: true,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [path.join(ROOT, 'node_modules', '@types')],
    baseUrl: dir,
    paths: { [PACKAGE]: [path.join(ROOT, 'build', 'index.d.ts')] },
  });
  const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `block${files.indexOf(d.file.fileName)}` : '';
    return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
  t.same(diagnostics, [], 'no type errors');
  t.end();
});

for (const b of runnable.filter(isTs)) {
  test(`README.md:${b.line} runs (ts, transpiled to CommonJS)`, (t) => {
    const js = ts.transpileModule(b.code, {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    }).outputText;
    const r = runNode(forTest(js));
    t.equal(r.signal, null, `finished within ${RUN_LIMIT_MS} ms`);
    t.equal(r.status, 0, `exit code 0; stderr: ${r.stderr}`);
    t.end();
  });
}

// GitHub's heading anchors: lower case, punctuation other than '-' and '_' dropped, spaces to '-'.
function anchors(markdown) {
  const out = new Set();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^```/.test(line)) fenced = !fenced;
    const h = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (h) out.add(h[1].trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-'));
  }
  return out;
}

/** Relative link targets of a Markdown text, outside code fences and code spans. */
function relativeLinks(markdown) {
  const out = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^```/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    const text = line.replace(/`[^`]*`/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, ...
      out.push(target);
    }
  }
  return out;
}

/** The relative links of `text` (the page at `page`, relative to ROOT) that lead nowhere, and how many were checked. */
function brokenLinks(page, text) {
  const broken = [];
  const links = relativeLinks(text);
  for (const link of links) {
    const [file, fragment] = link.split('#');
    const target = file === '' ? path.join(ROOT, page) : path.resolve(ROOT, path.dirname(page), file);
    if (!fs.existsSync(target)) broken.push(`${page}: ${link} (no file ${path.relative(ROOT, target)})`);
    else if (fragment && target.endsWith('.md') && !anchors(fs.readFileSync(target, 'utf8')).has(fragment)) {
      broken.push(`${page}: ${link} (no such heading)`);
    }
  }
  return { broken, checked: links.length };
}

test('every relative link in README.md and docs/*.md resolves', (t) => {
  const docs = fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join('docs', f));
  let checked = 0;
  for (const page of ['README.md', ...docs]) {
    const r = brokenLinks(page, fs.readFileSync(path.join(ROOT, page), 'utf8'));
    t.same(r.broken, [], `${page}: ${r.checked} relative links lead to files`);
    checked += r.checked;
  }
  t.ok(checked >= 10, `${checked} links checked`);
  t.end();
});

test('the link checker skips code and absolute links, and reports a missing file or heading', (t) => {
  t.same(relativeLinks('see [a](docs/x.md#y) and [b](https://e.org) `[c](no.md)`\n```\n[d](e.md)\n```'), ['docs/x.md#y']);
  t.ok(anchors('## Wrapping an existing producer\n').has('wrapping-an-existing-producer'));
  const r = brokenLinks('docs/ordering.md', '[a](ordering.md) [b](no-such-page.md) [c](../README.md#no-such-heading) [d](#guarantee)');
  t.same(r.broken, ['docs/ordering.md: no-such-page.md (no file docs/no-such-page.md)', 'docs/ordering.md: ../README.md#no-such-heading (no such heading)']);
  t.end();
});
