/*
 * test_actor_nested.c — an actor's end waits for ALL of its calls' work: the nested
 * threads its constructor and methods spawn belong to the actor (defects a-e).
 *
 *   a  a constructor's nested threads settling while the actor ends: no use after free
 *      (a stress loop; asan and tsan check it)
 *   b  tether_actor_release(own) from a method's nested thread returns (the release
 *      completes once the method and its nested threads end); tether_task_actor there
 *      is the actor
 *   c  tether_actor_stop(own, DRAIN, -1) from such a thread is TETHER_E_DEADLOCK
 *   d  the destructor runs only after every nested thread of a FAILED call has ended
 *   e  a failing nested thread of the constructor makes the actor DEAD with its cause
 */
#define _GNU_SOURCE
#include "actor_fixtures.h"

typedef struct life {
  counter dtors;     /* FIRST member: the destructor's runs */
  counter nested_ended;
  counter order_bad; /* the destructor ran while a nested thread was live */
  event gate;        /* nested threads wait (bounded) for it */
  event nested_started;
  tether_actor self; /* the actor's own handle, for calls from its nested threads */
  counter released;  /* a nested thread's release returned */
  counter stop_status;
  counter task_actor_ok;
} life;

static void life_init(life *l) {
  memset(l, 0, sizeof *l);
  counter_init(&l->dtors);
  counter_init(&l->nested_ended);
  counter_init(&l->order_bad);
  event_init(&l->gate);
  event_init(&l->nested_started);
  counter_init(&l->released);
  counter_init(&l->stop_status);
  counter_set(&l->stop_status, -1);
  counter_init(&l->task_actor_ok);
}

static void life_destroy(life *l) {
  counter_destroy(&l->dtors);
  counter_destroy(&l->nested_ended);
  counter_destroy(&l->order_bad);
  event_destroy(&l->gate);
  event_destroy(&l->nested_started);
  counter_destroy(&l->released);
  counter_destroy(&l->stop_status);
  counter_destroy(&l->task_actor_ok);
}

static tether_status life_ctor(tether_task *t, void *arg, void **state_out) {
  (void)t;
  *state_out = arg;
  return TETHER_OK;
}

static void life_dtor(void *state) {
  life *l = state;
  /* Every nested thread spawned so far must have ended (each adds 1 before returning). */
  if (event_is_set(&l->nested_started) && counter_get(&l->nested_ended) == 0) counter_add(&l->order_bad, 1);
  counter_add(&l->dtors, 1);
}

static tether_status nested_gated(tether_task *t, void *arg) {
  (void)t;
  life *l = arg;
  event_set(&l->nested_started);
  if (!event_wait(&l->gate, T_LONG)) harness_fail(__FILE__, __LINE__, "nested: gate never opened");
  counter_add(&l->nested_ended, 1);
  return TETHER_OK;
}

static tether_status m_spawn_then_fail(tether_task *t, void *state, void *arg) {
  (void)arg;
  CHECK_ST(tether_task_spawn(t, "worker", nested_gated, state, NULL), TETHER_OK);
  return tether_task_fail(t, 3, "the method failed; its worker runs on");
}

/* d */
TEST(actor_dtor_waits_for_nested_threads_of_failed_call) {
  life l;
  tether_actor a;
  tether_future f;
  life_init(&l);
  tether_actor_options o = actor_opts("nested-life", NULL, 0);
  CHECK_ST(tether_actor_create(&o, life_ctor, life_dtor, &l, NULL, &a), TETHER_OK);
  CHECK_ST(tether_actor_call(a, NULL, m_spawn_then_fail, NULL, NULL, &f), TETHER_OK);
  CHECK(event_wait(&l.nested_started, T_LONG));
  CHECK_ST(tether_future_wait(f, T_LONG), TETHER_OK);
  CHECK_EQ(future_poll(f), TETHER_FAILED); /* the call failed at once ... */
  CHECK_ST(tether_future_release(f), TETHER_OK);
  /* ... but its worker runs: the actor cannot end yet. */
  CHECK_ST(tether_actor_stop(a, TETHER_STOP_DRAIN, T_SHORT), TETHER_E_TIMEOUT);
  CHECK_EQ(counter_get(&l.dtors), 0);
  event_set(&l.gate);
  CHECK_ST(tether_actor_stop(a, TETHER_STOP_DRAIN, T_LONG), TETHER_OK);
  CHECK_EQ(counter_get(&l.dtors), 1);
  CHECK_EQ(counter_get(&l.order_bad), 0);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(tether_debug_unjoined_threads(), 0);
  life_destroy(&l);
}

