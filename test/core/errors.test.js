'use strict';
// Every bad argument of the public functions, gathered in one place.
const t = require('tap');
const {
  murmur2, partitionForKey, partitionForKeys, PARTITIONERS,
  InvalidArgTypeError, OutOfRangeError, InvalidValueError,
} = require('../..');

t.test('a key that is not a string, Buffer, Uint8Array, null or undefined', async (t) => {
  for (const bad of [42, 1n, true, {}, [], Symbol('k'), () => 1, new Uint16Array(2), new ArrayBuffer(4), new Date()]) {
    t.throws(() => partitionForKey(bad, 4), { name: 'InvalidArgTypeError', code: 'KDP_INVALID_ARG_TYPE' });
    t.throws(() => partitionForKey(bad, 4), TypeError);
    t.throws(() => partitionForKey(bad, 4), /^key must be a string, Buffer, Uint8Array, null or undefined, got /);
    t.throws(() => murmur2(bad), InvalidArgTypeError);
  }
  t.throws(() => murmur2(null), /^key must be a string, Buffer or Uint8Array, got null$/, 'murmur2 needs bytes');
  t.throws(() => murmur2(undefined), InvalidArgTypeError);
});

t.test('a bad key inside a batch names its index', async (t) => {
  t.throws(() => partitionForKeys(['a', 'b', 7], 4), { code: 'KDP_INVALID_ARG_TYPE', argument: 'keys[2]' });
  t.throws(() => partitionForKeys(['a', 'b', 7], 4), /^keys\[2\] must be a string/);
  t.throws(() => partitionForKeys('abc', 4), { code: 'KDP_INVALID_ARG_TYPE', argument: 'keys' });
  t.throws(() => partitionForKeys(new Set(['a']), 4), InvalidArgTypeError);
  t.same(Array.from(partitionForKeys([], 4)), [], 'an empty batch is fine');
});

t.test('numPartitions must be an integer in [1, 2^31 - 1]', async (t) => {
  for (const bad of [0, -1, 1.5, NaN, Infinity, -Infinity, 2 ** 31, 2 ** 53]) {
    t.throws(() => partitionForKey('k', bad), { name: 'OutOfRangeError', code: 'KDP_OUT_OF_RANGE', argument: 'numPartitions' });
    t.throws(() => partitionForKey('k', bad), RangeError);
    t.throws(() => partitionForKeys(['k'], bad), OutOfRangeError);
  }
  for (const bad of ['4', null, undefined, 4n, {}]) {
    t.throws(() => partitionForKey('k', bad), { code: 'KDP_INVALID_ARG_TYPE', argument: 'numPartitions' });
  }
  t.equal(partitionForKey('k', 1), 0, 'one partition');
  t.ok(partitionForKey('k', 2 ** 31 - 1) >= 0, 'the largest count');
});

t.test('an unknown partitioner name lists the valid ones', async (t) => {
  for (const bad of ['random', 'Murmur2', 'toString', '__proto__', '', null, 3]) {
    t.throws(() => partitionForKey('k', 4, bad), { name: 'InvalidValueError', code: 'KDP_INVALID_VALUE', argument: 'partitioner' });
    t.throws(() => partitionForKeys(['k'], 4, bad), InvalidValueError);
  }
  const err = t.throws(() => partitionForKey('k', 4, 'random'));
  for (const name of PARTITIONERS) t.match(err.message, `'${name}'`);
  t.equal(err.message, "partitioner must be one of 'murmur2_random', 'murmur2', 'consistent_random', 'consistent', " +
    "'fnv1a_random', 'fnv1a', got \"random\"");
});

t.test('PARTITIONERS cannot be changed', async (t) => {
  t.ok(Object.isFrozen(PARTITIONERS));
});
