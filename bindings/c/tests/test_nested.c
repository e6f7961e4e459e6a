/*
 * test_nested.c — nested threads (tether_task_spawn): their errors fail the scope at once,
 * in order, and the scope waits for them before it can succeed.
 */
#define _POSIX_C_SOURCE 200809L
#include "fixtures.h"

/* ---- a nested thread fails while the target is still blocked ---------------------------- */

typedef struct spawn_then_block {
  blocker b; /* FIRST member (its own first member is the drop counter) */
  failer f;
  tether_status spawn_st;
} spawn_then_block;

static tether_status spawn_failer_then_block(tether_task *t, void *arg) {
  spawn_then_block *c = (spawn_then_block *)arg;
  c->spawn_st = tether_task_spawn(t, "uploader-1", failer_fn, &c->f, count_drop);
  return blocker_fn(t, &c->b);
}

static void spawn_then_block_init(spawn_then_block *c) {
  blocker_init(&c->b);
  failer_init(&c->f, 21, "upload failed");
  c->spawn_st = -1;
}

TEST(nested_fails_while_target_blocked) {
  spawn_then_block c;
  tether_runner r = {0};
  tether_runner_options o = runner_opts("trainer");
  spawn_then_block_init(&c);
  CHECK_ST(tether_runner_start(&o, spawn_failer_then_block, &c, count_drop, &r), TETHER_OK);
  CHECK(event_wait(&c.b.started, T_LONG));
  CHECK_ST(c.spawn_st, TETHER_OK);

  /* join returns at the first error, while the target is still blocked on its gate. */
  CHECK_ST(tether_runner_join(r, T_LONG), TETHER_OK);
  CHECK(!event_is_set(&c.b.returned));
  CHECK_STATE(r, TETHER_FAILED);
  CHECK_RUNNER_ERROR(r, 0, TETHER_E_TASK_FAILED, 21, "upload failed", "uploader-1");
  CHECK_SOON(live_threads(r) == 1); /* the target only */
  CHECK_ST(tether_runner_join_all(r, 0), TETHER_E_TIMEOUT);
  CHECK_ST(tether_runner_join_all(r, T_SHORT), TETHER_E_TIMEOUT);

  event_set(&c.b.gate);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_EQ(counter_get(&c.b.saw_stop), 1); /* stop_on_error reached the target */
  CHECK_STATE(r, TETHER_FAILED);           /* the target's OK changes nothing */
  CHECK_EQ(tether_runner_error_count(r), 1);
  CHECK_RUNNER_ERROR(r, 0, TETHER_E_TASK_FAILED, 21, "upload failed", "uploader-1");
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&c.b.drops), 1);
  CHECK_EQ(counter_get(&c.f.drops), 1);
  blocker_destroy(&c.b);
  counter_destroy(&c.f.drops);
}

/* stop_on_error = 0: the same failure does not ask the target to stop. */
TEST(stop_on_error_off) {
  spawn_then_block c;
  tether_runner r = {0};
  tether_runner_options o = runner_opts("trainer");
  o.stop_on_error = 0;
  spawn_then_block_init(&c);
  CHECK_ST(tether_runner_start(&o, spawn_failer_then_block, &c, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_FAILED);
  event_set(&c.b.gate);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_EQ(counter_get(&c.b.saw_stop), 0);
  CHECK_STATE(r, TETHER_FAILED);
  CHECK_EQ(tether_runner_error_count(r), 1);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&c.b.drops), 1);
  CHECK_EQ(counter_get(&c.f.drops), 1);
  blocker_destroy(&c.b);
  counter_destroy(&c.f.drops);
}

/* ---- the target returns OK before its nested thread ends -------------------------------- */

static int target_value = 7;

typedef struct early_return {
  counter drops; /* FIRST member */
  blocker nested;
  tether_status spawn_st;
} early_return;

static tether_status spawn_blocker_and_return(tether_task *t, void *arg) {
  early_return *c = (early_return *)arg;
  c->spawn_st = tether_task_spawn(t, "slow-upload", blocker_fn, &c->nested, count_drop);
  CHECK_ST(tether_task_set_result(t, &target_value, NULL), TETHER_OK);
  return TETHER_OK;
}

