'use strict';
// The engine's commits in a producer's transaction (src/delivery/transacted.ts), over a stand-in port and a
// stand-in transaction: each commit made once no handler call is under way, with every partition's offset;
// a transaction in which a call failed aborts and every partition is read again from its committed offset;
// failures for a while are made again, abortable ones abort and rewind, a fatal one ends the run; the last
// commit of a failed run aborts; a record that would be shortened puts a periodic commit off and aborts one
// that cannot wait; nested barriers.
const t = require('tap');
const { Delivery } = require('../../build/delivery/delivery');

const TOPIC = 't';
const waitFor = async (ok, ms = 3000) => {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
};

/** A port that seeks; committed offsets answered from `committed` (a map partition → offset). */
function standInPort(committed = new Map()) {
  return {
    name: 'a stand-in', carriesRecords: false, rejoin: 'restart', commitStuckMs: Number.POSITIVE_INFINITY,
    seeks: [], paused: [], resumed: [], ended: 0, commits: [],
    async commit(offsets, kind) { this.commits.push(kind); },
    async committed(partitions) { return partitions.map(({ topic, partition }) => ({ topic, partition, offset: committed.has(partition) ? committed.get(partition) : -1001 })); },
    refusal: () => 'other',
    async seek(offsets) { this.seeks.push(offsets.map(({ partition, offset }) => `${partition}@${offset}`)); },
    pause(list) { this.paused.push(...list.map((p) => p.partition)); },
    resume(list) { this.resumed.push(...list.map((p) => p.partition)); },
    async end() { this.ended++; },
  };
}

/** A transaction whose commits are recorded (offsets as "p@o"); `failures` are thrown by the next commits, in turn. */
function standInSink(committed, failures = []) {
  return {
    intervalMs: 60_000, log: [],
    async commit(offsets, next) {
      const failure = failures.shift();
      this.log.push(`commit ${offsets.map(({ partition, offset }) => `${partition}@${offset}`).join(',')}${next ? '' : ' (last)'}${failure ? ` failed ${failure.kind}` : ''}`);
      if (failure) throw failure;
      for (const { partition, offset } of offsets) committed.set(partition, offset);
    },
    async abort(next) { this.log.push(`abort${next ? ' and begin' : ''}`); },
    async begin() { this.log.push('begin'); },
    holds: 0,
    hold() { this.holds++; },
    release() { this.holds--; },
    failure: (error) => error.kind,
  };
}

function engine({ failures = [], handle = () => undefined, committed = new Map(), retries = 0 } = {}) {
  const port = standInPort(committed);
  const sink = standInSink(committed, failures);
  const events = [];
  const calls = [];
  let stopped;
  const d = new Delivery(port, {
    handlerRetries: retries, retryBackoffMs: 0, commitIntervalMs: 60_000, ordering: 'key', groupOrder: 'flag', maxPending: 1000, afterStop: 'idle',
    resequencer: { maxWaitMs: 60_000 }, transaction: sink, revokeTimeoutMs: 200,
  }, {
    handle: (m, info) => {
      calls.push(`${m.partition}:${m.offset}`);
      return handle(m, info);
    },
    handlerError: () => events.push('handlerError'),
    emit: (event, ...args) => events.push(event === 'committed' ? `committed ${JSON.stringify(args[0].map(({ partition, offset }) => `${partition}@${offset}`))}` : event),
    listenerCount: () => 1,
    resume: () => {},
    ended: (failure) => { stopped = failure ?? null; },
  });
  return { d, port, sink, events, calls, committed, stopped: () => stopped };
}

const message = (partition, offset, key = `k${partition}-${offset}`) => ({ topic: TOPIC, partition, offset, key: Buffer.from(key), value: null, headers: undefined });
const owned = (d) => () => d.assignment.owned.values();

async function running(e, partitions = [0, 1]) {
  await e.d.connect(async () => {});
  e.d.run(4);
  e.d.assignment.assigned(partitions.map((partition) => ({ topic: TOPIC, partition })));
}

