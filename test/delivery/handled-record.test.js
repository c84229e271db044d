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
  t.ok(text.startsWith('kdp2:'), 'the prefix');
  t.same(bytesOf(text), [
    80, // end - offset: 80
    0, // end - known: every offset read is told
    0, // unhandled as gaps
    3, 4, 0, 63, // 3 unhandled above 100: 105 (gap 4), 106 (gap 0), 170 (gap 63)
    2, // 2 producers
    0, 0, 0, 0, 0, 0, 0, 0xa1, 42, 0, // P1, highest sequence read 42, every one told
    0, 0, 0, 0, 0, 0, 0, 0xa2, 0xac, 0x02, 0, // P2, 300 as a varint (0xac 0x02)
    2, 0, 40, 0, 1, 0xac, 0x02, 0, // 2 runs of unhandled marked: (P1, 40, 1 long), (P2, 300, 1 long)
  ]);
  t.same(decodeRecord(text, 100), { ...record, known: 180, producers: [{ id: P1, read: 42, told: 42 }, { id: P2, read: 300, told: 300 }] }, 'read back');
});

t.test('a record of the format before (kdp1) is still read: every offset and sequence read told', async (t) => {
  // kdp1: end - offset, the unhandled offsets, producers (id, read), then marked messages one by one.
  const bytes = [80, 0, 3, 4, 0, 63, 1, 0, 0, 0, 0, 0, 0, 0, 0xa1, 42, 2, 0, 38, 0, 1];
  const text = `kdp1:${Buffer.from(bytes).toString('base64')}`;
  t.same(decodeRecord(text, 100), {
    offset: 100, end: 180, known: 180, unhandled: [100, 105, 106, 170],
    producers: [{ id: P1, read: 42, told: 42 }], marked: [{ producer: 0, sequence: 38 }, { producer: 0, sequence: 40 }],
  });
});

t.test("a producer's unhandled marked messages as runs of consecutive sequences", async (t) => {
  const record = {
    offset: 0, end: 10, unhandled: [0, 1, 2, 3, 4, 5], producers: [{ id: P1, read: 9 }, { id: P2, read: 300 }],
    marked: [{ producer: 1, sequence: 300 }, { producer: 0, sequence: 9 }, { producer: 0, sequence: 5 }, { producer: 0, sequence: 7 }, { producer: 0, sequence: 6 }],
  };
  t.same(bytesOf(encodeRecord(record)).slice(-11), [
    3, // 3 runs, by producer then sequence:
    0, 5, 2, // P1 (index 0), from 5, 3 long (5, 6, 7)
    0, 0, 0, // P1 again, from 9 = 7 + 0 + 2, 1 long
    1, 0xac, 0x02, 0, // P2 (index 0 + 1), from 300, 1 long
  ]);
  t.same(decodeRecord(encodeRecord(record), 0).marked,
    [{ producer: 0, sequence: 5 }, { producer: 0, sequence: 6 }, { producer: 0, sequence: 7 }, { producer: 0, sequence: 9 }, { producer: 1, sequence: 300 }],
    'read back in that order');
});

t.test('a record whose offsets are told up to `known` and a producer told up to `told`', async (t) => {
  const record = {
    offset: 50, end: 90, known: 60, unhandled: [50, 55], producers: [{ id: P1, read: 20, told: 12 }], marked: [{ producer: 0, sequence: 11 }],
  };
  t.same(bytesOf(encodeRecord(record)), [
    40, // end - offset
    30, // end - known: offsets 60 to 89 not told
    0, 1, 4, // gaps: 1 unhandled above 50, 55 (gap 4)
    1, 0, 0, 0, 0, 0, 0, 0, 0xa1, 20, 8, // P1, read 20, told 20 - 8 = 12
    1, 0, 11, 0, // one run: (P1, 11, 1 long)
  ]);
  t.same(decodeRecord(encodeRecord(record), 50), record, 'read back');
  const view = new RecordView(record);
  t.ok(view.handledOffset(57), 'a told offset not unhandled: handled');
  t.notOk(view.handledOffset(70), 'an offset not told: not known');
  t.ok(view.handledAt(70, P1, 10), 'a marked message there, by its sequence: told and not unhandled');
  t.notOk(view.handledAt(70, P1, 11), 'by its sequence: unhandled');
  t.notOk(view.handledAt(70, P1, 15), 'by its sequence: above told, not known');
  t.notOk(view.handledAt(95, P1, 10), 'not read yet');
  t.notOk(view.handledAt(55, P1, 10), 'a told offset answers by itself: unhandled');
  t.ok(view.handles({ producerId: P1, previous: 12, afterOffset: -1 }) && !view.handles({ producerId: P1, previous: 13, afterOffset: -1 }),
    'by sequence: up to told');
});

