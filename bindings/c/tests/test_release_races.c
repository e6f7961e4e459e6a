/*
 * test_release_races.c — a handle released while others wait on what it names, and the
 * executors nobody can run any more (defects g, h, i, n, o).
 *
 *   g  an actor on a MANUAL executor whose handle was released: calls SHUTDOWN, queued
 *      ones cancelled (args dropped), stop and release return
 *   h  submit_timeout / call_timeout with timeout -1 waiting for room: INVALID_HANDLE
 *      promptly when another thread releases the handle
 *   i  an executor released from a nested thread of one of its own tasks: joined, no leak
 *   n  idle_spin_ns = INT64_MAX: deadlines saturate (no signed overflow)
 *   o  tether_future_wait_any that times out leaves nothing behind on the futures
 */
#define _GNU_SOURCE
#include "actor_fixtures.h"

#include <stdint.h>

static tether_status plain_ctor(tether_task *t, void *arg, void **state_out) {
  (void)t;
  *state_out = arg;
  return TETHER_OK;
}

static tether_status m_blocker_b(tether_task *t, void *state, void *arg) {
  (void)state;
  return blocker_fn(t, arg);
}

static void *run_once(void *p) {
  CHECK_ST(tether_executor_run(*(tether_executor *)p, 0), TETHER_OK);
  return NULL;
}

/* g */
TEST(manual_executor_released_under_live_actor) {
  tether_executor_options eo = exec_opts("manual");
  tether_executor e;
  tether_actor a;
  tether_future queued;
  counter drops;
  counter_init(&drops);
  eo.manual = 1;
  CHECK_ST(tether_executor_create(&eo, &e), TETHER_OK);
  tether_actor_options o = actor_opts("on-manual", NULL, 0);
  o.executor = e;
  CHECK_ST(tether_actor_create(&o, plain_ctor, NULL, NULL, NULL, &a), TETHER_OK);
  pthread_t driver; /* the constructor runs on a thread of its own, which then leaves */
  CHECK_EQ(pthread_create(&driver, NULL, run_once, &e), 0);
  join_thread(driver);
  CHECK_EQ(actor_state(a), TETHER_ACTOR_ALIVE);
  CHECK_ST(tether_actor_call(a, NULL, m_ok, &drops, count_drop, &queued), TETHER_OK);
  CHECK_ST(tether_actor_call(a, NULL, m_ok, &drops, count_drop, NULL), TETHER_OK);
  /* Released by a thread that does not drive it: nothing can run its work any more. */
  CHECK_ST(tether_executor_release(e), TETHER_OK);
  CHECK_EQ(counter_get(&drops), 2);  /* both queued calls cancelled, args dropped */
  CHECK_ST(tether_future_wait(queued, T_LONG), TETHER_OK);
  CHECK_EQ(future_poll(queued), TETHER_CANCELLED);
  CHECK_ST(tether_future_release(queued), TETHER_OK);
  CHECK_ST(tether_actor_call(a, NULL, m_ok, &drops, count_drop, NULL), TETHER_E_SHUTDOWN);
  CHECK_ST(tether_actor_call(a, NULL, m_ok, &drops, count_drop, &queued), TETHER_E_SHUTDOWN);
  CHECK_EQ(counter_get(&drops), 4);  /* refused calls drop their args too */
  CHECK_ST(tether_actor_stop(a, TETHER_STOP_DRAIN, T_LONG), TETHER_OK);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  counter_destroy(&drops);
}

/* h */
typedef struct room_waiter {
  tether_executor exec;
  tether_actor actor;
  counter done;   /* FIRST: set to 1 when the waiting call returned */
  counter status;
  counter drops;
} room_waiter;

static void *wait_for_room(void *p) {
  room_waiter *w = p;
  tether_status st;
  if (w->exec.id != 0) {
    st = tether_executor_submit_timeout(w->exec, ok_fn, &w->drops, count_drop, NULL, -1);
  } else {
    st = tether_actor_call_timeout(w->actor, NULL, m_ok, &w->drops, count_drop, NULL, -1);
  }
  counter_set(&w->status, st);
  counter_set(&w->done, 1);
  return NULL;
}

static void release_while_waiting_for_room(int actor) {
  room_waiter w;
  blocker b;
  pthread_t th;
  memset(&w, 0, sizeof w);
  counter_init(&w.done);
  counter_init(&w.status);
  counter_init(&w.drops);
  blocker_init(&b);
  tether_executor_options eo = exec_opts("bounded");
  eo.queue_capacity = 1;
  tether_executor e;
  CHECK_ST(tether_executor_create(&eo, &e), TETHER_OK);
  if (actor) {
    tether_actor_options o = actor_opts("bounded-actor", NULL, 0);
    o.mailbox_capacity = 1;
    CHECK_ST(tether_actor_create(&o, plain_ctor, NULL, NULL, NULL, &w.actor), TETHER_OK);
    CHECK_ST(tether_actor_call(w.actor, NULL, m_blocker_b, &b, NULL, NULL), TETHER_OK);
    CHECK(event_wait(&b.started, T_LONG));
    CHECK_ST(tether_actor_call(w.actor, NULL, m_ok, NULL, NULL, NULL), TETHER_OK); /* fills it */
  } else {
    w.exec = e;
    CHECK_ST(tether_executor_submit(e, blocker_fn, &b, NULL, NULL), TETHER_OK);
    CHECK(event_wait(&b.started, T_LONG));
    CHECK_ST(tether_executor_submit(e, ok_fn, NULL, NULL, NULL), TETHER_OK); /* fills it */
  }
  CHECK_EQ(pthread_create(&th, NULL, wait_for_room, &w), 0);
  /* The waiter is (or will be) blocked for room: nothing returns until the release. */
  CHECK(!counter_wait(&w.done, 1, T_SHORT));
  if (actor) {
    CHECK_ST(tether_actor_release_nowait(w.actor), TETHER_OK);
  } else {
    CHECK_ST(tether_executor_release_nowait(e), TETHER_OK);
  }
  CHECK(counter_wait(&w.done, 1, T_LONG)); /* promptly, while the blocker still blocks */
  CHECK_EQ(counter_get(&w.status), TETHER_E_INVALID_HANDLE);
  CHECK_EQ(counter_get(&w.drops), 1);
  join_thread(th);
  event_set(&b.gate);
  if (actor) CHECK_ST(tether_executor_release(e), TETHER_OK);
  CHECK_SOON(tether_debug_unjoined_threads() == 0);
  blocker_destroy(&b);
}

