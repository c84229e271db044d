// A key's fingerprint for hot-key detection: Kafka's murmur2 (lane A, also the key's normal
// partition under the murmur2 partitioners) and murmur2 with another seed (lane B: the probe
// stride of the sketch and the key's spreading step), both from one read of the key, which
// also tells whether the key has a zero byte. murmur2.ts stays Kafka's function alone.

import { SEED, M, R } from "./murmur2";

/** Seed of the second murmur2 lane. */
// @ts-ignore: decorator
@inline const ALT_SEED: u32 = 0x2545f491;

/** The second lane of the last fingerprint. */
export let laneB: u32 = 0;
/** Set by each fingerprint: 1 when the key has a zero byte (a U+0000 in a string key). */
export let laneZero: i32 = 0;

/**
 * Kafka's murmur2 of [ptr, ptr + length) (returned) and, in the same pass, murmur2 with
 * ALT_SEED (left in laneB): two hashes of one key for the price of one read.
 */
export function fingerprint(ptr: usize, length: i32): i32 {
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
