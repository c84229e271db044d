'use strict';
// The W3C Trace Context `traceparent` as read from a consumed message (src/core/tracing.ts),
// against the rules and examples of the W3C Recommendation (https://www.w3.org/TR/trace-context/,
// section 3.2): version 00 is exactly four fields; a later version may carry more after a dash;
// version ff is invalid; trace-id and parent-id are lowercase hex and not all zeros.
const t = require('tap');
const api = require('@opentelemetry/api');
const { parseTraceparent, headerText, traceparentOf } = require('../../build/core/tracing');

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
});
