/*
 * test_cancel.c — cancel and release: the stop request reaches every thread of the scope,
 * a cancelled scope ends CANCELLED (or FAILED on an error), release waits for every thread,
 * and a wait on a released handle returns TETHER_E_INVALID_HANDLE promptly.
 */
#define _POSIX_C_SOURCE 200809L
#include "fixtures.h"

/* check_only_error_cancelled: the scope's one error has the code TETHER_E_CANCELLED. */
static void check_only_error_cancelled(tether_runner r) {
  tether_error e = {0};
  CHECK_EQ(tether_runner_error_count(r), 1);
  CHECK_ST(tether_runner_error(r, &e), TETHER_OK);
  CHECK(e.id != 0);
  CHECK_ST(tether_error_code(e), TETHER_E_CANCELLED);
  CHECK_ST(tether_error_release(e), TETHER_OK);
}

TEST(cancel_while_running) {
  stopper s;
  tether_runner r = {0};
  void *out = NULL;
  stopper_init(&s);
  CHECK_ST(tether_runner_start(NULL, stopper_fn, &s, count_drop, &r), TETHER_OK);
  CHECK(event_wait(&s.started, T_LONG));
  CHECK_STATE(r, TETHER_RUNNING);
  CHECK_EQ(tether_runner_error_count(r), 0);

  CHECK_ST(tether_runner_cancel(r), TETHER_OK);
  CHECK_ST(tether_runner_join(r, T_LONG), TETHER_OK);
  CHECK_EQ(counter_get(&s.saw_stop), 1); /* the target saw tether_task_stop_requested */
  CHECK_STATE(r, TETHER_CANCELLED);      /* stop requested by cancel, then OK: CANCELLED */
  check_only_error_cancelled(r);
  CHECK_ST(tether_runner_take_result(r, &out), TETHER_E_WRONG_STATE); /* result dropped */
  CHECK_ST(tether_runner_cancel(r), TETHER_OK); /* again: terminal, unchanged */
  CHECK_STATE(r, TETHER_CANCELLED);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&s.result_drops), 1);
  CHECK_EQ(counter_get(&s.drops), 1);
  stopper_destroy(&s);
}

/* An error during cancellation makes the scope FAILED, with that error first. */
TEST(cancel_then_fail) {
  stopper s;
  tether_runner r = {0};
  tether_runner_options o = runner_opts("interrupted");
  stopper_init(&s);
  s.fail_msg = "interrupted while saving";
  CHECK_ST(tether_runner_start(&o, stopper_fn, &s, count_drop, &r), TETHER_OK);
  CHECK(event_wait(&s.started, T_LONG));
  CHECK_ST(tether_runner_cancel(r), TETHER_OK);
  CHECK_ST(tether_runner_join(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_FAILED);
  CHECK_RUNNER_ERROR(r, 0, TETHER_E_TASK_FAILED, 3, "interrupted while saving", "interrupted");
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&s.result_drops), 1); /* not SUCCEEDED: the result is dropped */
  CHECK_EQ(counter_get(&s.drops), 1);
  stopper_destroy(&s);
}

/* A target that ignores the stop request and returns OK later: the scope is not terminal
 * until it has returned, then CANCELLED. */
TEST(cancel_ignored_until_return) {
  blocker b;
  tether_runner r;
  blocker_init(&b);
  r = start_blocker("busy", &b);
  CHECK_ST(tether_runner_cancel(r), TETHER_OK);
  CHECK_ST(tether_runner_join(r, T_SHORT), TETHER_E_TIMEOUT); /* every thread must end first */
  CHECK_STATE(r, TETHER_RUNNING);
  CHECK_EQ(tether_runner_error_count(r), 0);
  event_set(&b.gate);
  CHECK_ST(tether_runner_join(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_CANCELLED);
  CHECK_EQ(counter_get(&b.saw_stop), 1);
  check_only_error_cancelled(r);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&b.drops), 1);
  blocker_destroy(&b);
}

/* The stop request reaches nested threads too. */
typedef struct two_stoppers {
  stopper target; /* FIRST member */
  stopper nested;
} two_stoppers;

static tether_status spawn_stopper_then_stop(tether_task *t, void *arg) {
  two_stoppers *c = (two_stoppers *)arg;
  CHECK_ST(tether_task_spawn(t, "nested-stopper", stopper_fn, &c->nested, count_drop), TETHER_OK);
  return stopper_fn(t, &c->target);
}

