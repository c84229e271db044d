// configure(): sets up hot-key detection once, before any decision, from the parameters the
// TS side wrote at PARAMS (params.ts): each module sizes its regions (carved out of the arena,
// memory.ts) and reads its options. topicsWithState(): as topics get state, the shared tables
// (tracked keys, sketch, and the event log that follows the table) grow with them, up to
// their size for maxTopics topics (within the options' ranges); arenaBound() states the most memory that takes.

import { decayConfigure, sketchTopics } from "./decay";
import { eventsConfigure, eventsGrow, eventsBytes } from "./events";
import { topicsConfigure, topicPageBytes } from "./topics";
import { admissionConfigure } from "./admission";
import { choiceConfigure } from "./choice-options";
import { decideConfigure, EVENT_RESERVE } from "./decide";
import { hotkeysGrow, hotkeysBytes } from "./hotkeys";
import { sketchGrow, sketchBytes, sketchWidthFor } from "./sketch";
import { ARENA_START, arenaSize } from "./memory";
import { param, intParam } from "./params";
import { P_ENTRIES, P_TOPICS, P_PARTITIONS, P_GROWTH, P_LOAD_GROWTH, P_SKETCH_WIDTH, P_SKETCH_DEPTH, TOPICS_PER_TABLE, TOPIC_SHIFT } from "./abi";

/** The factor the shared tables have now over the options' sizes: a power of two. */
let tableScale: i32 = 1;
/** The module's memory before configure() carved anything out (its initial pages). */
let initialBytes: f64 = 0;

export function configure(): void {
  initialBytes = <f64>(<usize>memory.size() << 16);
  admissionConfigure();
  decayConfigure(param(P_GROWTH), param(P_LOAD_GROWTH));
  choiceConfigure();
  decideConfigure();
  topicsConfigure(intParam(P_TOPICS), intParam(P_PARTITIONS));
  eventsConfigure(intParam(P_ENTRIES) + EVENT_RESERVE);
  tableScale = 1;
}

/** The factor of the shared tables for `topics` topics with state: the power of two at or above topics / TOPICS_PER_TABLE. */
export function scaleFor(topics: i32): i32 {
  let s = 1;
  while (s * TOPICS_PER_TABLE < topics) s <<= 1;
  return s;
}

/** The largest factor: for maxTopics topics, within the options' ranges (2^20 tracked keys, 2^24 counters per row). */
export function maxScale(): i32 {
  const entries = intParam(P_ENTRIES);
  const width = <i64>sketchWidthFor(<u32>intParam(P_SKETCH_WIDTH));
  let s = scaleFor(intParam(P_TOPICS));
  while (s > 1 && (<i64>entries * s > (1 << 20) || width * s > (1 << 24))) s >>= 1;
  return s;
}

/**
 * `topics` topics have state now: the sketch's clock follows (decay.ts), and the shared tables
 * grow to their size for that many (never shrink). True when they grew: regions moved and the
 * memory may have grown (the TS side reads their addresses again).
 */
export function topicsWithState(topics: i32): bool {
  sketchTopics(topics);
  const most = maxScale();
  let scale = scaleFor(topics);
  if (scale > most) scale = most;
  if (scale <= tableScale) return false;
  tableScale = scale;
  const entries = intParam(P_ENTRIES) * scale;
  hotkeysGrow(entries);
  eventsGrow(entries + EVENT_RESERVE);
  sketchGrow(sketchWidthFor(<u32>intParam(P_SKETCH_WIDTH)) * <u32>scale);
  return true;
}

/** The shared tables' factor now. */
export function currentTableScale(): i32 {
  return tableScale;
}

/**
 * The most bytes of memory the instance ever takes (at least its initial pages): the static
 * data, then every region the arena may carve out (memory.ts: its top never passes the sum of their sizes): the topic
 * records, a page per slot, and each size the shared tables go through up to maxTopics topics.
 */
export function arenaBound(): f64 {
  const entries = intParam(P_ENTRIES);
  const width = sketchWidthFor(<u32>intParam(P_SKETCH_WIDTH));
  const depth = <u32>intParam(P_SKETCH_DEPTH);
  const topics = intParam(P_TOPICS);
  let bytes = <f64>ARENA_START + <f64>arenaSize(<usize>topics << TOPIC_SHIFT) + <f64>topics * <f64>topicPageBytes(intParam(P_PARTITIONS));
  const last = maxScale();
  for (let s = 1; s <= last; s <<= 1) {
    bytes += <f64>hotkeysBytes(entries * s) + <f64>eventsBytes(entries * s + EVENT_RESERVE) + <f64>sketchBytes(width * <u32>s, depth);
  }
  bytes = Math.ceil(bytes / 65536) * 65536;
  return bytes > initialBytes ? bytes : initialBytes;
}
