'use strict';
// The code of the README and docs/ runs as pasted, the README stays the user's page, and every
// relative link of the README, docs/ and the CHANGELOG leads to a file (and, for a `#fragment`
// into a Markdown file, to one of its headings).
//
// Convention, in README.md and docs/*.md alike: a fenced ```js, ```javascript or ```ts block whose
// previous non-blank line is `<!-- runnable -->` is run; `<!-- runnable: with <package> -->` is run
// when that optional package is installed (skipped, saying so, otherwise). Each runs alone in a
// fresh `node` process (its own temporary directory, NODE_PATH at this package's node_modules so
// `node-rdkafka` and `kafkajs` resolve), after two rewrites:
//   - require('kafka-dynamic-partitioner') / from 'kafka-dynamic-partitioner' → the local build
//     (build/index.js), as an installed package would resolve it;
//   - a librdkafka bootstrap entry, 'metadata.broker.list' or 'bootstrap.servers' with any
//     value, → the same entry naming a librdkafka mock cluster (3 brokers) this test process
//     holds for the block: the pages show the addresses a user types; every client of a block
//     reaches the one cluster, as it would one broker, and the mock cluster creates topics on
//     first use.
// A block fails when its process exits with a non-zero code or has not exited after
// RUN_LIMIT_MS (a hang guard, not a performance limit: it is then killed).
// ```ts blocks are type-checked with tsc against build/index.d.ts (all of them), and the
// runnable ones are transpiled to CommonJS and run like the JS ones. Every JS block of the
// README, runnable or not, must compile as a CommonJS script (so no top-level await in a require
// example); a JS block of docs/ may also be a fragment that compiles as the body of an async
// function (`await producer.connect(...)`).
// Parsing (blocks, GitHub's heading anchors, links) is in test/lib/markdown.js.

const { test } = require('tap');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const vm = require('node:vm');
const { spawnSync } = require('node:child_process');
const { codeBlocks, anchors, relativeLinks, brokenLinks } = require('./lib/markdown');

const ROOT = path.join(__dirname, '..');
const BUILD = path.join(ROOT, 'build', 'index.js');
const RUN_LIMIT_MS = 120_000;
const PACKAGE = 'kafka-dynamic-partitioner';
// The issue "one house, second pass": pitch, install, quick start, compatibility, an options
// overview, errors and headline performance; the rest belongs in docs/.
const README_MAX_LINES = 400;

const isJs = (b) => b.lang === 'js' || b.lang === 'javascript';
const isTs = (b) => b.lang === 'ts' || b.lang === 'typescript';

/** The bootstrap entries of a block (a librdkafka setting with a quoted value). */
const BOOTSTRAP = /(['"])(metadata\.broker\.list|bootstrap\.servers)\1\s*:\s*(['"])([^'"]*)\3/g;