TEST(target_returns_before_nested) {
  early_return c;
  tether_runner r = {0};
  void *out = NULL;
  counter_init(&c.drops);
  blocker_init(&c.nested);
  CHECK_ST(tether_runner_start(NULL, spawn_blocker_and_return, &c, count_drop, &r), TETHER_OK);
  CHECK(event_wait(&c.nested.started, T_LONG));
  CHECK_SOON(live_threads(r) == 1); /* the target has returned; the nested thread runs */

  CHECK_STATE(r, TETHER_RUNNING);
  CHECK_ST(tether_runner_join(r, 0), TETHER_E_TIMEOUT);
  CHECK_ST(tether_runner_join(r, T_SHORT), TETHER_E_TIMEOUT);
  CHECK_ST(tether_runner_take_result(r, &out), TETHER_E_WRONG_STATE); /* not SUCCEEDED yet */
  CHECK_LIVE(r, 1);
  CHECK_STATE(r, TETHER_RUNNING);

  event_set(&c.nested.gate);
  CHECK_ST(tether_runner_join(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_SUCCEEDED);
  CHECK_ST(tether_runner_take_result(r, &out), TETHER_OK);
  CHECK(out == (void *)&target_value);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_LIVE(r, 0);
  CHECK_EQ(counter_get(&c.nested.saw_stop), 0);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_ST(c.spawn_st, TETHER_OK);
  CHECK_EQ(counter_get(&c.drops), 1);
  CHECK_EQ(counter_get(&c.nested.drops), 1);
  counter_destroy(&c.drops);
  blocker_destroy(&c.nested);
}

/* ---- three nested failures in a forced order -------------------------------------------- */

typedef struct three {
  counter drops; /* FIRST member */
  blocker n[3];
  tether_status spawn_st[3];
} three;

static tether_status spawn_three(tether_task *t, void *arg) {
  three *c = (three *)arg;
  static const char *const names[3] = {"n-1", "n-2", "n-3"};
  int i;
  for (i = 0; i < 3; i++)
    c->spawn_st[i] = tether_task_spawn(t, names[i], blocker_fn, &c->n[i], count_drop);
  return TETHER_OK;
}

/* first_error_is: error() is "first" on "n-1", read afresh each time. */
static void first_error_is_n1(tether_runner r) {
  tether_error e = {0};
  CHECK_ST(tether_runner_error(r, &e), TETHER_OK);
  CHECK_ERROR(e, TETHER_E_TASK_FAILED, 1, "first", "n-1");
  CHECK_ST(tether_error_release(e), TETHER_OK);
}

TEST(nested_errors_in_order) {
  static const char *const msgs[3] = {"first", "second", "third"};
  static const char *const names[3] = {"n-1", "n-2", "n-3"};
  three c;
  tether_runner r = {0};
  tether_error e = {42};
  int i;
  counter_init(&c.drops);
  for (i = 0; i < 3; i++) {
    blocker_init(&c.n[i]);
    c.n[i].fail_msg = msgs[i];
  }
  CHECK_ST(tether_runner_start(NULL, spawn_three, &c, count_drop, &r), TETHER_OK);
  for (i = 0; i < 3; i++) CHECK(event_wait(&c.n[i].started, T_LONG));

  /* Release one at a time; each error is recorded before the next thread may fail. */
  for (i = 0; i < 3; i++) {
    event_set(&c.n[i].gate);
    CHECK_SOON(tether_runner_error_count(r) == (size_t)(i + 1));
    CHECK_STATE(r, TETHER_FAILED);
    first_error_is_n1(r);
  }
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  for (i = 0; i < 3; i++) CHECK_ST(c.spawn_st[i], TETHER_OK); /* read once the target ended */
  CHECK_EQ(tether_runner_error_count(r), 3);
  for (i = 0; i < 3; i++) first_error_is_n1(r); /* stable across reads */
  for (i = 0; i < 3; i++)
    CHECK_RUNNER_ERROR(r, (size_t)i, TETHER_E_TASK_FAILED, 1, msgs[i], names[i]);
  CHECK_ST(tether_runner_error_at(r, 3, &e), TETHER_E_INVALID_ARGUMENT); /* past the end */
  CHECK_ST(tether_runner_error_at(r, (size_t)-1, &e), TETHER_E_INVALID_ARGUMENT);

  /* The first failure was visible before n-2 and n-3 were let go: they saw the stop. */
  CHECK_EQ(counter_get(&c.n[0].saw_stop), 0);
  CHECK_EQ(counter_get(&c.n[1].saw_stop), 1);
  CHECK_EQ(counter_get(&c.n[2].saw_stop), 1);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&c.drops), 1);
  for (i = 0; i < 3; i++) {
    CHECK_EQ(counter_get(&c.n[i].drops), 1);
    blocker_destroy(&c.n[i]);
  }
  counter_destroy(&c.drops);
}