t.test('a periodic commit waits for the calls under way, and commits every partition that moved in the transaction', async (t) => {
  let release;
  const e = engine({ handle: (m) => (m.offset === 1 && m.partition === 1 ? new Promise((resolve) => { release = resolve; }) : undefined) });
  await running(e);
  for (const o of [0, 1]) e.d.assignment.admit(message(0, o));
  for (const o of [0, 1]) e.d.assignment.admit(message(1, o));
  e.d.commits.commitHandled(owned(e.d));
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.same(e.sink.log, [], 'no commit while a call is under way');
  e.d.assignment.admit(message(0, 2));
  t.same(e.calls, ['0:0', '0:1', '1:0', '1:1'], 'no call starts behind the barrier');
  release();
  await waitFor(() => e.sink.log.length === 1);
  t.same(e.sink.log, ['commit 0@2,1@2'], "both partitions' offsets, past the call waited for");
  await waitFor(() => e.calls.length === 5);
  t.equal(e.calls[4], '0:2', 'calls go on after the commit');
  t.ok(e.events.includes('committed ["0@2","1@2"]'), "'committed' with the offsets of the transaction");
  t.equal(e.d.metrics().transactions.committed, 1, 'counted');
  await e.d.stop(1000);
  t.same(e.sink.log.slice(1), ['commit 0@3,1@2 (last)'], 'the last commit, without beginning a next transaction');
  t.equal(e.sink.holds, 0, 'every hold of new messages during a commit was let go');
});

t.test('a transaction in which a handler call failed aborts: every partition is read again from its committed offset', async (t) => {
  let fail = true;
  const committed = new Map([[0, 0]]);
  const e = engine({ committed, retries: 1, handle: (m) => { if (m.partition === 1 && m.offset === 11 && fail) { fail = false; throw new Error('boom'); } } });
  await running(e);
  for (const o of [0, 1, 2]) e.d.assignment.admit(message(0, o));
  for (const o of [10, 11]) e.d.assignment.admit(message(1, o));
  await waitFor(() => e.events.includes('handlerError'));
  e.d.commits.commitHandled(owned(e.d));
  await waitFor(() => e.port.seeks.length === 1);
  t.same(e.sink.log, ['abort and begin'], 'aborted, not committed (what the failed call produced is in it), and the next begun');
  t.same(e.port.seeks[0], ['0@0', '1@10'], 'partition 0 from its committed offset, 1 (nothing committed) from the first offset taken of it');
  await waitFor(() => e.port.resumed.length >= 2);
  t.same(e.d.metrics().transactions, { committed: 0, aborted: 1, abortedForHandlers: 1, retried: 0, deferred: 0, abortedInexact: 0, lastCommitMs: 0, commitMsP50: 0, commitMsP99: 0 }, 'counted');
  // The client reads them again: handled again, committed this time.
  const before = e.calls.length;
  for (const o of [0, 1, 2]) e.d.assignment.admit(message(0, o));
  for (const o of [10, 11]) e.d.assignment.admit(message(1, o));
  await waitFor(() => e.calls.length === before + 5);
  e.d.commits.commitHandled(owned(e.d));
  await waitFor(() => e.sink.log.length === 2);
  t.same(e.sink.log[1], 'commit 0@3,1@12', 'the messages read again were handled again, and committed');
  await e.d.stop(1000);
});

t.test('a commit that fails for a while is made again; an abortable failure aborts and rewinds', async (t) => {
  const retriable = Object.assign(new Error('timed out'), { kind: 'retriable' });
  const abortable = Object.assign(new Error('producer epoch'), { kind: 'abortable' });
  const e = engine({ failures: [retriable, undefined, abortable] });
  await running(e, [0]);
  e.d.assignment.admit(message(0, 0));
  e.d.commits.commitHandled(owned(e.d));
  await waitFor(() => e.sink.log.length === 2);
  t.same(e.sink.log, ['commit 0@1 failed retriable', 'commit 0@1'], 'made again, then committed');
  t.equal(e.d.metrics().transactions.retried, 1);
  e.d.assignment.admit(message(0, 1));
  e.d.commits.commitHandled(owned(e.d));
  await waitFor(() => e.port.seeks.length === 1);
  t.same(e.sink.log.slice(2), ['commit 0@2 failed abortable', 'abort and begin', 'abort', 'begin'],
    'aborted with what calls produced meanwhile; one begun for calls made again while they end, aborted in turn; then the next');
  t.equal(e.sink.holds, 0, "the new calls' messages held during the commit were let go");
  t.same(e.port.seeks[0], ['0@1'], 'read again from the offset the first transaction committed');
  t.ok(e.events.includes('warning'), 'the abortable failure is a warning');
  t.equal(e.d.phase, 'running', 'the run goes on');
  await e.d.stop(1000);
});

