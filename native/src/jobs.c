// The calls that block (metadata, flush, close, committed offsets, a producer's transactional
// calls, a consumer's seek), each run on libuv's thread
// pool as one kind of job (JOB_*, native/contract.js) and ended on the JS thread by its
// callback, cb(err) or cb(null, value), all built the same way (as node-rdkafka's workers.cc).
#include <stdlib.h>
#include "contract.h"
#include "napi.h"

typedef struct {
  napi_async_work work;
  napi_ref cb;
  kdp_handle *h;
  int kind;
  int timeout;
  /* JOB_METADATA: the topic asked for (NULL: all), and the answer. */
  rd_kafka_topic_t *rkt;
  const struct rd_kafka_metadata *md;
  /* JOB_COMMITTED: the partitions asked for, filled with their offsets and metadata. */
  rd_kafka_topic_partition_list_t *list;
  /* JOB_TXN_OFFSETS: the consumer group's metadata the offsets are sent with. */
  rd_kafka_consumer_group_metadata_t *group;
  rd_kafka_resp_err_t err;
  /* A transactional call's error, with librdkafka's classes of it (JOB_TXN_*, JOB_SEEK). */
  rd_kafka_error_t *error;
} job_t;

/* @locality libuv's thread pool. */
static void job_execute(napi_env env, void *data) {
  job_t *job = data;
  switch (job->kind) {
    case KDP_JOB_METADATA:
      job->err = rd_kafka_metadata(job->h->rk, job->rkt == NULL, job->rkt, &job->md, job->timeout);
      break;
    case KDP_JOB_FLUSH:
      job->err = rd_kafka_flush(job->h->rk, job->timeout);
      break;
    case KDP_JOB_COMMITTED:
      job->err = rd_kafka_committed(job->h->rk, job->list, job->timeout);
      break;
    case KDP_JOB_CLOSE:
      kdp_release(job->h);
      break;
    case KDP_JOB_TXN_INIT:
      job->error = rd_kafka_init_transactions(job->h->rk, job->timeout);
      break;
    case KDP_JOB_TXN_BEGIN:
      job->error = rd_kafka_begin_transaction(job->h->rk);
      break;
    case KDP_JOB_TXN_COMMIT:
      job->error = rd_kafka_commit_transaction(job->h->rk, job->timeout);
      break;
    case KDP_JOB_TXN_ABORT:
      job->error = rd_kafka_abort_transaction(job->h->rk, job->timeout);
      break;
    case KDP_JOB_TXN_OFFSETS:
      job->error = rd_kafka_send_offsets_to_transaction(job->h->rk, job->list, job->group, job->timeout);
      break;
    case KDP_JOB_SEEK:
      job->error = rd_kafka_seek_partitions(job->h->rk, job->list, job->timeout);
      /* Each partition's own error, as a call's error when the call had none. */
      for (int i = 0; job->error == NULL && i < job->list->cnt; i++) {
        rd_kafka_resp_err_t err = job->list->elems[i].err;
        if (err) job->error = rd_kafka_error_new(err, "seek of %s [%d]: %s", job->list->elems[i].topic, job->list->elems[i].partition, rd_kafka_err2str(err));
      }
      break;
  }
}

/* A transactional call's error as JS gets it: kdp_error() with node-rdkafka's names of its classes. */
static napi_value classified_error(napi_env env, const rd_kafka_error_t *error) {
  napi_value err = kdp_error(env, rd_kafka_error_code(error), rd_kafka_error_string(error));
  napi_value v;
  napi_get_boolean(env, rd_kafka_error_is_retriable(error), &v);
  napi_set_named_property(env, err, "isRetriable", v);
  napi_get_boolean(env, rd_kafka_error_txn_requires_abort(error), &v);
  napi_set_named_property(env, err, "isTxnRequiresAbort", v);
  napi_get_boolean(env, rd_kafka_error_is_fatal(error), &v);
  napi_set_named_property(env, err, "isFatal", v);
  return err;
}

