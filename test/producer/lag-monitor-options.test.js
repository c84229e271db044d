'use strict';
// LagMonitor's options are checked at construction, as DynamicConsumer's and the Resequencer's
// are: an unknown one is named with the valid ones, a wrong type names its path.
const t = require('tap');
const { LagMonitor } = require('../..');

const config = { 'metadata.broker.list': 'localhost:1', log_level: 0 };
const valid = { groupId: 'g', topics: ['t'] };

t.test('unknown options are rejected with their path and the valid names', async (t) => {
  for (const [options, path] of [
    [{ ...valid, interval: 500 }, 'options.interval'], // a typo of intervalMs
    [{ ...valid, group: 'g' }, 'options.group'],
    [{ ...valid, topic: 't' }, 'options.topic'],
    [{ ...valid, toString: () => '' }, 'options.toString'], // an Object.prototype name is no option either
  ]) {
    const err = t.throws(() => new LagMonitor(config, options), { code: 'KDP_INVALID_OPTION', name: 'InvalidOptionError', path });
    t.match(err.message, `${path} is not an option`);
    for (const name of ['groupId', 'topics', 'intervalMs']) t.match(err.message, name);
  }
});

t.test('groupId, topics, intervalMs, holdHandoffsMs and penaltyGain of the wrong type or range are rejected', async (t) => {
  for (const [options, path] of [
    [{ topics: ['t'] }, 'options.groupId'],
    [{ ...valid, groupId: 42 }, 'options.groupId'],
    [{ ...valid, groupId: '' }, 'options.groupId'],
    [{ groupId: 'g' }, 'options.topics'],
    [{ ...valid, topics: 't' }, 'options.topics'],
    [{ ...valid, topics: [] }, 'options.topics'],
    [{ ...valid, topics: ['t', 7] }, 'options.topics[1]'],
    [{ ...valid, topics: [''] }, 'options.topics[0]'],
    [{ ...valid, intervalMs: '500' }, 'options.intervalMs'],
    [{ ...valid, intervalMs: 9 }, 'options.intervalMs'],
    [{ ...valid, intervalMs: 1.5e3 + 0.5 }, 'options.intervalMs'],
    [{ ...valid, intervalMs: 2 ** 31 }, 'options.intervalMs'], // beyond what setInterval takes
    [{ ...valid, intervalMs: NaN }, 'options.intervalMs'],
    [{ ...valid, holdHandoffsMs: -1 }, 'options.holdHandoffsMs'],
    [{ ...valid, holdHandoffsMs: '1000' }, 'options.holdHandoffsMs'],
    [{ ...valid, holdHandoffsMs: 2 ** 31 }, 'options.holdHandoffsMs'],
    [{ ...valid, holdHandoffsMs: 0.5 }, 'options.holdHandoffsMs'],
    [{ ...valid, penaltyGain: -0.1 }, 'options.penaltyGain'],
    [{ ...valid, penaltyGain: '3' }, 'options.penaltyGain'],
    [{ ...valid, penaltyGain: NaN }, 'options.penaltyGain'],
    [{ ...valid, penaltyGain: Infinity }, 'options.penaltyGain'],
    [{ ...valid, penaltyGain: 101 }, 'options.penaltyGain'],
  ]) {
    t.throws(() => new LagMonitor(config, options), { code: 'KDP_INVALID_OPTION', path }, JSON.stringify(options));
  }
  t.throws(() => new LagMonitor(config, null), { code: 'KDP_INVALID_OPTION', path: 'options' });
  t.throws(() => new LagMonitor(null, valid), { code: 'KDP_INVALID_ARG_TYPE', argument: 'globalConfig' });
});

t.test('valid options construct a monitor (not connected)', async (t) => {
  t.ok(new LagMonitor(config, valid));
  t.ok(new LagMonitor(config, { ...valid, intervalMs: 10 }));
  t.ok(new LagMonitor(config, { ...valid, intervalMs: undefined }));
  t.ok(new LagMonitor(config, { ...valid, holdHandoffsMs: 0 }), 'holdHandoffsMs 0: never hold');
  t.ok(new LagMonitor(config, { ...valid, penaltyGain: 0 }), 'penaltyGain 0: lag gives no penalty');
  t.ok(new LagMonitor(config, { ...valid, penaltyGain: 12.5 }), 'penaltyGain: any number in [0, 100]');
});
