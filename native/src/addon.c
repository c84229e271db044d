// The module's exports: the functions native/contract.js lists (native/src/contract.h's
// KDP_FUNCTIONS), each defined in the file of its role:
//   napi.c     N-API values in and out (arguments, errors, partition lists)
//   events.c   every event sent to onEvent (librdkafka's queue and its consumer callbacks)
//   hurry.c    the thread that sends sendBatch() messages without linger.ms
//   handle.c   a handle's life: create, wake-ups, keepAlive, outq, topic handles
//   jobs.c     the calls on libuv's thread pool: metadata, flush, close, committed, transactions, seek
//   produce.c  a producer: produce (many messages per call) and poll (delivery reports in bulk)
//   consume.c  a consumer: consume, subscribe, assignment, pause, commit, protocol, logs
// and here: version, errstr and contract.
#include "contract.h"
#include "napi.h"

napi_value kdp_version(napi_env env, napi_callback_info info) {
  napi_value out;
  napi_create_string_utf8(env, rd_kafka_version_str(), NAPI_AUTO_LENGTH, &out);
  return out;
}

/* errstr(code): librdkafka's description of an error code (rd_kafka_err2str). */
napi_value kdp_errstr(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  int32_t code = 0;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc > 0) napi_get_value_int32(env, argv[0], &code);
  napi_create_string_utf8(env, rd_kafka_err2str((rd_kafka_resp_err_t)code), NAPI_AUTO_LENGTH, &out);
  return out;
}

/* contract(): { NAME: value } for every number of the contract, as compiled here. */
napi_value kdp_contract(napi_env env, napi_callback_info info) {
  napi_value out, v;
  napi_create_object(env, &out);
#define KDP_NUMBER(name, value) \
  napi_create_int32(env, value, &v); \
  napi_set_named_property(env, out, name, v);
  KDP_CONTRACT_NUMBERS(KDP_NUMBER)
#undef KDP_NUMBER
  return out;
}

static napi_value init(napi_env env, napi_value exports) {
#define KDP_EXPORT(name, fn) {name, NULL, fn, NULL, NULL, NULL, napi_default, NULL},
  napi_property_descriptor props[] = {KDP_FUNCTIONS(KDP_EXPORT)};
#undef KDP_EXPORT
  napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
