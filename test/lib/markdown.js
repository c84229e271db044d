'use strict';
// What test/readme.test.js reads in a Markdown page: its fenced code blocks (and which are marked
// runnable), its headings' anchors as GitHub makes them, and its relative links.

const fs = require('node:fs');
const path = require('node:path');

const RUNNABLE = /^<!-- runnable(?:: with ([@\w/.-]+))? -->$/;

/**
 * Fenced code blocks of a Markdown text: { lang, code, line, runnable, needs }. A block is runnable
 * when its previous non-blank line is `<!-- runnable -->`, or `<!-- runnable: with <package> -->`
 * (then `needs` names that optional package).
 */
function codeBlocks(markdown) {
  const lines = markdown.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    let prev = start - 1;
    while (prev >= 0 && lines[prev].trim() === '') prev--;
    const marker = prev >= 0 ? RUNNABLE.exec(lines[prev].trim()) : null;
    blocks.push({
      lang: open[1],
      code: lines.slice(start + 1, end).join('\n'),
      line: start + 1,
      runnable: marker !== null,
      needs: marker ? marker[1] : undefined,
    });
    i = end;
  }
  return blocks;
}

/**
 * The anchors GitHub gives a page's headings: the text lower-cased, every character but letters,
 * digits, spaces, '-' and '_' dropped (backticks and colons included), each space a '-'; a
 * heading whose slug was taken gets '-1', '-2', ... (github/cmark-gfm's and github-slugger's rule).
 */
function anchors(markdown) {
  const out = new Set();
  const seen = new Map();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^```/.test(line)) fenced = !fenced;
    const h = !fenced && /^#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (!h) continue;
    const slug = h[1]
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** Relative link (and image) targets of a Markdown text, outside code fences and code spans. */
function relativeLinks(markdown) {
  const out = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^```/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    const text = line.replace(/`[^`]*`/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, ...
      out.push(target);
    }
  }
  return out;
}

/**
 * The relative links of `text` (the page at `page`, relative to `root`) that lead nowhere: no such
 * file, or a `#fragment` into a Markdown page with no heading of that anchor. { broken, checked }.
 */
function brokenLinks(root, page, text) {
  const broken = [];
  const links = relativeLinks(text);
  for (const link of links) {
    const [file, fragment] = link.split('#');
    const target = file === '' ? path.join(root, page) : path.resolve(root, path.dirname(page), file);
    if (!fs.existsSync(target)) broken.push(`${page}: ${link} (no file ${path.relative(root, target)})`);
    else if (fragment && target.endsWith('.md') && !anchors(fs.readFileSync(target, 'utf8')).has(fragment)) {
      broken.push(`${page}: ${link} (no such heading)`);
    }
  }
  return { broken, checked: links.length };
}

module.exports = { codeBlocks, anchors, relativeLinks, brokenLinks };
