// Relief: which key leaves an overloaded partition, and when (docs/design.md, "Which keys
// leave"). Asked of a tracked key not hot yet (admission.ts turnsHot: a key that relieves its
// partition turns hot) and of a hot key at home (relocate.ts place).

import { loadWeight } from "./decay";
import { getf, setf } from "./hotkeys";
import { tf, loadAt, loadTotal, fixedLoad } from "./topics";
import { widenAbove } from "./choice-options";
import { E_MOVE_AFTER, T_LOAD_GROWTH, T_INVERSE } from "./abi";

/** An overload starts a key's clock once it is this many deviations of its load's noise (times the trust) above the line. */
// @ts-ignore: decorator
@inline const SIGNIFICANT: f64 = 1.5;
/** No key leaves for relief before its topic's loads hold this share (times the trust) of their steady number of messages. */
// @ts-ignore: decorator
@inline const SETTLED: f64 = 0.75;
/** The fit is trusted fully where the noise of a partition's load is at most this share of balanceTolerance ... */
// @ts-ignore: decorator
@inline const TRUSTED: f64 = 0.2;
/** ... and not at all from this share on. */
// @ts-ignore: decorator
@inline const UNTRUSTED: f64 = 0.4;

/** leaves() kinds of keys: tracked but not hot, at its first placement since it turned hot, hot for longer. */
// @ts-ignore: decorator
@inline export const CANDIDATE: i32 = 0;
// @ts-ignore: decorator
@inline export const JUST_HOT: i32 = 1;
// @ts-ignore: decorator
@inline export const HOT: i32 = 2;

/** Set by measure(): how well the topic's loads measure an excess over balanceTolerance, in [0, 1]. */
export let trust: f64 = 0;
/** Set by measure(): the topic's recent messages on the load clock over their steady number. */
let settled: f64 = 1;
/** Set by leaves() when it says yes: the load clock's weight at which the key was due to leave. */
export let due: f64 = 0;
/** Set by leaves() when the key's partition is above the line and its excess is measured: its next message looks again. */
export let recheck: bool = false;

/** Clears recheck, before a placement that may ask leaves(). */
// @ts-ignore: decorator
@inline
export function clearRecheck(): void {
  recheck = false;
}

/**
 * The noise of the topic's loads. A partition's decayed load counts its messages with weights
 * that fade over the load horizon: with n partitions and the horizon holding S messages at its
 * steady state (g / (g - 1) for a growth g per message; for a time horizon, the messages it
 * holds now), a partition's load is off by about sqrt(n / 2S) of the mean (1.2% at 4
 * partitions with the default 10,000-message horizon, 6% at 100). The trust is 1 where that is
 * at most TRUSTED of balanceTolerance, 0 from UNTRUSTED of it on (the excess cannot be measured:
 * the keys leave as they did before there was a fit), linear between.
 */
function measure(topic: i32): void {
  const g = load<f64>(tf(topic, T_LOAD_GROWTH));
  const recent = loadTotal(topic) / loadWeight;
  const steady = g > 1 ? g / (g - 1) : recent;
  settled = steady > 0 ? recent / steady : 1;
  const noise = Math.sqrt(1 / (2 * steady * load<f64>(tf(topic, T_INVERSE)))) / (widenAbove - 1);
  const t = (UNTRUSTED - noise) / (UNTRUSTED - TRUSTED);
  trust = t > 1 ? 1 : t > 0 ? t : 0;
}

/**
 * Whether the key of hot or tracked entry e, of `rate` (load clock), at home on partition p,
 * leaves it now to relieve it (docs/design.md, "Which keys leave"). p is overloaded when its
 * load as relocation sees it (fixedLoad) is above the mean `fair` by more than
 * balanceTolerance; its excess is what is above that line. Each key of p acts on its own
 * messages and cannot see the others' rates, so the choice is made by time: the key whose rate
 * fits the excess best goes first, and once it has gone the partition is no longer overloaded
 * for the others (its rate is counted out at once). A key of rate r fits an excess x by
 * q = max(r, x) / min(r, x) (a larger key overshoots, a smaller one leaves the rest to others)
 * and leaves once the overload has lasted log2(q / 2) load half-lives (at once for q <= 2),
 * blended by the trust (measure) with the rule for an excess that cannot be measured: at once,
 * unless hot for a while already and bigger than twice the excess (then a half-life).
 *
 * The clock (E_MOVE_AFTER < 0: minus the load weight when it started) starts on an excess more
 * than SIGNIFICANT deviations of the load's noise (times the trust) above the line, so that
 * noise does not move keys out of a partition within the tolerance. It stops once the excess is
 * down to one deviation (times the trust) less (1 - trust)^2 of the tolerance: at the line where
 * the trust is full, at the mean where there is none (an overload hovering around the line is
 * not forgotten at its first dip). A hot key held after a move does not leave, nor does a key of
 * a topic whose loads have not settled yet (SETTLED, times the trust: a new topic's loads are
 * noise) unless it is bigger than a fair share.
 *
 * `kind`: CANDIDATE (tracked, not hot: turnsHot), JUST_HOT (its first placement since it
 * turned hot: it starts over if its partition is back within the line) or HOT; `reliefs`: a
 * candidate's share over reliefThreshold (it may leave from 1 - trust / 2 of it on: half of it
 * where the trust is full, all of it where there is none).
 */
export function leaves(topic: i32, e: i32, p: i32, rate: f64, fair: f64, kind: i32, reliefs: f64): bool {
  const excess = fixedLoad(topic, p, fair) - fair * widenAbove;
  const since = getf(E_MOVE_AFTER, e);
  if (excess <= 0) {
    // A key just hot whose partition is back within the line starts over.
    if (since < 0 && kind == JUST_HOT) setf(E_MOVE_AFTER, e, 0);
    if (since >= 0 || kind == JUST_HOT) return false;
  }
  measure(topic);
  // The load's noise: its variance is the sum of its messages' squared weights, from w times
  // the load early on (every weight near the current w) to w / 2 times it at the steady state.
  let c = 1 - settled * 0.5;
  if (c < 0.5) c = 0.5;
  const noise = trust * Math.sqrt(load<f64>(loadAt(topic, p)) * loadWeight * c);
  if (since < 0) {
    const band = 1 - trust;
    if (excess <= noise - band * band * (widenAbove - 1) * fair) {
      setf(E_MOVE_AFTER, e, 0);
      return false;
    }
  }
  if (excess <= 0 || (kind == HOT && since >= 0 && loadWeight < since)) return false;
  recheck = trust > 0;
  if ((settled < SETTLED * trust && rate <= fair) || reliefs < 1 - trust * 0.5) return false;
  let start = -since;
  if (since >= 0) {
    if (excess <= SIGNIFICANT * noise) return false;
    start = loadWeight;
    setf(E_MOVE_AFTER, e, -start);
  }
  let need = (rate > excess ? rate / excess : excess / rate) * 0.5 * trust;
  if (kind == HOT && rate > excess * 2) need += 2 * (1 - trust);
  if (trust < 1 && need * (1 - trust) > 2) need = 2 / (1 - trust);
  due = start * need;
  return loadWeight >= due;
}
