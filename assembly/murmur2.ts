// Kafka's murmur2: bit-identical to org.apache.kafka.common.utils.Utils.murmur2
// (kafka-clients 4.x) and to librdkafka's rd_murmur2 (src/rdmurmur2.c, v2.12).
// Java works on signed ints with wrapping multiplication; u32 arithmetic gives the
// same bits, and the result is returned as Java's signed int32.

// @ts-ignore: decorator
@inline export const SEED: u32 = 0x9747b28c;
// @ts-ignore: decorator
@inline export const M: u32 = 0x5bd1e995;
// @ts-ignore: decorator
@inline export const R: u32 = 24;

// @ts-ignore: decorator
@inline
export function murmur2Start(totalLength: i32): u32 {
  return SEED ^ <u32>totalLength;
}

/** Mixes the 4-byte little-endian blocks of [ptr, ptr + length), length a multiple of 4. */
// @ts-ignore: decorator
@inline
export function murmur2Blocks(h: u32, ptr: usize, length: i32): u32 {
  const end = ptr + <usize>length;
  while (ptr < end) {
    let k = load<u32>(ptr);
    k *= M;
    k ^= k >>> R;
    k *= M;
    h *= M;
    h ^= k;
    ptr += 4;
  }
  return h;
}

/** Mixes the last blocks and the 0..3 tail bytes of [ptr, ptr + length), then finalizes. */
// @ts-ignore: decorator
@inline
export function murmur2Finish(h: u32, ptr: usize, length: i32): i32 {
  const blocks = length & ~3;
  h = murmur2Blocks(h, ptr, blocks);
  const tail = ptr + <usize>blocks;
  // Java's switch falls through from case 3 to case 1, as here.
  switch (length & 3) {
    case 3: h ^= <u32>load<u8>(tail, 2) << 16;
    case 2: h ^= <u32>load<u8>(tail, 1) << 8;
    case 1: {
      h ^= <u32>load<u8>(tail);
      h *= M;
    }
  }
  h ^= h >>> 13;
  h *= M;
  h ^= h >>> 15;
  return <i32>h;
}

// @ts-ignore: decorator
@inline
export function murmur2(ptr: usize, length: i32): i32 {
  return murmur2Finish(murmur2Start(length), ptr, length);
}
