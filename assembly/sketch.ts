// Count-min sketch with conservative update (Estan & Varghese, SIGCOMM 2002): `depth` rows of
// `width` f32 counters. A key's estimate is the minimum of its counters; an update raises
// only the counters below estimate + weight, which keeps collisions from inflating counts
// of keys that share a counter with a heavy one.
//
// Counts decay through the weight, not the counters: every update adds the current weight
// (decay.ts; times the sampling rate, admission.ts), which grows geometrically, so old
// increments shrink relative to new ones.

import { arenaAlloc, arenaFree, arenaSize } from "./memory";

let counters: usize = 0;
let width: u32 = 0;
let depth: u32 = 0;
let mask: u32 = 0;

/** `requested` counters per row rounded up to a power of two, so a row index is a mask. */
export function sketchWidthFor(requested: u32): u32 {
  let w: u32 = 1;
  while (w < requested) w <<= 1;
  return w;
}

/** The arena bytes of a sketch of `w` counters per row (a power of two) and `rows` rows. */
export function sketchBytes(w: u32, rows: u32): usize {
  return arenaSize(<usize>w * rows * 4);
}

export function sketchConfigure(requestedWidth: u32, requestedDepth: u32): void {
  width = sketchWidthFor(requestedWidth);
  mask = width - 1;
  depth = requestedDepth;
  counters = arenaAlloc(<usize>width * depth * 4);
}

/**
 * Widens every row to `newWidth` counters (a power of two, a multiple of the width): counter j
 * of a row starts with the value of counter j mod width, the one every key whose counter is
 * now j used before. So each key's estimate is unchanged (never below its true count), and
 * keys that shared a counter part as their new counts arrive and the old ones decay.
 */
export function sketchGrow(newWidth: u32): void {
  if (newWidth <= width) return;
  const old = counters;
  const oldWidth = width;
  counters = arenaAlloc(<usize>newWidth * depth * 4);
  const rowBytes = <usize>oldWidth << 2;
  for (let row: u32 = 0; row < depth; row++) {
    const from = old + <usize>row * rowBytes;
    for (let k: u32 = 0; k < newWidth; k += oldWidth) {
      memory.copy(counters + ((<usize>row * newWidth + k) << 2), from, rowBytes);
    }
  }
  arenaFree(old, <usize>oldWidth * depth * 4);
  width = newWidth;
  mask = newWidth - 1;
}

// @ts-ignore: decorator
@inline
function slot(row: u32, h1: u32, h2: u32): usize {
  // Kirsch–Mitzenmacher double hashing: row i uses h1 + i * h2 (h2 odd).
  return counters + ((<usize>row * width + ((h1 + row * h2) & mask)) << 2);
}

// The counters' addresses of the key being added, computed once (depth <= 16).
const SLOTS: usize = memory.data(16 * 8, 16);

/** Adds `weight` to the key (conservatively) and returns its new estimate. */
export function sketchAdd(h1: u32, h2: u32, weight: f32): f32 {
  h2 |= 1;
  let estimate = f32.MAX_VALUE;
  for (let row: u32 = 0; row < depth; row++) {
    const p = slot(row, h1, h2);
    store<usize>(SLOTS + (<usize>row << 3), p);
    const c = load<f32>(p);
    if (c < estimate) estimate = c;
  }
  const target = estimate + weight;
  for (let row: u32 = 0; row < depth; row++) {
    const p = load<usize>(SLOTS + (<usize>row << 3));
    if (load<f32>(p) < target) store<f32>(p, target);
  }
  return target;
}

/** The key's estimate, without counting it. */
export function sketchEstimate(h1: u32, h2: u32): f32 {
  h2 |= 1;
  let estimate = f32.MAX_VALUE;
  for (let row: u32 = 0; row < depth; row++) {
    const c = load<f32>(slot(row, h1, h2));
    if (c < estimate) estimate = c;
  }
  return estimate;
}

/** Raises the key's counters to at least `value` (a tracked key's exact count coming back). */
export function sketchRaise(h1: u32, h2: u32, value: f32): void {
  h2 |= 1;
  for (let row: u32 = 0; row < depth; row++) {
    const p = slot(row, h1, h2);
    if (load<f32>(p) < value) store<f32>(p, value);
  }
}

/**
 * Multiplies every counter by `factor` (decay.ts renormalisation). Counters that fall below
 * TINY (far below one message) become 0: repeated scaling would otherwise take them into
 * f32's subnormal range, where arithmetic is many times slower.
 */
export function sketchScale(factor: f32): void {
  const end = counters + (<usize>width * depth << 2);
  for (let p = counters; p < end; p += 4) {
    const v = load<f32>(p) * factor;
    store<f32>(p, v < TINY ? 0 : v);
  }
}

// @ts-ignore: decorator
@inline export const TINY: f32 = 1e-20;
