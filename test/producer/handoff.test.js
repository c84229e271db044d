'use strict';
// Ordered handoffs of relocated keys, on the mock cluster: a relocated key's message that goes
// to another partition than its chain's previous marked message is produced only once that
// message's delivery report is in, and names its real offset (after = <partition>:<offset>),
// checked against the topic read back from the cluster. Nothing is lost, and each key's
// messages reach librdkafka in the order they were given.
//
// The workload (4 partitions, horizon 2,000 messages): background keys chosen so that none
// hashes to partition 3 (it starts empty: room for a hot key whole); H (15%) and G (10%), on
// other partitions, turn hot, cool (0.5% for ten half-lives) and turn hot again. So each
// moves to partition 3 right after its anchor (a handoff), returns to its own partition when
// it cools (a handoff), and moves again after its next anchor.
const t = require('tap');
const { DynamicProducer, partitionForKey, decodeOrderHeader } = require('../..');
const { prng } = require('../lib/random-keys');
const { knownPartitions, brokersOf, consumeAll, headerOf, recordHandOvers, handedHeader, sleep } = require('./lib/helpers');

const N = 4;
const BASE = 'consistent_random'; // DynamicProducer's base partitioner without a topic setting
const EMPTY = 3;

function keysNotOn(partition, count) {
  const out = [];
  for (let i = 0; out.length < count; i++) if (partitionForKey(`bg-${i}`, N, BASE) !== partition) out.push(`bg-${i}`);
  return out;
}

function hotKey(prefix, avoid) {
  for (let i = 0; ; i++) {
    const k = `${prefix}${i}`;
    const p = partitionForKey(k, N, BASE);
    if (p !== EMPTY && !avoid.includes(p)) return { key: k, home: p };
  }
}

function workload(seed, messages) {
  const rand = prng(seed);
  const background = keysNotOn(EMPTY, 400);
  const H = hotKey('H', []);
  const G = hotKey('G', [H.home]);
  const keys = [];
  for (let i = 0; i < messages; i++) {
    const cool = i >= 8000 && i < 28_000;
    const h = cool ? 0.005 : 0.15;
    const g = cool ? 0.005 : 0.1;
    const u = rand();
    keys.push(u < h ? H.key : u < h + g ? G.key : background[Math.floor(rand() * background.length)]);
  }
  return { keys, H, G };
}

/** Messages handed over after a later one of their key (each value is its index in the stream). */
function outOfOrder(log) {
  const lastOf = new Map();
  let count = 0;
  for (const m of log) {
    const i = Number(m.value.toString());
    if (lastOf.has(m.key) && lastOf.get(m.key) > i) count++;
    lastOf.set(m.key, i);
  }
  return count;
}

/** Handed-over moves and returns that name their predecessor's offset (handoffs). */
const handoffsIn = (log) => log.filter((m) => { const h = handedHeader(m.headers); return h && /^2;[mr];/.test(h) && /:\d+$/.test(h); }).length;

async function producer(t, options = {}) {
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 3 }, {}, { horizon: { messages: 2000 }, loadHorizon: { messages: 1000 }, ...options });
  t.teardown(() => p.disconnect().catch(() => {}));
  const errors = [];
  p.on('error', (e) => errors.push(e));
  await p.connect();
  return { p, errors };
}

