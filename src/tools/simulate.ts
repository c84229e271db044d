// Static placement against dynamic placement on a synthetic workload: the engine behind
// `kdp simulate` and the balance figures of `npm run bench`.

import { DynamicPartitioner } from '../partitioner/partitioner';
import { partitionForKeys } from '../core/hash';
import { DynamicPartitionerOptions, resolveOptions } from '../core/options';
import { KeyStream, parseWorkload } from './workload';
import { OutOfRangeError } from '../core/errors';

export interface SimulationSettings {
  readonly workload: string;
  readonly keys: number;
  readonly messages: number;
  readonly partitions: number;
  /** Messages per window for the worst-window figure. */
  readonly window: number;
  readonly seed: number;
  /**
   * Topics the producer writes, each with the simulated topic's traffic (the others' keys drawn
   * from the same stream): the figures are the simulated topic's; the others only share the
   * partitioner (its tables, its topic slots: beyond maxTopics they go without state).
   */
  readonly topics: number;
  readonly options: DynamicPartitionerOptions;
}

export const SIMULATION_DEFAULTS: SimulationSettings = Object.freeze({
  workload: 'zipf:1.0',
  keys: 100_000,
  messages: 1_000_000,
  partitions: 48,
  window: 100_000,
  seed: 1,
  topics: 1,
  options: Object.freeze({}),
});

/**
 * What a run may ask for, from what simulate() allocates. Per key: its name on the V8 heap
 * (a string and an array slot, about 40 bytes), the CDF (8), the static partition (4) and the
 * moved flag (1): 10 million keys stay well under Node's default heap limit. Messages cost
 * time, not memory (the figures: docs/performance.md), but each window keeps two figures and scans every partition, so the number of
 * windows is bounded too. Partitions are bounded by the partitioner's maxPartitions.
 */
export const SIMULATION_LIMITS = Object.freeze({
  keys: 10_000_000,
  messages: 1_000_000_000,
  windows: 100_000,
  /** mulberry32 takes a 32-bit seed. */
  seed: 0xffffffff,
  topics: 100_000,
});

/** The smallest window that keeps a run of `messages` within SIMULATION_LIMITS.windows windows. */
export function minWindow(messages: number): number {
  return Math.max(1, Math.ceil(messages / SIMULATION_LIMITS.windows));
}

function checkSettings(s: SimulationSettings, maxPartitions: number): void {
  const check = (name: string, value: number, min: number, max: number): void => {
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new OutOfRangeError(`settings.${name}`, `an integer in [${min}, ${max}]`, value);
    }
  };
  check('keys', s.keys, 1, SIMULATION_LIMITS.keys);
  check('messages', s.messages, 1, SIMULATION_LIMITS.messages);
  check('partitions', s.partitions, 1, maxPartitions);
  check('window', s.window, minWindow(s.messages), SIMULATION_LIMITS.messages);
  check('seed', s.seed, 0, SIMULATION_LIMITS.seed);
  check('topics', s.topics, 1, SIMULATION_LIMITS.topics);
}

/** The largest element; a spread into Math.max overflows the stack on long arrays. */
function maxOf(values: ArrayLike<number>): number {
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) if (values[i] > max) max = values[i];
  return max;
}

export interface Placement {
  /** Messages per partition over the run. */
  readonly load: number[];
  /** Hottest partition / mean, over the run. */
  readonly maxOverMean: number;
  /** Hottest partition / mean, over the run after its first window (the warm-up). */
  readonly maxOverMeanAfterWarmup: number;
  /** Hottest partition / mean, per window. */
  readonly windows: number[];
  readonly worstWindow: number;
}