/* The metadata as node-rdkafka's getMetadata() gives it. */
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
  if (job->error != NULL) args[0] = classified_error(env, job->error);
  else if (job->err) args[0] = kdp_error(env, job->err, rd_kafka_err2str(job->err));
  else if (job->kind == KDP_JOB_METADATA) args[1] = metadata_value(env, job->md);
  else if (job->kind == KDP_JOB_COMMITTED) args[1] = kdp_partitions_value(env, job->list);
  if (job->md != NULL) rd_kafka_metadata_destroy(job->md);
  if (job->list != NULL) rd_kafka_topic_partition_list_destroy(job->list);
  if (job->group != NULL) rd_kafka_consumer_group_metadata_destroy(job->group);
  if (job->error != NULL) rd_kafka_error_destroy(job->error);
  if (job->kind == KDP_JOB_CLOSE) {
    napi_release_threadsafe_function(job->h->wake, napi_tsfn_abort);
    napi_delete_reference(env, job->h->on_event);
    job->h->on_event = NULL;
  }
  napi_delete_reference(env, job->cb);
  napi_delete_async_work(env, job->work);
  free(job);
  napi_call_function(env, undefined, cb, 2, args, NULL);
}

/* Queues a job of `kind` for `h`, calling `cb` when it ends. */
static void start(napi_env env, kdp_handle *h, int kind, int timeout, napi_value cb, job_t *job) {
  job->h = h;
  job->kind = kind;
  job->timeout = timeout;
  napi_value name;
  napi_create_string_utf8(env, "kdp-native-job", NAPI_AUTO_LENGTH, &name);
  napi_create_reference(env, cb, 1, &job->cb);
  napi_create_async_work(env, NULL, name, job_execute, job_complete, job, &job->work);
  napi_queue_async_work(env, job->work);
}

/* A job of `kind` on `list` (and `group`), both the job's from here; its timeout and callback are arguments. */
static napi_value start_list_job(napi_env env, kdp_handle *h, int kind, rd_kafka_topic_partition_list_t *list,
                                 rd_kafka_consumer_group_metadata_t *group, napi_value timeout, napi_value cb) {
  int32_t ms = 0;
  napi_get_value_int32(env, timeout, &ms);
  job_t *job = calloc(1, sizeof *job);
  job->list = list;
  job->group = group;
  start(env, h, kind, ms, cb, job);
  return NULL;
}

/* (handle, timeoutMs, cb[, topic]) for metadata, flush and close. */
static napi_value start_handle_job(napi_env env, napi_callback_info info, int kind) {
  size_t argc;
  napi_value argv[4];
  kdp_handle *h = kdp_call(env, info, 3, 4, argv, &argc, "(handle, timeoutMs, cb[, topic])");
  if (h == NULL) return NULL;
  int32_t timeout = 0;
  napi_get_value_int32(env, argv[1], &timeout);
  job_t *job = calloc(1, sizeof *job);
  if (kind == KDP_JOB_METADATA && argc > 3) {
    napi_valuetype type;
    napi_typeof(env, argv[3], &type);
    if (type == napi_string) {
      char *name = kdp_string(env, argv[3], "topic");
      if (name == NULL) {
        free(job);
        return NULL;
      }
      job->rkt = kdp_topic(h, name);
      free(name);
    }
  }
  // Closing: no more wake-ups; what librdkafka still holds goes with rd_kafka_destroy().
  if (kind == KDP_JOB_CLOSE) kdp_quiet(h);
  start(env, h, kind, timeout, argv[2], job);
  return NULL;
}

napi_value kdp_metadata(napi_env env, napi_callback_info info) { return start_handle_job(env, info, KDP_JOB_METADATA); }
napi_value kdp_flush(napi_env env, napi_callback_info info) { return start_handle_job(env, info, KDP_JOB_FLUSH); }
napi_value kdp_close(napi_env env, napi_callback_info info) { return start_handle_job(env, info, KDP_JOB_CLOSE); }

