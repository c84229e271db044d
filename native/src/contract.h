// Generated from native/contract.js by scripts/native-contract.js: do not edit.
// The numbers, names and functions the addon and the TypeScript side (src/native/contract.ts) agree on.
#ifndef KDP_CONTRACT_H
#define KDP_CONTRACT_H

#include <node_api.h>

/* Per message in produce()'s layout table (Int32Array): where its value, key and headers are in the batch's data. */
#define KDP_PRODUCE_ROW_VALUE_AT 0 /* the value's first byte in data */
#define KDP_PRODUCE_ROW_VALUE_LENGTH 1 /* its length (-1: null) */
#define KDP_PRODUCE_ROW_KEY_AT 2 /* the key's first byte in data */
#define KDP_PRODUCE_ROW_KEY_LENGTH 3 /* its length (-1: null) */
#define KDP_PRODUCE_ROW_FIRST_HEADER 4 /* its first row in the header table */
#define KDP_PRODUCE_ROW_HEADER_COUNT 5 /* its number of headers */
#define KDP_PRODUCE_ROW_SIZE 6 /* numbers per row */

/* Per header in the header tables of produce() and consume() (Int32Array). */
#define KDP_HEADER_ROW_NAME_AT 0 /* the name's first byte in data */
#define KDP_HEADER_ROW_NAME_LENGTH 1 /* the name's length */
#define KDP_HEADER_ROW_VALUE_AT 2 /* the value's first byte in data */
#define KDP_HEADER_ROW_VALUE_LENGTH 3 /* its length (-1: null) */
#define KDP_HEADER_ROW_SIZE 4 /* numbers per row */

/* Per message in a consume() batch's table (Float64Array). */
#define KDP_MESSAGE_ROW_TOPIC 0 /* its topic's index in the batch's topics */
#define KDP_MESSAGE_ROW_PARTITION 1 /* its partition */
#define KDP_MESSAGE_ROW_OFFSET 2 /* its offset */
#define KDP_MESSAGE_ROW_TIMESTAMP 3 /* its timestamp (ms) */
#define KDP_MESSAGE_ROW_KEY_AT 4 /* the key's first byte in data */
#define KDP_MESSAGE_ROW_KEY_LENGTH 5 /* its length (-1: null) */
#define KDP_MESSAGE_ROW_VALUE_AT 6 /* the value's first byte in data */
#define KDP_MESSAGE_ROW_VALUE_LENGTH 7 /* its length (-1: null) */
#define KDP_MESSAGE_ROW_FIRST_HEADER 8 /* its first row in the header table */
#define KDP_MESSAGE_ROW_HEADER_COUNT 9 /* its number of headers */
#define KDP_MESSAGE_ROW_ERROR 10 /* librdkafka's error code: not 0 for a consumer error, which is no message */
#define KDP_MESSAGE_ROW_SIZE 11 /* numbers per row */

/* Events: onEvent(kind, ...args) on the JS thread, each kind's arguments after it. */
#define KDP_EVENT_STATS 1 /* librdkafka's statistics (statistics.interval.ms): (json) */
#define KDP_EVENT_STATS_ARGC 1 /* its arguments after the kind */
#define KDP_EVENT_ERROR 2 /* a client error, as librdkafka reports it: (code, reason, fatal) */
#define KDP_EVENT_ERROR_ARGC 3 /* its arguments after the kind */
#define KDP_EVENT_LOG 3 /* a log line: (level, facility, message) */
#define KDP_EVENT_LOG_ARGC 3 /* its arguments after the kind */
#define KDP_EVENT_DELIVERY_FAILED 4 /* a producer: the failed delivery of a message produced without a slot (its report has no id): (code, topic, partition, key, size, timestamp) */
#define KDP_EVENT_DELIVERY_FAILED_ARGC 6 /* its arguments after the kind */
#define KDP_EVENT_REBALANCE 5 /* a consumer: partitions assigned or revoked (the JS side assigns), within a consume() call: (code, partitions) */
#define KDP_EVENT_REBALANCE_ARGC 2 /* its arguments after the kind */
#define KDP_EVENT_COMMITTED 6 /* a consumer: an offset commit's result, within a consume() or synchronous commit() call: (code, partitions) */
#define KDP_EVENT_COMMITTED_ARGC 2 /* its arguments after the kind */

