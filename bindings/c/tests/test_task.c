/*
 * test_task.c — the callback API: tether_task_fail / fail_with / set_result, and a task
 * pointer used from a thread that is not running that callback.
 */
#define _POSIX_C_SOURCE 200809L
#include "fixtures.h"

/* run_to_end: starts target(arg) with count_drop on `drops` (the arg's first member), waits
 * for every thread, and returns the runner. */
static tether_runner run_to_end(tether_fn target, void *arg) {
  tether_runner r = {0};
  CHECK_ST(tether_runner_start(NULL, target, arg, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  return r;
}

typedef struct task_ctx {
  counter drops;        /* FIRST member */
  counter result_drops; /* drops of values set as results */
  tether_status st[4];
} task_ctx;

static void task_ctx_init(task_ctx *c) {
  int i;
  counter_init(&c->drops);
  counter_init(&c->result_drops);
  for (i = 0; i < 4; i++) c->st[i] = -1;
}

static void finish(tether_runner r, task_ctx *c) {
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&c->drops), 1);
  counter_destroy(&c->drops);
  counter_destroy(&c->result_drops);
}

/* A second failure record replaces the first; a recorded failure wins over returning OK;
 * the result of a failed task is dropped. */
static tether_status fail_twice_return_ok(tether_task *t, void *arg) {
  task_ctx *c = (task_ctx *)arg;
  c->st[0] = tether_task_set_result(t, &c->result_drops, count_drop);
  c->st[1] = tether_task_fail(t, 1, "first record");
  c->st[2] = tether_task_fail(t, 2, "second record");
  return TETHER_OK;
}

TEST(task_fail_replaces) {
  task_ctx c;
  tether_runner r;
  task_ctx_init(&c);
  r = run_to_end(fail_twice_return_ok, &c);
  CHECK_ST(c.st[0], TETHER_OK);
  CHECK_ST(c.st[1], TETHER_E_TASK_FAILED);
  CHECK_ST(c.st[2], TETHER_E_TASK_FAILED);
  CHECK_STATE(r, TETHER_FAILED);
  CHECK_EQ(tether_runner_error_count(r), 1);
  CHECK_RUNNER_ERROR(r, 0, TETHER_E_TASK_FAILED, 2, "second record", "tether-run");
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&c.result_drops), 1);
  CHECK_EQ(counter_get(&c.drops), 1);
  counter_destroy(&c.drops);
  counter_destroy(&c.result_drops);
}

/* A NULL message gives "task failed". */
static tether_status fail_null_message(tether_task *t, void *arg) {
  (void)arg;
  return tether_task_fail(t, 4, NULL);
}

TEST(task_fail_null_message) {
  task_ctx c;
  tether_runner r;
  task_ctx_init(&c);
  r = run_to_end(fail_null_message, &c);
  CHECK_STATE(r, TETHER_FAILED);
  CHECK_RUNNER_ERROR(r, 0, TETHER_E_TASK_FAILED, 4, "task failed", NULL);
  finish(r, &c);
}

/* fail_with records another code (a binding's panic) and returns it. */
static tether_status panic_like(tether_task *t, void *arg) {
  task_ctx *c = (task_ctx *)arg;
  c->st[0] = tether_task_fail_with(t, TETHER_E_PANIC, 3, "panic: index out of range");
  return c->st[0];
}

TEST(task_fail_with_panic) {
  task_ctx c;
  tether_runner r;
  task_ctx_init(&c);
  r = run_to_end(panic_like, &c);
  CHECK_ST(c.st[0], TETHER_E_PANIC);
  CHECK_STATE(r, TETHER_FAILED);
  CHECK_RUNNER_ERROR(r, 0, TETHER_E_PANIC, 3, "panic: index out of range", "tether-run");
  finish(r, &c);
}

/* fail_with a code that is not a failure code: TETHER_E_INVALID_ARGUMENT, nothing recorded. */
static tether_status fail_with_bad_codes(tether_task *t, void *arg) {
  task_ctx *c = (task_ctx *)arg;
  c->st[0] = tether_task_fail_with(t, TETHER_OK, 1, "ok is no failure");
  c->st[1] = tether_task_fail_with(t, -1, 1, "negative");
  c->st[2] = tether_task_fail_with(t, 20, 1, "past the table");
  c->st[3] = tether_task_fail_with(NULL, TETHER_E_PANIC, 1, "no task");
  return TETHER_OK;
}

