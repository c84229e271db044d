'use strict';
// A consumer group with handled records, simulated (resequencer-group-records.test.js says
// what it models and checks): run() returns what happened.
const { Resequencer } = require('../../..');
const { encodeRecord, decodeRecord, fitRecord, RecordView } = require('../../../build/delivery/handled-record');
const { orderOf } = require('../../../build/delivery/message-order');
const { rng, simulate, toMessage } = require('./simulation');

/**
 * `maxChars`: the records' limit (default none): each is committed as fitRecord() shortens it,
 * and what a next owner hands out again because a record left it untold is allowed besides.
 */
function run({ seed, members: memberCount, partitions, messages, kills, revokes, maxChars = Infinity, producers = 6 }) {
  const random = rng(seed);
  const logs = simulate({ seed, producers, keys: 120, partitions, messages, hotKeys: 4 });
  /** The broker: per partition, the last commit that reached it ({ offset, text }). */
  const broker = new Map();
  /** Commits made and not yet at the broker: [due step, partition, commit]. */
  const inTransit = [];
  let step = 0;
  const handledAt = new Map(); // "producer:key:index" -> times handled
  const firstHandled = new Map(); // "producer:key:index" -> the step it was first handled at
  let shortened = 0;
  let untold = 0;
  /** The messages a kill or a record's untold part allows to be handled again (names). */
  const allowed = new Set();
  let unexplained = 0;
  const firstOrder = new Map(); // "producer:key" -> last index first-handled
  let violations = 0;
  let flagged = 0;
  const reasons = {};
  let duplicates = 0;
  let allowedDuplicates = 0;

  const newMember = (id) => ({
    id, r: Object.assign(new Resequencer({ maxBufferedMessages: 1e9, maxWaitMs: 1e12 }, () => step), {}),
    owned: new Set(), since: new Map(), landedStep: new Map(), handledLog: [], cursor: new Map(), unhandled: new Map(), lanes: new Map(), handled: new Map(), landed: new Map(), alive: true,
  });
  const members = Array.from({ length: memberCount }, (_, i) => newMember(i));
  for (const m of members) m.r.useRecords();

  const give = (m, p) => {
    m.owned.add(p);
    m.since.set(p, step);
    m.r.assign('t', [p]);
    const c = broker.get(p);
    if (c !== undefined) {
      const record = decodeRecord(c.text, c.offset);
      // Handled when the record was made, and not told by it (above its `known`): handed out again.
      if (maxChars !== Infinity) {
        const view = new RecordView(record);
        for (let o = Math.max(c.offset, view.known); o < record.end; o++) {
          const v = logs[p][o];
          const made = firstHandled.get(`${v.producer}:${v.key}:${v.index}`);
          if (made === undefined || made > c.step) continue;
          const order = v.header === undefined ? null : orderOf(toMessage(v, o));
          if (order === null ? !view.handledOffset(o) : !view.handledAt(o, order.producerId, order.sequence)) {
            untold++;
            allowed.add(`${v.producer}:${v.key}:${v.index}`);
          }
        }
      }
      take(m, m.r.inherit('t', p, record));
    }
    m.cursor.set(p, c === undefined ? 0 : c.offset);
    m.unhandled.set(p, new Map());
    m.handled.set(p, 0);
    m.landed.set(p, 0);
  };
  for (let p = 0; p < partitions; p++) give(members[p % memberCount], p);

  /** Releases to the handler: per key, one call at a time, in release order. */
  function take(m, releases) {
    for (const x of releases) {
      if (!x.ordered) {
        flagged++;
        reasons[x.reason] = (reasons[x.reason] ?? 0) + 1;
      }
      const msg = x.message;
      m.unhandled.get(msg.partition)?.set(msg.offset, x.order);
      const lane = msg.key;
      if (!m.lanes.has(lane)) m.lanes.set(lane, []);
      m.lanes.get(lane).push(msg);
    }
  }

  function handleOne(m) {
    const keys = [...m.lanes.keys()];
    if (keys.length === 0) return false;
    const key = keys[Math.floor(random() * keys.length)];
    const lane = m.lanes.get(key);
    const msg = lane.shift();
    if (lane.length === 0) m.lanes.delete(key);
    const v = msg.value;
    const name = `${v.producer}:${v.key}:${v.index}`;
    const times = (handledAt.get(name) ?? 0) + 1;
    handledAt.set(name, times);
    m.handledLog.push({ name, partition: msg.partition, step });
    if (times > 1) {
      duplicates++;
      if (!allowed.has(name)) unexplained++;
    }
    else {
      firstHandled.set(name, step);
      const pk = `${v.producer}:${v.key}`;
      if ((firstOrder.get(pk) ?? -1) !== v.index - 1) violations++;
      firstOrder.set(pk, Math.max(firstOrder.get(pk) ?? -1, v.index));
    }
    m.unhandled.get(msg.partition)?.delete(msg.offset);
    m.handled.set(msg.partition, (m.handled.get(msg.partition) ?? 0) + 1);
    return true;
  }

  function commit(m, p, delay) {
    const unhandled = m.unhandled.get(p);
    let offset = m.r.committable('t', p) ?? m.cursor.get(p);
    for (const o of unhandled.keys()) if (o < offset) offset = o;
    const record = m.r.recordOf('t', p, offset, unhandled.keys(), [...unhandled.values()].filter((o) => o !== null));
    // `handled`: how many of the partition's messages the member had handled when it committed.
    const fitted = maxChars === Infinity ? { text: encodeRecord(record), shortened: false } : fitRecord(record, maxChars);
    if (fitted.shortened) shortened++;
    const commit = { offset, text: fitted.text, member: m, handled: m.handled.get(p), step };
    if (delay === 0) land(p, commit);
    else inTransit.push([step + delay, p, commit]);
  }

  function land(p, c) {
    const last = broker.get(p);
    // A later commit of an earlier owner never overwrites the next owner's (the group's generation fences it).
    if (last !== undefined && last.member !== c.member && !c.member.owned.has(p)) return;
    // Nor one made before its member's present ownership began (an earlier generation's).
    if (c.step < (c.member.since.get(p) ?? 0)) return;
    broker.set(p, c);
    if (c.handled > (c.member.landed.get(p) ?? 0)) c.member.landed.set(p, c.handled);
    c.member.landedStep.set(p, c.step);
  }

  function readRecords(m) {
    for (const { partition: p } of m.r.awaited()) {
      const c = broker.get(p);
      if (c !== undefined) take(m, m.r.setRecord('t', p, decodeRecord(c.text, c.offset)));
    }
  }

  function revoke(m, p, to) {
    // Its calls of the partition end first (DynamicConsumer waits for them), then it commits.
    for (let guard = 0; guard < 1e6 && [...m.lanes.values()].some((l) => l.some((x) => x.partition === p)); guard++) handleOne(m);
    commit(m, p, 0);
    m.r.forget('t', p);
    m.owned.delete(p);
    for (const [key, lane] of m.lanes) {
      const kept = lane.filter((x) => x.partition !== p);
      if (kept.length === 0) m.lanes.delete(key);
      else m.lanes.set(key, kept);
    }
    give(to, p);
  }

  function kill(m) {
    m.alive = false;
    // What it handled after its last commit that reached the broker may be handled again.
    for (const p of m.owned) allowedDuplicates += m.handled.get(p) - m.landed.get(p);
    // By name: what it handled (on a partition it owned) since its last commit that landed, or since it was given it.
    for (const e of m.handledLog) {
      if (m.owned.has(e.partition) && e.step >= Math.max(m.landedStep.get(e.partition) ?? -1, m.since.get(e.partition))) allowed.add(e.name);
    }
    // Its commits still in transit never arrive.
    for (let i = inTransit.length - 1; i >= 0; i--) if (inTransit[i][2].member === m) inTransit.splice(i, 1);
    const heirs = members.filter((x) => x.alive);
    let k = 0;
    for (const p of [...m.owned]) give(heirs[k++ % heirs.length], p);
    m.owned.clear();
  }

  const total = logs.reduce((s, l) => s + l.length, 0);
  const killAt = Array.from({ length: kills }, () => Math.floor(random() * total * 0.8));
  const revokeAt = Array.from({ length: revokes }, () => Math.floor(random() * total * 0.8));
  let read = 0;
  let quiet = 0;
  while (quiet < 20) {
    step++;
    let progress = false;
    for (let i = inTransit.length - 1; i >= 0; i--) {
      if (inTransit[i][0] <= step) {
        const [, p, c] = inTransit[i];
        inTransit.splice(i, 1);
        land(p, c);
      }
    }
    const alive = members.filter((x) => x.alive);
    const m = alive[Math.floor(random() * alive.length)];
    const mine = [...m.owned];
    if (mine.length > 0) {
      const p = mine[Math.floor(random() * mine.length)];
      const run = 1 + Math.floor(random() * 20);
      for (let i = 0; i < run && m.cursor.get(p) < logs[p].length; i++) {
        const o = m.cursor.get(p);
        m.cursor.set(p, o + 1);
        read++;
        take(m, m.r.push(toMessage(logs[p][o], o)));
        progress = true;
      }
    }
    for (let i = 0, n = Math.floor(random() * 30); i < n; i++) if (handleOne(alive[Math.floor(random() * alive.length)])) progress = true;
    if (random() < 0.05) for (const p of m.owned) commit(m, p, Math.floor(random() * 40));
    if (random() < 0.05) readRecords(m);
    if (killAt.length > 0 && read >= killAt[0] && alive.length > 1) {
      killAt.shift();
      kill(alive[Math.floor(random() * alive.length)]);
    }
    if (revokeAt.length > 0 && read >= revokeAt[0] && alive.length > 1) {
      revokeAt.shift();
      const from = alive.find((x) => x.owned.size > 1);
      if (from !== undefined) revoke(from, [...from.owned][0], alive.find((x) => x !== from));
    }
    if (!progress) {
      // Nothing moved: everything committed and read, as the consumers' timers do.
      for (const x of members.filter((y) => y.alive)) {
        for (const p of x.owned) commit(x, p, 0);
        readRecords(x);
      }
      // Over only once every owned partition is read to its end.
      if (members.every((y) => !y.alive || [...y.owned].every((q) => y.cursor.get(q) >= logs[q].length))) quiet++;
    } else quiet = 0;
  }
  const held = members.filter((x) => x.alive).reduce((s, x) => s + x.r.held, 0);
  const missing = logs.flat().filter((v) => !handledAt.has(`${v.producer}:${v.key}:${v.index}`)).length;
  const marked = logs.flat().filter((v) => v.header !== undefined).length;
  return { total, marked, held, missing, violations, flagged, reasons, duplicates, allowedDuplicates, untold, unexplained, shortened, steps: step };
}

module.exports = { run };
