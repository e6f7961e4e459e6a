/*
 * test_future.c — futures (section 7 of the contract), on executor tasks.
 *
 *   wait / poll / error / take_result (once, on SUCCEEDED only) / outputs (WRONG_STATE)
 *   cancel: PENDING work never runs and its arg is dropped before cancel returns; RUNNING
 *     work sees stop_requested and, returning OK, ends CANCELLED (its result dropped); a
 *     terminal future is left alone
 *   release before the task runs: the task still runs; its arg and result are dropped once
 *   wait_any: lowest terminal index, *index untouched on timeout, woken by a completion
 *   on_done: once per registration, on the completing thread or at once on the caller,
 *     after release too; fn may poll the future
 *   a wait woken by another thread's release: TETHER_E_INVALID_HANDLE promptly
 */
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#include "actor_fixtures.h"

/* result_fn: sets its result to the counter it is given (dropped by count_drop). */
static tether_status result_fn(tether_task *t, void *arg) {
  CHECK_ST(tether_task_set_result(t, arg, count_drop), TETHER_OK);
  return TETHER_OK;
}

/* result_then_fail: sets a result, then fails (user_code 3): the result is dropped. */
static tether_status result_then_fail(tether_task *t, void *arg) {
  CHECK_ST(tether_task_set_result(t, arg, count_drop), TETHER_OK);
  return tether_task_fail(t, 3, "after the result");
}

TEST(future_wait_poll_take) {
  tether_executor_options o = exec_opts("fut-exec");
  tether_executor e = {0};
  blocker b;
  counter res, res2;
  tether_future fb = {0}, f = {0}, ff = {0};
  void *out = NULL, *outs[1];
  blocker_init(&b);
  counter_init(&res);
  counter_init(&res2);
  CHECK_ST(tether_executor_create(&o, &e), TETHER_OK);
  CHECK_ST(tether_executor_submit(e, blocker_fn, &b, count_drop, &fb), TETHER_OK);
  CHECK(event_wait(&b.started, T_LONG));
  CHECK_EQ(future_poll(fb), TETHER_RUNNING);
  CHECK_ST(tether_executor_submit(e, result_fn, &res, NULL, &f), TETHER_OK);
  CHECK_EQ(future_poll(f), TETHER_PENDING);
  CHECK_ST(tether_future_wait(f, T_SHORT), TETHER_E_TIMEOUT);
  CHECK_ST(tether_future_wait(f, 0), TETHER_E_TIMEOUT);
  CHECK_NO_ERROR(f);
  CHECK_ST(tether_future_take_result(f, &out), TETHER_E_WRONG_STATE); /* not SUCCEEDED yet */
  CHECK_ST(tether_future_outputs(f, outs, 1), TETHER_E_WRONG_STATE);  /* not a graph's */

  event_set(&b.gate);
  CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);
  CHECK_ST(tether_future_wait(f, 0), TETHER_OK); /* terminal: never blocks */
  CHECK_NO_ERROR(f);
  CHECK_ST(tether_future_take_result(f, &out), TETHER_OK);
  CHECK(out == (void *)&res);
  CHECK_ST(tether_future_take_result(f, &out), TETHER_E_WRONG_STATE); /* once */
  CHECK_ST(tether_future_outputs(f, outs, 1), TETHER_E_WRONG_STATE);

  /* A failed task: its error, no result (the one it set is dropped once). */
  CHECK_ST(tether_executor_submit(e, result_then_fail, &res2, NULL, &ff), TETHER_OK);
  CHECK_EQ(future_outcome(ff), TETHER_FAILED);
  CHECK_FUTURE_ERROR(ff, TETHER_E_TASK_FAILED, 3, "after the result", "fut-exec");
  CHECK_ST(tether_future_take_result(ff, &out), TETHER_E_WRONG_STATE);

  CHECK_EQ(future_outcome(fb), TETHER_SUCCEEDED);
  CHECK_ST(tether_future_release(fb), TETHER_OK);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_future_release(ff), TETHER_OK);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
  CHECK_EQ(counter_get(&res), 0); /* taken: its drop never runs */
  CHECK(counter_wait(&res2, 1, T_LONG)); /* not taken (FAILED): dropped, once */
  CHECK_EQ(counter_get(&res2), 1);
  CHECK_EQ(counter_get(&b.drops), 1);
  counter_destroy(&res);
  counter_destroy(&res2);
  blocker_destroy(&b);
}

