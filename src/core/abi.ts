// Generated from assembly/abi.ts by scripts/abi.js (npm run build:wasm): do not edit.
// The numbers the WebAssembly core and the TypeScript side agree on; see assembly/abi.ts.

// ---- partitioner codes (librdkafka's six, rd_kafka_msg_partitioner_* in src/rdkafka_msg.c, v2.12) ----
// bit 0 set = the deterministic variant, bits 1.. = the hash family.

/** A partitioner code's hash family is the code >> PARTITIONER_FAMILY_SHIFT. */
export const PARTITIONER_FAMILY_SHIFT = 1;
/** The bit of a partitioner code set for a deterministic variant (a null key hashed as the empty key). */
export const PARTITIONER_DETERMINISTIC = 1;
/** Hash family: Java's murmur2 (kafka-clients Utils.murmur2). */
export const FAMILY_MURMUR2 = 0;
/** Hash family: CRC-32 (librdkafka's rd_crc32, the `consistent` partitioners). */
export const FAMILY_CRC32 = 1;
/** Hash family: FNV-1a (librdkafka's rd_fnv1a). */
export const FAMILY_FNV1A = 2;
export const PARTITIONER_MURMUR2_RANDOM = 0;
export const PARTITIONER_MURMUR2 = 1;
export const PARTITIONER_CONSISTENT_RANDOM = 2;
export const PARTITIONER_CONSISTENT = 3;
export const PARTITIONER_FNV1A_RANDOM = 4;
export const PARTITIONER_FNV1A = 5;
/** Partition for a key the partitioner does not decide by (the caller picks the sticky one). */
export const UNDECIDED = -1;

// ---- the key region and the batch tables (memory.ts) ----

/** Bytes of key data one call can see; longer keys are hashed in chunks (stream.ts). A multiple of 4. */
export const KEY_CAPACITY = 65536;
/** Keys one batch call can take; longer batches are cut into calls by the TypeScript side. */
export const BATCH_CAPACITY = 4096;
/** Length of a null key, in the lengths table and as a key length argument. */
export const NULL_KEY = -1;

// ---- order markers of a decision: what the producer's order header says (docs/ordering.md) ----

/** No marker: the message is where Kafka's partitioner puts it, in its key's order. */
export const ORDER_NONE = 0;
/** A hot key's message as the key first leaves its own partition: still there, behind the unmarked ones. */
export const ORDER_ANCHOR = 1;
/** A message of a hot key split over several of its allowed partitions. */
export const ORDER_SPREAD = 2;
/** The first message on the key's own partition again (it cooled, or a relocated key came back). */
export const ORDER_RETURN = 3;
/** A message of a hot key relocated whole to one partition other than its own. */
export const ORDER_MOVED = 4;

// ---- the event log: records of EVENT_SIZE bytes, CELL_EVENT_COUNT of them pending ----

/** A key turned hot. */
export const EVENT_HOT = 1;
/** A hot key cooled (or left the table with its topic's slot). */
export const EVENT_COOLED = 2;
export const EVENT_SIZE = 12;
/** i32: EVENT_HOT or EVENT_COOLED. */
export const EVENT_KIND = 0;
/** i32: the tracked-key entry. */
export const EVENT_ENTRY = 4;
/** i32: the index of the message in its batch call (0 for a single decision). */
export const EVENT_BATCH_INDEX = 8;

// ---- the cells: i32 signals the TypeScript side reads without a call ----

export const CELLS_SIZE = 16;
/** Events pending in the log. */
export const CELL_EVENT_COUNT = 0;

// ---- the decision record: DECISION_SIZE bytes at decisionPtr(), written by every decision
// (decide, each key of decideBatch, and account) and read by the TypeScript side once per
// decision (DynamicPartitioner.decide); all i32 ----

export const DECISION_SIZE = 32;
/** The partition. */
export const D_PARTITION = 0;
/** The order marker (ORDER_*; ORDER_NONE with spread: false). */
export const D_ORDER = 4;
/** The key's tracked-key entry, or -1 (not tracked). */
export const D_ENTRY = 8;
/** Partitions the key is split over now: the entry's width for ORDER_SPREAD, else 1. */
export const D_WIDTH = 12;
/** Whether the key has a zero byte: 0 no, 1 yes, -1 not known (not looked at). */
export const D_ZERO = 16;

// ---- states of a tracked-key entry ----

export const STATE_FREE = 0;
export const STATE_CANDIDATE = 1;
export const STATE_HOT = 2;
/** Hot at a lower share because its normal partition was overloaded; >= STATE_HOT is hot. */
export const STATE_RELIEF = 3;

// ---- a tracked-key entry: a record of 1 << ENTRY_SHIFT bytes (one cache line) ----

export const ENTRY_SHIFT = 6;
/** f64: decayed message count, in weight units. */
export const E_COUNT = 0;
/** u32: the key's murmur2 (lane A of its fingerprint). */
export const E_LANE_A = 8;
/** u32: lane B of its fingerprint (the probe stride). */
export const E_LANE_B = 12;
/** i32: its topic slot. */
export const E_TOPIC = 16;
/** i32: STATE_*. */
export const E_STATE = 20;
/** i32: how many partitions a hot key may use. */
export const E_WIDTH = 24;
/** i32: stride through the partitions, coprime with E_SIZE. */
export const E_STEP = 28;
/** i32: the partition count E_STEP (and the scan window) were made for. */
export const E_SIZE = 32;
/** i32: the key's order chain, CHAIN_*. */
export const E_RETURN = 36;
/** E_RETURN: no chain open; the key's messages are unmarked. */
export const CHAIN_NONE = 0;
/** E_RETURN: the key cooled with a chain open; its next message owes an ORDER_RETURN marker. */
export const CHAIN_OWED = 1;
/** E_RETURN: a hot key's chain is open (its messages are marked). */
export const CHAIN_OPEN = 2;
/**
 * E_RETURN: the key may not leave its own partition (the application's spreadable() said so
 * when it turned hot): hot, reported, never moved or marked; kept while the key is tracked.
 */
