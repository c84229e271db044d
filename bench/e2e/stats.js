'use strict';
// The figures of one bench/e2e.js run, from what the producers acknowledged and what the
// consumers' handlers recorded (the message values, never the headers): latency, order
// violations, lost and duplicated messages, per-consumer counts, and the dynamic consumer's
// own flags.

// The flags column: what the dynamic handler was told (bench/e2e/consumer.js sets them).
const OUT_OF_ORDER = 1;
const HAS_ORDERED = 2;
const NOT_ORDERED = 4;
const MARKED = 8;
const REASONS = ['capacity', 'timeout', 'flush', 'unowned', 'other'];
const REASON_SHIFT = 4;

/** The q-quantile (0..1) of a sorted Float64Array, nearest rank. */
function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

const COLUMNS = ['consumer', 'producer', 'n', 'key', 'seq', 'sent', 'at', 'flags', 'kind', 'partition'];

// The kind column: the message's order header kind (0: none), KIND_SPLIT added when its key
// could use more than one partition.
const KINDS = { anchor: 1, spread: 2, moved: 3, return: 4 };
const KIND_SPLIT = 8;

/** The kind column's value for a release's order header (undefined: none). */
function kindCode(order) {
  if (!order) return 0;
  return (KINDS[order.kind] || 0) | (order.width > 1 ? KIND_SPLIT : 0);
}

/** How many values of a sorted array lie in (lo, hi]. */
function countIn(sorted, lo, hi) {
  return countUpTo(sorted, hi) - countUpTo(sorted, lo);
}

/** One worker's record chunks (in the order it sent them) as one set of columns. */
function concatRecords(chunks) {
  const length = chunks.reduce((s, c) => s + c.length, 0);
  const out = { length };
  for (const name of COLUMNS) {
    out[name] = new (chunks.length ? chunks[0][name].constructor : Float64Array)(length);
    let offset = 0;
    for (const c of chunks) {
      out[name].set(c[name], offset);
      offset += c.length;
    }
  }
  return out;
}

/** Concatenates the workers' record columns, each worker's rows keeping their handling order. */
function merge(parts) {
  const length = parts.reduce((s, p) => s + p.length, 0);
  const out = { length, worker: new Uint8Array(length), index: new Uint32Array(length) };
  for (const name of COLUMNS) out[name] = new parts[0][name].constructor(length);
  let offset = 0;
  parts.forEach((p, w) => {
    for (const name of COLUMNS) out[name].set(p[name], offset);
    out.worker.fill(w, offset, offset + p.length);
    for (let i = 0; i < p.length; i++) out.index[offset + i] = i;
    offset += p.length;
  });
  return out;
}

/**
 * producers: [{ sent, ackedMask }] by producer index; parts: each consumer worker's records;
 * consumers: how many consumers there were; keys: the key space.
 *
 * A message is identified by (producer, n). The records are read in handling order (the
 * handler's clock, then the worker's own order): a message's first handling is checked
 * against the highest sequence already handled for its (producer, key) — lower is an order
 * violation — and later handlings of it are duplicates (counted once per message). A
 * violation counts the late message: one message that went early (flagged or not) makes a
 * violation of each earlier one handled after it, and those late ones need not be flagged
 * (unflaggedViolations, in the JSON).
 */
