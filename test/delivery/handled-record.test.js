'use strict';
// The handled record a consumer commits as Kafka commit metadata (docs/ordering.md, "The handled
// record"): its bytes as the format specifies them (the expected bytes are written by hand from
// the format's table, not from the encoder), both encodings of the unhandled offsets read back,
// the smaller kept, what it answers (is an offset handled, is a producer's sequence), its size
// within the broker's 4,096 characters, and metadata that is not a record of ours refused.
const t = require('tap');
const { Buffer } = require('node:buffer');
const { encodeRecord, decodeRecord, fitRecord, RecordView, RECORD_PREFIX, RECORD_MAX_CHARS } = require('../../build/delivery/handled-record');

const P1 = '00000000000000a1';
const P2 = '00000000000000a2';
const bytesOf = (text) => [...Buffer.from(text.slice(RECORD_PREFIX.length), 'base64')];

t.test('the bytes of a record, as the format writes them', async (t) => {
  const record = {
    offset: 100, end: 180, unhandled: [100, 105, 106, 170],
    producers: [{ id: P1, read: 42 }, { id: P2, read: 300 }], marked: [{ producer: 0, sequence: 40 }, { producer: 1, sequence: 300 }],
  };
  const text = encodeRecord(record);
  t.ok(text.startsWith('kdp1:'), 'the prefix');
  t.same(bytesOf(text), [
    80, // end - offset: 80
    0, // unhandled as gaps
    3, 4, 0, 63, // 3 unhandled above 100: 105 (gap 4), 106 (gap 0), 170 (gap 63)
    2, // 2 producers
    0, 0, 0, 0, 0, 0, 0, 0xa1, 42, // P1, highest sequence read 42
    0, 0, 0, 0, 0, 0, 0, 0xa2, 0xac, 0x02, // P2, 300 as a varint (0xac 0x02)
    2, 0, 40, 1, 0xac, 0x02, // 2 unhandled marked: (P1, 40), (P2, 300)
  ]);
  t.same(decodeRecord(text, 100), record, 'read back');
});

t.test("a producer's unhandled marked messages as steps from the one before", async (t) => {
  const record = {
    offset: 0, end: 10, unhandled: [0, 1, 2, 3], producers: [{ id: P1, read: 9 }, { id: P2, read: 300 }],
    marked: [{ producer: 1, sequence: 300 }, { producer: 0, sequence: 9 }, { producer: 0, sequence: 5 }],
  };
  t.same(bytesOf(encodeRecord(record)).slice(-8), [
    3, // 3 unhandled marked, by producer then sequence:
    0, 5, // P1 (index 0), sequence 5
    0, 3, // P1 again, 9 = 5 + 3 + 1
    1, 0xac, 0x02, // P2 (index 0 + 1), sequence 300
  ]);
  t.same(decodeRecord(encodeRecord(record), 0).marked, [{ producer: 0, sequence: 5 }, { producer: 0, sequence: 9 }, { producer: 1, sequence: 300 }], 'read back in that order');
});

t.test('a bitmap when it is smaller: many unhandled offsets close together', async (t) => {
  const unhandled = [0];
  for (let o = 1; o < 2000; o += 2) unhandled.push(o);
  const record = { offset: 0, end: 2000, unhandled, producers: [], marked: [] };
  const bytes = bytesOf(encodeRecord(record));
  t.equal(bytes[2], 1, 'the bitmap kind');
  t.equal(bytes.length, 2 + 1 + Math.ceil(1999 / 8) + 2, 'end (2 bytes), kind, 1,999 bits, no producers, no marked');
  t.same(decodeRecord(encodeRecord(record), 0), record, 'read back');
  const sparse = { offset: 0, end: 1_000_000, unhandled: [0, 10, 999_999], producers: [], marked: [] };
  t.equal(bytesOf(encodeRecord(sparse))[3], 0, 'gaps for a few unhandled offsets far apart');
  t.same(decodeRecord(encodeRecord(sparse), 0), sparse);
});

