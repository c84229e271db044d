'use strict';
// The fault scenarios' summary (test/kafka/faults-*.test.js): each appended its figures as a
// JSON line to the summary file (lib/faults.js: KDP_FAULTS_SUMMARY, else
// <tmpdir>/kdp-faults-summary.jsonl). This file folds them into one line,
//   faults: N scenarios, lost 0, duplicated N (re-reads only), order violations 0, longest stall X s
// which npm run test:kafka (scripts/test-kafka.sh) also prints as its last line, and checks the totals.
// Skipped when no scenario ran.

const t = require('tap');
const { summaryLine, SUMMARY } = require('./lib/faults');

const s = summaryLine();
t.test('fault scenarios: summary', s ? {} : { skip: `no fault scenario figures in ${SUMMARY}` }, async (t) => {
  t.comment(s.line);
  for (const x of s.all) t.comment(JSON.stringify(x));
  const sum = (k) => s.all.reduce((n, x) => n + x[k], 0);
  t.equal(sum('lost'), 0, 'nothing acknowledged lost in any scenario');
  t.equal(sum('badDuplicates'), 0, 'duplicates only re-reads');
  t.equal(sum('orderViolations'), 0, 'no order violation');
  t.equal(sum('badFlags'), 0, 'flags only where docs/ordering.md allows');
});