/* Cancel on PENDING work: it never runs, its arg is dropped before cancel returns, the
 * future is CANCELLED with a TETHER_E_CANCELLED error. */
TEST(future_cancel_pending) {
  tether_executor e = {0};
  blocker b;
  note n;
  tether_future fb = {0}, f = {0}, last = {0};
  void *out = NULL;
  blocker_init(&b);
  note_init(&n);
  CHECK_ST(tether_executor_create(NULL, &e), TETHER_OK);
  CHECK_ST(tether_executor_submit(e, blocker_fn, &b, count_drop, &fb), TETHER_OK);
  CHECK(event_wait(&b.started, T_LONG));
  CHECK_ST(tether_executor_submit(e, note_fn, &n, count_drop, &f), TETHER_OK);
  CHECK_EQ(future_poll(f), TETHER_PENDING);

  CHECK_ST(tether_future_cancel(f), TETHER_OK);
  CHECK_EQ(counter_get(&n.drops), 1); /* before cancel returned */
  CHECK_EQ(future_poll(f), TETHER_CANCELLED);
  CHECK_ST(tether_future_wait(f, 0), TETHER_OK);
  CHECK_FUTURE_ERROR(f, TETHER_E_CANCELLED, 0, NULL, NULL);
  CHECK_ST(tether_future_take_result(f, &out), TETHER_E_WRONG_STATE);
  CHECK_ST(tether_future_cancel(f), TETHER_OK); /* terminal: nothing changes */
  CHECK_EQ(future_poll(f), TETHER_CANCELLED);
  CHECK_EQ(counter_get(&n.drops), 1);

  event_set(&b.gate);
  CHECK_ST(tether_executor_submit(e, ok_fn, NULL, NULL, &last), TETHER_OK);
  CHECK_EQ(future_outcome(last), TETHER_SUCCEEDED); /* FIFO: the cancelled slot was skipped */
  CHECK_EQ(counter_get(&n.runs), 0);
  CHECK_EQ(exec_stats(e).cancelled, 1);
  /* cancel on a SUCCEEDED future changes nothing. */
  CHECK_ST(tether_future_cancel(last), TETHER_OK);
  CHECK_EQ(future_poll(last), TETHER_SUCCEEDED);
  CHECK_NO_ERROR(last);

  CHECK_ST(tether_future_release(fb), TETHER_OK);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_future_release(last), TETHER_OK);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
  CHECK_EQ(counter_get(&n.drops), 1);
  CHECK_EQ(counter_get(&b.drops), 1);
  note_destroy(&n);
  blocker_destroy(&b);
}

/* Cancel on RUNNING work: the task sees stop_requested; it returns OK, so it ends CANCELLED
 * and the result it set is dropped. */
TEST(future_cancel_running) {
  tether_executor e = {0};
  stopper s;
  tether_future f = {0};
  void *out = NULL;
  stopper_init(&s);
  CHECK_ST(tether_executor_create(NULL, &e), TETHER_OK);
  CHECK_ST(tether_executor_submit(e, stopper_fn, &s, count_drop, &f), TETHER_OK);
  CHECK(event_wait(&s.started, T_LONG));
  CHECK_EQ(future_poll(f), TETHER_RUNNING);
  CHECK_ST(tether_future_cancel(f), TETHER_OK);
  CHECK_EQ(future_outcome(f), TETHER_CANCELLED);
  CHECK_EQ(counter_get(&s.saw_stop), 1);
  CHECK_FUTURE_ERROR(f, TETHER_E_CANCELLED, 0, NULL, NULL);
  CHECK_ST(tether_future_take_result(f, &out), TETHER_E_WRONG_STATE);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
  CHECK(counter_wait(&s.result_drops, 1, T_LONG)); /* not SUCCEEDED: dropped, once */
  CHECK_EQ(counter_get(&s.result_drops), 1);
  CHECK_EQ(counter_get(&s.drops), 1);
  stopper_destroy(&s);
}

/* A future released before its task runs: the task still runs; its arg and its result are
 * each dropped once; the handle is dead. */
typedef struct late_task {
  counter drops;        /* FIRST member: the arg's drops */
  counter runs;
  counter result_drops;
} late_task;

static void late_result_drop(void *p) { counter_add(&((late_task *)p)->result_drops, 1); }

