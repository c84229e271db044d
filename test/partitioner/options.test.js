'use strict';
// Every option is validated at construction: wrong type, out of range, unknown names
// (also nested), horizons with both or neither unit, inconsistent thresholds. The error is
// an InvalidOptionError (code KDP_INVALID_OPTION) whose message starts with the option's
// path. Valid edge values are accepted; DEFAULTS is frozen through and through.
const t = require('tap');
const { DynamicPartitioner, DEFAULTS, InvalidOptionError, PARTITIONERS } = require('../..');

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// [options, path the message must name]
const BAD = [
  // the options argument itself
  [null, 'options'], ['fast', 'options'], [42, 'options'], [[], 'options'], [true, 'options'],
  // unknown names
  [{ foo: 1 }, 'options.foo'], [{ hotthreshold: 0.1 }, 'options.hotthreshold'], [{ toString: 1 }, 'options.toString'],
  [{ constructor: {} }, 'options.constructor'], [JSON.parse('{"__proto__": {"spread": false}}'), 'options.__proto__'],
  [{ sketch: { wide: 10 } }, 'options.sketch.wide'], [{ horizon: { seconds: 5 } }, 'options.horizon.seconds'],
  [{ loadHorizon: { messages: 10, extra: 1 } }, 'options.loadHorizon.extra'],
  // partitioner
  [{ partitioner: 'random' }, 'options.partitioner'], [{ partitioner: 'Murmur2' }, 'options.partitioner'],
  [{ partitioner: 1 }, 'options.partitioner'], [{ partitioner: null }, 'options.partitioner'], [{ partitioner: '' }, 'options.partitioner'],
  // spread
  [{ spread: 'yes' }, 'options.spread'], [{ spread: 1 }, 'options.spread'], [{ spread: 0 }, 'options.spread'], [{ spread: null }, 'options.spread'],
  // relocate
  [{ relocate: 'no' }, 'options.relocate'], [{ relocate: 1 }, 'options.relocate'], [{ relocate: 0 }, 'options.relocate'], [{ relocate: null }, 'options.relocate'],
  // hotThreshold: a number in [1e-6, 1e6]
  [{ hotThreshold: 0 }, 'options.hotThreshold'], [{ hotThreshold: -0.1 }, 'options.hotThreshold'], [{ hotThreshold: NaN }, 'options.hotThreshold'],
  [{ hotThreshold: Infinity }, 'options.hotThreshold'], [{ hotThreshold: '0.1' }, 'options.hotThreshold'], [{ hotThreshold: 2e6 }, 'options.hotThreshold'],
  [{ hotThreshold: 1e-7 }, 'options.hotThreshold'], [{ hotThreshold: null }, 'options.hotThreshold'],
  // coolThreshold: [0, 1e6] and below hotThreshold
  [{ coolThreshold: -0.01 }, 'options.coolThreshold'], [{ coolThreshold: NaN }, 'options.coolThreshold'], [{ coolThreshold: '0' }, 'options.coolThreshold'],
  [{ coolThreshold: 0.1 }, 'options.coolThreshold'], [{ coolThreshold: 0.2 }, 'options.coolThreshold'],
  [{ hotThreshold: 0.5, coolThreshold: 0.5 }, 'options.coolThreshold'], [{ hotThreshold: 0.04 }, 'options.coolThreshold'],
  // reliefThreshold: [0, 1e6] and at most hotThreshold
  [{ reliefThreshold: -1 }, 'options.reliefThreshold'], [{ reliefThreshold: NaN }, 'options.reliefThreshold'],
  [{ reliefThreshold: 0.2 }, 'options.reliefThreshold'], [{ reliefThreshold: 0.10001 }, 'options.reliefThreshold'],
  [{ reliefThreshold: false }, 'options.reliefThreshold'],
  // horizons: exactly one of messages / ms, each a number in [1, 1e12]
  [{ horizon: 5 }, 'options.horizon'], [{ horizon: null }, 'options.horizon'], [{ horizon: [] }, 'options.horizon'],
  [{ horizon: {} }, 'options.horizon'], [{ horizon: { messages: undefined } }, 'options.horizon'],
  [{ horizon: { messages: 100, ms: 100 } }, 'options.horizon'],
  [{ horizon: { messages: 0 } }, 'options.horizon.messages'], [{ horizon: { messages: -5 } }, 'options.horizon.messages'],
  [{ horizon: { messages: '100' } }, 'options.horizon.messages'], [{ horizon: { messages: NaN } }, 'options.horizon.messages'],
  [{ horizon: { messages: 2e12 } }, 'options.horizon.messages'], [{ horizon: { ms: 0.5 } }, 'options.horizon.ms'],
  [{ horizon: { ms: Infinity } }, 'options.horizon.ms'],
  [{ loadHorizon: 10000 }, 'options.loadHorizon'], [{ loadHorizon: {} }, 'options.loadHorizon'],
  [{ loadHorizon: { messages: 1, ms: 1 } }, 'options.loadHorizon'], [{ loadHorizon: { messages: 0.9 } }, 'options.loadHorizon.messages'],
  [{ loadHorizon: { ms: -1 } }, 'options.loadHorizon.ms'],
  // sketch: width an integer in [16, 2^24], depth an integer in [1, 16]
  [{ sketch: 256 }, 'options.sketch'], [{ sketch: null }, 'options.sketch'],
  [{ sketch: { width: 15 } }, 'options.sketch.width'], [{ sketch: { width: 16.5 } }, 'options.sketch.width'],
  [{ sketch: { width: 2 ** 24 + 1 } }, 'options.sketch.width'], [{ sketch: { width: '256' } }, 'options.sketch.width'],
  [{ sketch: { width: NaN } }, 'options.sketch.width'],
  [{ sketch: { depth: 0 } }, 'options.sketch.depth'], [{ sketch: { depth: 17 } }, 'options.sketch.depth'],
  [{ sketch: { depth: 1.5 } }, 'options.sketch.depth'], [{ sketch: { width: 256, depth: '4' } }, 'options.sketch.depth'],
  // sampling: an integer in [1, 64]
  [{ sketch: { sampling: 0 } }, 'options.sketch.sampling'], [{ sketch: { sampling: 65 } }, 'options.sketch.sampling'],
  [{ sketch: { sampling: 2.5 } }, 'options.sketch.sampling'], [{ sketch: { sampling: '4' } }, 'options.sketch.sampling'],
  // integers
  [{ maxTrackedKeys: 0 }, 'options.maxTrackedKeys'], [{ maxTrackedKeys: 1.5 }, 'options.maxTrackedKeys'],
  [{ maxTrackedKeys: 2 ** 20 + 1 }, 'options.maxTrackedKeys'], [{ maxTrackedKeys: '10' }, 'options.maxTrackedKeys'],
  [{ maxSpread: -1 }, 'options.maxSpread'], [{ maxSpread: 1.5 }, 'options.maxSpread'], [{ maxSpread: 2 ** 31 }, 'options.maxSpread'],
  [{ maxSpread: NaN }, 'options.maxSpread'],
  [{ stickyRun: 0 }, 'options.stickyRun'], [{ stickyRun: 1.5 }, 'options.stickyRun'], [{ stickyRun: 1e9 + 1 }, 'options.stickyRun'],
  [{ stickyRun: -5 }, 'options.stickyRun'],
  [{ hotRun: 0 }, 'options.hotRun'], [{ hotRun: 1.5 }, 'options.hotRun'], [{ hotRun: 1e6 + 1 }, 'options.hotRun'], [{ hotRun: null }, 'options.hotRun'],
  [{ splitRunMs: -1 }, 'options.splitRunMs'], [{ splitRunMs: 3_600_001 }, 'options.splitRunMs'], [{ splitRunMs: NaN }, 'options.splitRunMs'], [{ splitRunMs: '2000' }, 'options.splitRunMs'],
  [{ maxTopics: 0 }, 'options.maxTopics'], [{ maxTopics: 1.5 }, 'options.maxTopics'], [{ maxTopics: 2 ** 16 + 1 }, 'options.maxTopics'],
  [{ maxPartitions: 0 }, 'options.maxPartitions'], [{ maxPartitions: 1.5 }, 'options.maxPartitions'],
  [{ maxPartitions: 2 ** 20 + 1 }, 'options.maxPartitions'], [{ maxPartitions: '1024' }, 'options.maxPartitions'],
  // maxTopics x maxPartitions at most 2^24
  [{ maxTopics: 64, maxPartitions: 2 ** 18 + 1 }, 'options.maxPartitions'], [{ maxTopics: 2 ** 16, maxPartitions: 257 }, 'options.maxPartitions'],
  // numbers
  [{ spreadFactor: -1 }, 'options.spreadFactor'], [{ spreadFactor: NaN }, 'options.spreadFactor'], [{ spreadFactor: 1e6 + 1 }, 'options.spreadFactor'],
  [{ spreadFactor: '1' }, 'options.spreadFactor'],
  [{ balanceTolerance: -0.1 }, 'options.balanceTolerance'], [{ balanceTolerance: NaN }, 'options.balanceTolerance'],
  [{ balanceTolerance: Infinity }, 'options.balanceTolerance'],
  [{ minHotMessages: -1 }, 'options.minHotMessages'], [{ minHotMessages: NaN }, 'options.minHotMessages'],
  [{ minHotMessages: 2e12 }, 'options.minHotMessages'], [{ minHotMessages: '16' }, 'options.minHotMessages'],
  [{ warmupMessages: -1 }, 'options.warmupMessages'], [{ warmupMessages: NaN }, 'options.warmupMessages'],
  [{ warmupMessages: Infinity }, 'options.warmupMessages'],
];