t.test('an abort while a partition leaves: what it handled in the aborted transaction is not committed by its revoke', async (t) => {
  const abortable = Object.assign(new Error('generation'), { kind: 'abortable' });
  const e = engine({ failures: [abortable] });
  await running(e, [0, 1]);
  e.d.assignment.admit(message(0, 0));
  e.d.assignment.admit(message(1, 0));
  await waitFor(() => e.calls.length === 2);
  // A periodic commit under way (held at the coordinator) when partition 1 is revoked: the revoke's commit waits behind it.
  let open;
  const gate = new Promise((resolve) => { open = resolve; });
  const commit = e.sink.commit.bind(e.sink);
  e.sink.commit = async (offsets, next) => {
    await gate;
    return commit(offsets, next);
  };
  e.d.commits.commitHandled(owned(e.d));
  await new Promise((resolve) => setTimeout(resolve, 20));
  let letGo = false;
  e.d.assignment.revoked([{ topic: TOPIC, partition: 1 }], () => { letGo = true; });
  open();
  await waitFor(() => letGo);
  t.same(e.sink.log.slice(0, 3), ['commit 0@1,1@1 failed abortable', 'abort and begin', 'abort'], 'the periodic commit failed: aborted');
  t.ok(e.port.seeks.length === 1 && e.port.seeks[0].every((x) => x.startsWith('0@')), 'partition 0 read again; partition 1, leaving, is not');
  t.notOk(e.sink.log.some((l) => !l.includes('failed') && l.includes('1@')), "nothing of partition 1 committed by its revoke: its next owner handles it again");
  await e.d.stop(1000);
});

t.test('a fatal failure (fenced) ends the run with it; the last transaction aborts', async (t) => {
  const fenced = Object.assign(new Error('fenced'), { kind: 'fatal', code: -144 });
  const e = engine({ failures: [fenced] });
  await running(e, [0]);
  e.d.assignment.admit(message(0, 0));
  e.d.commits.commitHandled(owned(e.d));
  await waitFor(() => e.stopped() !== undefined);
  t.match(e.stopped().message, /fenced/, 'the run failed with the fatal error');
  t.same(e.sink.log, ['commit 0@1 failed fatal', 'abort'], 'nothing committed: the last transaction aborts');
  t.ok(e.events.includes('error'), "an 'error' to its listener");
});

t.test('a handler failure that ends the run: its last transaction aborts, nothing of it is committed', async (t) => {
  const e = engine({ handle: (m) => { if (m.offset === 1) throw new Error('boom'); } });
  await running(e, [0]);
  for (const o of [0, 1]) e.d.assignment.admit(message(0, o));
  await waitFor(() => e.stopped() !== undefined);
  t.equal(e.stopped().code, 'KDP_HANDLER_ERROR', 'the run failed on the handler');
  t.same(e.sink.log, ['abort'], 'the last transaction aborted, none begun (offset 0 is handled again next run, with its output)');
});

t.test('handler calls go on while a transaction commits; what they produce is held for the next', async (t) => {
  const e = engine();
  await running(e, [0]);
  let open;
  const gate = new Promise((resolve) => { open = resolve; });
  const commit = e.sink.commit.bind(e.sink);
  e.sink.commit = async (offsets, next) => {
    e.sink.log.push(`holding ${e.sink.holds}`);
    await gate;
    return commit(offsets, next);
  };
  e.d.assignment.admit(message(0, 0));
  e.d.commits.commitHandled(owned(e.d));
  await waitFor(() => e.sink.log.length === 1);
  t.same(e.sink.log, ['holding 1'], "the commit began with new messages held (the producer's hold)");
  e.d.assignment.admit(message(0, 1));
  await waitFor(() => e.calls.length === 2);
  t.pass('a call started while the commit was under way');
  open();
  await waitFor(() => e.sink.log.length === 2);
  t.same(e.sink.log[1], 'commit 0@1', "the transaction's offsets are those of before the call that started during it");
  await waitFor(() => e.sink.holds === 0);
  t.pass('released once it committed and the next began');
  await e.d.stop(1000);
});

t.test('barriers nest: calls start again only when the outer one ends', async (t) => {
  const e = engine();
  await running(e, [0]);
  let inner;
  const outer = e.d.barrier(async () => {
    inner = e.d.barrier(async () => 'inner');
    await inner;
    e.d.assignment.admit(message(0, 0));
    await new Promise((resolve) => setTimeout(resolve, 10));
    t.same(e.calls, [], 'no call started after the inner barrier ended, the outer still standing');
  });
  await outer;
  await waitFor(() => e.calls.length === 1);
  t.pass('the call started once both ended');
  await e.d.stop(1000);
});