static tether_status late_fn(tether_task *t, void *arg) {
  late_task *l = (late_task *)arg;
  counter_add(&l->runs, 1);
  CHECK_ST(tether_task_set_result(t, l, late_result_drop), TETHER_OK);
  return TETHER_OK;
}

TEST(future_release_before_run) {
  tether_executor e = {0};
  blocker b;
  late_task l;
  tether_future f = {0};
  int32_t s = -1;
  blocker_init(&b);
  counter_init(&l.drops);
  counter_init(&l.runs);
  counter_init(&l.result_drops);
  CHECK_ST(tether_executor_create(NULL, &e), TETHER_OK);
  CHECK_ST(tether_executor_submit(e, blocker_fn, &b, count_drop, NULL), TETHER_OK);
  CHECK(event_wait(&b.started, T_LONG));
  CHECK_ST(tether_executor_submit(e, late_fn, &l, count_drop, &f), TETHER_OK);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_future_release(f), TETHER_E_INVALID_HANDLE);
  CHECK_ST(tether_future_poll(f, &s), TETHER_E_INVALID_HANDLE);
  CHECK_EQ(counter_get(&l.drops), 0); /* not cancelled: it will still run */
  event_set(&b.gate);
  CHECK(counter_wait(&l.result_drops, 1, T_LONG));
  CHECK(counter_wait(&l.drops, 1, T_LONG));
  CHECK_EQ(counter_get(&l.runs), 1);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
  CHECK_EQ(counter_get(&l.runs), 1);
  CHECK_EQ(counter_get(&l.drops), 1);
  CHECK_EQ(counter_get(&l.result_drops), 1);
  CHECK_EQ(counter_get(&b.drops), 1);
  counter_destroy(&l.drops);
  counter_destroy(&l.runs);
  counter_destroy(&l.result_drops);
  blocker_destroy(&b);
}

/* ---- wait_any --------------------------------------------------------------------------- */

static void *open_gate(void *arg) {
  event_set((event *)arg);
  return NULL;
}

TEST(future_wait_any) {
  enum { N = 3 };
  tether_executor e[N];
  blocker b[N];
  tether_future f[N], mixed[2], dead = {0};
  size_t idx;
  pthread_t th;
  int i;
  for (i = 0; i < N; i++) {
    blocker_init(&b[i]);
    CHECK_ST(tether_executor_create(NULL, &e[i]), TETHER_OK);
    CHECK_ST(tether_executor_submit(e[i], blocker_fn, &b[i], count_drop, &f[i]), TETHER_OK);
  }
  for (i = 0; i < N; i++) CHECK(event_wait(&b[i].started, T_LONG));

  /* Nothing terminal: TIMEOUT, *index untouched. */
  idx = 99;
  CHECK_ST(tether_future_wait_any(f, N, T_SHORT, &idx), TETHER_E_TIMEOUT);
  CHECK_EQ(idx, 99);
  CHECK_ST(tether_future_wait_any(f, N, 0, &idx), TETHER_E_TIMEOUT);
  CHECK_EQ(idx, 99);

  /* An invalid handle: INVALID_HANDLE with *index its position. */
  CHECK_ST(tether_executor_submit(e[0], ok_fn, NULL, NULL, &dead), TETHER_OK);
  CHECK_ST(tether_future_release(dead), TETHER_OK);
  mixed[0] = f[0];
  mixed[1] = dead;
  CHECK_ST(tether_future_wait_any(mixed, 2, T_SHORT, &idx), TETHER_E_INVALID_HANDLE);
  CHECK_EQ(idx, 1);
  mixed[0].id = 0;
  mixed[1] = f[1];
  idx = 99;
  CHECK_ST(tether_future_wait_any(mixed, 2, T_SHORT, &idx), TETHER_E_INVALID_HANDLE);
  CHECK_EQ(idx, 0);
  {
    tether_future wrong; /* an executor's id as a future */
    wrong.id = e[2].id;
    mixed[0] = f[2];
    mixed[1] = wrong;
    idx = 99;
    CHECK_ST(tether_future_wait_any(mixed, 2, 0, &idx), TETHER_E_INVALID_HANDLE);
    CHECK_EQ(idx, 1);
  }
  /* n == 0, NULL array, NULL index. */
  idx = 99;
  CHECK_ST(tether_future_wait_any(f, 0, 0, &idx), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_future_wait_any(NULL, N, 0, &idx), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_future_wait_any(NULL, 0, 0, &idx), TETHER_E_INVALID_ARGUMENT);
  CHECK_EQ(idx, 99);
  CHECK_ST(tether_future_wait_any(f, N, 0, NULL), TETHER_E_INVALID_ARGUMENT);

  /* Another thread lets f[2] finish while (or before) this one waits. */
  CHECK(pthread_create(&th, NULL, open_gate, &b[2].gate) == 0);
  CHECK_ST(tether_future_wait_any(f, N, T_LONG, &idx), TETHER_OK);
  CHECK_EQ(idx, 2);
  join_thread(th);
  /* Then f[0] too: the LOWEST terminal index. */
  event_set(&b[0].gate);
  CHECK_EQ(future_outcome(f[0]), TETHER_SUCCEEDED);
  CHECK_ST(tether_future_wait_any(f, N, 0, &idx), TETHER_OK);
  CHECK_EQ(idx, 0);
  CHECK_ST(tether_future_wait_any(f + 1, N - 1, T_LONG, &idx), TETHER_OK);
  CHECK_EQ(idx, 1); /* f[2] is index 1 of this array */

  event_set(&b[1].gate);
  for (i = 0; i < N; i++) {
    CHECK_EQ(future_outcome(f[i]), TETHER_SUCCEEDED);
    CHECK_ST(tether_future_release(f[i]), TETHER_OK);
    CHECK_ST(tether_executor_release(e[i]), TETHER_OK);
    CHECK_EQ(counter_get(&b[i].drops), 1);
    blocker_destroy(&b[i]);
  }
}

