'use strict';
// Security without a broker: how connect() tells a refused login from librdkafka's log lines
// and asks in bounded attempts (src/core/connect.ts), librdkafka's code put back on a delivery
// failure node-rdkafka hands over as code -1 (src/core/rdkafka-codes.ts), and the redacted
// configuration the clients keep (src/core/secrets.ts). The same against a real SASL_SSL
// cluster: test/kafka/secure.test.js.

const t = require('tap');
const util = require('node:util');
const { EventEmitter } = require('node:events');
const Kafka = require('node-rdkafka');
const { connectClient, securityFailureOf } = require('../../build/core/connect');
const { withLibrdkafkaCode } = require('../../build/core/rdkafka-codes');
const { redactConfig, REDACTED } = require('../../build/core/secrets');
const { DynamicProducer, DynamicConsumer, LagMonitor, KafkaError } = require('../..');

const E = Kafka.CODES.ERRORS;

// Lines librdkafka 2.12 logged (severity 3, facility FAIL) against the secure cluster of
// scripts/kafka.sh with a wrong password, and a TLS failure in librdkafka's wording
// (rdkafka_ssl.c: "SSL handshake failed: ...").
const SASL_LINE = '[thrd:sasl_ssl://127.0.0.1:39092/bootstrap]: sasl_ssl://127.0.0.1:39092/bootstrap: SASL authentication error: '
  + 'Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512 (after 430ms in state AUTH_REQ)';
const TLS_LINE = '[thrd:ssl://127.0.0.1:39092/bootstrap]: ssl://127.0.0.1:39092/bootstrap: SSL handshake failed: error:0A000086:SSL routines::'
  + 'certificate verify failed: broker certificate could not be verified, verify that ssl.ca.location is correctly configured (after 5ms in state SSL_HANDSHAKE)';

t.test('securityFailureOf: refused logins and TLS failures logged as errors, nothing else', async (t) => {
  t.equal(securityFailureOf({ severity: 3, fac: 'FAIL', message: SASL_LINE }), E.ERR__AUTHENTICATION, 'a refused SASL login');
  t.equal(securityFailureOf({ severity: 3, fac: 'FAIL', message: TLS_LINE }), E.ERR__SSL, 'a failed TLS handshake');
  t.equal(securityFailureOf({ severity: 7, fac: 'FAIL', message: SASL_LINE }), undefined, 'a debug line is not a failure');
  t.equal(securityFailureOf({ severity: 3, fac: 'FAIL', message: 'Connect to ipv4#127.0.0.1:1 failed: Connection refused' }), undefined, 'a refused TCP connection is not');
  t.equal(securityFailureOf(null), undefined);
  t.equal(securityFailureOf({ severity: 3 }), undefined);
});

/** A stand-in for a node-rdkafka client: `answers` says what each connect attempt calls back with. */
function fakeClient(answers) {
  const client = new EventEmitter();
  client.attempts = [];
  client.disconnects = 0;
  client.connect = (options, cb) => {
    client.attempts.push(options.timeout);
    const answer = answers[Math.min(client.attempts.length - 1, answers.length - 1)];
    if (answer !== 'never') setTimeout(() => cb(answer), 5);
    client.callback = cb;
  };
  client.disconnect = (cb) => {
    client.disconnects++;
    if (cb) setImmediate(cb);
  };
  return client;
}

