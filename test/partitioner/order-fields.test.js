'use strict';
// The native engine's order headers (src/partitioner/headers.ts OrderFields, writeOrderFields):
// written as bytes from their fields, they must be the text docs/ordering.md specifies, the
// same as the public encodeOrderHeader() builds and decodeOrderHeader() reads back.
const t = require('tap');
const { OrderFields, writeOrderFields, ORDER_FIELDS_MAX_BYTES } = require('../../build/partitioner/headers');
const { encodeOrderHeader, decodeOrderHeader, ORDER_ANCHOR, ORDER_SPREAD, ORDER_MOVED, ORDER_RETURN } = require('../..');

const ID = '9f86d081884c7d65';
const CODES = { [ORDER_ANCHOR]: 'a', [ORDER_SPREAD]: 's', [ORDER_MOVED]: 'm', [ORDER_RETURN]: 'r' };
const startOf = (kind) => Buffer.from(`2;${CODES[kind]};${ID};`, 'latin1');

/** The bytes writeOrderFields writes for `fields` at offset 3, as text; null if it wrote outside them or past its bound. */
function write(fields) {
  const data = Buffer.alloc(ORDER_FIELDS_MAX_BYTES + 8, 0xff);
  const end = writeOrderFields(data, 3, fields);
  if (end - 3 > ORDER_FIELDS_MAX_BYTES || data[2] !== 0xff || data[end] !== 0xff) return null;
  return data.toString('latin1', 3, end);
}

function written(t, fields) {
  const text = write(fields);
  t.not(text, null, 'written within its place and ORDER_FIELDS_MAX_BYTES');
  return text;
}

t.test("docs/ordering.md's example, written from its fields", async (t) => {
  const f = new OrderFields(startOf(ORDER_SPREAD), 42, 41, 3, 12, 0, 7, -1);
  t.equal(written(t, f), '2;s;9f86d081884c7d65;42;41;3;12;0;7');
  t.equal(f['kdp-order'], '2;s;9f86d081884c7d65;42;41;3;12;0;7', 'its text, read as a header object\'s');
  f.complete(7, 1234567);
  t.equal(written(t, f), '2;s;9f86d081884c7d65;42;41;3;12;0;7:1234567', 'a handoff: after is <partition>:<offset>');
  const anchor = new OrderFields(startOf(ORDER_ANCHOR), 1, 0, 2, 6, 1, -1, -1);
  t.equal(written(t, anchor), '2;a;9f86d081884c7d65;1;0;2;6;1;', 'an anchor: previous 0, after empty');
});

t.test('random fields: the same text as encodeOrderHeader(), decoded to the same fields', async (t) => {
  let seed = 12345;
  const next = (n) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  const big = (digits) => Math.floor(Math.random() * 10 ** digits);
  for (let i = 0; i < 2000; i++) {
    const kind = [ORDER_ANCHOR, ORDER_SPREAD, ORDER_MOVED, ORDER_RETURN][next(4)];
    const anchor = kind === ORDER_ANCHOR;
    const sequence = 1 + (i % 3 === 0 ? big(15) : next(100000));
    const previous = anchor ? 0 : next(2) === 0 ? 0 : Math.floor(sequence / 2);
    const width = 1 + next(64);
    const partitions = width + next(1000);
    const partitioner = next(6);
    const after = anchor ? -1 : next(3) === 0 ? -1 : next(partitions);
    const offset = after >= 0 && next(2) === 0 ? (i % 5 === 0 ? Number.MAX_SAFE_INTEGER - next(1000) : next(10 ** 6)) : -1;
    const f = new OrderFields(startOf(kind), sequence, previous, width, partitions, partitioner, after, offset);
    const expected = encodeOrderHeader(kind, ID, sequence, previous, width, partitions, partitioner, after, offset);
    const text = write(f);
    if (text !== expected || f['kdp-order'] !== expected) {
      t.fail(`fields ${JSON.stringify({ kind, sequence, previous, width, partitions, partitioner, after, offset })}: ${text} / ${f['kdp-order']}, expected ${expected}`);
      return;
    }
    const d = decodeOrderHeader(Buffer.from(text, 'latin1'));
    if (d === null || d.sequence !== sequence || d.previous !== previous || d.afterPartition !== after || d.afterOffset !== offset) {
      t.fail(`${text} decoded as ${JSON.stringify(d)}`);
      return;
    }
  }
  t.pass('2,000 headers: the same text, decoded back to their fields');
});
