'use strict';
// The house's structural checks, read from the tree as it is: every source file small (≤ 450
// lines in src/, native/src/ and assembly/); no import cycle between TypeScript files; the
// folders of src/ in layers, each importing only the layers below it (the order the code
// follows: core ← partitioner ← native ← producer ← delivery ← consumer ← kafkajs ← platformatic ← tools ← index.ts);
// the code maps of docs/design.md and docs/native.md as scripts/code-map.js writes them; and
// what a file marks @internal absent from the public declarations in build/; a folder of test/
// for every folder of src/. Each check is
// tried first on a small case it must refuse, so that none passes for want of looking.

const t = require('tap');
const { readFileSync, readdirSync, statSync, existsSync } = require('node:fs');
const { join, dirname, normalize, relative } = require('node:path');
const codeMap = require('../scripts/code-map');

const ROOT = join(__dirname, '..');
const MAX_LINES = 450;

/** The layers of src/, from the ground up: a folder may import its own layer and those before it. */
const LAYERS = ['core', 'partitioner', 'native', 'producer', 'delivery', 'consumer', 'kafkajs', 'platformatic', 'tools', 'index.ts'];

/** The files under `folder` (from the root) whose names match `pattern`. */
function filesUnder(folder, pattern) {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(join(ROOT, dir))) {
      const path = `${dir}/${name}`;
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (pattern.test(name)) out.push(path);
    }
  };
  walk(folder);
  return out.sort();
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;

/** Each TypeScript file of src/ with the files of src/ it imports (type-only imports too). */
function importGraph() {
  const graph = new Map();
  for (const file of filesUnder('src', /\.ts$/)) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const targets = new Set();
    for (const match of text.matchAll(IMPORT)) {
      const base = normalize(join(dirname(file), match[1]));
      const target = [`${base}.ts`, `${base}/index.ts`, `${base}.d.ts`].find((p) => existsSync(join(ROOT, p)));
      if (target !== undefined) targets.add(target);
    }
    graph.set(file, [...targets]);
  }
  return graph;
}

/** The cycles of a graph (Map: node → nodes), each as its nodes: Tarjan's strongly connected components of more than one node, or a node importing itself. */
function cycles(graph) {
  let index = 0;
  const indexes = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const out = [];
  const visit = (node) => {
    indexes.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indexes.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), indexes.get(next)));
    }
    if (low.get(node) === indexes.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) out.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indexes.has(node)) visit(node);
  return out;
}

/** The layer of a file of src/ (its first folder, or index.ts): an index into LAYERS, -1 when unknown. */
function layerOf(file) {
  const parts = file.split('/');
  return LAYERS.indexOf(parts.length > 2 ? parts[1] : parts[1] === 'index.ts' ? 'index.ts' : parts[1]);
}

/** The imports that go up the layers or reach outside them: "a -> b" lines. */
function layerBreaks(graph) {
  const out = [];
  for (const [file, targets] of graph) {
    const from = layerOf(file);
    for (const target of targets) {
      const to = layerOf(target);
      if (from < 0 || to < 0 || to > from) out.push(`${file} -> ${target}`);
    }
  }
  return out;
}

/** The names a source text marks @internal: the member declared right after each such doc comment. */
function internalNames(text) {
  const names = [];
  for (const match of text.matchAll(/@internal[\s\S]*?\*\/\s*\n\s*(?:(?:private|protected|public|static|readonly|async|get|set)\s+)*\*?([A-Za-z_$][\w$]*)/g)) {
    names.push(match[1]);
  }
  return names;
}

/** Whether a declarations text declares member `name` (at a line's start, as tsc writes members). */
function declares(dts, name) {
  return new RegExp(`^\\s+(?:(?:readonly|static|get|set|protected)\\s+)*${name.replace(/\$/g, '\\$')}[?(<:]`, 'm').test(dts);
}

t.test('the checks refuse what they are for', async (t) => {
  const circle = new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]);
  t.same(cycles(circle), [['a', 'b', 'c']], 'a three-file circle is found, the file outside it is not in it');
  t.same(cycles(new Map([['a', ['b']], ['b', []]])), [], 'a line is no circle');
  t.same(layerBreaks(new Map([['src/core/x.ts', ['src/producer/y.ts']]])), ['src/core/x.ts -> src/producer/y.ts'], 'core importing producer breaks the layers');
  t.same(layerBreaks(new Map([['src/producer/take/x.ts', ['src/native/y.ts']]])), [], 'a stage of producer may import native');
  t.same(internalNames('  /**\n   * Hidden.\n   * @internal\n   */\n  secret(x: number): void {}\n'), ['secret'], 'an @internal member is named');
  t.ok(declares('export declare class A {\n    secret(x: number): void;\n}', 'secret'), 'a declared member is seen');
});

t.test(`every source file has at most ${MAX_LINES} lines`, async (t) => {
  const files = [...filesUnder('src', /\.ts$/), ...filesUnder('native/src', /\.[ch]$/), ...filesUnder('assembly', /\.ts$/)];
  t.ok(files.length > 100, `${files.length} files read`);
  const long = files
    .map((file) => [file, readFileSync(join(ROOT, file), 'utf8').split('\n').length - 1])
    .filter(([, lines]) => lines > MAX_LINES)
    .map(([file, lines]) => `${file}: ${lines}`);
  t.same(long, [], 'no file is longer');
});

t.test('no import cycle between the TypeScript files of src/', async (t) => {
  const graph = importGraph();
  t.ok([...graph.values()].some((targets) => targets.length > 0), 'imports are read');
  t.same(cycles(graph), []);
});

t.test('the folders of src/ import only their own layer and the layers below', async (t) => {
  const graph = importGraph();
  const folders = new Set([...graph.keys()].map((file) => file.split('/')[1]));
  t.same([...folders].filter((folder) => !LAYERS.includes(folder)), [], 'every folder of src/ has its layer');
  t.same(layerBreaks(graph), []);
});

t.test('the code maps of docs/design.md and docs/native.md are the tree\'s', async (t) => {
  t.same(codeMap.check(), [], 'node scripts/code-map.js rewrites them');
});

t.test('what is marked @internal is not in the public declarations', async (t) => {
  let checked = 0;
  for (const file of filesUnder('src', /\.ts$/)) {
    const names = internalNames(readFileSync(join(ROOT, file), 'utf8'));
    if (names.length === 0) continue;
    const dts = join(ROOT, 'build', relative('src', file).replace(/\.ts$/, '.d.ts'));
    if (!existsSync(dts)) {
      t.fail(`${dts} is not built (npm run build)`);
      continue;
    }
    const text = readFileSync(dts, 'utf8');
    for (const name of names) {
      checked++;
      t.notOk(declares(text, name), `${file}: ${name} is not declared in build/`);
    }
  }
  t.ok(checked >= 3, `${checked} internal members looked for`);
});

t.test('the tests mirror the source: a folder of test/ for every folder of src/', async (t) => {
  const rooms = readdirSync(join(ROOT, 'src')).filter((name) => statSync(join(ROOT, 'src', name)).isDirectory());
  t.ok(rooms.length >= LAYERS.length - 1, `the rooms of src/ are read (${rooms.join(', ')})`);
  for (const room of rooms) {
    const folder = join(ROOT, 'test', room);
    t.ok(existsSync(folder) && filesUnder(`test/${room}`, /\.test\.js$/).length > 0, `test/${room}/ holds the tests of src/${room}/`);
  }
});