const show = (o) => {
  try { return JSON.stringify(o, (k, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v)); } catch { return String(o); }
};

t.test('every bad option throws an InvalidOptionError naming its path', async (t) => {
  for (const [options, path] of BAD) {
    let err = null;
    try { new DynamicPartitioner(options); } catch (e) { err = e; }
    const what = `${show(options)} -> ${path}`;
    if (!err) { t.fail(`${what}: accepted`); continue; }
    t.ok(err instanceof InvalidOptionError && err.name === 'InvalidOptionError' && err.code === 'KDP_INVALID_OPTION',
      `${what}: ${err.name} ${err.code}`);
    t.ok(err instanceof TypeError, `${what}: a TypeError`);
    t.equal(err.path, path, `${what}: err.path`);
    t.match(err.message, new RegExp(`^${escape(path)} (must be|is not an option)`), `${what}: message "${err.message}"`);
  }
});

t.test('the table covers every option and every nested field of DEFAULTS', async (t) => {
  const named = new Set(BAD.map(([, path]) => path));
  const wanted = [];
  for (const [k, v] of Object.entries(DEFAULTS)) {
    wanted.push(`options.${k}`);
    if (v && typeof v === 'object') for (const sub of Object.keys(v)) wanted.push(`options.${k}.${sub}`);
  }
  wanted.push('options.horizon.ms', 'options.loadHorizon.ms');
  for (const path of wanted) t.ok(named.has(path), `${path} has bad values in the table`);
});

