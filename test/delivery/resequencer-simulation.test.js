'use strict';
// The order rule at scale, in a randomized simulation of what producers and librdkafka do
// (test/delivery/lib/simulation.js); the consumer reads the partitions in a random
// interleaving, with partitions held back for long stretches. The reference model is per
// producer, per key, send order, from the message values alone.
const t = require('tap');
const { Resequencer } = require('../..');
const { simulate, readOrder, toMessage } = require('./lib/simulation');

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
