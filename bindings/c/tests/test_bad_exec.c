/*
 * test_bad_exec.c — every bad input of sections 6-8 (executors, futures, actors) gets its
 * documented status, never a crash, and every `arg` handed in is dropped exactly once on
 * every path, before the failing call returns; out-handles of failing calls are null.
 *
 *   NULL fn / ctor / m / out / state / fs / index, bad struct_size (options and stats),
 *   empty name, cpu < -1 or unusable, negative idle_spin_ns, manual not 0/1, bad stop
 *   mode, n == 0, index past the end                        -> TETHER_E_INVALID_ARGUMENT
 *   null, forged, wrong-kind or released handle             -> TETHER_E_INVALID_HANDLE
 *   (wait_any: with *index the position of the bad handle)
 */
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#include "actor_fixtures.h"

#include <limits.h>


/* CHECK_DROP_IN: expr (which hands `d` as its arg) returns want and drops it exactly once
 * before returning. */
#define CHECK_DROP_IN(what, expr, want, d)                                                   \
  do {                                                                                       \
    long b_ = counter_get(d);                                                                \
    CHECK_ST_IN(what, expr, want);                                                           \
    if (counter_get(d) - b_ != 1)                                                            \
      harness_fail(__FILE__, __LINE__, "[%s] %s dropped its arg %ld times, want 1", (what),   \
                   #expr, counter_get(d) - b_);                                              \
  } while (0)

static void never_notified(void *arg) {
  (void)arg;
  harness_fail(__FILE__, __LINE__, "on_done fn ran for a bad handle");
}

static tether_status never_fn(tether_task *t, void *arg) {
  (void)t;
  (void)arg;
  harness_fail(__FILE__, __LINE__, "a task ran for a refused submit");
}

static tether_status never_m(tether_task *t, void *state, void *arg) {
  (void)t;
  (void)state;
  (void)arg;
  harness_fail(__FILE__, __LINE__, "a method ran for a refused call");
}

/* ---- the checks per handle kind --------------------------------------------------------- */

static void check_bad_executor(tether_executor e, const char *what) {
  counter d;
  tether_future f = {77};
  tether_error err = {77};
  tether_executor_stats st;
  counter_init(&d);
  memset(&st, 0, sizeof st);
  st.struct_size = (uint32_t)sizeof st;
  CHECK_DROP_IN(what, tether_executor_submit(e, never_fn, &d, count_drop, &f), TETHER_E_INVALID_HANDLE, &d);
  CHECK_IN(what, f.id == 0);
  CHECK_DROP_IN(what, tether_executor_submit(e, never_fn, &d, count_drop, NULL), TETHER_E_INVALID_HANDLE, &d);
  f.id = 77;
  CHECK_DROP_IN(what, tether_executor_submit_timeout(e, never_fn, &d, count_drop, &f, T_SHORT),
                TETHER_E_INVALID_HANDLE, &d);
  CHECK_IN(what, f.id == 0);
  CHECK_ST_IN(what, tether_executor_get_stats(e, &st), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_executor_error(e, 0, &err), TETHER_E_INVALID_HANDLE);
  CHECK_IN(what, err.id == 0);
  CHECK_ST_IN(what, tether_executor_run(e, 0), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_executor_run(e, T_SHORT), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_executor_release(e), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_executor_release_nowait(e), TETHER_E_INVALID_HANDLE);
  /* An actor on it (the null handle there means "a dedicated thread": not a bad one). */
  if (e.id != 0) {
    tether_actor_options o = actor_opts("on-bad-ex", NULL, 0);
    rec r;
    tether_actor a = {77};
    rec_init(&r);
    o.executor = e;
    CHECK_DROP_IN(what, tether_actor_create(&o, rec_ctor, rec_dtor, &r, count_drop, &a), TETHER_E_INVALID_HANDLE,
                  &r.drops);
    CHECK_IN(what, a.id == 0);
    CHECK_IN(what, counter_get(&r.ctor_runs) == 0);
    rec_destroy(&r);
  }
  counter_destroy(&d);
}

static void check_bad_actor(tether_actor a, const char *what) {
  counter d;
  tether_future f = {77};
  tether_error err = {77}, cause = {77};
  tether_actor_stats st;
  int32_t s = -1;
  counter_init(&d);
  memset(&st, 0, sizeof st);
  st.struct_size = (uint32_t)sizeof st;
  CHECK_DROP_IN(what, tether_actor_call(a, NULL, never_m, &d, count_drop, &f), TETHER_E_INVALID_HANDLE, &d);
  CHECK_IN(what, f.id == 0);
  CHECK_DROP_IN(what, tether_actor_call(a, "io", never_m, &d, count_drop, NULL), TETHER_E_INVALID_HANDLE, &d);
  f.id = 77;
  CHECK_DROP_IN(what, tether_actor_call_timeout(a, NULL, never_m, &d, count_drop, &f, T_SHORT),
                TETHER_E_INVALID_HANDLE, &d);
  CHECK_IN(what, f.id == 0);
  CHECK_ST_IN(what, tether_actor_state(a, &s, &cause), TETHER_E_INVALID_HANDLE);
  CHECK_IN(what, cause.id == 0);
  CHECK_ST_IN(what, tether_actor_state(a, &s, NULL), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_actor_get_stats(a, &st), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_actor_error(a, 0, &err), TETHER_E_INVALID_HANDLE);
  CHECK_IN(what, err.id == 0);
  CHECK_ST_IN(what, tether_actor_stop(a, TETHER_STOP_DRAIN, 0), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_actor_stop(a, TETHER_STOP_CANCEL, T_SHORT), TETHER_E_INVALID_HANDLE); /* not TIMEOUT */
  CHECK_ST_IN(what, tether_actor_release(a), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_actor_release_nowait(a), TETHER_E_INVALID_HANDLE);
  counter_destroy(&d);
}

static void check_bad_future(tether_future f, const char *what) {
  counter d;
  int32_t s = -1;
  tether_error err = {77};
  void *out = NULL, *outs[2];
  size_t idx = 99;
  tether_future arr[2];
  counter_init(&d);
  CHECK_ST_IN(what, tether_future_wait(f, 0), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_future_wait(f, T_SHORT), TETHER_E_INVALID_HANDLE); /* not TIMEOUT */
  CHECK_ST_IN(what, tether_future_poll(f, &s), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_future_error(f, &err), TETHER_E_INVALID_HANDLE);
  CHECK_IN(what, err.id == 0);
  CHECK_ST_IN(what, tether_future_take_result(f, &out), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_future_outputs(f, outs, 2), TETHER_E_INVALID_HANDLE);
  CHECK_ST_IN(what, tether_future_cancel(f), TETHER_E_INVALID_HANDLE);
  CHECK_DROP_IN(what, tether_future_on_done(f, never_notified, &d, count_drop), TETHER_E_INVALID_HANDLE, &d);
  arr[0] = f;
  arr[1] = f;
  CHECK_ST_IN(what, tether_future_wait_any(arr, 2, T_SHORT, &idx), TETHER_E_INVALID_HANDLE);
  CHECK_IN(what, idx == 0);
  CHECK_ST_IN(what, tether_future_release(f), TETHER_E_INVALID_HANDLE);
  counter_destroy(&d);
}

/* ---- live objects of every kind --------------------------------------------------------- */

typedef struct objects {
  tether_executor e;
  tether_actor a;
  tether_future f;   /* a finished task's */
  tether_runner r;
  tether_error err;  /* a failed task's */
  rec state;
} objects;

static void objects_make(objects *o) {
  const tether_group_spec groups[] = {{"io", 1}};
  tether_actor_options ao = actor_opts("bad-input", groups, 1);
  tether_future ff = {0};
  rec_init(&o->state);
  CHECK_ST(tether_executor_create(NULL, &o->e), TETHER_OK);
  o->a = create_rec_actor(&ao, &o->state);
  CHECK_ST(tether_executor_submit(o->e, ok_fn, NULL, NULL, &o->f), TETHER_OK);
  CHECK_EQ(future_outcome(o->f), TETHER_SUCCEEDED);
  CHECK_ST(tether_executor_submit(o->e, fail_fn, (void *)"bad", NULL, &ff), TETHER_OK);
  CHECK_EQ(future_outcome(ff), TETHER_FAILED);
  CHECK_ST(tether_future_error(ff, &o->err), TETHER_OK);
  CHECK_ST(tether_future_release(ff), TETHER_OK);
  CHECK_ST(tether_runner_start(NULL, ok_fn, NULL, NULL, &o->r), TETHER_OK);
  CHECK_ST(tether_runner_join_all(o->r, T_LONG), TETHER_OK);
}

/* objects_check: every object still works as its own kind. */
static void objects_check(objects *o) {
  CHECK_EQ(future_poll(o->f), TETHER_SUCCEEDED);
  CHECK_EQ(actor_state(o->a), TETHER_ACTOR_ALIVE);
  CHECK_EQ(call_and_wait(o->a, "io", m_ok, NULL), TETHER_SUCCEEDED);
  CHECK_EQ(exec_stats(o->e).completed, 1);
  CHECK_ERROR(o->err, TETHER_E_TASK_FAILED, 1, "bad", NULL);
  CHECK_STATE(o->r, TETHER_SUCCEEDED);
}

static void objects_release(objects *o) {
  CHECK_ST(tether_future_release(o->f), TETHER_OK);
  CHECK_ST(tether_actor_release(o->a), TETHER_OK);
  CHECK_ST(tether_executor_release(o->e), TETHER_OK);
  CHECK_ST(tether_error_release(o->err), TETHER_OK);
  CHECK_ST(tether_runner_release(o->r), TETHER_OK);
  CHECK_EQ(counter_get(&o->state.dtor_runs), 1);
  CHECK_EQ(counter_get(&o->state.drops), 1);
  rec_destroy(&o->state);
}

/* ---- handles ---------------------------------------------------------------------------- */

TEST(bad_exec_handles) {
  objects o;
  tether_executor e;
  tether_actor a;
  tether_future f;
  uint64_t forged[4];
  int i;
  objects_make(&o);

  /* null */
  e.id = 0;
  a.id = 0;
  f.id = 0;
  check_bad_executor(e, "null executor");
  check_bad_actor(a, "null actor");
  check_bad_future(f, "null future");

  /* forged */
  forged[0] = 1;
  forged[1] = UINT64_C(0xdeadbeefcafebabe);
  forged[2] = UINT64_MAX;
  forged[3] = o.a.id ^ (UINT64_C(1) << 40);
  for (i = 0; i < 4; i++) {
    if (forged[i] == o.e.id || forged[i] == o.a.id || forged[i] == o.f.id || forged[i] == o.r.id ||
        forged[i] == o.err.id)
      continue;
    e.id = a.id = f.id = forged[i];
    check_bad_executor(e, "forged executor");
    check_bad_actor(a, "forged actor");
    check_bad_future(f, "forged future");
  }

  /* wrong kind: every other live object's id */
  e.id = o.a.id;
  check_bad_executor(e, "actor id as executor");
  e.id = o.f.id;
  check_bad_executor(e, "future id as executor");
  e.id = o.r.id;
  check_bad_executor(e, "runner id as executor");
  e.id = o.err.id;
  check_bad_executor(e, "error id as executor");
  a.id = o.e.id;
  check_bad_actor(a, "executor id as actor");
  a.id = o.f.id;
  check_bad_actor(a, "future id as actor");
  a.id = o.r.id;
  check_bad_actor(a, "runner id as actor");
  a.id = o.err.id;
  check_bad_actor(a, "error id as actor");
  f.id = o.e.id;
  check_bad_future(f, "executor id as future");
  f.id = o.a.id;
  check_bad_future(f, "actor id as future");
  f.id = o.r.id;
  check_bad_future(f, "runner id as future");
  f.id = o.err.id;
  check_bad_future(f, "error id as future");
  {
    tether_runner r;
    tether_error err;
    r.id = o.a.id;
    CHECK_ST(tether_runner_cancel(r), TETHER_E_INVALID_HANDLE);
    r.id = o.e.id;
    CHECK_ST(tether_runner_release(r), TETHER_E_INVALID_HANDLE);
    err.id = o.f.id;
    CHECK_ST(tether_error_release(err), TETHER_E_INVALID_HANDLE);
    CHECK_EQ(tether_error_code(err), 0);
  }

  objects_check(&o); /* none of it touched the live objects */
  {
    uint64_t ids[3];
    ids[0] = o.e.id;
    ids[1] = o.a.id;
    ids[2] = o.f.id;
    objects_release(&o);
    /* released (released twice included) */
    e.id = ids[0];
    a.id = ids[1];
    f.id = ids[2];
    check_bad_executor(e, "released executor");
    check_bad_actor(a, "released actor");
    check_bad_future(f, "released future");
  }
}

/* ---- executor options ------------------------------------------------------------------- */

/* try_exec: a create that must fail with `want`, leaving *out null. */
static void try_exec(const tether_executor_options *o, tether_status want, const char *what) {
  tether_executor e = {77};
  CHECK_ST_IN(what, tether_executor_create(o, &e), want);
  CHECK_IN(what, e.id == 0);
}

TEST(bad_executor_options) {
  tether_executor_options o;
  tether_executor e = {0};
  long base = thread_baseline();

  CHECK_ST(tether_executor_create(NULL, NULL), TETHER_E_INVALID_ARGUMENT);
  o = exec_opts("x");
  CHECK_ST(tether_executor_create(&o, NULL), TETHER_E_INVALID_ARGUMENT);
  o.struct_size = (uint32_t)sizeof o + 1;
  try_exec(&o, TETHER_E_INVALID_ARGUMENT, "struct_size + 1");
  o.struct_size = UINT32_MAX;
  try_exec(&o, TETHER_E_INVALID_ARGUMENT, "struct_size max");
  o.struct_size = 0;
  try_exec(&o, TETHER_E_INVALID_ARGUMENT, "struct_size 0");
  o.struct_size = (uint32_t)sizeof(uint32_t);
  try_exec(&o, TETHER_E_INVALID_ARGUMENT, "struct_size 4");
  o = exec_opts("");
  try_exec(&o, TETHER_E_INVALID_ARGUMENT, "empty name");
  o = exec_opts("x");
  o.cpu = -2;
  try_exec(&o, TETHER_E_INVALID_ARGUMENT, "cpu -2");
  o.cpu = INT_MIN;
  try_exec(&o, TETHER_E_INVALID_ARGUMENT, "cpu INT_MIN");
  o.cpu = 1 << 20; /* not a CPU this process may use */
  try_exec(&o, TETHER_E_INVALID_ARGUMENT, "cpu 2^20");
  o.cpu = INT_MAX;
  try_exec(&o, TETHER_E_INVALID_ARGUMENT, "cpu INT_MAX");
  o = exec_opts("x");
  o.idle_spin_ns = -1;
  try_exec(&o, TETHER_E_INVALID_ARGUMENT, "idle_spin_ns -1");
  o.idle_spin_ns = INT64_MIN;
  try_exec(&o, TETHER_E_INVALID_ARGUMENT, "idle_spin_ns min");
  o = exec_opts("x");
  o.manual = 2;
  try_exec(&o, TETHER_E_INVALID_ARGUMENT, "manual 2");
  o.manual = -1;
  try_exec(&o, TETHER_E_INVALID_ARGUMENT, "manual -1");
  o = exec_opts("x");
  o.stack_size = 1;
  try_exec(&o, TETHER_E_INVALID_ARGUMENT, "stack_size 1");
  CHECK_SOON(os_thread_count() == base); /* nothing left behind (see os_thread_count) */

  tether_executor_options_init(NULL); /* does nothing */
  tether_executor_options_init(&o);
  CHECK_EQ(o.struct_size, sizeof o);
  CHECK_STR(o.name, "tether-exec");
  CHECK_EQ(o.cpu, -1);
  CHECK_EQ(o.queue_capacity, 0);
  CHECK_EQ(o.stack_size, 0);
  CHECK_EQ(o.idle_spin_ns, 20000);
  CHECK_EQ(o.manual, 0);
  CHECK_ST(tether_executor_create(NULL, &e), TETHER_OK); /* NULL options: the defaults */
  CHECK(e.id != 0);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
  o.idle_spin_ns = 0; /* 0 is fine */
  CHECK_ST(tether_executor_create(&o, &e), TETHER_OK);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
}

/* ---- executor calls --------------------------------------------------------------------- */

TEST(bad_executor_calls) {
  tether_executor e = {0};
  tether_executor_stats st;
  tether_error err = {77};
  tether_future f = {77};
  counter d;
  counter_init(&d);
  CHECK_ST(tether_executor_create(NULL, &e), TETHER_OK);

  CHECK_DROPPED_ONCE(tether_executor_submit(e, NULL, &d, count_drop, &f), TETHER_E_INVALID_ARGUMENT, &d);
  CHECK_EQ(f.id, 0);
  CHECK_DROPPED_ONCE(tether_executor_submit(e, NULL, &d, count_drop, NULL), TETHER_E_INVALID_ARGUMENT, &d);
  f.id = 77;
  CHECK_DROPPED_ONCE(tether_executor_submit_timeout(e, NULL, &d, count_drop, &f, T_SHORT),
                     TETHER_E_INVALID_ARGUMENT, &d);
  CHECK_EQ(f.id, 0);
  CHECK_ST(tether_executor_submit(e, NULL, NULL, NULL, NULL), TETHER_E_INVALID_ARGUMENT); /* no drop: fine */

  CHECK_ST(tether_executor_get_stats(e, NULL), TETHER_E_INVALID_ARGUMENT);
  memset(&st, 0, sizeof st);
  st.struct_size = (uint32_t)sizeof st + 1;
  CHECK_ST(tether_executor_get_stats(e, &st), TETHER_E_INVALID_ARGUMENT);
  st.struct_size = 0;
  CHECK_ST(tether_executor_get_stats(e, &st), TETHER_E_INVALID_ARGUMENT);
  st.struct_size = (uint32_t)sizeof(uint32_t);
  CHECK_ST(tether_executor_get_stats(e, &st), TETHER_E_INVALID_ARGUMENT);
  st.struct_size = UINT32_MAX;
  CHECK_ST(tether_executor_get_stats(e, &st), TETHER_E_INVALID_ARGUMENT);

  CHECK_ST(tether_executor_error(e, 0, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_executor_error(e, 0, &err), TETHER_E_INVALID_ARGUMENT); /* past the end */
  CHECK_EQ(err.id, 0);

  st = exec_stats(e); /* the refusals changed nothing */
  CHECK_EQ(st.completed + st.failed + st.cancelled + st.queued, 0);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
  CHECK_EQ(counter_get(&d), 3);
  counter_destroy(&d);
}

/* ---- actor options ---------------------------------------------------------------------- */

/* try_actor: a create that must fail with `want` before its constructor runs: the arg is
 * dropped once before it returns and *out is null. */
static void try_actor(const tether_actor_options *o, tether_ctor_fn ctor, int with_out, tether_status want,
                      const char *what) {
  rec r;
  tether_actor a = {77};
  rec_init(&r);
  CHECK_DROP_IN(what, tether_actor_create(o, ctor, rec_dtor, &r, count_drop, with_out ? &a : NULL), want,
                &r.drops);
  if (with_out) CHECK_IN(what, a.id == 0);
  CHECK_IN(what, counter_get(&r.ctor_runs) == 0);
  rec_destroy(&r);
}

TEST(bad_actor_options) {
  const tether_group_spec zero[] = {{"io", 0}};
  const tether_group_spec dup[] = {{"io", 1}, {"io", 1}};
  const tether_group_spec empty[] = {{"", 1}};
  tether_actor_options o;
  tether_executor e = {0};
  tether_future f = {0};
  rec r;
  tether_actor a = {0};
  long base = thread_baseline();

  o = actor_opts("x", NULL, 0);
  try_actor(&o, NULL, 1, TETHER_E_INVALID_ARGUMENT, "NULL ctor");
  try_actor(&o, rec_ctor, 0, TETHER_E_INVALID_ARGUMENT, "NULL out");
  try_actor(NULL, NULL, 0, TETHER_E_INVALID_ARGUMENT, "NULL everything");
  o.struct_size = (uint32_t)sizeof o + 1;
  try_actor(&o, rec_ctor, 1, TETHER_E_INVALID_ARGUMENT, "struct_size + 1");
  o.struct_size = 0;
  try_actor(&o, rec_ctor, 1, TETHER_E_INVALID_ARGUMENT, "struct_size 0");
  o.struct_size = (uint32_t)sizeof(uint32_t);
  try_actor(&o, rec_ctor, 1, TETHER_E_INVALID_ARGUMENT, "struct_size 4");
  o = actor_opts("", NULL, 0);
  try_actor(&o, rec_ctor, 1, TETHER_E_INVALID_ARGUMENT, "empty name");
  o = actor_opts("x", NULL, 2);
  try_actor(&o, rec_ctor, 1, TETHER_E_INVALID_ARGUMENT, "groups NULL, count 2");
  o = actor_opts("x", zero, 1);
  try_actor(&o, rec_ctor, 1, TETHER_E_INVALID_ARGUMENT, "group of 0 threads");
  o = actor_opts("x", dup, 2);
  try_actor(&o, rec_ctor, 1, TETHER_E_INVALID_ARGUMENT, "duplicate group");
  o = actor_opts("x", empty, 1);
  try_actor(&o, rec_ctor, 1, TETHER_E_INVALID_ARGUMENT, "empty group name");

  /* options.executor: a future's id, a forged id, a released executor. */
  CHECK_ST(tether_executor_create(NULL, &e), TETHER_OK);
  CHECK_ST(tether_executor_submit(e, ok_fn, NULL, NULL, &f), TETHER_OK);
  o = actor_opts("x", NULL, 0);
  o.executor.id = f.id;
  try_actor(&o, rec_ctor, 1, TETHER_E_INVALID_HANDLE, "future id as executor");
  o.executor.id = UINT64_C(0xdeadbeefcafebabe);
  try_actor(&o, rec_ctor, 1, TETHER_E_INVALID_HANDLE, "forged executor");
  CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
  o.executor = e;
  try_actor(&o, rec_ctor, 1, TETHER_E_INVALID_HANDLE, "released executor");
  CHECK_SOON(os_thread_count() == base); /* nothing left behind (see os_thread_count) */

  tether_actor_options_init(NULL); /* does nothing */
  tether_actor_options_init(&o);
  CHECK_EQ(o.struct_size, sizeof o);
  CHECK_STR(o.name, "tether-actor");
  CHECK_EQ(o.executor.id, 0);
  CHECK(o.groups == NULL);
  CHECK_EQ(o.group_count, 0);
  CHECK_EQ(o.mailbox_capacity, 0);

  /* NULL options: the defaults (a dedicated thread named "tether-actor"). */
  rec_init(&r);
  CHECK_ST(tether_actor_create(NULL, rec_ctor, rec_dtor, &r, count_drop, &a), TETHER_OK);
  {
    note n;
    note_init(&n);
    CHECK_EQ(call_and_wait(a, NULL, m_note, &n), TETHER_SUCCEEDED);
    CHECK_STR(n.thread, "tether-actor");
    note_destroy(&n);
  }
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&r.drops), 1);
  CHECK_EQ(counter_get(&r.dtor_runs), 1);
  rec_destroy(&r);
  /* A NULL dtor is fine. */
  rec_init(&r);
  CHECK_ST(tether_actor_create(NULL, rec_ctor, NULL, &r, count_drop, &a), TETHER_OK);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&r.ctor_runs), 1);
  CHECK_EQ(counter_get(&r.dtor_runs), 0);
  rec_destroy(&r);
}