t.test('each move names the real offset of the message before it; nothing lost, keys in order', async (t) => {
  const topic = 'handoff-main';
  const { p, errors } = await producer(t);
  await knownPartitions(p, topic);
  const log = recordHandOvers(p.client);
  const { keys, H, G } = workload(0x4a11, 36_000);
  let refusedOrHeld = 0;
  for (let i = 0; i < keys.length; i++) if (!p.produce(topic, String(i), keys[i])) refusedOrHeld++;
  await p.flush(20_000);
  t.equal(refusedOrHeld, 0, 'produce() returned true for every message, held or not');
  t.equal(log.length, keys.length, 'every message handed to librdkafka once');
  t.same(errors, [], "no 'error' events");

  // Each key's messages reach librdkafka in the order they were given (held ones included).
  t.equal(outOfOrder(log), 0, 'per key, hand-over order = produce order');

  // Read back: where each marked message really is, by its sequence.
  const brokers = await brokersOf(p.client);
  const { messages } = await consumeAll(brokers, topic, keys.length);
  t.equal(messages.length, keys.length, 'every message is in the topic, once');
  const bySequence = new Map();
  const marked = [];
  const unreadable = [];
  for (const m of messages) {
    const raw = headerOf(m);
    if (raw === undefined) continue;
    const order = decodeOrderHeader(raw);
    if (!order) { unreadable.push(String(raw)); continue; }
    const rec = { order, partition: m.partition, offset: m.offset, key: m.key.toString(), i: Number(m.value.toString()) };
    bySequence.set(order.sequence, rec);
    marked.push(rec);
  }
  t.same(unreadable, [], 'every kdp-order header read back decodes');
  // The producer's marked messages reach each partition in sequence order, held ones included
  // (a consumer's handled record answers by sequence on that ground: docs/ordering.md).
  const lastOn = new Map();
  const behind = [];
  for (const m of [...marked].sort((a, b) => a.partition - b.partition || a.offset - b.offset)) {
    const last = lastOn.get(m.partition);
    if (last !== undefined && m.order.sequence < last.order.sequence) behind.push(`${m.partition}/${m.offset} #${m.order.sequence} after #${last.order.sequence}`);
    if (last === undefined || m.order.sequence > last.order.sequence) lastOn.set(m.partition, m);
  }
  t.same(behind.slice(0, 5), [], 'on every partition, sequences rise with offsets');
  marked.sort((a, b) => a.order.sequence - b.order.sequence);
  const kinds = new Set(marked.map((m) => m.order.kind));
  t.ok(kinds.has('moved') && kinds.has('anchor') && kinds.has('return'), `anchor, moved and return all appear (${[...kinds]})`);

  let handoffs = 0;
  const wrong = [];
  const movesOf = new Map();
  for (const m of marked) {
    const o = m.order;
    if (o.kind === 'anchor') {
      if (o.afterPartition !== -1) wrong.push(`anchor ${o.sequence} names after ${o.afterPartition}`);
      continue;
    }
    const before = bySequence.get(o.previous);
    if (!before) { wrong.push(`${o.sequence}: previous ${o.previous} not found`); continue; }
    // after names the previous message's partition, always.
    if (o.afterPartition !== before.partition) wrong.push(`${o.sequence} (${o.kind}): after partition ${o.afterPartition}, previous is on ${before.partition}`);
    const moving = before.partition !== m.partition && (o.kind === 'moved' || (o.kind === 'return' && before.order.kind !== 'spread'));
    if (moving) {
      handoffs++;
      movesOf.set(m.key, (movesOf.get(m.key) || 0) + 1);
      if (o.afterOffset !== before.offset) wrong.push(`${o.sequence} (${o.kind}) on ${m.partition}: after ${o.afterPartition}:${o.afterOffset}, previous is ${before.partition}:${before.offset}`);
    } else if (o.kind === 'spread' && o.afterOffset !== -1) {
      wrong.push(`${o.sequence} (spread): names an offset`);
    }
  }
  t.same(wrong.slice(0, 10), [], 'every handoff names its predecessor\'s real partition:offset; anchors name none, split messages no offset');
  // Two hot periods each: anchor → moved (handoff), return (handoff), anchor → moved (handoff).
  t.ok(handoffs >= 4, `premise: ${handoffs} handoffs (${JSON.stringify([...movesOf])})`);
  t.ok(movesOf.has(H.key) && movesOf.has(G.key), 'both hot keys were relocated');
});

