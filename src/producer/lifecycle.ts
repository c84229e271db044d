// The producer's lifecycle state, one record its parts read: connected (connect() done, or a
// wrapped client connected already) → closing (disconnect() under way: nothing more is taken)
// → closed, for good (`closing` stays set: connect() refuses). DynamicProducer makes the moves
// (connect(), disconnect()); the entry of the send path (intake.ts), the metadata requests and
// the interception of a wrapped client's reports read it. DynamicConsumer has a state of its
// own (src/consumer/consumer.ts).

export class Lifecycle {
  connected = false;
  closing = false;
  closed = false;
  /** The disconnect() under way, returned to any other call until it settles. */
  disconnecting: Promise<void> | undefined = undefined;
}