export const CHAIN_PINNED = 3;
/** i32: where the next scan window of a wide key starts, as an index. */
export const E_SCAN_INDEX = 40;
/** i32: ... and as the partition at that index. */
export const E_SCAN_AT = 44;
/** i32: the partition of a hot key's current run. */
export const E_CURRENT = 48;
/** i32: messages left in that run (0: choose again). */
export const E_RUN_LEFT = 52;
/** f64: a relocated key moves again only once the load clock's weight reaches this. */
export const E_MOVE_AFTER = 56;

// ---- a topic slot: a record of 1 << TOPIC_SHIFT bytes (two cache lines; a decision reads the first and T_WEIGHT..T_PAGE) ----

export const TOPIC_SHIFT = 7;
/** f64: decayed message count (key clock). */
export const T_TOTAL = 0;
/** f64: decayed message count (load clock). */
export const T_LOAD_TOTAL = 8;
/** f64: 1 / partition count (a multiply per message instead of a divide). */
export const T_INVERSE = 16;
/** i32: partition count. */
export const T_SIZE = 24;
/** i32: partition of the current sticky run of null keys. */
export const T_STICKY = 28;
/** u32: bumped each time the slot is reset (sketch rows depend on it). */
export const T_GENERATION = 32;
/** i32: messages left in the sticky run. */
export const T_STICKY_LEFT = 36;
/** f64: messages decided (and accounted) since the slot was given to its topic. */
export const T_MESSAGES = 40;
/** f64: ... of them marked with an order marker (an order header, on a producer): messages of spread keys. */
export const T_SPREAD_MESSAGES = 48;
/** f64: ... of them placed on another partition than their key's normal one (keyed messages only). */
export const T_MOVED_MESSAGES = 56;
/** f64: the topic's key clock: the weight its next message counts (decay.ts), advanced by its own messages. */
export const T_WEIGHT = 64;
/** f64: the topic's load clock, the same for partition loads. */
export const T_LOAD_WEIGHT = 72;
/** f64: decayed message count on the sketch's clock, shared by all topics (admission compares estimates with it). */
export const T_SKETCH_TOTAL = 80;
/** f64: the key clock's growth per message of the topic (decay.ts; stretched for more than WIDE_PARTITIONS partitions). */
export const T_GROWTH = 88;
/** f64: the load clock's, the same. */
export const T_LOAD_GROWTH = 96;
/** u32: where the slot's page starts (its partitions' loads, penalties and adjustments: topics.ts); 0 before its first use. */
export const T_PAGE = 104;
/** A message-count horizon of a topic of n > WIDE_PARTITIONS partitions is stretched by n / WIDE_PARTITIONS. */
export const WIDE_PARTITIONS = 256;

/**
 * The table of tracked keys and the sketch, shared by the topics with state, have the sizes of
 * the options (maxTrackedKeys, sketch.width) for up to this many topics, and double each time
 * the topics with state pass twice as many (configure.ts, topicsWithState).
 */
export const TOPICS_PER_TABLE = 16;

// ---- the configuration: f64 parameters the TypeScript side writes at paramsPtr() before
// it calls configure(), one per option (integers and flags as f64 too) ----

export const PARAMS_SIZE = 256;
/** Counters per sketch row: sketch.width. */
export const P_SKETCH_WIDTH = 0;
/** Sketch rows: sketch.depth. */
export const P_SKETCH_DEPTH = 8;
/** Entries of the table of tracked keys: maxTrackedKeys. */
export const P_ENTRIES = 16;
/** Topic slots: maxTopics. */
export const P_TOPICS = 24;
/** Partitions per topic slot: maxPartitions. */
export const P_PARTITIONS = 32;
/** Growth of the key clock's weight per message (2^(1 / horizon.messages); 1 for a time horizon). */
export const P_GROWTH = 40;
/** The same for the load clock (loadHorizon). */
export const P_LOAD_GROWTH = 48;
/** hotThreshold, in fair shares. */
export const P_HOT = 56;
/** coolThreshold, in fair shares. */
export const P_COOL = 64;
/** Admission to exact tracking, in fair shares. */
export const P_ADMIT = 72;
/** minHotMessages. */
export const P_MIN_HOT = 80;
/** warmupMessages. */
export const P_WARMUP = 88;
/** spreadFactor. */
export const P_SPREAD_FACTOR = 96;
/** maxSpread (0: all partitions). */
export const P_MAX_SPREAD = 104;
/** spread: 1 true, 0 false. */
export const P_SPREAD = 112;
/** stickyRun. */
export const P_STICKY_RUN = 120;
/** 1 + balanceTolerance. */
export const P_WIDEN_ABOVE = 128;
/** reliefThreshold, in fair shares (0: off). */
export const P_RELIEF = 136;
/** sketch.sampling. */
export const P_SAMPLING = 144;
/** hotRun. */
export const P_HOT_RUN = 152;
/** relocate: 1 true, 0 false. */
export const P_RELOCATE = 160;
/** 1: a batch stops after a message at which a key turned hot, so the TS side can ask spreadable() before the key's next message. */
export const P_ASK_ON_HOT = 168;
/** 1: a split key's runs last splitRunMs (the TS side's clock ticks runTick() RUN_TICKS times in it), 0: hotRun's. */
export const P_SPLIT_RUN = 176;
/** Ticks of the run clock in splitRunMs. */
export const RUN_TICKS = 4;
