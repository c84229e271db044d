'use strict';
// Properties of concurrent handling in key order (DynamicConsumer's `concurrency`, `ordering`,
// revokes and runBatches()), over random cases, each replayed from its seed.
//
// Dispatcher level (no broker): a group of 1–3 members, each a Resequencer and a Dispatcher
// driven as DynamicConsumer drives them (src/consumer/consumer.ts), reads partition logs of keyed
// messages, keyless ones and spread keys (order headers: chains across partitions) of 1–3
// producers. A seeded driver takes one step at a time: reads a few messages, ends one handler
// call under way (calls end in random order; a handler may also return at once or throw), commits,
// lets held messages expire (a fake clock), feeds the group's committed offsets, revokes
// partitions (drop(), then the hand-over once their calls have ended, or at once: a revoke
// timeout), assigns free partitions, stops a member (halt(), commit, forget, clear; it then runs
// again with nothing). Handlers fail (throw or reject) by a plan per message, within and beyond
// the retry budget (beyond it the dispatcher gives up and the member stops). A calm phase then
// gives every partition an owner and runs to the end. Checked on every call and commit:
// - at most `concurrency` calls of a member at once; a batch holds one lane's messages, at most
//   handlerBatchSize;
// - 'key' ('partition'): never two calls of one key (partition) in a member at once, each key's
//   (partition's) messages called in release order, a failed call made again in place before
//   anything else of its lane, while a partition of its messages is still the member's;
// - each message told `ordered` as released, except those flagged 'unowned' by the dispatcher,
//   which must be exactly the first kept behind one of its key that left with its partition
//   (dropped while waiting, or whose call ended unhandled on a revoked partition);
// - 'key': a message told ordered whose producer's previous message of the key is known was
//   called after that one was handled (by any member), also after the member released that
//   one and it left unhandled (with its partition, or at a stop: counted apart, as `known`);
// - every release handed out once unless dropped or halted, handled at most once;
// - a commit never passes a message not handled (and never goes back); at the end every message
//   was handled and every partition is committed at its log end.
//
// Mock cluster level: see the second half of the file.
//
// A failure prints its seed: PROPERTY_SEED=<seed> replays one case (and runs no mock cluster
// case unless PROPERTY_MOCK_SEEDS=<seed,...> names some), PROPERTY_TRACE=1 prints its steps;
// PROPERTY_CASES=<n> runs more cases.

const t = require('tap');
const { Dispatcher } = require('../../build/delivery/dispatch');
const { Resequencer, encodeOrderHeader, ORDER_HEADER, ORDER_ANCHOR, ORDER_SPREAD, ORDER_RETURN } = require('../..');
const { prng } = require('../lib/random-keys');

const TOPIC = 't';
const CASES = Number(process.env.PROPERTY_CASES || 300);
const ONLY = process.env.PROPERTY_SEED === undefined ? undefined : Number(process.env.PROPERTY_SEED);
const TRACE = Boolean(process.env.PROPERTY_TRACE);
/** The resequencer's maxWaitMs, on the fake clock. */
const MAX_WAIT_MS = 100;

const turn = () => new Promise((resolve) => setImmediate(resolve));
const tick = (ms = 1) => new Promise((resolve) => setTimeout(resolve, ms));

/** A case's shape, from its seed. */
function caseOf(seed) {
  const rand = prng(seed);
  const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const retries = int(0, 3);
  return {
    seed,
    rand,
    int,
    pick,
    partitions: int(1, 5),
    members: int(1, 3),
    producers: int(1, 3),
    keys: int(1, 16),
    hotShare: pick([0, 0.3, 0.6, 1]),
    nullShare: pick([0, 0, 0.1]),
    messages: int(20, 150),
    concurrency: rand() < 0.4 ? pick([1, 2, 4]) : int(1, 64),
    ordering: pick(['key', 'key', 'key', 'partition', 'none']),
    retries,
    batchLimit: rand() < 0.25 ? int(1, 6) : 0,
    failShare: pick([0, 0.05, 0.15]),
    syncShare: pick([0, 0.2, 0.6]),
    revokes: rand() < 0.75,
    stops: rand() < 0.4,
    maxBuffered: pick([2, 8, 1000]),
  };
}

function describe(c) {
  return `seed ${c.seed}: ${c.members} members, ${c.partitions} partitions, ${c.producers} producers, ${c.keys} keys (hot ${c.hotShare}), ` +
    `${c.messages} messages, concurrency ${c.concurrency}, ordering '${c.ordering}', retries ${c.retries}, batch ${c.batchLimit}, ` +
    `fail ${c.failShare}, sync ${c.syncShare}, revokes ${c.revokes}, stops ${c.stops}, maxBufferedMessages ${c.maxBuffered}`;
}

/**
 * The partition logs: each message { id, partition, offset, key, producer, header, fails } —
 * `fails`: how many of its first calls fail (over all members and runs). A hot key's producer
 * opens a chain now and then (ANCHOR on the key's partition, SPREADs over `width` partitions,
 * a RETURN closes it); each chained message names its predecessor, its partition, and now and
 * then its offset (an ordered handoff).
 */
function logsOf(c) {
  const { rand, int } = c;
  const logs = Array.from({ length: c.partitions }, () => []);
  const hot = Math.round(c.keys * c.hotShare);
  const open = new Map();
  const sequence = new Array(c.producers).fill(0);
  const bySequence = new Map();
  for (let i = 0; i < c.messages; i++) {
    const producer = int(0, c.producers - 1);
    const pid = (0xa000 + producer).toString(16).padStart(16, '0');
    const key = rand() < c.nullShare ? null : int(0, c.keys - 1);
    const normal = key === null ? int(0, c.partitions - 1) : (key * 7) % c.partitions;
    let partition = normal;
    let header;
    const chain = open.get(`${producer}:${key}`);
    if (key !== null && key < hot && c.partitions > 1 && (chain !== undefined || rand() < 0.3)) {
      const seq = ++sequence[producer];
      const width = chain === undefined ? int(2, c.partitions) : chain.width;
      let kind = ORDER_ANCHOR;
      if (chain !== undefined) {
        kind = rand() < 0.15 ? ORDER_RETURN : ORDER_SPREAD;
        if (kind === ORDER_SPREAD) partition = (normal + int(0, width - 1)) % c.partitions;
      }
      const offset = logs[partition].length;
      header = chain === undefined
        ? encodeOrderHeader(kind, pid, seq, 0, width, c.partitions, 0)
        : encodeOrderHeader(kind, pid, seq, chain.last, width, c.partitions, 0, chain.partition, rand() < 0.5 ? chain.offset : -1);
      if (kind === ORDER_RETURN) open.delete(`${producer}:${key}`);
      else open.set(`${producer}:${key}`, { width, last: seq, partition, offset });
      bySequence.set(`${pid}:${key}:${seq}`, `${partition}:${offset}`);
    }
    const offset = logs[partition].length;
    logs[partition].push({ id: `${partition}:${offset}`, partition, offset, key, producer, header, fails: rand() < c.failShare ? int(1, c.retries + 2) : 0 });
  }
  return { logs, bySequence };
}

