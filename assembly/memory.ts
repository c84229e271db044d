// Layout of the regions shared with the TypeScript side (src/wasm.ts).
//
// The JS side writes key bytes into KEYS and, for a batch, one length per key into
// LENGTHS (-1 for a null key); WASM writes one partition per key into RESULTS.
// All three are static data of the module: nothing is allocated per call.

/** Bytes of key data one call can see; longer keys are hashed in chunks (see stream.ts). */
export const KEY_CAPACITY: i32 = 65536;
/** Keys one batch call can take; longer batches are cut into calls by the JS side. */
export const BATCH_CAPACITY: i32 = 4096;

export const KEYS: usize = memory.data(KEY_CAPACITY, 16);
export const LENGTHS: usize = memory.data(BATCH_CAPACITY << 2, 16);
export const RESULTS: usize = memory.data(BATCH_CAPACITY << 2, 16);

/** Length marker of a null key in LENGTHS. */
export const NULL_KEY: i32 = -1;
