// DynamicProducer.writable(topic): a Writable of messages, with the producer's back-pressure.

import { Writable } from 'node:stream';
import type { EventEmitter } from 'node:events';
import { InvalidArgTypeError } from '../core/errors';
import type { DeliveryReport, Headers, Value } from './types';
import type { Key } from '../core/key';

interface Sender extends EventEmitter {
  send(topic: string, value: Value, key?: Key | null, headers?: Headers, timestamp?: number | null): Promise<DeliveryReport>;
}

/**
 * A Writable stream of messages to `topic`: `{ value, key?, headers?, timestamp? }` objects
 * (or a Buffer / string value). A write whose message was held (`holding()`: librdkafka's queue
 * is full) calls back at the producer's 'drain'; the stream fails with the first delivery
 * error; 'finish' comes after every written message is delivered.
 */
export function writableOf(producer: Sender, topic: string, holding: () => boolean): Writable {
  if (typeof topic !== 'string' || topic.length === 0) throw new InvalidArgTypeError('topic', 'a non-empty string', topic);
  let outstanding = 0;
  let finishing: (() => void) | undefined;
  let failed: Error | undefined;
  const settle = (): void => {
    outstanding--;
    if (outstanding === 0 && finishing) finishing();
  };
  const stream: Writable = new Writable({
    objectMode: true,
    write: (chunk: any, _encoding, callback) => {
      if (failed) return callback(failed);
      const isValue = typeof chunk === 'string' || chunk instanceof Uint8Array;
      const message = isValue ? { value: chunk } : chunk;
      if (typeof message !== 'object' || message === null) return callback(new InvalidArgTypeError('chunk', 'a message object, Buffer, Uint8Array or string', chunk));
      outstanding++;
      let held = false;
      let sent: Promise<DeliveryReport>;
      try {
        held = holding();
        sent = producer.send(topic, message.value ?? null, message.key, message.headers, message.timestamp);
      } catch (err) {
        outstanding--;
        return callback(err as Error);
      }
      sent.then(settle, (err) => {
        failed = failed ?? err;
        settle();
        stream.destroy(err);
      });
      if (holding() || held) producer.once('drain', () => callback());
      else callback();
    },
    final: (callback) => {
      if (outstanding === 0) return callback(failed);
      finishing = () => callback(failed);
    },
  });
  return stream;
}