t.test('unknown names list the valid ones', async (t) => {
  const e1 = t.throws(() => new DynamicPartitioner({ sketch: { wide: 10 } }));
  t.match(e1.message, /^options\.sketch\.wide is not an option/);
  t.match(e1.message, /width/);
  t.match(e1.message, /depth/);
  const e2 = t.throws(() => new DynamicPartitioner({ hotthreshold: 0.1 }));
  t.match(e2.message, /hotThreshold/, 'the top-level names');
  const e3 = t.throws(() => new DynamicPartitioner({ horizon: { messages: 1, ms: 1 } }));
  t.match(e3.message, /exactly one of messages, ms/);
  const e4 = t.throws(() => new DynamicPartitioner({ partitioner: 'random' }));
  for (const name of PARTITIONERS) t.match(e4.message, name);
});

t.test('valid edge values are accepted', async (t) => {
  const GOOD = [
    undefined, {}, DEFAULTS, { ...DEFAULTS },
    ...PARTITIONERS.map((partitioner) => ({ partitioner })),
    { spread: false }, { spread: true }, { relocate: false }, { relocate: true }, { spread: false, relocate: true },
    { hotThreshold: 1e-6, coolThreshold: 0, reliefThreshold: 0 }, { hotThreshold: 1e6 },
    { coolThreshold: 0 }, { coolThreshold: 0.0999999 }, { reliefThreshold: 0 }, { reliefThreshold: 0.1 },
    { hotThreshold: 1, coolThreshold: 0.99, reliefThreshold: 1 },
    { horizon: { messages: 1 } }, { horizon: { messages: 1e12 } }, { horizon: { messages: 100, ms: undefined } },
    { loadHorizon: { messages: 1 } }, { loadHorizon: { ms: 1e12 } }, { horizon: { ms: 1 }, loadHorizon: { ms: 1 } },
    { sketch: { width: 16 } }, { sketch: { depth: 1 } }, { sketch: { depth: 16 } }, { sketch: { width: 16, depth: 16 } },
    { sketch: { width: 2 ** 24, depth: 1 } }, { sketch: { width: 100 } }, { sketch: {} },
    { maxTrackedKeys: 1 }, { maxTrackedKeys: 2 ** 20 },
    { spreadFactor: 0 }, { spreadFactor: 1e6 }, { balanceTolerance: 0 }, { balanceTolerance: 1e6 },
    { maxSpread: 0 }, { maxSpread: 1 }, { maxSpread: 2 ** 31 - 1 },
    { minHotMessages: 0 }, { minHotMessages: 1e12 }, { warmupMessages: 0 }, { warmupMessages: 1e12 },
    { stickyRun: 1 }, { stickyRun: 1e9 }, { hotRun: 1 }, { hotRun: 1e6 }, { splitRunMs: 0 }, { splitRunMs: 3_600_000 },
    { sketch: { sampling: 1 } }, { sketch: { sampling: 64 } },
    { maxTopics: 1 }, { maxTopics: 2 ** 16, maxPartitions: 1 }, { maxPartitions: 1 }, { maxTopics: 1, maxPartitions: 2 ** 20 },
    { maxTopics: 64, maxPartitions: 2 ** 18 }, // exactly 2^24
    { hotThreshold: undefined, sketch: undefined, horizon: undefined }, // undefined: the default
  ];
  for (const options of GOOD) {
    let p;
    try { p = new DynamicPartitioner(options); } catch (e) { t.fail(`${show(options)}: ${e.message}`); continue; }
    // Each one also works: one message decided.
    const q = p.partition('t', 'k', 1);
    t.equal(q, 0, `${show(options)}: accepted and usable`);
    for (const [k, v] of Object.entries(options || {})) {
      if (v === undefined || options === DEFAULTS) continue;
      if (k === 'sketch') { for (const [sk, sv] of Object.entries(v)) if (sv !== undefined && sk === 'depth') t.equal(p.options.sketch.depth, sv); continue; }
      if (k === 'horizon' || k === 'loadHorizon') { t.same(Object.entries(p.options[k]).filter(([, x]) => x !== undefined), Object.entries(v).filter(([, x]) => x !== undefined)); continue; }
      t.equal(p.options[k], v, `${show(options)}: options.${k}`);
    }
    p.close();
  }
  const p = new DynamicPartitioner({ hotThreshold: undefined, sketch: undefined });
  t.equal(p.options.hotThreshold, DEFAULTS.hotThreshold, 'undefined means the default');
  t.same(p.options.sketch, DEFAULTS.sketch);
});

