/*
 * test_ray.c — the cases of Ray Train's test_thread_runner.py (PR #55756), in C.
 *
 * Ray's ThreadRunner.run/join/get_return_value/get_error/is_running map to
 * tether_runner_start/join/take_result/error/poll. Ray's "join before run" and "run twice"
 * misuse cases have no direct C form (there is no runner before start, and every start
 * makes a new one); their C equivalents are a null handle and a result taken early or twice.
 */
#define _POSIX_C_SOURCE 200809L
#include "fixtures.h"

/* ---- test_successful_return: the target's value is available after join --------------- */

typedef struct answer_ctx {
  counter drops;        /* FIRST member */
  counter result_drops; /* drop of the result value: must never run once taken */
} answer_ctx;

typedef struct answer { answer_ctx *owner; int value; } answer;

static void answer_drop(void *p) {
  answer *v = (answer *)p;
  counter_add(&v->owner->result_drops, 1);
  free(v);
}

static tether_status answer_target(tether_task *t, void *arg) {
  answer *v = (answer *)malloc(sizeof *v);
  CHECK(v != NULL);
  v->owner = (answer_ctx *)arg;
  v->value = 42;
  return tether_task_set_result(t, v, answer_drop);
}

TEST(ray_successful_return) {
  answer_ctx c;
  tether_runner r = {0};
  tether_error e = {99};
  void *out = NULL;
  counter_init(&c.drops);
  counter_init(&c.result_drops);

  CHECK_ST(tether_runner_start(NULL, answer_target, &c, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_SUCCEEDED);
  CHECK_ST(tether_runner_error(r, &e), TETHER_OK); /* no error: OK and the null handle */
  CHECK_EQ(e.id, 0);
  CHECK_EQ(tether_runner_error_count(r), 0);
  CHECK_ST(tether_runner_take_result(r, &out), TETHER_OK);
  CHECK(out != NULL);
  CHECK_EQ(((answer *)out)->value, 42);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_LIVE(r, 0);
  CHECK_ST(tether_runner_release(r), TETHER_OK);

  CHECK_EQ(counter_get(&c.drops), 1);        /* the arg, once */
  CHECK_EQ(counter_get(&c.result_drops), 0); /* taken: the caller owns it */
  answer_drop(out);
  counter_destroy(&c.drops);
  counter_destroy(&c.result_drops);
}

/* ---- test_error: a target error surfaces with its message ------------------------------- */

/* Ray checks the traceback keeps train_func and drops the wrappers; in C the message and the
 * thread name are what the error keeps, however deep the failing call. */
static tether_status train_func(tether_task *t) { return tether_task_fail(t, 7, "ValueError: bad batch"); }
static tether_status train_fn_with_final_checkpoint_flush(tether_task *t) { return train_func(t); }
static tether_status wrapped_train_func(tether_task *t, void *arg) {
  (void)arg;
  return train_fn_with_final_checkpoint_flush(t);
}

TEST(ray_error) {
  counter drops;
  tether_runner r = {0};
  tether_runner_options o = runner_opts("train-worker");
  tether_error e = {0};
  void *out = &drops;
  counter_init(&drops);

  CHECK_ST(tether_runner_start(&o, wrapped_train_func, &drops, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join(r, T_LONG), TETHER_OK); /* the call worked; the task failed */
  CHECK_STATE(r, TETHER_FAILED);
  CHECK_ST(tether_runner_take_result(r, &out), TETHER_E_WRONG_STATE); /* no return value */
  CHECK_ST(tether_runner_error(r, &e), TETHER_OK);
  CHECK_ERROR(e, TETHER_E_TASK_FAILED, 7, "ValueError: bad batch", "train-worker");
  CHECK_EQ(tether_error_type_name(e, NULL, 0), 0); /* C code: no exception type */
  CHECK_ST(tether_error_release(e), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_LIVE(r, 0);
  CHECK_EQ(tether_runner_error_count(r), 1);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&drops), 1);
  counter_destroy(&drops);
}

/* A target that returns a non-OK value fails with TASK_FAILED, user_code the value, and the
 * message "task returned N". */
static tether_status return_five(tether_task *t, void *arg) {
  (void)t;
  (void)arg;
  return 5;
}

TEST(ray_error_return_code) {
  counter drops;
  tether_runner r = {0};
  counter_init(&drops);
  CHECK_ST(tether_runner_start(NULL, return_five, &drops, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_FAILED);
  CHECK_RUNNER_ERROR(r, 0, TETHER_E_TASK_FAILED, 5, "task returned 5", "tether-run");
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&drops), 1);
  counter_destroy(&drops);
}

