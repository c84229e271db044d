// A consumer: many messages per call from librdkafka's consumer queue into one new buffer per
// batch, with a table of numbers per message (MESSAGE_ROW, HEADER_ROW: native/contract.js);
// the JS side makes each key and value a view of that buffer. The calls that steer it
// (subscribe, assignment, pause, commit) and read its logs. librdkafka's callbacks, served by
// the consume and synchronous commit calls on the JS thread, are events.c's.
#include <stdlib.h>
#include <string.h>
#include "contract.h"
#include "events.h"
#include "napi.h"

/* subscribe(handle, topics[]) */
napi_value kdp_subscribe(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  kdp_handle *h = kdp_call(env, info, 2, 2, argv, NULL, "subscribe(handle, topics)");
  if (h == NULL) return NULL;
  uint32_t n;
  char **names = kdp_strings(env, argv[1], &n);
  if (names == NULL) return NULL;
  rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new((int)n);
  for (uint32_t i = 0; i < n; i++) rd_kafka_topic_partition_list_add(list, names[i], RD_KAFKA_PARTITION_UA);
  kdp_free_strings(names, n);
  rd_kafka_resp_err_t err = rd_kafka_subscribe(h->rk, list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err) return kdp_throw(env, err, rd_kafka_err2str(err));
  return NULL;
}

/*
 * assignment(handle, mode, topics[], partitions Int32Array, offsets Float64Array | undefined):
 * mode ASSIGN_SET, ASSIGN_CLEAR (no list), ASSIGN_ADD or ASSIGN_REMOVE.
 */
napi_value kdp_assignment(napi_env env, napi_callback_info info) {
  size_t argc;
  napi_value argv[5];
  kdp_handle *h = kdp_call(env, info, 2, 5, argv, &argc, "assignment(handle, mode, topics, partitions, offsets)");
  if (h == NULL) return NULL;
  int32_t mode = 0;
  napi_get_value_int32(env, argv[1], &mode);
  if (mode == KDP_ASSIGN_CLEAR) {
    rd_kafka_resp_err_t err = rd_kafka_assign(h->rk, NULL);
    if (err) return kdp_throw(env, err, rd_kafka_err2str(err));
    return NULL;
  }
  if (argc < 5) return kdp_throw(env, 0, "assignment(handle, mode, topics, partitions, offsets)");
  rd_kafka_topic_partition_list_t *list = kdp_partitions(env, argv[2], argv[3], argv[4], NULL);
  if (list == NULL) return NULL;
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
  rd_kafka_error_t *error = NULL;
  if (mode == KDP_ASSIGN_SET) err = rd_kafka_assign(h->rk, list);
  else if (mode == KDP_ASSIGN_ADD) error = rd_kafka_incremental_assign(h->rk, list);
  else if (mode == KDP_ASSIGN_REMOVE) error = rd_kafka_incremental_unassign(h->rk, list);
  else err = RD_KAFKA_RESP_ERR__INVALID_ARG;
  rd_kafka_topic_partition_list_destroy(list);
  if (error) return kdp_throw_error(env, error);
  if (err) return kdp_throw(env, err, rd_kafka_err2str(err));
  return NULL;
}

/* pause(handle, pause bool, topics[], partitions Int32Array) */
napi_value kdp_pause(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  kdp_handle *h = kdp_call(env, info, 4, 4, argv, NULL, "pause(handle, pause, topics, partitions)");
  if (h == NULL) return NULL;
  bool pause = false;
  napi_get_value_bool(env, argv[1], &pause);
  rd_kafka_topic_partition_list_t *list = kdp_partitions(env, argv[2], argv[3], NULL, NULL);
  if (list == NULL) return NULL;
  rd_kafka_resp_err_t err = pause ? rd_kafka_pause_partitions(h->rk, list) : rd_kafka_resume_partitions(h->rk, list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err) return kdp_throw(env, err, rd_kafka_err2str(err));
  return NULL;
}

/*
 * commit(handle, topics[], partitions Int32Array, offsets Float64Array, metadata (Uint8Array |
 * undefined)[] | undefined, async bool): librdkafka sends each partition's metadata with its
 * offset (binary-safe since librdkafka 2.6.1). A synchronous one serves its commit callback here.
 */
napi_value kdp_commit(napi_env env, napi_callback_info info) {
  napi_value argv[6];
  kdp_handle *h = kdp_call(env, info, 6, 6, argv, NULL, "commit(handle, topics, partitions, offsets, metadata, async)");
  if (h == NULL) return NULL;
  bool async = true;
  napi_get_value_bool(env, argv[5], &async);
  rd_kafka_topic_partition_list_t *list = kdp_partitions(env, argv[1], argv[2], argv[3], argv[4]);
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
  napi_value argv[1], out;
  kdp_handle *h = kdp_call(env, info, 1, 1, argv, NULL, "protocol(handle)");
  if (h == NULL) return NULL;
  napi_create_string_utf8(env, rd_kafka_rebalance_protocol(h->rk), NAPI_AUTO_LENGTH, &out);
  return out;
}

/*
 * consume(handle, max): up to `max` messages librdkafka has now (no wait), serving its
 * callbacks meanwhile. undefined when none came; else a NativeBatch: per message
 * MESSAGE_ROW_SIZE numbers, per header HEADER_ROW_SIZE. The buffer is new for each batch:
 * views of it stay valid.
 */
