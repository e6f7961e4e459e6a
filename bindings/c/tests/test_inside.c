/*
 * test_inside.c — calls made from the inside of a scope (its target or a nested thread):
 * a wait that would have to wait is TETHER_E_DEADLOCK (timeout 0: TETHER_E_TIMEOUT), and
 * release never deadlocks.
 */
#define _POSIX_C_SOURCE 200809L
#include "fixtures.h"

/* ---- join / join_all from the inside ---------------------------------------------------- */

enum { P_RUNNER, P_JOIN, P_JOIN_FOREVER, P_JOIN_0, P_ALL, P_ALL_FOREVER, P_ALL_0, P_N };

/* probe_waits: every wait on its own scope, from a thread of that scope. A wait expected to
 * be DEADLOCK is bounded first (2 s); the unbounded one is tried only if that worked, so a
 * wrong library fails the test instead of hanging it. */
static void probe_waits(tether_task *t, tether_status st[P_N]) {
  tether_runner self = {0};
  st[P_RUNNER] = tether_task_runner(t, &self);
  st[P_JOIN] = tether_runner_join(self, 2 * SEC);
  st[P_JOIN_FOREVER] = st[P_JOIN] == TETHER_E_DEADLOCK ? tether_runner_join(self, -1) : -1;
  st[P_JOIN_0] = tether_runner_join(self, 0);
  st[P_ALL] = tether_runner_join_all(self, 2 * SEC);
  st[P_ALL_FOREVER] = st[P_ALL] == TETHER_E_DEADLOCK ? tether_runner_join_all(self, -1) : -1;
  st[P_ALL_0] = tether_runner_join_all(self, 0);
}

static void check_probe(const tether_status st[P_N]) {
  CHECK_ST(st[P_RUNNER], TETHER_OK);
  CHECK_ST(st[P_JOIN], TETHER_E_DEADLOCK);
  CHECK_ST(st[P_JOIN_FOREVER], TETHER_E_DEADLOCK);
  CHECK_ST(st[P_JOIN_0], TETHER_E_TIMEOUT); /* 0 never blocks: TIMEOUT, not DEADLOCK */
  CHECK_ST(st[P_ALL], TETHER_E_DEADLOCK);
  CHECK_ST(st[P_ALL_FOREVER], TETHER_E_DEADLOCK);
  CHECK_ST(st[P_ALL_0], TETHER_E_TIMEOUT);
}

typedef struct inside {
  counter drops; /* FIRST member */
  counter nested_drops;
  event nested_done;
  tether_status target_st[P_N], nested_st[P_N];
} inside;

static tether_status nested_probe(tether_task *t, void *arg) {
  inside *c = (inside *)arg;
  probe_waits(t, c->nested_st);
  event_set(&c->nested_done);
  return TETHER_OK;
}

static void inside_nested_drop(void *arg) { counter_add(&((inside *)arg)->nested_drops, 1); }

static tether_status target_probe(tether_task *t, void *arg) {
  inside *c = (inside *)arg;
  CHECK_ST(tether_task_spawn(t, "prober", nested_probe, c, inside_nested_drop), TETHER_OK);
  CHECK(event_wait(&c->nested_done, T_LONG));
  probe_waits(t, c->target_st);
  return TETHER_OK;
}

TEST(inside_join_deadlock) {
  inside c;
  tether_runner r = {0};
  counter_init(&c.drops);
  counter_init(&c.nested_drops);
  event_init(&c.nested_done);
  CHECK_ST(tether_runner_start(NULL, target_probe, &c, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_SUCCEEDED); /* the refused waits did not fail the scope */
  check_probe(c.target_st);
  check_probe(c.nested_st);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&c.drops), 1);
  CHECK_EQ(counter_get(&c.nested_drops), 1);
  counter_destroy(&c.drops);
  counter_destroy(&c.nested_drops);
  event_destroy(&c.nested_done);
}

/* Once the scope FAILED, join from the inside need not wait: OK. join_all would still wait
 * for the calling thread itself: DEADLOCK. */
typedef struct inside_failed {
  failer f; /* FIRST member: its counter counts the nested arg's drops */
  counter drops;
  tether_status join_st, all_st, all0_st;
  int saw_stop;
} inside_failed;

static void inside_failed_drop(void *arg) { counter_add(&((inside_failed *)arg)->drops, 1); }

static tether_status wait_failure_then_join(tether_task *t, void *arg) {
  inside_failed *c = (inside_failed *)arg;
  tether_runner self = {0};
  CHECK_ST(tether_task_runner(t, &self), TETHER_OK);
  CHECK_ST(tether_task_spawn(t, "failing", failer_fn, &c->f, count_drop), TETHER_OK);
  c->saw_stop = wait_stop(t);
  c->join_st = tether_runner_join(self, 2 * SEC);
  c->all_st = tether_runner_join_all(self, 2 * SEC);
  c->all0_st = tether_runner_join_all(self, 0);
  return TETHER_OK;
}

TEST(inside_join_after_failure) {
  inside_failed c;
  tether_runner r = {0};
  failer_init(&c.f, 2, "early");
  counter_init(&c.drops);
  CHECK_ST(tether_runner_start(NULL, wait_failure_then_join, &c, inside_failed_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_FAILED);
  CHECK_EQ(c.saw_stop, 1);
  CHECK_ST(c.join_st, TETHER_OK);
  CHECK_ST(c.all_st, TETHER_E_DEADLOCK);
  CHECK_ST(c.all0_st, TETHER_E_TIMEOUT);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&c.drops), 1);
  CHECK_EQ(counter_get(&c.f.drops), 1);
  counter_destroy(&c.drops);
  counter_destroy(&c.f.drops);
}

