'use strict';
// The ordered-delivery engine (src/delivery/delivery.ts) over a stand-in port: its lifecycle and
// the last commit of a stop, the barrier, revokes (a client that waits, one that does not),
// an eager group's rejoins (partitions kept restart, or keep what they hold), backpressure and
// the resequencer's clock standing still, and the lifecycle's moves; a stop's last commit made at
// once, a periodic one unanswered, over a port that commits in order.
const t = require('tap');
const { Delivery } = require('../../build/delivery/delivery');
const { Lifecycle } = require('../../build/core/lifecycle');
const { InternalError } = require('../..');

const TOPIC = 't';
const tick = () => new Promise((resolve) => setImmediate(resolve));
const waitFor = async (ok, ms = 2000) => {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
};

/** A port that records what the engine asks of it; committed offsets answered from `committed`. */
function standInPort({ rejoin = 'restart', carriesRecords = false, committed = [] } = {}) {
  return {
    name: 'a stand-in', carriesRecords, rejoin, commitStuckMs: Number.POSITIVE_INFINITY,
    commits: [], paused: [], resumed: [], ended: 0,
    async commit(offsets, kind) { this.commits.push({ kind, offsets: offsets.map(({ topic, partition, offset }) => `${topic}:${partition}@${offset}`) }); },
    async committed(partitions) { return committed.filter((c) => partitions.some((p) => p.topic === c.topic && p.partition === c.partition)); },
    refusal: () => 'other',
    pause(list) { this.paused.push(...list.map((p) => p.partition)); },
    resume(list) { this.resumed.push(...list.map((p) => p.partition)); },
    async end() { this.ended++; },
  };
}

/** An engine over `port` whose handler `handle(m)` decides each call; what it emitted is in `events`. */
function engine(port, { handle = () => undefined, maxPending = 1000, afterStop = 'idle' } = {}) {
  const events = [];
  const calls = [];
  const resumes = [];
  let stopped;
  const d = new Delivery(port, {
    handlerRetries: 0, retryBackoffMs: 0, commitIntervalMs: 60_000, ordering: 'key', groupOrder: 'flag', maxPending, afterStop,
    resequencer: { maxWaitMs: 60_000 },
  }, {
    handle: (m, info) => {
      calls.push(`${m.partition}:${m.offset}`);
      return handle(m, info);
    },
    handlerError: () => events.push('handlerError'),
    emit: (event, ...args) => events.push(event === 'committed' || event === 'assigned' || event === 'revoked' ? `${event} ${JSON.stringify(args[0])}` : event),
    listenerCount: () => 1,
    resume: () => resumes.push(Date.now()),
    ended: (failure) => { stopped = failure ?? null; },
  });
  return { d, events, calls, resumes, stopped: () => stopped };
}

const message = (partition, offset, key = `k${offset}`) => ({ topic: TOPIC, partition, offset, key: Buffer.from(key), value: null, headers: undefined });

t.test('connect, run, stop: the handler finishes what was released, the safe offsets are committed once more (final), the client ends', async (t) => {
  const port = standInPort();
  let release;
  const e = engine(port, { handle: (m) => (m.offset === 1 ? new Promise((resolve) => { release = resolve; }) : undefined) });
  await e.d.connect(async () => {});
  t.equal(e.d.phase, 'connected');
  e.d.run(1);
  e.d.assignment.assigned([{ topic: TOPIC, partition: 0 }]);
  for (const o of [0, 1, 2]) t.ok(e.d.assignment.admit(message(0, o)), `offset ${o} admitted`);
  t.notOk(e.d.assignment.admit(message(5, 0)), 'a partition not owned: refused');
  t.same(e.calls, ['0:0', '0:1'], 'one call at a time: offset 1 is under way');
  const stopping = e.d.stop(5000);
  await tick();
  t.equal(e.d.phase, 'stopping');
  release();
  await stopping;
  t.same(e.calls, ['0:0', '0:1', '0:2'], 'what was released was handled before the stop went on');
  t.same(port.commits, [{ kind: 'final', offsets: ['t:0@3'] }], 'the last commit: past everything handled');
  t.equal(port.ended, 1, "the client's run ended");
  t.equal(e.d.phase, 'idle', 'idle again: it may run again');
  t.equal(e.stopped(), null, 'ended without a failure');
});

