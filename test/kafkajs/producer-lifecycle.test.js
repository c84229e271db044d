'use strict';
// wrapKafkaJsProducer()'s lifecycle (src/core/lifecycle.ts) without a cluster, on a fake
// KafkaJS-API producer and admin: one connect under way shared by every connect() call,
// disconnect() for good whether connected or not (after a connect under way), one disconnect
// under way shared, and what send() says in each phase.
const t = require('tap');
const { wrapKafkaJsProducer } = require('../..');

function fakes() {
  const calls = { connect: 0, disconnect: 0 };
  let release;
  const producer = {
    /** Resolves when release() is called (the test holds the connect under way). */
    connect: () => {
      calls.connect++;
      return new Promise((resolve, reject) => {
        release = (err) => (err ? reject(err) : resolve());
      });
    },
    disconnect: async () => {
      calls.disconnect++;
    },
    send: async () => [],
  };
  const admin = {
    fetchTopicMetadata: async ({ topics }) => topics.map((name) => ({ name, partitions: [{ partitionId: 0 }, { partitionId: 1 }] })),
  };
  return { producer, admin, calls, release: (err) => release(err) };
}

const record = { topic: 't', messages: [{ key: 'k', value: 'v' }] };

t.test('connect() calls while one is under way share it; send() before it ends: connect() first', async (t) => {
  const { producer, admin, calls, release } = fakes();
  const p = wrapKafkaJsProducer(producer, { admin });
  const first = p.connect();
  const second = p.connect();
  await t.rejects(p.send(record), { code: 'KDP_STATE', message: /connect\(\) first/ }, 'send() while connecting');
  release();
  await Promise.all([first, second]);
  t.equal(calls.connect, 1, "the producer's connect() called once");
  await p.connect();
  t.equal(calls.connect, 1, 'connect() on a connected producer does not connect again');
  t.same(await p.send(record), []);
  await p.disconnect();
});

t.test('disconnect(): one under way shared, for good; send() and connect() after it: this producer was disconnected', async (t) => {
  const { producer, admin, calls, release } = fakes();
  const p = wrapKafkaJsProducer(producer, { admin });
  const connecting = p.connect();
  release();
  await connecting;
  const first = p.disconnect();
  t.equal(p.disconnect(), first, 'a call while one is under way gets its promise');
  await t.rejects(p.send(record), { code: 'KDP_STATE', message: /was disconnected/ }, 'send() while disconnecting');
  await first;
  await p.disconnect();
  t.equal(calls.disconnect, 1, "the producer's disconnect() called once");
  await t.rejects(p.send(record), { code: 'KDP_STATE', message: /was disconnected/ });
  await t.rejects(p.connect(), { code: 'KDP_STATE', message: /was disconnected/ });
});

t.test('disconnect() of a producer never connected closes it too', async (t) => {
  const { producer, admin, calls } = fakes();
  const p = wrapKafkaJsProducer(producer, { admin });
  await p.disconnect();
  t.equal(calls.disconnect, 1);
  await t.rejects(p.connect(), { code: 'KDP_STATE', message: /was disconnected/ });
  t.equal(calls.connect, 0);
});

t.test('disconnect() during a connect waits for it, then disconnects; also after a failed connect', async (t) => {
  for (const fails of [false, true]) {
    const { producer, admin, calls, release } = fakes();
    const p = wrapKafkaJsProducer(producer, { admin });
    const connecting = p.connect();
    const disconnecting = p.disconnect();
    t.equal(calls.disconnect, 0, 'not before the connect ends');
    release(fails ? new Error('no broker') : undefined);
    if (fails) await t.rejects(connecting, /no broker/);
    else await connecting;
    await disconnecting;
    t.equal(calls.disconnect, 1, fails ? 'after a failed connect' : 'after the connect');
    await t.rejects(p.connect(), { code: 'KDP_STATE', message: /was disconnected/ });
  }
});