/* ---- on_done ---------------------------------------------------------------------------- */

typedef struct notice {
  counter drops;  /* FIRST member: the arg's drops (after fn) */
  counter runs;
  counter tid;
  counter runs_at_drop; /* runs when the drop came: fn runs first, then the drop */
  counter state;  /* the future's state seen by fn (poll), or -1 */
  tether_future f; /* polled by fn when non-null */
} notice;

static void notice_init(notice *n, tether_future f) {
  counter_init(&n->drops);
  counter_init(&n->runs);
  counter_init(&n->tid);
  counter_init(&n->runs_at_drop);
  counter_init(&n->state);
  counter_set(&n->state, -1);
  n->f = f;
}

static void notice_destroy(notice *n) {
  counter_destroy(&n->drops);
  counter_destroy(&n->runs);
  counter_destroy(&n->tid);
  counter_destroy(&n->runs_at_drop);
  counter_destroy(&n->state);
}

static void notice_fn(void *arg) {
  notice *n = (notice *)arg;
  counter_set(&n->tid, os_tid());
  if (n->f.id != 0) {
    int32_t s = -1;
    if (tether_future_poll(n->f, &s) == TETHER_OK) counter_set(&n->state, s);
  }
  counter_add(&n->runs, 1);
}

static void notice_drop(void *arg) {
  notice *n = (notice *)arg;
  counter_set(&n->runs_at_drop, counter_get(&n->runs));
  counter_add(&n->drops, 1);
}

static void never_runs(void *arg) {
  (void)arg;
  harness_fail(__FILE__, __LINE__, "on_done fn ran for a refused registration");
}

