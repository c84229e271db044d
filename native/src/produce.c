// A producer's two directions. Out: many messages per call: the JS side packs a batch for one
// topic into one buffer (values, keys, header names and values) with a layout table
// (PRODUCE_ROW, HEADER_ROW: native/contract.js), and this hands each to librdkafka with its
// explicit partition, its id as the opaque its delivery report carries back, and its headers.
// librdkafka copies what it takes, so the buffer is the caller's again on return. Back: the
// delivery reports of librdkafka's main queue, read in bulk into typed arrays (poll).
#include "contract.h"
#include "events.h"
#include "napi.h"


/* One message to librdkafka, copied; its headers (if any) are librdkafka's once it takes it. */
static rd_kafka_resp_err_t produce_one(rd_kafka_t *rk, rd_kafka_topic_t *rkt, int32_t partition, int32_t id, const uint8_t *data,
                                       const int32_t *l, double timestamp, const int32_t *headers) {
  const int32_t vlen = l[KDP_PRODUCE_ROW_VALUE_LENGTH], klen = l[KDP_PRODUCE_ROW_KEY_LENGTH];
  const int32_t first = l[KDP_PRODUCE_ROW_FIRST_HEADER], count = l[KDP_PRODUCE_ROW_HEADER_COUNT];
  const void *value = vlen < 0 ? NULL : data + l[KDP_PRODUCE_ROW_VALUE_AT];
  size_t value_len = vlen < 0 ? 0 : (size_t)vlen;
  const void *key = klen < 0 ? NULL : data + l[KDP_PRODUCE_ROW_KEY_AT];
  size_t key_len = klen < 0 ? 0 : (size_t)klen;
  if (count <= 0) {
    return rd_kafka_producev(rk, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_PARTITION(partition), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                             RD_KAFKA_V_VALUE((void *)value, value_len), RD_KAFKA_V_KEY(key, key_len),
                             RD_KAFKA_V_OPAQUE((void *)(intptr_t)id), RD_KAFKA_V_TIMESTAMP((int64_t)timestamp), RD_KAFKA_V_END);
  }
  rd_kafka_headers_t *hdrs = rd_kafka_headers_new((size_t)count);
  for (int32_t j = 0; j < count; j++) {
    const int32_t *e = headers + (size_t)(first + j) * KDP_HEADER_ROW_SIZE;
    const int32_t len = e[KDP_HEADER_ROW_VALUE_LENGTH];
    rd_kafka_header_add(hdrs, (const char *)data + e[KDP_HEADER_ROW_NAME_AT], e[KDP_HEADER_ROW_NAME_LENGTH],
                        len < 0 ? NULL : data + e[KDP_HEADER_ROW_VALUE_AT], len < 0 ? 0 : len);
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
 * hands messages start..end-1 over in order. results[i] is PRODUCED_TAKEN for a message librdkafka took,
 * PRODUCED_UNASSIGNED for one it took without the partition given (unknown to it: placed by
 * librdkafka's partitioner), else its error code (refused for good: no report follows). Stops at the first message
 * refused because librdkafka's queue is full, which stays with the caller with those after
 * it: returns the index it stopped at (end when all were handed over).
 */
napi_value kdp_produce(napi_env env, napi_callback_info info) {
  napi_value argv[11], out;
  kdp_handle *h = kdp_call(env, info, 11, 11, argv, NULL, "produce: 11 arguments");
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
  if (start < 0 || end < start || (size_t)end > n_parts || (size_t)end > n_ids || (size_t)end * KDP_PRODUCE_ROW_SIZE > n_layout ||
      (size_t)end > n_ts || (size_t)end > n_results) {
    return kdp_throw(env, 0, "produce: start/end outside the batch's tables");
  }
  rd_kafka_topic_t *rkt = kdp_topic(h, topic);
  if (rkt == NULL) return kdp_throw(env, rd_kafka_last_error(), "produce: librdkafka refused the topic");
  int32_t i = start;
  for (; i < end; i++) {
    int32_t produced = KDP_PRODUCED_TAKEN;
    rd_kafka_resp_err_t err = produce_one(h->rk, rkt, partitions[i], ids[i], data, layout + (size_t)i * KDP_PRODUCE_ROW_SIZE, timestamps[i], headers);
    if (err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION && partitions[i] != RD_KAFKA_PARTITION_UA) {
      // A partition count gone stale (the topic shrank, or librdkafka's metadata is not in yet):
      // librdkafka places the message with the topic's partitioner instead.
      partitions[i] = RD_KAFKA_PARTITION_UA;
      produced = KDP_PRODUCED_UNASSIGNED;
      err = produce_one(h->rk, rkt, partitions[i], ids[i], data, layout + (size_t)i * KDP_PRODUCE_ROW_SIZE, timestamps[i], headers);
    }
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) break;
    results[i] = err != RD_KAFKA_RESP_ERR_NO_ERROR ? (int32_t)err : produced;
  }
  napi_create_int32(env, i, &out);
  return out;
}

/*
 * poll(handle, ids Int32Array, partitions Int32Array, offsets Float64Array, errors Int32Array,
 * timestamps Float64Array): reads the main queue without waiting. Delivery reports fill the
 * arrays (as many as `ids` holds; the rest wait for the next call); statistics, errors and
 * logs go to onEvent as they come (events.c). Returns the number of reports.
 */
napi_value kdp_poll(napi_env env, napi_callback_info info) {
  napi_value argv[6], out;
  kdp_handle *h = kdp_call(env, info, 6, 6, argv, NULL, "poll(handle, ids, partitions, offsets, errors, timestamps)");
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
          if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR && !kdp_emit_delivery_failed(env, h, m)) {
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
    int ok = kdp_emit_queued(env, h, ev);
    rd_kafka_event_destroy(ev);
    if (!ok) return NULL;
  }
  napi_create_uint32(env, (uint32_t)n, &out);
  return out;
}