export interface SimulationResult {
  readonly settings: SimulationSettings;
  readonly static: Placement;
  readonly dynamic: Placement & {
    /** Keys that were hot at some point. */
    readonly keysSpread: number;
    /** Mean, over the keys hot at the end, of the partitions each may use. */
    readonly meanPartitionsPerSpreadKey: number;
    /** For a shifting workload: hottest / mean in the window right after each move. */
    readonly windowAfterShift: number[];
    /** Keys whose messages left their normal partition at least once. */
    readonly keysMoved: number;
    /** Messages of keys that were never hot that did not go to the key's normal partition (must be 0). */
    readonly coldMessagesMoved: number;
    /** Messages of spread keys: those marked with an order marker (an order header, on a producer); stats().topics[t].spreadMessages. */
    readonly spreadMessages: number;
    /** Messages that did not go to their key's normal partition; stats().topics[t].movedMessages. */
    readonly movedMessages: number;
    /**
     * offlineMinimum() of the workload's key shares at the partitioner's balanceTolerance, as a
     * share of the messages: what spreadMessages / messages compares with. Null for a shifting workload.
     */
    readonly offlineMinimum: number | null;
  };
  /** Hot-key detection at the end of the run against the true key probabilities (stationary workloads). */
  readonly detection: {
    /** Keys whose true share is above the hot threshold. */
    readonly trulyHot: number;
    readonly reported: number;
    /** Truly hot keys not reported. */
    readonly missed: number;
    /** Keys reported hot for their share whose true share is below the cooling threshold. */
    readonly falseHot: number;
    /** Keys reported hot to relieve an overloaded partition (reason 'relief'); not detections. */
    readonly relief: number;
  } | null;
  /** Wall time of the dynamic decisions, per message (includes the simulator's own loop). */
  readonly nsPerMessage: number;
}

/**
 * The least share of the traffic that must leave its key's partition for balance, with the
 * key shares known and every key whole on its static partition (`home[k]`): for each
 * partition above (1 + tolerance) x the mean, its keys above a fair share (they must be split
 * anyway), then the smallest single key that covers what is left of the excess, or its largest
 * keys until covered, whichever is less; summed over the partitions. Where the traffic goes
 * is not asked (there is always room below the mean). A yardstick for the online policy,
 * which sees neither the shares nor the future.
 */
export function offlineMinimum(shares: ArrayLike<number>, home: ArrayLike<number>, n: number, tolerance: number): number {
  let total = 0;
  for (let k = 0; k < shares.length; k++) total += shares[k];
  const mean = total / n;
  const load = new Float64Array(n);
  const byPartition: number[][] = Array.from({ length: n }, () => []);
  for (let k = 0; k < shares.length; k++) {
    load[home[k]] += shares[k];
    byPartition[home[k]].push(shares[k]);
  }
  let moved = 0;
  for (let p = 0; p < n; p++) {
    if (load[p] <= (1 + tolerance) * mean) continue;
    const keys = byPartition[p].sort((a, b) => b - a);
    let rest = load[p];
    let i = 0;
    for (; i < keys.length && keys[i] > mean; i++) {
      moved += keys[i];
      rest -= keys[i];
    }
    const excess = rest - (1 + tolerance) * mean;
    if (excess <= 0) continue;
    let single = Infinity;
    for (let j = i; j < keys.length && keys[j] >= excess; j++) single = keys[j];
    let largest = 0;
    for (let j = i; j < keys.length && largest < excess; j++) largest += keys[j];
    moved += Math.min(single, largest);
  }
  return total > 0 ? moved / total : 0;
}

function placement(load: Float64Array, afterWarmup: Float64Array, windows: number[]): Placement {
  const total = load.reduce((a, b) => a + b, 0);
  const later = afterWarmup.reduce((a, b) => a + b, 0);
  return {
    load: Array.from(load),
    maxOverMean: total > 0 ? (maxOf(load) * load.length) / total : 1,
    maxOverMeanAfterWarmup: later > 0 ? (maxOf(afterWarmup) * afterWarmup.length) / later : 1,
    windows,
    worstWindow: windows.length ? maxOf(windows) : 1,
  };
}

function maxOverMean(window: Float64Array, count: number): number {
  return count > 0 ? (maxOf(window) * window.length) / count : 1;
}