/** A consumed message as node-rdkafka gives it (a new object per read), with its log entry. */
function read(entry) {
  return {
    topic: TOPIC, partition: entry.partition, offset: entry.offset, key: entry.key === null ? null : Buffer.from(`k${entry.key}`),
    value: Buffer.from(entry.id), size: 8, headers: entry.header === undefined ? [] : [{ [ORDER_HEADER]: entry.header }], log: entry,
  };
}

const tps = (partitions) => [...partitions].map((partition) => ({ topic: TOPIC, partition }));

/** A released entry's place in its chain (producer and sequence), and its predecessor's, when it carries an order header. */
const linkOf = (e) => (e.order ? `${e.order.producerId}:${e.order.sequence}` : undefined);
const previousOf = (e) => (e.order ? `${e.order.producerId}:${e.order.previous}` : undefined);

/**
 * Runs one case. Returns { violations, known, stats }: `known` are violations of one class, kept
 * apart (a key's message handed out ordered after the member released its predecessor, which
 * then left unhandled: the Dispatcher tells the Resequencer, see the chain tests below).
 */
async function runCase(c) {
  const { rand, int, pick } = c;
  const { logs, bySequence } = logsOf(c);
  const violations = [];
  const known = [];
  const trace = [];
  const stats = { calls: 0, most: 0, flagged: 0, revokes: 0, stops: 0, failures: 0, gaveUp: 0, batches: 0 };
  const note = (text) => {
    if (TRACE) trace.push(text);
  };
  // After the first violation the case only ends its calls (no more checks).
  let closing = false;
  const fail = (text) => {
    if (closing) return;
    if (violations.length < 12) violations.push(text);
    note(`VIOLATION ${text}`);
  };
  let clock = 0;
  let calm = false;
  const committed = new Array(c.partitions).fill(0);
  /** Successful calls per message (by any member, any run), and calls so far (the failure plan). */
  const handled = new Map();
  const attempts = new Map();
  /** Handler calls under way that return a promise: the driver ends them, in random order. */
  const calls = [];

  const laneOf = (m) => (c.ordering === 'partition' ? `p${m.partition}` : c.ordering === 'key' && m.key !== null ? `k${m.key}` : undefined);

  function member(index) {
    const X = {
      index, epoch: 0, owned: new Set(), revoking: new Map(), readPos: new Map(), handovers: [],
      // Per release: its entry. Waiting entries per lane (release order) and without one; lanes with a call under way.
      entries: new Map(), lanes: new Map(), loose: new Set(), busy: new Map(), retrying: new Set(),
      // Messages released to it that left unhandled (dropped, halted, a call given up), by id.
      lost: new Map(),
      under: 0, expectFail: false,
    };
    X.r = new Resequencer({ maxBufferedMessages: c.maxBuffered, maxWaitMs: MAX_WAIT_MS }, () => clock);
    X.r.assign(TOPIC, []);
    X.d = new Dispatcher(X.r, { retries: c.retries, retryBackoffMs: 0, ordering: c.ordering }, {
      handle: (m, info) => handle(X, [m], [info]),
      handleBatch: (ms, infos) => handle(X, ms, infos),
      owns: (tp) => X.owned.has(Number(tp.slice(TOPIC.length + 1))),
      handlerError: (error, m) => failed(X, error, m),
      fail: (error) => {
        if (!X.expectFail) fail(`member ${X.index}: gave up on ${error.partition}:${error.offset} after ${error.attempts} calls, retries ${c.retries}`);
        X.expectFail = false;
        stats.gaveUp++;
        note(`member ${X.index}: gives up on ${error.partition}:${error.offset}; stops`);
        halted(X);
        // As DynamicConsumer's fail(): stop(0), a microtask later.
        queueMicrotask(() => stop(X));
      },
      progress: () => {},
    });
    X.d.begin(c.concurrency, c.batchLimit);
    // Every release goes through accept(): also those of committedRead().
    const accept = X.d.accept.bind(X.d);
    X.d.accept = (released) => {
      // 'key': a release left out (its partition leaving) leaves the next of its key, and its
      // successor in its chain, in the same batch flagged: they are not in order after it.
      const left = new Set();
      for (const r of released) {
        const e = released1(X, r);
        const key = r.message.log.key;
        if (c.ordering !== 'key' || key === null || e === undefined) continue;
        if (e.state === 'left') {
          left.add(`k${key}`);
          if (linkOf(e) !== undefined) left.add(`c${linkOf(e)}`);
        } else if (left.delete(`k${key}`) | (previousOf(e) !== undefined && left.delete(`c${previousOf(e)}`))) e.flag = true;
      }
      accept(released);
    };
    return X;
  }

  /** A release reaches member X's dispatcher: it waits in its lane (or with none), unless its partition is leaving. */
  function released1(X, r) {
    const m = r.message;
    const e = { id: m.log.id, log: m.log, message: m, order: r.order, partition: m.partition, epoch: X.epoch, ordered: r.ordered, reason: r.reason, flag: false, state: 'waiting', task: undefined };
    X.entries.set(m, e);
    if (X.revoking.has(m.partition)) {
      leave(X, e, 'left');
      return e;
    }
    if (!X.owned.has(m.partition)) fail(`member ${X.index}: released ${e.id}, of a partition it does not own`);
    const lane = laneOf(m);
    if (lane === undefined) X.loose.add(e);
    else if (X.lanes.has(lane)) X.lanes.get(lane).push(e);
    else X.lanes.set(lane, [e]);
    return e;
  }

  /** A handler call (of one message, or a batch). */
  function handle(X, messages, infos) {
    const entries = messages.map((m) => X.entries.get(m));
    if (entries.some((e) => e === undefined)) {
      fail(`member ${X.index}: called with a message never released to it`);
      return undefined;
    }
    X.under++;
    stats.calls++;
    stats.most = Math.max(stats.most, X.under);
    if (X.under > c.concurrency) fail(`member ${X.index}: ${X.under} calls at once, concurrency ${c.concurrency}`);
    if (messages.length > Math.max(1, c.batchLimit)) fail(`member ${X.index}: a batch of ${messages.length}, limit ${c.batchLimit}`);
    if (messages.length > 1) stats.batches++;
    const first = entries[0];
    const lane = laneOf(first.message);
    if (entries.some((e) => laneOf(e.message) !== lane) || (lane === undefined && entries.length > 1)) {
      fail(`member ${X.index}: one call of ${entries.map((e) => e.id).join(' ')}: more than one lane`);
    }
    let task = first.task;
    if (first.state === 'started' && task !== undefined && task.epoch === X.epoch) {
      // Called again after a failure: the same messages, once the failure was seen, nothing else of its lane in between.
      if (task.entries.length !== entries.length || task.entries.some((e, i) => e !== entries[i])) fail(`member ${X.index}: ${first.id} called again with other messages`);
      if (!task.retry) fail(`member ${X.index}: ${first.id} called again while its call is under way or without a failure`);
      task.retry = false;
      X.retrying.delete(task);
    } else {
      task = { entries, epoch: X.epoch, lane, calls: 0, under: false, retry: false };
      entries.forEach((e, i) => {
        if (e.state !== 'waiting' || e.epoch !== X.epoch) fail(`member ${X.index}: ${e.id} handed out again (${e.state}${e.epoch !== X.epoch ? ', an earlier run' : ''})`);
        if (lane !== undefined) {
          const queue = X.lanes.get(lane);
          if (queue === undefined || queue[0] !== e) {
            fail(`member ${X.index}, lane ${lane}: ${e.id} called before ${queue ? queue[0].id : 'nothing'} (release order)`);
            if (queue !== undefined && queue.includes(e)) queue.splice(queue.indexOf(e), 1);
          } else queue.shift();
          if (queue !== undefined && queue.length === 0) X.lanes.delete(lane);
        } else X.loose.delete(e);
        e.state = 'started';
        e.task = task;
        told(X, e, infos[i]);
        if (c.ordering === 'key') afterPredecessor(X, e, infos[i], entries.slice(0, i));
      });
      if (lane !== undefined) {
        const other = X.busy.get(lane);
        if (other !== undefined) fail(`member ${X.index}, lane ${lane}: ${first.id} called while ${other.entries[0].id}'s call is not over`);
        X.busy.set(lane, task);
      }
    }
    task.calls++;
    task.under = true;
    for (const e of entries) attempts.set(e.id, (attempts.get(e.id) ?? 0) + 1);
    const failing = !calm && attempts.get(first.id) <= first.log.fails;
    const call = { X, task, failing, id: stats.calls };
    note(`member ${X.index}: call ${call.id} of ${entries.map((e) => e.id).join(' ')} (attempt ${task.calls}${failing ? ', fails' : ''})`);
    if (rand() < c.syncShare) return end(call);
    return new Promise((resolve, reject) => {
      call.resolve = resolve;
      call.reject = reject;
      calls.push(call);
    });
  }

  /** What a message was told against what it should have been told. */
  function told(X, e, info) {
    const want = e.flag && e.ordered ? { ordered: false, reason: 'unowned' } : { ordered: e.ordered, reason: e.ordered ? undefined : e.reason };
    if (!want.ordered) stats.flagged++;
    if (info.ordered !== want.ordered || info.outOfOrder !== !want.ordered || info.reason !== want.reason) {
      fail(`member ${X.index}: ${e.id} told ordered ${info.ordered} (${info.reason}), expected ${want.ordered} (${want.reason})` +
        (e.flag ? ': it is the first kept behind one of its key, or of its chain, that left' : ''));
    }
  }

  /** 'key': a message told ordered whose producer's previous message of the key is known comes after that one was handled. */
  function afterPredecessor(X, e, info, before) {
    const order = info.order;
    if (!info.ordered || order === null || order.previous === 0 || order.kind === 'anchor') return;
    const previous = bySequence.get(`${order.producerId}:${e.log.key}:${order.previous}`);
    if (previous === undefined) {
      fail(`${e.id}: its predecessor (sequence ${order.previous}) is not in the logs`);
      return;
    }
    if (handled.get(previous) || before.some((b) => b.id === previous)) return;
    const text = `member ${X.index}: ${e.id} (k${e.log.key}, sequence ${order.sequence}) called ordered before its predecessor ${previous} was handled`;
    if (X.lost.has(previous)) known.push(`${text}: this member released ${previous} before, and it left unhandled (${X.lost.get(previous)})`);
    else fail(text);
  }

  /** A release leaves member X unhandled. */
  function leave(X, e, state) {
    e.state = state;
    X.lost.set(e.id, state);
  }

  /** A call ends: it throws (a handler that returned no promise) or the failure goes to the caller; else its messages are handled. */
  function end(call) {
    const { X, task } = call;
    X.under--;
    task.under = false;
    if (call.failing) {
      stats.failures++;
      note(`member ${X.index}: call ${call.id} fails`);
      throw new Error(`planned failure of ${task.entries[0].id}`);
    }
    note(`member ${X.index}: call ${call.id} done`);
    for (const e of task.entries) {
      handled.set(e.id, (handled.get(e.id) ?? 0) + 1);
      if (e.state === 'ok') fail(`member ${X.index}: ${e.id} handled twice from one release`);
      e.state = 'ok';
    }
    if (task.epoch === X.epoch && task.lane !== undefined && X.busy.get(task.lane) === task) X.busy.delete(task.lane);
    return undefined;
  }

  /** The dispatcher saw a failed call (hooks.handlerError): what must follow. */
  function failed(X, error, m) {
    const e = X.entries.get(m);
    const task = e?.task;
    if (task === undefined || task.entries[0] !== e) {
      fail(`member ${X.index}: a failure reported for ${m.partition}:${m.offset}, which is no call's first message`);
      return;
    }
    if (task.under) fail(`member ${X.index}: a failure of ${e.id} reported while its call is under way`);
    if (error.attempts !== task.calls) fail(`member ${X.index}: ${e.id} failed on its call ${task.calls}, reported as attempt ${error.attempts}`);
    const over = (state) => {
      for (const x of task.entries) leave(X, x, state);
      if (task.epoch === X.epoch && task.lane !== undefined && X.busy.get(task.lane) === task) X.busy.delete(task.lane);
    };
    if (task.epoch !== X.epoch) return over('unhandled'); // stopped meanwhile: read again by the next run
    // A batch is retried whole while any of its messages is still the member's: no one else reads them.
    if (!task.entries.some((x) => X.owned.has(x.partition))) {
      // Revoked: left to the next owner. The next message of its key is not in order after it,
      // nor is each of its messages' successor in its chain.
      over('unhandled');
      const queue = task.lane === undefined ? undefined : X.lanes.get(task.lane);
      if (c.ordering === 'key' && queue !== undefined) {
        queue[0].flag = true;
        const links = new Set(task.entries.map(linkOf).filter((l) => l !== undefined));
        for (const e of queue) if (links.delete(previousOf(e))) e.flag = true;
      }
      return undefined;
    }
    if (error.attempts > c.retries) {
      over('unhandled');
      X.expectFail = true;
      return undefined;
    }
    task.retry = true;
    X.retrying.add(task);
    return undefined;
  }

  /**
   * What waits is dropped of `gone` (partitions); 'key': the first kept behind a dropped one of
   * its key is flagged, and each dropped one's successor in its chain (a key's lane mixes its
   * producers' chains).
   */
  function dropped(X, gone) {
    for (const [lane, queue] of X.lanes) {
      const kept = [];
      let behind = false;
      const links = new Set();
      for (const e of queue) {
        if (gone.has(e.partition)) {
          leave(X, e, 'dropped');
          behind = c.ordering === 'key';
          if (behind && linkOf(e) !== undefined) links.add(linkOf(e));
          continue;
        }
        if (links.delete(previousOf(e))) e.flag = true;
        if (behind) e.flag = true;
        behind = false;
        kept.push(e);
      }
      if (kept.length > 0) X.lanes.set(lane, kept);
      else X.lanes.delete(lane);
    }
    for (const e of X.loose) {
      if (gone.has(e.partition)) {
        leave(X, e, 'dropped');
        X.loose.delete(e);
      }
    }
  }

  /** The dispatcher halted: what waits goes, calls under way are of an earlier run. */
  function halted(X) {
    for (const queue of X.lanes.values()) for (const e of queue) leave(X, e, 'halted');
    for (const e of X.loose) leave(X, e, 'halted');
    for (const task of X.retrying) for (const e of task.entries) leave(X, e, 'unhandled');
    // Calls under way go on, of an earlier run (their messages are read again by the next one).
    for (const e of X.entries.values()) if (e.state === 'started') X.lost.set(e.id, 'under way at a stop');
    X.lanes.clear();
    X.loose.clear();
    X.busy.clear();
    X.retrying.clear();
    X.epoch++;
  }

  function commit(X, offsets, why, mayFail) {
    if (offsets.length === 0) return;
    if (mayFail && rand() < 0.1) {
      note(`member ${X.index}: commit (${why}) fails`);
      X.d.ledger.notCommitted(offsets);
      return;
    }
    note(`member ${X.index}: commits (${why}) ${offsets.map((o) => `${o.partition}@${o.offset}`).join(' ')}`);
    for (const { partition, offset } of offsets) {
      if (!X.owned.has(partition) && !X.revoking.has(partition)) fail(`member ${X.index}: commits ${partition}, which is not its own`);
      if (offset < committed[partition]) fail(`member ${X.index}: commit of ${partition} goes back from ${committed[partition]} to ${offset} (${why})`);
      for (let o = committed[partition]; o < offset; o++) {
        if (!handled.get(`${partition}:${o}`)) {
          fail(`member ${X.index}: commits ${partition}@${offset} (${why}), past ${partition}:${o}, never handled`);
          break;
        }
      }
      committed[partition] = offset;
    }
  }

  function assign(X, partition) {
    note(`member ${X.index}: assigned ${partition} from ${committed[partition]}`);
    X.owned.add(partition);
    X.r.assign(TOPIC, [partition]);
    X.readPos.set(partition, committed[partition]);
  }

  function revoke(X, parts) {
    stats.revokes++;
    note(`member ${X.index}: revoked ${parts.join(' ')}`);
    const h = { X, parts, epoch: X.epoch, done: false };
    for (const p of parts) {
      X.owned.delete(p);
      X.revoking.set(p, h);
    }
    X.handovers.push(h);
    dropped(X, new Set(parts));
    X.d.drop(tps(parts));
    if (X.d.inFlight === 0) handOver(h);
    else X.d.callsOver(tps(parts), 20000).then(() => handOver(h));
  }

  /** As DynamicConsumer's revoke once the calls of the partitions leaving have ended (or revokeTimeoutMs passed). */
  function handOver(h) {
    if (h.done) return;
    h.done = true;
    const { X, parts } = h;
    note(`member ${X.index}: hands over ${parts.join(' ')}`);
    commit(X, X.d.ledger.toCommit(tps(parts), false), 'revoke', true);
    for (const p of parts) X.revoking.delete(p);
    X.handovers.splice(X.handovers.indexOf(h), 1);
    dropped(X, new Set(parts));
    X.d.forget(tps(parts));
  }

  /** As DynamicConsumer's stop (its finish() timed out at once): halt, commit, forget everything, clear; then it runs again. */
  function stop(X) {
    stats.stops++;
    note(`member ${X.index}: stops`);
    X.d.halt();
    halted(X);
    const parts = [...X.owned, ...X.revoking.keys()];
    commit(X, X.d.ledger.toCommit(tps(parts), false), 'stop', true);
    for (const h of X.handovers) h.done = true;
    X.handovers = [];
    X.d.forget(tps(parts));
    X.owned.clear();
    X.revoking.clear();
    X.d.clear();
    X.expectFail = false;
  }

  function readSome(X) {
    const ready = [...X.owned].filter((p) => X.readPos.get(p) < logs[p].length);
    if (ready.length === 0) return false;
    const p = pick(ready);
    for (let n = int(1, 4); n > 0 && X.readPos.get(p) < logs[p].length; n--) {
      const entry = logs[p][X.readPos.get(p)];
      X.readPos.set(p, entry.offset + 1);
      note(`member ${X.index}: reads ${entry.id} k${entry.key}${entry.header ? ` ${entry.header.split(';').slice(1, 5).join(';')}` : ''}`);
      X.d.accept(X.r.push(read(entry)));
    }
    return true;
  }

  function endCall(i, ok) {
    const [call] = calls.splice(i, 1);
    if (ok) call.failing = false;
    try {
      end(call);
      call.resolve();
    } catch (err) {
      call.reject(err);
    }
  }

  function checkSafe(X) {
    for (const p of X.owned) {
      const s = X.d.ledger.safeOffset(TOPIC, p);
      if (s === undefined) continue;
      for (let o = committed[p]; o < s; o++) {
        if (!handled.get(`${p}:${o}`)) {
          fail(`member ${X.index}: safe offset ${p}@${s} passes ${p}:${o}, never handled`);
          break;
        }
      }
    }
  }

  /** Checks after the microtasks of a step: a failure retried, or the dispatcher gave up as it had to. */
  function settledStep(members) {
    for (const X of members) {
      for (const task of X.retrying) fail(`member ${X.index}: ${task.entries[0].id} failed (call ${task.calls}) and was not called again`);
      X.retrying.clear();
      if (X.expectFail) fail(`member ${X.index}: retries used up, and the dispatcher did not give up`);
      X.expectFail = false;
      if (X.d.inFlight > c.concurrency) fail(`member ${X.index}: inFlight ${X.d.inFlight} > concurrency ${c.concurrency}`);
    }
  }

  const members = Array.from({ length: c.members }, (_, i) => member(i));
  const free = () => [...Array(c.partitions).keys()].filter((p) => members.every((X) => !X.owned.has(p) && !X.revoking.has(p)));
  for (const p of free()) assign(pick(members), p);
  await turn();

  const steps = c.messages * 8;
  for (let s = 0; s < steps && violations.length === 0; s++) {
    const X = pick(members);
    const r = rand() * 13;
    if (r < 4) readSome(X);
    else if (r < 8) {
      if (calls.length > 0) endCall(int(0, calls.length - 1), false);
    } else if (r < 9) commit(X, X.d.ledger.toCommit(tps(X.owned), true), 'periodic', true);
    else if (r < 9.6) {
      clock += int(0, MAX_WAIT_MS * 0.6);
      for (const Y of members) Y.d.accept(Y.r.expire());
    } else if (r < 10.2) {
      const awaited = X.r.awaited();
      if (awaited.length > 0) X.d.committedRead(awaited.map(({ topic, partition }) => ({ topic, partition, offset: committed[partition] })));
    } else if (r < 10.5) {
      if (c.revokes && X.owned.size > 0) revoke(X, [...X.owned].filter(() => rand() < 0.5).concat([pick([...X.owned])]).filter((p, i, a) => a.indexOf(p) === i));
    } else if (r < 10.65) {
      const pending = members.flatMap((Y) => Y.handovers);
      if (pending.length > 0) handOver(pick(pending));
    } else if (r < 12) {
      const f = free();
      if (f.length > 0) assign(X, pick(f));
    } else if (r < 12.05) {
      if (c.stops) stop(X);
    } else checkSafe(X);
    await turn();
    settledStep(members);
  }

  // Calm: every partition gets an owner, every call succeeds, everything is read, handled and committed.
  calm = true;
  if (violations.length > 0) return close();
  note('calm');
  let finished = false;
  for (let s = 0; s < 20000 && !finished && violations.length === 0; s++) {
    const f = free();
    if (f.length > 0) assign(pick(members), f[0]);
    else if (calls.length > 0) endCall(int(0, calls.length - 1), true);
    else if (!members.some((X) => readSome(X))) {
      for (const X of members) commit(X, X.d.ledger.toCommit(tps(X.owned), false), 'calm', false);
      finished = committed.every((o, p) => o === logs[p].length) && members.every((X) => !X.d.busy && X.d.inFlight === 0);
      if (!finished) {
        clock += MAX_WAIT_MS;
        for (const X of members) {
          X.d.accept(X.r.expire());
          const awaited = X.r.awaited();
          if (awaited.length > 0) X.d.committedRead(awaited.map(({ topic, partition }) => ({ topic, partition, offset: committed[partition] })));
        }
      }
    }
    await turn();
    settledStep(members);
  }
  if (violations.length > 0) return close();
  if (!finished) {
    fail(`did not finish: committed ${committed.join(' ')} of ${logs.map((l) => l.length).join(' ')}; ` +
      members.map((X) => `member ${X.index}: owns ${[...X.owned].join(',')}, held ${X.r.held}, waiting ${X.d.waiting}, inFlight ${X.d.inFlight}, ` +
        `safe ${[...X.owned].map((p) => `${p}@${X.d.ledger.safeOffset(TOPIC, p)}`).join(' ')}`).join('; '));
  }
  for (const X of members) {
    if (X.under !== 0) fail(`member ${X.index}: ${X.under} calls never ended`);
    const waiting = [...X.lanes.values()].flat().concat([...X.loose]);
    if (waiting.length > 0) fail(`member ${X.index}: ${waiting.map((e) => e.id).join(' ')} released, never handed out`);
  }
  for (const log of logs) for (const m of log) if (!handled.get(m.id)) fail(`${m.id} never handled`);
  return { violations, known, stats, trace };

  /** After a violation: the calls under way end (none is left waiting on a timer), nothing more is checked. */
  async function close() {
    closing = true;
    for (let s = 0; s < 10000 && calls.length > 0; s++) {
      endCall(0, true);
      await turn();
    }
    return { violations, known, stats, trace };
  }
}

