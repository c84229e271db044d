// Where a KafkaJS-API consumer's dead letters go (its `deadLetter` option): through the producer given, the client's own
// (KafkaJS 2.x's or Confluent's KafkaJS producer: send({ topic, messages })) or a DynamicProducer. The application connects it.

import { InvalidOptionError } from '../core/errors';
import type { ResolvedDeadLetter } from '../core/failure-options';
import { type DeadLetterProducer, deadLetterHeaders, isDynamicProducer, producerSink } from '../delivery/dead-letters';
import type { DeadLetterSink } from '../delivery/port';
import type { Consumed } from './consumer-types';

/** What of a KafkaJS producer the sink uses. */
interface KafkaJsProducerLike {
  send(record: { topic: string; messages: Array<{ key: Buffer | null; value: Buffer | null; headers: Record<string, string | Buffer | Array<string | Buffer>> }> }): Promise<unknown>;
}

function isKafkaJsProducer(producer: unknown): producer is KafkaJsProducerLike {
  const p = producer as { send?: unknown; connect?: unknown; disconnect?: unknown } | null;
  return typeof p === 'object' && p !== null && typeof p.send === 'function' && typeof p.connect === 'function' && typeof p.disconnect === 'function';
}

/** The sink of `deadLetter` through its producer (required: a KafkaJS consumer cannot make one), else an InvalidOptionError. */
export function kafkaJsDeadLetters(deadLetter: ResolvedDeadLetter): DeadLetterSink<Consumed> {
  const producer = deadLetter.producer;
  const parts = (m: Consumed) => ({ key: m.message.key, value: m.message.value, headers: m.message.headers });
  if (isDynamicProducer(producer)) return producerSink(deadLetter.topic, () => Promise.resolve(producer as DeadLetterProducer), parts);
  if (!isKafkaJsProducer(producer)) {
    throw new InvalidOptionError('options.deadLetter.producer', 'a KafkaJS producer (kafka.producer()) or a DynamicProducer', producer,
      producer === undefined ? 'options.deadLetter.producer is required with a KafkaJS-API consumer: give it kafka.producer() (connected by the application) or a DynamicProducer' : undefined);
  }
  const topic = deadLetter.topic;
  return {
    topic,
    async write(messages, added) {
      await producer.send({
        topic,
        messages: messages.map((m, i) => {
          // KafkaJS's headers: an object, a name's several values in an array.
          const headers: Record<string, string | Buffer | Array<string | Buffer>> = {};
          for (const h of deadLetterHeaders(m.message.headers, added[i])) {
            for (const [name, value] of Object.entries(h)) {
              const had = headers[name];
              headers[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
            }
          }
          return { key: m.message.key, value: m.message.value, headers };
        }),
      });
    },
  };
}
