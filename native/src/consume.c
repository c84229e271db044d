// A consumer handle: many messages per call from librdkafka's consumer queue into one new
// buffer per batch, with a table of numbers per message (partition, offset, timestamp, where its
// key, value and headers are in the buffer); the JS side makes each key and value a view of that
// buffer. librdkafka's callbacks (rebalance, offset commit, error, statistics, log) are served by
// the consume call on the JS thread and call JS there; served elsewhere (the close on the thread
// pool), a rebalance takes librdkafka's default action and the rest is dropped.
#include <stdlib.h>
#include <string.h>
#include "handle.h"

/* Numbers per message in a batch's table (see kdp_consume). */
#define FIELDS 11

static int on_js_thread(kdp_handle *h) {
  return h->env != NULL && pthread_equal(pthread_self(), h->js_thread);
}

/* Calls onEvent(kind, a, b, c) on the JS thread; returns 0 when JS threw (left pending). */
static int call_js(kdp_handle *h, int kind, napi_value a, napi_value b, napi_value c) {
  napi_env env = h->env;
  napi_value fn, undefined, args[4];
  napi_get_reference_value(env, h->on_event, &fn);
  napi_get_undefined(env, &undefined);
  napi_create_int32(env, kind, &args[0]);
  args[1] = a != NULL ? a : undefined;
  args[2] = b != NULL ? b : undefined;
  args[3] = c != NULL ? c : undefined;
  return napi_call_function(env, undefined, fn, 4, args, NULL) == napi_ok;
}

napi_value kdp_partitions_value(napi_env env, const rd_kafka_topic_partition_list_t *list) {
  napi_value out, v;
  napi_create_array_with_length(env, list ? (size_t)list->cnt : 0, &out);
  for (int i = 0; list && i < list->cnt; i++) {
    const rd_kafka_topic_partition_t *p = &list->elems[i];
    napi_value o;
    napi_create_object(env, &o);
    napi_create_string_utf8(env, p->topic, NAPI_AUTO_LENGTH, &v);
    napi_set_named_property(env, o, "topic", v);
    napi_create_int32(env, p->partition, &v);
    napi_set_named_property(env, o, "partition", v);
    napi_create_double(env, (double)p->offset, &v);
    napi_set_named_property(env, o, "offset", v);
    if (p->err) {
      napi_create_int32(env, p->err, &v);
      napi_set_named_property(env, o, "error", v);
    }
    napi_set_element(env, out, i, o);
  }
  return out;
}

/* rebalance: (4, code, partitions). JS assigns (assignment()); librdkafka's default when it cannot be asked. */
static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t *partitions, void *opaque) {
  kdp_handle *h = opaque;
  if (on_js_thread(h)) {
    napi_value code;
    napi_create_int32(h->env, err, &code);
    call_js(h, 4, code, kdp_partitions_value(h->env, partitions), NULL);
    return;
  }
  int cooperative = strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    if (cooperative) {
      rd_kafka_error_t *e = rd_kafka_incremental_assign(rk, partitions);
      if (e) rd_kafka_error_destroy(e);
    } else {
      rd_kafka_assign(rk, partitions);
    }
  } else if (cooperative) {
    rd_kafka_error_t *e = rd_kafka_incremental_unassign(rk, partitions);
    if (e) rd_kafka_error_destroy(e);
  } else {
    rd_kafka_assign(rk, NULL);
  }
}

/* offset commit result: (5, code, partitions). */
static void commit_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t *offsets, void *opaque) {
  kdp_handle *h = opaque;
  if (!on_js_thread(h)) return;
  napi_value code;
  napi_create_int32(h->env, err, &code);
  call_js(h, 5, code, kdp_partitions_value(h->env, offsets), NULL);
}

static void error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque) {
  kdp_handle *h = opaque;
  if (!on_js_thread(h)) return;
  napi_value code, text, fatal;
  napi_create_int32(h->env, err, &code);
  napi_create_string_utf8(h->env, reason, NAPI_AUTO_LENGTH, &text);
  napi_get_boolean(h->env, err == RD_KAFKA_RESP_ERR__FATAL, &fatal);
  call_js(h, 2, code, text, fatal);
}