t.test("a stop's timeout: what is not handled then stays below the last commit", async (t) => {
  const port = standInPort();
  const e = engine(port, { handle: (m) => (m.offset === 1 ? new Promise(() => {}) : undefined) });
  await e.d.connect(async () => {});
  e.d.run(1);
  e.d.assignment.assigned([{ topic: TOPIC, partition: 0 }]);
  for (const o of [0, 1, 2]) e.d.assignment.admit(message(0, o));
  await e.d.stop(20);
  t.same(port.commits, [{ kind: 'final', offsets: ['t:0@1'] }], 'committed below the call that never ended');
});

t.test('the barrier: no call starts while it acts, the calls under way end first, calls go on after', async (t) => {
  const port = standInPort();
  const ends = new Map();
  const e = engine(port, { handle: (m) => new Promise((resolve) => ends.set(m.offset, resolve)) });
  await e.d.connect(async () => {});
  e.d.run(2);
  e.d.assignment.assigned([{ topic: TOPIC, partition: 0 }]);
  e.d.assignment.admit(message(0, 0));
  t.same(e.calls, ['0:0']);
  let acted = false;
  const barrier = e.d.barrier(() => {
    acted = true;
    t.same(e.calls, ['0:0'], 'nothing started while the barrier stands');
    t.equal(e.d.dispatch.inFlight, 0, 'no call under way when it acts');
    return 'done';
  });
  e.d.assignment.admit(message(0, 1));
  await tick();
  t.same(e.calls, ['0:0'], 'a message read meanwhile waits (two calls at once were allowed)');
  t.notOk(acted, 'it waits for the call under way');
  ends.get(0)();
  t.equal(await barrier, 'done', "the barrier gives the act's result");
  t.ok(acted);
  t.same(e.calls, ['0:0', '0:1'], 'the call held back starts after it');
  ends.get(1)();
  await e.d.stop(1000);
});

t.test('revoke on a client that waits: calls under way end, then the commit (revoke), then the client lets go', async (t) => {
  const port = standInPort();
  let end;
  const e = engine(port, { handle: () => new Promise((resolve) => { end = resolve; }) });
  await e.d.connect(async () => {});
  e.d.run(1);
  e.d.assignment.assigned([{ topic: TOPIC, partition: 0 }]);
  e.d.assignment.admit(message(0, 0));
  e.d.assignment.admit(message(0, 1));
  let letGo = 0;
  e.d.assignment.revoked([{ topic: TOPIC, partition: 0 }], () => letGo++);
  t.notOk(e.d.assignment.admit(message(0, 2)), 'nothing more of it is taken');
  t.equal(letGo, 0, 'the client waits while a call is under way');
  end();
  await waitFor(() => letGo === 1);
  t.same(port.commits, [{ kind: 'revoke', offsets: ['t:0@1'] }], 'committed past what was handled, below what was dropped');
  t.same(e.calls, ['0:0'], 'what waited was not handed out: its next owner reads it again');
  t.ok(e.events.includes('revoked [{"topic":"t","partition":0}]'));
  await e.d.stop(1000);
  t.same(port.commits.length, 1, 'the stop commits nothing of a partition gone');
});

