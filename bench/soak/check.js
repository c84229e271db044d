'use strict';
// The soak's count of lost, duplicated and out-of-order messages, from the message values
// only (test/kafka/lib/faults-values.js: message id, key id, the message's number among its
// producer's messages of that key), never from the library's headers. Every message is
// counted as it is handled, in fixed-size arrays allocated (and touched) up front, so that a
// run of millions of messages measures the library's memory, not the checker's:
//   - per message: acknowledged (a delivery report without error), the consumer instance that
//     handled it first;
//   - per (producer, key): the highest number handled, the highest flagged one (ordered:
//     false) handled.
// A message handled again is a duplicate: a re-read when another consumer instance handles
// it (the partition moved, and its new owner reads from the committed offset), else a bad
// duplicate. Re-reads are left out of the order count.
// Order: a message whose number is below the highest handled of its (producer, key) is a
// violation. It is explained when a flagged message of that (producer, key) numbered above it
// was handled before it: a message handed out in order had its predecessor handled first, so
// one that overtakes an earlier one crossed a flagged link (the rule of bench/e2e/stats.js,
// counted as the messages come instead of over the whole record afterwards).

const F = require('../../test/kafka/lib/faults-values');

const EXAMPLES = 5;

class Checker {
  /** producers: how many; perProducer: messages each sends at most; keys: the key space. */
  constructor(producers, perProducer, keys) {
    if (perProducer > F.ID_SPAN) throw new RangeError(`at most ${F.ID_SPAN} messages per producer (${perProducer})`);
    this.producers = producers;
    this.perProducer = perProducer;
    this.keys = keys;
    // Written once here, so that their pages are resident before the run, not added to its curve.
    this.acked = Array.from({ length: producers }, () => new Uint8Array(perProducer).fill(0));
    this.firstBy = Array.from({ length: producers }, () => new Uint8Array(perProducer).fill(0));
    this.highest = new Int32Array(producers * keys).fill(-1);
    this.highestFlagged = new Int32Array(producers * keys).fill(-1);
    // Where the highest handled was (partition, offset, consumer), for the examples.
    this.highestAt = Array.from({ length: 3 }, () => new Int32Array(producers * keys).fill(-1));
    this.sent = new Array(producers).fill(0);
    this.ackedCount = 0;
    this.failed = 0;
    this.unique = 0;
    this.handlings = 0;
    this.rereads = 0;
    this.badDuplicates = 0;
    this.violations = 0;
    this.explained = 0;
    this.unexplained = 0;
    this.flagged = 0;
    this.reasons = {};
    this.foreign = 0;
    this.examples = { order: [], duplicate: [], lost: [] };
    // KDP_SOAK_TRACE=FILE: each (producer, key)'s handled messages kept, with their order headers
    // and flags, and written to FILE at its first unexplained violation (to find which link broke).
    this.traceFile = process.env.KDP_SOAK_TRACE || undefined;
    this.traces = new Map();
    this.t0 = Date.now();
  }

  trace(slot, consumer, message, v, info, note) {
    if (this.traceFile === undefined) return;
    let list = this.traces.get(slot);
    if (list === undefined) this.traces.set(slot, (list = [...(this.notes ?? [])]));
    const header = (message.headers ?? []).map((h) => Object.entries(h).map(([k, x]) => `${k}=${String(x)}`).join(',')).join(' ');
    list.push(`${Date.now() - this.t0}ms c${consumer} ${message.partition}/${message.offset} #${v.seq}${info.ordered === false ? ` FLAG:${info.reason}` : ''}${note} ${header}`);
  }

  /** A consumer's event, into every trace (KDP_SOAK_TRACE). */
  note(text) {
    if (this.traceFile === undefined) return;
    for (const list of this.traces.values()) list.push(`${Date.now() - this.t0}ms ${text}`);
    (this.notes ??= []).push(`${Date.now() - this.t0}ms ${text}`);
  }

  dumpTrace(slot, text) {
    if (this.traceFile === undefined || this.dumped) return;
    this.dumped = true;
    require('node:fs').writeFileSync(this.traceFile, `${text}\n${this.traces.get(slot).join('\n')}\n`);
  }

  /** The value of producer p's next message of key `keyId` (seq: its number among p's messages of that key). */
  value(p, keyId, seq) {
    const n = this.sent[p]++;
    return F.value(p * F.ID_SPAN + n, keyId, seq, Date.now());
  }

