// sendBatch()'s messages without linger.ms: librdkafka waits linger.ms for more messages
// before it sends a partition's batch, unless the producer is flushing (rd_kafka_flush() makes
// it treat linger as elapsed while it runs). A caller that hands over a whole batch has no more
// to wait for, so while such batches are in flight a thread of the handle keeps a flush going
// (in event mode rd_kafka_flush() only waits for the message count, never reads the queue).
#include <errno.h>
#include <time.h>
#include "handle.h"

/* How long one flush waits (ms): the thread looks at `urgent` again this often. */
#define HURRY_SLICE_MS 2

static void *hurry_main(void *arg) {
  kdp_handle *h = arg;
  pthread_mutex_lock(&h->hurry_lock);
  while (!h->hurry_stop) {
    if (h->urgent <= 0) {
      pthread_cond_wait(&h->hurry_cond, &h->hurry_lock);
      continue;
    }
    pthread_mutex_unlock(&h->hurry_lock);
    if (rd_kafka_flush(h->rk, HURRY_SLICE_MS) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      // Nothing left in librdkafka: the batches' reports are being read; do not spin meanwhile.
      struct timespec pause = {0, 200000};
      nanosleep(&pause, NULL);
    }
    pthread_mutex_lock(&h->hurry_lock);
  }
  pthread_mutex_unlock(&h->hurry_lock);
  return NULL;
}

void kdp_hurry_stop(kdp_handle *h) {
  if (!h->hurry_started) return;
  pthread_mutex_lock(&h->hurry_lock);
  h->hurry_stop = 1;
  pthread_cond_signal(&h->hurry_cond);
  pthread_mutex_unlock(&h->hurry_lock);
  pthread_join(h->hurry_thread, NULL);
  h->hurry_started = 0;
}

/* hurry(handle, delta): one more (1) or one less (-1) batch in flight that should not linger; 0: its messages were just handed over. */
napi_value kdp_hurry(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  kdp_handle *h = kdp_handle_of(env, argv[0]);
  if (h == NULL) return NULL;
  int32_t delta = 0;
  napi_get_value_int32(env, argv[1], &delta);
  if (delta == 0) {
    // Messages of such a batch were just handed over: wake the brokers now (a flush that does
    // not wait), while the thread below keeps the flushing state up between its waits.
    rd_kafka_flush(h->rk, 0);
    return NULL;
  }
  if (!h->hurry_started) {
    pthread_mutex_init(&h->hurry_lock, NULL);
    pthread_cond_init(&h->hurry_cond, NULL);
    if (pthread_create(&h->hurry_thread, NULL, hurry_main, h) != 0) return kdp_throw(env, 0, "hurry: no thread");
    h->hurry_started = 1;
  }
  pthread_mutex_lock(&h->hurry_lock);
  h->urgent += delta;
  if (h->urgent < 0) h->urgent = 0;
  pthread_cond_signal(&h->hurry_cond);
  pthread_mutex_unlock(&h->hurry_lock);
  return NULL;
}
