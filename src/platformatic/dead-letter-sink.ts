// Where an @platformatic/kafka consumer's dead letters go (its `deadLetter` option): through the producer given, the client's
// own Producer (send({ messages })), each message's key and value as the consumer gave them (its producer's serializers write
// them back), or a DynamicProducer (Buffers only). The application connects it and closes it.

import { InvalidOptionError } from '../core/errors';
import type { ResolvedDeadLetter } from '../core/failure-options';
import { type DeadLetterProducer, DEAD_LETTER_HEADERS, isDynamicProducer, producerSink } from '../delivery/dead-letters';
import type { DeadLetterSink } from '../delivery/port';
import { ORDER_HEADER } from '../partitioner/headers';
import type { PlatformaticConsumed } from './consumer-types';

/** What of @platformatic/kafka's Producer the sink uses. */
interface PlatformaticProducerLike {
  send(options: { messages: Array<{ topic: string; key?: unknown; value?: unknown; headers: Map<unknown, unknown> }> }): Promise<unknown>;
}

function isPlatformaticProducer(producer: unknown): producer is PlatformaticProducerLike {
  const p = producer as { send?: unknown; metadata?: unknown; close?: unknown } | null;
  return typeof p === 'object' && p !== null && typeof p.send === 'function' && typeof p.metadata === 'function' && typeof p.close === 'function';
}

/** The sink of `deadLetter` through its producer (required: the consumer cannot make one), else an InvalidOptionError. */
export function platformaticDeadLetters(deadLetter: ResolvedDeadLetter): DeadLetterSink<PlatformaticConsumed> {
  const producer = deadLetter.producer;
  const topic = deadLetter.topic;
  if (isDynamicProducer(producer)) {
    return producerSink(topic, () => Promise.resolve(producer as DeadLetterProducer), (m) => ({ key: m.key, value: m.value, headers: m.message.headers }));
  }
  if (!isPlatformaticProducer(producer)) {
    throw new InvalidOptionError('options.deadLetter.producer', "an @platformatic/kafka Producer or a DynamicProducer", producer,
      producer === undefined ? 'options.deadLetter.producer is required with an @platformatic/kafka consumer: give it a Producer of the same cluster, or a DynamicProducer' : undefined);
  }
  return {
    topic,
    async write(messages, added) {
      await producer.send({
        messages: messages.map((m, i) => {
          // Its headers as they came, its order header renamed (a consumer of the dead letters must not wait for its chain).
          const headers = new Map<unknown, unknown>();
          for (const [name, value] of m.message.headerEntries ?? m.message.headers ?? []) {
            const text = Buffer.isBuffer(name) ? name.toString('latin1') : name;
            headers.set(text === ORDER_HEADER ? DEAD_LETTER_HEADERS.order : name, value);
          }
          for (const [name, value] of added[i]) headers.set(name, value);
          return { topic, key: m.message.key, value: m.message.value, headers };
        }),
      });
    },
  };
}