export function simulate(input: Partial<SimulationSettings> = {}): SimulationResult {
  const settings: SimulationSettings = { ...SIMULATION_DEFAULTS, ...input };
  const { keys, messages, partitions: n, window, seed } = settings;
  const workload = parseWorkload(settings.workload);
  const options = resolveOptions(settings.options);
  checkSettings(settings, options.maxPartitions);
  const names = Array.from({ length: keys }, (_, i) => `key-${i}`);
  const normal = partitionForKeys(names, n, options.partitioner);
  const stream = new KeyStream(workload, keys, seed);
  const partitioner = new DynamicPartitioner(settings.options);
  const everHot = new Set<string>();
  partitioner.on('hot', (h) => everHot.add(h.key as string));

  const staticLoad = new Float64Array(n);
  const dynamicLoad = new Float64Array(n);
  const staticLater = new Float64Array(n);
  const dynamicLater = new Float64Array(n);
  const staticWindow = new Float64Array(n);
  const dynamicWindow = new Float64Array(n);
  const staticWindows: number[] = [];
  const dynamicWindows: number[] = [];
  const afterShift: number[] = [];
  const moved = new Uint8Array(keys);
  let coldMoved = 0;
  let inWindow = 0;
  let decisionNs = 0;
  const chunk = new Int32Array(1024);
  const chunkKeys: string[] = new Array(1024);
  const others = Array.from({ length: settings.topics - 1 }, (_, i) => `other-${i + 1}`);

  for (let done = 0; done < messages; ) {
    const size = Math.min(chunk.length, messages - done, window - inWindow);
    for (let i = 0; i < size; i++) chunk[i] = stream.next();
    for (let i = 0; i < size; i++) chunkKeys[i] = names[chunk[i]];
    const started = process.hrtime.bigint();
    const placed = new Int32Array(size);
    if (others.length === 0) {
      for (let i = 0; i < size; i++) placed[i] = partitioner.partition('simulated', chunkKeys[i], n);
    } else {
      // After each message of the simulated topic, one to each other topic (keys of the same stream).
      for (let i = 0; i < size; i++) {
        placed[i] = partitioner.partition('simulated', chunkKeys[i], n);
        for (let o = 0; o < others.length; o++) partitioner.partition(others[o], chunkKeys[(i + o + 1) % size], n);
      }
    }
    decisionNs += Number(process.hrtime.bigint() - started);
    for (let i = 0; i < size; i++) {
      const k = chunk[i];
      const s = normal[k];
      const d = placed[i];
      staticLoad[s]++;
      staticWindow[s]++;
      dynamicLoad[d]++;
      dynamicWindow[d]++;
      if (done >= window) {
        staticLater[s]++;
        dynamicLater[d]++;
      }
      if (d !== s) {
        moved[k] = 1;
        if (!everHot.has(names[k])) coldMoved++;
      }
    }
    done += size;
    inWindow += size;
    if (inWindow === window || done === messages) {
      staticWindows.push(maxOverMean(staticWindow, inWindow));
      dynamicWindows.push(maxOverMean(dynamicWindow, inWindow));
      const windowStart = done - inWindow;
      if (workload.shiftEvery > 0 && windowStart > 0 && windowStart % workload.shiftEvery === 0) {
        afterShift.push(dynamicWindows[dynamicWindows.length - 1]);
      }
      staticWindow.fill(0);
      dynamicWindow.fill(0);
      inWindow = 0;
    }
  }

  const hot = partitioner.hotKeys('simulated');
  const { spreadMessages, movedMessages } = partitioner.stats().topics.simulated;
  let detection: SimulationResult['detection'] = null;
  if (workload.shiftEvery === 0) {
    const hotLine = options.hotThreshold / n;
    const coolLine = options.coolThreshold / n;
    const reported = new Set(hot.filter((h) => h.reason === 'share').map((h) => h.key as string));
    let trulyHot = 0;
    let missed = 0;
    for (let r = 0; r < keys; r++) {
      if (stream.probability(r) <= hotLine) break;
      trulyHot++;
      if (!reported.has(names[stream.keyOfRank(r)])) missed++;
    }
    let falseHot = 0;
    const rankOfKey = (name: string): number => Number(name.slice(4)); // no shift: rank = key index
    for (const name of reported) if (stream.probability(rankOfKey(name)) < coolLine) falseHot++;
    detection = { trulyHot, reported: reported.size, missed, falseHot, relief: hot.length - reported.size };
  }
  partitioner.close();
  let minimum: number | null = null;
  if (workload.shiftEvery === 0) {
    const shares = new Float64Array(keys);
    for (let r = 0; r < keys; r++) shares[stream.keyOfRank(r)] = stream.probability(r);
    minimum = offlineMinimum(shares, normal, n, options.balanceTolerance);
  }

  return {
    settings,
    static: placement(staticLoad, staticLater, staticWindows),
    dynamic: {
      ...placement(dynamicLoad, dynamicLater, dynamicWindows),
      keysSpread: everHot.size,
      meanPartitionsPerSpreadKey: hot.length ? hot.reduce((a, h) => a + h.partitions, 0) / hot.length : 0,
      windowAfterShift: afterShift,
      keysMoved: moved.reduce((a, b) => a + b, 0),
      coldMessagesMoved: coldMoved,
      spreadMessages,
      movedMessages,
      offlineMinimum: minimum,
    },
    detection,
    nsPerMessage: decisionNs / (messages * settings.topics),
  };
}
