// Splitting a hot key: its allowed partitions are its normal partition and then steps of
// spreadStep(lane B) through the others (the same for every producer: allowedPartitions() on
// the TS side); each run of its messages goes to the least loaded of them (choose), and the
// set widens only as far as balance needs. See docs/design.md, "Spreading".

import { geti, seti } from "./hotkeys";
import { loadWithPenalty } from "./topics";
import { fingerprint, laneB } from "./fingerprint";
import { spreadFactor, maxSpread, homeAbove } from "./choice-options";
import { E_WIDTH, E_STEP, E_SIZE, E_SCAN_INDEX, E_SCAN_AT } from "./abi";

/** A wide set of allowed partitions is looked at this many at a time (choose); relocation looks at as many (relocate.ts). */
// @ts-ignore: decorator
@inline export const SCAN_WINDOW: i32 = 8;

// @ts-ignore: decorator
@inline
function gcd(a: i32, b: i32): i32 {
  while (b != 0) { const t = a % b; a = b; b = t; }
  return a;
}

/**
 * The stride of a key's allowed partitions among n: 1 + (laneB & 0x7fffffff) % (n - 1),
 * moved up (cyclically in 1..n-1) to the first value coprime with n, so that base,
 * base + step, base + 2 step, ... (mod n) visits every partition once.
 */
export function spreadStep(b: u32, n: i32): i32 {
  if (n <= 2) return 1;
  let step = 1 + <i32>((b & 0x7fffffff) % <u32>(n - 1));
  while (gcd(step, n) != 1) step = step == n - 1 ? 1 : step + 1;
  return step;
}

/** The stride of the allowed partitions of the key at ptr among n (see spreadStep). */
export function spreadStepAt(ptr: usize, length: i32, n: i32): i32 {
  fingerprint(ptr, length < 0 ? 0 : length);
  return spreadStep(laneB, n);
}

/** The most partitions a key may use among n: maxSpread, or all. */
// @ts-ignore: decorator
@inline
function widest(n: i32): i32 {
  return maxSpread > 0 && maxSpread < n ? maxSpread : n;
}

/** How many partitions a key with `count` of `topicTotal` may use among n. */
// @ts-ignore: decorator
@inline
function widthFor(count: f64, topicTotal: f64, n: i32): i32 {
  let w = <i32>Math.ceil(spreadFactor * count * <f64>n / topicTotal);
  if (w < 2) w = 2;
  const most = widest(n);
  return w > most ? most : w;
}

/**
 * The least loaded (load + penalty) of the allowed partitions of hot entry e. When even the
 * least loaded of them is above the topic's mean by more than half the tolerance (homeAbove),
 * the key is given one more partition (the next in its sequence): widths grow only as far as
 * balance needs, and shrink only when the key cools. Half, so that the partitions a split key
 * fills stay clear of the line at which a partition sheds its own keys (relief).
 */
export function choose(topic: i32, e: i32, count: f64, topicTotal: f64, n: i32, base: i32, b: u32, fair: f64): i32 {
  if (geti(E_SIZE, e) != n) {
    seti(E_SIZE, e, n);
    seti(E_STEP, e, spreadStep(b, n));
    seti(E_WIDTH, e, 1);
    seti(E_SCAN_INDEX, e, 0);
    seti(E_SCAN_AT, e, base);
  }
  let width = geti(E_WIDTH, e);
  // widthFor(count) > width, without a division on every message.
  if (width < 2 || spreadFactor * count * <f64>n > <f64>width * topicTotal) {
    const wanted = widthFor(count, topicTotal, n);
    if (wanted > width) { width = wanted; seti(E_WIDTH, e, width); }
  }
  const step = geti(E_STEP, e);
  // A narrow set is scanned whole; a wide one through a window of SCAN_WINDOW consecutive
  // members that moves on by a window each time: the least loaded of several choices
  // balances almost as well as the least loaded of all (the power of d choices), at a fixed cost.
  let index = 0;
  let p = base;
  let scan = width;
  if (width > SCAN_WINDOW) {
    index = geti(E_SCAN_INDEX, e);
    p = geti(E_SCAN_AT, e);
    if (index >= width) { index = 0; p = base; }
    scan = SCAN_WINDOW;
  }
  let best = p;
  let bestLoad = loadWithPenalty(topic, p, fair);
  for (let i = 1; i < scan; i++) {
    p += step;
    if (p >= n) p -= n;
    if (++index == width) { index = 0; p = base; }
    const l = loadWithPenalty(topic, p, fair);
    if (l < bestLoad) { bestLoad = l; best = p; }
  }
  if (width > SCAN_WINDOW) {
    // The next window starts after this one.
    p += step;
    if (p >= n) p -= n;
    if (++index == width) { index = 0; p = base; }
    seti(E_SCAN_INDEX, e, index);
    seti(E_SCAN_AT, e, p);
  }
  if (bestLoad > fair * homeAbove && width < widest(n)) {
    // Even the best is overloaded: admit the next partition of the key's sequence.
    seti(E_WIDTH, e, width + 1);
    p = <i32>((<i64>base + <i64>width * <i64>step) % <i64>n);
    const l = loadWithPenalty(topic, p, fair);
    if (l < bestLoad) best = p;
  }
  return best;
}
