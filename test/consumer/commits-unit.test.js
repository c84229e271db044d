'use strict';
// DynamicConsumer's commit results (src/consumer/commits.ts) alone: which refusals are an
// 'error', which a 'warning', which are made again silently. The codes are librdkafka's
// (node-rdkafka's CODES.ERRORS), as a commit callback gives them.
const t = require('tap');
const Kafka = require('node-rdkafka');
const { Commits } = require('../../build/consumer/commits');

const E = Kafka.CODES.ERRORS;
const OFFSETS = [{ topic: 't', partition: 0, offset: 5 }];

/** The events a commit result with `code` emits, periodic or not, and whether its offsets are to be committed again. */
function outcome(code, periodic) {
  const events = [];
  let again = 0;
  const dispatch = { notCommitted: (list) => { again += list.length; } };
  const commits = new Commits({}, dispatch, {}, (event) => events.push(event), () => {});
  commits.done(code === null ? null : { code, message: `code ${code}` }, OFFSETS, periodic);
  return { events, again };
}

t.test('a commit the group took is committed', async (t) => {
  t.same(outcome(null, true), { events: ['committed'], again: 0 });
});

t.test("refused while the group rebalances: silent when periodic (made again), a 'warning' on revoke", async (t) => {
  for (const code of [E.ERR_REBALANCE_IN_PROGRESS, E.ERR_ILLEGAL_GENERATION, E.ERR_UNKNOWN_MEMBER_ID]) {
    t.same(outcome(code, true), { events: [], again: 1 }, `periodic, code ${code}`);
    t.same(outcome(code, false), { events: ['warning'], again: 1 }, `on revoke, code ${code}`);
  }
});

t.test("refused while the group's coordinator moves (a broker restarting): a 'warning', made again", async (t) => {
  t.equal(E.ERR_COORDINATOR_LOAD_IN_PROGRESS, 14, "Kafka's COORDINATOR_LOAD_IN_PROGRESS");
  t.equal(E.ERR_COORDINATOR_NOT_AVAILABLE, 15, "Kafka's COORDINATOR_NOT_AVAILABLE");
  t.equal(E.ERR_NOT_COORDINATOR, 16, "Kafka's NOT_COORDINATOR");
  for (const code of [14, 15, 16]) {
    t.same(outcome(code, true), { events: ['warning'], again: 1 }, `periodic, code ${code}`);
    t.same(outcome(code, false), { events: ['warning'], again: 1 }, `on revoke, code ${code}`);
  }
});

t.test("any other refusal is an 'error', and made again", async (t) => {
  for (const code of [E.ERR_GROUP_AUTHORIZATION_FAILED, E.ERR_OFFSET_METADATA_TOO_LARGE]) {
    t.same(outcome(code, true), { events: ['error'], again: 1 }, `code ${code}`);
  }
});

// The KafkaJS-API adapter's commits (src/kafkajs/commits.ts) follow the same rule; its
// client's errors carry Kafka's numeric code (KafkaJS's KafkaJSProtocolError: code and type).
const { KafkaJsCommits } = require('../../build/kafkajs/commits');

/** The events of one commit refused with `code` (null: taken), and whether it threw. */
async function kafkaJsOutcome(code, periodic) {
  const events = [];
  let again = 0;
  // The adapter's host (src/kafkajs/consumer-host.ts): its commit() is the consumer's commitOffsets().
  const host = {
    name: 'a stand-in consumer',
    commit: async () => {
      if (code !== null) throw Object.assign(new Error(`code ${code}`), { code });
    },
  };
  const dispatch = { notCommitted: (list) => { again += list.length; } };
  const hooks = { running: () => true, client: () => null, emit: (event) => events.push(event), hasErrorListener: () => true };
  const commits = new KafkaJsCommits(host, dispatch, {}, { textOf: () => undefined, sent() {} }, hooks);
  let threw = false;
  await commits.commit(OFFSETS, periodic).catch(() => { threw = true; });
  return { events, again, threw };
}

t.test('the KafkaJS-API adapter: the same outcomes', async (t) => {
  t.same(await kafkaJsOutcome(null, true), { events: ['committed'], again: 0, threw: false });
  for (const code of [22, 25, 27]) {
    t.same(await kafkaJsOutcome(code, true), { events: [], again: 1, threw: false }, `rebalancing, periodic, code ${code}`);
    t.same(await kafkaJsOutcome(code, false), { events: ['warning'], again: 1, threw: false }, `rebalancing, on stop, code ${code}`);
  }
  for (const code of [14, 15, 16]) {
    t.same(await kafkaJsOutcome(code, true), { events: ['warning'], again: 1, threw: false }, `coordinator moving, periodic, code ${code}`);
    t.same(await kafkaJsOutcome(code, false), { events: ['warning'], again: 1, threw: false }, `coordinator moving, on stop, code ${code}`);
  }
  t.same(await kafkaJsOutcome(30, true), { events: ['error'], again: 1, threw: false }, 'another refusal, periodic: an error');
  t.same(await kafkaJsOutcome(30, false), { events: [], again: 1, threw: true }, 'another refusal, on stop: thrown');
});

t.test("failed for want of a connection (a broker going down): a 'warning', made again", async (t) => {
  // librdkafka's local codes, as its rdkafka.h numbers them.
  t.equal(E.ERR__TRANSPORT, -195, "librdkafka's RD_KAFKA_RESP_ERR__TRANSPORT");
  t.equal(E.ERR__ALL_BROKERS_DOWN, -187, "librdkafka's RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN");
  t.equal(E.ERR__TIMED_OUT, -185, "librdkafka's RD_KAFKA_RESP_ERR__TIMED_OUT");
  t.equal(E.ERR_REQUEST_TIMED_OUT, 7, "Kafka's REQUEST_TIMED_OUT");
  t.equal(E.ERR_NETWORK_EXCEPTION, 13, "Kafka's NETWORK_EXCEPTION");
  t.equal(E.ERR__WAIT_COORD, -180, "librdkafka's RD_KAFKA_RESP_ERR__WAIT_COORD (the group's coordinator being looked for)");
  for (const code of [-195, -187, -185, -180, 7, 13]) {
    t.same(outcome(code, true), { events: ['warning'], again: 1 }, `periodic, code ${code}`);
    t.same(outcome(code, false), { events: ['warning'], again: 1 }, `on revoke, code ${code}`);
    t.same(await kafkaJsOutcome(code, true), { events: ['warning'], again: 1, threw: false }, `KafkaJS API, periodic, code ${code}`);
  }
});
