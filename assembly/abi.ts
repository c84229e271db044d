// The contract between the WebAssembly core and the TypeScript side: every number both sides
// must agree on (partitioner codes, markers, event kinds, entry states, and the byte layout
// of the records and cells the TypeScript side reads in memory), defined here once.
//
// scripts/abi.js turns this file into src/core/abi.ts (`npm run build:wasm` runs it first;
// test/abi.test.js fails when the two differ). So the file holds only comments and lines of
// the form `export const NAME: type = integer;`, which the script reads and anything else
// stops it. Offsets are in bytes; the TypeScript side shifts them into typed-array indexes.

// ---- partitioner codes (librdkafka's six, rd_kafka_msg_partitioner_* in src/rdkafka_msg.c, v2.12) ----
// bit 0 set = the deterministic variant, bits 1.. = the hash family.

/** A partitioner code's hash family is the code >> PARTITIONER_FAMILY_SHIFT. */
export const PARTITIONER_FAMILY_SHIFT: i32 = 1;
/** The bit of a partitioner code set for a deterministic variant (a null key hashed as the empty key). */
export const PARTITIONER_DETERMINISTIC: i32 = 1;
/** Hash family: Java's murmur2 (kafka-clients Utils.murmur2). */
export const FAMILY_MURMUR2: i32 = 0;
/** Hash family: CRC-32 (librdkafka's rd_crc32, the `consistent` partitioners). */
export const FAMILY_CRC32: i32 = 1;
/** Hash family: FNV-1a (librdkafka's rd_fnv1a). */
export const FAMILY_FNV1A: i32 = 2;
export const PARTITIONER_MURMUR2_RANDOM: i32 = 0;
export const PARTITIONER_MURMUR2: i32 = 1;
export const PARTITIONER_CONSISTENT_RANDOM: i32 = 2;
export const PARTITIONER_CONSISTENT: i32 = 3;
export const PARTITIONER_FNV1A_RANDOM: i32 = 4;
export const PARTITIONER_FNV1A: i32 = 5;
/** Partition for a key the partitioner does not decide by (the caller picks the sticky one). */
export const UNDECIDED: i32 = -1;

// ---- the key region and the batch tables (memory.ts) ----

/** Bytes of key data one call can see; longer keys are hashed in chunks (stream.ts). A multiple of 4. */
export const KEY_CAPACITY: i32 = 65536;
/** Keys one batch call can take; longer batches are cut into calls by the TypeScript side. */
export const BATCH_CAPACITY: i32 = 4096;
/** Length of a null key, in the lengths table and as a key length argument. */
export const NULL_KEY: i32 = -1;

// ---- order markers of a decision: what the producer's order header says (docs/ordering.md) ----

/** No marker: the message is where Kafka's partitioner puts it, in its key's order. */
export const ORDER_NONE: i32 = 0;
/** A hot key's message as the key first leaves its own partition: still there, behind the unmarked ones. */
export const ORDER_ANCHOR: i32 = 1;
/** A message of a hot key split over several of its allowed partitions. */
export const ORDER_SPREAD: i32 = 2;
/** The first message on the key's own partition again (it cooled, or a relocated key came back). */
export const ORDER_RETURN: i32 = 3;
/** A message of a hot key relocated whole to one partition other than its own. */
export const ORDER_MOVED: i32 = 4;

// ---- the event log: records of EVENT_SIZE bytes, CELL_EVENT_COUNT of them pending ----

/** A key turned hot. */
export const EVENT_HOT: i32 = 1;
/** A hot key cooled (or left the table with its topic's slot). */
export const EVENT_COOLED: i32 = 2;
export const EVENT_SIZE: usize = 12;
/** i32: EVENT_HOT or EVENT_COOLED. */
export const EVENT_KIND: usize = 0;
/** i32: the tracked-key entry. */
export const EVENT_ENTRY: usize = 4;
/** i32: the index of the message in its batch call (0 for a single decision). */
export const EVENT_BATCH_INDEX: usize = 8;

// ---- the cells: i32 signals the TypeScript side reads without a call ----

export const CELLS_SIZE: usize = 16;
/** Events pending in the log. */
export const CELL_EVENT_COUNT: usize = 0;