/* ---- a spawn after the failure still works, and starts with stop requested -------------- */

typedef struct late_spawn {
  counter drops; /* FIRST member */
  failer doomed;
  counter late_drops;
  counter late_stop; /* -1, then stop_requested at the start of the late thread */
  tether_status st_doomed, st_late;
  int target_saw_stop;
} late_spawn;

static tether_status record_stop(tether_task *t, void *arg) {
  late_spawn *c = (late_spawn *)arg;
  counter_set(&c->late_stop, tether_task_stop_requested(t) ? 1 : 0);
  return TETHER_OK;
}

static void late_drop(void *arg) { counter_add(&((late_spawn *)arg)->late_drops, 1); }

static tether_status spawn_after_failure(tether_task *t, void *arg) {
  late_spawn *c = (late_spawn *)arg;
  c->st_doomed = tether_task_spawn(t, "doomed", failer_fn, &c->doomed, count_drop);
  c->target_saw_stop = wait_stop(t); /* the failure is published through the stop */
  c->st_late = tether_task_spawn(t, "late", record_stop, c, late_drop);
  CHECK(counter_wait(&c->late_stop, 0, T_LONG));
  return TETHER_OK;
}

TEST(spawn_after_failure_starts_stopped) {
  late_spawn c;
  tether_runner r = {0};
  counter_init(&c.drops);
  failer_init(&c.doomed, 4, "doomed");
  counter_init(&c.late_drops);
  counter_init(&c.late_stop);
  counter_set(&c.late_stop, -1);
  CHECK_ST(tether_runner_start(NULL, spawn_after_failure, &c, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_FAILED);
  CHECK_ST(c.st_doomed, TETHER_OK);
  CHECK_EQ(c.target_saw_stop, 1);
  CHECK_ST(c.st_late, TETHER_OK); /* spawn works on a FAILED scope while a thread runs */
  CHECK_EQ(counter_get(&c.late_stop), 1);
  CHECK_EQ(tether_runner_error_count(r), 1);
  CHECK_RUNNER_ERROR(r, 0, TETHER_E_TASK_FAILED, 4, "doomed", "doomed");
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&c.drops), 1);
  CHECK_EQ(counter_get(&c.doomed.drops), 1);
  CHECK_EQ(counter_get(&c.late_drops), 1);
  counter_destroy(&c.drops);
  counter_destroy(&c.doomed.drops);
  counter_destroy(&c.late_drops);
  counter_destroy(&c.late_stop);
}

/* ---- a grandchild's error surfaces with its own thread name ----------------------------- */

typedef struct family {
  counter drops; /* FIRST member */
  counter child_drops;
  failer grandchild;
  tether_status st_child, st_grandchild, st_child_runner;
  uint64_t child_runner_id;
} family;

static void child_drop(void *arg) { counter_add(&((family *)arg)->child_drops, 1); }

static tether_status child_fn(tether_task *t, void *arg) {
  family *c = (family *)arg;
  tether_runner self = {0};
  c->st_child_runner = tether_task_runner(t, &self);
  c->child_runner_id = self.id;
  c->st_grandchild = tether_task_spawn(t, "grandchild", failer_fn, &c->grandchild, count_drop);
  return TETHER_OK;
}

static tether_status parent_fn(tether_task *t, void *arg) {
  family *c = (family *)arg;
  c->st_child = tether_task_spawn(t, "child", child_fn, c, child_drop);
  return TETHER_OK;
}

TEST(nested_grandchild_error) {
  family c;
  tether_runner r = {0};
  counter_init(&c.drops);
  counter_init(&c.child_drops);
  failer_init(&c.grandchild, 9, "deep failure");
  CHECK_ST(tether_runner_start(NULL, parent_fn, &c, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_FAILED);
  CHECK_ST(c.st_child, TETHER_OK);
  CHECK_ST(c.st_grandchild, TETHER_OK);
  CHECK_ST(c.st_child_runner, TETHER_OK); /* a nested task belongs to the runner too */
  CHECK(c.child_runner_id != 0);
  CHECK_EQ(tether_runner_error_count(r), 1);
  CHECK_RUNNER_ERROR(r, 0, TETHER_E_TASK_FAILED, 9, "deep failure", "grandchild");
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&c.drops), 1);
  CHECK_EQ(counter_get(&c.child_drops), 1);
  CHECK_EQ(counter_get(&c.grandchild.drops), 1);
  counter_destroy(&c.drops);
  counter_destroy(&c.child_drops);
  counter_destroy(&c.grandchild.drops);
}