function summarizeRun({ producers, parts, consumers, keys, measureFrom = -Infinity }) {
  const r = merge(parts);
  const order = new Uint32Array(r.length);
  for (let i = 0; i < r.length; i++) order[i] = i;
  order.sort((a, b) => (r.at[a] - r.at[b]) || (r.worker[a] - r.worker[b]) || (r.index[a] - r.index[b]));

  const handled = producers.map((p) => new Uint8Array(p.sent));
  const firstAt = new Float64Array(r.length);
  const highest = new Int32Array(producers.length * keys).fill(-1);
  // Whether the message that set `highest` was flagged: a violation is then one it announced.
  const highestFlagged = new Uint8Array(producers.length * keys);
  // Latency of the messages sent in the measured window (from measureFrom, after the warm-up).
  const latency = new Float64Array(r.length);
  let measured = 0;
  // ... and of those with an order header (a hot key's).
  const markedLatency = new Float64Array(r.length);
  let markedMeasured = 0;
  const perConsumer = new Array(consumers).fill(0);
  let unique = 0;
  let violations = 0;
  let unflaggedViolations = 0;
  let unflaggedMarked = 0;
  let overtakenByFlagged = 0;
  let unannounced = 0;
  let duplicated = 0;
  let flagged = 0;
  let notOrdered = 0;
  let hasOrdered = false;
  let marked = 0;
  const reasons = {};
  let unknown = 0;
  // Per (producer, key): 1 relocated (a moved message), 2 split (a spread message or a width
  // above 1); the sequences of its flagged messages; its violations as (late, overtaking) pairs.
  const keyClass = new Uint8Array(producers.length * keys);
  const flaggedSeqs = new Map();
  const violationPairs = [];
  const split = { messages: 0, ordered: 0 };
  const splitRows = [];
  for (const i of order) {
    const p = r.producer[i];
    const n = r.n[i];
    if (p >= producers.length || n >= producers[p].sent) { unknown++; continue; }
    perConsumer[r.consumer[i]]++;
    const seen = handled[p][n];
    if (seen === 1) duplicated++;
    if (seen < 255) handled[p][n] = seen + 1;
    if (seen > 0) continue;
    firstAt[unique++] = r.at[i];
    if (r.sent[i] >= measureFrom) {
      latency[measured++] = r.at[i] - r.sent[i];
      if (r.flags[i] & MARKED) markedLatency[markedMeasured++] = r.at[i] - r.sent[i];
    }
    const slot = p * keys + r.key[i];
    const kind = r.kind[i];
    if (kind & KIND_SPLIT || (kind & 7) === KINDS.spread) keyClass[slot] = 2;
    else if ((kind & 7) === KINDS.moved && keyClass[slot] === 0) keyClass[slot] = 1;
    const isFlagged = (r.flags[i] & (OUT_OF_ORDER | NOT_ORDERED)) !== 0;
    if (kind & KIND_SPLIT) {
      splitRows.push(i);
      split.messages++;
      if (!isFlagged) split.ordered++;
    }
    if (isFlagged) {
      const list = flaggedSeqs.get(slot);
      if (list === undefined) flaggedSeqs.set(slot, [r.seq[i]]);
      else list.push(r.seq[i]);
    }
    if (r.seq[i] < highest[slot]) {
      violationPairs.push(slot, r.seq[i], highest[slot]);
      violations++;
      if (highestFlagged[slot]) overtakenByFlagged++;
      if (!(r.flags[i] & (OUT_OF_ORDER | NOT_ORDERED))) {
        unflaggedViolations++;
        if (!highestFlagged[slot]) unannounced++;
        if (r.flags[i] & MARKED) unflaggedMarked++;
      }
    }
    else {
      highest[slot] = r.seq[i];
      highestFlagged[slot] = r.flags[i] & (OUT_OF_ORDER | NOT_ORDERED) ? 1 : 0;
    }
    if (r.flags[i] & OUT_OF_ORDER) flagged++;
    if (r.flags[i] & HAS_ORDERED) hasOrdered = true;
    if (r.flags[i] & NOT_ORDERED) notOrdered++;
    if (r.flags[i] & MARKED) marked++;
    const reason = r.flags[i] >> REASON_SHIFT;
    if (reason) reasons[REASONS[reason - 1]] = (reasons[REASONS[reason - 1]] || 0) + 1;
  }
  // A violation (late message L handled after H, sent after it by the same producer) is
  // explained when a message of that producer and key sent after L, up to H, was flagged: each
  // message handed out ordered had its predecessor handed out (or handled, by another consumer)
  // before it, so H can only overtake L across a link that was flagged.
  for (const list of flaggedSeqs.values()) list.sort((a, b) => a - b);
  const byClass = { cold: 0, relocated: 0, split: 0 };
  const className = ['cold', 'relocated', 'split'];
  let unexplained = 0;
  let unexplainedRelocated = 0;
  for (let v = 0; v < violationPairs.length; v += 3) {
    const [slot, late, high] = [violationPairs[v], violationPairs[v + 1], violationPairs[v + 2]];
    byClass[className[keyClass[slot]]]++;
    const list = flaggedSeqs.get(slot);
    if (list === undefined || countIn(list, late, high) === 0) {
      unexplained++;
      if (keyClass[slot] !== 2) unexplainedRelocated++;
    }
  }
  const keysByClass = { relocated: 0, split: 0 };
  for (let k = 0; k < keyClass.length; k++) if (keyClass[k]) keysByClass[className[keyClass[k]]]++;
  let sent = 0;
  let acked = 0;
  let lost = 0;
  let handledNotAcked = 0;
  producers.forEach((p, index) => {
    sent += p.sent;
    for (let n = 0; n < p.sent; n++) {
      if (p.ackedMask[n]) {
        acked++;
        if (handled[index][n] === 0) lost++;
      } else if (handled[index][n] > 0) handledNotAcked++;
    }
  });
  const lat = latency.subarray(0, measured).sort();
  const hops = splitHops(r, splitRows, keys);
  const markedLat = markedLatency.subarray(0, markedMeasured).sort();
  return {
    hops,
    sent, acked, handled: unique, handlings: r.length, lost, duplicated, handledNotAcked, unknown,
    violations, violationsByKeyClass: byClass, unexplainedViolations: unexplained, unexplainedViolationsNotSplit: unexplainedRelocated,
    keysByClass, splitMessages: split.messages, splitOrderedShare: split.messages ? split.ordered / split.messages : null,
    unflaggedViolations, unflaggedWithOrderHeader: unflaggedMarked, overtakenByFlagged, unannouncedViolations: unannounced, flaggedOutOfOrder: flagged, notOrdered: hasOrdered ? notOrdered : null, flaggedReasons: reasons, withOrderHeader: marked,
    latencyMs: { p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), max: lat.length ? lat[lat.length - 1] : NaN },
    markedLatencyMs: { p50: quantile(markedLat, 0.5), p99: quantile(markedLat, 0.99) },
    perConsumer,
    firstHandledAt: firstAt.slice(0, unique).sort(),
  };
}