t.test('Dispatcher and Resequencer, random cases: lanes, order, flags, at least once', async (t) => {
  const seeds = ONLY !== undefined ? [ONLY] : Array.from({ length: CASES }, (_, i) => i + 1);
  const started = Date.now();
  const total = { calls: 0, flagged: 0, revokes: 0, stops: 0, failures: 0, gaveUp: 0, batches: 0, most: 0 };
  let failedCases = 0;
  let knownCases = 0;
  let knownExample;
  for (const seed of seeds) {
    const c = caseOf(seed);
    const { violations, known, stats, trace } = await runCase(c);
    for (const k of Object.keys(total)) total[k] = k === 'most' ? Math.max(total.most, stats.most) : total[k] + stats[k];
    if (known.length > 0) {
      if (TRACE) t.comment(trace.join('\n'));
      knownCases++;
      knownExample ??= `seed ${seed}: ${known[0]}`;
    }
    if (violations.length > 0) {
      failedCases++;
      if (TRACE) t.comment(trace.join('\n'));
      t.fail(`${describe(c)}\n  ${violations.join('\n  ')}\n  replay: PROPERTY_SEED=${seed} PROPERTY_TRACE=1 npx tap ${__filename}`);
      if (failedCases >= 5) break;
    }
  }
  t.equal(failedCases, 0, `${seeds.length} cases hold every property`);
  t.equal(knownCases, 0, `no message called ordered after a predecessor released here that left unhandled${knownExample ? ` (e.g. ${knownExample})` : ''}`);
  t.comment(`${seeds.length} cases in ${Date.now() - started} ms: ${total.calls} calls (${total.batches} batches of more than one), up to ${total.most} at once; ` +
    `${total.flagged} messages told out of order, ${total.revokes} revokes, ${total.stops} stops (${total.gaveUp} on used-up retries), ${total.failures} failed calls; ` +
    `${knownCases} cases handing out a message ordered before an unhandled predecessor`);
});