/* ---- test_nested_thread_error: a nested thread's error surfaces ------------------------- */

typedef struct nested_ctx {
  counter drops;        /* FIRST member: the target's arg */
  counter nested_drops; /* the nested thread's arg */
  event nested_done;    /* the nested thread is about to return its failure */
  tether_status spawn_status;
} nested_ctx;

static tether_status nested_raise(tether_task *t, void *arg) {
  nested_ctx *c = (nested_ctx *)arg;
  tether_status st = tether_task_fail(t, 11, "ValueError in nested");
  event_set(&c->nested_done);
  return st;
}

static void nested_ctx_drop(void *arg) { counter_add(&((nested_ctx *)arg)->nested_drops, 1); }

static tether_status nested_target(tether_task *t, void *arg) {
  nested_ctx *c = (nested_ctx *)arg;
  c->spawn_status = tether_task_spawn(t, "nested", nested_raise, c, nested_ctx_drop);
  /* Ray's target joins its thread; here the nested thread signals before returning. */
  CHECK(event_wait(&c->nested_done, T_LONG));
  return TETHER_OK;
}

TEST(ray_nested_thread_error) {
  nested_ctx c;
  tether_runner r = {0};
  void *out = NULL;
  counter_init(&c.drops);
  counter_init(&c.nested_drops);
  event_init(&c.nested_done);

  CHECK_ST(tether_runner_start(NULL, nested_target, &c, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_FAILED);
  CHECK_ST(tether_runner_take_result(r, &out), TETHER_E_WRONG_STATE);
  CHECK_RUNNER_ERROR(r, 0, TETHER_E_TASK_FAILED, 11, "ValueError in nested", "nested");
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_LIVE(r, 0);
  CHECK_EQ(tether_runner_error_count(r), 1); /* the target returned OK: no second error */
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_ST(c.spawn_status, TETHER_OK);
  CHECK_EQ(counter_get(&c.drops), 1);
  CHECK_EQ(counter_get(&c.nested_drops), 1);
  counter_destroy(&c.drops);
  counter_destroy(&c.nested_drops);
  event_destroy(&c.nested_done);
}

/* ---- test_running: RUNNING while the target is blocked, SUCCEEDED once released -------- */

TEST(ray_running) {
  blocker b;
  tether_runner r;
  blocker_init(&b);
  r = start_blocker("runner", &b);

  CHECK_STATE(r, TETHER_RUNNING);
  CHECK_LIVE(r, 1);
  CHECK_ST(tether_runner_join(r, 0), TETHER_E_TIMEOUT);       /* 0 never blocks */
  CHECK_ST(tether_runner_join(r, T_SHORT), TETHER_E_TIMEOUT); /* join timeout while running */
  CHECK_ST(tether_runner_join_all(r, 0), TETHER_E_TIMEOUT);
  CHECK_STATE(r, TETHER_RUNNING);

  event_set(&b.gate); /* let the "training thread" exit */
  CHECK_ST(tether_runner_join(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_SUCCEEDED);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_LIVE(r, 0);
  CHECK_EQ(counter_get(&b.saw_stop), 0); /* nothing asked it to stop */
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&b.drops), 1);
  blocker_destroy(&b);
}

/* ---- test_join_before_run: there is no runner before start: the null handle ----------- */