t.test('a bitmap when it is smaller: many unhandled offsets close together', async (t) => {
  const unhandled = [0];
  for (let o = 1; o < 2000; o += 2) unhandled.push(o);
  const record = { offset: 0, end: 2000, known: 2000, unhandled, producers: [], marked: [] };
  const bytes = bytesOf(encodeRecord(record));
  t.equal(bytes[3], 1, 'the bitmap kind');
  t.equal(bytes.length, 2 + 1 + 1 + Math.ceil(1999 / 8) + 2, 'end (2 bytes), known (1), kind, 1,999 bits, no producers, no runs');
  t.same(decodeRecord(encodeRecord(record), 0), record, 'read back');
  const sparse = { offset: 0, end: 1_000_000, known: 1_000_000, unhandled: [0, 10, 999_999], producers: [], marked: [] };
  t.equal(bytesOf(encodeRecord(sparse))[4], 0, 'gaps for a few unhandled offsets far apart');
  t.same(decodeRecord(encodeRecord(sparse), 0), sparse);
});

t.test('random records read back as written', async (t) => {
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let i = 0; i < 500; i++) {
    const offset = Math.floor(random() * 1e12);
    const span = Math.floor(random() * (random() < 0.5 ? 50 : 100_000));
    const known = random() < 0.5 ? offset + span : offset + Math.floor(random() * (span + 1));
    const unhandled = known > offset ? [offset] : [];
    for (let o = offset + 1; o < known && unhandled.length < 400; o += 1 + Math.floor(random() * (random() < 0.5 ? 3 : 5000))) unhandled.push(o);
    const producers = Array.from({ length: Math.floor(random() * 5) }, (_, k) => {
      const read = 1 + Math.floor(random() * 1e6);
      return { id: (0xb000 + k).toString(16).padStart(16, '0'), read, told: random() < 0.5 ? read : Math.floor(random() * read) };
    });
    // Each (producer, sequence) once, up to the producer's told, in the order the record keeps them: by producer, then sequence.
    const names = new Set();
    const marked = (producers.length === 0 ? [] : Array.from({ length: Math.floor(random() * Math.min(span, 300)) }, () => {
      const producer = Math.floor(random() * producers.length);
      const base = 1 + Math.floor(random() * Math.max(1, producers[producer].told));
      return { producer, sequence: Math.min(base, producers[producer].told) };
    }))
      .filter((m) => m.sequence >= 1 && !names.has(`${m.producer}:${m.sequence}`) && names.add(`${m.producer}:${m.sequence}`))
      .sort((a, b) => a.producer - b.producer || a.sequence - b.sequence);
    const record = { offset, end: offset + span, known, unhandled, producers, marked };
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

/** Every answer `cut` gives handled, `whole` gives too; the count of answers checked. */
function trueAnswers(t, whole, cut, producers, from, to, sequences) {
  const w = new RecordView(whole);
  const c = new RecordView(cut);
  let wrong = 0;
  let claimed = 0;
  for (let o = from; o < to; o++) {
    if (c.handledOffset(o)) {
      claimed++;
      if (!w.handledOffset(o)) wrong++;
    }
  }
  for (const p of producers) {
    for (let q = 1; q <= sequences; q++) {
      if (c.handledSequence(p.id, q)) {
        claimed++;
        if (!w.handledSequence(p.id, q)) wrong++;
      }
    }
  }
  t.equal(wrong, 0, `every offset and sequence it counts handled (${claimed}) the whole record counts handled`);
}

t.test('a record past the limit keeps its answers whole and tells fewer offsets', async (t) => {
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
  t.same([cut.producers, cut.marked], [decodeRecord(encodeRecord(big), offset).producers, decodeRecord(encodeRecord(big), offset).marked],
    'every producer and every unhandled marked message: it answers by sequence as the whole does');
  t.equal(cut.end, big.end, 'the same end');
  t.ok(cut.known > offset + 10_000 && cut.known < big.end, `offsets told from ${offset} to ${cut.known}`);
  t.ok(unhandled.includes(cut.known), 'told up to the first unhandled offset left out');
  t.same(cut.unhandled, unhandled.filter((o) => o < cut.known), 'below it, exactly the unhandled offsets of the whole');
  trueAnswers(t, big, cut, producers, offset, big.end, 0);
});

t.test('a record whose answers alone pass the limit keeps each producer\'s lowest runs, and is true', async (t) => {
  // 64 producers, each with 100 unhandled marked messages that are not consecutive (100 runs each).
  const offset = 0;
  const producers = Array.from({ length: 64 }, (_, i) => ({ id: (i + 1).toString(16).padStart(16, '0'), read: 1000 }));
  const marked = [];
  for (let p = 0; p < 64; p++) for (let k = 0; k < 100; k++) marked.push({ producer: p, sequence: 3 + 7 * k + (p % 3) });
  const unhandled = Array.from({ length: 6400 }, (_, k) => offset + 2 * k);
  const big = { offset, end: 13_000, unhandled, producers, marked };
  const { text, shortened } = fitRecord(big, RECORD_MAX_CHARS);
  t.ok(shortened && text.length <= RECORD_MAX_CHARS, `shortened to ${text.length} characters`);
  const cut = decodeRecord(text, offset);
  t.equal(cut.known, offset, 'no offsets told');
  t.equal(cut.producers.length, 64, 'every producer');
  let runsKept = Infinity;
  for (const [i, p] of cut.producers.entries()) {
    const mine = marked.filter((m) => m.producer === i).map((m) => m.sequence);
    const listed = cut.marked.filter((m) => m.producer === i).map((m) => m.sequence);
    runsKept = Math.min(runsKept, listed.length);
    t.same(listed, mine.filter((q) => q <= p.told), `producer ${i}: every unhandled marked message up to its told`);
    // The cut is just below an unhandled marked message left out: what waits on it waits for a lower one.
    if (p.told < p.read) t.ok(mine.includes(p.told + 1), `producer ${i}: told ${p.told}, just below the unhandled ${p.told + 1}`);
    if (!(p.told < p.read)) t.fail(`producer ${i} told whole`);
    if (i === 0) t.ok(listed.length > 0, `producer ${i}: its lowest ${listed.length} runs`);
  }
  t.ok(runsKept >= 1, `at least ${runsKept} run of each`);
  trueAnswers(t, big, cut, producers, offset, big.end, 1000);
});

t.test('records at any limit: random records cut to random sizes stay true', async (t) => {
  let seed = 11;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  let cuts = 0;
  for (let i = 0; i < 200; i++) {
    const offset = Math.floor(random() * 1000);
    const span = 1 + Math.floor(random() * 3000);
    const unhandled = [offset];
    for (let o = offset + 1; o < offset + span; o++) if (random() < 0.3) unhandled.push(o);
    const producers = Array.from({ length: 1 + Math.floor(random() * 6) }, (_, k) => ({ id: (0xd000 + k).toString(16).padStart(16, '0'), read: 400 }));
    const names = new Set();
    // At most one unhandled marked message per unhandled offset.
    const marked = Array.from({ length: Math.floor(random() * Math.min(300, unhandled.length)) }, () => ({ producer: Math.floor(random() * producers.length), sequence: 1 + Math.floor(random() * 400) }))
      .filter((m) => !names.has(`${m.producer}:${m.sequence}`) && names.add(`${m.producer}:${m.sequence}`));
    const record = { offset, end: offset + span, unhandled, producers, marked };
    const limit = 40 + Math.floor(random() * 1200);
    const { text, shortened } = fitRecord(record, limit);
    const cut = decodeRecord(text, offset);
    if (cut === null || (text.length > limit && cut.producers.length > 0)) {
      t.fail(`record ${i} at ${limit}: ${text.length} characters, ${cut === null ? 'unreadable' : 'past the limit'}`);
      return;
    }
    if (shortened) cuts++;
    const w = new RecordView(record);
    const c = new RecordView(cut);
    for (let o = offset; o < offset + span; o++) {
      if (c.handledOffset(o) && !w.handledOffset(o)) {
        t.fail(`record ${i} at ${limit}: offset ${o} counted handled`);
        return;
      }
    }
    for (const p of producers) {
      for (let q = 1; q <= 400; q++) {
        if (c.handledSequence(p.id, q) && !w.handledSequence(p.id, q)) {
          t.fail(`record ${i} at ${limit}: ${p.id} ${q} counted handled`);
          return;
        }
      }
    }
  }
  t.ok(cuts > 100, `premise: ${cuts} of 200 records shortened`);
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
    ['kdp3:' + good.slice(RECORD_PREFIX.length), 'another version'],
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
