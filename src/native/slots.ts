// The native engine's slots: what a message needs at its delivery report (its opaque, topic,
// key, size, and with dr_msg_cb its value), kept here from NativeClient.produce() (produce.ts)
// to the report under a small integer id (and a member index its SlotTaker gives: a send()'s in
// its group), which goes to librdkafka as the message's opaque (no JavaScript object crosses into C). Ids are reused as reports free them; the tables double
// when all are taken.

export class Slots {
  /** Per id: the opaque produce() was given (undefined: the slot is free). */
  readonly opaques: unknown[] = [];
  readonly topics: string[] = [];
  /** The key as produce() was given it, for the report. */
  readonly keys: unknown[] = [];
  /** With dr_msg_cb (node-rdkafka's reports then carry the value): the value, for the report. */
  readonly values: Array<Buffer | null | undefined> = [];
  /** The value's size, for the report. */
  sizes = new Int32Array(1024);
  /** A send() in a group (the opaque, or its link's, is a SendGroup): its member index; else -1. */
  members = new Int32Array(1024);
  private free = new Int32Array(1024);
  private freeCount = 0;
  /** Ids handed out so far (free or not). */
  private count = 0;

  constructor(private readonly keepValues: boolean) {}

  /** A slot for one message; its id. */
  take(opaque: unknown, topic: string, size: number, key: unknown, value: Buffer | null, member: number): number {
    let id: number;
    if (this.freeCount > 0) id = this.free[--this.freeCount];
    else {
      id = this.count++;
      if (id === this.sizes.length) {
        this.sizes = doubled(this.sizes, id);
        this.members = doubled(this.members, id);
        this.free = doubled(this.free, this.freeCount);
      }
    }
    this.opaques[id] = opaque;
    this.topics[id] = topic;
    this.keys[id] = key;
    this.sizes[id] = size;
    this.members[id] = member;
    if (this.keepValues) this.values[id] = value;
    return id;
  }

  /** Frees a slot (its message was reported, or refused). */
  release(id: number): void {
    this.opaques[id] = undefined;
    this.keys[id] = undefined;
    if (this.keepValues) this.values[id] = undefined;
    this.free[this.freeCount++] = id;
  }

  /** The ids of the messages taken and not reported yet. */
  *inflight(): Iterable<number> {
    for (let id = 0; id < this.count; id++) if (this.opaques[id] !== undefined) yield id;
  }
}

/** A table twice as long as `table`, with its first `used` entries. */
function doubled(table: Int32Array, used: number): Int32Array<ArrayBuffer> {
  const out = new Int32Array(table.length * 2);
  out.set(table.subarray(0, used));
  return out;
}
