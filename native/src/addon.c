// The module's exports. The engine's parts: handle.c (a client handle: configuration, wake-ups,
// events, metadata, flush, close) and produce.c (many messages per call, delivery reports in bulk), hurry.c (sendBatch() without linger).
#include "handle.h"

static napi_value version(napi_env env, napi_callback_info info) {
  napi_value out;
  napi_create_string_utf8(env, rd_kafka_version_str(), NAPI_AUTO_LENGTH, &out);
  return out;
}

/* errstr(code): librdkafka's description of an error code (rd_kafka_err2str). */
static napi_value errstr(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  int32_t code = 0;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc > 0) napi_get_value_int32(env, argv[0], &code);
  napi_create_string_utf8(env, rd_kafka_err2str((rd_kafka_resp_err_t)code), NAPI_AUTO_LENGTH, &out);
  return out;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
    {"version", NULL, version, NULL, NULL, NULL, napi_default, NULL},
    {"errstr", NULL, errstr, NULL, NULL, NULL, napi_default, NULL},
    {"create", NULL, kdp_create, NULL, NULL, NULL, napi_default, NULL},
    {"metadata", NULL, kdp_metadata, NULL, NULL, NULL, napi_default, NULL},
    {"flush", NULL, kdp_flush, NULL, NULL, NULL, napi_default, NULL},
    {"close", NULL, kdp_close, NULL, NULL, NULL, napi_default, NULL},
    {"poll", NULL, kdp_poll, NULL, NULL, NULL, napi_default, NULL},
    {"produce", NULL, kdp_produce, NULL, NULL, NULL, napi_default, NULL},
    {"outq", NULL, kdp_outq, NULL, NULL, NULL, napi_default, NULL},
    {"hurry", NULL, kdp_hurry, NULL, NULL, NULL, napi_default, NULL},
    {"consume", NULL, kdp_consume, NULL, NULL, NULL, napi_default, NULL},
    {"subscribe", NULL, kdp_subscribe, NULL, NULL, NULL, napi_default, NULL},
    {"assignment", NULL, kdp_assignment, NULL, NULL, NULL, napi_default, NULL},
    {"pause", NULL, kdp_pause, NULL, NULL, NULL, napi_default, NULL},
    {"commit", NULL, kdp_commit, NULL, NULL, NULL, napi_default, NULL},
    {"committed", NULL, kdp_committed, NULL, NULL, NULL, napi_default, NULL},
    {"protocol", NULL, kdp_protocol, NULL, NULL, NULL, napi_default, NULL},
    {"logs", NULL, kdp_logs, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
