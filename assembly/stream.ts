// Hashing a key longer than KEY_CAPACITY: the JS side feeds it through the key region in
// chunks. murmur2 mixes whole 4-byte blocks, so every chunk but the last is a multiple of 4
// bytes (KEY_CAPACITY is); CRC-32 and FNV-1a take any chunk.

import { murmur2Start, murmur2Blocks, murmur2Finish } from "./murmur2";
import { crc32Start, crc32Update, crc32Finish } from "./crc32";
import { fnv1aStart, fnv1aUpdate, fnv1aFinish } from "./fnv1a";
import { FAMILY_MURMUR2, FAMILY_CRC32 } from "./abi";

let family: i32 = FAMILY_MURMUR2;
let state: u32 = 0;

export function streamStart(hashFamily: i32, totalLength: i32): void {
  family = hashFamily;
  if (family == FAMILY_MURMUR2) state = murmur2Start(totalLength);
  else if (family == FAMILY_CRC32) state = crc32Start();
  else state = fnv1aStart();
}

export function streamUpdate(ptr: usize, length: i32): void {
  if (family == FAMILY_MURMUR2) state = murmur2Blocks(state, ptr, length);
  else if (family == FAMILY_CRC32) state = crc32Update(state, ptr, length);
  else state = fnv1aUpdate(state, ptr, length);
}

export function streamFinish(ptr: usize, length: i32): i32 {
  if (family == FAMILY_MURMUR2) return murmur2Finish(state, ptr, length);
  if (family == FAMILY_CRC32) return <i32>crc32Finish(crc32Update(state, ptr, length));
  return <i32>fnv1aFinish(fnv1aUpdate(state, ptr, length));
}
