'use strict';
// A standalone SVG line chart: total lag over time, one line per run (thin and dotted beside
// it: messages sent but not yet handled), a dashed mark where the producers stopped.

const COLORS = { static: '#d62728', dynamic: '#1f77b4' };

function escape(text) {
  return String(text).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
}

/** A "nice" upper bound and step for an axis reaching `max`. */
function axis(max) {
  const raw = Math.max(max, 1) / 5;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= raw);
  return { step, top: Math.ceil(Math.max(max, 1) / step) * step };
}

/**
 * series: [{ name, points: [[seconds, lag]], unhandled?: [[seconds, count]], stopAt, color? }]; marks:
 * [{ at: seconds, label }], grey vertical lines (the slow-consumer scenario's slowdown); axes:
 * { x, y } labels for another chart of the same kind (bench/soak.js); returns the SVG text.
 */
function lagChart(series, title, marks = [], axes = {}) {
  const W = 760, H = 380, L = 70, R = 20, T = 40, B = 50;
  const maxX = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p[0])));
  const maxY = Math.max(1, ...series.flatMap((s) => [...s.points, ...(s.unhandled || [])].map((p) => p[1])));
  const path = (points) => points.map(([a, b]) => `${x(a).toFixed(1)},${y(b).toFixed(1)}`).join(' ');
  const ax = axis(maxX), ay = axis(maxY);
  const x = (v) => L + (v / ax.top) * (W - L - R);
  const y = (v) => H - B - (v / ay.top) * (H - T - B);
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${escape(title)}</text>`];
  for (let v = 0; v <= ay.top; v += ay.step) {
    out.push(`<line x1="${L}" x2="${W - R}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${L - 6}" y="${y(v) + 4}" text-anchor="end">${v}</text>`);
  }
  for (let v = 0; v <= ax.top; v += ax.step) out.push(`<text x="${x(v)}" y="${H - B + 16}" text-anchor="middle">${v}</text>`);
  out.push(`<line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="#333"/>`,
    `<line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" stroke="#333"/>`,
    `<text x="${(L + W - R) / 2}" y="${H - 12}" text-anchor="middle">${escape(axes.x ?? 'seconds since the producers started')}</text>`,
    `<text transform="translate(16 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">${escape(axes.y ?? 'total lag (messages)')}</text>`);
  for (const m of marks) {
    out.push(`<line x1="${x(m.at)}" x2="${x(m.at)}" y1="${T}" y2="${H - B}" stroke="#777" stroke-width="1.5"/>`,
      `<text x="${x(m.at) + 4}" y="${T + 12}" fill="#555">${escape(m.label)}</text>`);
  }
  series.forEach((s, i) => {
    const color = s.color || COLORS[s.name] || '#555';
    if (s.points.length) out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${path(s.points)}"/>`);
    if (s.unhandled && s.unhandled.length) out.push(`<polyline fill="none" stroke="${color}" stroke-width="1" stroke-dasharray="2 3" points="${path(s.unhandled)}"/>`);
    if (s.stopAt !== undefined) out.push(`<line x1="${x(s.stopAt)}" x2="${x(s.stopAt)}" y1="${T}" y2="${H - B}" stroke="${color}" stroke-dasharray="4 4" opacity="0.6"/>`);
    out.push(`<line x1="${W - R - 150}" x2="${W - R - 125}" y1="${T + 10 + i * 18}" y2="${T + 10 + i * 18}" stroke="${color}" stroke-width="2"/>`,
      `<text x="${W - R - 118}" y="${T + 14 + i * 18}">${escape(s.name)}</text>`);
  });
  if (series.some((s) => s.unhandled && s.unhandled.length)) {
    out.push(`<text x="${W - R - 150}" y="${T + 14 + series.length * 18}" fill="#555">dotted: sent, not yet handled</text>`);
  }
  out.push('</svg>', '');
  return out.join('\n');
}

module.exports = { lagChart };
