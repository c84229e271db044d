// The client a DynamicProducer drives, and everything the producer does to it but produce
// (hand-over/hand-over.ts does that, on the hot path): made at construction (the native engine's
// NativeClient when the addon is built and allowed, else the client library's Producer) with
// the settings the producer needs, or the application's own, wrapped; connected (the binding
// messages go through found), polled, its events listened to, flushed, disconnected. With it
// comes what the rest must know of it: whether it is ours, whether it reports deliveries,
// whether it is a HighLevelProducer, how many messages may be in flight.

import type * as Kafka from 'node-rdkafka';
import type { Config } from '../../core/config';
import { configError } from '../../core/config';
import { type Connectable, ERR__TIMED_OUT, connectClient } from '../../core/connect';
import { StateError, UndeliveredError, toKafkaError } from '../../core/errors';
import { kafkaLibrary, warnIfBothLoaded, type KafkaLibrary } from '../../core/library';
import { engineAddon, nativeMissing } from '../../native/addon';
import { hideSecrets } from '../../core/secrets';
import { within } from '../../core/time';
import { deliversReports, isHighLevel, nativeBinding, type NativeProducer } from './client-fields';
import { type Delivery, OURS, interceptReports } from '../settle/delivery';
import { NativeClient } from '../../native/produce';
import { SendGroups } from '../settle/opaque';
import type { Outcomes } from '../settle/outcomes';
import type { Pending, ProducerLike } from '../types';

/** librdkafka's default queue.buffering.max.messages (CONFIGURATION.md). */
const LIBRDKAFKA_QUEUE_MESSAGES = 100_000;
/**
 * The native engine's, when the configuration does not set it: a message beyond librdkafka's
 * queue waits in the producer's backlog, which costs more per message than librdkafka's queue
 * (docs/native.md). librdkafka's queue.buffering.max.kbytes (1 GB by default) still bounds it.
 */
export const NATIVE_QUEUE_MESSAGES = 500_000;

/** What DynamicProducer.disconnect(timeoutMs) keeps of its budget for the client's own disconnect (and gives it at least). */
export const CLIENT_DISCONNECT_MS = 100;

/** Where the client's events go (functions: no reference back to the producer). */
export interface ClientEvents {
  /** librdkafka statistics ('event.stats'). */
  stats(event: { message: string }): void;
  /** A librdkafka error event, as a KafkaError. */
  error(err: Error): void;
  /** The native engine handed messages of `topic` over unassigned (librdkafka did not know its count). */
  unassigned(topic: string): void;
  /** Whether the producer is closed (a wrapped client's interception ends with its last report). */
  closed(): boolean;
}

export class ClientAdapter {
  /** The node-rdkafka-style producer underneath. */
  readonly client: ProducerLike;
  /** The client library (options.kafka, or node-rdkafka) when the producer made its client, or was given one. */
  readonly library: KafkaLibrary | undefined;
  /** The native engine's client, when the producer runs on it. */
  readonly native: NativeClient | undefined;
  /** Whether the producer made the client (and disconnects it). */
  readonly owned: boolean;
  /** A wrapped node-rdkafka HighLevelProducer: produced through its plain produce(), its serializers applied by the producer. */
  readonly highLevel: boolean;
  /** Whether the client emits delivery reports (dr_cb / dr_msg_cb); send() needs them. */
  readonly reports: boolean;
  /** The opaque of fire-and-forget messages: none on a client we own, OURS on a wrapped one. */
  readonly fireAndForget: Pending | undefined;
  /** Whether it was connected when the producer was made (a wrapped client that says so, or cannot tell). */
  readonly connected: boolean;
  /** Messages in flight (handed over, report not yet taken) beyond which a message waits as on a full queue. */
  readonly maxInflight: number;
  private onReport: ((err: any, report: any) => void) | undefined;
  private onStats: ((event: { message: string }) => void) | undefined;
  /** Undoes the interception of a wrapped client's reports. */
  private unintercept: (() => void) | undefined;

  private constructor(client: ProducerLike, library: KafkaLibrary | undefined, native: NativeClient | undefined, owned: boolean, reports: boolean,
    config: Config | undefined) {
    this.client = client;
    this.library = library;
    this.native = native;
    this.owned = owned;
    this.highLevel = !owned && isHighLevel(client);
    this.reports = reports;
    this.fireAndForget = owned ? undefined : OURS;
    this.connected = owned ? false : client.isConnected ? client.isConnected() : true;
    this.maxInflight = maxInflight(config);
  }

  /**
   * A client made for the producer from its split configuration (`given`: the configurations as
   * the caller passed them, for the message of a bad setting). `base`: the base partitioner,
   * which librdkafka uses for the messages left unassigned (topic count not known yet), so that
   * they land where the producer would have put them. Throws a StateError when engine 'native'
   * is asked for and the addon is missing, a configuration error when the client refuses a setting.
   * `handles`: the native engine's librdkafka handles (one with a transactional.id, which one handle holds).
   */
  static make(split: { global: Config; topic: Config }, base: string, engine: 'auto' | 'native' | 'client',
    kafka: KafkaLibrary | undefined, given: { global: Config; topic: Config }, handles = 1): ClientAdapter {
    const topic = { ...split.topic, partitioner: base };
    const global: Config = { ...split.global };
    if (global.dr_cb === undefined && !global.dr_msg_cb) global.dr_cb = true;
    const library = kafkaLibrary(kafka);
    const addon = engineAddon(engine, kafka);
    let client: ProducerLike;
    let native: NativeClient | undefined;
    try {
      if (engine === 'native' && addon === undefined) {
        throw new StateError(`engine 'native': ${nativeMissing()}`);
      }
      if (addon !== undefined) {
        // Without reports, librdkafka still reports the messages it could not deliver: they are told as 'delivery' errors.
        if (!global.dr_cb && !global.dr_msg_cb && global['delivery.report.only.error'] === undefined) global['delivery.report.only.error'] = true;
        if (global['queue.buffering.max.messages'] === undefined) global['queue.buffering.max.messages'] = NATIVE_QUEUE_MESSAGES;
        const transactional = global['transactional.id'] !== undefined && global['transactional.id'] !== '';
        native = new NativeClient(addon, global, topic, new SendGroups(), transactional ? 1 : handles);
        client = native as unknown as ProducerLike;
      } else {
        client = new library.Producer(global as any, topic as any) as unknown as ProducerLike;
      }
    } catch (err) {
      if (err instanceof StateError) throw err;
      throw configError(err, given.global, given.topic);
    }
    hideSecrets(client);
    return new ClientAdapter(client, library, native, true, Boolean(global.dr_cb || global.dr_msg_cb), global);
  }