/**
 * What a split key's change of partition cost its handling: per (producer, key), in sequence
 * order, each message whose predecessor was on another partition (a hop) is counted, with the
 * time it waited beyond its predecessor's handling and its own sending (at - max(predecessor's
 * at, sent)); the same for messages that followed one on the same partition. Hops to a
 * partition another consumer handled are counted apart (they wait for a commit and a read).
 */
function splitHops(r, rows, keys) {
  rows.sort((a, b) => ((r.producer[a] * keys + r.key[a]) - (r.producer[b] * keys + r.key[b])) || (r.seq[a] - r.seq[b]));
  const cross = [];
  const sameConsumer = [];
  const stay = [];
  for (let j = 1; j < rows.length; j++) {
    const a = rows[j - 1];
    const b = rows[j];
    if (r.producer[a] !== r.producer[b] || r.key[a] !== r.key[b] || r.seq[b] !== r.seq[a] + 1) continue;
    const wait = r.at[b] - Math.max(r.at[a], r.sent[b]);
    if (r.partition[a] === r.partition[b]) stay.push(wait);
    else if (r.consumer[a] === r.consumer[b] && r.worker[a] === r.worker[b]) sameConsumer.push(wait);
    else cross.push(wait);
  }
  const figures = (list) => {
    const sorted = Float64Array.from(list).sort();
    return { n: sorted.length, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), sum: sorted.reduce((s, x) => s + Math.max(0, x), 0) };
  };
  return { cross: figures(cross), sameConsumer: figures(sameConsumer), stay: figures(stay) };
}

/**
 * The order violations no flag explains, from summarizeRun's figures: every violation of a key
 * that was never split (never hot or relocated whole: such a key is handed out in order, so any
 * violation of it is a fault, flagged or not) plus the split keys' violations with no flag on
 * the way. This is the count bench:e2e's last line reports.
 */
function unexplainedOrderViolations(figures) {
  const byClass = figures.violationsByKeyClass;
  const unexplainedSplit = figures.unexplainedViolations - figures.unexplainedViolationsNotSplit;
  return byClass.cold + byClass.relocated + unexplainedSplit;
}

/** How many values of a sorted array are <= x. */
function countUpTo(sorted, x) {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Messages sent but not yet handled at each instant of `at` (ms since the epoch): the backlog
 * the handlers saw, beside the committed-offset lag (which a consumer that commits only below
 * its lowest unhandled message can hold up while handling goes on).
 */
function unhandledAt(sentSorted, handledSorted, at) {
  return at.map((t) => countUpTo(sentSorted, t) - countUpTo(handledSorted, t));
}

/**
 * The least-squares slope of lag samples { t (s), total } taken from `fromT` to `toT` seconds:
 * messages per second the lag grew by (a group that keeps up: ~0; one that does not: its
 * shortfall). NaN with fewer than two samples.
 */
function lagSlope(samples, fromT, toT) {
  let n = 0;
  let st = 0;
  let sy = 0;
  let stt = 0;
  let sty = 0;
  for (const { t, total } of samples) {
    if (t < fromT || t > toT) continue;
    n++;
    st += t;
    sy += total;
    stt += t * t;
    sty += t * total;
  }
  const d = n * stt - st * st;
  return n < 2 || d === 0 ? NaN : (n * sty - st * sy) / d;
}

module.exports = { summarizeRun, unexplainedOrderViolations, concatRecords, unhandledAt, quantile, lagSlope, kindCode, COLUMNS, OUT_OF_ORDER, HAS_ORDERED, NOT_ORDERED, MARKED, REASONS, REASON_SHIFT };