/** The rewrites described above; `bootstrap`: the held mock cluster's list. */
function forTest(code, bootstrap) {
  return code
    .replace(/require\((['"])kafka-dynamic-partitioner\1\)/g, `require(${JSON.stringify(BUILD)})`)
    .replace(BOOTSTRAP, (_, _q, name) => `'${name}': '${bootstrap}'`);
}

/** A librdkafka mock cluster held by this process (node-rdkafka's): its bootstrap list, and its close. */
async function heldCluster() {
  const Kafka = require('node-rdkafka');
  const holder = new Kafka.Producer({ 'test.mock.num.brokers': 3, log_level: 0 });
  await new Promise((resolve, reject) => holder.connect({}, (err) => (err ? reject(err) : resolve())));
  const md = await new Promise((resolve, reject) => holder.getMetadata({ timeout: 5000 }, (err, m) => (err ? reject(err) : resolve(m))));
  return { bootstrap: md.brokers.map((b) => `${b.host}:${b.port}`).join(','), close: () => new Promise((resolve) => holder.disconnect(resolve)) };
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

// README.md first, then docs/*.md in name order; each block knows its page.
const PAGES = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const texts = new Map(PAGES.map((page) => [page, fs.readFileSync(path.join(ROOT, page), 'utf8')]));
const blocks = PAGES.flatMap((page) => codeBlocks(texts.get(page)).map((b) => ({ ...b, page, where: `${page}:${b.line}` })));
const readme = texts.get('README.md');
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

test('the rewrites: the local build, and the held mock cluster for a bootstrap list', (t) => {
  const code = forTest(
    "const k = require('kafka-dynamic-partitioner');\nnew P({ 'metadata.broker.list': 'localhost:9092', x: 1 }, { \"bootstrap.servers\": \"a:1,b:2\" });",
    '127.0.0.1:1,127.0.0.1:2',
  );
  t.equal(
    code,
    `const k = require(${JSON.stringify(BUILD)});\nnew P({ 'metadata.broker.list': '127.0.0.1:1,127.0.0.1:2', x: 1 }, { 'bootstrap.servers': '127.0.0.1:1,127.0.0.1:2' });`,
  );
  t.end();
});

test('code blocks: the runnable markers, with and without an optional package', (t) => {
  const found = codeBlocks(
    '<!-- runnable -->\n\n```js\na();\n```\n\n<!-- runnable: with @scope/pkg -->\n```ts\nb();\n```\ntext\n```js\nc();\n```\n',
  );
  t.same(
    found.map(({ lang, code, line, runnable, needs }) => ({ lang, code, line, runnable, needs })),
    [
      { lang: 'js', code: 'a();', line: 3, runnable: true, needs: undefined },
      { lang: 'ts', code: 'b();', line: 8, runnable: true, needs: '@scope/pkg' },
      { lang: 'js', code: 'c();', line: 12, runnable: false, needs: undefined },
    ],
  );
  t.end();
});

test('the README marks its Quick start blocks runnable', (t) => {
  const quickStart = readme.indexOf('\n## Quick start');
  const next = readme.indexOf('\n## ', quickStart + 1);
  const startLine = readme.slice(0, quickStart).split('\n').length;
  const endLine = readme.slice(0, next).split('\n').length;
  const inQuickStart = runnable.filter((b) => b.page === 'README.md' && b.line > startLine && b.line < endLine);
  t.ok(inQuickStart.length >= 4, `${inQuickStart.length} runnable blocks under Quick start`);
  t.ok(
    inQuickStart.some((b) => b.code.includes('new DynamicProducer(')),
    'the DynamicProducer example is among them',
  );
  t.ok(inQuickStart.some(isTs), 'a TypeScript block is among them');
  t.end();
});

test('the runnable blocks of docs/ are run too', (t) => {
  const inDocs = runnable.filter((b) => b.page !== 'README.md');
  t.ok(inDocs.length >= 1, `${inDocs.length} runnable blocks in docs/: ${inDocs.map((b) => b.where).join(', ')}`);
  t.ok(
    inDocs.some((b) => b.page === 'docs/options.md' && b.needs === '@confluentinc/kafka-javascript'),
    "docs/options.md's DynamicProducer on Confluent's client is among them",
  );
  t.end();
});

test("the README stays the user's page: the two commands, and the rest in docs/", (t) => {
  const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
  t.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines (at most ${README_MAX_LINES}; move details to docs/)`);
  t.match(readme, /^npm install\s+#.*$/m, 'npm install in a clone');
  t.match(readme, /^npm run demo\s+#.*mock cluster.*$/m, 'npm run demo: the mock cluster, no broker');
  t.match(readme, /^npm test\s+#.*$/m, 'npm test');
  t.end();
});

/** Whether `code` compiles as the body of an async function (a docs fragment that awaits). */
const compilesAsAsyncBody = (code, filename) => {
  try {
    new vm.Script(`(async () => {\n${code}\n})`, { filename });
    return true;
  } catch {
    return false;
  }
};

test('every JS block compiles: as a CommonJS script (README), or as an async function body (docs/)', (t) => {
  const js = blocks.filter(isJs);
  t.ok(js.some((b) => b.page === 'README.md'));
  for (const b of js) {
    if (b.page === 'README.md') {
      t.doesNotThrow(() => new vm.Script(b.code, { filename: b.where }), b.where);
      continue;
    }
    let script = true;
    try {
      new vm.Script(b.code, { filename: b.where });
    } catch {
      script = false;
    }
    t.ok(script || compilesAsAsyncBody(b.code, b.where), b.where);
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
  test(`${b.where} runs (js)`, { skip }, async (t) => {
    const cluster = await heldCluster();
    t.teardown(cluster.close);
    const code = forTest(b.code, cluster.bootstrap);
    t.notMatch(code, /require\(['"]kafka-dynamic-partitioner/, 'rewritten: the local build');
    t.ok([...code.matchAll(BOOTSTRAP)].every((m) => m[4] === cluster.bootstrap), 'rewritten: every bootstrap list the held cluster');
    // spawnSync blocks this thread, not librdkafka's, which serve the held cluster meanwhile.
    const r = runNode(code);
    t.equal(r.signal, null, `finished within ${RUN_LIMIT_MS} ms`);
    t.equal(r.status, 0, `exit code 0; stderr: ${r.stderr}`);
  });
}

const tsBlocks = blocks.filter(isTs);
const ts = require('typescript');

test('the TypeScript blocks type-check against build/index.d.ts', (t) => {
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
    const where = d.file ? tsBlocks[files.indexOf(d.file.fileName)]?.where : '';
    return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
  t.same(diagnostics, [], 'no type errors');
  t.end();
});

for (const b of runnable.filter(isTs)) {
  const skip = b.needs && !installed(b.needs) ? `${b.needs} is not installed (see the README's install section)` : false;
  test(`${b.where} runs (ts, transpiled to CommonJS)`, { skip }, (t) => {
    const js = ts.transpileModule(b.code, {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    }).outputText;
    const r = runNode(forTest(js));
    t.equal(r.signal, null, `finished within ${RUN_LIMIT_MS} ms`);
    t.equal(r.status, 0, `exit code 0; stderr: ${r.stderr}`);
    t.end();
  });
}

test('every relative link in README.md, docs/*.md and CHANGELOG.md resolves', (t) => {
  let checked = 0;
  for (const page of [...PAGES, 'CHANGELOG.md']) {
    const r = brokenLinks(ROOT, page, texts.get(page) ?? fs.readFileSync(path.join(ROOT, page), 'utf8'));
    t.same(r.broken, [], `${page}: ${r.checked} relative links lead to files (and headings)`);
    checked += r.checked;
  }
  t.ok(checked >= 10, `${checked} links checked`);
  t.end();
});

test('the link checker skips code and absolute links, and reports a missing file or heading', (t) => {
  t.same(relativeLinks('see [a](docs/x.md#y) and [b](https://e.org) `[c](no.md)` ![d](e.svg)\n```\n[f](g.md)\n```'), [
    'docs/x.md#y',
    'e.svg',
  ]);
  const r = brokenLinks(
    ROOT,
    'docs/ordering.md',
    '[a](ordering.md) [b](no-such-page.md) [c](../README.md#no-such-heading) [d](#guarantee)',
  );
  t.same(r.broken, [
    'docs/ordering.md: no-such-page.md (no file docs/no-such-page.md)',
    'docs/ordering.md: ../README.md#no-such-heading (no such heading)',
  ]);
  t.end();
});

test("GitHub's heading anchors: punctuation dropped, spaces to '-', repeated headings numbered", (t) => {
  const a = anchors(
    [
      '## Wrapping an existing producer',
      "## Confluent's KafkaJS API: wrapKafkaJsConsumer",
      '## Concurrent handling: `concurrency` and `ordering`',
      '## A secure cluster: SASL_SSL and ACLs',
      '### Soak ##',
      '## Soak',
      '```sh',
      '# not a heading',
      '```',
    ].join('\n'),
  );
  t.same(
    [...a],
    [
      'wrapping-an-existing-producer',
      'confluents-kafkajs-api-wrapkafkajsconsumer',
      'concurrent-handling-concurrency-and-ordering',
      'a-secure-cluster-sasl_ssl-and-acls',
      'soak',
      'soak-1',
    ],
  );
  t.end();
});