TEST(cancel_reaches_nested) {
  two_stoppers c;
  tether_runner r = {0};
  stopper_init(&c.target);
  stopper_init(&c.nested);
  c.nested.want_set_result = TETHER_E_WRONG_STATE; /* only the target fills the slot */
  CHECK_ST(tether_runner_start(NULL, spawn_stopper_then_stop, &c, count_drop, &r), TETHER_OK);
  CHECK(event_wait(&c.target.started, T_LONG));
  CHECK(event_wait(&c.nested.started, T_LONG));
  CHECK_ST(tether_runner_cancel(r), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_EQ(counter_get(&c.target.saw_stop), 1);
  CHECK_EQ(counter_get(&c.nested.saw_stop), 1);
  CHECK_STATE(r, TETHER_CANCELLED);
  check_only_error_cancelled(r);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&c.target.drops), 1);
  CHECK_EQ(counter_get(&c.nested.drops), 1);
  /* set_result from the nested stopper was refused (dropped at once); the target's was
   * dropped because the scope did not succeed. */
  CHECK_EQ(counter_get(&c.target.result_drops), 1);
  CHECK_EQ(counter_get(&c.nested.result_drops), 1);
  stopper_destroy(&c.target);
  stopper_destroy(&c.nested);
}

/* cancel on a terminal scope is OK and changes nothing. */
static int kept_value = 5;

static tether_status set_kept(tether_task *t, void *arg) {
  (void)arg;
  return tether_task_set_result(t, &kept_value, NULL);
}

TEST(cancel_terminal_noop) {
  counter drops;
  tether_runner r = {0};
  void *out = NULL;
  counter_init(&drops);
  CHECK_ST(tether_runner_start(NULL, set_kept, &drops, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_ST(tether_runner_cancel(r), TETHER_OK);
  CHECK_STATE(r, TETHER_SUCCEEDED);
  CHECK_EQ(tether_runner_error_count(r), 0);
  CHECK_ST(tether_runner_take_result(r, &out), TETHER_OK);
  CHECK(out == (void *)&kept_value);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&drops), 1);
  counter_destroy(&drops);
}

/* release drops a result nobody took. */
typedef struct untaken {
  counter drops; /* FIRST member */
  counter result_drops;
} untaken;

static tether_status set_counted_result(tether_task *t, void *arg) {
  untaken *u = (untaken *)arg;
  return tether_task_set_result(t, &u->result_drops, count_drop);
}

TEST(release_drops_untaken_result) {
  untaken u;
  tether_runner r = {0};
  counter_init(&u.drops);
  counter_init(&u.result_drops);
  CHECK_ST(tether_runner_start(NULL, set_counted_result, &u, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_SUCCEEDED);
  CHECK_EQ(counter_get(&u.result_drops), 0); /* still in the slot */
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&u.result_drops), 1);
  CHECK_EQ(counter_get(&u.drops), 1);
  counter_destroy(&u.drops);
  counter_destroy(&u.result_drops);
}

/* ---- a wait blocked on a handle that another thread releases ---------------------------- */

typedef struct joiner {
  tether_runner r;
  event entering; /* set just before the helper calls join */
  event done;
  tether_status st;
  int64_t took_ns;
} joiner;

static void *join_in_helper(void *arg) {
  joiner *j = (joiner *)arg;
  int64_t t0;
  event_set(&j->entering);
  t0 = now_ns();
  j->st = tether_runner_join(j->r, T_LONG);
  j->took_ns = now_ns() - t0;
  event_set(&j->done);
  return NULL;
}

/* The main thread releases (nowait) while a helper waits in join; the target is still
 * blocked, so only the release can end that join. */