t.test('revoke on a client that waits, its commit refused for a stale member epoch (KIP-848): made again, and only then the client lets go', async (t) => {
  const port = standInPort();
  let refusals = 2;
  const commit = port.commit;
  // Kafka's STALE_MEMBER_EPOCH, 113: the epoch catches up with the next heartbeat's answer.
  port.commit = async function (offsets, kind) {
    if (refusals-- > 0) throw Object.assign(new Error('Broker: The member epoch is stale'), { code: 113 });
    return commit.call(this, offsets, kind);
  };
  port.refusal = (err) => (err.code === 113 ? 'stale' : 'other');
  const e = engine(port);
  await e.d.connect(async () => {});
  e.d.run(1);
  e.d.assignment.assigned([{ topic: TOPIC, partition: 0 }]);
  e.d.assignment.admit(message(0, 0));
  let letGo = 0;
  let committedWhenLetGo;
  e.d.assignment.revoked([{ topic: TOPIC, partition: 0 }], () => {
    letGo++;
    committedWhenLetGo = port.commits.length;
  });
  await waitFor(() => letGo === 1);
  t.same(port.commits, [{ kind: 'revoke', offsets: ['t:0@1'] }], 'committed on the third try');
  t.equal(committedWhenLetGo, 1, 'before the client let the partition go');
  t.notOk(e.events.includes('warning'), 'no warning');
  t.equal(e.d.metrics().rejoins.staleRetries, 2, 'made again twice');
  await e.d.stop(1000);
});

t.test('revoke on a client that does not wait: committed before revoked() returns', async (t) => {
  const port = standInPort();
  const e = engine(port);
  await e.d.connect(async () => {});
  e.d.run(1);
  e.d.assignment.assigned([{ topic: TOPIC, partition: 0 }, { topic: TOPIC, partition: 1 }]);
  e.d.assignment.admit(message(0, 0));
  e.d.assignment.revoked([{ topic: TOPIC, partition: 0 }]);
  t.same(port.commits, [{ kind: 'revoke', offsets: ['t:0@1'] }]);
  t.ok(e.d.assignment.admit(message(1, 0)), 'the partition kept goes on');
  await e.d.stop(1000);
});

t.test('a partition lost and given back with nothing committed past it: what this consumer handled is not handed out again', async (t) => {
  // Its revoke's commit never lands (the coordinator out of reach; a KIP-848 member fenced), so
  // the group's committed offset is still 0 when the partition comes back to it.
  const port = standInPort({ carriesRecords: true, committed: [{ topic: TOPIC, partition: 0, offset: 0, metadata: '' }] });
  port.commit = async () => { throw Object.assign(new Error('coordinator not available'), { code: 15 }); };
  const e = engine(port);
  e.events.length = 0;
  await e.d.connect(async () => {});
  e.d.run(4);
  e.d.assignment.assigned([{ topic: TOPIC, partition: 0 }]);
  await waitFor(() => e.d.assignment.mayRead({ topic: TOPIC, partition: 0 }));
  for (const o of [0, 1, 2, 3, 4]) e.d.assignment.admit(message(0, o));
  await waitFor(() => e.calls.length === 5);
  e.d.assignment.revoked([{ topic: TOPIC, partition: 0 }]);
  e.d.assignment.assigned([{ topic: TOPIC, partition: 0 }]);
  await waitFor(() => e.d.assignment.mayRead({ topic: TOPIC, partition: 0 }));
  // The client fetches again from the committed offset, 0.
  for (const o of [0, 1, 2, 3, 4, 5, 6]) e.d.assignment.admit(message(0, o));
  await waitFor(() => e.calls.length >= 7);
  await tick();
  t.same(e.calls, ['0:0', '0:1', '0:2', '0:3', '0:4', '0:5', '0:6'], 'offsets 0-4 once, then what is new');
  await e.d.stop(1000).catch(() => undefined);
});

t.test('a partition that comes back after another member committed past it: that commit is read, not this consumer\'s memory', async (t) => {
  const port = standInPort({ carriesRecords: true });
  const e = engine(port);
  await e.d.connect(async () => {});
  e.d.run(4);
  port.committed = async () => [];
  e.d.assignment.assigned([{ topic: TOPIC, partition: 0 }]);
  await waitFor(() => e.d.assignment.mayRead({ topic: TOPIC, partition: 0 }));
  for (const o of [0, 1]) e.d.assignment.admit(message(0, o));
  await waitFor(() => e.calls.length === 2);
  e.d.assignment.revoked([{ topic: TOPIC, partition: 0 }]);
  // Meanwhile another member handled up to 8 (no record of ours: only its offset counts).
  port.committed = async () => [{ topic: TOPIC, partition: 0, offset: 8, metadata: '' }];
  e.d.assignment.assigned([{ topic: TOPIC, partition: 0 }]);
  await waitFor(() => e.d.assignment.mayRead({ topic: TOPIC, partition: 0 }));
  for (const o of [8, 9]) e.d.assignment.admit(message(0, o));
  await waitFor(() => e.calls.length >= 4);
  t.same(e.calls, ['0:0', '0:1', '0:8', '0:9']);
  await e.d.stop(1000).catch(() => undefined);
});