napi_value kdp_consume(napi_env env, napi_callback_info info) {
  napi_value argv[2], undefined;
  kdp_handle *h = kdp_call(env, info, 2, 2, argv, NULL, "consume(handle, max)");
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
  napi_create_arraybuffer(env, sizeof(double) * KDP_MESSAGE_ROW_SIZE * (size_t)n, (void **)&t, &table_buffer);
  napi_create_typedarray(env, napi_float64_array, KDP_MESSAGE_ROW_SIZE * (size_t)n, table_buffer, 0, &table);
  napi_create_arraybuffer(env, sizeof(int32_t) * KDP_HEADER_ROW_SIZE * (headers > 0 ? headers : 1), (void **)&ht, &header_buffer);
  napi_create_typedarray(env, napi_int32_array, KDP_HEADER_ROW_SIZE * (headers > 0 ? headers : 1), header_buffer, 0, &header_table);
  napi_create_array(env, &topics);
  const char *last_topic = NULL;
  int32_t topic_index = -1, topic_count = 0;
  size_t pos = 0, hi = 0;
  for (ssize_t i = 0; i < n; i++) {
    const rd_kafka_message_t *m = msgs[i];
    double *row = t + (size_t)i * KDP_MESSAGE_ROW_SIZE;
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
    row[KDP_MESSAGE_ROW_TOPIC] = topic_index;
    row[KDP_MESSAGE_ROW_PARTITION] = m->partition;
    row[KDP_MESSAGE_ROW_OFFSET] = (double)m->offset;
    row[KDP_MESSAGE_ROW_TIMESTAMP] = (double)rd_kafka_message_timestamp(m, NULL);
    row[KDP_MESSAGE_ROW_ERROR] = m->err;
    if (m->err) {
      row[KDP_MESSAGE_ROW_KEY_AT] = row[KDP_MESSAGE_ROW_VALUE_AT] = 0;
      row[KDP_MESSAGE_ROW_KEY_LENGTH] = row[KDP_MESSAGE_ROW_VALUE_LENGTH] = -1;
      row[KDP_MESSAGE_ROW_FIRST_HEADER] = row[KDP_MESSAGE_ROW_HEADER_COUNT] = 0;
      continue;
    }
    row[KDP_MESSAGE_ROW_KEY_AT] = (double)pos;
    row[KDP_MESSAGE_ROW_KEY_LENGTH] = m->key == NULL ? -1 : (double)m->key_len;
    if (m->key != NULL) {
      memcpy(base + pos, m->key, m->key_len);
      pos += m->key_len;
    }
    row[KDP_MESSAGE_ROW_VALUE_AT] = (double)pos;
    row[KDP_MESSAGE_ROW_VALUE_LENGTH] = m->payload == NULL ? -1 : (double)m->len;
    if (m->payload != NULL) {
      memcpy(base + pos, m->payload, m->len);
      pos += m->len;
    }
    row[KDP_MESSAGE_ROW_FIRST_HEADER] = (double)hi;
    row[KDP_MESSAGE_ROW_HEADER_COUNT] = 0;
    rd_kafka_headers_t *hdrs = NULL;
    if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR && hdrs != NULL) {
      size_t count = rd_kafka_header_cnt(hdrs);
      for (size_t j = 0; j < count; j++) {
        const char *name;
        const void *value;
        size_t size;
        rd_kafka_header_get_all(hdrs, j, &name, &value, &size);
        size_t name_len = strlen(name);
        int32_t *e = ht + hi * KDP_HEADER_ROW_SIZE;
        e[KDP_HEADER_ROW_NAME_AT] = (int32_t)pos;
        e[KDP_HEADER_ROW_NAME_LENGTH] = (int32_t)name_len;
        memcpy(base + pos, name, name_len);
        pos += name_len;
        e[KDP_HEADER_ROW_VALUE_AT] = (int32_t)pos;
        e[KDP_HEADER_ROW_VALUE_LENGTH] = value == NULL ? -1 : (int32_t)size;
        if (value != NULL) {
          memcpy(base + pos, value, size);
          pos += size;
        }
        hi++;
      }
      row[KDP_MESSAGE_ROW_HEADER_COUNT] = (double)count;
    }
  }
  for (ssize_t i = 0; i < n; i++) rd_kafka_message_destroy(msgs[i]);
  free(msgs);
  napi_create_object(env, &out);
  napi_set_named_property(env, out, KDP_BATCH_DATA, data);
  napi_set_named_property(env, out, KDP_BATCH_TABLE, table);
  napi_set_named_property(env, out, KDP_BATCH_HEADERS, header_table);
  napi_set_named_property(env, out, KDP_BATCH_TOPICS, topics);
  return out;
}

/* logs(handle): a consumer's log events (EVENT_LOG), read without waiting. */
napi_value kdp_logs(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  kdp_handle *h = kdp_call(env, info, 1, 1, argv, NULL, "logs(handle)");
  if (h == NULL || h->logq == NULL) return NULL;
  atomic_store(&h->scheduled, 0);
  rd_kafka_event_t *ev;
  while ((ev = rd_kafka_queue_poll(h->logq, 0)) != NULL) {
    int ok = kdp_emit_queued(env, h, ev);
    rd_kafka_event_destroy(ev);
    if (!ok) return NULL;
  }
  return NULL;
}
