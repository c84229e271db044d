'use strict';
// The W3C Trace Context `traceparent` as read from a consumed message (src/core/tracing.ts),
// against the rules and examples of the W3C Recommendation (https://www.w3.org/TR/trace-context/,
// section 3.2): version 00 is exactly four fields; a later version may carry more after a dash;
// version ff is invalid; trace-id and parent-id are lowercase hex and not all zeros. And a
// header (a traceparent, the order header) found among every shape of headers a client gives
// (src/core/header-value.ts).
const t = require('tap');
const api = require('@opentelemetry/api');
const { parseTraceparent, traceparentOf } = require('../../build/core/tracing');
const { headerText } = require('../../build/core/header-value');
const { orderOf } = require('../../build/delivery/message-order');
const { encodeOrderHeader, decodeOrderHeader, ORDER_HEADER, ORDER_SPREAD } = require('../..');

const EXAMPLE = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

t.test("the Recommendation's example and its rules", async (t) => {
  t.same(parseTraceparent(api, EXAMPLE, undefined), { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true });
  t.same(parseTraceparent(api, '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00', undefined)?.traceFlags, 0, 'not sampled');
  t.ok(parseTraceparent(api, 'cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-will-be-like', undefined), 'a later version, with more after a dash');
  for (const [why, value] of [
    ['version ff', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['version 00 with more', `${EXAMPLE}-more`],
    ['a later version with more, without a dash', 'cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x'],
    ['an all-zero trace-id', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['an all-zero parent-id', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'],
    ['uppercase hex', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01'],
    ['a short trace-id', '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01'],
    ['flags not hex', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g'],
    ['nothing', ''],
  ]) t.equal(parseTraceparent(api, value, undefined), undefined, why);
  const withState = parseTraceparent(api, EXAMPLE, 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7');
  t.equal(withState.traceState.get('rojo'), '00f067aa0ba902b7', 'its tracestate carried on');
  t.equal(traceparentOf({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 }), EXAMPLE, 'written as read');
});

t.test('a header among the shapes clients give', async (t) => {
  t.equal(headerText([{ a: 'x' }, { traceparent: Buffer.from(EXAMPLE) }], 'traceparent'), EXAMPLE, "node-rdkafka's list");
  t.equal(headerText({ traceparent: [Buffer.from(EXAMPLE)] }, 'traceparent'), EXAMPLE, 'a KafkaJS-style object (a list of values: the first)');
  t.equal(headerText(new Map([[Buffer.from('traceparent'), Buffer.from(EXAMPLE)]]), 'traceparent'), EXAMPLE, 'a Map with Buffer names');
  t.equal(headerText([['traceparent', EXAMPLE]], 'traceparent'), EXAMPLE, '[name, value] entries');
  t.equal(headerText(undefined, 'traceparent'), undefined, 'no headers');
  t.equal(headerText([{ other: 'x' }], 'traceparent'), undefined, 'not among them');
  t.equal(headerText([['tracepar', 'x'], [Buffer.from('traceparentt'), 'y']], 'traceparent'), undefined, 'a name that only begins or ends alike is another');
});

t.test("the order header among the same shapes, as the engine reads it (its value as the client gave it, bytes or text)", async (t) => {
  const value = encodeOrderHeader(ORDER_SPREAD, '9f86d081884c7d65', 7, 6, 3, 4, 1);
  const want = decodeOrderHeader(value);
  const shapes = [
    ["node-rdkafka's list", [{ a: 'x' }, { [ORDER_HEADER]: Buffer.from(value) }]],
    ['a KafkaJS-style object', { [ORDER_HEADER]: Buffer.from(value) }],
    ['a KafkaJS-style object, a list of values', { [ORDER_HEADER]: [Buffer.from(value), Buffer.from('other')] }],
    ['a Map with Buffer names', new Map([[Buffer.from(ORDER_HEADER), Buffer.from(value)]])],
    ['[name, value] entries, text', [[ORDER_HEADER, value]]],
  ];
  for (const [name, headers] of shapes) t.same(orderOf({ headers }), want, name);
  t.equal(orderOf({ headers: [{ other: 'x' }] }), null, 'none');
  t.equal(orderOf({}), null, 'no headers');
});
