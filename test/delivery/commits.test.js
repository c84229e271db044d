'use strict';
// A consumer's commit results (src/delivery/commits.ts), for every client: which refusals are an
// 'error', which a 'warning', which are made again silently. The codes are Kafka's and
// librdkafka's (node-rdkafka's CODES.ERRORS), as a commit callback or a KafkaJS error gives them.
const t = require('tap');
const Kafka = require('node-rdkafka');
const { Commits } = require('../../build/delivery/commits');
const { ClientPort } = require('../../build/consumer/client-port');
const { KafkaJsHost } = require('../../build/kafkajs/host-kafkajs');

const E = Kafka.CODES.ERRORS;
const OFFSETS = [{ topic: 't', partition: 0, offset: 5 }];

/** The events of one commit refused by `port` (its commit() throws what `fail` makes), and whether it threw. */
async function commitOutcome(port, kind) {
  const events = [];
  let again = 0;
  const dispatch = { ledger: { notCommitted: (list) => { again += list.length; } } };
  const hooks = { running: () => true, rejoining: () => false, emit: (event) => events.push(event), hasErrorListener: () => true, released() {} };
  const commits = new Commits(port, dispatch, {}, undefined, hooks);
  let threw = false;
  await commits.commit(OFFSETS, kind).catch(() => { threw = true; });
  return { events, again, threw };
}

/** node-rdkafka's client as DynamicConsumer's port drives it: its commitSync() throws librdkafka's error, its commit() answers with an 'offset.commit' event. */
function rdkafkaPort(code) {
  const listeners = [];
  const error = code === null ? null : Object.assign(new Error(`code ${code}`), { code });
  const client = {
    on: (event, listener) => listeners.push(listener),
    commitSync: () => { if (error) throw error; },
    commit: () => setImmediate(() => { for (const l of listeners) l(error, OFFSETS); }),
  };
  return new ClientPort(client, false, () => false, () => {});
}

/** KafkaJS 2.x's consumer as its host drives it: commitOffsets() rejects with Kafka's numeric code (its KafkaJSProtocolError). */
function kafkaJsPort(code) {
  const consumer = { commitOffsets: async () => { if (code !== null) throw Object.assign(new Error(`code ${code}`), { code }); } };
  return new KafkaJsHost(consumer, {});
}

const PORTS = [['node-rdkafka', rdkafkaPort], ['KafkaJS', kafkaJsPort]];

t.test('a commit the group took is committed', async (t) => {
  for (const [name, port] of PORTS) t.same(await commitOutcome(port(null), 'periodic'), { events: ['committed'], again: 0, threw: false }, name);
});

t.test("refused while the group rebalances: silent when periodic (made again), a 'warning' on revoke or stop", async (t) => {
  for (const [name, port] of PORTS) {
    for (const code of [E.ERR_REBALANCE_IN_PROGRESS, E.ERR_ILLEGAL_GENERATION, E.ERR_UNKNOWN_MEMBER_ID]) {
      t.same(await commitOutcome(port(code), 'periodic'), { events: [], again: 1, threw: false }, `${name}, periodic, code ${code}`);
      t.same(await commitOutcome(port(code), 'revoke'), { events: ['warning'], again: 1, threw: false }, `${name}, on revoke, code ${code}`);
      t.same(await commitOutcome(port(code), 'final'), { events: ['warning'], again: 1, threw: false }, `${name}, on stop, code ${code}`);
    }
  }
});

t.test("refused while the group's coordinator moves (a broker restarting): a 'warning', made again", async (t) => {
  t.equal(E.ERR_COORDINATOR_LOAD_IN_PROGRESS, 14, "Kafka's COORDINATOR_LOAD_IN_PROGRESS");
  t.equal(E.ERR_COORDINATOR_NOT_AVAILABLE, 15, "Kafka's COORDINATOR_NOT_AVAILABLE");
  t.equal(E.ERR_NOT_COORDINATOR, 16, "Kafka's NOT_COORDINATOR");
  for (const [name, port] of PORTS) {
    for (const code of [14, 15, 16]) {
      for (const kind of ['periodic', 'revoke', 'final']) {
        t.same(await commitOutcome(port(code), kind), { events: ['warning'], again: 1, threw: false }, `${name}, ${kind}, code ${code}`);
      }
    }
  }
});