static int stats_cb(rd_kafka_t *rk, char *json, size_t len, void *opaque) {
  kdp_handle *h = opaque;
  if (on_js_thread(h)) {
    napi_value text;
    napi_create_string_utf8(h->env, json, len, &text);
    call_js(h, 1, text, NULL, NULL);
  }
  return 0;
}

static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
  kdp_handle *h = rd_kafka_opaque(rk);
  if (h == NULL || !on_js_thread(h)) return;
  napi_value l, f, m;
  napi_create_int32(h->env, level, &l);
  napi_create_string_utf8(h->env, fac, NAPI_AUTO_LENGTH, &f);
  napi_create_string_utf8(h->env, buf, NAPI_AUTO_LENGTH, &m);
  call_js(h, 3, l, f, m);
}

void kdp_consumer_conf(rd_kafka_conf_t *conf, kdp_handle *h) {
  rd_kafka_conf_set_opaque(conf, h);
  rd_kafka_conf_set_rebalance_cb(conf, rebalance_cb);
  rd_kafka_conf_set_offset_commit_cb(conf, commit_cb);
  rd_kafka_conf_set_error_cb(conf, error_cb);
  rd_kafka_conf_set_stats_cb(conf, stats_cb);
  rd_kafka_conf_set_log_cb(conf, log_cb);
}

/* A string array argument's elements as C strings (malloc'd), NULL with an exception pending. */
static char **strings_of(napi_env env, napi_value array, uint32_t *count) {
  bool is;
  if (napi_is_array(env, array, &is) != napi_ok || !is) {
    kdp_throw(env, 0, "topics must be an array of strings");
    return NULL;
  }
  napi_get_array_length(env, array, count);
  char **out = calloc(*count + 1, sizeof *out);
  for (uint32_t i = 0; i < *count; i++) {
    napi_value v;
    size_t len;
    napi_get_element(env, array, i, &v);
    if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) {
      for (uint32_t j = 0; j < i; j++) free(out[j]);
      free(out);
      kdp_throw(env, 0, "topics must be an array of strings");
      return NULL;
    }
    out[i] = malloc(len + 1);
    napi_get_value_string_utf8(env, v, out[i], len + 1, &len);
  }
  return out;
}

static void free_strings(char **s, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) free(s[i]);
  free(s);
}

rd_kafka_topic_partition_list_t *kdp_partitions(napi_env env, napi_value topics, napi_value partitions, napi_value offsets) {
  uint32_t n;
  char **names = strings_of(env, topics, &n);
  if (names == NULL) return NULL;
  int32_t *parts;
  size_t len;
  if (!kdp_typed(env, partitions, napi_int32_array, (void **)&parts, &len) || len < n) {
    free_strings(names, n);
    return NULL;
  }
  double *offs = NULL;
  napi_valuetype type;
  napi_typeof(env, offsets, &type);
  if (type != napi_undefined && (!kdp_typed(env, offsets, napi_float64_array, (void **)&offs, &len) || len < n)) {
    free_strings(names, n);
    return NULL;
  }
  rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new((int)n);
  for (uint32_t i = 0; i < n; i++) {
    rd_kafka_topic_partition_t *p = rd_kafka_topic_partition_list_add(list, names[i], parts[i]);
    if (offs != NULL) p->offset = (int64_t)offs[i];
  }
  free_strings(names, n);
  return list;
}

static napi_value throw_error(napi_env env, rd_kafka_error_t *error) {
  char message[512];
  snprintf(message, sizeof message, "%s", rd_kafka_error_string(error));
  int code = rd_kafka_error_code(error);
  rd_kafka_error_destroy(error);
  return kdp_throw(env, code, message);
}

/* subscribe(handle, topics[]) */
napi_value kdp_subscribe(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) return kdp_throw(env, 0, "subscribe(handle, topics)");
  kdp_handle *h = kdp_handle_of(env, argv[0]);
  if (h == NULL) return NULL;
  uint32_t n;
  char **names = strings_of(env, argv[1], &n);
  if (names == NULL) return NULL;
  rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new((int)n);
  for (uint32_t i = 0; i < n; i++) rd_kafka_topic_partition_list_add(list, names[i], RD_KAFKA_PARTITION_UA);
  free_strings(names, n);
  rd_kafka_resp_err_t err = rd_kafka_subscribe(h->rk, list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err) return kdp_throw(env, err, rd_kafka_err2str(err));
  return NULL;
}

