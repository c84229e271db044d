'use strict';
// What the Resequencer does with input that is not ours: a message that is not a consumed
// message gets a typed error; headers it cannot read (another client's shapes, made-up or
// damaged order headers) make the message an unmarked one, never a crash; and what it
// remembers stays bounded whatever headers come in.
const t = require('tap');
const v8 = require('node:v8');
const vm = require('node:vm');
const { Resequencer, decodeOrderHeader, encodeOrderHeader, ORDER_HEADER, ORDER_ANCHOR, ORDER_SPREAD, InvalidOptionError } = require('../..');

const ID = '00000000000000ab';
const base = (extra) => ({ topic: 't', partition: 0, offset: 0, key: 'k', value: Buffer.from('v'), ...extra });

t.test('not a consumed message: InvalidArgTypeError naming what is wrong', async (t) => {
  const r = new Resequencer();
  for (const bad of [null, 42, 'x', {}, base({ topic: 7 }), base({ partition: -1 }), base({ partition: 1.5 }), base({ offset: '3' }), base({ offset: -2 })]) {
    t.throws(() => r.push(bad), { name: 'InvalidArgTypeError', code: 'KDP_INVALID_ARG_TYPE' }, `refused: ${JSON.stringify(bad)}`);
  }
  for (const key of [42, {}, true, [1]]) {
    t.throws(() => r.push(base({ key })), { name: 'InvalidArgTypeError', code: 'KDP_INVALID_ARG_TYPE', message: /message\.key/ }, `key ${JSON.stringify(key)} refused, named`);
  }
  t.equal(r.held, 0, 'nothing kept of refused messages');
  t.same(r.push(base({ offset: 1, key: Uint8Array.from([1, 2]) })).map((x) => x.ordered), [true], 'a Uint8Array key is a key');
});

t.test('headers in other shapes: read when they can be, unmarked otherwise, never a crash', async (t) => {
  const r = new Resequencer();
  let offset = 0;
  const push = (headers) => r.push(base({ offset: offset++, headers }));
  const shapes = [
    [null], [undefined, 5, 'x'], {}, { other: 'x' }, { [ORDER_HEADER]: 42 }, { [ORDER_HEADER]: null },
    [{ [ORDER_HEADER]: 42 }], [{ [ORDER_HEADER]: {} }], [{ [ORDER_HEADER]: 'garbage' }], 'not headers', 17,
    [{ [ORDER_HEADER]: `2;s;${ID};0;0;2;4;0;` }], // sequence 0
    [{ [ORDER_HEADER]: `2;a;${ID};5;3;2;4;0;` }], // an anchor naming a predecessor
    [{ [ORDER_HEADER]: `2;s;${ID};5;9;2;4;0;1` }], // a predecessor after itself
    [{ [ORDER_HEADER]: `2;s;${ID};5;4;2;4;0;x:1` }], // a damaged after field
    [{ [ORDER_HEADER]: `3;s;${ID};5;4;2;4;0;1` }], // an unknown version
    [{ [ORDER_HEADER]: `2;s;${ID};5;4;2;4;0;1;extra` }],
    [{ [ORDER_HEADER]: 'x'.repeat(10_000) }],
  ];
  for (const headers of shapes) {
    const out = push(headers);
    t.same(out.map((x) => [x.ordered, x.order]), [[true, null]], `unmarked: ${JSON.stringify(headers).slice(0, 60)}`);
  }
  // A KafkaJS-style object carrying a real header is read, as are Buffer and Uint8Array values.
  const anchor = encodeOrderHeader(ORDER_ANCHOR, ID, 1, 0, 2, 4, 0);
  t.equal(push({ [ORDER_HEADER]: anchor })[0].order.kind, 'anchor', 'KafkaJS-style object');
  t.equal(push({ [ORDER_HEADER]: [Buffer.from(anchor)] })[0].order.kind, 'anchor', 'KafkaJS-style array value');
  t.equal(push([{ [ORDER_HEADER]: new TextEncoder().encode(anchor) }])[0].order.kind, 'anchor', 'Uint8Array value');
  t.equal(r.held, 0);
});

t.test('decodeOrderHeader reads versions 1 and 2 and gives null for anything else', async (t) => {
  for (const v of [42, {}, [], true, undefined, null, Symbol('x'), () => 1, '', ';;;;;;;;']) t.equal(decodeOrderHeader(v), null, `${String(typeof v)} → null`);
  t.match(decodeOrderHeader(`1;s;${ID};7;6;3;12;0`), { version: 1, kind: 'spread', producerId: ID, sequence: 7, previous: 6, width: 3, partitions: 12, partitioner: 0, afterPartition: -1, afterOffset: -1 }, 'version 1');
  t.match(decodeOrderHeader(`2;s;${ID};7;6;3;12;0;5`), { version: 2, afterPartition: 5, afterOffset: -1 }, 'version 2, partition');
  t.match(decodeOrderHeader(`2;r;${ID};7;6;1;12;0;5:1234`), { version: 2, kind: 'return', afterPartition: 5, afterOffset: 1234 }, 'version 2, partition and offset');
  t.same(decodeOrderHeader(encodeOrderHeader(ORDER_SPREAD, ID, 9, 8, 2, 4, 1, 3, 77)), decodeOrderHeader(`2;s;${ID};9;8;2;4;1;3:77`), 'the encoder writes the documented text');
});

t.test('a million made-up order headers: chains, held messages and heap stay bounded', async (t) => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const maxChains = 20_000;
  const r = new Resequencer({ maxChains, maxBufferedMessages: 5_000 });
  gc();
  const before = process.memoryUsage().heapUsed;
  let released = 0;
  let peakChains = 0;
  for (let i = 0; i < 1_000_000; i++) {
    // Every message a new producer and key, half of them naming a predecessor that never comes.
    const id = (0x1000000 + i).toString(16).padStart(16, '0');
    const header = i % 2 === 0 ? `2;a;${id};1;0;2;4;0;` : `2;s;${id};9;8;2;4;0;1`;
    released += r.push({ topic: 't', partition: i % 4, offset: i, key: `key-${i}`, value: null, headers: [{ [ORDER_HEADER]: header }] }).length;
    if (r.chainCount > peakChains) peakChains = r.chainCount;
  }
  gc();
  const grown = (process.memoryUsage().heapUsed - before) / 2 ** 20;
  t.ok(peakChains <= maxChains, `at most maxChains chains (${peakChains})`);
  t.ok(r.held <= 5_000, `at most maxBufferedMessages held (${r.held})`);
  t.equal(released + r.held, 1_000_000, 'every message released or held, none lost');
  t.ok(grown < 32, `heap grew ${grown.toFixed(1)} MiB (bound: 32 MiB)`);
  t.throws(() => new Resequencer({ maxChains: 0 }), InvalidOptionError);
});