t.test("an eager group's rejoin, 'keep': what the client reads again of a partition kept is dropped", async (t) => {
  const port = standInPort({ rejoin: 'keep' });
  const e = engine(port);
  await e.d.connect(async () => {});
  e.d.run(1);
  e.d.assignment.joined([{ topic: TOPIC, partition: 0 }, { topic: TOPIC, partition: 1 }]);
  for (const o of [0, 1]) e.d.assignment.admit(message(0, o));
  e.d.assignment.rebalancing();
  t.same(port.commits.map((c) => c.kind), ['revoke'], 'what is safe is committed when the rebalance begins');
  t.ok(e.d.assignment.holdsCommits(), 'periodic commits wait for the join');
  e.d.assignment.joined([{ topic: TOPIC, partition: 0 }]);
  t.notOk(e.d.assignment.holdsCommits(), 'joined: they go on');
  for (const o of [0, 1, 2]) e.d.assignment.admit(message(0, o));
  t.same(e.calls, ['0:0', '0:1', '0:2'], 'offsets 0 and 1 read again are dropped');
  t.notOk(e.d.assignment.admit(message(1, 0)), 'partition 1 left');
  t.same(e.d.metrics().rejoins.joins, 2);
  await e.d.stop(1000);
});

t.test("an eager group's rejoin, 'restart': kept partitions start anew from their committed offset, read back", async (t) => {
  const port = standInPort({ carriesRecords: true, committed: [{ topic: TOPIC, partition: 0, offset: 2, metadata: '' }] });
  const e = engine(port);
  await e.d.connect(async () => {});
  e.d.run(1);
  e.d.assignment.joined([{ topic: TOPIC, partition: 0 }]);
  await waitFor(() => e.d.assignment.waitOf('t\u00000') === undefined && port.resumed.length === 1);
  t.same(port.paused, [0], 'paused while its previous owner\'s record is read');
  for (const o of [0, 1, 2, 3]) e.d.assignment.admit(message(0, o));
  t.same(e.calls, ['0:2', '0:3'], 'below the committed offset: handled by its previous owner, skipped');
  t.equal(e.d.metrics().rejoins.belowCommitted, 2);
  e.d.assignment.rebalancing();
  e.d.assignment.joined([{ topic: TOPIC, partition: 0 }]);
  await waitFor(() => port.resumed.length === 2);
  for (const o of [2, 3, 4]) e.d.assignment.admit(message(0, o));
  t.same(e.calls, ['0:2', '0:3', '0:2', '0:3', '0:4'], 'restarted: read again from the committed offset (at least once)');
  await e.d.stop(1000);
});

t.test("what was read while the previous owner's record was read is not handed out once a stop began", async (t) => {
  const port = standInPort({ carriesRecords: true });
  let answer;
  port.committed = () => new Promise((resolve) => { answer = resolve; });
  const e = engine(port, { handle: () => new Promise(() => {}) });
  await e.d.connect(async () => {});
  e.d.run(1);
  e.d.assignment.assigned([{ topic: TOPIC, partition: 0 }]);
  t.ok(e.d.assignment.admit(message(0, 5)), 'read while the record is read: kept');
  t.same(e.calls, [], 'nothing handed out yet');
  e.d.offer(message(1, 0));
  t.same(e.calls, ['1:0'], 'a call that never ends: the stop waits for it');
  const stopping = e.d.stop(300);
  await tick();
  t.equal(e.d.phase, 'stopping');
  answer([{ topic: TOPIC, partition: 0, offset: 5, metadata: '' }]);
  await tick();
  t.equal(e.d.metrics().waiting, 0, 'the message kept did not go to the handler\'s queue');
  await stopping;
  t.same(e.calls, ['1:0'], 'the stop under way took nothing more: read again by the next run or owner');
  t.same(port.resumed, [], 'nor was the partition resumed');
});

