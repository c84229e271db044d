'use strict';
// Values and records of the fault scenarios (lib/faults.js and its worker processes).
//
// Value (24 bytes): [0..3] message id (incarnation * ID_SPAN + number), [4..7] key id,
// [8..11] the message's number among its incarnation's messages of that key (from 0),
// [12..15] a marker, [16..23] the send time (ms, double). Every figure of the scenarios comes
// from these values, independent of the library's headers.
// Consumer log record (40 bytes): id, key id, seq (u32 each), partition (u16), flagged (u8),
// reason (u8, REASONS index), offset, handling time, send time (doubles).

const ID_SPAN = 1 << 24;
const BACKGROUND_KEYS = 2000;
const HOT_SHARES = [0.3, 0.12];
const MARK = 0x6b647046; // 'kdpF'
const RECORD = 40;
const REASONS = [null, 'timeout', 'capacity', 'flush', 'unowned'];

/** The run's keys: `k<i>-<salt>` (Zipf background), then the hot keys `hot<j>-<salt>`. */
function keysOf(salt) {
  const keys = Array.from({ length: BACKGROUND_KEYS }, (_, i) => `k${i}-${salt}`);
  for (let j = 0; j < HOT_SHARES.length; j++) keys.push(`hot${j}-${salt}`);
  return keys;
}

function value(id, keyId, seq, sentAt) {
  const b = Buffer.allocUnsafe(24);
  b.writeUInt32BE(id, 0);
  b.writeUInt32BE(keyId, 4);
  b.writeUInt32BE(seq, 8);
  b.writeUInt32BE(MARK, 12);
  b.writeDoubleBE(sentAt, 16);
  return b;
}

function parseValue(b) {
  if (!Buffer.isBuffer(b) || b.length !== 24 || b.readUInt32BE(12) !== MARK) return null;
  return { id: b.readUInt32BE(0), keyId: b.readUInt32BE(4), seq: b.readUInt32BE(8), sentAt: b.readDoubleBE(16) };
}

function writeRecord(r, v, m, info, at) {
  r.writeUInt32BE(v.id, 0);
  r.writeUInt32BE(v.keyId, 4);
  r.writeUInt32BE(v.seq, 8);
  r.writeUInt16BE(m.partition, 12);
  r.writeUInt8(info.ordered === false || info.outOfOrder ? 1 : 0, 14);
  r.writeUInt8(Math.max(0, REASONS.indexOf(info.reason ?? null)), 15);
  r.writeDoubleBE(m.offset, 16);
  r.writeDoubleBE(at, 24);
  r.writeDoubleBE(v.sentAt, 32);
}

/** The records of a consumer log file's content (a record cut short by a kill is dropped). */
function readRecords(buf) {
  const out = [];
  for (let o = 0; o + RECORD <= buf.length; o += RECORD) {
    out.push({
      id: buf.readUInt32BE(o), keyId: buf.readUInt32BE(o + 4), seq: buf.readUInt32BE(o + 8), partition: buf.readUInt16BE(o + 12),
      flagged: buf[o + 14] === 1, reason: REASONS[buf[o + 15]], offset: buf.readDoubleBE(o + 16), at: buf.readDoubleBE(o + 24),
      sentAt: buf.readDoubleBE(o + 32),
    });
  }
  return out;
}

module.exports = { ID_SPAN, BACKGROUND_KEYS, HOT_SHARES, RECORD, REASONS, keysOf, value, parseValue, writeRecord, readRecords };