/*
 * assignment(handle, mode, topics[], partitions Int32Array, offsets Float64Array | undefined):
 * mode 0 assign, 1 unassign everything, 2 incremental assign, 3 incremental unassign.
 */
napi_value kdp_assignment(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) return kdp_throw(env, 0, "assignment(handle, mode, ...)");
  kdp_handle *h = kdp_handle_of(env, argv[0]);
  if (h == NULL) return NULL;
  int32_t mode = 0;
  napi_get_value_int32(env, argv[1], &mode);
  if (mode == 1) {
    rd_kafka_resp_err_t err = rd_kafka_assign(h->rk, NULL);
    if (err) return kdp_throw(env, err, rd_kafka_err2str(err));
    return NULL;
  }
  if (argc < 5) return kdp_throw(env, 0, "assignment(handle, mode, topics, partitions, offsets)");
  rd_kafka_topic_partition_list_t *list = kdp_partitions(env, argv[2], argv[3], argv[4]);
  if (list == NULL) return NULL;
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
  rd_kafka_error_t *error = NULL;
  if (mode == 0) err = rd_kafka_assign(h->rk, list);
  else if (mode == 2) error = rd_kafka_incremental_assign(h->rk, list);
  else error = rd_kafka_incremental_unassign(h->rk, list);
  rd_kafka_topic_partition_list_destroy(list);
  if (error) return throw_error(env, error);
  if (err) return kdp_throw(env, err, rd_kafka_err2str(err));
  return NULL;
}

/* pause(handle, pause bool, topics[], partitions Int32Array) */
napi_value kdp_pause(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4], undefined;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4) return kdp_throw(env, 0, "pause(handle, pause, topics, partitions)");
  kdp_handle *h = kdp_handle_of(env, argv[0]);
  if (h == NULL) return NULL;
  bool pause = false;
  napi_get_value_bool(env, argv[1], &pause);
  napi_get_undefined(env, &undefined);
  rd_kafka_topic_partition_list_t *list = kdp_partitions(env, argv[2], argv[3], undefined);
  if (list == NULL) return NULL;
  rd_kafka_resp_err_t err = pause ? rd_kafka_pause_partitions(h->rk, list) : rd_kafka_resume_partitions(h->rk, list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err) return kdp_throw(env, err, rd_kafka_err2str(err));
  return NULL;
}

/* commit(handle, topics[], partitions Int32Array, offsets Float64Array, async bool): a synchronous one serves its commit callback here. */
napi_value kdp_commit(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 5) return kdp_throw(env, 0, "commit(handle, topics, partitions, offsets, async)");
  kdp_handle *h = kdp_handle_of(env, argv[0]);
  if (h == NULL) return NULL;
  bool async = true;
  napi_get_value_bool(env, argv[4], &async);
  rd_kafka_topic_partition_list_t *list = kdp_partitions(env, argv[1], argv[2], argv[3]);
  if (list == NULL) return NULL;
  napi_env before = h->env;
  h->env = env;
  rd_kafka_resp_err_t err = rd_kafka_commit(h->rk, list, async ? 1 : 0);
  h->env = before;
  rd_kafka_topic_partition_list_destroy(list);
  if (err) return kdp_throw(env, err, rd_kafka_err2str(err));
  return NULL;
}

napi_value kdp_protocol(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) return NULL;
  kdp_handle *h = kdp_handle_of(env, argv[0]);
  if (h == NULL) return NULL;
  napi_create_string_utf8(env, rd_kafka_rebalance_protocol(h->rk), NAPI_AUTO_LENGTH, &out);
  return out;
}

/* committed(handle, topics[], partitions Int32Array, timeoutMs, cb(err, [{ topic, partition, offset }])) on the thread pool. */
typedef struct {
  napi_async_work work;
  napi_ref cb;
  kdp_handle *h;
  rd_kafka_topic_partition_list_t *list;
  int timeout;
  rd_kafka_resp_err_t err;
} committed_job;

static void committed_execute(napi_env env, void *data) {
  committed_job *job = data;
  job->err = rd_kafka_committed(job->h->rk, job->list, job->timeout);
}