// The memory bound: messages waiting for handoffs count toward maxQueued, and produce() says
// false once maxQueued wait, as on a full queue; 'drain' follows once half of that is left.
t.test("produce() says false once maxQueued messages wait for handoffs, and 'drain' follows", async (t) => {
  const topic = 'handoff-bound';
  const maxQueued = 300;
  const { p, errors } = await producer(t, { maxQueued });
  await knownPartitions(p, topic);
  const log = recordHandOvers(p.client);
  const { keys } = workload(0x5eed, 36_000);
  let refused = 0;
  let drains = 0;
  let most = 0;
  let heldAtDrain = 0;
  p.on('drain', () => {
    drains++;
    heldAtDrain = Math.max(heldAtDrain, p.metrics().held);
  });
  // A loop that yields only when produce() says false, as a caller that honours it does.
  for (let i = 0; i < keys.length; i++) {
    if (p.produce(topic, String(i), keys[i])) continue;
    refused++;
    most = Math.max(most, p.metrics().held);
    const before = drains;
    for (const deadline = Date.now() + 10_000; drains === before;) {
      if (Date.now() > deadline) throw new Error(`no 'drain' within 10 s of produce() saying false (message ${i}, ${p.metrics().held} held)`);
      await sleep(1);
    }
  }
  t.ok(refused > 0, `produce() said false ${refused} times`);
  t.equal(most, maxQueued, 'it said false when maxQueued messages were held, not later');
  t.ok(heldAtDrain <= maxQueued / 2, `'drain' came with at most half of maxQueued held (${heldAtDrain})`);
  await p.flush(20_000);
  t.equal(log.length, keys.length, 'every message handed to librdkafka once');
  t.equal(outOfOrder(log), 0, 'per key, hand-over order = produce order');
  t.ok(handoffsIn(log) >= 4, `premise: ${handoffsIn(log)} handoffs`);
  t.same(errors, [], "no 'error' events");
});

t.test('send(): the promise of a held message resolves with its own report', async (t) => {
  const topic = 'handoff-send';
  const { p } = await producer(t);
  await knownPartitions(p, topic);
  const log = recordHandOvers(p.client);
  const { keys } = workload(0x5e4d, 6000);
  const sent = keys.map((k, i) => p.send(topic, String(i), k));
  const reports = await Promise.all(sent);
  t.equal(reports.length, keys.length, 'every send() resolved');
  t.ok(reports.every((r, i) => r.offset >= 0 && String(r.key) === keys[i]), 'each with its own message\'s report');
  const moved = log.filter((m) => { const h = handedHeader(m.headers); return h && /^2;m;/.test(h) && /:\d+$/.test(h); });
  t.ok(moved.length > 0, `premise: ${moved.length} messages went with after = partition:offset`);
});

t.test('disconnect() flushes messages held for a handoff first', async (t) => {
  const topic = 'handoff-disconnect';
  const { p } = await producer(t);
  await knownPartitions(p, topic);
  let delivered = 0;
  let failed = 0;
  p.on('delivery', (err) => (err ? failed++ : delivered++));
  const { keys } = workload(0xd15c, 3000);
  // Up to the first message held for a handoff (its predecessor's report cannot have come:
  // the loop does not yield), and a few after it.
  let produced = 0;
  let heldAt = -1;
  while (produced < keys.length && (heldAt < 0 || produced < heldAt + 50)) {
    p.produce(topic, String(produced), keys[produced]);
    produced++;
    if (heldAt < 0 && p.metrics().held > 0) heldAt = produced;
  }
  t.ok(heldAt > 0 && p.metrics().held > 0, `premise: ${p.metrics().held} messages held when disconnect() is called`);
  await p.disconnect();
  const expected = produced;
  t.equal(failed, 0, 'no failures');
  t.equal(delivered, expected, 'every message delivered before disconnect() resolved');
});

t.test('relocate: false: no handoffs, no message waits', async (t) => {
  const topic = 'handoff-off';
  const { p } = await producer(t, { relocate: false });
  await knownPartitions(p, topic);
  const log = recordHandOvers(p.client);
  const { keys } = workload(0x0ff, 6000);
  for (let i = 0; i < keys.length; i++) p.produce(topic, String(i), keys[i]);
  t.equal(log.length, keys.length, 'every message handed over at once (none held)');
  const headers = log.map((m) => handedHeader(m.headers)).filter(Boolean);
  t.ok(headers.length > 0 && headers.every((h) => !/^2;m;/.test(h) && !/:\d+$/.test(h)), `${headers.length} marked, none moved, none with an offset`);
  await p.flush(10_000);
});