/* ---- actor calls ------------------------------------------------------------------------ */

TEST(bad_actor_calls) {
  const tether_group_spec groups[] = {{"io", 1}};
  tether_actor_options o = actor_opts("bad-calls", groups, 1);
  rec r;
  tether_actor a;
  tether_future f = {77};
  tether_error err = {77};
  tether_actor_stats st;
  counter d;
  rec_init(&r);
  counter_init(&d);
  a = create_rec_actor(&o, &r);

  CHECK_DROPPED_ONCE(tether_actor_call(a, NULL, NULL, &d, count_drop, &f), TETHER_E_INVALID_ARGUMENT, &d);
  CHECK_EQ(f.id, 0);
  CHECK_DROPPED_ONCE(tether_actor_call(a, "io", NULL, &d, count_drop, NULL), TETHER_E_INVALID_ARGUMENT, &d);
  f.id = 77;
  CHECK_DROPPED_ONCE(tether_actor_call_timeout(a, NULL, NULL, &d, count_drop, &f, T_SHORT),
                     TETHER_E_INVALID_ARGUMENT, &d);
  CHECK_EQ(f.id, 0);
  CHECK_ST(tether_actor_call(a, NULL, NULL, NULL, NULL, NULL), TETHER_E_INVALID_ARGUMENT);

  CHECK_ST(tether_actor_state(a, NULL, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_actor_get_stats(a, NULL), TETHER_E_INVALID_ARGUMENT);
  memset(&st, 0, sizeof st);
  st.struct_size = (uint32_t)sizeof st + 1;
  CHECK_ST(tether_actor_get_stats(a, &st), TETHER_E_INVALID_ARGUMENT);
  st.struct_size = 0;
  CHECK_ST(tether_actor_get_stats(a, &st), TETHER_E_INVALID_ARGUMENT);
  st.struct_size = (uint32_t)sizeof(uint32_t);
  CHECK_ST(tether_actor_get_stats(a, &st), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_actor_error(a, 0, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_actor_error(a, 0, &err), TETHER_E_INVALID_ARGUMENT); /* past the end */
  CHECK_EQ(err.id, 0);

  /* A bad stop mode is refused and starts no stop. */
  CHECK_ST(tether_actor_stop(a, 2, T_SHORT), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_actor_stop(a, -1, 0), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_actor_stop(a, INT32_MAX, 0), TETHER_E_INVALID_ARGUMENT);
  CHECK_EQ(actor_state(a), TETHER_ACTOR_ALIVE);
  CHECK_EQ(call_and_wait(a, NULL, m_ok, NULL), TETHER_SUCCEEDED);
  CHECK_EQ(call_and_wait(a, "io", m_ok, NULL), TETHER_SUCCEEDED);
  CHECK_EQ(counter_get(&r.dtor_runs), 0);

  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&d), 3);
  CHECK_EQ(counter_get(&r.dtor_runs), 1);
  counter_destroy(&d);
  rec_destroy(&r);
}

