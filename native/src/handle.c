// A librdkafka client handle: made from node-rdkafka-style configuration, its main queue read
// on the JS thread (delivery reports, statistics, errors, logs as librdkafka events), wake-ups
// from librdkafka's threads when that queue fills, and the blocking calls (metadata, flush,
// destroy) run on libuv's thread pool.
#include <stdlib.h>
#include <string.h>
#include "handle.h"

#define CHECK(call) do { if ((call) != napi_ok) return NULL; } while (0)

napi_value kdp_throw(napi_env env, int code, const char *message) {
  napi_value msg, err;
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &msg);
  napi_create_error(env, NULL, msg, &err);
  if (code != 0) {
    napi_value c;
    napi_create_int32(env, code, &c);
    napi_set_named_property(env, err, "code", c);
  }
  napi_throw(env, err);
  return NULL;
}

kdp_handle *kdp_handle_of(napi_env env, napi_value value) {
  void *data = NULL;
  napi_valuetype type;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_external ||
      napi_get_value_external(env, value, &data) != napi_ok || data == NULL) {
    kdp_throw(env, 0, "not a native client handle");
    return NULL;
  }
  kdp_handle *h = data;
  if (h->closed) {
    kdp_throw(env, RD_KAFKA_RESP_ERR__STATE, "the native client is closed");
    return NULL;
  }
  return h;
}

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

/* A string argument into a malloc'd C string (NULL with an exception pending). */
static char *string_of(napi_env env, napi_value value, const char *what) {
  size_t len;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &len) != napi_ok) {
    char message[128];
    snprintf(message, sizeof message, "%s must be a string", what);
    kdp_throw(env, 0, message);
    return NULL;
  }
  char *out = malloc(len + 1);
  napi_get_value_string_utf8(env, value, out, len + 1, &len);
  return out;
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
    char *name = string_of(env, k, "a configuration name");
    if (name == NULL) return 0;
    char *value = string_of(env, v, "a configuration value");
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

/* librdkafka's thread: the main queue was empty and is not. One wake-up until the JS thread polls. */
void kdp_on_queue(rd_kafka_t *rk, void *opaque) {
  kdp_handle *h = opaque;
  if (atomic_exchange(&h->scheduled, 1) == 0) napi_call_threadsafe_function(h->wake, NULL, napi_tsfn_nonblocking);
}

static void call_wake(napi_env env, napi_value fn, void *context, void *data) {
  if (env == NULL || fn == NULL) return;
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  napi_call_function(env, undefined, fn, 0, NULL, NULL);
}

static void release(kdp_handle *h) {
  kdp_hurry_stop(h);
  for (int i = 0; i < h->topics; i++) {
    rd_kafka_topic_destroy(h->topic_handles[i]);
    free(h->topic_names[i]);
  }
  h->topics = 0;
  if (h->partial != NULL) rd_kafka_event_destroy(h->partial);
  h->partial = NULL;
  // A consumer leaves its group first (its revoke is served here, off the JS thread: consume.c).
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
  h->closed = 1;
  rd_kafka_queue_cb_event_enable(h->mainq, NULL, NULL);
  if (h->logq != NULL) rd_kafka_queue_cb_event_enable(h->logq, NULL, NULL);
  release(h);
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
  size_t argc = 5;
  napi_value argv[5];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 5) return kdp_throw(env, 0, "create(kind, global, topic, wake, onEvent)");
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
    kdp_consumer_conf(conf, h);
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
  } else {
    rd_kafka_set_log_queue(rk, NULL);
  }
  if (consumer) {
    // Everything for the application (logs, errors, rebalances, messages) on one queue.
    rd_kafka_poll_set_consumer(rk);
    h->mainq = rd_kafka_queue_get_consumer(rk);
  } else {
    h->mainq = rd_kafka_queue_get_main(rk);
  }
  napi_value name;
  napi_create_string_utf8(env, "kdp-native-wake", NAPI_AUTO_LENGTH, &name);
  if (napi_create_threadsafe_function(env, argv[3], NULL, name, 0, 1, NULL, NULL, NULL, call_wake, &h->wake) != napi_ok) {
    release(h);
    free(h);
    return kdp_throw(env, 0, "wake must be a function");
  }
  napi_create_reference(env, argv[4], 1, &h->on_event);
  napi_add_env_cleanup_hook(env, teardown, h);
  rd_kafka_queue_cb_event_enable(h->mainq, kdp_on_queue, h);
  if (h->logq != NULL) rd_kafka_queue_cb_event_enable(h->logq, kdp_on_queue, h);
  // librdkafka calls on_queue when its queue goes from empty to one event: what came before
  // (the first logs) needs a wake-up of its own.
  if (rd_kafka_queue_length(h->mainq) > 0 || (h->logq != NULL && rd_kafka_queue_length(h->logq) > 0)) kdp_on_queue(rk, h);
  napi_value external;
  CHECK(napi_create_external(env, h, finalize, NULL, &external));
  return external;
}