TEST(task_fail_with_bad_code) {
  task_ctx c;
  tether_runner r;
  int i;
  task_ctx_init(&c);
  r = run_to_end(fail_with_bad_codes, &c);
  for (i = 0; i < 4; i++) CHECK_ST(c.st[i], TETHER_E_INVALID_ARGUMENT);
  CHECK_STATE(r, TETHER_SUCCEEDED);
  CHECK_EQ(tether_runner_error_count(r), 0);
  finish(r, &c);
}

/* A second set_result replaces the value and drops the first. */
typedef struct two_values {
  task_ctx c; /* FIRST member */
  counter second_drops;
} two_values;

static tether_status set_twice(tether_task *t, void *arg) {
  two_values *v = (two_values *)arg;
  v->c.st[0] = tether_task_set_result(t, &v->c.result_drops, count_drop);
  v->c.st[1] = tether_task_set_result(t, &v->second_drops, count_drop);
  return TETHER_OK;
}

TEST(task_set_result_twice) {
  two_values v;
  tether_runner r;
  void *out = NULL;
  task_ctx_init(&v.c);
  counter_init(&v.second_drops);
  r = run_to_end(set_twice, &v);
  CHECK_ST(v.c.st[0], TETHER_OK);
  CHECK_ST(v.c.st[1], TETHER_OK);
  CHECK_STATE(r, TETHER_SUCCEEDED);
  CHECK_EQ(counter_get(&v.c.result_drops), 1); /* replaced: dropped */
  CHECK_ST(tether_runner_take_result(r, &out), TETHER_OK);
  CHECK(out == (void *)&v.second_drops);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&v.second_drops), 0); /* taken: never dropped by the library */
  CHECK_EQ(counter_get(&v.c.result_drops), 1);
  CHECK_EQ(counter_get(&v.c.drops), 1);
  counter_destroy(&v.c.drops);
  counter_destroy(&v.c.result_drops);
  counter_destroy(&v.second_drops);
}

/* No result set: take_result succeeds with NULL. */
TEST(take_result_without_result) {
  task_ctx c;
  tether_runner r;
  void *out = &c;
  task_ctx_init(&c);
  r = run_to_end(ok_fn, &c);
  CHECK_STATE(r, TETHER_SUCCEEDED);
  CHECK_ST(tether_runner_take_result(r, &out), TETHER_OK);
  CHECK(out == NULL);
  CHECK_ST(tether_runner_take_result(r, &out), TETHER_E_WRONG_STATE);
  finish(r, &c);
}

/* ---- a task pointer used from a thread that is not running its callback ----------------- */

typedef struct parked {
  blocker b; /* FIRST member */
  tether_task *task;
} parked;

static tether_status park_task(tether_task *t, void *arg) {
  parked *p = (parked *)arg;
  p->task = t; /* published to the test by blocker_fn's "started" event */
  return blocker_fn(t, &p->b);
}

TEST(task_foreign_pointer) {
  parked p;
  tether_runner r = {0};
  counter value_drops, spawn_drops;
  blocker_init(&p.b);
  counter_init(&value_drops);
  counter_init(&spawn_drops);
  CHECK_ST(tether_runner_start(NULL, park_task, &p, count_drop, &r), TETHER_OK);
  CHECK(event_wait(&p.b.started, T_LONG));

  /* The task is alive, but this thread is not running it: refused, nothing recorded. */
  CHECK_ST(tether_task_fail(p.task, 1, "from outside"), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_task_fail_with(p.task, TETHER_E_PANIC, 1, "from outside"), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_task_set_result(p.task, &value_drops, count_drop), TETHER_E_INVALID_ARGUMENT);
  CHECK_EQ(counter_get(&value_drops), 1); /* dropped before the call returned */
  CHECK_ST(tether_task_spawn(p.task, "outsider", ok_fn, &spawn_drops, count_drop), TETHER_E_INVALID_ARGUMENT);
  CHECK_EQ(counter_get(&spawn_drops), 1);
  CHECK_LIVE(r, 1);
  CHECK_EQ(tether_runner_error_count(r), 0);

  event_set(&p.b.gate);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_SUCCEEDED);
  CHECK_EQ(tether_runner_error_count(r), 0);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&p.b.drops), 1);
  blocker_destroy(&p.b);
  counter_destroy(&value_drops);
  counter_destroy(&spawn_drops);
}