TEST(release_nowait_wakes_join) {
  blocker b;
  joiner j;
  pthread_t th;
  blocker_init(&b);
  event_init(&j.entering);
  event_init(&j.done);
  j.r = start_blocker("blocked", &b);
  CHECK(pthread_create(&th, NULL, join_in_helper, &j) == 0);
  CHECK(event_wait(&j.entering, T_LONG));
  /* Not synchronisation: gives the helper time to be inside join; either way the expected
   * status is the same. */
  CHECK_ST(tether_runner_join(j.r, T_SHORT), TETHER_E_TIMEOUT);

  CHECK_ST(tether_runner_release_nowait(j.r), TETHER_OK);
  CHECK(event_wait(&j.done, 5 * SEC)); /* promptly, while the target is still blocked */
  CHECK(!event_is_set(&b.returned));
  CHECK_ST(j.st, TETHER_E_INVALID_HANDLE);
  CHECK(pthread_join(th, NULL) == 0);
  CHECK_ST(tether_runner_release_nowait(j.r), TETHER_E_INVALID_HANDLE);

  event_set(&b.gate);
  CHECK(counter_wait(&b.drops, 1, T_LONG)); /* the control thread finishes the release */
  CHECK_EQ(counter_get(&b.saw_stop), 1);    /* release cancels */
  CHECK(!counter_wait(&b.drops, 2, T_SHORT));
  blocker_destroy(&b);
  event_destroy(&j.entering);
  event_destroy(&j.done);
}

typedef struct releaser {
  tether_runner r;
  event done;
  tether_status st;
} releaser;

static void *release_in_helper(void *arg) {
  releaser *rl = (releaser *)arg;
  rl->st = tether_runner_release(rl->r);
  event_set(&rl->done);
  return NULL;
}

/* A helper releases (blocking: the target is blocked) while the main thread waits in join:
 * the handle ends at once, so the join returns INVALID_HANDLE before the target ends. */
TEST(release_in_helper_wakes_join) {
  blocker b;
  releaser rl;
  pthread_t th;
  int64_t t0;
  tether_status st;
  blocker_init(&b);
  event_init(&rl.done);
  rl.r = start_blocker("blocked", &b);
  CHECK(pthread_create(&th, NULL, release_in_helper, &rl) == 0);

  t0 = now_ns();
  st = tether_runner_join(rl.r, 5 * SEC);
  CHECK_ST(st, TETHER_E_INVALID_HANDLE);
  CHECK(now_ns() - t0 < 5 * SEC);
  CHECK(!event_is_set(&b.returned)); /* the target is still blocked */
  CHECK(!event_is_set(&rl.done));    /* and the release still waits for it */

  event_set(&b.gate);
  CHECK(event_wait(&rl.done, T_LONG));
  CHECK(pthread_join(th, NULL) == 0);
  CHECK_ST(rl.st, TETHER_OK);
  CHECK_EQ(counter_get(&b.drops), 1); /* release returned: every thread ended */
  /* The join above returned because the release began; release cancels first ("cancels,
   * waits until EVERY thread of the scope has ended ..."), so the target saw the stop. */
  CHECK_EQ(counter_get(&b.saw_stop), 1);
  blocker_destroy(&b);
  event_destroy(&rl.done);
}

/* ---- release waits until EVERY thread of the scope has ended ---------------------------- */

typedef struct orphan {
  counter drops; /* FIRST member */
  blocker nested;
} orphan;

static tether_status spawn_and_leave(tether_task *t, void *arg) {
  orphan *o = (orphan *)arg;
  CHECK_ST(tether_task_spawn(t, "orphan", blocker_fn, &o->nested, count_drop), TETHER_OK);
  return TETHER_OK;
}

TEST(release_waits_for_all_threads) {
  orphan o;
  releaser rl;
  pthread_t th;
  counter_init(&o.drops);
  blocker_init(&o.nested);
  event_init(&rl.done);
  CHECK_ST(tether_runner_start(NULL, spawn_and_leave, &o, count_drop, &rl.r), TETHER_OK);
  CHECK(event_wait(&o.nested.started, T_LONG));
  CHECK_SOON(live_threads(rl.r) == 1);

  CHECK(pthread_create(&th, NULL, release_in_helper, &rl) == 0);
  CHECK(!event_wait(&rl.done, 50 * MS)); /* the nested thread still runs: release waits */
  event_set(&o.nested.gate);
  CHECK(event_wait(&rl.done, T_LONG));
  CHECK(pthread_join(th, NULL) == 0);
  CHECK_ST(rl.st, TETHER_OK);
  CHECK_EQ(counter_get(&o.nested.saw_stop), 1); /* release cancels first */
  CHECK_EQ(counter_get(&o.drops), 1);
  CHECK_EQ(counter_get(&o.nested.drops), 1);
  counter_destroy(&o.drops);
  blocker_destroy(&o.nested);
  event_destroy(&rl.done);
}