/**
 * The known issue the random cases count (not a Dispatcher fault): Resequencer.forget() (a revoke's
 * hand-over, a stop) keeps what it knows of the key's chains, so a message whose predecessor this
 * consumer released — but which left unhandled with its partition, or waited when the consumer
 * stopped — counts that predecessor as released and goes out ordered, before the predecessor's
 * next owner (or this consumer's next run) handles it.
 */
function chainCase(t) {
  const PID = '000000000000a000';
  const r = new Resequencer({}, () => 0);
  r.assign(TOPIC, [0, 1]);
  const c = { owned: new Set([0, 1]), told: new Map(), handled: new Set(), gate: undefined };
  const d = new Dispatcher(r, { retries: 0, retryBackoffMs: 0, ordering: 'key' }, {
    handle: (m, info) => {
      const id = `${m.partition}:${m.offset}`;
      c.told.set(id, info);
      if (id !== '0:0') return void c.handled.add(id);
      return new Promise((resolve) => {
        c.gate = resolve;
      }).then(() => void c.handled.add(id));
    },
    owns: (tp) => c.owned.has(Number(tp.slice(TOPIC.length + 1))),
    handlerError: () => t.fail('no handler fails'),
    fail: () => t.fail('nothing gives up'),
    progress: () => {},
  });
  d.begin(4);
  const message = (partition, offset, header) => ({
    topic: TOPIC, partition, offset, key: Buffer.from('k'), value: Buffer.from(`${partition}:${offset}`), headers: [{ [ORDER_HEADER]: header }],
  });
  // One producer's chain of key k over partitions 0 and 1: ANCHOR 0:0 (sequence 1), SPREAD 1:0 (2,
  // after 0:0), SPREAD 0:1 (3, after 1:0); each names its predecessor's partition and offset.
  c.A = message(0, 0, encodeOrderHeader(ORDER_ANCHOR, PID, 1, 0, 2, 2, 0));
  c.S = message(1, 0, encodeOrderHeader(ORDER_SPREAD, PID, 2, 1, 2, 2, 0, 0, 0));
  c.T = () => message(0, 1, encodeOrderHeader(ORDER_SPREAD, PID, 3, 2, 2, 2, 0, 1, 0));
  c.r = r;
  c.d = d;
  return c;
}


