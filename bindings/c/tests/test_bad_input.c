/*
 * test_bad_input.c — every bad input of the contract gets its documented status, never a
 * crash, and an `arg` handed in is dropped exactly once on every path, failures included
 * (before the failing call returns).
 *
 *   NULL out-pointer, NULL fn/target, empty name, bad struct_size,
 *   stack below the minimum, index past the end, NULL task  -> TETHER_E_INVALID_ARGUMENT
 *   null, forged, wrong-kind or released handle             -> TETHER_E_INVALID_HANDLE
 *   error accessors on a bad handle                         -> 0 / ""
 */
#define _GNU_SOURCE /* os_calls.h: syscall, pthread_getname_np */
#include "fixtures.h"
#include "os_calls.h"

#include <limits.h>


static void never_called(void *arg) {
  (void)arg;
  harness_fail(__FILE__, __LINE__, "on_done fn ran for a bad handle");
}

/* check_bad_runner: every runner function refuses `r` with TETHER_E_INVALID_HANDLE (0 for
 * error_count), and on_done drops its arg without running fn. */
static void check_bad_runner(tether_runner r, const char *what) {
  int32_t state = -1;
  tether_error e = {0};
  void *out = NULL;
  size_t n = 0;
  counter drops;
  counter_init(&drops);
  CHECK_ST_IN(what, tether_runner_report_error(r, TETHER_E_TASK_FAILED, 1, "x"), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_runner_poll(r, &state), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_runner_join(r, 0), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_runner_join(r, T_SHORT), TETHER_E_INVALID_HANDLE); /* not TIMEOUT */
  CHECK_ST_IN(what, tether_runner_join_all(r, T_SHORT), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_runner_on_done(r, never_called, &drops, count_drop), TETHER_E_INVALID_HANDLE);
  CHECK_IN(what, counter_get(&drops) == 1);
  CHECK_ST_IN(what, tether_runner_error(r, &e), TETHER_E_INVALID_HANDLE);
  CHECK_IN(what, tether_runner_error_count(r) == 0);
  CHECK_ST_IN(what, tether_runner_error_at(r, 0, &e), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_runner_take_result(r, &out), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_runner_live_threads(r, &n), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_runner_cancel(r), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_runner_release(r), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_runner_release_nowait(r), TETHER_E_INVALID_HANDLE);
  counter_destroy(&drops);
}

/* check_bad_error: every error accessor gives 0 / "" for `e`; cause and release refuse it. */
static void check_bad_error(tether_error e, const char *what) {
  char buf[16];
  tether_error cause = {77};
  CHECK_IN(what, tether_error_code(e) == 0);
  CHECK_IN(what, tether_error_user_code(e) == 0);
  memset(buf, 'X', sizeof buf);
  CHECK_IN(what, tether_error_message(e, buf, sizeof buf) == 0 && buf[0] == '\0');
  memset(buf, 'X', sizeof buf);
  CHECK_IN(what, tether_error_thread_name(e, buf, sizeof buf) == 0 && buf[0] == '\0');
  memset(buf, 'X', sizeof buf);
  CHECK_IN(what, tether_error_type_name(e, buf, sizeof buf) == 0 && buf[0] == '\0');
  CHECK_IN(what, tether_error_message(e, NULL, 0) == 0);
  CHECK_ST_IN(what, tether_error_cause(e, &cause), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_error_release(e), TETHER_E_INVALID_HANDLE);
}

/* failed_runner: a finished runner whose target failed with "bad input"; its first error is
 * returned in *e (the caller releases both). */
