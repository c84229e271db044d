'use strict';
// The order rule at scale, in a randomized simulation of what producers and librdkafka do:
// many producers send the same keys, which turn hot (ANCHOR on the key's normal partition),
// are spread over several partitions (SPREAD, each naming its predecessor), and cool
// (RETURN on the normal partition, then cold messages there); each producer batches per
// partition and flushes its batches at random moments (so the partitions' logs interleave
// producers and runs arbitrarily, each producer's messages of one partition staying in send
// order); the consumer reads the partitions in a random interleaving, with partitions held back
// for long stretches. The reference model is per producer, per key, send order, from the
// message values alone.
const t = require('tap');
const { Resequencer, encodeOrderHeader, ORDER_HEADER, ORDER_ANCHOR, ORDER_SPREAD, ORDER_RETURN } = require('../..');

function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 2 ** 32;
  };
}

/** Partition logs of a simulated run: [[{ producer, key, index, header, partition }]]. */
function simulate({ seed, producers, keys, partitions, messages, hotKeys, headerVersion = 2 }) {
  const random = rng(seed);
  const logs = Array.from({ length: partitions }, () => []);
  const state = [];
  for (let p = 0; p < producers; p++) {
    const id = (0xa000 + p).toString(16).padStart(16, '0');
    state.push({ id, sequence: 0, keys: new Map(), batches: Array.from({ length: partitions }, () => []) });
  }
  const normal = (k) => (k * 7919) % partitions;
  let sent = 0;
  while (sent < messages) {
    const p = Math.floor(random() * producers);
    const s = state[p];
    // Hot keys are the first few, most of the traffic.
    const k = random() < 0.7 ? Math.floor(random() * hotKeys) : Math.floor(random() * keys);
    let ks = s.keys.get(k);
    if (!ks) s.keys.set(k, (ks = { hot: false, index: 0, previous: 0, previousAt: -1, width: 1 }));
    let kind = 'c';
    let partition = normal(k);
    if (!ks.hot && k < hotKeys && random() < 0.05) {
      ks.hot = true;
      ks.width = 2 + Math.floor(random() * (partitions - 1));
      kind = 'a';
    } else if (ks.hot && random() < 0.02) {
      ks.hot = false;
      kind = 'r';
    } else if (ks.hot) {
      kind = 's';
      partition = (normal(k) + Math.floor(random() * ks.width)) % partitions;
    }
    let header;
    if (kind !== 'c') {
      const sequence = ++s.sequence;
      const previous = kind === 'a' ? 0 : ks.previous;
      const code = kind === 'a' ? ORDER_ANCHOR : kind === 's' ? ORDER_SPREAD : ORDER_RETURN;
      header = headerVersion === 1
        ? `1;${kind};${s.id};${sequence};${previous};${ks.width};${partitions};0`
        : encodeOrderHeader(code, s.id, sequence, previous, ks.width, partitions, 0, kind === 'a' ? -1 : ks.previousAt);
      ks.previous = kind === 'r' ? 0 : sequence;
      ks.previousAt = partition;
    }
    s.batches[partition].push({ producer: p, key: k, index: ks.index++, header, partition });
    sent++;
    // librdkafka sends a partition's batch when it is full or lingered: here, at random.
    if (random() < 0.15) {
      const q = Math.floor(random() * partitions);
      logs[q].push(...s.batches[q]);
      s.batches[q] = [];
    }
  }
  for (let q = 0; q < partitions; q++) for (const s of state) logs[q].push(...s.batches[q]);
  return logs;
}

/** Reads the logs in a random interleaving, some partitions held back for a while. */
function readOrder(logs, seed) {
  const random = rng(seed);
  const next = logs.map(() => 0);
  const order = [];
  const backUntil = logs.map(() => 0);
  let remaining = logs.reduce((s, l) => s + l.length, 0);
  while (remaining > 0) {
    const p = Math.floor(random() * logs.length);
    if (next[p] === logs[p].length) continue;
    if (backUntil[p] > order.length && random() < 0.98) continue;
    if (random() < 0.001) backUntil[p] = order.length + Math.floor(random() * 2000);
    const run = 1 + Math.floor(random() * 50);
    for (let i = 0; i < run && next[p] < logs[p].length; i++) {
      order.push([p, next[p]++]);
      remaining--;
    }
  }
  return order;
}

