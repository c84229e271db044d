// Many messages per call: the JS side packs a batch for one topic into one buffer (values,
// keys, header names and values) with a layout table, and this hands each to librdkafka with
// its explicit partition, its id as the opaque its delivery report carries back, and its
// headers. librdkafka copies what it takes, so the buffer is the caller's again on return.
#include "handle.h"

/* Per message in `layout`: value offset, value length (-1: null), key offset, key length (-1: null), first header, header count. */
#define LAYOUT 6
/* Per header in `headerTable`: name offset, name length, value offset, value length (-1: null). */
#define HEADER 4


/* One message to librdkafka, copied; its headers (if any) are librdkafka's once it takes it. */
static rd_kafka_resp_err_t produce_one(rd_kafka_t *rk, rd_kafka_topic_t *rkt, int32_t partition, int32_t id, const uint8_t *data,
                                       const int32_t *l, double timestamp, const int32_t *headers) {
  const void *value = l[1] < 0 ? NULL : data + l[0];
  size_t value_len = l[1] < 0 ? 0 : (size_t)l[1];
  const void *key = l[3] < 0 ? NULL : data + l[2];
  size_t key_len = l[3] < 0 ? 0 : (size_t)l[3];
  if (l[5] <= 0) {
    return rd_kafka_producev(rk, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_PARTITION(partition), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                             RD_KAFKA_V_VALUE((void *)value, value_len), RD_KAFKA_V_KEY(key, key_len),
                             RD_KAFKA_V_OPAQUE((void *)(intptr_t)id), RD_KAFKA_V_TIMESTAMP((int64_t)timestamp), RD_KAFKA_V_END);
  }
  rd_kafka_headers_t *hdrs = rd_kafka_headers_new((size_t)l[5]);
  for (int32_t j = 0; j < l[5]; j++) {
    const int32_t *e = headers + (size_t)(l[4] + j) * HEADER;
    rd_kafka_header_add(hdrs, (const char *)data + e[0], e[1], e[3] < 0 ? NULL : data + e[2], e[3] < 0 ? 0 : e[3]);
  }
  rd_kafka_resp_err_t err = rd_kafka_producev(rk, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_PARTITION(partition), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                              RD_KAFKA_V_VALUE((void *)value, value_len), RD_KAFKA_V_KEY(key, key_len),
                                              RD_KAFKA_V_OPAQUE((void *)(intptr_t)id), RD_KAFKA_V_TIMESTAMP((int64_t)timestamp),
                                              RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END);
  // Taken: librdkafka owns the headers. Refused: they are still ours.
  if (err) rd_kafka_headers_destroy(hdrs);
  return err;
}

/*
 * produce(handle, topic, start, end, partitions Int32Array, ids Int32Array, data Uint8Array,
 * layout Int32Array, timestamps Float64Array, headerTable Int32Array, results Int32Array):
 * hands messages start..end-1 over in order. results[i] is 0 for a message librdkafka took,
 * 1 for one it took without the partition given (unknown to it: placed by librdkafka's
 * partitioner), else its error code (refused for good: no report follows). Stops at the first message
 * refused because librdkafka's queue is full, which stays with the caller with those after
 * it: returns the index it stopped at (end when all were handed over).
 */
napi_value kdp_produce(napi_env env, napi_callback_info info) {
  size_t argc = 11;
  napi_value argv[11], out;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc < 11) return kdp_throw(env, 0, "produce: 11 arguments");
  kdp_handle *h = kdp_handle_of(env, argv[0]);
  if (h == NULL) return NULL;
  char topic[512];
  size_t topic_len;
  if (napi_get_value_string_utf8(env, argv[1], topic, sizeof topic, &topic_len) != napi_ok) return kdp_throw(env, 0, "produce: topic must be a string");
  int32_t start, end;
  napi_get_value_int32(env, argv[2], &start);
  napi_get_value_int32(env, argv[3], &end);
  int32_t *partitions, *ids, *layout, *headers, *results;
  uint8_t *data;
  double *timestamps;
  size_t n_parts, n_ids, n_data, n_layout, n_ts, n_headers, n_results;
  if (!kdp_typed(env, argv[4], napi_int32_array, (void **)&partitions, &n_parts) ||
      !kdp_typed(env, argv[5], napi_int32_array, (void **)&ids, &n_ids) ||
      !kdp_typed(env, argv[6], napi_uint8_array, (void **)&data, &n_data) ||
      !kdp_typed(env, argv[7], napi_int32_array, (void **)&layout, &n_layout) ||
      !kdp_typed(env, argv[8], napi_float64_array, (void **)&timestamps, &n_ts) ||
      !kdp_typed(env, argv[9], napi_int32_array, (void **)&headers, &n_headers) ||
      !kdp_typed(env, argv[10], napi_int32_array, (void **)&results, &n_results)) {
    return NULL;
  }
  if (start < 0 || end < start || (size_t)end > n_parts || (size_t)end > n_ids || (size_t)end * LAYOUT > n_layout ||
      (size_t)end > n_ts || (size_t)end > n_results) {
    return kdp_throw(env, 0, "produce: start/end outside the batch's tables");
  }
  rd_kafka_topic_t *rkt = kdp_topic(h, topic);
  if (rkt == NULL) return kdp_throw(env, rd_kafka_last_error(), "produce: librdkafka refused the topic");
  int32_t i = start;
  for (; i < end; i++) {
    int unassigned = 0;
    rd_kafka_resp_err_t err = produce_one(h->rk, rkt, partitions[i], ids[i], data, layout + (size_t)i * LAYOUT, timestamps[i], headers);
    if (err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION && partitions[i] != RD_KAFKA_PARTITION_UA) {
      // A partition count gone stale (the topic shrank, or librdkafka's metadata is not in yet):
      // librdkafka places the message with the topic's partitioner instead.
      partitions[i] = RD_KAFKA_PARTITION_UA;
      unassigned = 1;
      err = produce_one(h->rk, rkt, partitions[i], ids[i], data, layout + (size_t)i * LAYOUT, timestamps[i], headers);
    }
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) break;
    results[i] = err != RD_KAFKA_RESP_ERR_NO_ERROR ? (int32_t)err : unassigned;
  }
  napi_create_int32(env, i, &out);
  return out;
}