/* ---- live_threads counts the target and every nested thread ----------------------------- */

typedef struct crowd {
  blocker target; /* FIRST member */
  blocker n[3];
} crowd;

static tether_status spawn_crowd(tether_task *t, void *arg) {
  crowd *c = (crowd *)arg;
  int i;
  for (i = 0; i < 3; i++) CHECK_ST(tether_task_spawn(t, "worker", blocker_fn, &c->n[i], count_drop), TETHER_OK);
  return blocker_fn(t, &c->target);
}

TEST(live_threads_counts_nested) {
  crowd c;
  tether_runner r = {0};
  int i;
  blocker_init(&c.target);
  for (i = 0; i < 3; i++) blocker_init(&c.n[i]);
  CHECK_ST(tether_runner_start(NULL, spawn_crowd, &c, count_drop, &r), TETHER_OK);
  CHECK(event_wait(&c.target.started, T_LONG)); /* set after the three spawns returned */
  CHECK_LIVE(r, 4);
  for (i = 0; i < 3; i++) {
    event_set(&c.n[i].gate);
    CHECK_SOON(live_threads(r) == (size_t)(3 - i));
    CHECK_STATE(r, TETHER_RUNNING);
  }
  event_set(&c.target.gate);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_LIVE(r, 0);
  CHECK_STATE(r, TETHER_SUCCEEDED);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&c.target.drops), 1);
  blocker_destroy(&c.target);
  for (i = 0; i < 3; i++) {
    CHECK_EQ(counter_get(&c.n[i].drops), 1);
    blocker_destroy(&c.n[i]);
  }
}

/* ---- only the target fills the result slot ---------------------------------------------- */

static int target_result = 2;

typedef struct results {
  counter drops;        /* FIRST member */
  counter nested_value_drops; /* drop of the value the nested thread tried to set */
  counter nested_drops;       /* the nested thread's arg */
  tether_status nested_st;
  long drops_at_return; /* nested_value_drops right after the failing call returned */
  event nested_done;
} results;

static tether_status nested_sets_result(tether_task *t, void *arg) {
  results *c = (results *)arg;
  c->nested_st = tether_task_set_result(t, &c->nested_value_drops, count_drop);
  c->drops_at_return = counter_get(&c->nested_value_drops);
  event_set(&c->nested_done);
  return TETHER_OK;
}

static void results_nested_drop(void *arg) { counter_add(&((results *)arg)->nested_drops, 1); }

static tether_status target_and_nested_set_result(tether_task *t, void *arg) {
  results *c = (results *)arg;
  CHECK_ST(tether_task_spawn(t, NULL, nested_sets_result, c, results_nested_drop), TETHER_OK);
  CHECK(event_wait(&c->nested_done, T_LONG));
  return tether_task_set_result(t, &target_result, NULL);
}

TEST(nested_set_result_wrong_state) {
  results c;
  tether_runner r = {0};
  void *out = NULL;
  counter_init(&c.drops);
  counter_init(&c.nested_value_drops);
  counter_init(&c.nested_drops);
  event_init(&c.nested_done);
  CHECK_ST(tether_runner_start(NULL, target_and_nested_set_result, &c, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_SUCCEEDED); /* the refused set_result is not a failure */
  CHECK_ST(c.nested_st, TETHER_E_WRONG_STATE);
  CHECK_EQ(c.drops_at_return, 1); /* the refused value was dropped before the call returned */
  CHECK_ST(tether_runner_take_result(r, &out), TETHER_OK);
  CHECK(out == (void *)&target_result);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&c.nested_value_drops), 1);
  CHECK_EQ(counter_get(&c.drops), 1);
  CHECK_EQ(counter_get(&c.nested_drops), 1);
  counter_destroy(&c.drops);
  counter_destroy(&c.nested_value_drops);
  counter_destroy(&c.nested_drops);
  event_destroy(&c.nested_done);
}