function toMessage(m, offset) {
  return {
    topic: 't', partition: m.partition, offset, key: `key-${m.key}`, value: m,
    headers: m.header === undefined ? [] : [{ other: 'x' }, { [ORDER_HEADER]: m.header }],
  };
}

for (const [seed, version] of [[1, 2], [2, 2], [3, 1], [4, 2]]) {
  t.test(`one consumer reads every partition (seed ${seed}, header v${version})`, async (t) => {
    const logs = simulate({ seed, producers: 8, keys: 200, partitions: 6, messages: 60_000, hotKeys: 5, headerVersion: version });
    const marked = logs.flat().filter((m) => m.header !== undefined).length;
    const spreadPartitions = new Set(logs.flat().filter((m) => m.header && m.header.split(';')[1] === 's').map((m) => m.partition));
    t.ok(marked > 5_000 && spreadPartitions.size > 1, `${marked} marked messages, spread over ${spreadPartitions.size} partitions`);
    const r = new Resequencer({ maxBufferedMessages: 1_000_000 });
    const out = [];
    let peak = 0;
    for (const [p, i] of readOrder(logs, seed * 31)) {
      out.push(...r.push(toMessage(logs[p][i], i)));
      if (r.held > peak) peak = r.held;
    }
    t.equal(r.held, 0, `nothing left held (peak ${peak})`);
    t.equal(out.length, 60_000, 'every message out once');
    t.equal(out.filter((x) => !x.ordered || x.outOfOrder).length, 0, 'none flagged');
    const last = new Map();
    let violations = 0;
    for (const { message } of out) {
      const m = message.value;
      const id = `${m.producer}:${m.key}`;
      if ((last.get(id) ?? -1) !== m.index - 1) violations++;
      last.set(id, m.index);
    }
    t.equal(violations, 0, 'each producer\'s messages of each key in send order');
  });
}

t.test('a group of two consumers: nobody waits for the other, every message once', async (t) => {
  const partitions = 6;
  const logs = simulate({ seed: 9, producers: 6, keys: 100, partitions, messages: 40_000, hotKeys: 4 });
  const owners = [[0, 2, 4], [1, 3, 5]];
  const seen = new Map();
  let unowned = 0;
  let ordered = 0;
  for (const [c, mine] of owners.entries()) {
    const r = new Resequencer({ maxBufferedMessages: 1_000_000 });
    r.assign('t', mine);
    const out = [];
    for (const [p, i] of readOrder(logs, 77 + c)) if (mine.includes(p)) out.push(...r.push(toMessage(logs[p][i], i)));
    t.equal(r.held, 0, `consumer ${c}: nothing held for a partition it does not own`);
    const released = new Set();
    let ahead = 0;
    for (const x of out) {
      const m = x.message.value;
      const id = `${m.producer}:${m.key}:${m.index}`;
      seen.set(id, (seen.get(id) ?? 0) + 1);
      if (x.reason === 'unowned') unowned++;
      else if (x.ordered) ordered++;
      // An ordered release of a chained message comes after its predecessor when this consumer handles that one.
      if (x.ordered && x.order && x.order.previous !== 0 && mine.includes(x.order.afterPartition)) {
        if (!released.has(`${x.order.producerId}:${m.key}:${x.order.previous}`)) ahead++;
      }
      if (x.order) released.add(`${x.order.producerId}:${m.key}:${x.order.sequence}`);
    }
    t.equal(ahead, 0, `consumer ${c}: every ordered message went after its predecessor when that one is on a partition it owns`);
    t.equal(out.filter((x) => x.reason === 'timeout' || x.reason === 'capacity').length, 0, `consumer ${c}: no timeouts`);
  }
  t.equal(seen.size, 40_000, 'every message handed out');
  t.ok([...seen.values()].every((n) => n === 1), 'and only once');
  t.ok(unowned > 0 && ordered > unowned, `${ordered} ordered, ${unowned} released at once for another consumer's predecessor`);
});