/* ref(handle, keep): whether pending wake-ups keep the event loop alive. */
static void set_ref(napi_env env, kdp_handle *h, int keep) {
  if (keep) napi_ref_threadsafe_function(env, h->wake);
  else napi_unref_threadsafe_function(env, h->wake);
}

napi_value kdp_outq(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], out;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  kdp_handle *h = kdp_handle_of(env, argv[0]);
  if (h == NULL) return NULL;
  // A second argument sets whether the handle keeps the event loop alive.
  if (argc > 1) {
    bool keep;
    if (napi_get_value_bool(env, argv[1], &keep) == napi_ok) set_ref(env, h, keep);
  }
  napi_create_int32(env, rd_kafka_outq_len(h->rk), &out);
  return out;
}

/* Calls onEvent(kind, a, b, c) for a statistics (1), error (2) or log (3) event. */
int kdp_dispatch(napi_env env, kdp_handle *h, rd_kafka_event_t *ev) {
  napi_value fn, undefined, args[4];
  napi_get_reference_value(env, h->on_event, &fn);
  napi_get_undefined(env, &undefined);
  for (int i = 0; i < 4; i++) args[i] = undefined;
  switch (rd_kafka_event_type(ev)) {
    case RD_KAFKA_EVENT_STATS:
      napi_create_int32(env, 1, &args[0]);
      napi_create_string_utf8(env, rd_kafka_event_stats(ev), NAPI_AUTO_LENGTH, &args[1]);
      break;
    case RD_KAFKA_EVENT_ERROR:
      napi_create_int32(env, 2, &args[0]);
      napi_create_int32(env, rd_kafka_event_error(ev), &args[1]);
      napi_create_string_utf8(env, rd_kafka_event_error_string(ev), NAPI_AUTO_LENGTH, &args[2]);
      napi_get_boolean(env, rd_kafka_event_error_is_fatal(ev), &args[3]);
      break;
    case RD_KAFKA_EVENT_LOG: {
      const char *fac = "", *str = "";
      int level = 0;
      rd_kafka_event_log(ev, &fac, &str, &level);
      napi_create_int32(env, 3, &args[0]);
      napi_create_int32(env, level, &args[1]);
      napi_create_string_utf8(env, fac, NAPI_AUTO_LENGTH, &args[2]);
      napi_create_string_utf8(env, str, NAPI_AUTO_LENGTH, &args[3]);
      break;
    }
    default:
      return 1;
  }
  return napi_call_function(env, undefined, fn, 4, args, NULL) == napi_ok;
}

int kdp_typed(napi_env env, napi_value value, napi_typedarray_type want, void **data, size_t *length) {
  napi_typedarray_type type;
  napi_value buffer;
  size_t offset;
  if (napi_get_typedarray_info(env, value, &type, length, data, &buffer, &offset) != napi_ok || type != want) {
    kdp_throw(env, 0, "a typed array of the wrong type");
    return 0;
  }
  return 1;
}

/*
 * A failed delivery of a message produced without a slot: onEvent(4, code, topic, partition,
 * key (a Buffer, or null), size, timestamp). Returns 0 when the call threw.
 */
static int failed_unslotted(napi_env env, kdp_handle *h, const rd_kafka_message_t *m) {
  napi_value fn, undefined, args[7];
  napi_get_reference_value(env, h->on_event, &fn);
  napi_get_undefined(env, &undefined);
  napi_create_int32(env, 4, &args[0]);
  napi_create_int32(env, m->err, &args[1]);
  napi_create_string_utf8(env, m->rkt != NULL ? rd_kafka_topic_name(m->rkt) : "", NAPI_AUTO_LENGTH, &args[2]);
  napi_create_int32(env, m->partition, &args[3]);
  if (m->key != NULL) napi_create_buffer_copy(env, m->key_len, m->key, NULL, &args[4]);
  else napi_get_null(env, &args[4]);
  napi_create_int32(env, (int32_t)m->len, &args[5]);
  napi_create_double(env, (double)rd_kafka_message_timestamp(m, NULL), &args[6]);
  return napi_call_function(env, undefined, fn, 7, args, NULL) == napi_ok;
}