TEST(future_on_done) {
  tether_executor e = {0};
  blocker b, b2;
  tether_future f = {0}, g = {0};
  notice n1, n2, now, after_release;
  counter refused;
  long ex_tid;
  blocker_init(&b);
  blocker_init(&b2);
  counter_init(&refused);
  CHECK_ST(tether_executor_create(NULL, &e), TETHER_OK);
  CHECK_ST(tether_executor_submit(e, blocker_fn, &b, count_drop, &f), TETHER_OK);
  CHECK(event_wait(&b.started, T_LONG));
  ex_tid = (long)exec_stats(e).os_thread_id;

  /* Two registrations on a running future: neither runs before it completes. */
  notice_init(&n1, f);
  notice_init(&n2, f);
  CHECK_ST(tether_future_on_done(f, notice_fn, &n1, notice_drop), TETHER_OK);
  CHECK_ST(tether_future_on_done(f, notice_fn, &n2, notice_drop), TETHER_OK);
  CHECK_EQ(counter_get(&n1.runs), 0);
  CHECK_EQ(counter_get(&n1.drops), 0);
  event_set(&b.gate);
  CHECK(counter_wait(&n1.drops, 1, T_LONG));
  CHECK(counter_wait(&n2.drops, 1, T_LONG));
  CHECK_EQ(counter_get(&n1.runs), 1);
  CHECK_EQ(counter_get(&n2.runs), 1);
  CHECK_EQ(counter_get(&n1.runs_at_drop), 1); /* fn first, then the drop */
  CHECK_EQ(counter_get(&n1.tid), ex_tid);     /* on the thread that completed it */
  CHECK_EQ(counter_get(&n1.state), TETHER_SUCCEEDED);
  CHECK_EQ(counter_get(&n2.state), TETHER_SUCCEEDED);

  /* Already terminal: at once, on the caller. */
  notice_init(&now, f);
  CHECK_ST(tether_future_on_done(f, notice_fn, &now, notice_drop), TETHER_OK);
  CHECK_EQ(counter_get(&now.runs), 1);
  CHECK_EQ(counter_get(&now.drops), 1);
  CHECK_EQ(counter_get(&now.tid), os_tid());
  CHECK_EQ(counter_get(&now.state), TETHER_SUCCEEDED);

  /* Refused: NULL fn -> INVALID_ARGUMENT; the arg dropped once, before the call returns. */
  CHECK_DROPPED_ONCE(tether_future_on_done(f, NULL, &refused, count_drop), TETHER_E_INVALID_ARGUMENT, &refused);

  /* Registered, then the future released before the work ends: fn still runs. */
  CHECK_ST(tether_executor_submit(e, blocker_fn, &b2, count_drop, &g), TETHER_OK);
  CHECK(event_wait(&b2.started, T_LONG));
  {
    tether_future none = {0};
    notice_init(&after_release, none); /* fn must not poll a released handle */
  }
  CHECK_ST(tether_future_on_done(g, notice_fn, &after_release, notice_drop), TETHER_OK);
  CHECK_ST(tether_future_release(g), TETHER_OK);
  CHECK_EQ(counter_get(&after_release.runs), 0);
  event_set(&b2.gate);
  CHECK(counter_wait(&after_release.drops, 1, T_LONG));
  CHECK_EQ(counter_get(&after_release.runs), 1);
  CHECK_DROPPED_ONCE(tether_future_on_done(g, never_runs, &refused, count_drop), TETHER_E_INVALID_HANDLE,
                     &refused);

  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
  CHECK_EQ(counter_get(&n1.runs), 1); /* exactly once each */
  CHECK_EQ(counter_get(&n2.runs), 1);
  CHECK_EQ(counter_get(&now.runs), 1);
  CHECK_EQ(counter_get(&after_release.runs), 1);
  CHECK_EQ(counter_get(&refused), 2);
  notice_destroy(&n1);
  notice_destroy(&n2);
  notice_destroy(&now);
  notice_destroy(&after_release);
  counter_destroy(&refused);
  blocker_destroy(&b);
  blocker_destroy(&b2);
}

/* ---- a wait woken by a release ---------------------------------------------------------- */

typedef struct waiter {
  tether_future f;
  event waiting;
  tether_status st;
} waiter;

static void *wait_on_future(void *arg) {
  waiter *w = (waiter *)arg;
  event_set(&w->waiting);
  w->st = tether_future_wait(w->f, T_LONG);
  return NULL;
}

/* A wait on a future that another thread releases returns TETHER_E_INVALID_HANDLE promptly
 * (the work is still blocked on its gate, which opens only after the waiter returned). */
TEST(future_release_wakes_wait) {
  tether_executor e = {0};
  blocker b;
  waiter w;
  pthread_t th;
  blocker_init(&b);
  event_init(&w.waiting);
  w.st = -1;
  CHECK_ST(tether_executor_create(NULL, &e), TETHER_OK);
  CHECK_ST(tether_executor_submit(e, blocker_fn, &b, count_drop, &w.f), TETHER_OK);
  CHECK(event_wait(&b.started, T_LONG));
  CHECK(pthread_create(&th, NULL, wait_on_future, &w) == 0);
  CHECK(event_wait(&w.waiting, T_LONG));
  CHECK_ST(tether_future_release(w.f), TETHER_OK);
  join_thread(th);
  CHECK_ST(w.st, TETHER_E_INVALID_HANDLE);
  event_set(&b.gate);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
  CHECK_EQ(counter_get(&b.returned), 1); /* the work still ran to its end */
  CHECK_EQ(counter_get(&b.drops), 1);
  event_destroy(&w.waiting);
  blocker_destroy(&b);
}
