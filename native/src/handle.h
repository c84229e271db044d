// One librdkafka client handle as the addon keeps it, and what its parts share.
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
  /* Called on the JS thread for each statistics, error and log event: (kind, a, b, c). */
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

/* Throws a JS Error with `message` (and a numeric `code` when code != 0); returns NULL for the caller to return. */
napi_value kdp_throw(napi_env env, int code, const char *message);
/* The handle of argument 0, or NULL with a JS exception pending. */
kdp_handle *kdp_handle_of(napi_env env, napi_value value);
/* A typed array argument of type `want`: its data and length (0 with a JS exception pending on another type). */
int kdp_typed(napi_env env, napi_value value, napi_typedarray_type want, void **data, size_t *length);
/* The rd_kafka_topic_t of a topic name (made at first use), NULL if librdkafka refuses it. */
rd_kafka_topic_t *kdp_topic(kdp_handle *h, const char *name);

napi_value kdp_create(napi_env env, napi_callback_info info);
napi_value kdp_metadata(napi_env env, napi_callback_info info);
napi_value kdp_flush(napi_env env, napi_callback_info info);
napi_value kdp_close(napi_env env, napi_callback_info info);
napi_value kdp_poll(napi_env env, napi_callback_info info);
napi_value kdp_produce(napi_env env, napi_callback_info info);
napi_value kdp_outq(napi_env env, napi_callback_info info);
napi_value kdp_hurry(napi_env env, napi_callback_info info);
/* consume.c */
void kdp_consumer_conf(rd_kafka_conf_t *conf, kdp_handle *h);
napi_value kdp_consume(napi_env env, napi_callback_info info);
napi_value kdp_subscribe(napi_env env, napi_callback_info info);
napi_value kdp_assignment(napi_env env, napi_callback_info info);
napi_value kdp_pause(napi_env env, napi_callback_info info);
napi_value kdp_commit(napi_env env, napi_callback_info info);
napi_value kdp_committed(napi_env env, napi_callback_info info);
napi_value kdp_protocol(napi_env env, napi_callback_info info);
napi_value kdp_logs(napi_env env, napi_callback_info info);
/* Calls onEvent for a statistics, error or log event; 0 when JS threw. */
int kdp_dispatch(napi_env env, kdp_handle *h, rd_kafka_event_t *ev);
/* Wakes the JS thread (one wake-up until it polls): librdkafka's queue callback. */
void kdp_on_queue(rd_kafka_t *rk, void *opaque);
/* A JS array of topic names and an Int32Array of partitions (and a Float64Array of offsets, or
 * undefined) as a list; NULL with a JS exception pending. */
rd_kafka_topic_partition_list_t *kdp_partitions(napi_env env, napi_value topics, napi_value partitions, napi_value offsets);
/* A list as a JS array of { topic, partition, offset }. */
napi_value kdp_partitions_value(napi_env env, const rd_kafka_topic_partition_list_t *list);
/* Stops the hurry thread (before the handle is destroyed). */
void kdp_hurry_stop(kdp_handle *h);

#endif