/*
 * poll(handle, ids Int32Array, partitions Int32Array, offsets Float64Array, errors Int32Array,
 * timestamps Float64Array): reads the main queue without waiting. Delivery reports fill the
 * arrays (as many as `ids` holds; the rest wait for the next call); statistics, errors and
 * logs go to onEvent as they come. Returns the number of reports.
 */
napi_value kdp_poll(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6], out;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  kdp_handle *h = kdp_handle_of(env, argv[0]);
  if (h == NULL) return NULL;
  int32_t *ids, *partitions, *errors;
  double *offsets, *timestamps;
  size_t cap, len;
  if (!kdp_typed(env, argv[1], napi_int32_array, (void **)&ids, &cap) ||
      !kdp_typed(env, argv[2], napi_int32_array, (void **)&partitions, &len) || len < cap ||
      !kdp_typed(env, argv[3], napi_float64_array, (void **)&offsets, &len) || len < cap ||
      !kdp_typed(env, argv[4], napi_int32_array, (void **)&errors, &len) || len < cap ||
      !kdp_typed(env, argv[5], napi_float64_array, (void **)&timestamps, &len) || len < cap) {
    return NULL;
  }
  // Events that come from now on wake the JS thread again.
  atomic_store(&h->scheduled, 0);
  size_t n = 0;
  while (n < cap) {
    rd_kafka_event_t *ev = h->partial;
    h->partial = NULL;
    if (ev == NULL) ev = rd_kafka_queue_poll(h->mainq, 0);
    if (ev == NULL) break;
    if (rd_kafka_event_type(ev) == RD_KAFKA_EVENT_DR) {
      const rd_kafka_message_t *m;
      while (n < cap && (m = rd_kafka_event_message_next(ev)) != NULL) {
        if ((int32_t)(intptr_t)m->_private < 0) {
          // Produced without a slot (librdkafka reports only failures): a failure is told from
          // what librdkafka kept of the message; there is no success to tell.
          if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR && !failed_unslotted(env, h, m)) {
            rd_kafka_event_destroy(ev);
            return NULL;
          }
          continue;
        }
        ids[n] = (int32_t)(intptr_t)m->_private;
        partitions[n] = m->partition;
        offsets[n] = (double)m->offset;
        errors[n] = m->err;
        timestamps[n] = (double)rd_kafka_message_timestamp(m, NULL);
        n++;
      }
      if (n == cap) {
        h->partial = ev;
        break;
      }
      rd_kafka_event_destroy(ev);
      continue;
    }
    int ok = kdp_dispatch(env, h, ev);
    rd_kafka_event_destroy(ev);
    if (!ok) return NULL;
  }
  napi_create_uint32(env, (uint32_t)n, &out);
  return out;
}

/* The blocking calls, on libuv's thread pool. */
typedef struct {
  napi_async_work work;
  napi_ref cb;
  kdp_handle *h;
  int kind; /* 0 metadata, 1 flush, 2 close */
  int timeout;
  rd_kafka_topic_t *rkt;
  const struct rd_kafka_metadata *md;
  rd_kafka_resp_err_t err;
} job_t;

static void job_execute(napi_env env, void *data) {
  job_t *job = data;
  switch (job->kind) {
    case 0:
      job->err = rd_kafka_metadata(job->h->rk, job->rkt == NULL, job->rkt, &job->md, job->timeout);
      break;
    case 1:
      job->err = rd_kafka_flush(job->h->rk, job->timeout);
      break;
    default:
      release(job->h);
  }
}

