'use strict';
// Order across a consumer group with handled records (docs/ordering.md, "Order in a group"), in
// a randomized simulation: 2-3 members, each with its own Resequencer, own the partitions of
// the producers' logs (test/delivery/lib/simulation.js) and read them in random runs; each hands
// what it releases to a handler that ends calls in random order (one call of a key at a time,
// as DynamicConsumer's ordering 'key'); each commits its records now and then, and those
// commits reach the broker late; each reads the records of the partitions it awaits now and
// then. Members are revoked (their calls end, they commit, the partition's next owner inherits
// the record) and killed (what they had not committed is lost: the next owner inherits their
// last committed record and reads again from its offset).
//
// Checked, from the message values alone: every message handled; each producer's messages of
// each key first handled in send order, across members; nothing flagged (no 'unowned', no
// timeout: no message waits for ever, so no cycle); and the messages handled twice after a
// kill at most those the killed member handled after its last commit reached the broker.
const t = require('tap');
const { run } = require('./lib/group-simulation');

for (const [seed, members, kills, revokes] of [[11, 2, 0, 0], [12, 3, 0, 0], [13, 2, 0, 2], [14, 3, 1, 1], [15, 3, 2, 0], [16, 3, 1, 2], [17, 2, 1, 0], [18, 3, 2, 2]]) {
  t.test(`a group of ${members}, ${kills} killed, ${revokes} revoked (seed ${seed}): order across members, nothing flagged, no wait for ever`, async (t) => {
    const r = run({ seed, members, partitions: 6, messages: 20_000, kills, revokes });
    t.comment(JSON.stringify(r));
    t.ok(r.marked > 1000, `premise: ${r.marked} marked messages`);
    t.equal(r.held, 0, 'nothing left held: no message waits for ever (no cycle)');
    t.equal(r.missing, 0, 'every message handled');
    t.equal(r.flagged, 0, `nothing flagged (${JSON.stringify(r.reasons)})`);
    t.equal(r.violations, 0, "each producer's messages of each key first handled in send order, across members");
    t.ok(r.duplicates <= r.allowedDuplicates, `handled again ${r.duplicates}, at most what killed members handled after their last commit landed (${r.allowedDuplicates})`);
    t.equal(r.unexplained, 0, 'every one of them handled by a killed member after its last commit landed');
    if (kills === 0) t.equal(r.duplicates, 0, 'no kill: nothing handled twice');
  });
}

// Records at their size limit (the broker keeps 4,096 characters): each commit shortened as
// fitRecord() does, at limits small enough that most records are cut. At 400 characters (6
// producers) their offsets are cut and every answer kept; at 40 (one producer) their producers'
// runs are cut too. The same guarantees: nothing waits for ever, nothing flagged, order across
// members; and every message handled again is one a kill allows (handled since its member's
// last commit landed) or one a record left untold when its partition changed owner.
for (const [seed, members, kills, revokes, maxChars, producers] of [
  [21, 2, 0, 2, 400, 6], [22, 3, 1, 1, 400, 6], [41, 3, 2, 2, 400, 6], [31, 2, 0, 2, 40, 1], [32, 3, 1, 1, 40, 1], [43, 3, 2, 2, 40, 1],
]) {
  t.test(`records cut to ${maxChars} characters, ${producers} producer(s), a group of ${members}, ${kills} killed, ${revokes} revoked (seed ${seed})`, async (t) => {
    const r = run({ seed, members, partitions: 6, messages: 20_000, kills, revokes, maxChars, producers });
    t.comment(JSON.stringify(r));
    t.ok(r.shortened > 1000, `premise: ${r.shortened} records shortened`);
    t.equal(r.held, 0, 'nothing left held: no message waits for ever (no cycle)');
    t.equal(r.missing, 0, 'every message handled');
    t.equal(r.flagged, 0, `nothing flagged (${JSON.stringify(r.reasons)})`);
    t.equal(r.violations, 0, "each producer's messages of each key first handled in send order, across members");
    t.equal(r.unexplained, 0, `every message handled again (${r.duplicates}) was handled since its member's last commit landed (a kill) or left untold by a record (${r.untold})`);
  });
}