t.test('random records read back as written', async (t) => {
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let i = 0; i < 500; i++) {
    const offset = Math.floor(random() * 1e12);
    const span = Math.floor(random() * (random() < 0.5 ? 50 : 100_000));
    const unhandled = span > 0 ? [offset] : [];
    for (let o = offset + 1; o < offset + span && unhandled.length < 400; o += 1 + Math.floor(random() * (random() < 0.5 ? 3 : 5000))) unhandled.push(o);
    const producers = Array.from({ length: Math.floor(random() * 5) }, (_, k) => ({ id: (0xb000 + k).toString(16).padStart(16, '0'), read: 1 + Math.floor(random() * 1e9) }));
    // Each (producer, sequence) once, in the order the record keeps them: by producer, then sequence.
    const names = new Set();
    const marked = (producers.length === 0 ? [] : unhandled.slice(0, Math.floor(random() * unhandled.length))
      .map(() => ({ producer: Math.floor(random() * producers.length), sequence: 1 + Math.floor(random() * 1e6) })))
      .filter((m) => !names.has(`${m.producer}:${m.sequence}`) && names.add(`${m.producer}:${m.sequence}`))
      .sort((a, b) => a.producer - b.producer || a.sequence - b.sequence);
    const record = { offset, end: offset + span, unhandled, producers, marked };
    const back = decodeRecord(encodeRecord(record), offset);
    if (JSON.stringify(back) !== JSON.stringify(record)) {
      t.fail(`record ${i} read back differs: ${JSON.stringify(record).slice(0, 200)}`);
      return;
    }
  }
  t.pass('500 records');
});

t.test('what a record answers', async (t) => {
  const view = new RecordView({
    offset: 10, end: 20, unhandled: [10, 14], producers: [{ id: P1, read: 9 }], marked: [{ producer: 0, sequence: 7 }],
  });
  t.ok(view.handledOffset(3) && view.handledOffset(9), 'below the committed offset: handled');
  t.notOk(view.handledOffset(10) || view.handledOffset(14), 'unhandled: not handled');
  t.ok(view.handledOffset(11) && view.handledOffset(19), 'read and not among the unhandled: handled');
  t.notOk(view.handledOffset(20), 'not read yet: not known');
  t.ok(view.handledSequence(P1, 5) && view.handledSequence(P1, 9), "a producer's sequence up to the highest read, not among the unhandled: handled");
  t.notOk(view.handledSequence(P1, 7), 'unhandled');
  t.notOk(view.handledSequence(P1, 10), 'above the highest read: not known');
  t.notOk(view.handledSequence(P2, 1), 'a producer the record does not know');
});

t.test('a predecessor named by its offset is answered by that offset alone', async (t) => {
  // A producer's message that waited for a handoff reaches its partition after later messages
  // of the same producer: sequence 5 is at offset 25, past what was read, while sequence 9 was
  // read at offset 12. By sequence it would look handled; its successor names offset 25.
  const view = new RecordView({ offset: 10, end: 20, unhandled: [10], producers: [{ id: P1, read: 9 }], marked: [] });
  t.ok(view.handledSequence(P1, 5), 'premise: by sequence alone, 5 looks handled');
  t.notOk(view.handles({ producerId: P1, previous: 5, afterOffset: 25 }), 'named offset 25 not read yet: not handled');
  t.notOk(view.handles({ producerId: P1, previous: 5, afterOffset: 10 }), 'named offset 10 unhandled: not handled');
  t.ok(view.handles({ producerId: P1, previous: 5, afterOffset: 15 }), 'named offset 15 read and not among the unhandled: handled');
  t.ok(view.handles({ producerId: P1, previous: 5, afterOffset: -1 }), 'no offset named: by sequence');
});

t.test('within the broker limit for a busy partition: 64 producers and 600 unhandled offsets over 50,000', async (t) => {
  const producers = Array.from({ length: 64 }, (_, k) => ({ id: (0xc000 + k).toString(16).padStart(16, '0'), read: 5_000_000 + k }));
  const unhandled = [1_000_000];
  for (let k = 1; k < 600; k++) unhandled.push(1_000_000 + k * 83);
  const marked = unhandled.slice(0, 300).map((_, k) => ({ producer: k % 64, sequence: 4_000_000 + k }));
  const text = encodeRecord({ offset: 1_000_000, end: 1_050_000, unhandled, producers, marked });
  t.ok(text.length <= RECORD_MAX_CHARS, `${text.length} characters`);
});