TEST(submit_timeout_forever_sees_release) { release_while_waiting_for_room(0); }
TEST(call_timeout_forever_sees_release) { release_while_waiting_for_room(1); }

/* i */
typedef struct self_release {
  tether_executor exec;
  counter released; /* FIRST */
  counter status;
} self_release;

static tether_status nested_releases_exec(tether_task *t, void *arg) {
  (void)t;
  self_release *s = arg;
  counter_set(&s->status, tether_executor_release(s->exec));
  counter_set(&s->released, 1);
  return TETHER_OK;
}

static tether_status task_spawns_releaser(tether_task *t, void *arg) {
  CHECK_ST(tether_task_spawn(t, "releaser", nested_releases_exec, arg, NULL), TETHER_OK);
  return TETHER_OK;
}

TEST(executor_released_from_own_nested_thread) {
  self_release s;
  memset(&s, 0, sizeof s);
  counter_init(&s.released);
  counter_init(&s.status);
  CHECK_ST(tether_executor_create(NULL, &s.exec), TETHER_OK);
  CHECK_ST(tether_executor_submit(s.exec, task_spawns_releaser, &s, NULL, NULL), TETHER_OK);
  CHECK(counter_wait(&s.released, 1, T_LONG));
  CHECK_EQ(counter_get(&s.status), TETHER_OK);
  CHECK_SOON(tether_debug_unjoined_threads() == 0); /* the releaser itself joined afterwards */
}

/* n */
TEST(executor_idle_spin_saturates) {
  tether_executor_options o = exec_opts("spin-max");
  tether_executor e;
  tether_future f;
  o.idle_spin_ns = INT64_MAX;
  CHECK_ST(tether_executor_create(&o, &e), TETHER_OK);
  CHECK_ST(tether_executor_submit(e, ok_fn, NULL, NULL, &f), TETHER_OK);
  CHECK_ST(tether_future_wait(f, T_LONG), TETHER_OK);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_executor_release(e), TETHER_OK); /* the close ends the (endless) spin */
}

/* o */
static long rss_kib(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL) return -1;
  if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
  fclose(f);
  return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static int memory_is_measurable(void) {
#if defined(__SANITIZE_ADDRESS__)
  return 0; /* freed memory stays in ASan's quarantine */
#else
  const char *p = getenv("LD_PRELOAD");
  return !(p != NULL && strstr(p, "valgrind") != NULL);
#endif
}

TEST(future_wait_any_timeouts_leave_nothing) {
  tether_executor_options o = exec_opts("never-run-yet");
  tether_executor e;
  tether_future fs[2];
  size_t index = 99;
  o.manual = 1; /* its futures stay pending until this thread runs it */
  CHECK_ST(tether_executor_create(&o, &e), TETHER_OK);
  CHECK_ST(tether_executor_submit(e, ok_fn, NULL, NULL, &fs[0]), TETHER_OK);
  CHECK_ST(tether_executor_submit(e, ok_fn, NULL, NULL, &fs[1]), TETHER_OK);
  const long n = scaled(50000);
  for (long i = 0; i < n / 10; ++i) CHECK_ST(tether_future_wait_any(fs, 2, 1, &index), TETHER_E_TIMEOUT);
  const long before = rss_kib();
  for (long i = 0; i < n; ++i) CHECK_ST(tether_future_wait_any(fs, 2, 1, &index), TETHER_E_TIMEOUT);
  const long after = rss_kib();
  /* Each timed-out wait used to leave ~184 bytes on each future: 50k waits on two, 18 MB. */
  if (memory_is_measurable() && after - before > 6 * 1024)
    harness_fail(__FILE__, __LINE__, "RSS grew %ld KiB over %ld timed-out waits", after - before, n);
  CHECK_ST(tether_executor_run(e, 0), TETHER_OK);
  CHECK_ST(tether_future_wait_any(fs, 2, T_LONG, &index), TETHER_OK);
  CHECK_EQ(index, 0);
  CHECK_ST(tether_future_wait(fs[1], T_LONG), TETHER_OK);
  CHECK_ST(tether_future_release(fs[0]), TETHER_OK);
  CHECK_ST(tether_future_release(fs[1]), TETHER_OK);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
}