// ---- the decision record: DECISION_SIZE bytes at decisionPtr(), written by every decision
// (decide, each key of decideBatch, and account) and read by the TypeScript side once per
// decision (DynamicPartitioner.decide); all i32 ----

export const DECISION_SIZE: usize = 32;
/** The partition. */
export const D_PARTITION: usize = 0;
/** The order marker (ORDER_*; ORDER_NONE with spread: false). */
export const D_ORDER: usize = 4;
/** The key's tracked-key entry, or -1 (not tracked). */
export const D_ENTRY: usize = 8;
/** Partitions the key is split over now: the entry's width for ORDER_SPREAD, else 1. */
export const D_WIDTH: usize = 12;
/** Whether the key has a zero byte: 0 no, 1 yes, -1 not known (not looked at). */
export const D_ZERO: usize = 16;

// ---- states of a tracked-key entry ----

export const STATE_FREE: i32 = 0;
export const STATE_CANDIDATE: i32 = 1;
export const STATE_HOT: i32 = 2;
/** Hot at a lower share because its normal partition was overloaded; >= STATE_HOT is hot. */
export const STATE_RELIEF: i32 = 3;

// ---- a tracked-key entry: a record of 1 << ENTRY_SHIFT bytes (one cache line) ----

export const ENTRY_SHIFT: usize = 6;
/** f64: decayed message count, in weight units. */
export const E_COUNT: usize = 0;
/** u32: the key's murmur2 (lane A of its fingerprint). */
export const E_LANE_A: usize = 8;
/** u32: lane B of its fingerprint (the probe stride). */
export const E_LANE_B: usize = 12;
/** i32: its topic slot. */
export const E_TOPIC: usize = 16;
/** i32: STATE_*. */
export const E_STATE: usize = 20;
/** i32: how many partitions a hot key may use. */
export const E_WIDTH: usize = 24;
/** i32: stride through the partitions, coprime with E_SIZE. */
export const E_STEP: usize = 28;
/** i32: the partition count E_STEP (and the scan window) were made for. */
export const E_SIZE: usize = 32;
/** i32: the key's order chain, CHAIN_*. */
export const E_RETURN: usize = 36;
/** E_RETURN: no chain open; the key's messages are unmarked. */
export const CHAIN_NONE: i32 = 0;
/** E_RETURN: the key cooled with a chain open; its next message owes an ORDER_RETURN marker. */
export const CHAIN_OWED: i32 = 1;
/** E_RETURN: a hot key's chain is open (its messages are marked). */
export const CHAIN_OPEN: i32 = 2;
/**
 * E_RETURN: the key may not leave its own partition (the application's spreadable() said so
 * when it turned hot): hot, reported, never moved or marked; kept while the key is tracked.
 */
export const CHAIN_PINNED: i32 = 3;
/** i32: where the next scan window of a wide key starts, as an index. */
export const E_SCAN_INDEX: usize = 40;
/** i32: ... and as the partition at that index. */
export const E_SCAN_AT: usize = 44;
/** i32: the partition of a hot key's current run. */
export const E_CURRENT: usize = 48;
/** i32: messages left in that run (0: choose again). */
export const E_RUN_LEFT: usize = 52;
/** f64: a relocated key moves again only once the load clock's weight reaches this. */
export const E_MOVE_AFTER: usize = 56;

// ---- a topic slot: a record of 1 << TOPIC_SHIFT bytes (two cache lines; a decision reads the first and T_WEIGHT..T_PAGE) ----

