// The events the addon calls onEvent(kind, ...args) with (kinds and arguments: native/contract.js),
// all made here: from librdkafka's event queue (a producer) and from its callbacks (a consumer,
// served on the JS thread by a consume or commit call).
#ifndef KDP_EVENTS_H
#define KDP_EVENTS_H

#include "handle.h"

/* onEvent(kind, ...args): the one way an event reaches JS; 0 when JS threw (left pending). */
int kdp_emit(napi_env env, kdp_handle *h, int kind, napi_value *args, size_t argc);
/* A statistics, error or log event of librdkafka's queue to onEvent (other types are ignored); 0 when JS threw. */
int kdp_emit_queued(napi_env env, kdp_handle *h, rd_kafka_event_t *ev);
/* EVENT_ERROR for a consumer error read as a message; 0 when JS threw. */
int kdp_emit_error(napi_env env, kdp_handle *h, int code, const char *reason, int fatal);
/* EVENT_DELIVERY_FAILED for a report of a message produced without a slot; 0 when JS threw. */
int kdp_emit_delivery_failed(napi_env env, kdp_handle *h, const rd_kafka_message_t *m);
/* A consumer's configuration: its callbacks (rebalance, commit, error, statistics, log) call onEvent. */
void kdp_consumer_callbacks(rd_kafka_conf_t *conf, kdp_handle *h);

#endif