  /** The application's producer, wrapped (`kafka`: options.kafka, whose error names are read; it is not loaded here). */
  static wrap(existing: ProducerLike, kafka: KafkaLibrary | undefined): ClientAdapter {
    warnIfBothLoaded();
    return new ClientAdapter(existing, kafka, undefined, false, deliversReports(existing), existing.globalConfig);
  }

  /**
   * Delivery reports to `outcomes` (the native engine's as arguments; a wrapped producer's of
   * ours taken before its listeners see them: settle/delivery.ts), statistics and errors to `events`.
   */
  listen(outcomes: Outcomes, delivery: Delivery, events: ClientEvents): void {
    const onReport = (err: any, report: any): void => outcomes.delivered(err, report);
    this.onReport = onReport;
    this.onStats = (event) => events.stats(event);
    if (this.native !== undefined) {
      this.native.deliverTo(
        (opaque, code, topic, partition, offset, timestamp, size, key, value, member) => outcomes.nativeReport(opaque, code, topic, partition, offset, timestamp, size, key, value, member),
        (opaque, code, topic, partition, key, member) => outcomes.nativeRefused(opaque, code, topic, partition, key, member),
        (topic) => events.unassigned(topic),
      );
    }
    else if (this.owned) this.client.on('delivery-report', onReport);
    else this.unintercept = interceptReports(this.client, delivery, onReport, () => events.closed());
    this.client.on('event.stats', this.onStats);
    this.client.on('event.error', (err: any) => events.error(toKafkaError(err, 'librdkafka')));
  }

  /** Stops taking its reports and statistics (a wrapped client's own go to its application again). */
  unlisten(): void {
    if (this.onReport !== undefined) this.client.removeListener('delivery-report', this.onReport);
    if (this.onStats !== undefined) this.client.removeListener('event.stats', this.onStats);
    this.unintercept?.();
  }

  /** Connects a client we own; the binding to produce through (calls skip node-rdkafka's JS wrapper and its exceptions). */
  async connect(timeoutMs: number): Promise<NativeProducer | undefined> {
    const client = this.client as unknown as Kafka.Producer;
    await connectClient(client as unknown as Connectable, timeoutMs);
    return this.native ?? nativeBinding(client);
  }

  /** Lets librdkafka hand out delivery reports (of a connected client). */
  poll(): void {
    try {
      this.client.poll();
    } catch {
      // poll() throws only when not connected; the next connect() restarts it.
    }
  }

  /** The client's flush of everything handed over, for up to `timeoutMs` (an UndeliveredError counts what is left). */
  flush(timeoutMs: number, delivery: Delivery): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      try {
        this.client.flush(timeoutMs, (err) => {
          if (!err) return resolve();
          // node-rdkafka reports a flush timeout as code -1 ("Local: Timed out"), or -185.
          if (err.code === ERR__TIMED_OUT || /timed out/i.test(String(err.message))) reject(new UndeliveredError(`flush timed out with ${delivery.inflight} messages unconfirmed`, delivery.inflight));
          else reject(toKafkaError(err, 'flush'));
        });
      } catch (err) {
        // A wrapped producer the application disconnected: node-rdkafka throws a plain Error.
        reject(toKafkaError(err, 'flush'));
      }
    });
  }

  /** Disconnects a client we own (`connected`: it was), waiting until `deadline` at most (CLIENT_DISCONNECT_MS at least). */
  async disconnect(deadline: number, connected: boolean): Promise<void> {
    if (this.native !== undefined) {
      // The native handle exists from construction: closed even if it never connected.
      const native = this.native;
      await within(new Promise<void>((resolve) => native.disconnect(0, () => resolve())), Math.max(CLIENT_DISCONNECT_MS, deadline - Date.now()));
    } else if (this.owned && connected) {
      // node-rdkafka's disconnect(ms) flushes for ms, then destroys the client, which waits for
      // requests in flight: past the deadline that goes on in the background.
      const left = Math.max(CLIENT_DISCONNECT_MS, deadline - Date.now());
      await within(new Promise<void>((resolve) => (this.client as unknown as Kafka.Producer).disconnect(left, () => resolve())), left);
    }
  }
}

/**
 * librdkafka frees a message's room in its queue when it hands the delivery report over, and
 * node-rdkafka passes reports to JavaScript in batches on later turns of the event loop: a caller
 * producing faster than they are passed would pile them up (and their memory) without bound.
 * Messages in flight count against librdkafka's queue limit instead: queue.buffering.max.messages
 * of a global configuration (a number or a numeric string), or librdkafka's default.
 */
function maxInflight(config: Config | undefined): number {
  const value = Number(config?.['queue.buffering.max.messages']);
  return Number.isInteger(value) && value > 0 ? value : LIBRDKAFKA_QUEUE_MESSAGES;
}
