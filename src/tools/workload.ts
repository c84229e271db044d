// Synthetic key streams for the simulator and the benchmarks: Zipf-distributed, uniform, or
// Zipf with a hot set that moves every N messages.

import { InvalidValueError } from '../core/errors';

export interface Workload {
  readonly name: string;
  /** Zipf exponent (0 for uniform). */
  readonly exponent: number;
  /** Messages between moves of the hot set (0: never). */
  readonly shiftEvery: number;
}

export const WORKLOAD_FORMS = ['zipf:<s>', 'uniform', 'shift:<s>:<every>'] as const;

export function parseWorkload(text: string): Workload {
  const parts = text.split(':');
  const num = (s: string | undefined): number => (s !== undefined && s.trim() !== '' ? Number(s) : NaN);
  if (parts[0] === 'uniform' && parts.length === 1) return { name: text, exponent: 0, shiftEvery: 0 };
  if (parts[0] === 'zipf' && parts.length === 2 && num(parts[1]) >= 0) {
    return { name: text, exponent: num(parts[1]), shiftEvery: 0 };
  }
  if (parts[0] === 'shift' && parts.length === 3 && num(parts[1]) >= 0 && Number.isInteger(num(parts[2])) && num(parts[2]) > 0) {
    return { name: text, exponent: num(parts[1]), shiftEvery: num(parts[2]) };
  }
  throw new InvalidValueError('workload', WORKLOAD_FORMS, text);
}

/** mulberry32: small, fast, seeded. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A stream of key indexes in [0, keys): rank r has probability proportional to
 * 1 / (r + 1)^exponent; rank r is key (r + phase * offset) mod keys, the phase advancing
 * every shiftEvery messages, so that the hot set moves onto keys that were cold.
 */
export class KeyStream {
  private readonly cdf: Float64Array;
  private readonly rand: () => number;
  private readonly offset: number;
  private produced = 0;

  constructor(readonly workload: Workload, readonly keys: number, seed: number) {
    this.cdf = new Float64Array(keys);
    let acc = 0;
    for (let r = 0; r < keys; r++) {
      acc += workload.exponent === 0 ? 1 : Math.pow(r + 1, -workload.exponent);
      this.cdf[r] = acc;
    }
    for (let r = 0; r < keys; r++) this.cdf[r] /= acc;
    this.rand = prng(seed);
    this.offset = Math.floor(keys / 3) + 1;
  }

  /** The probability of rank r. */
  probability(rank: number): number {
    return this.cdf[rank] - (rank > 0 ? this.cdf[rank - 1] : 0);
  }

  /** The key that holds rank r in the current phase. */
  keyOfRank(rank: number): number {
    return (rank + this.phase() * this.offset) % this.keys;
  }

  phase(): number {
    return this.workload.shiftEvery > 0 ? Math.floor(this.produced / this.workload.shiftEvery) : 0;
  }

  next(): number {
    const u = this.rand();
    const cdf = this.cdf;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    const key = this.keyOfRank(lo);
    this.produced++;
    return key;
  }
}