/* PRODUCED: produce()'s result per message. */
#define KDP_PRODUCED_TAKEN 0 /* librdkafka took it on the partition given */
#define KDP_PRODUCED_UNASSIGNED 1 /* librdkafka took it without the partition given (unknown to it): placed by librdkafka's partitioner */

/* ASSIGN: assignment()'s modes. */
#define KDP_ASSIGN_SET 0 /* assign the list (eager) */
#define KDP_ASSIGN_CLEAR 1 /* unassign everything (eager) */
#define KDP_ASSIGN_ADD 2 /* incremental assign */
#define KDP_ASSIGN_REMOVE 3 /* incremental unassign */

/* JOB: the calls run on libuv's thread pool (native/src/jobs.c), each ending in its callback. */
#define KDP_JOB_METADATA 0 /* rd_kafka_metadata() */
#define KDP_JOB_FLUSH 1 /* rd_kafka_flush() */
#define KDP_JOB_CLOSE 2 /* the consumer closed, the handle destroyed */
#define KDP_JOB_COMMITTED 3 /* rd_kafka_committed() */
#define KDP_JOB_TXN_INIT 4 /* rd_kafka_init_transactions() */
#define KDP_JOB_TXN_BEGIN 5 /* rd_kafka_begin_transaction() */
#define KDP_JOB_TXN_COMMIT 6 /* rd_kafka_commit_transaction() */
#define KDP_JOB_TXN_ABORT 7 /* rd_kafka_abort_transaction() */
#define KDP_JOB_TXN_OFFSETS 8 /* rd_kafka_send_offsets_to_transaction() */
#define KDP_JOB_SEEK 9 /* rd_kafka_seek_partitions() */

/* A partition of a list (rebalance, commit result, committed offsets). Its property names. */
#define KDP_PARTITION_TOPIC "topic"
#define KDP_PARTITION_PARTITION "partition"
#define KDP_PARTITION_OFFSET "offset"
#define KDP_PARTITION_METADATA "metadata"
#define KDP_PARTITION_ERROR "error"

/* Messages consume() read: one new buffer per batch, of which keys and values are views. Its property names. */
#define KDP_BATCH_DATA "data"
#define KDP_BATCH_TABLE "table"
#define KDP_BATCH_HEADERS "headers"
#define KDP_BATCH_TOPICS "topics"

/* The addon's functions: each napi_value kdp_<name in snake case>(napi_env, napi_callback_info), exported as <name>. */
#define KDP_FUNCTIONS(X) \
  X("version", kdp_version) \
  X("errstr", kdp_errstr) \
  X("contract", kdp_contract) \
  X("create", kdp_create) \
  X("keepAlive", kdp_keep_alive) \
  X("outq", kdp_outq) \
  X("metadata", kdp_metadata) \
  X("flush", kdp_flush) \
  X("close", kdp_close) \
  X("produce", kdp_produce) \
  X("poll", kdp_poll) \
  X("hurry", kdp_hurry) \
  X("consume", kdp_consume) \
  X("subscribe", kdp_subscribe) \
  X("assignment", kdp_assignment) \
  X("pause", kdp_pause) \
  X("commit", kdp_commit) \
  X("committed", kdp_committed) \
  X("transaction", kdp_transaction) \
  X("sendOffsets", kdp_send_offsets) \
  X("seek", kdp_seek) \
  X("protocol", kdp_protocol) \
  X("logs", kdp_logs)