static void committed_complete(napi_env env, napi_status status, void *data) {
  committed_job *job = data;
  napi_value cb, undefined, args[2];
  napi_get_reference_value(env, job->cb, &cb);
  napi_get_undefined(env, &undefined);
  napi_get_null(env, &args[0]);
  args[1] = undefined;
  if (job->err) {
    napi_value msg, code;
    napi_create_string_utf8(env, rd_kafka_err2str(job->err), NAPI_AUTO_LENGTH, &msg);
    napi_create_error(env, NULL, msg, &args[0]);
    napi_create_int32(env, job->err, &code);
    napi_set_named_property(env, args[0], "code", code);
  } else {
    args[1] = kdp_partitions_value(env, job->list);
  }
  rd_kafka_topic_partition_list_destroy(job->list);
  napi_delete_reference(env, job->cb);
  napi_delete_async_work(env, job->work);
  free(job);
  napi_call_function(env, undefined, cb, 2, args, NULL);
}

napi_value kdp_committed(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5], undefined, name;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 5) return kdp_throw(env, 0, "committed(handle, topics, partitions, timeoutMs, cb)");
  kdp_handle *h = kdp_handle_of(env, argv[0]);
  if (h == NULL) return NULL;
  napi_get_undefined(env, &undefined);
  rd_kafka_topic_partition_list_t *list = kdp_partitions(env, argv[1], argv[2], undefined);
  if (list == NULL) return NULL;
  committed_job *job = calloc(1, sizeof *job);
  job->h = h;
  job->list = list;
  napi_get_value_int32(env, argv[3], &job->timeout);
  napi_create_reference(env, argv[4], 1, &job->cb);
  napi_create_string_utf8(env, "kdp-native-committed", NAPI_AUTO_LENGTH, &name);
  napi_create_async_work(env, NULL, name, committed_execute, committed_complete, job, &job->work);
  napi_queue_async_work(env, job->work);
  return NULL;
}

/*
 * consume(handle, max): up to `max` messages librdkafka has now (no wait), serving its
 * callbacks meanwhile. undefined when none came; else { data: Buffer, table: Float64Array,
 * headers: Int32Array, topics: string[] }: per message FIELDS numbers (topic index, partition,
 * offset, timestamp, key offset, key length (-1: null), value offset, value length (-1:
 * null), first header, header count, error code), per header 4 (name offset and length, value
 * offset and length (-1: null)). The buffer is new for each batch: views of it stay valid.
 */