  /** A delivery report of a value made by value(). */
  delivered(err, value) {
    const v = F.parseValue(value);
    if (v === null) return;
    if (err) {
      this.failed++;
      return;
    }
    const p = Math.floor(v.id / F.ID_SPAN);
    const n = v.id % F.ID_SPAN;
    if (this.acked[p][n] === 0) this.ackedCount++;
    this.acked[p][n] = 1;
  }

  /** A message handed to consumer instance `consumer` (0..254), with what the handler was told. */
  handled(consumer, message, info) {
    this.handlings++;
    const v = F.parseValue(message.value);
    const p = v === null ? -1 : Math.floor(v.id / F.ID_SPAN);
    const n = v === null ? -1 : v.id % F.ID_SPAN;
    if (v === null || p >= this.producers || n >= this.sent[p] || v.keyId >= this.keys) {
      this.foreign++;
      return;
    }
    const by = this.firstBy[p][n];
    if (by !== 0) {
      this.trace(p * this.keys + v.keyId, consumer, message, v, info, ' (again)');
      if (by - 1 === consumer) {
        this.badDuplicates++;
        this.example('duplicate', `producer ${p} #${n} handled twice by consumer ${consumer} (${message.partition}/${message.offset})`);
      } else this.rereads++;
      return;
    }
    this.firstBy[p][n] = consumer + 1;
    this.unique++;
    const slot = p * this.keys + v.keyId;
    const flagged = info.ordered === false;
    this.trace(slot, consumer, message, v, info, '');
    if (flagged) {
      this.flagged++;
      const reason = info.reason ?? 'none';
      this.reasons[reason] = (this.reasons[reason] ?? 0) + 1;
      if (v.seq > this.highestFlagged[slot]) this.highestFlagged[slot] = v.seq;
    }
    if (v.seq < this.highest[slot]) {
      this.violations++;
      if (this.highestFlagged[slot] > v.seq) this.explained++;
      else {
        this.unexplained++;
        const [atPartition, atOffset, atConsumer] = this.highestAt.map((a) => a[slot]);
        this.example('order', `producer ${p}, key ${v.keyId}: #${v.seq} handled after #${this.highest[slot]} with no flag between ` +
          `(${message.partition}/${message.offset}, consumer ${consumer}; #${this.highest[slot]} at ${atPartition}/${atOffset}, consumer ${atConsumer})`);
        this.dumpTrace(slot, this.examples.order[0]);
      }
    } else {
      this.highest[slot] = v.seq;
      this.highestAt[0][slot] = message.partition;
      this.highestAt[1][slot] = message.offset;
      this.highestAt[2][slot] = consumer;
    }
  }

  example(kind, text) {
    if (this.examples[kind].length < EXAMPLES) this.examples[kind].push(text);
  }

  /** Acknowledged, never handled (so far). */
  lost() {
    let lost = 0;
    for (let p = 0; p < this.producers; p++) {
      for (let n = 0; n < this.sent[p]; n++) {
        if (this.acked[p][n] === 1 && this.firstBy[p][n] === 0) {
          lost++;
          this.example('lost', `producer ${p} #${n} acknowledged, never handled`);
        }
      }
    }
    return lost;
  }

  /** Handled, never acknowledged. */
  handledNotAcked() {
    let count = 0;
    for (let p = 0; p < this.producers; p++) for (let n = 0; n < this.sent[p]; n++) if (this.acked[p][n] === 0 && this.firstBy[p][n] !== 0) count++;
    return count;
  }

  /** The figures at the end of a run. */
  figures() {
    const sent = this.sent.reduce((a, b) => a + b, 0);
    return {
      sent, acked: this.ackedCount, failed: this.failed, handled: this.unique, handlings: this.handlings,
      lost: this.lost(), handledNotAcked: this.handledNotAcked(), duplicated: this.rereads + this.badDuplicates,
      rereads: this.rereads, badDuplicates: this.badDuplicates, foreign: this.foreign,
      violations: this.violations, explainedByFlag: this.explained, orderViolations: this.unexplained,
      flagged: this.flagged, flaggedReasons: this.reasons, examples: this.examples,
    };
  }
}

module.exports = { Checker };
