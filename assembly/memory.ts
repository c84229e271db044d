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
// carved out by `configure` and, as topics get state, by the growth of the shared tables and
// the pages of new topic slots (never per message). A region given back (a table replaced by
// a larger one) is kept in a short list of free blocks and reused first; so the arena's top
// never passes its start plus the sum of every region ever carved out (each rounded up to
// 16 bytes): arenaBound() adds those sizes up from the options.
export const ARENA_START: usize = (__heap_base + 15) & ~15;
let arenaTop: usize = ARENA_START;

// Free blocks as (start, end) pairs, kept sorted and merged with their neighbours.
const MAX_FREE: i32 = 64;
const FREE: usize = memory.data(MAX_FREE * 16, 16);
let freeBlocks: i32 = 0;

// @ts-ignore: decorator
@inline function blockStart(i: i32): usize { return load<usize>(FREE + (<usize>i << 4)); }
// @ts-ignore: decorator
@inline function blockEnd(i: i32): usize { return load<usize>(FREE + (<usize>i << 4), 8); }
// @ts-ignore: decorator
@inline function setBlock(i: i32, start: usize, end: usize): void {
  store<usize>(FREE + (<usize>i << 4), start);
  store<usize>(FREE + (<usize>i << 4), end, 8);
}

/** `bytes` rounded up to the arena's 16-byte granule: what a region of that size takes. */
// @ts-ignore: decorator
@inline export function arenaSize(bytes: usize): usize { return (bytes + 15) & ~15; }

/** `bytes` of zeroed memory, 16-byte aligned: from a free block if one fits, else from the top (growing the memory by what is missing). */
export function arenaAlloc(bytes: usize): usize {
  const size = arenaSize(bytes);
  for (let i = 0; i < freeBlocks; i++) {
    const start = blockStart(i);
    const end = blockEnd(i);
    if (end - start < size) continue;
    if (end - start == size) {
      for (let j = i + 1; j < freeBlocks; j++) setBlock(j - 1, blockStart(j), blockEnd(j));
      freeBlocks--;
    } else {
      setBlock(i, start + size, end);
    }
    memory.fill(start, 0, size);
    return start;
  }
  const ptr = arenaTop;
  const end = ptr + size;
  const have = <usize>memory.size() << 16;
  if (end > have) {
    const pages = <i32>((end - have + 0xffff) >>> 16);
    if (memory.grow(pages) < 0) unreachable();
  }
  memory.fill(ptr, 0, size);
  arenaTop = end;
  return ptr;
}

/** Gives back a region of `bytes` from arenaAlloc. With the list of free blocks full, the region stays unused (within the bound). */
export function arenaFree(ptr: usize, bytes: usize): void {
  let start = ptr;
  let end = ptr + arenaSize(bytes);
  // Where it goes in the sorted list; merged with the block before and the one after when they touch.
  let i = 0;
  while (i < freeBlocks && blockStart(i) < start) i++;
  if (i > 0 && blockEnd(i - 1) == start) {
    start = blockStart(i - 1);
    i--;
    for (let j = i + 1; j < freeBlocks; j++) setBlock(j - 1, blockStart(j), blockEnd(j));
    freeBlocks--;
  }
  if (i < freeBlocks && blockStart(i) == end) {
    end = blockEnd(i);
    for (let j = i + 1; j < freeBlocks; j++) setBlock(j - 1, blockStart(j), blockEnd(j));
    freeBlocks--;
  }
  if (end == arenaTop) {
    arenaTop = start; // the top block: the arena shrinks back (its memory pages stay)
    return;
  }
  if (freeBlocks == MAX_FREE) return;
  for (let j = freeBlocks; j > i; j--) setBlock(j, blockStart(j - 1), blockEnd(j - 1));
  setBlock(i, start, end);
  freeBlocks++;
}
