// Static-vs-dynamic placement drawn for a terminal (block-character bars) and as SVG.

import type { SimulationResult } from './simulate';

const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/** A bar of `value` on a scale where `max` fills `width` characters. */
export function bar(value: number, max: number, width: number): string {
  const eighths = max > 0 ? Math.round((value / max) * width * 8) : 0;
  const full = Math.floor(eighths / 8);
  const text = '█'.repeat(full) + EIGHTHS[eighths % 8];
  return text + ' '.repeat(Math.max(0, width - text.length));
}

const fmt = (x: number, digits = 3): string => x.toFixed(digits);
const int = (x: number): string => Math.round(x).toLocaleString('en-US');

/** The terminal report of one simulation. */
export function terminalReport(r: SimulationResult, barWidth = 28): string {
  const s = r.settings;
  const n = s.partitions;
  const mean = s.messages / n;
  const max = r.static.load.concat(r.dynamic.load).reduce((a, b) => Math.max(a, b), 0);
  const lines: string[] = [];
  lines.push(`workload ${s.workload}: ${int(s.keys)} keys, ${int(s.messages)} messages, ${n} partitions, windows of ${int(s.window)}`);
  lines.push('');
  lines.push(`partition  ${'static (load / mean)'.padEnd(barWidth + 7)}  dynamic (load / mean)`);
  for (let p = 0; p < n; p++) {
    const st = r.static.load[p];
    const dy = r.dynamic.load[p];
    lines.push(`${String(p).padStart(9)}  ${bar(st, max, barWidth)} ${fmt(st / mean, 2).padStart(5)}  ${bar(dy, max, barWidth)} ${fmt(dy / mean, 2).padStart(5)}`);
  }
  lines.push('');
  const col = (a: string, b: string): string => `${a.padEnd(barWidth + 9)}${b}`;
  lines.push(col(`max/mean static   ${fmt(r.static.maxOverMean)}`, `dynamic ${fmt(r.dynamic.maxOverMean)}`));
  lines.push(col(`worst window      ${fmt(r.static.worstWindow)}`, `dynamic ${fmt(r.dynamic.worstWindow)}`));
  if (r.dynamic.windowAfterShift.length) {
    lines.push(`window after each move of the hot set: ${r.dynamic.windowAfterShift.map((x) => fmt(x)).join(', ')}`);
  }
  lines.push(`keys spread: ${r.dynamic.keysSpread}; mean partitions per spread key: ${fmt(r.dynamic.meanPartitionsPerSpreadKey, 1)}; ` +
    `keys moved off their partition: ${r.dynamic.keysMoved}`);
  lines.push(`messages of never-hot keys moved: ${r.dynamic.coldMessagesMoved}`);
  lines.push(spreadLine(r));
  if (r.detection) {
    const d = r.detection;
    lines.push(`detection: ${d.trulyHot} keys above the hot threshold, ${d.reported} reported hot for their share ` +
      `(${d.missed} missed, ${d.falseHot} false), ${d.relief} hot to relieve a partition`);
  }
  lines.push(`decision cost: ${fmt(r.nsPerMessage, 0)} ns per message (the simulator's loop included)`);
  return lines.join('\n');
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

/** Messages of spread keys and moved messages, next to the offline minimum for the workload. */
export function spreadLine(r: SimulationResult): string {
  const m = r.settings.messages;
  const d = r.dynamic;
  const minimum = d.offlineMinimum === null ? '' : `; offline minimum ${pct(d.offlineMinimum)} (spread / minimum ${(d.spreadMessages / m / d.offlineMinimum).toFixed(2)})`;
  return `messages of spread keys: ${int(d.spreadMessages)} (${pct(d.spreadMessages / m)}); moved off their partition: ${int(d.movedMessages)} (${pct(d.movedMessages / m)})${minimum}`;
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The same comparison as an SVG bar chart: per partition, static and dynamic load over the mean. */
export function svgReport(r: SimulationResult): string {
  const s = r.settings;
  const n = s.partitions;
  const mean = s.messages / n;
  const width = Math.max(640, 80 + n * 18);
  const height = 420;
  const left = 56;
  const right = 16;
  const top = 64;
  const bottom = 48;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const ratios = [...r.static.load, ...r.dynamic.load].map((x) => x / mean);
  const yMax = Math.max(1.2, Math.ceil(ratios.reduce((a, b) => Math.max(a, b), 0) * 5) / 5);
  const y = (v: number): number => top + plotH - (v / yMax) * plotH;
  const slot = plotW / n;
  const barW = Math.max(1, slot * 0.38);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="100%" height="100%" fill="#fff"/>`);
  out.push(`<text x="${left}" y="22" font-size="15" font-weight="bold">${esc(`${s.workload}: static vs dynamic placement, ${n} partitions`)}</text>`);
  out.push(`<text x="${left}" y="42">${esc(`max/mean static ${fmt(r.static.maxOverMean)} (worst window ${fmt(r.static.worstWindow)}), dynamic ${fmt(r.dynamic.maxOverMean)} (worst window ${fmt(r.dynamic.worstWindow)}); ${r.dynamic.keysSpread} keys spread`)}</text>`);
  for (let v = 0; v <= yMax + 1e-9; v += yMax > 4 ? 1 : 0.2) {
    out.push(`<line x1="${left}" x2="${width - right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#eee"/>`);
    out.push(`<text x="${left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${v.toFixed(1)}</text>`);
  }
  for (let p = 0; p < n; p++) {
    const x = left + p * slot + slot * 0.1;
    const st = r.static.load[p] / mean;
    const dy = r.dynamic.load[p] / mean;
    out.push(`<rect x="${x.toFixed(1)}" y="${y(st).toFixed(1)}" width="${barW.toFixed(1)}" height="${(y(0) - y(st)).toFixed(1)}" fill="#b0b0b0"><title>partition ${p} static ${fmt(st)}</title></rect>`);
    out.push(`<rect x="${(x + barW).toFixed(1)}" y="${y(dy).toFixed(1)}" width="${barW.toFixed(1)}" height="${(y(0) - y(dy)).toFixed(1)}" fill="#2b6cb0"><title>partition ${p} dynamic ${fmt(dy)}</title></rect>`);
    if (n <= 64 || p % Math.ceil(n / 64) === 0) {
      out.push(`<text x="${(x + barW).toFixed(1)}" y="${height - bottom + 16}" text-anchor="middle" font-size="10">${p}</text>`);
    }
  }
  out.push(`<line x1="${left}" x2="${width - right}" y1="${y(1).toFixed(1)}" y2="${y(1).toFixed(1)}" stroke="#c53030" stroke-dasharray="5,4"/>`);
  out.push(`<text x="${width - right}" y="${(y(1) - 4).toFixed(1)}" text-anchor="end" fill="#c53030">mean</text>`);
  out.push(`<text x="${left + plotW / 2}" y="${height - 10}" text-anchor="middle">partition (load / mean)</text>`);
  out.push(`<text x="${left}" y="58" font-size="11">${esc(spreadLine(r))}</text>`);
  out.push(`<rect x="${width - right - 170}" y="50" width="12" height="12" fill="#b0b0b0"/><text x="${width - right - 153}" y="60">static</text>`);
  out.push(`<rect x="${width - right - 100}" y="50" width="12" height="12" fill="#2b6cb0"/><text x="${width - right - 83}" y="60">dynamic</text>`);
  out.push('</svg>');
  return out.join('\n') + '\n';
}
