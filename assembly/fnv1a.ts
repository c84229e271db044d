// 32-bit FNV-1a as librdkafka's `fnv1a` and `fnv1a_random` partitioners use it
// (rd_fnv1a in src/rdfnv1a.c, v2.12), itself made to match Sarama's hash partitioner:
// the int32 result is replaced by its absolute value and then read as unsigned, so
// INT32_MIN (whose negation wraps to itself) becomes 2147483648.

// @ts-ignore: decorator
@inline const OFFSET: u32 = 0x811c9dc5;
// @ts-ignore: decorator
@inline const PRIME: u32 = 0x01000193;

// @ts-ignore: decorator
@inline
export function fnv1aStart(): u32 {
  return OFFSET;
}

export function fnv1aUpdate(h: u32, ptr: usize, length: i32): u32 {
  const end = ptr + <usize>length;
  while (ptr + 4 <= end) {
    const w = load<u32>(ptr);
    h = (h ^ (w & 0xff)) * PRIME;
    h = (h ^ ((w >>> 8) & 0xff)) * PRIME;
    h = (h ^ ((w >>> 16) & 0xff)) * PRIME;
    h = (h ^ (w >>> 24)) * PRIME;
    ptr += 4;
  }
  while (ptr < end) {
    h = (h ^ <u32>load<u8>(ptr)) * PRIME;
    ptr++;
  }
  return h;
}

/** The value rd_fnv1a returns: abs() of the int32, as an unsigned 32-bit pattern. */
// @ts-ignore: decorator
@inline
export function fnv1aFinish(h: u32): u32 {
  const s = <i32>h;
  // 0 - INT32_MIN wraps to INT32_MIN, exactly as the C code's `h = -h` does on two's complement.
  return s < 0 ? <u32>(0 - s) : h;
}

// @ts-ignore: decorator
@inline
export function fnv1a(ptr: usize, length: i32): u32 {
  return fnv1aFinish(fnv1aUpdate(fnv1aStart(), ptr, length));
}
