'use strict';
// The sizes of every table a DynamicProducer and a DynamicConsumer keep, and the bound each
// must stay under, taken from the options the instance was made with (never from what a run
// showed). Read at sampling time only, never on the message path: public counters where there
// are (metrics(), stats(), resequencer.awaited()), else the internal counts made for this file
// (the @internal tableSizes() of DynamicProducer, the consumer engine's Dispatcher and Resequencer). A method
// that is not where this file expects it fails the read with its name, so that a change of
// the classes cannot turn a check into a no-op.

/** The result of `object`'s method `name`, or a TypeError naming it. */
function call(object, name, owner) {
  if (object === null || typeof object !== 'object' || typeof object[name] !== 'function') {
    throw new TypeError(`soak tables: ${owner}.${name} is not a method (the class changed: update bench/soak/tables.js)`);
  }
  return object[name]();
}

/**
 * Table sizes of a DynamicProducer. The order chains are fixed arrays with a slot for each
 * entry the tracked-key table can reach (trackedKeysBound); their count is the entries with a
 * chain open (a marked message since its anchor).
 */
function producerTables(p) {
  const m = p.metrics();
  const t = call(p, 'tableSizes', 'DynamicProducer');
  return {
    trackedKeys: m.trackedKeys.tracked,
    hotKeys: m.trackedKeys.hot,
    topics: t.topics,
    partitionerTopics: Object.keys(p.partitioner.stats().topics).length,
    inflight: m.inflight,
    held: m.held,
    handoffKeys: t.handoffKeys,
    orderChains: t.orderChains,
    orderChainSlots: t.orderChainSlots,
    unconfirmed: t.unconfirmed,
  };
}

/** The bound of each producerTables() figure, from the producer's options and librdkafka configuration. */
function producerBounds(p, globalConfig) {
  const o = p.partitioner.options;
  const queue = Number(globalConfig['queue.buffering.max.messages'] ?? 100000);
  const maxQueued = call(p, 'tableSizes', 'DynamicProducer').maxQueued;
  // The tracked-key table grows with the topics up to trackedKeysBound; the producer keeps
  // counts for 16 x maxTopics topics (at least 1,024).
  const entries = p.partitioner.trackedKeysBound;
  return {
    trackedKeys: entries,
    hotKeys: entries,
    topics: Math.max(1024, 16 * o.maxTopics),
    partitionerTopics: o.maxTopics,
    inflight: queue,
    held: maxQueued,
    handoffKeys: entries,
    orderChains: entries,
    orderChainSlots: entries,
    unconfirmed: queue + maxQueued,
  };
}

/** A DynamicConsumer's engine (src/delivery/delivery.ts): its Dispatcher's tables, the partitions owned, the handler queue, and the consumer's options. */
function consumerEngineTables(c) {
  const engine = c.delivery;
  if (engine === null || typeof engine !== 'object') throw new TypeError('soak tables: DynamicConsumer.delivery is not its engine (the class changed: update bench/soak/tables.js)');
  const d = engine.dispatch;
  return { ...call(d, 'tableSizes', 'Dispatcher'), assigned: engine.assignment.owned.size, queue: d.waiting + d.inFlight, options: c.options };
}

/** Table sizes of a DynamicConsumer and its Resequencer. */
function consumerTables(c) {
  const r = c.resequencer;
  // The messages waiting for or in a handler call, their lanes, the offsets not yet handled and the last commits (the Dispatcher's), the partitions assigned.
  const d = consumerEngineTables(c);
  // held, heldBytes, chains, lines, waitingFor, heldBySequence, heldOrder, partitionStates.
  const sizes = call(r, 'tableSizes', 'Resequencer');
  return {
    ...sizes,
    awaited: r.awaited().length,
    queue: d.queue,
    dispatchLanes: d.lanes,
    unhandled: d.unhandled,
    unhandledPartitions: d.unhandledPartitions,
    assigned: d.assigned,
    lastCommitted: d.lastCommitted,
  };
}

/**
 * The bound of each consumerTables() figure, from the consumer's options and the topic's
 * partition count. The handler queue takes what one fetch brings (batchSize) and what one
 * message releases (at most everything held) past maxPending before fetching pauses.
 * heldOrder (every held message, released ones skipped lazily at the next expiry) has no
 * option bound: null, checked for a trend instead.
 */
function consumerBounds(c, partitions) {
  const r = c.resequencer.options;
  const o = consumerEngineTables(c).options;
  const pending = o.maxPending + o.batchSize + r.maxBufferedMessages;
  return {
    held: r.maxBufferedMessages,
    heldBytes: r.maxBufferedBytes,
    chains: r.maxChains,
    lines: r.maxBufferedMessages,
    waitingFor: r.maxBufferedMessages,
    heldBySequence: r.maxBufferedMessages,
    heldOrder: null,
    partitionStates: partitions,
    awaited: partitions,
    queue: pending + o.concurrency,
    dispatchLanes: pending + o.concurrency,
    unhandled: pending + o.concurrency,
    unhandledPartitions: partitions,
    assigned: partitions,
    lastCommitted: partitions,
  };
}

module.exports = { producerTables, producerBounds, consumerTables, consumerBounds };
