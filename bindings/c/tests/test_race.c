/*
 * test_race.c — Ray #57249: a failing scope must never look successful, nor finished
 * without an error, to any poll. Many short runners, each polled in a tight loop from the
 * moment it starts; sizes are scaled(10000).
 */
#define _POSIX_C_SOURCE 200809L
#include "fixtures.h"

/* poll_until_terminal: polls r without pause until it is terminal. A poll may say RUNNING
 * or FAILED; FAILED must come with a first error at once. SUCCEEDED never. */
static void poll_until_terminal(tether_runner r, long i) {
  int64_t deadline = now_ns() + T_LONG;
  unsigned spins = 0;
  for (;;) {
    int32_t s = -1;
    tether_error e = {0};
    CHECK_ST(tether_runner_poll(r, &s), TETHER_OK);
    if (s == TETHER_RUNNING) {
      if (now_ns() > deadline) harness_fail(__FILE__, __LINE__, "runner %ld never ended", i);
      if (++spins % 128 == 0) sched_yield(); /* lets valgrind's serialised threads move */
      continue;
    }
    if (s != TETHER_FAILED)
      harness_fail(__FILE__, __LINE__, "runner %ld: a failing scope polled as state %d", i, (int)s);
    CHECK_ST(tether_runner_error(r, &e), TETHER_OK);
    if (e.id == 0) harness_fail(__FILE__, __LINE__, "runner %ld: FAILED with no first error", i);
    CHECK_ST(tether_error_release(e), TETHER_OK);
    return;
  }
}

/* check_failed_after_join: after join, FAILED with the expected first error, every time. */
static void check_failed_after_join(tether_runner r, const char *thread) {
  tether_error e = {0};
  CHECK_ST(tether_runner_join(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_FAILED);
  CHECK_ST(tether_runner_error(r, &e), TETHER_OK);
  CHECK_ERROR(e, TETHER_E_TASK_FAILED, 13, "boom", thread);
  CHECK_ST(tether_error_release(e), TETHER_OK);
}

static tether_status fail_boom(tether_task *t, void *arg) {
  (void)arg;
  return tether_task_fail(t, 13, "boom");
}

TEST(race_target_fails) {
  long n = scaled(10000), i;
  counter drops;
  counter_init(&drops);
  for (i = 0; i < n; i++) {
    tether_runner r = {0};
    CHECK_ST(tether_runner_start(NULL, fail_boom, &drops, count_drop, &r), TETHER_OK);
    poll_until_terminal(r, i);
    check_failed_after_join(r, "tether-run");
    CHECK_ST(tether_runner_release(r), TETHER_OK);
  }
  CHECK_EQ(counter_get(&drops), n);
  counter_destroy(&drops);
}

/* The harder race: the target returns OK at once while its nested thread fails. Ray's
 * runner could see "target done, no error yet" and report success. */
typedef struct pair_drops {
  counter target; /* FIRST member */
  counter nested;
} pair_drops;

static void nested_drop(void *arg) { counter_add(&((pair_drops *)arg)->nested, 1); }

static tether_status spawn_boom_return_ok(tether_task *t, void *arg) {
  CHECK_ST(tether_task_spawn(t, "boom-nested", fail_boom, arg, nested_drop), TETHER_OK);
  return TETHER_OK;
}

TEST(race_nested_fails_after_target_ok) {
  long n = scaled(10000), i;
  pair_drops d;
  counter_init(&d.target);
  counter_init(&d.nested);
  for (i = 0; i < n; i++) {
    tether_runner r = {0};
    CHECK_ST(tether_runner_start(NULL, spawn_boom_return_ok, &d, count_drop, &r), TETHER_OK);
    poll_until_terminal(r, i);
    check_failed_after_join(r, "boom-nested");
    CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
    CHECK_EQ(tether_runner_error_count(r), 1);
    CHECK_ST(tether_runner_release(r), TETHER_OK);
  }
  CHECK_EQ(counter_get(&d.target), n);
  CHECK_EQ(counter_get(&d.nested), n);
  counter_destroy(&d.target);
  counter_destroy(&d.nested);
}

/* With stop_on_error the stop request is published BEFORE the failure becomes visible: a
 * thread of the scope that polls FAILED must already see tether_task_stop_requested. */
typedef struct observer {
  counter drops; /* FIRST member */
  counter violations;
} observer;

static tether_status fail_at_once(tether_task *t, void *arg) {
  (void)arg;
  return tether_task_fail(t, 1, "sibling failed");
}

static tether_status watch_for_failure(tether_task *t, void *arg) {
  observer *o = (observer *)arg;
  tether_runner self = {0};
  int32_t s = TETHER_RUNNING;
  int64_t deadline = now_ns() + T_LONG;
  CHECK_ST(tether_task_runner(t, &self), TETHER_OK);
  CHECK_ST(tether_task_spawn(t, "sibling", fail_at_once, NULL, NULL), TETHER_OK);
  while (s == TETHER_RUNNING && now_ns() < deadline) CHECK_ST(tether_runner_poll(self, &s), TETHER_OK);
  if (s != TETHER_FAILED || !tether_task_stop_requested(t)) counter_add(&o->violations, 1);
  return TETHER_OK;
}

TEST(race_failed_implies_stop) {
  long n = scaled(2000), i;
  observer o;
  counter_init(&o.drops);
  counter_init(&o.violations);
  for (i = 0; i < n; i++) {
    tether_runner r = {0};
    CHECK_ST(tether_runner_start(NULL, watch_for_failure, &o, count_drop, &r), TETHER_OK);
    CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
    CHECK_STATE(r, TETHER_FAILED);
    CHECK_ST(tether_runner_release(r), TETHER_OK);
    if (counter_get(&o.violations) != 0)
      harness_fail(__FILE__, __LINE__, "runner %ld: FAILED was visible before the stop request", i);
  }
  CHECK_EQ(counter_get(&o.drops), n);
  counter_destroy(&o.drops);
  counter_destroy(&o.violations);
}

/* An error is recorded before its thread leaves live_threads: the moment live_threads reads
 * 0, error_count already counts every error (no spin on error_count here). */
typedef struct five {
  counter drops; /* FIRST member */
  failer f[4];
} five;

static tether_status four_failers_and_self(tether_task *t, void *arg) {
  five *c = (five *)arg;
  int i;
  for (i = 0; i < 4; i++) CHECK_ST(tether_task_spawn(t, "failer", failer_fn, &c->f[i], NULL), TETHER_OK);
  return tether_task_fail(t, 5, "target failed too");
}

TEST(race_errors_complete_at_live_zero) {
  long n = scaled(2000), i;
  five c;
  int k;
  counter_init(&c.drops);
  for (k = 0; k < 4; k++) failer_init(&c.f[k], 4, "nested failed");
  for (i = 0; i < n; i++) {
    tether_runner r = {0};
    CHECK_ST(tether_runner_start(NULL, four_failers_and_self, &c, count_drop, &r), TETHER_OK);
    CHECK_SOON(live_threads(r) == 0);
    if (tether_runner_error_count(r) != 5)
      harness_fail(__FILE__, __LINE__, "runner %ld: live_threads 0 but %zu errors of 5", i,
                   tether_runner_error_count(r));
    CHECK_ST(tether_runner_join_all(r, 0), TETHER_OK);
    CHECK_ST(tether_runner_release(r), TETHER_OK);
  }
  CHECK_EQ(counter_get(&c.drops), n);
  counter_destroy(&c.drops);
  for (k = 0; k < 4; k++) counter_destroy(&c.f[k].drops);
}