export const TOPIC_SHIFT: usize = 7;
/** f64: decayed message count (key clock). */
export const T_TOTAL: usize = 0;
/** f64: decayed message count (load clock). */
export const T_LOAD_TOTAL: usize = 8;
/** f64: 1 / partition count (a multiply per message instead of a divide). */
export const T_INVERSE: usize = 16;
/** i32: partition count. */
export const T_SIZE: usize = 24;
/** i32: partition of the current sticky run of null keys. */
export const T_STICKY: usize = 28;
/** u32: bumped each time the slot is reset (sketch rows depend on it). */
export const T_GENERATION: usize = 32;
/** i32: messages left in the sticky run. */
export const T_STICKY_LEFT: usize = 36;
/** f64: messages decided (and accounted) since the slot was given to its topic. */
export const T_MESSAGES: usize = 40;
/** f64: ... of them marked with an order marker (an order header, on a producer): messages of spread keys. */
export const T_SPREAD_MESSAGES: usize = 48;
/** f64: ... of them placed on another partition than their key's normal one (keyed messages only). */
export const T_MOVED_MESSAGES: usize = 56;
/** f64: the topic's key clock: the weight its next message counts (decay.ts), advanced by its own messages. */
export const T_WEIGHT: usize = 64;
/** f64: the topic's load clock, the same for partition loads. */
export const T_LOAD_WEIGHT: usize = 72;
/** f64: decayed message count on the sketch's clock, shared by all topics (admission compares estimates with it). */
export const T_SKETCH_TOTAL: usize = 80;
/** f64: the key clock's growth per message of the topic (decay.ts; stretched for more than WIDE_PARTITIONS partitions). */
export const T_GROWTH: usize = 88;
/** f64: the load clock's, the same. */
export const T_LOAD_GROWTH: usize = 96;
/** u32: where the slot's page starts (its partitions' loads, penalties and adjustments: topics.ts); 0 before its first use. */
export const T_PAGE: usize = 104;
/** A message-count horizon of a topic of n > WIDE_PARTITIONS partitions is stretched by n / WIDE_PARTITIONS. */
export const WIDE_PARTITIONS: i32 = 256;

/**
 * The table of tracked keys and the sketch, shared by the topics with state, have the sizes of
 * the options (maxTrackedKeys, sketch.width) for up to this many topics, and double each time
 * the topics with state pass twice as many (configure.ts, topicsWithState).
 */
export const TOPICS_PER_TABLE: i32 = 16;

// ---- the configuration: f64 parameters the TypeScript side writes at paramsPtr() before
// it calls configure(), one per option (integers and flags as f64 too) ----

export const PARAMS_SIZE: usize = 256;
/** Counters per sketch row: sketch.width. */
export const P_SKETCH_WIDTH: usize = 0;
/** Sketch rows: sketch.depth. */
export const P_SKETCH_DEPTH: usize = 8;
/** Entries of the table of tracked keys: maxTrackedKeys. */
export const P_ENTRIES: usize = 16;
/** Topic slots: maxTopics. */
export const P_TOPICS: usize = 24;
/** Partitions per topic slot: maxPartitions. */
export const P_PARTITIONS: usize = 32;
/** Growth of the key clock's weight per message (2^(1 / horizon.messages); 1 for a time horizon). */
export const P_GROWTH: usize = 40;
/** The same for the load clock (loadHorizon). */
export const P_LOAD_GROWTH: usize = 48;
/** hotThreshold, in fair shares. */
export const P_HOT: usize = 56;
/** coolThreshold, in fair shares. */
export const P_COOL: usize = 64;
/** Admission to exact tracking, in fair shares. */
export const P_ADMIT: usize = 72;
/** minHotMessages. */
export const P_MIN_HOT: usize = 80;
/** warmupMessages. */
export const P_WARMUP: usize = 88;
/** spreadFactor. */
export const P_SPREAD_FACTOR: usize = 96;
/** maxSpread (0: all partitions). */
export const P_MAX_SPREAD: usize = 104;
/** spread: 1 true, 0 false. */
export const P_SPREAD: usize = 112;
/** stickyRun. */
export const P_STICKY_RUN: usize = 120;
/** 1 + balanceTolerance. */
export const P_WIDEN_ABOVE: usize = 128;
/** reliefThreshold, in fair shares (0: off). */
export const P_RELIEF: usize = 136;
/** sketch.sampling. */
export const P_SAMPLING: usize = 144;
/** hotRun. */
export const P_HOT_RUN: usize = 152;
/** relocate: 1 true, 0 false. */
export const P_RELOCATE: usize = 160;
/** 1: a batch stops after a message at which a key turned hot, so the TS side can ask spreadable() before the key's next message. */
export const P_ASK_ON_HOT: usize = 168;
/** 1: a split key's runs last splitRunMs (the TS side's clock ticks runTick() RUN_TICKS times in it), 0: hotRun's. */
export const P_SPLIT_RUN: usize = 176;
/** Ticks of the run clock in splitRunMs. */
export const RUN_TICKS: i32 = 4;