t.test('connectClient', async (t) => {
  await t.test('rejects at the first refused login, with the reason and without the thread prefix', async (t) => {
    const client = fakeClient(['never']);
    const done = connectClient(client, 60000);
    setTimeout(() => client.emit('event.log', { severity: 3, fac: 'FAIL', message: SASL_LINE }), 10);
    const err = await done.then(() => null, (e) => e);
    t.ok(err instanceof KafkaError, 'a KafkaError');
    t.equal(err.code, 'KDP_KAFKA_ERROR');
    t.equal(err.librdkafkaCode, E.ERR__AUTHENTICATION);
    t.match(err.message, /^connect: authentication failed: sasl_ssl:\/\/127\.0\.0\.1:39092\/bootstrap: SASL authentication error: Authentication failed/);
    t.equal(client.listenerCount('event.log'), 0, 'its log listener is removed');
    client.callback(null);
    await new Promise((resolve) => setImmediate(resolve));
    t.equal(client.disconnects, 1, 'a connection that came up after the rejection is closed again');
  });

  await t.test('a TLS failure rejects with librdkafka\'s SSL code', async (t) => {
    const client = fakeClient(['never']);
    const done = connectClient(client, 60000, 'start');
    setTimeout(() => client.emit('event.log', { severity: 3, fac: 'FAIL', message: TLS_LINE }), 10);
    await t.rejects(done, { code: 'KDP_KAFKA_ERROR', librdkafkaCode: E.ERR__SSL, message: /^start: TLS handshake failed: / });
  });

  await t.test('asks again while no broker answers, each attempt at most 5 s, then resolves', async (t) => {
    const unanswered = { code: E.ERR__TRANSPORT, message: 'broker transport failure' };
    const timedOut = { code: E.ERR__TIMED_OUT, message: 'Local: Timed out' };
    const client = fakeClient([unanswered, timedOut, null]);
    await connectClient(client, 60000);
    t.equal(client.attempts.length, 3, 'three attempts');
    t.ok(client.attempts.every((ms) => ms <= 5000), `each with a metadata timeout of at most 5000 ms (${client.attempts.join(', ')})`);
    t.equal(client.listenerCount('event.log'), 0);
  });

  await t.test('any other failure rejects at once, without a second attempt', async (t) => {
    const client = fakeClient([{ code: E.ERR__INVALID_ARG, message: 'ssl.key.location failed: error:0A080009:SSL routines::PEM lib' }]);
    await t.rejects(connectClient(client, 60000), { code: 'KDP_KAFKA_ERROR', librdkafkaCode: E.ERR__INVALID_ARG, message: /^connect: ssl\.key\.location failed/ });
    t.equal(client.attempts.length, 1);
  });

  await t.test('the last attempt ends within the timeout with the client\'s error', async (t) => {
    const client = fakeClient([{ code: E.ERR__TRANSPORT, message: 'broker transport failure' }]);
    await t.rejects(connectClient(client, 300), { librdkafkaCode: E.ERR__TRANSPORT });
    t.ok(client.attempts.length >= 1 && client.attempts.every((ms) => ms <= 300), `attempts within the 300 ms (${client.attempts.join(', ')})`);
  });

  await t.test('a client that never calls back: rejected a little after the timeout', async (t) => {
    const client = fakeClient(['never']);
    await t.rejects(connectClient(client, 50), { code: 'KDP_KAFKA_ERROR', librdkafkaCode: E.ERR__TIMED_OUT, message: /no answer within 50 ms/ });
  });

  await t.test('a client whose connect throws', async (t) => {
    const client = fakeClient([null]);
    client.connect = () => {
      throw Object.assign(new Error('Local: Invalid argument or configuration'), { code: E.ERR__INVALID_ARG });
    };
    await t.rejects(connectClient(client, 1000), { code: 'KDP_KAFKA_ERROR', librdkafkaCode: E.ERR__INVALID_ARG });
  });
});

t.test('withLibrdkafkaCode: the code node-rdkafka drops from a delivery failure', async (t) => {
  // node-rdkafka 3.6 (lib/error.js) turns 'Broker: Topic authorization failed' into this.
  const dropped = { code: -1, message: 'topic authorization failed' };
  t.equal(withLibrdkafkaCode(dropped).code, E.ERR_TOPIC_AUTHORIZATION_FAILED, 'topic authorization');
  t.equal(withLibrdkafkaCode({ code: -1, message: 'group authorization failed' }).code, E.ERR_GROUP_AUTHORIZATION_FAILED, 'group authorization');
  t.equal(withLibrdkafkaCode({ code: -1, message: 'Message size too large' }).code, E.ERR_MSG_SIZE_TOO_LARGE, 'matched without regard to case');
  const unknown = { code: -1, message: 'something else' };
  t.equal(withLibrdkafkaCode(unknown), unknown, 'an unknown text: the error as it is');
  const coded = { code: E.ERR__MSG_TIMED_OUT, message: 'topic authorization failed' };
  t.equal(withLibrdkafkaCode(coded), coded, 'an error with a code: as it is');
  t.equal(withLibrdkafkaCode(null), null);
});

t.test('the clients keep no secret where inspecting or serialising them would show it', async (t) => {
  const secrets = { 'sasl.password': 'sasl-secret-0123456789', 'ssl.key.password': 'key-secret-0123456789' };
  t.same(redactConfig({ 'sasl.username': 'app', ...secrets, 'sasl.oauthbearer.client.secret': 'oauth-secret', 'ssl.key.pem': 'PEM' }),
    { 'sasl.username': 'app', 'sasl.password': REDACTED, 'ssl.key.password': REDACTED, 'sasl.oauthbearer.client.secret': REDACTED, 'ssl.key.pem': REDACTED }, 'redactConfig');
  const config = { 'metadata.broker.list': '127.0.0.1:1', 'security.protocol': 'sasl_ssl', 'sasl.mechanisms': 'SCRAM-SHA-512', 'sasl.username': 'app', ...secrets };
  const producer = new DynamicProducer(config);
  const consumer = new DynamicConsumer({ ...config, 'group.id': 'g' });
  const monitor = new LagMonitor(config, { groupId: 'g', topics: ['t'] });
  for (const [name, client] of [['DynamicProducer', producer], ['DynamicConsumer', consumer], ['LagMonitor', monitor]]) {
    const text = util.inspect(client, { depth: Infinity, showHidden: true }) + JSON.stringify(client);
    for (const [property, secret] of Object.entries(secrets)) t.notOk(text.includes(secret), `${name}: no ${property} when inspected or serialised`);
    t.equal(client.client.globalConfig['sasl.username'], 'app', `${name}: the rest of the configuration as given`);
  }
  t.equal(config['sasl.password'], secrets['sasl.password'], "the caller's object is left as it was");
  await producer.disconnect();
});
