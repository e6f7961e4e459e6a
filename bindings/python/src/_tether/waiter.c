/* waiter.c — the semaphore a thread sleeps on while it waits for a future.
 *
 * result() does not sleep inside tether_future_wait: when this was written that wait spun
 * first, yielding the CPU in a loop, which on a loaded machine hands the CPU to other
 * processes for whole time slices (bench/README.md of the library measured the cost; the
 * wait now pauses instead, and only while the actor's thread runs on another CPU). The
 * waiter sleeps on
 * its own semaphore and the future's on_done notice posts it: the same two futex hand-offs
 * as a ThreadPoolExecutor round trip.
 *
 * Lifetime: a record belongs to one thread at a time and is never freed — a thread's
 * record goes back to a free list when the thread ends — so a notice may post a record
 * whose waiter has already left (a spurious wake-up, which the waiter's loop tolerates)
 * but never freed memory.
 */
#include "tpy.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <time.h>

struct tpy_waiter {
  sem_t sem;
  struct tpy_waiter *next_free; /* g_free_lock */
};

static pthread_mutex_t g_free_lock = PTHREAD_MUTEX_INITIALIZER;
static tpy_waiter *g_free;
static pthread_key_t g_waiter_key; /* destructor: back to the free list */
static pthread_once_t g_waiter_once = PTHREAD_ONCE_INIT;
static _Thread_local tpy_waiter *t_waiter;

static void waiter_release(void *p) {
  tpy_waiter *w = p;
  pthread_mutex_lock(&g_free_lock);
  w->next_free = g_free;
  g_free = w;
  pthread_mutex_unlock(&g_free_lock);
}

static void waiter_key_init(void) { (void)pthread_key_create(&g_waiter_key, waiter_release); }

tpy_waiter *tpy_waiter_mine(void) {
  if (t_waiter != NULL) return t_waiter;
  pthread_once(&g_waiter_once, waiter_key_init);
  pthread_mutex_lock(&g_free_lock);
  tpy_waiter *w = g_free;
  if (w != NULL) g_free = w->next_free;
  pthread_mutex_unlock(&g_free_lock);
  if (w == NULL) {
    w = calloc(1, sizeof *w);
    if (w == NULL || sem_init(&w->sem, 0, 0) != 0) {
      free(w);
      return NULL;
    }
  }
  t_waiter = w;
  pthread_setspecific(g_waiter_key, w);
  return w;
}

void tpy_waiter_wake(tpy_waiter *w) { (void)sem_post(&w->sem); }

void tpy_waiter_sleep(tpy_waiter *w, int64_t ns) {
  struct timespec at;
  clock_gettime(CLOCK_REALTIME, &at);
  at.tv_sec += (time_t)(ns / 1000000000);
  at.tv_nsec += (long)(ns % 1000000000);
  if (at.tv_nsec >= 1000000000) {
    at.tv_sec += 1;
    at.tv_nsec -= 1000000000;
  }
  while (sem_timedwait(&w->sem, &at) != 0 && errno == EINTR) {
  }
}