t.test('a spread key: a message after one this consumer released but did not handle is not handed out ordered before it', async (t) => {
  t.test('the predecessor left with its partition (revoke)', async (t) => {
    const c = chainCase(t);
    c.d.accept(c.r.push(c.A));
    c.d.accept(c.r.push(c.S)); // released: waits behind 0:0, under way
    // Partition 1 leaves, as DynamicConsumer revokes it: drop(), then (no call of it under way) forget().
    c.owned.delete(1);
    c.d.drop([{ topic: TOPIC, partition: 1 }]);
    c.d.forget([{ topic: TOPIC, partition: 1 }]);
    c.gate();
    await tick();
    c.d.accept(c.r.push(c.T()));
    await tick();
    t.notOk(c.handled.has('1:0'), '1:0 not handled here: its next owner reads it again from offset 0');
    t.notOk(c.told.get('0:1')?.ordered, '0:1 not handed out ordered (it waits for the group to commit partition 1 past 1:0, or goes flagged)');
  });

  t.test('the predecessor waited when the consumer stopped (the next run)', async (t) => {
    const c = chainCase(t);
    c.d.accept(c.r.push(c.A));
    c.d.accept(c.r.push(c.S)); // released: waits behind 0:0, under way
    // As DynamicConsumer's stop (0:0's call ends meanwhile, 1:0 still waits) and its next run, which reads partition 0 first.
    c.d.halt();
    c.gate();
    await tick();
    const committed = c.d.ledger.toCommit(tps([0, 1]), false);
    t.same(committed.map((o) => `${o.partition}@${o.offset}`), ['0@1', '1@0'], 'committed below 1:0');
    c.d.forget(tps([0, 1]));
    c.d.clear();
    c.r.assign(TOPIC, [0, 1]);
    c.d.accept(c.r.push(c.T()));
    await tick();
    t.notOk(c.told.get('0:1')?.ordered, '0:1 not handed out ordered before 1:0, read again after it');
    c.d.accept(c.r.push({ ...c.S }));
    await tick();
    t.ok(c.handled.has('1:0'), '1:0 handled in the second run');
  });
});