/* ---- the borrowed handle ---------------------------------------------------------------- */

typedef struct borrowed {
  counter drops; /* FIRST member */
  tether_status runner_st, actor_st, poll_st, live_st, error_st;
  uint64_t runner_id, actor_id, error_id;
  int32_t state;
  size_t live;
} borrowed;

static tether_status use_borrowed(tether_task *t, void *arg) {
  borrowed *c = (borrowed *)arg;
  tether_runner self = {0};
  tether_actor a = {77};
  tether_error e = {77};
  c->runner_st = tether_task_runner(t, &self);
  c->runner_id = self.id;
  c->actor_st = tether_task_actor(t, &a);
  c->actor_id = a.id;
  c->poll_st = tether_runner_poll(self, &c->state);
  c->live_st = tether_runner_live_threads(self, &c->live);
  c->error_st = tether_runner_error(self, &e);
  c->error_id = e.id;
  return TETHER_OK;
}

TEST(inside_borrowed_handle) {
  borrowed c;
  tether_runner r = {0};
  counter_init(&c.drops);
  CHECK_ST(tether_runner_start(NULL, use_borrowed, &c, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_SUCCEEDED);
  CHECK_ST(c.runner_st, TETHER_OK);
  CHECK(c.runner_id != 0);
  CHECK_ST(c.actor_st, TETHER_E_WRONG_STATE); /* a runner task belongs to no actor */
  CHECK_EQ(c.actor_id, 0);                    /* ... and out is set to the null handle */
  CHECK_ST(c.poll_st, TETHER_OK);
  CHECK_EQ(c.state, TETHER_RUNNING);
  CHECK_ST(c.live_st, TETHER_OK);
  CHECK_EQ(c.live, 1);
  CHECK_ST(c.error_st, TETHER_OK);
  CHECK_EQ(c.error_id, 0);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&c.drops), 1);
  counter_destroy(&c.drops);
}

/* ---- release from the inside ------------------------------------------------------------ */

typedef struct self_release {
  counter drops; /* FIRST member */
  event handle_ready;
  event done;
  tether_runner owned; /* the caller's own handle, handed to the target */
  int nowait;
  tether_status release_st, poll_st, again_st;
} self_release;

static tether_status release_myself(tether_task *t, void *arg) {
  self_release *c = (self_release *)arg;
  int32_t s = -1;
  (void)t;
  CHECK(event_wait(&c->handle_ready, T_LONG));
  c->release_st = c->nowait ? tether_runner_release_nowait(c->owned) : tether_runner_release(c->owned);
  c->poll_st = tether_runner_poll(c->owned, &s); /* the handle ended at once */
  c->again_st = tether_runner_release(c->owned);
  event_set(&c->done);
  return TETHER_OK;
}

typedef struct spawner {
  counter drops; /* FIRST member */
  self_release *inner;
} spawner;

static void inner_drop(void *arg) { counter_add(&((self_release *)arg)->drops, 1); }

static tether_status spawn_releaser(tether_task *t, void *arg) {
  spawner *s = (spawner *)arg;
  CHECK_ST(tether_task_spawn(t, "releaser", release_myself, s->inner, inner_drop), TETHER_OK);
  return TETHER_OK;
}

static void self_release_case(int nowait, int from_nested) {
  self_release c;
  spawner s;
  tether_runner r = {0};
  int32_t st = -1;
  counter_init(&c.drops);
  event_init(&c.handle_ready);
  event_init(&c.done);
  c.nowait = nowait;
  counter_init(&s.drops);
  s.inner = &c;
  if (from_nested)
    CHECK_ST(tether_runner_start(NULL, spawn_releaser, &s, count_drop, &r), TETHER_OK);
  else
    CHECK_ST(tether_runner_start(NULL, release_myself, &c, count_drop, &r), TETHER_OK);
  c.owned = r;
  event_set(&c.handle_ready);
  CHECK(event_wait(&c.done, T_LONG)); /* no deadlock */
  CHECK_ST(c.release_st, TETHER_OK);
  CHECK_ST(c.poll_st, TETHER_E_INVALID_HANDLE);
  CHECK_ST(c.again_st, TETHER_E_INVALID_HANDLE); /* released twice */
  CHECK_ST(tether_runner_poll(r, &st), TETHER_E_INVALID_HANDLE);
  CHECK_ST(tether_runner_release(r), TETHER_E_INVALID_HANDLE);
  /* The control thread finishes: the arg is dropped once, and only once. */
  CHECK(counter_wait(&c.drops, 1, T_LONG));
  if (from_nested) CHECK(counter_wait(&s.drops, 1, T_LONG));
  CHECK(!counter_wait(&c.drops, 2, T_SHORT));
  CHECK_EQ(counter_get(&c.drops), 1);
  CHECK_EQ(counter_get(&s.drops), from_nested ? 1 : 0);
  counter_destroy(&c.drops);
  event_destroy(&c.handle_ready);
  event_destroy(&c.done);
  counter_destroy(&s.drops);
}

TEST(inside_release) { self_release_case(0, 0); }
TEST(inside_release_nowait) { self_release_case(1, 0); }
TEST(inside_release_from_nested) { self_release_case(0, 1); }
