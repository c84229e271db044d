'use strict';
// Order across a consumer group with handled records (docs/ordering.md, "Order in a group"),
// checked exhaustively on small scenarios: the group of resequencer-group-records.test.js, with
// every choice its random simulation makes tried in turn (test/delivery/lib/group-exhaustive.js).
// Producers send one key: every placement of their spread and moved messages over the
// partitions, every merge of the producers in each partition's log (each producer's messages to
// one partition in send order), headers as a producer writes them (a move names its
// predecessor's offset). Members, each with its own Resequencer that waits for the others'
// records (groupOrder 'wait'), own the partitions. At each step, any of these may happen, and
// every order of them is tried:
// - a member reads the next message of a partition it owns;
// - a member's handler ends the call of the first message of its lane (one call of the key at a
//   time, in release order), and the member commits that partition's offset and record: the
//   commit is in transit (only the latest of a partition is kept);
// - a partition's commit in transit reaches the broker; each member waiting for a record of
//   that partition reads it at once (reading later only delays);
// - once nothing else can, the commit timer: a member commits a partition whose record changed
//   since its last commit (its offset moved past messages an inherited record counts handled).
//   One small scenario runs the timer at any step.
// With a fault, once, at any step: a revoke (the partition's calls end, its owner commits and the
// commit lands at once, forgets the partition, and another member inherits its record), or a
// kill (the member's commits in transit are lost; a survivor inherits the last landed record of
// each of its partitions and reads them again from the committed offset).
//
// Checked on every path, from the message values alone: every message handled; each producer's
// messages first handled in send order, across members; no release flagged; nothing held once
// nothing more can happen (the Resequencers never time out here, so nothing waits for ever);
// without a kill, nothing handled twice; after a kill, handled twice only what the killed member
// handled after its last commit reached the broker.
//
// A path that reaches a state an earlier path reached stops there: the state (what each member's
// Resequencer was given, in order, its lane, the broker, the commits in transit, what was handled)
// has the same futures. Scenarios are sized to run in a few seconds each; those bounded say how.
const t = require('tap');
const { Resequencer } = require('../..');
const { explore, describe } = require('./lib/group-exhaustive');

const OPTIONS = { maxBufferedMessages: 1e9, maxWaitMs: 1e12 };

/** Partition p is member p % members's. */
function scenario(scripts, partitions, members, fault = 'none', more = {}) {
  return { scripts, partitions, members, owners: Array.from({ length: partitions }, (_, p) => p % members), fault, ...more };
}

/** Keeps the logs where each labelled message (producer letter, index, kind) is on the partition given. */
function placed(where) {
  return (logs) => logs.every((log, p) => log.every((v) => where[v.label] === undefined || where[v.label] === p));
}

function name(s) {
  const fault = s.fault === 'none' ? 'no fault'
    : s.fault === 'revoke' ? `a revoke${s.only ? ` (${s.only.map(([p, to]) => `p${p} to m${to}`).join(', ')})` : ''}`
    : `a kill${s.only ? ` (${s.only.map(([m, heir]) => `m${m}, heir m${heir}`).join(', ')})` : ''}`;
  const timer = s.timer === 'any' ? ', commit timer at any step' : s.timer === 'off' ? ', no commit timer' : '';
  return `${s.members} members, ${s.partitions} partitions, producers ${s.scripts.join(' / ')}, ${fault}${timer}`;
}

// Producer A's chain hops from member 0 to member 1 and back, producer B's to member 1: A's
// second spread message follows B's anchor on partition 0 while B's spread follows A's first on
// partition 1, the shape of version 1's cycle (docs/ordering.md, end of "Guarantee").
const HOPS = { place: placed({ A1s: 1, A2s: 0, B1s: 1 }) };

const SCENARIOS = [
  scenario(['ass', 'as'], 2, 2),
  scenario(['asr', 'cas'], 2, 2),
  scenario(['amm', 'am'], 3, 3),
  scenario(['as', 'as'], 3, 3),
  scenario(['as', 'as'], 2, 2, 'revoke'),
  scenario(['asr', 'ca'], 2, 2, 'revoke'),
  // Bounded: the placement of HOPS only (the whole scenario: 141,000 states, 5 s).
  scenario(['ass', 'as'], 2, 2, 'revoke', HOPS),
  // Bounded: producer B's moved message left out, and one fault, of the member in the middle of
  // A's chain (amm / am with one fault: 390,000-1,110,000 states, 20-70 s, and those tried broke
  // nothing; the anchors' member revoked or killed: 16,000-41,000 states here). With two members,
  // every fault is tried.
  scenario(['amm', 'a'], 3, 3, 'revoke', { only: [[1, 2]] }),
  scenario(['as', 'as'], 2, 2, 'kill'),
  scenario(['asr', 'ca'], 2, 2, 'kill'),
  // Bounded: the placement of HOPS only (the whole scenario: 208,000 states, 6 s).
  scenario(['ass', 'as'], 2, 2, 'kill', HOPS),
  // Bounded as the revoke above.
  scenario(['amm', 'a'], 3, 3, 'kill', { only: [[1, 0]] }),
  // The commit timer at any step, not only when nothing else can happen: many more states.
  scenario(['as', 'a'], 2, 2, 'kill', { timer: 'any' }),
];

// Without the commit timer a member commits only after handling, and a message can wait for
// ever: the heir of partition 1 handles B1m (offset 0) and commits offset 1 with end 2, so its
// record counts offset 1 unhandled (the committed offset is unhandled whenever end is past it),
// though the record it inherited counts A1m, there, handled; it then reads A1m, skips it, and
// handles nothing more on partition 1. A2m, on member 2, waits for A1m's offset to show handled:
// only the timer's commit (DynamicConsumer's, every commitIntervalMs, as its offset moved) shows
// it. Bounded to the placement of that path; with the timer (above), none waits.
const WITHOUT_TIMER = [
  scenario(['amm', 'am'], 3, 3, 'kill', { only: [[1, 0]], timer: 'off', place: placed({ A1m: 1, B1m: 1, A2m: 2 }) }),
];