t.test("any other refusal is an 'error' (thrown by the last commit of a stop), and made again", async (t) => {
  for (const [name, port] of PORTS) {
    for (const code of [E.ERR_GROUP_AUTHORIZATION_FAILED, E.ERR_OFFSET_METADATA_TOO_LARGE]) {
      t.same(await commitOutcome(port(code), 'periodic'), { events: ['error'], again: 1, threw: false }, `${name}, periodic, code ${code}`);
      t.same(await commitOutcome(port(code), 'revoke'), { events: ['error'], again: 1, threw: false }, `${name}, on revoke, code ${code}`);
      t.same(await commitOutcome(port(code), 'final'), { events: [], again: 1, threw: true }, `${name}, on stop, code ${code}`);
    }
  }
});

t.test("failed for want of a connection (a broker going down): a 'warning', made again", async (t) => {
  // librdkafka's local codes, as its rdkafka.h numbers them.
  t.equal(E.ERR__TRANSPORT, -195, "librdkafka's RD_KAFKA_RESP_ERR__TRANSPORT");
  t.equal(E.ERR__ALL_BROKERS_DOWN, -187, "librdkafka's RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN");
  t.equal(E.ERR__TIMED_OUT, -185, "librdkafka's RD_KAFKA_RESP_ERR__TIMED_OUT");
  t.equal(E.ERR_REQUEST_TIMED_OUT, 7, "Kafka's REQUEST_TIMED_OUT");
  t.equal(E.ERR_NETWORK_EXCEPTION, 13, "Kafka's NETWORK_EXCEPTION");
  t.equal(E.ERR__WAIT_COORD, -180, "librdkafka's RD_KAFKA_RESP_ERR__WAIT_COORD (the group's coordinator being looked for)");
  for (const [name, port] of PORTS) {
    for (const code of [-195, -187, -185, -180, 7, 13]) {
      t.same(await commitOutcome(port(code), 'periodic'), { events: ['warning'], again: 1, threw: false }, `${name}, periodic, code ${code}`);
      t.same(await commitOutcome(port(code), 'revoke'), { events: ['warning'], again: 1, threw: false }, `${name}, on revoke, code ${code}`);
    }
  }
});

t.test("without an 'error' listener another refusal is a 'warning' (an 'error' event nobody hears would crash the process)", async (t) => {
  const events = [];
  const dispatch = { ledger: { notCommitted() {} } };
  const hooks = { running: () => true, rejoining: () => false, emit: (event) => events.push(event), hasErrorListener: () => false, released() {} };
  const commits = new Commits(kafkaJsPort(30), dispatch, {}, undefined, hooks);
  await commits.commit(OFFSETS, 'periodic');
  t.same(events, ['warning']);
});

/** A port whose first `refusals` commits are refused with `code`, then taken; `calls` counts its commits. */
function refusingPort(makePort, code, refusals) {
  let calls = 0;
  const port = makePort(code);
  const commit = port.commit.bind(port);
  const ok = makePort(null);
  port.commit = (offsets, kind) => (++calls <= refusals ? commit(offsets, kind) : ok.commit(offsets, kind));
  return { port, calls: () => calls };
}

t.test('KIP-848: a commit refused for a stale member epoch is made again, silently, until the group takes it', async (t) => {
  t.equal(E.ERR_STALE_MEMBER_EPOCH, 113, "Kafka's STALE_MEMBER_EPOCH (librdkafka 2.12 makes no application commit again on it)");
  for (const [name, makePort] of PORTS) {
    for (const kind of ['periodic', 'revoke', 'final']) {
      const { port, calls } = refusingPort(makePort, E.ERR_STALE_MEMBER_EPOCH, 2);
      t.same(await commitOutcome(port, kind), { events: ['committed'], again: 0, threw: false }, `${name}, ${kind}: committed on the third try`);
      t.equal(calls(), 3, `${name}, ${kind}: made three times`);
    }
  }
});

t.test("KIP-848: a member epoch stale for good is a 'warning' (made again next time), never an 'error'", async (t) => {
  const { port, calls } = refusingPort(rdkafkaPort, E.ERR_STALE_MEMBER_EPOCH, Infinity);
  t.same(await commitOutcome(port, 'final'), { events: ['warning'], again: 1, threw: false }, 'on stop: not thrown');
  t.ok(calls() > 1 && calls() <= 10, `a bounded number of tries (${calls()})`);
});

t.test('KIP-848: a fenced member epoch is a refusal while the group rebalances', async (t) => {
  t.equal(E.ERR_FENCED_MEMBER_EPOCH, 110, "Kafka's FENCED_MEMBER_EPOCH");
  t.same(await commitOutcome(rdkafkaPort(E.ERR_FENCED_MEMBER_EPOCH), 'periodic'), { events: [], again: 1, threw: false });
});