t.test('DEFAULTS is frozen, nested objects too, and construction does not change it', async (t) => {
  const before = JSON.stringify(DEFAULTS);
  t.ok(Object.isFrozen(DEFAULTS), 'DEFAULTS');
  for (const k of ['horizon', 'loadHorizon', 'sketch']) t.ok(Object.isFrozen(DEFAULTS[k]), `DEFAULTS.${k}`);
  t.throws(() => { DEFAULTS.hotThreshold = 1; }, TypeError, 'assignment throws in strict mode');
  t.throws(() => { DEFAULTS.sketch.width = 16; }, TypeError);
  t.throws(() => { DEFAULTS.horizon.messages = 1; }, TypeError);
  t.throws(() => { DEFAULTS.loadHorizon.messages = 1; }, TypeError);
  t.throws(() => { DEFAULTS.extra = 1; }, TypeError);
  new DynamicPartitioner({ sketch: { width: 64 }, horizon: { ms: 50 }, hotThreshold: 0.3 }).close();
  t.equal(JSON.stringify(DEFAULTS), before, 'unchanged');
  t.same(DEFAULTS, {
    partitioner: 'murmur2_random', spread: true, relocate: true, hotThreshold: 0.1, coolThreshold: 0.05, reliefThreshold: 0.025,
    horizon: { messages: 20000 }, loadHorizon: { messages: 10000 }, sketch: { width: 16384, depth: 4, sampling: 4 },
    maxTrackedKeys: 1024, spreadFactor: 1, balanceTolerance: 0.02, maxSpread: 0, minHotMessages: 16,
    warmupMessages: 200, stickyRun: 256, hotRun: 8, splitRunMs: 2000, maxTopics: 64, maxPartitions: 1024,
  }, 'the documented values');
});

t.test('options of an instance are a frozen snapshot of what it was built with', async (t) => {
  const horizon = { messages: 100 };
  const sketch = { width: 64 };
  const p = new DynamicPartitioner({ horizon, sketch });
  horizon.messages = 5;
  sketch.width = 16;
  t.ok(Object.isFrozen(p.options), 'p.options');
  t.equal(p.options.horizon.messages, 100, 'p.options.horizon is not the caller\'s object (its half-life in effect is 100)');
  t.equal(p.options.sketch.width, 64, 'p.options.sketch is not the caller\'s object');
  t.ok(Object.isFrozen(p.options.horizon) && Object.isFrozen(p.options.sketch) && Object.isFrozen(p.options.loadHorizon), 'nested objects frozen');
});