/* committed(handle, topics[], partitions Int32Array, timeoutMs, cb(err, NativePartition[])). */
napi_value kdp_committed(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  kdp_handle *h = kdp_call(env, info, 5, 5, argv, NULL, "committed(handle, topics, partitions, timeoutMs, cb)");
  if (h == NULL) return NULL;
  rd_kafka_topic_partition_list_t *list = kdp_partitions(env, argv[1], argv[2], NULL, NULL);
  if (list == NULL) return NULL;
  return start_list_job(env, h, KDP_JOB_COMMITTED, list, NULL, argv[3], argv[4]);
}

/* transaction(handle, job, timeoutMs, cb): JOB_TXN_INIT, _BEGIN, _COMMIT or _ABORT of a producer. */
napi_value kdp_transaction(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  kdp_handle *h = kdp_call(env, info, 4, 4, argv, NULL, "transaction(handle, job, timeoutMs, cb)");
  if (h == NULL) return NULL;
  int32_t kind = -1, timeout = 0;
  napi_get_value_int32(env, argv[1], &kind);
  napi_get_value_int32(env, argv[2], &timeout);
  if (h->consumer || (kind != KDP_JOB_TXN_INIT && kind != KDP_JOB_TXN_BEGIN && kind != KDP_JOB_TXN_COMMIT && kind != KDP_JOB_TXN_ABORT))
    return kdp_throw(env, 0, "transaction(): a producer's handle and JOB_TXN_INIT, _BEGIN, _COMMIT or _ABORT");
  start(env, h, kind, timeout, argv[3], calloc(1, sizeof(job_t)));
  return NULL;
}

/*
 * sendOffsets(handle, consumer, groupId, topics[], partitions, offsets, metadata[], timeoutMs, cb):
 * the group's metadata of a native consumer's handle (its generation and member id, KIP-447), or
 * of the group id alone when `consumer` is null.
 */
napi_value kdp_send_offsets(napi_env env, napi_callback_info info) {
  napi_value argv[9];
  kdp_handle *h = kdp_call(env, info, 9, 9, argv, NULL, "sendOffsets(handle, consumer, groupId, topics, partitions, offsets, metadata, timeoutMs, cb)");
  if (h == NULL) return NULL;
  napi_valuetype type;
  napi_typeof(env, argv[1], &type);
  rd_kafka_consumer_group_metadata_t *group;
  if (type == napi_null) {
    char *id = kdp_string(env, argv[2], "groupId");
    if (id == NULL) return NULL;
    group = rd_kafka_consumer_group_metadata_new(id);
    free(id);
  } else {
    kdp_handle *c = kdp_handle_of(env, argv[1]);
    if (c == NULL) return NULL;
    if (!c->consumer) return kdp_throw(env, 0, "sendOffsets(): `consumer` is not a consumer's handle");
    group = rd_kafka_consumer_group_metadata(c->rk);
    if (group == NULL) return kdp_throw(env, RD_KAFKA_RESP_ERR__STATE, "sendOffsets(): the consumer has no group (group.id)");
  }
  rd_kafka_topic_partition_list_t *list = kdp_partitions(env, argv[3], argv[4], argv[5], argv[6]);
  if (list == NULL) {
    rd_kafka_consumer_group_metadata_destroy(group);
    return NULL;
  }
  return start_list_job(env, h, KDP_JOB_TXN_OFFSETS, list, group, argv[7], argv[8]);
}

/* seek(handle, topics[], partitions, offsets, timeoutMs, cb): a consumer's partitions read again from the offsets. */
napi_value kdp_seek(napi_env env, napi_callback_info info) {
  napi_value argv[6];
  kdp_handle *h = kdp_call(env, info, 6, 6, argv, NULL, "seek(handle, topics, partitions, offsets, timeoutMs, cb)");
  if (h == NULL) return NULL;
  rd_kafka_topic_partition_list_t *list = kdp_partitions(env, argv[1], argv[2], argv[3], NULL);
  if (list == NULL) return NULL;
  return start_list_job(env, h, KDP_JOB_SEEK, list, NULL, argv[4], argv[5]);
}