static tether_runner failed_runner(tether_error *e) {
  tether_runner r = {0};
  CHECK_ST(tether_runner_start(NULL, fail_fn, (void *)"bad input", NULL, &r), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_ST(tether_runner_error(r, e), TETHER_OK);
  CHECK(e->id != 0);
  return r;
}

/* ---- tether_runner_start ---------------------------------------------------------------- */

typedef struct attempt {
  tether_status st;
  uint64_t id;      /* *out after the call (when out was given) */
  long drops_at_return;
  long drops_total; /* after the runner, if any, was released */
} attempt;

/* try_start: one start with a counted arg; a runner that did start is joined and released. */
static attempt try_start(const tether_runner_options *o, tether_fn fn, int with_out) {
  attempt a;
  counter drops;
  tether_runner r = {12345};
  counter_init(&drops);
  a.st = tether_runner_start(o, fn, &drops, count_drop, with_out ? &r : NULL);
  a.drops_at_return = counter_get(&drops);
  a.id = with_out ? r.id : 0;
  if (a.st == TETHER_OK && with_out) {
    CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
    CHECK_ST(tether_runner_release(r), TETHER_OK);
  }
  a.drops_total = counter_get(&drops);
  counter_destroy(&drops);
  return a;
}

#define CHECK_REJECTED(a)                                                                    \
  do {                                                                                       \
    attempt at_ = (a);                                                                       \
    CHECK_ST(at_.st, TETHER_E_INVALID_ARGUMENT);                                             \
    CHECK_EQ(at_.id, 0);              /* *out is the null handle */                          \
    CHECK_EQ(at_.drops_at_return, 1); /* dropped before the call returned */                 \
    CHECK_EQ(at_.drops_total, 1);                                                            \
  } while (0)

#define CHECK_STARTED(a)                                                                     \
  do {                                                                                       \
    attempt at_ = (a);                                                                       \
    CHECK_ST(at_.st, TETHER_OK);                                                             \
    CHECK(at_.id != 0);                                                                      \
    CHECK_EQ(at_.drops_total, 1);                                                            \
  } while (0)

TEST(bad_start_args) {
  tether_runner_options o;
  tether_runner r = {5};
  long min_stack = os_stack_min();

  CHECK_STARTED(try_start(NULL, ok_fn, 1));            /* NULL options: the defaults */
  CHECK_REJECTED(try_start(NULL, NULL, 1));            /* NULL target */
  CHECK_REJECTED(try_start(NULL, ok_fn, 0));           /* NULL out */
  CHECK_REJECTED(try_start(NULL, NULL, 0));            /* both */

  o = runner_opts("sized");
  o.struct_size = (uint32_t)sizeof o + 1;              /* newer than this library */
  CHECK_REJECTED(try_start(&o, ok_fn, 1));
  o.struct_size = UINT32_MAX;
  CHECK_REJECTED(try_start(&o, ok_fn, 1));
  o.struct_size = 0;                                   /* older than the first version */
  CHECK_REJECTED(try_start(&o, ok_fn, 1));
  o.struct_size = (uint32_t)sizeof(uint32_t);
  CHECK_REJECTED(try_start(&o, ok_fn, 1));

  o = runner_opts("");                                 /* empty name */
  CHECK_REJECTED(try_start(&o, ok_fn, 1));

  o = runner_opts("tiny-stack");
  o.stack_size = 1;                                    /* below the platform minimum */
  CHECK_REJECTED(try_start(&o, ok_fn, 1));
  CHECK(min_stack > 1);
  o.stack_size = (size_t)min_stack - 1;
  CHECK_REJECTED(try_start(&o, ok_fn, 1));
  o.stack_size = (size_t)1 << 20;                      /* a fine explicit size */
  CHECK_STARTED(try_start(&o, ok_fn, 1));

  /* No arg_drop: the failure path must not call a NULL drop. */
  CHECK_ST(tether_runner_start(NULL, NULL, &o, NULL, &r), TETHER_E_INVALID_ARGUMENT);
  CHECK_EQ(r.id, 0);

  tether_runner_options_init(NULL); /* does nothing */
  tether_runner_options_init(&o);
  CHECK_EQ(o.struct_size, sizeof o);
  CHECK_STR(o.name, "tether-run");
  CHECK_EQ(o.stop_on_error, 1);
  CHECK_EQ(o.stack_size, 0);
}

/* ---- handles ---------------------------------------------------------------------------- */

TEST(bad_null_handle) {
  tether_runner r = {0};
  tether_error e = {0};
  check_bad_runner(r, "null runner");
  check_bad_error(e, "null error");
}

TEST(bad_forged_handle) {
  blocker b;
  tether_runner live, forged;
  tether_error err, forged_e;
  tether_runner failed;
  uint64_t ids[5];
  int i;
  blocker_init(&b);
  live = start_blocker("live", &b);
  failed = failed_runner(&err);

  ids[0] = 1;
  ids[1] = UINT64_C(0xdeadbeefcafebabe);
  ids[2] = UINT64_MAX;
  ids[3] = live.id ^ (UINT64_C(1) << 63);
  ids[4] = live.id ^ (UINT64_C(1) << 40);
  for (i = 0; i < 5; i++) {
    if (ids[i] == live.id || ids[i] == failed.id || ids[i] == err.id) continue;
    forged.id = ids[i];
    check_bad_runner(forged, "forged runner");
    forged_e.id = ids[i] ^ 0x5a5a; /* never the live error's id (checked below) */
    if (forged_e.id != err.id && forged_e.id != 0) check_bad_error(forged_e, "forged error");
  }
  /* The live objects are untouched by the forgeries. */
  CHECK_STATE(live, TETHER_RUNNING);
  CHECK_ERROR(err, TETHER_E_TASK_FAILED, 1, "bad input", NULL);

  event_set(&b.gate);
  CHECK_ST(tether_runner_join_all(live, T_LONG), TETHER_OK);
  CHECK_STATE(live, TETHER_SUCCEEDED);
  CHECK_ST(tether_error_release(err), TETHER_OK);
  CHECK_ST(tether_runner_release(failed), TETHER_OK);
  CHECK_ST(tether_runner_release(live), TETHER_OK);
  CHECK_EQ(counter_get(&b.drops), 1);
  blocker_destroy(&b);
}

/* A handle of one kind, passed as another (the id copied through a union). */
TEST(bad_wrong_kind_handle) {
  tether_error err;
  tether_runner r;
  union {
    tether_runner runner;
    tether_error error;
  } u;
  r = failed_runner(&err);

  u.error = err;
  check_bad_runner(u.runner, "error id as runner");
  u.runner = r;
  check_bad_error(u.error, "runner id as error");

  /* Both still work as their own kind. */
  CHECK_STATE(r, TETHER_FAILED);
  CHECK_ERROR(err, TETHER_E_TASK_FAILED, 1, "bad input", NULL);
  CHECK_ST(tether_error_release(err), TETHER_OK);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
}

/* Released handles (released twice included), and their ids never come back to life. */
TEST(bad_released_handle) {
  tether_error err, err2 = {0};
  tether_runner r, r2 = {0};
  int i;
  r = failed_runner(&err);
  CHECK_ST(tether_runner_error(r, &err2), TETHER_OK); /* a second handle to the same error */
  CHECK_ST(tether_error_release(err), TETHER_OK);
  CHECK_ERROR(err2, TETHER_E_TASK_FAILED, 1, "bad input", NULL); /* shared: still alive */
  CHECK_ST(tether_error_release(err2), TETHER_OK);
  CHECK_ST(tether_runner_release(r), TETHER_OK);

  check_bad_runner(r, "released runner");  /* includes a second release */
  check_bad_error(err, "released error");  /* includes a second release */
  check_bad_error(err2, "released error 2");

  /* New objects may reuse the slots; the old ids stay dead (generation-counted). */
  for (i = 0; i < 64; i++) {
    CHECK_ST(tether_runner_start(NULL, ok_fn, NULL, NULL, &r2), TETHER_OK);
    CHECK(r2.id != r.id);
    CHECK_ST(tether_runner_join(r2, T_LONG), TETHER_OK);
    check_bad_runner(r, "stale runner");
    CHECK_STATE(r2, TETHER_SUCCEEDED);
    CHECK_ST(tether_runner_release(r2), TETHER_OK);
  }
}

/* ---- NULL out-pointers and indexes ------------------------------------------------------ */

TEST(bad_out_pointers) {
  tether_error err, cause = {77};
  tether_runner r, ok = {0};
  r = failed_runner(&err);
  /* take_result on a SUCCEEDED runner, so NULL out is the only thing wrong. */
  CHECK_ST(tether_runner_start(NULL, ok_fn, NULL, NULL, &ok), TETHER_OK);
  CHECK_ST(tether_runner_join(ok, T_LONG), TETHER_OK);
  CHECK_ST(tether_runner_take_result(ok, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_runner_release(ok), TETHER_OK);
  CHECK_ST(tether_runner_poll(r, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_runner_error(r, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_runner_error_at(r, 0, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_runner_live_threads(r, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_error_cause(err, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_error_cause(err, &cause), TETHER_OK); /* a task failure has no cause */
  CHECK_EQ(cause.id, 0);
  CHECK_STATE(r, TETHER_FAILED); /* the refused calls changed nothing */
  CHECK_EQ(tether_runner_error_count(r), 1);
  CHECK_ST(tether_error_release(err), TETHER_OK);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
}

TEST(bad_error_index) {
  counter drops;
  tether_runner ok = {0}, failed;
  tether_error e = {77}, err;
  counter_init(&drops);
  CHECK_ST(tether_runner_start(NULL, ok_fn, &drops, count_drop, &ok), TETHER_OK);
  CHECK_ST(tether_runner_join_all(ok, T_LONG), TETHER_OK);
  CHECK_ST(tether_runner_error_at(ok, 0, &e), TETHER_E_INVALID_ARGUMENT); /* no errors */
  CHECK_ST(tether_runner_error(ok, &e), TETHER_OK);                      /* none: null */
  CHECK_EQ(e.id, 0);

  failed = failed_runner(&err);
  CHECK_ST(tether_runner_error_at(failed, 1, &e), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_runner_error_at(failed, (size_t)-1, &e), TETHER_E_INVALID_ARGUMENT);
  CHECK_RUNNER_ERROR(failed, 0, TETHER_E_TASK_FAILED, 1, "bad input", "tether-run");
  CHECK_ST(tether_error_release(err), TETHER_OK);
  CHECK_ST(tether_runner_release(failed), TETHER_OK);
  CHECK_ST(tether_runner_release(ok), TETHER_OK);
  CHECK_EQ(counter_get(&drops), 1);
  counter_destroy(&drops);
}

/* ---- task functions --------------------------------------------------------------------- */

/* With a NULL task (here, outside any callback): INVALID_ARGUMENT / 0 / "", args dropped. */
TEST(bad_task_null) {
  counter drops;
  tether_runner r = {77};
  tether_actor a = {77};
  const char *name;
  counter_init(&drops);
  CHECK_ST(tether_task_fail(NULL, 1, "x"), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_task_fail_with(NULL, TETHER_E_PANIC, 1, "x"), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_task_set_result(NULL, &drops, count_drop), TETHER_E_INVALID_ARGUMENT);
  CHECK_EQ(counter_get(&drops), 1); /* the value was dropped before the call returned */
  CHECK_ST(tether_task_set_result(NULL, NULL, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_EQ(tether_task_stop_requested(NULL), 0);
  name = tether_task_thread_name(NULL);
  CHECK_STR(name, "");
  CHECK_ST(tether_task_runner(NULL, &r), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_task_actor(NULL, &a), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_task_spawn(NULL, "n", ok_fn, &drops, count_drop), TETHER_E_INVALID_ARGUMENT);
  CHECK_EQ(counter_get(&drops), 2);
  CHECK_ST(tether_task_spawn(NULL, "n", ok_fn, NULL, NULL), TETHER_E_INVALID_ARGUMENT);
  counter_destroy(&drops);
}

/* Bad spawns from inside a target: refused, args dropped at once, the scope unharmed. */
enum { S_NULL_FN, S_EMPTY_NAME, S_NULL_TASK, S_NULL_ALL, S_RUNNER_NULL_OUT, S_ACTOR_NULL_OUT,
       S_SET_RESULT_NULL_TASK, S_N };

typedef struct bad_spawns {
  counter drops; /* FIRST member */
  counter arg_drops[S_N];
  tether_status st[S_N];
  long drops_at_return[S_N];
} bad_spawns;

/* The calls that take an arg must have dropped it once; the others have none. */
static const long want_drops[S_N] = {1, 1, 1, 0, 0, 0, 1};

/* BAD_CALL: makes call i, then records how often its arg was dropped by the time it
 * returned. */
#define BAD_CALL(i, call)                                                                    \
  do {                                                                                       \
    c->st[i] = (call);                                                                       \
    c->drops_at_return[i] = counter_get(&d[i]);                                              \
  } while (0)

static tether_status spawn_badly(tether_task *t, void *arg) {
  bad_spawns *c = (bad_spawns *)arg;
  counter *d = c->arg_drops;
  BAD_CALL(S_NULL_FN, tether_task_spawn(t, "n", NULL, &d[S_NULL_FN], count_drop));
  BAD_CALL(S_EMPTY_NAME, tether_task_spawn(t, "", ok_fn, &d[S_EMPTY_NAME], count_drop));
  BAD_CALL(S_NULL_TASK, tether_task_spawn(NULL, "n", ok_fn, &d[S_NULL_TASK], count_drop));
  BAD_CALL(S_NULL_ALL, tether_task_spawn(t, "n", NULL, NULL, NULL));
  BAD_CALL(S_RUNNER_NULL_OUT, tether_task_runner(t, NULL));
  BAD_CALL(S_ACTOR_NULL_OUT, tether_task_actor(t, NULL));
  BAD_CALL(S_SET_RESULT_NULL_TASK,
           tether_task_set_result(NULL, &d[S_SET_RESULT_NULL_TASK], count_drop));
  return TETHER_OK;
}

TEST(bad_spawn_args) {
  bad_spawns c;
  tether_runner r = {0};
  int i;
  counter_init(&c.drops);
  for (i = 0; i < S_N; i++) counter_init(&c.arg_drops[i]);
  CHECK_ST(tether_runner_start(NULL, spawn_badly, &c, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  for (i = 0; i < S_N; i++) {
    if (c.st[i] != TETHER_E_INVALID_ARGUMENT)
      harness_fail(__FILE__, __LINE__, "bad call %d returned %s, want TETHER_E_INVALID_ARGUMENT", i,
                   tether_status_name(c.st[i]));
    if (c.drops_at_return[i] != want_drops[i])
      harness_fail(__FILE__, __LINE__, "bad call %d: arg dropped %ld times before the call returned, want %ld",
                   i, c.drops_at_return[i], want_drops[i]);
  }
  CHECK_STATE(r, TETHER_SUCCEEDED); /* refused calls do not fail the scope */
  CHECK_EQ(tether_runner_error_count(r), 0);
  CHECK_LIVE(r, 0);                 /* and started nothing */
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&c.drops), 1);
  for (i = 0; i < S_N; i++) {
    CHECK_EQ(counter_get(&c.arg_drops[i]), want_drops[i]);
    counter_destroy(&c.arg_drops[i]);
  }
  counter_destroy(&c.drops);
}