/* The same with fire and forget: the failure is kept, the worker still awaited. */
TEST(actor_dtor_waits_for_nested_threads_of_failed_tell) {
  life l;
  tether_actor a;
  life_init(&l);
  tether_actor_options o = actor_opts("nested-tell", NULL, 0);
  CHECK_ST(tether_actor_create(&o, life_ctor, life_dtor, &l, NULL, &a), TETHER_OK);
  CHECK_ST(tether_actor_call(a, NULL, m_spawn_then_fail, NULL, NULL, NULL), TETHER_OK);
  CHECK(event_wait(&l.nested_started, T_LONG));
  CHECK_ST(tether_actor_stop(a, TETHER_STOP_DRAIN, T_SHORT), TETHER_E_TIMEOUT);
  CHECK_EQ(counter_get(&l.dtors), 0);
  event_set(&l.gate);
  CHECK_ST(tether_actor_stop(a, TETHER_STOP_DRAIN, T_LONG), TETHER_OK);
  CHECK_EQ(counter_get(&l.dtors), 1);
  CHECK_EQ(counter_get(&l.order_bad), 0);
  CHECK_EQ(actor_stats(a).failed, 1);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  life_destroy(&l);
}

/* b, c: a method's nested thread stops, then releases, its own actor. */
static tether_status nested_ends_own_actor(tether_task *t, void *arg) {
  life *l = arg;
  tether_actor mine = {0};
  if (tether_task_actor(t, &mine) == TETHER_OK && mine.id == l->self.id) counter_set(&l->task_actor_ok, 1);
  counter_set(&l->stop_status, tether_actor_stop(l->self, TETHER_STOP_DRAIN, -1));
  CHECK_ST(tether_actor_release(l->self), TETHER_OK); /* returns: the end completes later */
  counter_set(&l->released, 1);
  event_set(&l->nested_started);
  counter_add(&l->nested_ended, 1);
  return TETHER_OK;
}

static tether_status m_spawn_ender(tether_task *t, void *state, void *arg) {
  (void)arg;
  CHECK_ST(tether_task_spawn(t, "ender", nested_ends_own_actor, state, NULL), TETHER_OK);
  return TETHER_OK;
}

TEST(actor_release_and_stop_from_own_nested_thread) {
  life l;
  life_init(&l);
  tether_actor_options o = actor_opts("self-ender", NULL, 0);
  CHECK_ST(tether_actor_create(&o, life_ctor, life_dtor, &l, NULL, &l.self), TETHER_OK);
  CHECK_ST(tether_actor_call(l.self, NULL, m_spawn_ender, NULL, NULL, NULL), TETHER_OK);
  CHECK(counter_wait(&l.released, 1, T_LONG));
  CHECK_EQ(counter_get(&l.stop_status), TETHER_E_DEADLOCK);
  CHECK_EQ(counter_get(&l.task_actor_ok), 1);
  CHECK(counter_wait(&l.dtors, 1, T_LONG)); /* the end came once the nested thread ended */
  CHECK_EQ(counter_get(&l.order_bad), 0);
  CHECK_SOON(tether_debug_unjoined_threads() == 0);
  life_destroy(&l);
}

