// N-API values in and out (napi.h): the helpers every other file of the room uses.
#include <stdlib.h>
#include <string.h>
#include "contract.h"
#include "napi.h"

napi_value kdp_error(napi_env env, int code, const char *message) {
  napi_value msg, err;
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &msg);
  napi_create_error(env, NULL, msg, &err);
  if (code != 0) {
    napi_value c;
    napi_create_int32(env, code, &c);
    napi_set_named_property(env, err, "code", c);
  }
  return err;
}

napi_value kdp_throw(napi_env env, int code, const char *message) {
  napi_throw(env, kdp_error(env, code, message));
  return NULL;
}

napi_value kdp_throw_error(napi_env env, rd_kafka_error_t *error) {
  napi_value err = kdp_error(env, rd_kafka_error_code(error), rd_kafka_error_string(error));
  rd_kafka_error_destroy(error);
  napi_throw(env, err);
  return NULL;
}

napi_value *kdp_args(napi_env env, napi_callback_info info, size_t want, napi_value *argv, const char *usage) {
  size_t argc = want;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc < want) {
    kdp_throw(env, 0, usage);
    return NULL;
  }
  return argv;
}

kdp_handle *kdp_call(napi_env env, napi_callback_info info, size_t want, size_t max, napi_value *argv, size_t *argc, const char *usage) {
  size_t n = max;
  if (napi_get_cb_info(env, info, &n, argv, NULL, NULL) != napi_ok) return NULL;
  if (n < want) {
    kdp_throw(env, 0, usage);
    return NULL;
  }
  if (argc != NULL) *argc = n;
  return kdp_handle_of(env, argv[0]);
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

char *kdp_string(napi_env env, napi_value value, const char *what) {
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

char **kdp_strings(napi_env env, napi_value array, uint32_t *count) {
  bool is;
  if (napi_is_array(env, array, &is) != napi_ok || !is) {
    kdp_throw(env, 0, "topics must be an array of strings");
    return NULL;
  }
  napi_get_array_length(env, array, count);
  char **out = calloc(*count + 1, sizeof *out);
  for (uint32_t i = 0; i < *count; i++) {
    napi_value v;
    napi_get_element(env, array, i, &v);
    out[i] = kdp_string(env, v, "a topic");
    if (out[i] == NULL) {
      kdp_free_strings(out, i);
      return NULL;
    }
  }
  return out;
}

void kdp_free_strings(char **strings, uint32_t count) {
  for (uint32_t i = 0; i < count; i++) free(strings[i]);
  free(strings);
}

/* Partition i's metadata from a JS array of Uint8Array | undefined, copied onto `p` (librdkafka frees it with the list). */
static int metadata_of(napi_env env, napi_value metadata, uint32_t i, rd_kafka_topic_partition_t *p) {
  napi_value v;
  napi_valuetype type;
  if (napi_get_element(env, metadata, i, &v) != napi_ok || napi_typeof(env, v, &type) != napi_ok) return 0;
  if (type == napi_undefined || type == napi_null) return 1;
  uint8_t *bytes;
  size_t len;
  if (!kdp_typed(env, v, napi_uint8_array, (void **)&bytes, &len)) return 0;
  p->metadata = malloc(len > 0 ? len : 1);
  memcpy(p->metadata, bytes, len);
  p->metadata_size = len;
  return 1;
}

rd_kafka_topic_partition_list_t *kdp_partitions(napi_env env, napi_value topics, napi_value partitions, napi_value offsets, napi_value metadata) {
  uint32_t n;
  char **names = kdp_strings(env, topics, &n);
  if (names == NULL) return NULL;
  int32_t *parts;
  size_t len;
  if (!kdp_typed(env, partitions, napi_int32_array, (void **)&parts, &len) || len < n) {
    kdp_free_strings(names, n);
    if (len < n) kdp_throw(env, 0, "fewer partitions than topics");
    return NULL;
  }
  double *offs = NULL;
  napi_valuetype type = napi_undefined;
  if (offsets != NULL) napi_typeof(env, offsets, &type);
  if (type != napi_undefined && (!kdp_typed(env, offsets, napi_float64_array, (void **)&offs, &len) || len < n)) {
    kdp_free_strings(names, n);
    return NULL;
  }
  int with_metadata = 0;
  if (metadata != NULL) {
    bool is = false;
    napi_is_array(env, metadata, &is);
    with_metadata = is;
  }
  rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new((int)n);
  for (uint32_t i = 0; i < n; i++) {
    rd_kafka_topic_partition_t *p = rd_kafka_topic_partition_list_add(list, names[i], parts[i]);
    if (offs != NULL) p->offset = (int64_t)offs[i];
    if (with_metadata && !metadata_of(env, metadata, i, p)) {
      kdp_free_strings(names, n);
      rd_kafka_topic_partition_list_destroy(list);
      return NULL;
    }
  }
  kdp_free_strings(names, n);
  return list;
}

napi_value kdp_partitions_value(napi_env env, const rd_kafka_topic_partition_list_t *list) {
  napi_value out, v;
  napi_create_array_with_length(env, list ? (size_t)list->cnt : 0, &out);
  for (int i = 0; list && i < list->cnt; i++) {
    const rd_kafka_topic_partition_t *p = &list->elems[i];
    napi_value o;
    napi_create_object(env, &o);
    napi_create_string_utf8(env, p->topic, NAPI_AUTO_LENGTH, &v);
    napi_set_named_property(env, o, KDP_PARTITION_TOPIC, v);
    napi_create_int32(env, p->partition, &v);
    napi_set_named_property(env, o, KDP_PARTITION_PARTITION, v);
    napi_create_double(env, (double)p->offset, &v);
    napi_set_named_property(env, o, KDP_PARTITION_OFFSET, v);
    if (p->metadata != NULL && p->metadata_size > 0) {
      napi_create_buffer_copy(env, p->metadata_size, p->metadata, NULL, &v);
      napi_set_named_property(env, o, KDP_PARTITION_METADATA, v);
    }
    if (p->err) {
      napi_create_int32(env, p->err, &v);
      napi_set_named_property(env, o, KDP_PARTITION_ERROR, v);
    }
    napi_set_element(env, out, i, o);
  }
  return out;
}