static napi_value metadata_value(napi_env env, const struct rd_kafka_metadata *md) {
  napi_value out, topics, brokers, v;
  napi_create_object(env, &out);
  napi_create_int32(env, md->orig_broker_id, &v);
  napi_set_named_property(env, out, "orig_broker_id", v);
  napi_create_string_utf8(env, md->orig_broker_name ? md->orig_broker_name : "", NAPI_AUTO_LENGTH, &v);
  napi_set_named_property(env, out, "orig_broker_name", v);
  napi_create_array_with_length(env, md->broker_cnt, &brokers);
  for (int i = 0; i < md->broker_cnt; i++) {
    napi_value b;
    napi_create_object(env, &b);
    napi_create_int32(env, md->brokers[i].id, &v);
    napi_set_named_property(env, b, "id", v);
    napi_create_string_utf8(env, md->brokers[i].host, NAPI_AUTO_LENGTH, &v);
    napi_set_named_property(env, b, "host", v);
    napi_create_int32(env, md->brokers[i].port, &v);
    napi_set_named_property(env, b, "port", v);
    napi_set_element(env, brokers, i, b);
  }
  napi_set_named_property(env, out, "brokers", brokers);
  napi_create_array_with_length(env, md->topic_cnt, &topics);
  for (int i = 0; i < md->topic_cnt; i++) {
    const rd_kafka_metadata_topic_t *t = &md->topics[i];
    napi_value topic, parts;
    napi_create_object(env, &topic);
    napi_create_string_utf8(env, t->topic, NAPI_AUTO_LENGTH, &v);
    napi_set_named_property(env, topic, "name", v);
    if (t->err) {
      napi_create_int32(env, t->err, &v);
      napi_set_named_property(env, topic, "error", v);
    }
    napi_create_array_with_length(env, t->partition_cnt, &parts);
    for (int j = 0; j < t->partition_cnt; j++) {
      napi_value p;
      napi_create_object(env, &p);
      napi_create_int32(env, t->partitions[j].id, &v);
      napi_set_named_property(env, p, "id", v);
      napi_create_int32(env, t->partitions[j].leader, &v);
      napi_set_named_property(env, p, "leader", v);
      napi_set_element(env, parts, j, p);
    }
    napi_set_named_property(env, topic, "partitions", parts);
    napi_set_element(env, topics, i, topic);
  }
  napi_set_named_property(env, out, "topics", topics);
  return out;
}

static void job_complete(napi_env env, napi_status status, void *data) {
  job_t *job = data;
  napi_value cb, undefined, args[2];
  napi_get_reference_value(env, job->cb, &cb);
  napi_get_undefined(env, &undefined);
  napi_get_null(env, &args[0]);
  args[1] = undefined;
  if (job->err) {
    napi_value msg;
    napi_create_string_utf8(env, rd_kafka_err2str(job->err), NAPI_AUTO_LENGTH, &msg);
    napi_create_error(env, NULL, msg, &args[0]);
    napi_value code;
    napi_create_int32(env, job->err, &code);
    napi_set_named_property(env, args[0], "code", code);
  } else if (job->kind == 0) {
    args[1] = metadata_value(env, job->md);
  }
  if (job->md != NULL) rd_kafka_metadata_destroy(job->md);
  if (job->kind == 2) {
    napi_release_threadsafe_function(job->h->wake, napi_tsfn_abort);
    napi_delete_reference(env, job->h->on_event);
    job->h->on_event = NULL;
  }
  napi_delete_reference(env, job->cb);
  napi_delete_async_work(env, job->work);
  free(job);
  napi_call_function(env, undefined, cb, 2, args, NULL);
}

/* job(kind, handle, timeoutMs, cb[, topic]) */
static napi_value start_job(napi_env env, napi_callback_info info, int kind) {
  size_t argc = 4;
  napi_value argv[4];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 3) return kdp_throw(env, 0, "(handle, timeoutMs, cb[, topic])");
  kdp_handle *h = kdp_handle_of(env, argv[0]);
  if (h == NULL) return NULL;
  job_t *job = calloc(1, sizeof *job);
  job->h = h;
  job->kind = kind;
  napi_get_value_int32(env, argv[1], &job->timeout);
  if (kind == 0 && argc > 3) {
    napi_valuetype type;
    napi_typeof(env, argv[3], &type);
    if (type == napi_string) {
      char *name = string_of(env, argv[3], "topic");
      if (name == NULL) {
        free(job);
        return NULL;
      }
      job->rkt = kdp_topic(h, name);
      free(name);
    }
  }
  if (kind == 2) {
    // No more wake-ups; what librdkafka still holds goes with rd_kafka_destroy().
    h->closed = 1;
    rd_kafka_queue_cb_event_enable(h->mainq, NULL, NULL);
    if (h->logq != NULL) rd_kafka_queue_cb_event_enable(h->logq, NULL, NULL);
  }
  napi_value name;
  napi_create_string_utf8(env, "kdp-native-job", NAPI_AUTO_LENGTH, &name);
  napi_create_reference(env, argv[2], 1, &job->cb);
  napi_create_async_work(env, NULL, name, job_execute, job_complete, job, &job->work);
  napi_queue_async_work(env, job->work);
  return NULL;
}

napi_value kdp_metadata(napi_env env, napi_callback_info info) { return start_job(env, info, 0); }
napi_value kdp_flush(napi_env env, napi_callback_info info) { return start_job(env, info, 1); }
napi_value kdp_close(napi_env env, napi_callback_info info) { return start_job(env, info, 2); }
