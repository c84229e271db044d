// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, init and final xor 0xFFFFFFFF),
// the checksum librdkafka's `consistent` and `consistent_random` partitioners use
// (rd_crc32 in src/rdcrc32.h, v2.12: zlib's crc32 or the same table-driven algorithm).
// Slicing-by-8: eight 256-entry tables, built once when the module starts.

// @ts-ignore: decorator
@inline const POLY: u32 = 0xedb88320;

const TABLES: usize = memory.data(8 * 256 * 4, 16);

function buildTables(): void {
  for (let i: u32 = 0; i < 256; i++) {
    let c = i;
    for (let b = 0; b < 8; b++) c = c & 1 ? POLY ^ (c >>> 1) : c >>> 1;
    store<u32>(TABLES + (<usize>i << 2), c);
  }
  for (let t: usize = 1; t < 8; t++) {
    for (let i: usize = 0; i < 256; i++) {
      const prev = load<u32>(TABLES + ((t - 1) << 10) + (i << 2));
      store<u32>(TABLES + (t << 10) + (i << 2), (prev >>> 8) ^ load<u32>(TABLES + ((<usize>(prev & 0xff)) << 2)));
    }
  }
}
buildTables();

// @ts-ignore: decorator
@inline
function entry(table: usize, byte: u32): u32 {
  return load<u32>(TABLES + (table << 10) + (<usize>byte << 2));
}

/** Start value of a running CRC (the complemented register). */
// @ts-ignore: decorator
@inline
export function crc32Start(): u32 {
  return 0xffffffff;
}

/** Feeds [ptr, ptr + length) into a running (complemented) CRC register. */
export function crc32Update(crc: u32, ptr: usize, length: i32): u32 {
  let end = ptr + <usize>length;
  while (ptr + 8 <= end) {
    const one = load<u32>(ptr) ^ crc;
    const two = load<u32>(ptr, 4);
    crc = entry(7, one & 0xff) ^ entry(6, (one >>> 8) & 0xff) ^
          entry(5, (one >>> 16) & 0xff) ^ entry(4, one >>> 24) ^
          entry(3, two & 0xff) ^ entry(2, (two >>> 8) & 0xff) ^
          entry(1, (two >>> 16) & 0xff) ^ entry(0, two >>> 24);
    ptr += 8;
  }
  while (ptr < end) {
    crc = (crc >>> 8) ^ entry(0, (crc ^ <u32>load<u8>(ptr)) & 0xff);
    ptr++;
  }
  return crc;
}

// @ts-ignore: decorator
@inline
export function crc32Finish(crc: u32): u32 {
  return crc ^ 0xffffffff;
}

// @ts-ignore: decorator
@inline
export function crc32(ptr: usize, length: i32): u32 {
  return crc32Finish(crc32Update(crc32Start(), ptr, length));
}
