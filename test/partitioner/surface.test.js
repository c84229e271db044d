'use strict';
// The public declarations of DynamicPartitioner are its documented surface (README,
// "DynamicPartitioner"): what the producers and the lag monitor use of it besides (the
// resolved options, hold(), recentMessagesPerPartition()) is internal, left out of the
// declarations (stripInternal) though callable from inside the package.
const t = require('tap');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { DynamicPartitioner } = require('../..');

const DOCUMENTED = [
  'trackedKeysBound', 'decision', 'partition', 'decide', 'partitionBatch', 'share', 'hotKeys', 'setPartitionPenalty', 'stats', 'close',
];
const INTERNAL = ['options', 'hold', 'recentMessagesPerPartition'];

/** The names of the public members declared in the class body of `dts`. */
function publicMembers(dts) {
  const body = dts.slice(dts.indexOf('export declare class DynamicPartitioner'));
  const names = [];
  for (const line of body.slice(0, body.indexOf('\n}')).split('\n').slice(1)) {
    const m = /^ {4}(?:readonly |get )?([A-Za-z_$][\w$]*)[(:?;]/.exec(line);
    if (m && m[1] !== 'constructor') names.push(m[1]);
  }
  return names;
}

t.test('the declarations have the documented members and nothing else public', async (t) => {
  const dts = readFileSync(join(__dirname, '..', '..', 'build', 'partitioner', 'partitioner.d.ts'), 'utf8');
  t.same(publicMembers(dts).sort(), [...DOCUMENTED].sort());
  for (const name of INTERNAL) t.notMatch(dts, new RegExp(`\\b${name}[(:]`), `${name} is not declared`);
});

t.test('the internal members stay callable from inside the package', async (t) => {
  const p = new DynamicPartitioner({ maxTopics: 2 });
  for (let i = 0; i < 1000; i++) p.partition('t', `k${i % 10}`, 4);
  t.equal(p.options.maxTopics, 2, 'the resolved options');
  t.ok(p.recentMessagesPerPartition('t') > 0, 'recent messages per partition of a topic with state');
  t.equal(p.recentMessagesPerPartition('unknown'), 0, 'and 0 for a topic not seen');
  t.type(p.hold, 'function');
});
