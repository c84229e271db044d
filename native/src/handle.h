// One librdkafka client handle as the addon keeps it (handle.c makes and destroys it), and the
// handle's own functions the other files use. Calls between the room's files go one way:
// napi.c <- events.c <- hurry.c <- handle.c <- jobs.c, produce.c, consume.c <- addon.c.
#ifndef KDP_HANDLE_H
#define KDP_HANDLE_H

#include <node_api.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdint.h>
#include "rdkafka.h"

#define KDP_MAX_TOPICS 256

typedef struct {
  rd_kafka_t *rk;
  rd_kafka_queue_t *mainq;
  /* Wakes the JS thread when the main queue goes from empty to not empty (reports, stats, errors). */
  napi_threadsafe_function wake;
  /* Set by a wake-up sent and not yet answered by a poll: one wake-up per burst of events. */
  atomic_int scheduled;
  /* onEvent(kind, ...args) on the JS thread (events.c). */
  napi_ref on_event;
  /* A delivery-report event partly read by the last poll (its messages go on at the next). */
  rd_kafka_event_t *partial;
  /* rd_kafka_topic_t per topic name, kept until the handle is closed. */
  int topics;
  char *topic_names[KDP_MAX_TOPICS];
  rd_kafka_topic_t *topic_handles[KDP_MAX_TOPICS];
  int closed;
  /* A consumer handle (consume.c): its queue is the consumer queue, and callbacks call JS. */
  int consumer;
  /* A consumer's logs, on a queue of their own: read at every wake-up (kdp_logs), consuming or not. */
  rd_kafka_queue_t *logq;
  /* The JS thread, and its env while a call from it may serve librdkafka's callbacks. */
  pthread_t js_thread;
  napi_env env;
  /*
   * The hurry thread: after each hand-over of sendBatch() messages (`handed` counts them,
   * `pulsed` is the last one it served) it makes librdkafka flush for a moment, so that they go
   * without waiting linger.ms (hurry.c).
   */
  pthread_t hurry_thread;
  pthread_mutex_t hurry_lock;
  pthread_cond_t hurry_cond;
  unsigned handed;
  unsigned pulsed;
  int hurry_started;
  int hurry_stop;
  /* The environment's teardown stopped it (teardown() in handle.c). */
  int torn;
} kdp_handle;

/* The rd_kafka_topic_t of a topic name (made at first use), NULL if librdkafka refuses it. */
rd_kafka_topic_t *kdp_topic(kdp_handle *h, const char *name);
/* Destroys what the handle holds of librdkafka (a consumer leaves its group first). @locality any thread. */
void kdp_release(kdp_handle *h);
/* Stops wake-ups: no more calls to JS from librdkafka's threads. */
void kdp_quiet(kdp_handle *h);

#endif
