'use strict';
// bench/e2e.js's closing lines and output file names, from the runs' figures.

const { unexplainedOrderViolations } = require('./stats');

/** A figure as text: '-' when missing, else with `digits` decimals. */
const fmt = (v, digits = 0) => (v === null || v === undefined || Number.isNaN(v) ? '-' : typeof v === 'number' ? v.toFixed(digits) : String(v));

/** A run's drain time in seconds, '>cap' when the lag had not reached 0 within the cap. */
const drainText = (r) => (r.drainCapped ? `>${r.drainCap}` : fmt(r.drainSeconds, 1));

/**
 * One scenario's summary line:
 * `e2e: static max-lag N p99 X ms drain X s | dynamic max-lag N p99 X ms drain X s | order violations N lost N dup N`
 * where the order violations, lost and duplicated messages are the dynamic run's, the
 * violations those no flag explains (unexplainedOrderViolations). A side not run shows '-'.
 */
function lastLine(runs) {
  const part = (side) => {
    const r = runs.find((x) => x.side === side);
    return r ? `${side} max-lag ${fmt(r.maxLag)} p99 ${fmt(r.latencyMs.p99, 1)} ms drain ${drainText(r)} s` : `${side} max-lag - p99 - ms drain - s`;
  };
  const d = runs.find((x) => x.side === 'dynamic');
  const violations = d ? fmt(unexplainedOrderViolations(d)) : '-';
  return `e2e: ${part('static')} | ${part('dynamic')} | order violations ${violations} lost ${d ? fmt(d.lost) : '-'} dup ${d ? fmt(d.duplicated) : '-'}`;
}

/**
 * What order restoration adds to latency, when the run had the side 'unordered' (the dynamic
 * run with orderHeaders 'none'): undefined otherwise.
 */
function resequencerLine(runs) {
  const d = runs.find((x) => x.side === 'dynamic');
  const u = runs.find((x) => x.side === 'unordered');
  if (!d || !u) return undefined;
  const ms = (r, q) => fmt(r.latencyMs[q], 1);
  return `e2e resequencer (${d.scenario}): latency p50 ${ms(d, 'p50')} ms p99 ${ms(d, 'p99')} ms with order headers, ` +
    `p50 ${ms(u, 'p50')} ms p99 ${ms(u, 'p99')} ms with orderHeaders 'none'`;
}

/**
 * With --handler-ms (runs with handlerMs): every run's max lag, p99 latency and unexplained order
 * violations side by side, static's among them (it has no flags: every violation counts), as
 * `e2e handlers (steady): 2 ms per message, 64 calls at once | static max-lag N p99 X ms order violations N | dynamic ...`;
 * undefined otherwise.
 */
function handlersLine(runs) {
  const first = runs[0];
  if (!first || first.handlerMs === null || first.handlerMs === undefined) return undefined;
  const part = (r) => `${r.side} max-lag ${fmt(r.maxLag)} p99 ${fmt(r.latencyMs.p99, 1)} ms order violations ${fmt(unexplainedOrderViolations(r))}`;
  return `e2e handlers (${first.scenario}): ${first.handlerMs} ms per message, ${first.concurrency} call${first.concurrency === 1 ? '' : 's'} at once | ${runs.map(part).join(' | ')}`;
}

/**
 * The SVG file of a scenario: `file` itself when only one scenario runs (or for the first,
 * 'steady'), else the scenario's name before the extension (lag.svg → lag-slow-consumer.svg).
 */
function svgFile(file, scenario, scenarios) {
  if (scenarios.length === 1 || scenario === scenarios[0]) return file;
  const dot = file.lastIndexOf('.');
  const slash = Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\'));
  return dot > slash + 1 ? `${file.slice(0, dot)}-${scenario}${file.slice(dot)}` : `${file}-${scenario}`;
}

module.exports = { fmt, drainText, lastLine, resequencerLine, handlersLine, svgFile };