// Mock cluster level: a DynamicProducer writes keyed messages (every tenth on one hot key, which
// it spreads; the rest over a few hundred keys), each value its key's sequence number, into
// librdkafka's mock cluster, at about 1,000 a second while a group of DynamicConsumers with
// concurrency 16–64 and handlers awaiting 0–3 ms handles them: member A starts, B joins, then A
// stops and a member takes its place (A itself run again, or a new consumer C); a few messages'
// first call throws (retried). The seed picks these and the handlers' waits; the brokers' and
// timers' interleaving is not replayed. Checked from the values alone, per run (one run() of a
// member): nothing lost; a message handled twice only by another run or after its partition was
// assigned to the run again (a re-read); never two calls of one key under way in one run; each
// key in order within a run, except a message told ordered: false, one handled before (a
// re-read), or one overtaken through a message told ordered: false. The commits end at the
// logs' ends.

const { clientOptions, kafka } = require('../lib/clients');
const { bootstrapOf, committedAtEnds } = require('../lib/mock-cluster');
const { DynamicProducer, DynamicConsumer } = require('../..');

const MOCK_SEEDS = (process.env.PROPERTY_MOCK_SEEDS ?? (ONLY === undefined ? '1,2' : '')).split(',').filter(Boolean).map(Number);
const MOCK_MESSAGES = 10000;
const MOCK_RATE = 2500;

