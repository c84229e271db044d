// Exponential decay over a horizon, by forward weighting: each message counts `weight`, and
// the weight is multiplied by 2^(1 / halfLife) per message (or by the TS side's clock for a
// time horizon), so a count seen halfLife messages ago weighs half as much as one seen now.
// A count divided by the current weight is in "recent messages". When a weight gets large,
// every count is divided by it and it restarts at 1 (topics.ts renormalise()).
//
// Two clocks: `weight` for key counts (how fast a key turns hot and cools) and `loadWeight`
// for partition loads (how long an overload is remembered and paid back).

export let weight: f64 = 1.0;
export let loadWeight: f64 = 1.0;
let growth: f64 = 1.0;
let loadGrowth: f64 = 1.0;

/** Above this weight every stored count is rescaled; far below f32's range and precision limits. */
// @ts-ignore: decorator
@inline const RENORMALISE_AT: f64 = 1073741824.0; // 2^30

export function decayConfigure(perMessageGrowth: f64, perMessageLoadGrowth: f64): void {
  growth = perMessageGrowth;
  loadGrowth = perMessageLoadGrowth;
  weight = 1.0;
  loadWeight = 1.0;
}

/** Advances both clocks by one message; true when the counts must be rescaled. */
// @ts-ignore: decorator
@inline
export function advance(): bool {
  weight *= growth;
  loadWeight *= loadGrowth;
  return weight > RENORMALISE_AT || loadWeight > RENORMALISE_AT;
}

/** Advances the clocks by external factors (time horizons); true when the counts must be rescaled. */
export function advanceBy(factor: f64, loadFactor: f64): bool {
  weight *= factor;
  loadWeight *= loadFactor;
  return weight > RENORMALISE_AT || loadWeight > RENORMALISE_AT;
}

/** The factor every key count is multiplied by, resetting `weight` to 1. */
export function restart(): f64 {
  const factor = 1.0 / weight;
  weight = 1.0;
  return factor;
}

/** The factor every load is multiplied by, resetting `loadWeight` to 1. */
export function restartLoads(): f64 {
  const factor = 1.0 / loadWeight;
  loadWeight = 1.0;
  return factor;
}
