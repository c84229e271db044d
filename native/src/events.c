// Every event the addon sends to JS, made in one place (as node-rdkafka's callbacks.cc): the
// kinds and their arguments are native/contract.js's. A producer's come from librdkafka's main
// queue, read by poll(); a consumer's from librdkafka's callbacks, which call JS when they are
// served on the JS thread by a consume or commit call (h->env set). Served elsewhere (the close
// on the thread pool), a rebalance takes librdkafka's default action and the rest is dropped.
#include <string.h>
#include "contract.h"
#include "events.h"
#include "napi.h"

int kdp_emit(napi_env env, kdp_handle *h, int kind, napi_value *args, size_t argc) {
  napi_value fn, undefined, all[8];
  if (argc + 1 > sizeof all / sizeof all[0]) return 0;
  napi_get_reference_value(env, h->on_event, &fn);
  napi_get_undefined(env, &undefined);
  napi_create_int32(env, kind, &all[0]);
  for (size_t i = 0; i < argc; i++) all[i + 1] = args[i];
  return napi_call_function(env, undefined, fn, argc + 1, all, NULL) == napi_ok;
}

static int emit_stats(napi_env env, kdp_handle *h, const char *json, size_t len) {
  napi_value args[KDP_EVENT_STATS_ARGC];
  napi_create_string_utf8(env, json, len, &args[0]);
  return kdp_emit(env, h, KDP_EVENT_STATS, args, KDP_EVENT_STATS_ARGC);
}

int kdp_emit_error(napi_env env, kdp_handle *h, int code, const char *reason, int fatal) {
  napi_value args[KDP_EVENT_ERROR_ARGC];
  napi_create_int32(env, code, &args[0]);
  napi_create_string_utf8(env, reason, NAPI_AUTO_LENGTH, &args[1]);
  napi_get_boolean(env, fatal, &args[2]);
  return kdp_emit(env, h, KDP_EVENT_ERROR, args, KDP_EVENT_ERROR_ARGC);
}

static int emit_log(napi_env env, kdp_handle *h, int level, const char *facility, const char *message) {
  napi_value args[KDP_EVENT_LOG_ARGC];
  napi_create_int32(env, level, &args[0]);
  napi_create_string_utf8(env, facility, NAPI_AUTO_LENGTH, &args[1]);
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &args[2]);
  return kdp_emit(env, h, KDP_EVENT_LOG, args, KDP_EVENT_LOG_ARGC);
}

/* The code and partitions of a rebalance or commit result. */
static int emit_partitions(napi_env env, kdp_handle *h, int kind, rd_kafka_resp_err_t err, const rd_kafka_topic_partition_list_t *list) {
  napi_value args[2];
  napi_create_int32(env, err, &args[0]);
  args[1] = kdp_partitions_value(env, list);
  return kdp_emit(env, h, kind, args, 2);
}

int kdp_emit_queued(napi_env env, kdp_handle *h, rd_kafka_event_t *ev) {
  switch (rd_kafka_event_type(ev)) {
    case RD_KAFKA_EVENT_STATS: {
      const char *json = rd_kafka_event_stats(ev);
      return emit_stats(env, h, json, strlen(json));
    }
    case RD_KAFKA_EVENT_ERROR:
      return kdp_emit_error(env, h, rd_kafka_event_error(ev), rd_kafka_event_error_string(ev), rd_kafka_event_error_is_fatal(ev));
    case RD_KAFKA_EVENT_LOG: {
      const char *facility = "", *message = "";
      int level = 0;
      rd_kafka_event_log(ev, &facility, &message, &level);
      return emit_log(env, h, level, facility, message);
    }
    default:
      return 1;
  }
}

int kdp_emit_delivery_failed(napi_env env, kdp_handle *h, const rd_kafka_message_t *m) {
  napi_value args[KDP_EVENT_DELIVERY_FAILED_ARGC];
  napi_create_int32(env, m->err, &args[0]);
  napi_create_string_utf8(env, m->rkt != NULL ? rd_kafka_topic_name(m->rkt) : "", NAPI_AUTO_LENGTH, &args[1]);
  napi_create_int32(env, m->partition, &args[2]);
  if (m->key != NULL) napi_create_buffer_copy(env, m->key_len, m->key, NULL, &args[3]);
  else napi_get_null(env, &args[3]);
  napi_create_int32(env, (int32_t)m->len, &args[4]);
  napi_create_double(env, (double)rd_kafka_message_timestamp(m, NULL), &args[5]);
  return kdp_emit(env, h, KDP_EVENT_DELIVERY_FAILED, args, KDP_EVENT_DELIVERY_FAILED_ARGC);
}

/* A consumer's callbacks reach JS only within a call from the JS thread that serves them. */
static int on_js_thread(kdp_handle *h) {
  return h->env != NULL && pthread_equal(pthread_self(), h->js_thread);
}

/* @locality the JS thread (a consume call) or the thread pool (the close): JS assigns, or librdkafka's default. */
static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t *partitions, void *opaque) {
  kdp_handle *h = opaque;
  if (on_js_thread(h)) {
    emit_partitions(h->env, h, KDP_EVENT_REBALANCE, err, partitions);
    return;
  }
  int cooperative = strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;
  rd_kafka_error_t *e = NULL;
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    if (cooperative) e = rd_kafka_incremental_assign(rk, partitions);
    else rd_kafka_assign(rk, partitions);
  } else if (cooperative) {
    e = rd_kafka_incremental_unassign(rk, partitions);
  } else {
    rd_kafka_assign(rk, NULL);
  }
  if (e) rd_kafka_error_destroy(e);
}

static void commit_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t *offsets, void *opaque) {
  kdp_handle *h = opaque;
  if (on_js_thread(h)) emit_partitions(h->env, h, KDP_EVENT_COMMITTED, err, offsets);
}

static void error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque) {
  kdp_handle *h = opaque;
  if (on_js_thread(h)) kdp_emit_error(h->env, h, err, reason, err == RD_KAFKA_RESP_ERR__FATAL);
}

static int stats_cb(rd_kafka_t *rk, char *json, size_t len, void *opaque) {
  kdp_handle *h = opaque;
  if (on_js_thread(h)) emit_stats(h->env, h, json, len);
  return 0;
}

static void log_cb(const rd_kafka_t *rk, int level, const char *facility, const char *message) {
  kdp_handle *h = rd_kafka_opaque(rk);
  if (h != NULL && on_js_thread(h)) emit_log(h->env, h, level, facility, message);
}

void kdp_consumer_callbacks(rd_kafka_conf_t *conf, kdp_handle *h) {
  rd_kafka_conf_set_opaque(conf, h);
  rd_kafka_conf_set_rebalance_cb(conf, rebalance_cb);
  rd_kafka_conf_set_offset_commit_cb(conf, commit_cb);
  rd_kafka_conf_set_error_cb(conf, error_cb);
  rd_kafka_conf_set_stats_cb(conf, stats_cb);
  rd_kafka_conf_set_log_cb(conf, log_cb);
}