/**
 * Produces `n` messages over `keys` keys (every tenth on 'hot'), each value its key's sequence,
 * about `rate` a second; `sequence` holds each key's last sequence sent, `failing` the messages
 * (key:sequence) whose first call is to throw, a `failShare` of them drawn from `rand`. Resolves
 * when all are delivered.
 */
async function produceKeyed(p, topic, { n, keys, rate, sequence, failing, failShare, rand }) {
  const sends = [];
  const t0 = Date.now();
  for (let i = 0; i < n; i++) {
    const key = i % 10 === 0 ? 'hot' : `k${(i * 7919) % keys}`;
    const s = (sequence.get(key) ?? 0) + 1;
    sequence.set(key, s);
    if (rand() < failShare) failing.add(`${key}:${s}`);
    sends.push(p.send(topic, String(s), key));
    if (i % 50 === 49) await tick(Math.max(0, t0 + ((i + 1) * 1000) / rate - Date.now()));
  }
  await Promise.all(sends);
}

/** The group's committed offsets of `topic`'s partitions, against their log ends: true when every one is at its end. */
async function committedAtLogEnds(brokers, group, topic, count = 4) {
  const check = new (kafka().KafkaConsumer)({ 'metadata.broker.list': brokers, 'group.id': group, log_level: 3 }, {});
  await new Promise((resolve, reject) => check.connect({}, (e) => (e ? reject(e) : resolve())));
  try {
    const partitions = Array.from({ length: count }, (_, partition) => ({ topic, partition }));
    const committed = await new Promise((resolve, reject) => check.committed(partitions, 5000, (e, x) => (e ? reject(e) : resolve(x))));
    const ends = await Promise.all(partitions.map(({ partition }) => new Promise((resolve, reject) =>
      check.queryWatermarkOffsets(topic, partition, 5000, (e, w) => (e ? reject(e) : resolve(w.highOffset))))));
    return committed.every((x, i) => x.offset === ends[i]);
  } finally {
    await new Promise((resolve) => check.disconnect(resolve));
  }
}

