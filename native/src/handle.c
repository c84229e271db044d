// A librdkafka client handle's life: made from node-rdkafka-style configuration, its queue's
// wake-ups sent from librdkafka's threads to the JS thread, whether those keep the event loop
// alive, its topic handles, and its end (closed by JS through jobs.c, or at the environment's
// teardown, or when JS drops it).
#include <stdlib.h>
#include <string.h>
#include "contract.h"
#include "events.h"
#include "hurry.h"
#include "napi.h"

rd_kafka_topic_t *kdp_topic(kdp_handle *h, const char *name) {
  for (int i = h->topics - 1; i >= 0; i--) {
    if (strcmp(h->topic_names[i], name) == 0) return h->topic_handles[i];
  }
  rd_kafka_topic_t *rkt = rd_kafka_topic_new(h->rk, name, NULL);
  if (rkt == NULL) return NULL;
  if (h->topics < KDP_MAX_TOPICS) {
    h->topic_names[h->topics] = strdup(name);
    h->topic_handles[h->topics] = rkt;
    h->topics++;
    return rkt;
  }
  // Past the table's size the oldest handle is dropped (librdkafka keeps its own topic state).
  rd_kafka_topic_destroy(h->topic_handles[0]);
  free(h->topic_names[0]);
  memmove(h->topic_names, h->topic_names + 1, sizeof(char *) * (KDP_MAX_TOPICS - 1));
  memmove(h->topic_handles, h->topic_handles + 1, sizeof(rd_kafka_topic_t *) * (KDP_MAX_TOPICS - 1));
  h->topic_names[KDP_MAX_TOPICS - 1] = strdup(name);
  h->topic_handles[KDP_MAX_TOPICS - 1] = rkt;
  return rkt;
}

/* Applies a flat [name, value, name, value, ...] array to a configuration (topic: tconf != NULL). */
static int configure(napi_env env, napi_value pairs, rd_kafka_conf_t *conf, rd_kafka_topic_conf_t *tconf) {
  uint32_t n;
  if (napi_get_array_length(env, pairs, &n) != napi_ok) {
    kdp_throw(env, 0, "configuration must be an array of names and values");
    return 0;
  }
  for (uint32_t i = 0; i + 1 < n; i += 2) {
    napi_value k, v;
    napi_get_element(env, pairs, i, &k);
    napi_get_element(env, pairs, i + 1, &v);
    char *name = kdp_string(env, k, "a configuration name");
    if (name == NULL) return 0;
    char *value = kdp_string(env, v, "a configuration value");
    if (value == NULL) {
      free(name);
      return 0;
    }
    char errstr[512];
    rd_kafka_conf_res_t res = tconf != NULL ? rd_kafka_topic_conf_set(tconf, name, value, errstr, sizeof errstr)
                                            : rd_kafka_conf_set(conf, name, value, errstr, sizeof errstr);
    free(name);
    free(value);
    if (res != RD_KAFKA_CONF_OK) {
      kdp_throw(env, RD_KAFKA_RESP_ERR__INVALID_ARG, errstr);
      return 0;
    }
  }
  return 1;
}

/* @locality librdkafka's threads: the queue was empty and is not. One wake-up until the JS thread reads it. */
static void on_queue(rd_kafka_t *rk, void *opaque) {
  kdp_handle *h = opaque;
  if (atomic_exchange(&h->scheduled, 1) == 0) napi_call_threadsafe_function(h->wake, NULL, napi_tsfn_nonblocking);
}

static void call_wake(napi_env env, napi_value fn, void *context, void *data) {
  if (env == NULL || fn == NULL) return;
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  napi_call_function(env, undefined, fn, 0, NULL, NULL);
}

void kdp_quiet(kdp_handle *h) {
  h->closed = 1;
  rd_kafka_queue_cb_event_enable(h->mainq, NULL, NULL);
  if (h->logq != NULL) rd_kafka_queue_cb_event_enable(h->logq, NULL, NULL);
}

void kdp_release(kdp_handle *h) {
  kdp_hurry_stop(h);
  for (int i = 0; i < h->topics; i++) {
    rd_kafka_topic_destroy(h->topic_handles[i]);
    free(h->topic_names[i]);
  }
  h->topics = 0;
  if (h->partial != NULL) rd_kafka_event_destroy(h->partial);
  h->partial = NULL;
  // A consumer leaves its group first (its revoke is served here, off the JS thread: events.c).
  if (h->consumer && h->rk != NULL) rd_kafka_consumer_close(h->rk);
  if (h->logq != NULL) {
    rd_kafka_queue_cb_event_enable(h->logq, NULL, NULL);
    rd_kafka_set_log_queue(h->rk, NULL);
    rd_kafka_queue_destroy(h->logq);
    h->logq = NULL;
  }
  if (h->mainq != NULL) rd_kafka_queue_destroy(h->mainq);
  h->mainq = NULL;
  if (h->rk != NULL) rd_kafka_destroy(h->rk);
  h->rk = NULL;
}

/* A handle never closed: librdkafka's threads are stopped, and the wake-up released. */
static void stop(kdp_handle *h) {
  if (h->closed) return;
  kdp_quiet(h);
  kdp_release(h);
  napi_release_threadsafe_function(h->wake, napi_tsfn_abort);
}

