// sendBatch()'s messages without linger.ms: librdkafka waits linger.ms for more messages
// before it sends a partition's batch, unless the producer is flushing (rd_kafka_flush() makes
// it treat linger as elapsed while it runs). A caller that hands over a whole batch has no
// more to wait for, so after each hand-over of such messages a thread of the handle makes
// librdkafka flush for a moment: a pulse. (In event mode rd_kafka_flush() only waits for the
// message count, never reads the queue.)
//
// A pulse, not a flush kept up while batches are in flight: while librdkafka is flushing, the
// first message put into a partition's empty queue wakes the broker thread, which sends what is
// there at once. A hand-over made while flushing therefore leaves in many small requests
// (on a real broker, far fewer messages a request, and more broker CPU per message: the
// figures are in docs/performance.md); made before the pulse, it leaves whole, since its messages wait for linger.ms until
// the pulse wakes the brokers.
#include "hurry.h"
#include "napi.h"

/* How long one pulse keeps librdkafka flushing (ms): long enough for its brokers' threads to take what is queued. */
#define HURRY_PULSE_MS 1

/* @locality the hurry thread. */
static void *hurry_main(void *arg) {
  kdp_handle *h = arg;
  pthread_mutex_lock(&h->hurry_lock);
  while (!h->hurry_stop) {
    if (h->pulsed == h->handed) {
      pthread_cond_wait(&h->hurry_cond, &h->hurry_lock);
      continue;
    }
    // Hand-overs made during this pulse get one of their own after it.
    h->pulsed = h->handed;
    pthread_mutex_unlock(&h->hurry_lock);
    rd_kafka_flush(h->rk, HURRY_PULSE_MS);
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

/* hurry(handle): messages of a batch that should not linger were just handed over: a pulse (the first starts the thread). */
napi_value kdp_hurry(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  kdp_handle *h = kdp_call(env, info, 1, 1, argv, NULL, "hurry(handle)");
  if (h == NULL) return NULL;
  if (!h->hurry_started) {
    pthread_mutex_init(&h->hurry_lock, NULL);
    pthread_cond_init(&h->hurry_cond, NULL);
    if (pthread_create(&h->hurry_thread, NULL, hurry_main, h) != 0) return kdp_throw(env, 0, "hurry: no thread");
    h->hurry_started = 1;
  }
  pthread_mutex_lock(&h->hurry_lock);
  h->handed++;
  pthread_cond_signal(&h->hurry_cond);
  pthread_mutex_unlock(&h->hurry_lock);
  return NULL;
}