napi_value kdp_version(napi_env env, napi_callback_info info); /* the version of the librdkafka the addon runs on */
napi_value kdp_errstr(napi_env env, napi_callback_info info); /* librdkafka's description of an error code */
napi_value kdp_contract(napi_env env, napi_callback_info info); /* the contract's numbers as the addon was compiled with them (a drift test reads them) */
napi_value kdp_create(napi_env env, napi_callback_info info); /* a handle from [name, value, ...] configurations; `wake` when librdkafka has something to read, `onEvent` for each event */
napi_value kdp_keep_alive(napi_env env, napi_callback_info info); /* whether pending wake-ups keep the event loop alive */
napi_value kdp_outq(napi_env env, napi_callback_info info); /* messages in librdkafka, waiting for a report */
napi_value kdp_metadata(napi_env env, napi_callback_info info); /* the cluster's metadata (JOB_METADATA) */
napi_value kdp_flush(napi_env env, napi_callback_info info); /* waits until librdkafka has no message left (JOB_FLUSH) */
napi_value kdp_close(napi_env env, napi_callback_info info); /* closes the handle (JOB_CLOSE): what librdkafka holds is dropped */
napi_value kdp_produce(napi_env env, napi_callback_info info); /* hands messages start..end-1 to librdkafka (PRODUCE_ROW, HEADER_ROW, PRODUCED_*); returns where librdkafka's full queue stopped it */
napi_value kdp_poll(napi_env env, napi_callback_info info); /* a producer's delivery reports into the arrays (the number read); its other events to onEvent */
napi_value kdp_hurry(napi_env env, napi_callback_info info); /* sendBatch() messages were just handed over: librdkafka flushes for a moment (native/src/hurry.c) */
napi_value kdp_consume(napi_env env, napi_callback_info info); /* up to `max` messages librdkafka has now (MESSAGE_ROW, HEADER_ROW), serving its callbacks meanwhile */
napi_value kdp_subscribe(napi_env env, napi_callback_info info); /* the consumer's subscription */
napi_value kdp_assignment(napi_env env, napi_callback_info info); /* assigns or unassigns (ASSIGN_*) */
napi_value kdp_pause(napi_env env, napi_callback_info info); /* pauses or resumes partitions */
napi_value kdp_commit(napi_env env, napi_callback_info info); /* commits offsets, each with its metadata (bytes, or none); a synchronous one serves its EVENT_COMMITTED within */
napi_value kdp_committed(napi_env env, napi_callback_info info); /* the committed offsets, with their metadata (JOB_COMMITTED) */
napi_value kdp_transaction(napi_env env, napi_callback_info info); /* a producer's transactional call (JOB_TXN_INIT, _BEGIN, _COMMIT, _ABORT) on the thread pool */
napi_value kdp_send_offsets(napi_env env, napi_callback_info info); /* offsets (each with its metadata) into the open transaction (JOB_TXN_OFFSETS): the group's metadata of `consumer`, a native consumer handle (KIP-447: generation and member id), else of `groupId` alone */
napi_value kdp_seek(napi_env env, napi_callback_info info); /* a consumer's partitions read again from the offsets (JOB_SEEK) */
napi_value kdp_protocol(napi_env env, napi_callback_info info); /* the rebalance protocol: 'NONE', 'EAGER' or 'COOPERATIVE' */
napi_value kdp_logs(napi_env env, napi_callback_info info); /* a consumer's log events to onEvent, read without waiting */

