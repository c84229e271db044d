// Exponential decay over a horizon, by forward weighting: each message counts `weight`, and
// the weight is multiplied by 2^(1 / halfLife) per message (or by the TS side's clock for a
// time horizon), so a count seen halfLife messages ago weighs half as much as one seen now.
// A count divided by the current weight is in "recent messages". When the weight gets
// large, every count is divided by it and it restarts at 1 (renormalise()).

export let weight: f64 = 1.0;
let growth: f64 = 1.0;

/** Above this weight every stored count is rescaled; far below f32's range and precision limits. */
// @ts-ignore: decorator
@inline const RENORMALISE_AT: f64 = 1073741824.0; // 2^30

export function decayConfigure(perMessageGrowth: f64): void {
  growth = perMessageGrowth;
  weight = 1.0;
}

/** Advances the clock by one message; true when the counts must be rescaled. */
// @ts-ignore: decorator
@inline
export function advance(): bool {
  weight *= growth;
  return weight > RENORMALISE_AT;
}

/** Advances the clock by an external factor (time horizon); true when the counts must be rescaled. */
export function advanceBy(factor: f64): bool {
  weight *= factor;
  return weight > RENORMALISE_AT;
}

/** The factor every stored count is multiplied by, resetting the weight to 1. */
export function restart(): f64 {
  const factor = 1.0 / weight;
  weight = 1.0;
  return factor;
}
