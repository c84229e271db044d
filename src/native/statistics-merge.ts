// The statistics of a native producer's librdkafka handles (produce.ts), merged into one
// message per interval, as one handle would give it: each handle emits its own JSON every
// statistics.interval.ms (librdkafka's STATISTICS.md); once every handle has given one, they
// are merged and the round starts again. Merged:
// - each partition's entry from the handle that produces to it (p % handles; -1 from the first),
//   so that queue depths (msgq_cnt, xmit_msgq_cnt) are the ones that handle holds;
// - the counters of the whole client and of each broker (messages queued, requests, bytes,
//   connects, per-request-type counts) summed over the handles;
// - the rest (names, states, latency windows, batch-size windows) the first handle's.
// `handles` gives how many there were.

/** Client-level counters (sum over handles). */
const CLIENT_SUMS = ['replyq', 'msg_cnt', 'msg_size', 'tx', 'tx_bytes', 'rx', 'rx_bytes', 'txmsgs', 'txmsg_bytes', 'rxmsgs', 'rxmsg_bytes'];
/** Broker-level counters (sum over handles). */
const BROKER_SUMS = ['outbuf_cnt', 'outbuf_msg_cnt', 'waitresp_cnt', 'waitresp_msg_cnt', 'tx', 'txbytes', 'txerrs', 'txretries', 'req_timeouts',
  'rx', 'rxbytes', 'rxerrs', 'rxcorriderrs', 'rxpartial', 'zbuf_grow', 'buf_grow', 'wakeups', 'connects', 'disconnects'];

export class StatisticsRounds {
  /** This round's message of each handle (undefined: not yet). */
  private readonly round: Array<string | undefined>;
  private given = 0;

  constructor(private readonly handles: number) {
    this.round = new Array(handles);
  }

  /** Handle `handle`'s statistics: the merged message once every handle has given one this round, else undefined. */
  add(handle: number, message: string): string | undefined {
    if (this.round[handle] === undefined) this.given++;
    // A handle's second message before the round is whole replaces its first.
    this.round[handle] = message;
    if (this.given < this.handles) return undefined;
    const messages = this.round.slice() as string[];
    this.clear();
    return mergeStatistics(messages);
  }

  /** Starts the round again (the handles were closed). */
  clear(): void {
    this.round.fill(undefined);
    this.given = 0;
  }
}

/** One statistics message of the handles' `messages` (index: the handle); the first as it is if any is not JSON. */
export function mergeStatistics(messages: readonly string[]): string {
  let all: any[];
  try {
    all = messages.map((m) => JSON.parse(m));
  } catch {
    return messages[0];
  }
  const handles = all.length;
  const out = all[0];
  if (out === null || typeof out !== 'object') return messages[0];
  for (const name of CLIENT_SUMS) sumInto(out, all, name);
  out.brokers = mergeBrokers(all);
  out.topics = mergeTopics(all, handles);
  out.handles = handles;
  return JSON.stringify(out);
}

/** `out[name]` = the sum of each statistics' `name`, where it is a number in the first. */
function sumInto(out: any, all: readonly any[], name: string): void {
  if (typeof out[name] !== 'number') return;
  let sum = 0;
  for (const s of all) if (typeof s?.[name] === 'number') sum += s[name];
  out[name] = sum;
}

function mergeBrokers(all: readonly any[]): Record<string, any> {
  const out: Record<string, any> = {};
  for (const stats of all) {
    for (const [name, broker] of Object.entries<any>(stats?.brokers ?? {})) {
      const into = out[name];
      if (into === undefined) {
        out[name] = broker;
        continue;
      }
      for (const field of BROKER_SUMS) if (typeof into[field] === 'number' && typeof broker[field] === 'number') into[field] += broker[field];
      if (into.req && broker.req) for (const [type, n] of Object.entries<any>(broker.req)) into.req[type] = (into.req[type] ?? 0) + n;
      if (into.toppars && broker.toppars) Object.assign(into.toppars, broker.toppars);
    }
  }
  return out;
}

function mergeTopics(all: readonly any[], handles: number): Record<string, any> {
  const out: Record<string, any> = {};
  for (let h = 0; h < handles; h++) {
    for (const [name, topic] of Object.entries<any>(all[h]?.topics ?? {})) {
      const into = (out[name] ??= { ...topic, partitions: {} });
      for (const [id, partition] of Object.entries<any>(topic?.partitions ?? {})) {
        const p = Number(id);
        const owner = p > 0 ? p % handles : 0;
        // The owning handle's entry wins; another's stands in only where the owner has none.
        if (owner === h || into.partitions[id] === undefined) into.partitions[id] = partition;
      }
    }
  }
  return out;
}
