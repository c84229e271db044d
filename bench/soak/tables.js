'use strict';
// The sizes of every table a DynamicProducer and a DynamicConsumer keep, and the bound each
// must stay under, taken from the options the instance was made with (never from what a run
// showed). Read at sampling time only, never on the message path: public counters where there
// are (metrics(), stats(), orderChains(), resequencer.awaited()), the internal counts made for
// this file (Resequencer.tableSizes(), Dispatcher.laneCount), else the size of the internal
// Map, Set or array itself. An internal that is not where this file
// expects it fails the read with its name, so that a change of the classes cannot turn a
// check into a no-op.

/** An own field of `object`, or a TypeError naming it. */
function field(object, name, owner) {
  if (object === null || typeof object !== 'object' || !(name in object)) {
    throw new TypeError(`soak tables: ${owner} has no field ${name} (the class changed: update bench/soak/tables.js)`);
  }
  return object[name];
}

/** The result of `object`'s method `name`, or a TypeError naming it. */
function call(object, name, owner) {
  if (typeof field(object, name, owner) !== 'function') throw new TypeError(`soak tables: ${owner}.${name} is not a method (the class changed: update bench/soak/tables.js)`);
  return object[name]();
}

/**
 * Table sizes of a DynamicProducer. The order chains are fixed arrays with a slot for each
 * entry the tracked-key table can reach (trackedKeysBound); their count is the entries with a
 * chain open (a marked message since its anchor).
 */
function producerTables(p) {
  const m = p.metrics();
  const handoff = field(p, 'handoff', 'DynamicProducer');
  const chains = call(p, 'orderChains', 'DynamicProducer');
  return {
    trackedKeys: m.trackedKeys.tracked,
    hotKeys: m.trackedKeys.hot,
    topics: field(field(p, 'metadata', 'DynamicProducer'), 'topics', 'Metadata').size,
    partitionerTopics: Object.keys(p.partitioner.stats().topics).length,
    inflight: m.inflight,
    held: m.held,
    handoffKeys: handoff === undefined ? 0 : field(handoff, 'queues', 'Handoff').size,
    orderChains: chains.open,
    orderChainSlots: chains.slots,
    unconfirmed: field(field(p, 'delivery', 'Delivery'), 'unconfirmed', 'Delivery').size,
  };
}

/** The bound of each producerTables() figure, from the producer's options and librdkafka configuration. */
function producerBounds(p, globalConfig) {
  const o = p.partitioner.options;
  const queue = Number(globalConfig['queue.buffering.max.messages'] ?? 100000);
  const maxQueued = field(p, 'options', 'DynamicProducer').maxQueued;
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

/** Table sizes of a DynamicConsumer and its Resequencer. */
function consumerTables(c) {
  const r = c.resequencer;
  let unhandled = 0;
  // The messages waiting for or in a handler call, their lanes (its TaskQueue's), the offsets not yet handled and the last commits are the Dispatcher's (src/consumer/dispatch.ts).
  const dispatch = field(c, 'dispatch', 'DynamicConsumer');
  const perPartition = field(dispatch, 'unhandled', 'Dispatcher');
  for (const s of perPartition.values()) unhandled += s.size;
  // held, heldBytes, chains, lanes, waitingFor, heldBySequence, heldOrder, partitionStates.
  const sizes = call(r, 'tableSizes', 'Resequencer');
  return {
    ...sizes,
    awaited: r.awaited().length,
    queue: dispatch.waiting + dispatch.inFlight,
    dispatchLanes: field(dispatch, 'laneCount', 'Dispatcher'),
    unhandled,
    unhandledPartitions: perPartition.size,
    assigned: field(c, 'assigned', 'DynamicConsumer').size,
    lastCommitted: field(dispatch, 'lastCommitted', 'Dispatcher').size,
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
  const o = field(c, 'options', 'DynamicConsumer');
  const pending = o.maxPending + o.batchSize + r.maxBufferedMessages;
  return {
    held: r.maxBufferedMessages,
    heldBytes: r.maxBufferedBytes,
    chains: r.maxChains,
    lanes: r.maxBufferedMessages,
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
