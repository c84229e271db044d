// Each hot key's lag on the consumer side (metrics().hotKeys): the keys whose messages came marked (an order
// header: a key its producer spread or moved), each with the age of its last handled message when its handler call
// ended (that call's end − the message's timestamp: how far behind the writes of that key this consumer handles) and
// how long ago that was. The engine offers it each marked message handled (dispatch.ts: handledMarked), of which one
// in SAMPLE_EVERY, drawn at random, is noted (a key's text and a map's lookup cost more than the rest of a message's
// way through the engine); read on each metrics() call.

import { type ConsumedMessage, keyLabel } from './resequencer-types';

/** A hot key as metrics().hotKeys gives it. */
export interface HotKeyLag {
  readonly topic: string;
  /** The key as text (a Buffer's as UTF-8; none: the empty string). */
  readonly key: string;
  /**
   * The age of its last handled message when its handler call ended (ms): that time less the message's timestamp
   * (its producer's, or the broker's with LogAppendTime); null when the message had no timestamp.
   */
  readonly lagMs: number | null;
  /** Since its last handled message noted (ms): grows while none of its messages is handled (blockedKeys says why, when it waits). */
  readonly idleMs: number;
}

interface Entry {
  readonly topic: string;
  readonly key: string;
  lagMs: number | null;
  at: number;
}

/** A key is forgotten this long after its last marked message was handled (a key that cooled). */
export const HOT_KEY_IDLE_MS = 300_000;
/** At most this many keys are noted (past it, those idle longest are forgotten first). */
const MAX_KEYS = 1024;
/** metrics().hotKeys: at most this many keys, those lagging most. */
export const HOT_KEYS_SHOWN = 20;
/** One marked message handled in this many (on average) is noted: a power of 2. */
export const SAMPLE_EVERY = 16;

/** A message's timestamp in ms, whatever form its client gives (node-rdkafka a number, KafkaJS a string, @platformatic/kafka a bigint). */
function timestampOf(m: ConsumedMessage): number {
  const t = (m as { timestamp?: unknown }).timestamp;
  return typeof t === 'number' ? t : typeof t === 'string' || typeof t === 'bigint' ? Number(t) : Number.NaN;
}

export class HotKeyLags {
  private readonly keys = new Map<string, Entry>();
  /** A xorshift32 state: which messages are noted, at random (a fixed pattern of keys could dodge a count). */
  private draw = 0x9e3779b9;

  /** `sampleEvery`: a power of 2; 1 notes every message. */
  constructor(private readonly sampleEvery = SAMPLE_EVERY) {}

  /** A marked message was handled; `now()` is read only for one that is noted. */
  handled(m: ConsumedMessage, now: () => number): void {
    if (this.sampleEvery > 1) {
      let x = this.draw;
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      this.draw = x;
      if ((x & (this.sampleEvery - 1)) !== 0) return;
    }
    this.note(m, now());
  }

  private note(m: ConsumedMessage, now: number): void {
    // By the key as its gauge's label gives it: a Buffer and a string of the same text are one key.
    const key = keyLabel(m.key);
    const name = `${m.topic}\u0000${key}`;
    let e = this.keys.get(name);
    if (e === undefined) {
      if (this.keys.size >= MAX_KEYS) this.forget(now);
      e = { topic: m.topic, key, lagMs: null, at: now };
      this.keys.set(name, e);
    }
    const t = timestampOf(m);
    e.lagMs = t > 0 ? Math.max(0, now - t) : null;
    e.at = now;
  }

  /** The keys lagging most (at most HOT_KEYS_SHOWN), those idle past HOT_KEY_IDLE_MS forgotten. */
  list(now: number): HotKeyLag[] {
    const out: HotKeyLag[] = [];
    for (const [name, e] of this.keys) {
      if (now - e.at > HOT_KEY_IDLE_MS) this.keys.delete(name);
      else out.push({ topic: e.topic, key: e.key, lagMs: e.lagMs, idleMs: now - e.at });
    }
    return out.sort((a, b) => (b.lagMs ?? -1) - (a.lagMs ?? -1)).slice(0, HOT_KEYS_SHOWN);
  }

  /** Room for a key: the idle ones go, else the quarter idle longest. */
  private forget(now: number): void {
    for (const [name, e] of this.keys) if (now - e.at > HOT_KEY_IDLE_MS) this.keys.delete(name);
    if (this.keys.size < MAX_KEYS) return;
    const oldest = [...this.keys].sort((a, b) => a[1].at - b[1].at).slice(0, MAX_KEYS >> 2);
    for (const [name] of oldest) this.keys.delete(name);
  }
}
