// The order markers of a hot key's messages (docs/ordering.md): where a key's chain opens,
// goes on and closes, from where each of its messages went. The chain's state lives in its
// tracked-key entry (E_RETURN: CHAIN_*).

import { geti, seti } from "./hotkeys";
import { relocateOn } from "./choice-options";
import { E_WIDTH, E_RETURN, CHAIN_NONE, CHAIN_OPEN, CHAIN_PINNED, ORDER_NONE, ORDER_ANCHOR, ORDER_SPREAD, ORDER_RETURN, ORDER_MOVED } from "./abi";

/**
 * The order marker of a message of hot entry e that hotPartition() sent to `result` (its own
 * partition `base`). With relocation on, a key is marked only while its messages leave its
 * own partition: none while it stays there (its order is the partition's); an anchor as it
 * first leaves (that message still goes to `base`: the caller puts it there, and the rest of
 * the run goes where it was placed), which opens its chain; moved (relocated whole) or spread
 * (split) while away; a return when a relocated key comes back whole, which closes the chain.
 * With relocation off, a hot key's chain is open from the message after which it turned hot
 * (hotTurned) and every message is spread.
 */
export function hotOrder(e: i32, base: i32, result: i32): i32 {
  if (!relocateOn) return ORDER_SPREAD;
  const whole = geti(E_WIDTH, e) == 1;
  if (geti(E_RETURN, e) != CHAIN_OPEN) {
    if (whole && result == base) return ORDER_NONE;
    seti(E_RETURN, e, CHAIN_OPEN);
    return ORDER_ANCHOR;
  }
  if (!whole) return ORDER_SPREAD;
  if (result != base) return ORDER_MOVED;
  seti(E_RETURN, e, CHAIN_NONE);
  return ORDER_RETURN;
}

/**
 * The order marker of the message at which entry e turned hot (it goes to its own partition):
 * with relocation off, an anchor that opens its chain at once; with it on, none (hotOrder
 * opens the chain when the key first leaves).
 */
export function hotTurned(e: i32): i32 {
  if (relocateOn || geti(E_RETURN, e) == CHAIN_PINNED) return ORDER_NONE;
  seti(E_RETURN, e, CHAIN_OPEN);
  return ORDER_ANCHOR;
}