TEST(ray_join_before_run) {
  tether_runner none = {0};
  int32_t state = -1;
  void *out = &state;
  CHECK_ST(tether_runner_join(none, T_SHORT), TETHER_E_INVALID_HANDLE);
  CHECK_ST(tether_runner_join_all(none, T_SHORT), TETHER_E_INVALID_HANDLE);
  CHECK_ST(tether_runner_poll(none, &state), TETHER_E_INVALID_HANDLE);
  CHECK_EQ(state, -1);
  CHECK_ST(tether_runner_take_result(none, &out), TETHER_E_INVALID_HANDLE);
}

/* ---- test_run_twice: every start is a new, independent runner --------------------------- */

TEST(ray_run_twice) {
  blocker a, b;
  tether_runner ra, rb;
  blocker_init(&a);
  blocker_init(&b);
  ra = start_blocker("first", &a);
  rb = start_blocker("second", &b);
  CHECK(ra.id != rb.id);

  b.fail_msg = "second failed";
  event_set(&b.gate);
  CHECK_ST(tether_runner_join(rb, T_LONG), TETHER_OK);
  CHECK_STATE(rb, TETHER_FAILED);
  CHECK_STATE(ra, TETHER_RUNNING); /* the first runner is untouched by the second's failure */
  CHECK_EQ(tether_runner_error_count(ra), 0);

  event_set(&a.gate);
  CHECK_ST(tether_runner_join(ra, T_LONG), TETHER_OK);
  CHECK_STATE(ra, TETHER_SUCCEEDED);
  CHECK_EQ(counter_get(&a.saw_stop), 0);
  CHECK_ST(tether_runner_release(ra), TETHER_OK);
  CHECK_ST(tether_runner_release(rb), TETHER_OK);
  CHECK_EQ(counter_get(&a.drops), 1);
  CHECK_EQ(counter_get(&b.drops), 1);
  blocker_destroy(&a);
  blocker_destroy(&b);
}

/* ---- take_result before the end and twice ----------------------------------------------- */

static int the_result = 42;

static tether_status result_after_gate(tether_task *t, void *arg) {
  blocker *b = (blocker *)arg;
  event_set(&b->started);
  CHECK(event_wait(&b->gate, T_LONG));
  return tether_task_set_result(t, &the_result, NULL);
}

TEST(ray_take_result_misuse) {
  blocker b;
  tether_runner r = {0};
  void *out = NULL;
  blocker_init(&b);
  CHECK_ST(tether_runner_start(NULL, result_after_gate, &b, count_drop, &r), TETHER_OK);
  CHECK(event_wait(&b.started, T_LONG));

  CHECK_ST(tether_runner_take_result(r, &out), TETHER_E_WRONG_STATE); /* still RUNNING */
  CHECK(out == NULL);
  event_set(&b.gate);
  CHECK_ST(tether_runner_join(r, T_LONG), TETHER_OK);
  CHECK_ST(tether_runner_take_result(r, &out), TETHER_OK);
  CHECK(out == (void *)&the_result);
  out = NULL;
  CHECK_ST(tether_runner_take_result(r, &out), TETHER_E_WRONG_STATE); /* taken already */
  CHECK(out == NULL);
  CHECK_STATE(r, TETHER_SUCCEEDED); /* a misuse changes nothing */
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&b.drops), 1);
  blocker_destroy(&b);
}

/* ---- join timeouts: 0 never blocks, < 0 waits forever, a huge one saturates ------------- */

TEST(join_timeouts) {
  counter drops;
  tether_runner r = {0};
  int64_t t0;
  counter_init(&drops);

  CHECK_ST(tether_runner_start(NULL, ok_fn, &drops, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join(r, INT64_MAX), TETHER_OK); /* no overflow into "already late" */
  CHECK_ST(tether_runner_join(r, -1), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, INT64_MAX), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, INT64_MIN), TETHER_OK);
  t0 = now_ns();
  CHECK_ST(tether_runner_join(r, 0), TETHER_OK); /* terminal: 0 succeeds at once */
  CHECK(now_ns() - t0 < 5 * SEC);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&drops), 1);
  counter_destroy(&drops);
}