/* The numbers above by name, for contract(). */
#define KDP_CONTRACT_NUMBERS(X) \
  X("PRODUCE_ROW_VALUE_AT", KDP_PRODUCE_ROW_VALUE_AT) \
  X("PRODUCE_ROW_VALUE_LENGTH", KDP_PRODUCE_ROW_VALUE_LENGTH) \
  X("PRODUCE_ROW_KEY_AT", KDP_PRODUCE_ROW_KEY_AT) \
  X("PRODUCE_ROW_KEY_LENGTH", KDP_PRODUCE_ROW_KEY_LENGTH) \
  X("PRODUCE_ROW_FIRST_HEADER", KDP_PRODUCE_ROW_FIRST_HEADER) \
  X("PRODUCE_ROW_HEADER_COUNT", KDP_PRODUCE_ROW_HEADER_COUNT) \
  X("PRODUCE_ROW_SIZE", KDP_PRODUCE_ROW_SIZE) \
  X("HEADER_ROW_NAME_AT", KDP_HEADER_ROW_NAME_AT) \
  X("HEADER_ROW_NAME_LENGTH", KDP_HEADER_ROW_NAME_LENGTH) \
  X("HEADER_ROW_VALUE_AT", KDP_HEADER_ROW_VALUE_AT) \
  X("HEADER_ROW_VALUE_LENGTH", KDP_HEADER_ROW_VALUE_LENGTH) \
  X("HEADER_ROW_SIZE", KDP_HEADER_ROW_SIZE) \
  X("MESSAGE_ROW_TOPIC", KDP_MESSAGE_ROW_TOPIC) \
  X("MESSAGE_ROW_PARTITION", KDP_MESSAGE_ROW_PARTITION) \
  X("MESSAGE_ROW_OFFSET", KDP_MESSAGE_ROW_OFFSET) \
  X("MESSAGE_ROW_TIMESTAMP", KDP_MESSAGE_ROW_TIMESTAMP) \
  X("MESSAGE_ROW_KEY_AT", KDP_MESSAGE_ROW_KEY_AT) \
  X("MESSAGE_ROW_KEY_LENGTH", KDP_MESSAGE_ROW_KEY_LENGTH) \
  X("MESSAGE_ROW_VALUE_AT", KDP_MESSAGE_ROW_VALUE_AT) \
  X("MESSAGE_ROW_VALUE_LENGTH", KDP_MESSAGE_ROW_VALUE_LENGTH) \
  X("MESSAGE_ROW_FIRST_HEADER", KDP_MESSAGE_ROW_FIRST_HEADER) \
  X("MESSAGE_ROW_HEADER_COUNT", KDP_MESSAGE_ROW_HEADER_COUNT) \
  X("MESSAGE_ROW_ERROR", KDP_MESSAGE_ROW_ERROR) \
  X("MESSAGE_ROW_SIZE", KDP_MESSAGE_ROW_SIZE) \
  X("EVENT_STATS", KDP_EVENT_STATS) \
  X("EVENT_STATS_ARGC", KDP_EVENT_STATS_ARGC) \
  X("EVENT_ERROR", KDP_EVENT_ERROR) \
  X("EVENT_ERROR_ARGC", KDP_EVENT_ERROR_ARGC) \
  X("EVENT_LOG", KDP_EVENT_LOG) \
  X("EVENT_LOG_ARGC", KDP_EVENT_LOG_ARGC) \
  X("EVENT_DELIVERY_FAILED", KDP_EVENT_DELIVERY_FAILED) \
  X("EVENT_DELIVERY_FAILED_ARGC", KDP_EVENT_DELIVERY_FAILED_ARGC) \
  X("EVENT_REBALANCE", KDP_EVENT_REBALANCE) \
  X("EVENT_REBALANCE_ARGC", KDP_EVENT_REBALANCE_ARGC) \
  X("EVENT_COMMITTED", KDP_EVENT_COMMITTED) \
  X("EVENT_COMMITTED_ARGC", KDP_EVENT_COMMITTED_ARGC) \
  X("PRODUCED_TAKEN", KDP_PRODUCED_TAKEN) \
  X("PRODUCED_UNASSIGNED", KDP_PRODUCED_UNASSIGNED) \
  X("ASSIGN_SET", KDP_ASSIGN_SET) \
  X("ASSIGN_CLEAR", KDP_ASSIGN_CLEAR) \
  X("ASSIGN_ADD", KDP_ASSIGN_ADD) \
  X("ASSIGN_REMOVE", KDP_ASSIGN_REMOVE) \
  X("JOB_METADATA", KDP_JOB_METADATA) \
  X("JOB_FLUSH", KDP_JOB_FLUSH) \
  X("JOB_CLOSE", KDP_JOB_CLOSE) \
  X("JOB_COMMITTED", KDP_JOB_COMMITTED) \
  X("JOB_TXN_INIT", KDP_JOB_TXN_INIT) \
  X("JOB_TXN_BEGIN", KDP_JOB_TXN_BEGIN) \
  X("JOB_TXN_COMMIT", KDP_JOB_TXN_COMMIT) \
  X("JOB_TXN_ABORT", KDP_JOB_TXN_ABORT) \
  X("JOB_TXN_OFFSETS", KDP_JOB_TXN_OFFSETS) \
  X("JOB_SEEK", KDP_JOB_SEEK)

#endif
