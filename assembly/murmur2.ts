// Kafka's murmur2: bit-identical to org.apache.kafka.common.utils.Utils.murmur2
// (kafka-clients 4.x) and to librdkafka's rd_murmur2 (src/rdmurmur2.c, v2.12).
// Java works on signed ints with wrapping multiplication; u32 arithmetic gives the
// same bits, and the result is returned as Java's signed int32.

// @ts-ignore: decorator
@inline const SEED: u32 = 0x9747b28c;
// @ts-ignore: decorator
@inline const M: u32 = 0x5bd1e995;
// @ts-ignore: decorator
@inline const R: u32 = 24;

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

/** Seed of the second murmur2 lane: the key's spreading step and sketch fingerprint. */
// @ts-ignore: decorator
@inline export const ALT_SEED: u32 = 0x2545f491;

/** The second lane of murmur2Lanes, set by each call. */
export let laneB: u32 = 0;
/** Set by each murmur2Lanes call: 1 when the key has a zero byte (a U+0000 in a string key). */
export let laneZero: i32 = 0;

/**
 * Kafka's murmur2 of [ptr, ptr + length) (returned) and, in the same pass, murmur2 with
 * ALT_SEED (left in laneB): two hashes of one key for the price of one read.
 */
export function murmur2Lanes(ptr: usize, length: i32): i32 {
  let a: u32 = SEED ^ <u32>length;
  let b: u32 = ALT_SEED ^ <u32>length;
  const end = ptr + <usize>(length & ~3);
  let zero: u32 = 0; // a zero byte in a word w sets a high bit of (w - 0x01010101) & ~w & 0x80808080
  while (ptr < end) {
    let k = load<u32>(ptr);
    zero |= (k - 0x01010101) & ~k;
    k *= M;
    k ^= k >>> R;
    k *= M;
    a = (a * M) ^ k;
    b = (b * M) ^ k;
    ptr += 4;
  }
  let tail: u32 = 0;
  const rest = length & 3;
  switch (rest) {
    case 3: tail ^= <u32>load<u8>(ptr, 2) << 16;
    case 2: tail ^= <u32>load<u8>(ptr, 1) << 8;
    case 1: {
      tail ^= <u32>load<u8>(ptr);
      a = (a ^ tail) * M;
      b = (b ^ tail) * M;
      // The tail's missing high bytes read as 0x01 here, not as zero bytes.
      const padded = tail | (0x01010101 << (<u32>rest << 3));
      zero |= (padded - 0x01010101) & ~padded;
    }
  }
  laneZero = <i32>((zero & 0x80808080) != 0);
  a ^= a >>> 13; a *= M; a ^= a >>> 15;
  b ^= b >>> 13; b *= M; b ^= b >>> 15;
  laneB = b;
  return <i32>a;
}