for (const s of [...SCENARIOS, ...WITHOUT_TIMER]) {
  const todo = s.timer === 'off' ? 'a member that commits only after handling counts unhandled in its own record what its inherited record counts handled' : undefined;
  t.test(name(s), async (t) => {
    const started = Date.now();
    const r = explore(s);
    t.comment(`${r.logs} logs, ${r.states} states, ${r.paths} paths to their end and ${r.cut} cut at a state seen before, ${Date.now() - started} ms`);
    t.ok(r.paths > 0, 'paths run');
    t.equal(r.failures, 0, r.shortest ? `${r.failures} paths broken, as ${describe(s, r.shortest)}` : 'every path: every message handled, each producer\'s order across members, nothing flagged, held, or handled twice but after a kill', { todo });
  });
}

// Records at their size limit: at 44 characters every record of these scenarios is cut to
// each producer's sequences below its lowest unhandled marked message (no runs, no offsets
// told). The same checks on every path; handled again, besides after a kill, only what a
// record inherited left untold.
const AT_LIMIT = [
  scenario(['ass', 'as'], 2, 2, 'none', { maxChars: 44 }),
  scenario(['amm', 'am'], 3, 3, 'none', { maxChars: 44 }),
  scenario(['as', 'as'], 2, 2, 'revoke', { maxChars: 44 }),
  scenario(['as', 'as'], 2, 2, 'kill', { maxChars: 44 }),
  scenario(['asr', 'ca'], 2, 2, 'kill', { maxChars: 44 }),
];

for (const s of AT_LIMIT) {
  t.test(`${name(s)}, records cut to ${s.maxChars} characters`, async (t) => {
    const r = explore(s);
    t.comment(`${r.logs} logs, ${r.states} states, ${r.paths} paths; ${s.cuts} records cut`);
    t.ok(s.cuts > 1000, 'premise: records cut on the paths');
    t.equal(r.failures, 0, r.shortest ? `${r.failures} paths broken, as ${describe(s, r.shortest)}` : 'every path: every message handled, each producer\'s order across members, nothing flagged or held');
  });
}

/** The kinds of promise broken on the paths explored (members left out). */
function kinds(s, options) {
  const broken = new Set();
  const r = explore(s, { ...options, collect: broken });
  return { r, kinds: [...new Set([...broken].map((b) => b.replace(/ \(by m\d\)| by m\d/, '').replace(/\d+ held/, 'held')))].sort() };
}

// The model can fail: the same checker, fed members that break the rule, must find it broken;
// otherwise the scenarios above would prove nothing.
class AllAtOnce extends Resequencer {
  push(message) {
    return [{ message, ordered: true, outOfOrder: false, order: null }];
  }
}
/** Commits records that count every message released as handled (the handler's calls are not waited for). */
class Boastful extends Resequencer {
  recordOf(topic, partition, offset) {
    return super.recordOf(topic, partition, this.committable(topic, partition) ?? offset, [], []);
  }
}
/** Does not take in the record of a partition it inherits. */
class Forgetful extends Resequencer {
  inherit() {
    return [];
  }
}

t.test('the model can fail: members that break the rule are caught', async (t) => {
  const all = kinds(scenario(['as', 'as'], 2, 2, 'none', { make: (now) => new AllAtOnce(OPTIONS, now) }));
  t.ok(all.kinds.some((k) => k.includes('first handled after')), `a Resequencer that lets everything through at once: ${all.r.failures} paths out of order (${all.kinds.join('; ')})`);

  const blind = kinds(scenario(['as', 'as'], 2, 2, 'none', { records: false }));
  t.ok(blind.kinds.some((k) => k.includes('flagged (unowned)')), `members that do not read each other's records: ${blind.r.failures} paths flagged (${blind.kinds.join('; ')})`);

  const boast = kinds(scenario(['as', 'as'], 2, 2, 'none', { make: (now) => new Boastful(OPTIONS, now) }));
  t.ok(boast.kinds.some((k) => k.includes('first handled after')), `records that count a message handled when it is released: ${boast.r.failures} paths out of order (${boast.kinds.join('; ')})`);

  const forget = kinds(scenario(['as', 'as'], 2, 2, 'kill', { make: (now) => new Forgetful(OPTIONS, now) }));
  t.ok(forget.kinds.some((k) => k.includes('handled 2 times')), `an heir that does not take in the record it inherits: ${forget.r.failures} paths (${forget.kinds.join('; ')})`);
  t.ok(forget.kinds.some((k) => k.includes('held at the end')), 'and its successors on other partitions wait for ever');
});

t.test('the cut at states seen loses nothing: a small scenario explored in full finds the same', async (t) => {
  for (const make of [undefined, (now) => new Boastful(OPTIONS, now), (now) => new Forgetful(OPTIONS, now)]) {
    const reduced = kinds(scenario(['as', 'a'], 2, 2, 'kill', { make }));
    const full = kinds(scenario(['as', 'a'], 2, 2, 'kill', { make }), { reduce: false });
    t.same(reduced.kinds, full.kinds, `${make ? 'a rule broken' : 'the Resequencer'}: ${full.r.paths} paths in full, ${reduced.r.paths + reduced.r.cut} with the cut, the same verdicts (${full.kinds.join('; ') || 'none broken'})`);
  }
});
