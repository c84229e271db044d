// N-API values in and out, the bottom of the native room: arguments read (a handle, typed
// arrays, strings, partition lists) and values made (errors, partition lists). Every other file
// calls these; these call no other file's functions.
#ifndef KDP_NAPI_H
#define KDP_NAPI_H

#include <node_api.h>
#include "handle.h"

/* An Error with `message` and, when code != 0, a numeric `code`: the one way an error is made. */
napi_value kdp_error(napi_env env, int code, const char *message);
/* Throws kdp_error(code, message); returns NULL for the caller to return. */
napi_value kdp_throw(napi_env env, int code, const char *message);
/* Throws a librdkafka rd_kafka_error_t (destroyed here); returns NULL. */
napi_value kdp_throw_error(napi_env env, rd_kafka_error_t *error);
/* The open handle an argument holds, or NULL with a JS exception pending. */
kdp_handle *kdp_handle_of(napi_env env, napi_value value);
/* A typed array argument of type `want`: its data and length (0 with a JS exception pending on another type). */
int kdp_typed(napi_env env, napi_value value, napi_typedarray_type want, void **data, size_t *length);
/* A string argument as a malloc'd C string (NULL with an exception pending naming `what`). */
char *kdp_string(napi_env env, napi_value value, const char *what);
/* A JS array of strings as malloc'd C strings (NULL with an exception pending); kdp_free_strings frees them. */
char **kdp_strings(napi_env env, napi_value array, uint32_t *count);
void kdp_free_strings(char **strings, uint32_t count);
/*
 * A JS array of topic names, an Int32Array of partitions and optionally (else undefined) a
 * Float64Array of offsets and an array of metadata (a Uint8Array, or undefined, per partition)
 * as a list; NULL with a JS exception pending.
 */
rd_kafka_topic_partition_list_t *kdp_partitions(napi_env env, napi_value topics, napi_value partitions, napi_value offsets, napi_value metadata);
/* A list as a JS array of NativePartition (native/contract.js). */
napi_value kdp_partitions_value(napi_env env, const rd_kafka_topic_partition_list_t *list);
/* The argument count a call needs: the arguments into argv, or NULL with "name(usage)" thrown. */
napi_value *kdp_args(napi_env env, napi_callback_info info, size_t want, napi_value *argv, const char *usage);
/*
 * A call on a handle: at least `want` and at most `max` arguments into argv (their count into
 * *argc unless NULL; the missing ones undefined), and the open handle of the first; NULL with
 * a JS exception pending (too few arguments: `usage` thrown).
 */
kdp_handle *kdp_call(napi_env env, napi_callback_info info, size_t want, size_t max, napi_value *argv, size_t *argc, const char *usage);

#endif
