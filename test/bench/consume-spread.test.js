'use strict';
// bench:consume --spread on librdkafka's mock cluster, short: DynamicProducer fills the topic
// (its hot key spread over the partitions, with order headers), and every row reads it whole.
// DynamicConsumer, on both engines, loses nothing, hands nothing out twice and leaves no
// inversion of a key that a message flagged out of order does not explain; the plain
// node-rdkafka loop, which restores nothing, reads the spread key out of order (what shows the
// bench's check sees an inversion).
const t = require('tap');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

t.test('a spread topic: DynamicConsumer restores every key\'s order, the plain loop does not', async (t) => {
  const run = spawnSync(process.execPath, [path.join(__dirname, '../../bench/consume.js'), '--messages=20000', '--rounds=1', '--spread', '--json',
    '--only=DynamicConsumer,node-rdkafka consume(500) loop'], { encoding: 'utf8', timeout: 240_000 });
  t.equal(run.status, 0, `the bench ran (${run.stderr.slice(-500)})`);
  const out = JSON.parse(run.stdout);
  t.ok(out.spreadMessages > 1000, `premise: DynamicProducer spread ${out.spreadMessages} of 20,000 messages`);
  const rows = Object.fromEntries(out.rows.map((r) => [r.name.replace(/ \*$/, ''), r]));
  for (const name of ['DynamicConsumer, native engine', 'DynamicConsumer, engine client']) {
    const r = rows[name];
    t.ok(r !== undefined, `${name}: a row`);
    t.same({ lost: r.lost, duplicated: r.duplicated, unexplained: r.unexplained }, { lost: 0, duplicated: 0, unexplained: 0 },
      `${name}: nothing lost or twice, no inversion unexplained (${r.outOfOrder} out of key order, ${r.flagged} flagged)`);
  }
  const plain = rows['node-rdkafka consume(500) loop'];
  t.same({ lost: plain.lost, duplicated: plain.duplicated }, { lost: 0, duplicated: 0 }, 'the plain loop reads everything once');
  t.ok(plain.unexplained > 0, `the plain loop reads the spread key out of order (${plain.unexplained})`);
});