/*
 * The environment is being torn down (the process exits) with the handle open. This runs
 * before Node finalizes the thread-safe function (the hook was added after it, and hooks run
 * in reverse), which the finalizer below must then not touch.
 */
static void teardown(void *data) {
  kdp_handle *h = data;
  stop(h);
  h->torn = 1;
}

static void finalize(napi_env env, void *data, void *hint) {
  kdp_handle *h = data;
  if (!h->torn) {
    napi_remove_env_cleanup_hook(env, teardown, h);
    stop(h);
    if (h->on_event != NULL) napi_delete_reference(env, h->on_event);
  }
  free(h);
}

/* create(kind, globalPairs, topicPairs, wake, onEvent): a 'producer' or 'consumer' handle. */
napi_value kdp_create(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  if (kdp_args(env, info, 5, argv, "create(kind, global, topic, wake, onEvent)") == NULL) return NULL;
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  rd_kafka_topic_conf_t *tconf = rd_kafka_topic_conf_new();
  if (!configure(env, argv[1], conf, NULL) || !configure(env, argv[2], NULL, tconf)) {
    rd_kafka_conf_destroy(conf);
    rd_kafka_topic_conf_destroy(tconf);
    return NULL;
  }
  char kind[16] = "";
  size_t kind_len;
  napi_get_value_string_utf8(env, argv[0], kind, sizeof kind, &kind_len);
  int consumer = strcmp(kind, "consumer") == 0;
  char errstr[512];
  rd_kafka_conf_set(conf, "log.queue", "true", errstr, sizeof errstr);
  rd_kafka_conf_set_default_topic_conf(conf, tconf);
  kdp_handle *h = calloc(1, sizeof *h);
  h->consumer = consumer;
  h->js_thread = pthread_self();
  if (consumer) {
    // A consumer's events are librdkafka's callbacks, served by the consume call on the JS thread.
    kdp_consumer_callbacks(conf, h);
  } else {
    rd_kafka_conf_set_events(conf, RD_KAFKA_EVENT_DR | RD_KAFKA_EVENT_STATS | RD_KAFKA_EVENT_ERROR | RD_KAFKA_EVENT_LOG);
  }
  rd_kafka_t *rk = rd_kafka_new(consumer ? RD_KAFKA_CONSUMER : RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
  if (rk == NULL) {
    rd_kafka_conf_destroy(conf);
    free(h);
    return kdp_throw(env, RD_KAFKA_RESP_ERR__INVALID_ARG, errstr);
  }
  h->rk = rk;
  if (consumer) {
    // Logs are read whether or not a consume call serves the consumer queue: connect() watches
    // them for a refused login before anything is consumed.
    h->logq = rd_kafka_queue_new(rk);
    rd_kafka_set_log_queue(rk, h->logq);
    // Everything for the application (logs, errors, rebalances, messages) on one queue.
    rd_kafka_poll_set_consumer(rk);
    h->mainq = rd_kafka_queue_get_consumer(rk);
  } else {
    rd_kafka_set_log_queue(rk, NULL);
    h->mainq = rd_kafka_queue_get_main(rk);
  }
  napi_value name;
  napi_create_string_utf8(env, "kdp-native-wake", NAPI_AUTO_LENGTH, &name);
  if (napi_create_threadsafe_function(env, argv[3], NULL, name, 0, 1, NULL, NULL, NULL, call_wake, &h->wake) != napi_ok) {
    kdp_release(h);
    free(h);
    return kdp_throw(env, 0, "wake must be a function");
  }
  napi_create_reference(env, argv[4], 1, &h->on_event);
  napi_add_env_cleanup_hook(env, teardown, h);
  rd_kafka_queue_cb_event_enable(h->mainq, on_queue, h);
  if (h->logq != NULL) rd_kafka_queue_cb_event_enable(h->logq, on_queue, h);
  // librdkafka calls on_queue when its queue goes from empty to one event: what came before
  // (the first logs) needs a wake-up of its own.
  if (rd_kafka_queue_length(h->mainq) > 0 || (h->logq != NULL && rd_kafka_queue_length(h->logq) > 0)) on_queue(rk, h);
  napi_value external;
  if (napi_create_external(env, h, finalize, NULL, &external) != napi_ok) return NULL;
  return external;
}

/* keepAlive(handle, keep): whether pending wake-ups keep the event loop alive. */
napi_value kdp_keep_alive(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  kdp_handle *h = kdp_call(env, info, 2, 2, argv, NULL, "keepAlive(handle, keep)");
  if (h == NULL) return NULL;
  bool keep = false;
  if (napi_get_value_bool(env, argv[1], &keep) != napi_ok) return kdp_throw(env, 0, "keepAlive: keep must be a boolean");
  if (keep) napi_ref_threadsafe_function(env, h->wake);
  else napi_unref_threadsafe_function(env, h->wake);
  return NULL;
}

/* outq(handle): librdkafka's count of messages and requests not done yet. */
napi_value kdp_outq(napi_env env, napi_callback_info info) {
  napi_value argv[1], out;
  kdp_handle *h = kdp_call(env, info, 1, 1, argv, NULL, "outq(handle)");
  if (h == NULL) return NULL;
  napi_create_int32(env, rd_kafka_outq_len(h->rk), &out);
  return out;
}