for (const seed of MOCK_SEEDS) {
  t.test(`mock cluster, seed ${seed}: a member joins, one stops and another takes its place, calls fail once; per run: keys never overlap, in order; nothing lost`, async (t) => {
    const rand = prng(seed);
    const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
    const concurrency = int(16, 64);
    const keys = int(100, 600);
    const sameMember = rand() < 0.5;
    const failShare = 0.02;
    const failing = new Set();
    // The handlers' waits, 0–3 ms, from their own stream (the calls' order is the brokers' and timers').
    const waits = prng(seed + 1);
    const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 3 }, { partitioner: 'murmur2_random' }, clientOptions());
    await p.connect();
    t.teardown(() => p.disconnect());
    const brokers = await bootstrapOf(p.client);
    const topic = `concurrency-properties-${seed}`;
    const group = topic;
    await p.send(topic, 'warm-up', null);
    for (let i = 0; i < 100 && !(p.metrics().topics[topic]?.partitions > 0); i++) {
      await p.refreshMetadata(topic).catch(() => undefined);
      await tick(20);
    }
    t.comment(`seed ${seed}: concurrency ${concurrency}, ${keys} keys, ${failShare * 100}% of the messages' first calls throw, ` +
      `the stopped member's place taken by ${sameMember ? 'itself, run again' : 'a new consumer'}`);

    // Every call, in one order of starts and ends; per run, the calls of each key under way and each partition's assignments.
    let events = 0;
    const calls = [];
    const attempts = new Map();
    const overlaps = [];
    const handled = new Set();
    let lastCall = Date.now();
    const t0 = Date.now();
    const handler = (run) => async (m, info) => {
      if (m.key === null) return; // the warm-up message
      const key = m.key.toString();
      const s = Number(m.value.toString());
      const id = `${key}:${s}`;
      const attempt = (attempts.get(id) ?? 0) + 1;
      attempts.set(id, attempt);
      if (process.env.PROPERTY_TRACE && !info.ordered) t.comment(`${Date.now() - t0} ms ${run.name}: ${id} p${m.partition}@${m.offset} ordered false (${info.reason}) ${JSON.stringify(info.order)}`);
      const call = { run: run.name, key, s, id, ordered: info.ordered, start: events++, end: -1, ok: false, partition: m.partition, assignment: run.assigned.get(m.partition) ?? 0 };
      calls.push(call);
      const under = run.underway.get(key) ?? 0;
      if (under > 0) overlaps.push(`${run.name}: ${id} called while ${under} call(s) of ${key} under way`);
      run.underway.set(key, under + 1);
      try {
        if (attempt === 1 && failing.has(id)) throw new Error(`first call of ${id}`);
        const ms = Math.floor(waits() * 4);
        if (ms > 0) await tick(ms);
        call.ok = true;
        handled.add(id);
      } finally {
        call.end = events++;
        run.underway.set(key, run.underway.get(key) - 1);
        lastCall = Date.now();
      }
    };
    // maxWaitMs 3 s: a message whose predecessor (on its own partition, offset unknown) was handled before its
    // partition came to this member waits that long, then goes flagged 'timeout'.
    const options = { concurrency, commitIntervalMs: 100, retryBackoffMs: 5, handlerRetries: 2, resequencer: { maxWaitMs: 3000 }, ...clientOptions() };
    // A short session: the mock coordinator waits up to it (less a second) for the members to rejoin on each rebalance.
    const config = { 'metadata.broker.list': brokers, 'group.id': group, 'auto.offset.reset': 'earliest', 'session.timeout.ms': 2500, 'heartbeat.interval.ms': 250, log_level: 3 };
    const runs = [];
    const start = async (consumer, name) => {
      const run = { name, underway: new Map(), assigned: new Map(), owns: 0 };
      const onAssigned = (list) => {
        run.owns += list.length;
        for (const { partition } of list) run.assigned.set(partition, (run.assigned.get(partition) ?? 0) + 1);
      };
      const onRevoked = (list) => {
        run.owns -= list.length;
      };
      consumer.on('assigned', onAssigned);
      consumer.on('revoked', onRevoked);
      const onError = (err) => t.comment(`${name}: ${err.message}`);
      consumer.on('error', onError);
      if (process.env.PROPERTY_TRACE) {
        for (const event of ['assigned', 'revoked', 'warning']) consumer.on(event, (x) => t.comment(`${Date.now() - t0} ms ${name} ${event} ${Array.isArray(x) ? x.map((o) => o.partition).join(' ') : x.message}`));
      }
      await consumer.connect();
      const done = consumer.run([topic], handler(run)).finally(() => {
        consumer.removeListener('assigned', onAssigned);
        consumer.removeListener('revoked', onRevoked);
        consumer.removeListener('error', onError);
      });
      runs.push({ consumer, name, done, run });
      return run;
    };
    const until = async (ok, ms, what) => {
      const deadline = Date.now() + ms;
      while (!(await ok()) && Date.now() < deadline) await tick(50);
      if (!(await ok())) t.fail(`not within ${ms} ms: ${what} (${handled.size} handled)`);
    };
    const at = {};
    const A = new DynamicConsumer(config, {}, options);
    const runA = await start(A, 'A');
    await until(() => runA.owns > 0, 30000, 'A assigned');
    const sequence = new Map();
    const produced = produceKeyed(p, topic, { n: MOCK_MESSAGES, keys, rate: MOCK_RATE, sequence, failing, failShare, rand: prng(seed + 2) });
    await until(() => handled.size >= MOCK_MESSAGES / 10, 30000, 'a tenth handled');
    at.join = Date.now() - t0;
    const runB = await start(new DynamicConsumer(config, {}, options), 'B');
    await until(() => runB.owns > 0, 30000, 'B assigned');
    at.stop = Date.now() - t0;
    const underwayAtStop = [...runA.underway.values()].reduce((a, b) => a + b, 0);
    await A.stop();
    await runs[0].done;
    at.restart = Date.now() - t0;
    const runC = await start(sameMember ? A : new DynamicConsumer(config, {}, options), sameMember ? 'A (run again)' : 'C');
    await until(() => runC.owns > 0, 30000, `${runC.name} assigned`);
    at.taken = Date.now() - t0;
    await produced;
    // Done once every message was handled, the members quiet, their commits at the logs' ends.
    const total = () => [...sequence.values()].reduce((a, b) => a + b, 0);
    await until(async () => handled.size === total() && Date.now() - lastCall > 500 && (await committedAtLogEnds(brokers, group, topic)), 60000, 'all handled and committed');
    at.end = Date.now() - t0;
    await Promise.all(runs.slice(1).map((x) => x.consumer.stop()));
    await Promise.all(runs.map((x) => x.done));

    const lost = [];
    for (const [key, last] of sequence) for (let s = 1; s <= last; s++) if (!handled.has(`${key}:${s}`)) lost.push(`${key}:${s}`);
    t.same(lost.slice(0, 10), [], `nothing lost (${lost.length} of ${total()} not handled)`);
    t.same(overlaps.slice(0, 5), [], 'never two calls of one key under way in one run');
    // Handled twice: only by another run, or by one run after the message's partition came to it again.
    const ok = calls.filter((c) => c.ok);
    const seen = new Map();
    const twice = [];
    let repeats = 0;
    for (const c of ok) {
      const list = seen.get(c.id) ?? [];
      if (list.length > 0) repeats++;
      if (list.some((x) => x.run === c.run && x.assignment === c.assignment)) twice.push(`${c.run}: ${c.id} twice in assignment ${c.assignment} of partition ${c.partition}`);
      list.push(c);
      seen.set(c.id, list);
    }
    t.same(twice.slice(0, 5), [], `a message handled again only by another run or after a re-read (${repeats} handled again)`);
    // Order within each run: a message below the highest of its key already handled in that run is told
    // ordered: false, was handled before (a re-read), or was overtaken through one told ordered: false.
    const firstEnd = new Map();
    for (const c of ok) if (!firstEnd.has(c.id) || c.end < firstEnd.get(c.id)) firstEnd.set(c.id, c.end);
    const late = [];
    const perRun = new Map();
    let flagged = 0;
    for (const c of [...ok].sort((a, b) => a.start - b.start)) {
      if (!c.ordered) flagged++;
      const k = `${c.run}\u0000${c.key}`;
      let state = perRun.get(k);
      if (state === undefined) perRun.set(k, (state = { top: 0, flagged: [] }));
      const again = firstEnd.get(c.id) < c.start;
      if (c.s < state.top && c.ordered && !again && !state.flagged.some((f) => f > c.s && f <= state.top)) {
        late.push(`${c.run}: ${c.id} after ${c.key}:${state.top}, none between them flagged, not a re-read`);
      }
      if (!c.ordered) state.flagged.push(c.s);
      state.top = Math.max(state.top, c.s);
    }
    t.same(late.slice(0, 5), [], `each key in order within each run (${flagged} handled with ordered: false)`);
    // Across the group: a message told ordered comes after its key's previous one was handled, also after a
    // rebalance or a stop that left a released predecessor unhandled.
    const ahead = ok.filter((c) => c.ordered && c.s > 1 && !(firstEnd.get(`${c.key}:${c.s - 1}`) < c.start));
    t.equal(ahead.length, 0, `across the group, each message told ordered after its predecessor was handled${ahead.length ? ` (e.g. ${ahead[0].run}: ${ahead[0].id})` : ''}`);
    t.comment(`ms from A's start: B joins ${at.join}, A stops ${at.stop} (${underwayAtStop} calls under way), ${runC.name} starts ${at.restart}, ` +
      `takes partitions ${at.taken}, all handled and committed ${at.end}; ${ok.length} handlings of ${total()} messages, ${calls.length - ok.length} calls thrown`);
    await committedAtEnds(t, brokers, group, topic);
  });
}