t.test('a record past the limit is shortened to what fits and stays true: fewer offsets, no answers by sequence', async (t) => {
  const small = { offset: 5, end: 8, unhandled: [5, 7], producers: [{ id: P1, read: 3 }], marked: [{ producer: 0, sequence: 3 }] };
  t.same(fitRecord(small, RECORD_MAX_CHARS), { text: encodeRecord(small), shortened: false }, 'one that fits goes whole');
  // 3,000 unhandled offsets scattered over 200,000, 64 producers, 300 unhandled marked: far past the limit.
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const offset = 1_000_000;
  const unhandled = [...new Set([offset, ...Array.from({ length: 3000 }, () => offset + 1 + Math.floor(rand() * 200_000))])].sort((a, b) => a - b);
  const producers = Array.from({ length: 64 }, (_, i) => ({ id: (i + 1).toString(16).padStart(16, '0'), read: 5_000_000 + i }));
  const marked = unhandled.slice(0, 300).map((_, k) => ({ producer: k % 64, sequence: 4_000_000 + k }));
  const big = { offset, end: offset + 200_001, unhandled, producers, marked };
  t.ok(encodeRecord(big).length > RECORD_MAX_CHARS, `premise: ${encodeRecord(big).length} characters whole`);
  const { text, shortened } = fitRecord(big, RECORD_MAX_CHARS);
  t.ok(shortened && text.length <= RECORD_MAX_CHARS, `shortened to ${text.length} characters`);
  const cut = decodeRecord(text, offset);
  t.ok(cut !== null, 'it reads');
  t.same([cut.producers, cut.marked], [[], []], 'no producers: nothing is answered by sequence');
  t.ok(cut.end > offset + 10_000, `it still describes offsets ${offset} to ${cut.end}`);
  const whole = new RecordView(big);
  const view = new RecordView(cut);
  let claimed = 0;
  let wrong = 0;
  for (let o = offset; o < big.end; o++) {
    if (!view.handledOffset(o)) continue;
    claimed++;
    if (!whole.handledOffset(o)) wrong++;
  }
  t.equal(wrong, 0, `every offset it counts handled (${claimed}) the whole record counts handled`);
  t.ok(cut.unhandled.every((o) => unhandled.includes(o)) && unhandled.filter((o) => o < cut.end).length === cut.unhandled.length, 'below its end, exactly the unhandled offsets of the whole');
  t.notOk(view.handledSequence(producers[0].id, 1), 'a sequence is never answered handled');
});

t.test('metadata that is not a record of ours is refused, never trusted', async (t) => {
  const good = encodeRecord({ offset: 5, end: 8, unhandled: [5, 7], producers: [{ id: P1, read: 3 }], marked: [{ producer: 0, sequence: 3 }] });
  t.ok(decodeRecord(good, 5), 'premise: the good one reads');
  t.ok(decodeRecord(Buffer.from(good, 'latin1'), 5), 'as the Buffer the native engine gives');
  // librdkafka-based writers end the text with a NUL (Confluent's client's src/common.cc pushes one after the
  // string it commits, and reads every metadata less its last byte): read whole, with one NUL after it, it reads.
  t.same(decodeRecord(Buffer.from(`${good}\0`, 'latin1'), 5), decodeRecord(good, 5), 'with the NUL a librdkafka-based writer ends it with');
  t.equal(decodeRecord(`${good}\0\0`, 5), null, 'with two NULs: not what any writer of ours makes');
  const body = Buffer.from(good.slice(RECORD_PREFIX.length), 'base64');
  const withBody = (mutate) => {
    const b = Buffer.from(body);
    return RECORD_PREFIX + mutate(b).toString('base64');
  };
  for (const [bad, why] of [
    ['', 'empty'],
    ['{"consumer":"other"}', "another client's metadata"],
    ['kdp2:' + good.slice(RECORD_PREFIX.length), 'another version'],
    ['kdp1:!!!', 'not base64'],
    [good.slice(0, -4), 'truncated'],
    [withBody((b) => Buffer.concat([b, Buffer.from([0])])), 'trailing bytes'],
    [withBody((b) => { b[1] = 7; return b; }), 'an unknown encoding of the unhandled offsets'],
    [withBody((b) => { b[0] = 1; return b; }), 'a unhandled offset past the end'],
    [withBody((b) => { b[b.length - 2] = 4; return b; }), 'a marked message of a producer not listed'],
    [withBody(() => Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01])), 'a varint too long'],
  ]) {
    t.equal(decodeRecord(bad, 5), null, why);
  }
  t.equal(decodeRecord(good, -1), null, 'no offset committed');
  t.equal(decodeRecord(42, 5), null, 'not text');
});
