/*
 * actor_thread_local.c — state set by an actor's constructor is there in its methods.
 *
 * Ray's threaded actors run the constructor on one thread and methods on others, so a
 * thread-local set in __init__ is gone in the methods (ray-project/ray#46336). A tether
 * actor runs its constructor, every default-group method and its destructor on ONE pinned
 * OS thread. Here the constructor sets a thread-local to 42, and a method returns
 * 1 + that thread-local: 43, computed on the thread that ran the constructor.
 *
 * Exits 0 when the method returned 43 on the constructor's thread (gettid()), else 1.
 */
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#include <tether/tether.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SEC ((int64_t)1000000000)

static __thread int answer; /* one per OS thread; 0 on every new thread */

static long os_tid(void) { return (long)syscall(SYS_gettid); }

/* The actor's state: where its constructor and destructor ran. Written on the actor's
 * thread; read by main only after a wait on that thread's work. */
typedef struct where {
  long ctor_tid;
  long dtor_tid;
} where;

static tether_status ctor(tether_task *t, void *arg, void **state_out) {
  where *w = (where *)arg;
  (void)t;
  answer = 42;
  w->ctor_tid = os_tid();
  *state_out = w;
  return TETHER_OK;
}

static void dtor(void *state) { ((where *)state)->dtor_tid = os_tid(); }

/* add_one: result = 1 + the thread-local the constructor set; arg receives its tid. */
static tether_status add_one(tether_task *t, void *state, void *arg) {
  int *result = (int *)malloc(sizeof *result);
  (void)state;
  if (result == NULL) return tether_task_fail(t, 1, "out of memory");
  *result = 1 + answer;
  *(long *)arg = os_tid();
  return tether_task_set_result(t, result, free);
}

int main(void) {
  where w = {0, 0};
  long method_tid = 0;
  tether_actor_options o;
  tether_actor a = {0};
  tether_future f = {0};
  int32_t state = -1;
  void *result = NULL;
  int value = 0, ok;

  tether_actor_options_init(&o);
  o.name = "thread-local";
  if (tether_actor_create(&o, ctor, dtor, &w, NULL, &a) != TETHER_OK) return 1;
  if (tether_actor_call(a, NULL, add_one, &method_tid, NULL, &f) != TETHER_OK) return 1;
  if (tether_future_wait(f, 10 * SEC) != TETHER_OK) return 1;
  tether_future_poll(f, &state);
  if (state != TETHER_SUCCEEDED || tether_future_take_result(f, &result) != TETHER_OK) return 1;
  value = *(int *)result;
  free(result);
  tether_future_release(f);
  if (tether_actor_release(a) != TETHER_OK) return 1; /* runs the destructor, waits for it */

  printf("constructor set a thread-local to 42; the method returned 1 + 42 = %d\n", value);
  printf("constructor on thread %ld, method on thread %ld, destructor on thread %ld: %s\n", w.ctor_tid,
         method_tid, w.dtor_tid,
         w.ctor_tid == method_tid && method_tid == w.dtor_tid ? "the same OS thread" : "DIFFERENT threads");
  ok = value == 43 && w.ctor_tid == method_tid && method_tid == w.dtor_tid && method_tid != os_tid();
  return ok ? 0 : 1;
}
