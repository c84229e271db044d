// Layout of the regions shared with the TypeScript side (src/core/wasm.ts).
//
// The JS side writes key bytes into KEYS and, for a batch, one length per key into
// LENGTHS (-1 for a null key); WASM writes one partition per key into RESULTS.
// All three are static data of the module: nothing is allocated per call.

import { KEY_CAPACITY, BATCH_CAPACITY } from "./abi";

export const KEYS: usize = memory.data(KEY_CAPACITY, 16);
export const LENGTHS: usize = memory.data(BATCH_CAPACITY << 2, 16);
export const RESULTS: usize = memory.data(BATCH_CAPACITY << 2, 16);

// The arena: the regions of the hot-key state (sketch, heavy-hitter table, per-topic loads),
// sized from the options and carved out once by `configure`. Memory never grows after that.
let arenaTop: usize = (__heap_base + 15) & ~15;

/** `bytes` of zeroed memory, 16-byte aligned; grows the memory by exactly what is missing. */
export function arenaAlloc(bytes: usize): usize {
  const ptr = arenaTop;
  const end = (ptr + bytes + 15) & ~15;
  const have = <usize>memory.size() << 16;
  if (end > have) {
    const pages = <i32>((end - have + 0xffff) >>> 16);
    if (memory.grow(pages) < 0) unreachable();
  }
  memory.fill(ptr, 0, end - ptr);
  arenaTop = end;
  return ptr;
}