/** A group whose consumers stand at `committed` on every partition (a LagMonitor's TopicProgress). */
const standing = (committed) => ({ committed: [committed, committed, committed, committed], perMs: [0, 0, 0, 0], at: Date.now(), intervalMs: 60_000, holdMs: 60_000 });

t.test('fed a group\'s progress (as by a LagMonitor), a move waits in the producer while the consumers of the partition its key left stand behind it', async (t) => {
  const releases = {
    'the group passes their predecessors': (p, topic) => p.consumerProgress(topic, standing(1e9)),
    'flush() is called': (p) => p.flush(20_000),
    'the monitor stops': (p, topic) => p.consumerProgress(topic, undefined),
  };
  let seed = 0x6a7e;
  for (const [when, release] of Object.entries(releases)) {
    const topic = `handoff-gate-${seed}`;
    const { p, errors } = await producer(t);
    await knownPartitions(p, topic);
    const log = recordHandOvers(p.client);
    let delivered = 0;
    p.on('delivery', (err) => { if (!err) delivered++; });
    const settle = async () => {
      for (let i = 0; i < 2000 && delivered < log.length; i++) await sleep(5);
    };
    const { keys } = workload(seed++, 12_000);
    p.consumerProgress(topic, standing(0));
    for (let i = 0; i < keys.length; i++) {
      p.produce(topic, String(i), keys[i]);
      if (i % 500 === 499) await sleep(2);
    }
    await settle();
    const held = p.metrics().held;
    t.ok(held > 0, `${when}: premise: ${held} messages wait while the group stands at offset 0, every report in`);
    t.equal(log.length + held, keys.length, `${when}: every other message went`);
    t.equal(handoffsIn(log), 0, `${when}: no move or return went: each waits for its old partition's consumers`);
    const began = Date.now();
    await release(p, topic);
    await settle();
    t.equal(p.metrics().held, 0, `${when}: none waits any longer`);
    await p.flush(20_000);
    t.ok(Date.now() - began < 20_000, `${when}: they went without waiting out holdMs`);
    t.equal(log.length, keys.length, `${when}: every message handed over once`);
    t.ok(handoffsIn(log) > 0, `${when}: ${handoffsIn(log)} handoffs went, each naming its predecessor's offset`);
    t.equal(outOfOrder(log), 0, `${when}: per key, hand-over order = produce order`);
    t.same(errors, [], `${when}: no 'error' events`);
    await p.disconnect();
  }
});

t.test('moves stop waiting for the consumers while the producer holds half of maxQueued', async (t) => {
  const topic = 'handoff-gate-bound';
  const { p, errors } = await producer(t, { maxQueued: 400 });
  await knownPartitions(p, topic);
  const log = recordHandOvers(p.client);
  p.consumerProgress(topic, standing(0));
  const { keys } = workload(0xb0d, 8000);
  let most = 0;
  for (let i = 0; i < keys.length; i++) {
    p.produce(topic, String(i), keys[i]);
    if (i % 100 === 99) {
      await sleep(2);
      most = Math.max(most, p.metrics().held);
    }
  }
  await sleep(300); // reports in, and the gate asked again
  t.ok(most > 0, `premise: moves waited (up to ${most} held)`);
  t.ok(p.metrics().held < 200, `${p.metrics().held} held after the gate was asked again, under half of maxQueued`);
  t.ok(handoffsIn(log) > 0, 'handoffs went though the group stands still');
  await p.flush(10_000);
  t.equal(log.length, keys.length, 'every message handed over once');
  t.same(errors, []);
});