/* e: the loader fails only once the test has queued its call (the gate), so the call is
 * queued behind the constructor whatever the scheduler does; without the gate a descheduled
 * test thread could find the actor already dead and be refused ACTOR_DEAD at the call. */
static tether_status nested_fails(tether_task *t, void *arg) {
  life *l = (life *)arg;
  if (!event_wait(&l->gate, T_LONG)) harness_fail(__FILE__, __LINE__, "loader: gate never opened");
  return tether_task_fail(t, 9, "the loader thread failed");
}

static tether_status ctor_spawns_failing(tether_task *t, void *arg, void **state_out) {
  *state_out = arg;
  CHECK_ST(tether_task_spawn(t, "loader", nested_fails, arg, NULL), TETHER_OK);
  return TETHER_OK;
}

TEST(actor_ctor_nested_failure_kills_actor) {
  life l;
  tether_actor a;
  tether_future f = {0};
  tether_error cause = {0};
  int32_t state = 0;
  life_init(&l);
  tether_actor_options o = actor_opts("dead-by-loader", NULL, 0);
  CHECK_ST(tether_actor_create(&o, ctor_spawns_failing, life_dtor, &l, NULL, &a), TETHER_OK);
  CHECK_ST(tether_actor_call(a, NULL, m_ok, NULL, NULL, &f), TETHER_OK); /* queued behind the constructor */
  event_set(&l.gate);                                                   /* now the loader fails */
  CHECK_EQ(future_outcome(f), TETHER_FAILED);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_actor_state(a, &state, &cause), TETHER_OK);
  CHECK_EQ(state, TETHER_ACTOR_DEAD);
  CHECK_ERROR(cause, TETHER_E_TASK_FAILED, 9, "the loader thread failed", "loader");
  CHECK_ST(tether_error_release(cause), TETHER_OK);
  CHECK_ST(tether_actor_call(a, NULL, m_ok, NULL, NULL, NULL), TETHER_E_ACTOR_DEAD);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&l.dtors), 0); /* never constructed: no destructor */
  life_destroy(&l);
}

/* a: actors whose constructor and calls leave nested threads settling while the actor
 * ends, released at once; asan/tsan report any touch of a freed actor. */
static tether_status nested_quick(tether_task *t, void *arg) {
  (void)t;
  (void)arg;
  return TETHER_OK;
}

static tether_status ctor_spawns_quick(tether_task *t, void *arg, void **state_out) {
  *state_out = arg;
  CHECK_ST(tether_task_spawn(t, "c1", nested_quick, NULL, NULL), TETHER_OK);
  CHECK_ST(tether_task_spawn(t, "c2", nested_quick, NULL, NULL), TETHER_OK);
  return TETHER_OK;
}

static tether_status m_spawn_quick_fail(tether_task *t, void *state, void *arg) {
  (void)state;
  (void)arg;
  CHECK_ST(tether_task_spawn(t, "m1", nested_quick, NULL, NULL), TETHER_OK);
  return tether_task_fail(t, 1, "quick");
}

TEST(actor_nested_settle_races_end_stress) {
  const long n = scaled(300);
  const tether_group_spec groups[] = {{"io", 1}};
  for (long i = 0; i < n; ++i) {
    tether_actor a;
    tether_actor_options o = actor_opts("racer", groups, 1);
    CHECK_ST(tether_actor_create(&o, ctor_spawns_quick, NULL, NULL, NULL, &a), TETHER_OK);
    CHECK_ST(tether_actor_call(a, NULL, m_spawn_quick_fail, NULL, NULL, NULL), TETHER_OK);
    CHECK_ST(tether_actor_call(a, "io", m_spawn_quick_fail, NULL, NULL, NULL), TETHER_OK);
    if (i % 2) {
      CHECK_ST(tether_actor_release(a), TETHER_OK);
    } else {
      CHECK_ST(tether_actor_release_nowait(a), TETHER_OK);
    }
  }
  CHECK_SOON(tether_debug_unjoined_threads() == 0);
}