/* ---- future calls ----------------------------------------------------------------------- */

/* result_is_arg: sets the task's result to its arg, a counter (dropped by count_drop). */
static tether_status result_is_arg(tether_task *t, void *arg) {
  CHECK_ST(tether_task_set_result(t, arg, count_drop), TETHER_OK);
  return TETHER_OK;
}

/* NULL out-pointers and bad wait_any arguments on a live, SUCCEEDED future with a result:
 * refused with TETHER_E_INVALID_ARGUMENT, and the refusal changes nothing (the result is
 * still there to take, once). */
TEST(bad_future_calls) {
  tether_executor e = {0};
  tether_future f = {0}, arr[2];
  size_t idx = 99;
  counter d, res;
  void *out = NULL;
  counter_init(&d);
  counter_init(&res);
  CHECK_ST(tether_executor_create(NULL, &e), TETHER_OK);
  CHECK_ST(tether_executor_submit(e, result_is_arg, &res, NULL, &f), TETHER_OK);
  CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);

  CHECK_ST(tether_future_poll(f, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_future_error(f, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_future_take_result(f, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_future_outputs(f, NULL, 1), TETHER_E_INVALID_ARGUMENT);
  CHECK_DROPPED_ONCE(tether_future_on_done(f, NULL, &d, count_drop), TETHER_E_INVALID_ARGUMENT, &d);
  CHECK_ST(tether_future_on_done(f, NULL, NULL, NULL), TETHER_E_INVALID_ARGUMENT);

  arr[0] = f;
  arr[1] = f;
  CHECK_ST(tether_future_wait_any(arr, 0, 0, &idx), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_future_wait_any(NULL, 2, 0, &idx), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_future_wait_any(arr, 2, 0, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_EQ(idx, 99);
  CHECK_ST(tether_future_wait_any(arr, 2, 0, &idx), TETHER_OK); /* the same future twice is fine */
  CHECK_EQ(idx, 0);

  /* take_result(f, NULL) was refused: the result is still there, and taken only now. */
  CHECK_ST(tether_future_take_result(f, &out), TETHER_OK);
  CHECK(out == (void *)&res);
  CHECK_ST(tether_future_take_result(f, &out), TETHER_E_WRONG_STATE);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
  CHECK_EQ(counter_get(&res), 0); /* taken: its drop never runs */
  CHECK_EQ(counter_get(&d), 1);
  counter_destroy(&d);
  counter_destroy(&res);
}

/* runner_result: the target sets its result to its arg, a counter. */
static tether_status runner_result(tether_task *t, void *arg) {
  CHECK_ST(tether_task_set_result(t, arg, count_drop), TETHER_OK);
  return TETHER_OK;
}

/* The same refusal on a runner (section 5): take_result(r, NULL) is TETHER_E_INVALID_ARGUMENT
 * and leaves the result in place; it is taken once, by the next call. */
TEST(bad_runner_take_result_null) {
  tether_runner r = {0};
  counter res;
  void *out = NULL;
  counter_init(&res);
  CHECK_ST(tether_runner_start(NULL, runner_result, &res, NULL, &r), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_SUCCEEDED);
  CHECK_ST(tether_runner_take_result(r, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_runner_take_result(r, &out), TETHER_OK);
  CHECK(out == (void *)&res);
  CHECK_ST(tether_runner_take_result(r, &out), TETHER_E_WRONG_STATE);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&res), 0); /* taken: its drop never runs */
  counter_destroy(&res);
}