// A key whose messages wait here is found by its tracked-key entry: the entry must outlive
// them. Before, a relocated key that cooled could leave the table (the sweep, or an admission
// that needed room) while its return and later messages were held, and its next messages,
// untracked or in a new entry, went before them; another key could be given the entry.
t.test('a relocated key that cools and leaves the table while its messages wait: its later messages stay behind them', async (t) => {
  for (const maxTrackedKeys of [1024, 64]) {
    const topic = `handoff-cooled-${maxTrackedKeys}`;
    const { p, errors } = await producer(t, { maxTrackedKeys });
    await knownPartitions(p, topic);
    const log = recordHandOvers(p.client);
    const rand = prng(7);
    const background = keysNotOn(EMPTY, 400);
    const H = hotKey('H', []);
    const events = [];
    p.on('hot', (h) => { if (h.key === H.key) events.push('hot'); });
    p.on('cooled', (h) => { if (h.key === H.key) events.push('cooled'); });
    // H at 15%, then 0.05% for 40,000 messages (20 half-lives: its count falls below the
    // sweep's level), then 15% again; one synchronous loop, so no report arrives meanwhile and
    // every move and return waits.
    const keys = [];
    for (let i = 0; i < 60_000; i++) {
      const share = i >= 8000 && i < 48_000 ? 0.0005 : 0.15;
      keys.push(rand() < share ? H.key : background[Math.floor(rand() * background.length)]);
    }
    for (let i = 0; i < keys.length; i++) p.produce(topic, String(i), keys[i]);
    const held = p.metrics().held;
    t.ok(held > 0, `${maxTrackedKeys} entries: premise: ${held} messages held when the loop ends`);
    t.same(events.slice(0, 3), ['hot', 'cooled', 'hot'], `${maxTrackedKeys} entries: premise: H turned hot, cooled and turned hot again (${events.join(', ')})`);
    await p.flush(20_000);
    t.equal(log.length, keys.length, `${maxTrackedKeys} entries: every message handed over once`);
    t.equal(outOfOrder(log), 0, `${maxTrackedKeys} entries: per key, hand-over order = produce order`);
    t.equal(p.partitioner.stats().trackedKeys.tracked <= maxTrackedKeys, true, `${maxTrackedKeys} entries: the table within its size`);
    t.same(errors, [], `${maxTrackedKeys} entries: no 'error' events`);
    await p.disconnect();
  }
});

t.test('a topic whose messages wait here keeps its slot; other topics go without state meanwhile', async (t) => {
  const topic = 'handoff-slot';
  const other = 'handoff-slot-other';
  const { p, errors } = await producer(t, { maxTopics: 1 });
  await knownPartitions(p, topic);
  await knownPartitions(p, other);
  const log = recordHandOvers(p.client);
  p.consumerProgress(topic, standing(0)); // the group stands still: moves wait here
  const { keys } = workload(0x5107, 8000);
  for (let i = 0; i < keys.length; i++) p.produce(topic, String(i), keys[i]);
  await sleep(300); // reports in; the moves stay gated
  const held = p.metrics().held;
  t.ok(held > 0, `premise: ${held} messages wait for the group`);
  // More decisions for the other topic than a topic may stay idle (16,384) before its slot is
  // given away; then the first topic's keys again.
  for (let i = 0; i < 40_000; i++) p.produce(other, `o${i}`, `bg-${i % 400}`);
  t.equal(p.partitioner.stats().evictions, 0, 'the slot of the topic with held messages was not given away');
  for (let i = 0; i < keys.length; i++) p.produce(topic, String(keys.length + i), keys[i]);
  p.consumerProgress(topic, undefined);
  await p.flush(20_000);
  t.equal(p.metrics().held, 0, 'none waits any longer');
  const mine = log.filter((m) => m.topic === topic);
  t.equal(mine.length, 2 * keys.length, 'every message of the topic handed over once');
  t.equal(outOfOrder(mine), 0, 'per key, hand-over order = produce order');
  for (let i = 0; i < 40_000; i++) p.produce(other, `o${i}`, `bg-${i % 400}`);
  t.ok(p.partitioner.stats().evictions >= 1, 'once nothing waits, the idle topic\'s slot is given to the other');
  t.same(errors, []);
});