napi_value kdp_consume(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], undefined;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) return kdp_throw(env, 0, "consume(handle, max)");
  kdp_handle *h = kdp_handle_of(env, argv[0]);
  if (h == NULL) return NULL;
  int32_t max = 0;
  napi_get_value_int32(env, argv[1], &max);
  napi_get_undefined(env, &undefined);
  if (max <= 0) return undefined;
  rd_kafka_message_t **msgs = malloc(sizeof *msgs * (size_t)max);
  atomic_store(&h->scheduled, 0);
  h->env = env;
  ssize_t n = rd_kafka_consume_batch_queue(h->mainq, 0, msgs, (size_t)max);
  h->env = NULL;
  bool pending;
  napi_is_exception_pending(env, &pending);
  if (n <= 0 || pending) {
    for (ssize_t i = 0; i < n; i++) rd_kafka_message_destroy(msgs[i]);
    free(msgs);
    return pending ? NULL : undefined;
  }
  // First pass: sizes; second: copies.
  size_t bytes = 0, headers = 0;
  for (ssize_t i = 0; i < n; i++) {
    const rd_kafka_message_t *m = msgs[i];
    bytes += m->key_len + m->len;
    rd_kafka_headers_t *hdrs = NULL;
    if (!m->err && rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR && hdrs != NULL) {
      size_t count = rd_kafka_header_cnt(hdrs);
      for (size_t j = 0; j < count; j++) {
        const char *name;
        const void *value;
        size_t size;
        rd_kafka_header_get_all(hdrs, j, &name, &value, &size);
        bytes += strlen(name) + size;
      }
      headers += count;
    }
  }
  napi_value data, table_buffer, table, header_buffer, header_table, topics, out, v;
  uint8_t *base;
  double *t;
  int32_t *ht;
  napi_create_buffer(env, bytes > 0 ? bytes : 1, (void **)&base, &data);
  napi_create_arraybuffer(env, sizeof(double) * FIELDS * (size_t)n, (void **)&t, &table_buffer);
  napi_create_typedarray(env, napi_float64_array, FIELDS * (size_t)n, table_buffer, 0, &table);
  napi_create_arraybuffer(env, sizeof(int32_t) * 4 * (headers > 0 ? headers : 1), (void **)&ht, &header_buffer);
  napi_create_typedarray(env, napi_int32_array, 4 * (headers > 0 ? headers : 1), header_buffer, 0, &header_table);
  napi_create_array(env, &topics);
  const char *last_topic = NULL;
  int32_t topic_index = -1, topic_count = 0;
  size_t pos = 0, hi = 0;
  for (ssize_t i = 0; i < n; i++) {
    const rd_kafka_message_t *m = msgs[i];
    double *row = t + (size_t)i * FIELDS;
    const char *topic = m->rkt ? rd_kafka_topic_name(m->rkt) : "";
    if (last_topic == NULL || strcmp(topic, last_topic) != 0) {
      // Topics of a batch: usually one; looked up among those seen in it.
      topic_index = -1;
      for (int32_t k = 0; k < topic_count; k++) {
        napi_value name;
        char buf[256];
        size_t len;
        napi_get_element(env, topics, (uint32_t)k, &name);
        napi_get_value_string_utf8(env, name, buf, sizeof buf, &len);
        if (strcmp(buf, topic) == 0) topic_index = k;
      }
      if (topic_index < 0) {
        napi_create_string_utf8(env, topic, NAPI_AUTO_LENGTH, &v);
        napi_set_element(env, topics, (uint32_t)topic_count, v);
        topic_index = topic_count++;
      }
      last_topic = topic;
    }
    row[0] = topic_index;
    row[1] = m->partition;
    row[2] = (double)m->offset;
    row[3] = (double)rd_kafka_message_timestamp(m, NULL);
    row[10] = m->err;
    if (m->err) {
      row[4] = row[6] = 0;
      row[5] = row[7] = -1;
      row[8] = row[9] = 0;
      continue;
    }
    row[4] = (double)pos;
    row[5] = m->key == NULL ? -1 : (double)m->key_len;
    if (m->key != NULL) {
      memcpy(base + pos, m->key, m->key_len);
      pos += m->key_len;
    }
    row[6] = (double)pos;
    row[7] = m->payload == NULL ? -1 : (double)m->len;
    if (m->payload != NULL) {
      memcpy(base + pos, m->payload, m->len);
      pos += m->len;
    }
    row[8] = (double)hi;
    row[9] = 0;
    rd_kafka_headers_t *hdrs = NULL;
    if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR && hdrs != NULL) {
      size_t count = rd_kafka_header_cnt(hdrs);
      for (size_t j = 0; j < count; j++) {
        const char *name;
        const void *value;
        size_t size;
        rd_kafka_header_get_all(hdrs, j, &name, &value, &size);
        size_t name_len = strlen(name);
        int32_t *e = ht + hi * 4;
        e[0] = (int32_t)pos;
        e[1] = (int32_t)name_len;
        memcpy(base + pos, name, name_len);
        pos += name_len;
        e[2] = (int32_t)pos;
        e[3] = value == NULL ? -1 : (int32_t)size;
        if (value != NULL) {
          memcpy(base + pos, value, size);
          pos += size;
        }
        hi++;
      }
      row[9] = (double)count;
    }
  }
  for (ssize_t i = 0; i < n; i++) rd_kafka_message_destroy(msgs[i]);
  free(msgs);
  napi_create_object(env, &out);
  napi_set_named_property(env, out, "data", data);
  napi_set_named_property(env, out, "table", table);
  napi_set_named_property(env, out, "headers", header_table);
  napi_set_named_property(env, out, "topics", topics);
  return out;
}

/* logs(handle): a consumer's log events (onEvent kind 3), read without waiting. */
napi_value kdp_logs(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) return NULL;
  kdp_handle *h = kdp_handle_of(env, argv[0]);
  if (h == NULL || h->logq == NULL) return NULL;
  atomic_store(&h->scheduled, 0);
  rd_kafka_event_t *ev;
  while ((ev = rd_kafka_queue_poll(h->logq, 0)) != NULL) {
    int ok = kdp_dispatch(env, h, ev);
    rd_kafka_event_destroy(ev);
    if (!ok) return NULL;
  }
  return NULL;
}
