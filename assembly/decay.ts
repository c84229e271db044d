// Exponential decay over a horizon, by forward weighting: each message counts `weight`, and
// the weight is multiplied by 2^(1 / halfLife) per message (or by the TS side's clock for a
// time horizon), so a count seen halfLife messages ago weighs half as much as one seen now.
// A count divided by the current weight is in "recent messages". When a weight gets large,
// every count it weighs is divided by it and it restarts at 1 (topics.ts renormalise*).
//
// Each topic slot has its own two clocks (T_WEIGHT, T_LOAD_WEIGHT in its record), advanced by
// its own messages only, so a message-count horizon counts that topic's messages whatever
// the producer writes to other topics: `weight` for key counts (how fast a key turns hot and
// cools) and `loadWeight` for partition loads (how long an overload is remembered and paid
// back). The decision of a message works on its topic's clocks, loaded here (useClocks) and
// stored back after it (topics.ts). The sketch is shared by all topics: it has one clock of
// its own, `sketchWeight`, whose half-life is the key horizon times the topics with state
// (each topic's share of the messages, on average), and each topic keeps its decayed total on
// that clock (T_SKETCH_TOTAL) to compare estimates with.

/** The key clock of the topic being decided. */
import { WIDE_PARTITIONS } from "./abi";

export let weight: f64 = 1.0;
/** The load clock of the topic being decided. */
export let loadWeight: f64 = 1.0;
/** The sketch's clock, shared by all topics. */
export let sketchWeight: f64 = 1.0;
let growth: f64 = 1.0;       // per message, as configured (horizon)
let loadGrowth: f64 = 1.0;   // (loadHorizon)
let topicGrowth: f64 = 1.0;  // the current topic's (its horizon stretched for many partitions)
let topicLoadGrowth: f64 = 1.0;
let sketchGrowth: f64 = 1.0;

/** Above this weight every stored count is rescaled; far below f32's range and precision limits. */
// @ts-ignore: decorator
@inline export const RENORMALISE_AT: f64 = 1073741824.0; // 2^30

export function decayConfigure(perMessageGrowth: f64, perMessageLoadGrowth: f64): void {
  growth = perMessageGrowth;
  loadGrowth = perMessageLoadGrowth;
  sketchGrowth = perMessageGrowth;
  weight = 1.0;
  loadWeight = 1.0;
  sketchWeight = 1.0;
}

/** The sketch's half-life becomes the key horizon times `topics` (the topics with state). */
export function sketchTopics(topics: i32): void {
  sketchGrowth = Math.pow(growth, 1.0 / <f64>(topics < 1 ? 1 : topics));
}

/**
 * The growth per message of a topic of n partitions: the configured one, whose horizon is
 * stretched by n / WIDE_PARTITIONS above WIDE_PARTITIONS partitions so that a partition's fair
 * share of the horizon keeps as many messages as there (key shares and loads are measured per
 * partition: with too few messages each, detection starves and loads are noise).
 */
export function growthFor(n: i32, load: bool): f64 {
  const g = load ? loadGrowth : growth;
  return n > WIDE_PARTITIONS ? Math.pow(g, <f64>WIDE_PARTITIONS / <f64>n) : g;
}

/** Makes a topic's clocks (weights and growths) the current ones. */
// @ts-ignore: decorator
@inline
export function useClocks(w: f64, lw: f64, g: f64, lg: f64): void {
  weight = w;
  loadWeight = lw;
  topicGrowth = g;
  topicLoadGrowth = lg;
}

/** Advances the current topic's clocks and the sketch's by one message. */
// @ts-ignore: decorator
@inline
export function advance(): void {
  weight *= topicGrowth;
  loadWeight *= topicLoadGrowth;
  sketchWeight *= sketchGrowth;
}

/** Advances the sketch's clock by an external factor (time horizons); true when the sketch must be rescaled. */
export function advanceSketchBy(factor: f64): bool {
  sketchWeight *= factor;
  return sketchWeight > RENORMALISE_AT;
}

/** The factor every sketch count is multiplied by, resetting `sketchWeight` to 1. */
export function restartSketch(): f64 {
  const factor = 1.0 / sketchWeight;
  sketchWeight = 1.0;
  return factor;
}