t.test('backpressure: reading is held at maxPending and goes on at half; the resequencer\'s clock stands still meanwhile', async (t) => {
  const port = standInPort();
  const ends = [];
  const e = engine(port, { maxPending: 4, handle: () => new Promise((resolve) => ends.push(resolve)) });
  await e.d.connect(async () => {});
  e.d.run(1);
  e.d.assignment.assigned([{ topic: TOPIC, partition: 0 }]);
  for (let o = 0; o < 5; o++) e.d.assignment.admit(message(0, o));
  t.equal(e.d.dispatch.waiting, 4);
  t.ok(e.d.pressure.on, 'held: four wait');
  const still = e.d.pressure.clock();
  await new Promise((resolve) => setTimeout(resolve, 30));
  t.equal(e.d.pressure.clock(), still, 'the clock stood still');
  // A call that ends sees the queue before the next call takes from it.
  ends.shift()();
  await waitFor(() => ends.length === 1);
  t.ok(e.d.pressure.on, 'a call ended with four waiting: still held');
  ends.shift()();
  await waitFor(() => ends.length === 1 && e.d.dispatch.waiting === 2);
  t.ok(e.d.pressure.on, 'a call ended with three waiting: still held');
  t.equal(e.resumes.length, 0);
  ends.shift()();
  await waitFor(() => ends.length === 1 && e.d.dispatch.waiting === 1);
  t.notOk(e.d.pressure.on, 'a call ended with two waiting (half of maxPending): reading goes on');
  t.equal(e.resumes.length, 1, 'the adapter was told once');
  t.ok(e.d.pressure.clock() < Date.now() - 20, 'the time held does not count');
  while (ends.length > 0) {
    ends.shift()();
    await tick();
  }
  await e.d.stop(1000);
});

t.test("the lifecycle's moves: one not in its table is a defect", async (t) => {
  const life = new Lifecycle('idle');
  t.throws(() => life.to('stopped'), InternalError, 'idle → stopped');
  life.to('connecting');
  t.throws(() => life.to('running'), InternalError, 'connecting → running');
  life.to('connected');
  life.to('running');
  life.to('stopping');
  t.throws(() => life.to('connecting'), InternalError, 'stopping → connecting');
  life.to('idle');
  t.equal(life.phase, 'idle');
});

t.test("stop() with a periodic commit unanswered: a port that commits in order makes the last commit at once", async (t) => {
  for (const inOrder of [true, false]) {
    // A port whose periodic commits are never answered (a client that answers only when polled), stuck after 400 ms.
    const port = { ...standInPort(), commitStuckMs: 400, commitsInOrder: inOrder };
    port.commit = function commit(offsets, kind) {
      this.commits.push({ kind, at: Date.now() });
      return kind === 'periodic' ? new Promise(() => {}) : Promise.resolve();
    };
    const { d } = engine(port);
    await d.connect(async () => {});
    d.run(1, 0);
    d.assignment.assigned([{ topic: TOPIC, partition: 0 }]);
    d.assignment.admit(message(0, 0));
    await waitFor(() => d.safeOffset(TOPIC, 0) === 1);
    d.commits.commitHandled(() => d.assignment.owned.values());
    t.same(port.commits.map((c) => c.kind), ['periodic'], `premise (commitsInOrder ${inOrder}): a periodic commit under way, unanswered`);
    const stopAt = Date.now();
    await d.stop(5000);
    const final = port.commits.find((c) => c.kind === 'final');
    t.ok(final, 'the last commit made');
    if (inOrder) t.ok(final.at - stopAt < 400, `in order: at once (${final.at - stopAt} ms), not after the periodic one's ${port.commitStuckMs} ms`);
    else t.ok(final.at - stopAt >= 390, `not in order: after the periodic one stopped holding it back (${final.at - stopAt} ms)`);
  }
});
