/*
 * test_actor.c — actors as the C API sees them (section 8 of the contract).
 *
 *   constructor, methods and destructor on one OS thread (gettid())
 *   many actors on one shared executor, all on its thread; the executor outlives its handle
 *   20,000 calls from one producer run in order
 *   constructor failure: DEAD, queued calls fail with TETHER_E_ACTOR_DEAD (cause: the
 *     constructor's error), later calls return TETHER_E_ACTOR_DEAD
 *   a failing method fails only its own future (fire and forget: kept by the actor)
 *   stop CANCEL / stop DRAIN / release (a DRAIN waited to the end) / release from inside
 *   a wait on the stop woken by another thread's release
 *   bounded mailbox: TETHER_E_QUEUE_FULL, call_timeout -> TETHER_E_TIMEOUT
 *   waiting on yourself: TETHER_E_DEADLOCK (timeout 0: TETHER_E_TIMEOUT)
 *   tether_task_actor / tether_task_runner inside methods, runner targets and executor tasks
 *   nested threads inside a method
 */
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#include "actor_fixtures.h"

/* ---- one OS thread ---------------------------------------------------------------------- */

TEST(actor_same_thread) {
  tether_actor_options o = actor_opts("pinned", NULL, 0);
  rec r;
  note n;
  tether_actor a;
  long i;
  rec_init(&r);
  note_init(&n);
  a = create_rec_actor(&o, &r);
  for (i = 0; i < 20; i++) {
    CHECK_EQ(call_and_wait(a, NULL, m_note, &n), TETHER_SUCCEEDED);
    CHECK_EQ(counter_get(&n.tid), counter_get(&r.ctor_tid));
  }
  CHECK_STR(n.thread, "pinned");
  CHECK(counter_get(&r.ctor_tid) != os_tid());
  CHECK_EQ(actor_stats(a).os_thread_id, counter_get(&r.ctor_tid));
  CHECK_EQ(actor_stats(a).completed, 20);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&r.ctor_runs), 1);
  CHECK_EQ(counter_get(&r.dtor_runs), 1);
  CHECK_EQ(counter_get(&r.dtor_tid), counter_get(&r.ctor_tid));
  CHECK_EQ(counter_get(&r.runs_at_dtor), 20); /* the destructor came last */
  CHECK_EQ(counter_get(&r.drops), 1);
  note_destroy(&n);
  rec_destroy(&r);
}

/* Many actors share one executor: each constructor, method and destructor runs on the
 * executor's thread. The executor's handle is released first: the thread stays until the
 * last actor on it is released. */
TEST(actor_shared_executor) {
  long n = scaled(1000), i, ex_tid;
  tether_executor e = {0};
  tether_executor_options eo = exec_opts("shared-ex");
  tether_actor_options o = actor_opts("on-shared", NULL, 0);
  rec *r = (rec *)malloc(sizeof *r * (size_t)n);
  tether_actor *a = (tether_actor *)malloc(sizeof *a * (size_t)n);
  tether_future *f = (tether_future *)malloc(sizeof *f * (size_t)n);
  note *notes = (note *)malloc(sizeof *notes * (size_t)n);
  CHECK(r && a && f && notes);
  CHECK_ST(tether_executor_create(&eo, &e), TETHER_OK);
  o.executor = e;
  for (i = 0; i < n; i++) {
    rec_init(&r[i]);
    note_init(&notes[i]);
    a[i] = create_rec_actor(&o, &r[i]);
    CHECK_ST(tether_actor_call(a[i], NULL, m_note, &notes[i], count_drop, &f[i]), TETHER_OK);
  }
  for (i = 0; i < n; i++) CHECK_EQ(future_outcome(f[i]), TETHER_SUCCEEDED);
  ex_tid = (long)exec_stats(e).os_thread_id;
  CHECK(ex_tid != 0 && ex_tid != os_tid());

  CHECK_ST(tether_executor_release(e), TETHER_OK); /* returns at once: actors live on it */
  for (i = 0; i < n; i++) {                        /* ... and they still answer */
    CHECK_EQ(call_and_wait(a[i], NULL, m_note, &notes[i]), TETHER_SUCCEEDED);
    CHECK_EQ(actor_stats(a[i]).os_thread_id, ex_tid);
  }
  for (i = 0; i < n; i++) {
    CHECK_ST(tether_actor_release(a[i]), TETHER_OK);
    CHECK_ST(tether_future_release(f[i]), TETHER_OK);
    CHECK_EQ(counter_get(&r[i].ctor_tid), ex_tid);
    CHECK_EQ(counter_get(&notes[i].tid), ex_tid);
    CHECK_EQ(counter_get(&r[i].dtor_tid), ex_tid);
    CHECK_EQ(counter_get(&r[i].dtor_runs), 1);
    CHECK_EQ(counter_get(&r[i].drops), 1);
    CHECK_EQ(counter_get(&notes[i].drops), 1);
    CHECK_STR(notes[i].thread, "shared-ex"); /* the executor's thread, by its name */
    rec_destroy(&r[i]);
    note_destroy(&notes[i]);
  }
  free(r);
  free(a);
  free(f);
  free(notes);
  /* The executor's thread ended with its last actor, whose (waiting) release joined it. */
  CHECK_EQ(tether_debug_unjoined_threads(), 0);
}


/* 20,000 calls from one producer run in submission order (after the constructor). */
TEST(actor_call_order) {
  long n = scaled(20000), i;
  tether_actor_options o = actor_opts("ordered", NULL, 0);
  rec r;
  order ord;
  order_item *items = (order_item *)malloc(sizeof *items * (size_t)n);
  tether_actor a;
  CHECK(items != NULL);
  rec_init(&r);
  counter_init(&ord.drops);
  counter_init(&ord.next);
  counter_init(&ord.bad);
  a = create_rec_actor(&o, &r);
  for (i = 0; i < n; i++) {
    items[i].o = &ord;
    items[i].i = i;
    CHECK_ST(tether_actor_call(a, NULL, m_order, &items[i], order_item_drop, NULL), TETHER_OK);
  }
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&ord.next), n);
  CHECK_EQ(counter_get(&ord.bad), 0);
  CHECK_EQ(counter_get(&ord.drops), n);
  CHECK_EQ(counter_get(&r.dtor_runs), 1);
  counter_destroy(&ord.drops);
  counter_destroy(&ord.next);
  counter_destroy(&ord.bad);
  free(items);
  rec_destroy(&r);
}

/* ---- constructor failure ---------------------------------------------------------------- */

/* check_dead_error: an ACTOR_DEAD error whose cause is the constructor's failure. */
static void check_dead_error(const char *file, int line, tether_error e, const char *actor) {
  tether_error cause = {0};
  check_error_(file, line, e, TETHER_E_ACTOR_DEAD, 0, NULL, NULL);
  CHECK_ST(tether_error_cause(e, &cause), TETHER_OK);
  check_error_(file, line, cause, TETHER_E_TASK_FAILED, 5, "no config", actor);
  CHECK_ST(tether_error_release(cause), TETHER_OK);
}

/* The constructor blocks while calls queue behind it, then fails: the actor is DEAD, every
 * queued call fails through its future with TETHER_E_ACTOR_DEAD (cause: the constructor's
 * error) without running, and later calls return TETHER_E_ACTOR_DEAD themselves. */
TEST(actor_ctor_fails) {
  const tether_group_spec groups[] = {{"io", 1}};
  tether_actor_options o = actor_opts("doomed", groups, 1);
  const char *where[4] = {NULL, NULL, "io", NULL};
  rec r;
  note q[4], late;
  tether_future f[4], lf = {77};
  tether_actor a;
  tether_error cause = {0};
  int32_t s = -1;
  int i;
  rec_init(&r);
  note_init(&late);
  r.ctor_wait = 1;
  r.ctor_fail = "no config";
  a = create_rec_actor(&o, &r);
  CHECK(counter_wait(&r.ctor_runs, 1, T_LONG));
  CHECK_EQ(actor_state(a), TETHER_ACTOR_ALIVE); /* ALIVE while the constructor runs */
  for (i = 0; i < 4; i++) {
    note_init(&q[i]);
    CHECK_ST(tether_actor_call(a, where[i], m_note, &q[i], count_drop, &f[i]), TETHER_OK);
  }
  event_set(&r.ctor_gate);

  for (i = 0; i < 4; i++) {
    tether_error e = {0};
    CHECK_EQ(future_outcome(f[i]), TETHER_FAILED);
    CHECK_ST(tether_future_error(f[i], &e), TETHER_OK);
    check_dead_error(__FILE__, __LINE__, e, "doomed");
    CHECK_ST(tether_error_release(e), TETHER_OK);
    CHECK_EQ(counter_get(&q[i].runs), 0);
    CHECK(counter_wait(&q[i].drops, 1, T_LONG)); /* dropped instead of running (at any time) */
  }

  CHECK_ST(tether_actor_state(a, &s, &cause), TETHER_OK);
  CHECK_EQ(s, TETHER_ACTOR_DEAD);
  CHECK_ERROR(cause, TETHER_E_TASK_FAILED, 5, "no config", "doomed");
  CHECK_ST(tether_error_release(cause), TETHER_OK);
  CHECK_ST(tether_actor_state(a, &s, NULL), TETHER_OK); /* cause may be NULL */
  CHECK_EQ(s, TETHER_ACTOR_DEAD);

  /* Later calls: TETHER_E_ACTOR_DEAD, arg dropped before the call returns, no future. */
  CHECK_DROPPED_ONCE(tether_actor_call(a, NULL, m_note, &late, count_drop, &lf), TETHER_E_ACTOR_DEAD,
                     &late.drops);
  CHECK_EQ(lf.id, 0);
  CHECK_DROPPED_ONCE(tether_actor_call(a, "io", m_note, &late, count_drop, NULL), TETHER_E_ACTOR_DEAD,
                     &late.drops);
  CHECK_DROPPED_ONCE(tether_actor_call_timeout(a, NULL, m_note, &late, count_drop, &lf, T_SHORT),
                     TETHER_E_ACTOR_DEAD, &late.drops);
  CHECK_EQ(lf.id, 0);
  CHECK_DROPPED_ONCE(tether_actor_call(a, "nope", m_note, &late, count_drop, NULL), TETHER_E_NOT_FOUND,
                     &late.drops);
  CHECK_EQ(counter_get(&late.runs), 0);

  /* A stop does not revive it; there is no destructor to run. */
  CHECK_ST(tether_actor_stop(a, TETHER_STOP_DRAIN, T_LONG), TETHER_OK);
  CHECK_EQ(actor_state(a), TETHER_ACTOR_DEAD);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&r.ctor_runs), 1);
  CHECK_EQ(counter_get(&r.dtor_runs), 0);
  CHECK_EQ(counter_get(&r.drops), 1);
  for (i = 0; i < 4; i++) {
    CHECK_ST(tether_future_release(f[i]), TETHER_OK);
    CHECK_EQ(counter_get(&q[i].drops), 1);
    note_destroy(&q[i]);
  }
  note_destroy(&late);
  rec_destroy(&r);
}

/* A fire-and-forget call queued before the constructor failed: it never runs, its arg is
 * dropped once, and its failure is counted and kept by the actor ("with out NULL it is fire
 * and forget and a failure is counted and kept by the actor (tether_actor_error)"). */
TEST(actor_ctor_fails_fire_and_forget) {
  tether_actor_options o = actor_opts("doomed-ff", NULL, 0);
  rec r;
  note q;
  tether_actor a;
  tether_error e = {0};
  tether_actor_stats st;
  rec_init(&r);
  note_init(&q);
  r.ctor_wait = 1;
  r.ctor_fail = "no config";
  a = create_rec_actor(&o, &r);
  CHECK(counter_wait(&r.ctor_runs, 1, T_LONG));
  CHECK_ST(tether_actor_call(a, NULL, m_note, &q, count_drop, NULL), TETHER_OK);
  event_set(&r.ctor_gate);
  CHECK(counter_wait(&q.drops, 1, T_LONG));
  CHECK_EQ(counter_get(&q.runs), 0);
  CHECK_SOON(tether_actor_error(a, 0, &e) == TETHER_OK); /* kept (at some point after the drop) */
  check_dead_error(__FILE__, __LINE__, e, "doomed-ff");
  st = actor_stats(a);
  CHECK_EQ(st.failed, 1);
  CHECK_EQ(st.errors_dropped, 0);
  CHECK_EQ(st.completed, 0);
  CHECK_EQ(st.queued, 0);
  CHECK_ST(tether_error_release(e), TETHER_OK);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&q.drops), 1);
  CHECK_EQ(counter_get(&r.drops), 1);
  note_destroy(&q);
  rec_destroy(&r);
}

/* ---- method failure --------------------------------------------------------------------- */

TEST(actor_method_fails) {
  const tether_group_spec groups[] = {{"io", 1}};
  tether_actor_options o = actor_opts("failing", groups, 1);
  rec r;
  note n;
  tether_actor a;
  tether_future f = {0};
  tether_error e = {77};
  tether_actor_stats st;
  rec_init(&r);
  note_init(&n);
  a = create_rec_actor(&o, &r);

  CHECK_ST(tether_actor_call(a, NULL, m_fail, (void *)"bad row", NULL, &f), TETHER_OK);
  CHECK_EQ(future_outcome(f), TETHER_FAILED);
  CHECK_FUTURE_ERROR(f, TETHER_E_TASK_FAILED, 1, "bad row", "failing");
  {
    void *out = &n;
    CHECK_ST(tether_future_take_result(f, &out), TETHER_E_WRONG_STATE);
  }
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_EQ(actor_state(a), TETHER_ACTOR_ALIVE);
  CHECK_EQ(call_and_wait(a, NULL, m_note, &n), TETHER_SUCCEEDED); /* the actor goes on */

  /* A group method fails only its own future too; the error names the group's thread. */
  CHECK_ST(tether_actor_call(a, "io", m_fail, (void *)"io broke", NULL, &f), TETHER_OK);
  CHECK_EQ(future_outcome(f), TETHER_FAILED);
  CHECK_FUTURE_ERROR(f, TETHER_E_TASK_FAILED, 1, "io broke", "failing/io");
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_EQ(call_and_wait(a, "io", m_note, &n), TETHER_SUCCEEDED);

  /* Fire and forget: the failure is counted and kept by the actor. */
  CHECK_ST(tether_actor_error(a, 0, &e), TETHER_E_INVALID_ARGUMENT); /* none yet */
  CHECK_EQ(e.id, 0);
  CHECK_ST(tether_actor_call(a, NULL, m_fail, (void *)"lost?", NULL, NULL), TETHER_OK);
  CHECK_EQ(call_and_wait(a, NULL, m_note, &n), TETHER_SUCCEEDED); /* FIFO: it has run */
  CHECK_SOON(actor_stats(a).failed == 3);
  CHECK_ST(tether_actor_error(a, 0, &e), TETHER_OK);
  CHECK_ERROR(e, TETHER_E_TASK_FAILED, 1, "lost?", "failing");
  CHECK_ST(tether_error_release(e), TETHER_OK);
  CHECK_ST(tether_actor_error(a, 1, &e), TETHER_E_INVALID_ARGUMENT);
  st = actor_stats(a);
  CHECK_EQ(st.completed, 3);
  CHECK_EQ(st.errors_dropped, 0);
  CHECK_EQ(actor_state(a), TETHER_ACTOR_ALIVE);

  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&r.dtor_runs), 1);
  note_destroy(&n);
  rec_destroy(&r);
}

/* ---- stop -------------------------------------------------------------------------------- */

typedef struct stop_wait {
  counter drops; /* FIRST member */
  event started;
  counter saw_stop;
  event gate;
} stop_wait;

/* m_stop_wait: runs until its stop is requested (bounded), notes it, then waits for the
 * gate. */
static tether_status m_stop_wait(tether_task *t, void *state, void *arg) {
  stop_wait *w = (stop_wait *)arg;
  (void)state;
  event_set(&w->started);
  if (!wait_stop(t)) harness_fail(__FILE__, __LINE__, "m_stop_wait: stop never requested");
  counter_set(&w->saw_stop, 1);
  if (!event_wait(&w->gate, T_LONG)) harness_fail(__FILE__, __LINE__, "m_stop_wait: gate never opened");
  return TETHER_OK;
}

/* stop(CANCEL) while a method is blocked: queued calls CANCELLED before it returns, each
 * arg dropped once; the running method sees stop_requested; later calls
 * TETHER_E_SHUTDOWN; the destructor runs once the method returns. */
TEST(actor_stop_cancel) {
  enum { Q = 5 };
  tether_actor_options o = actor_opts("cancelled", NULL, 0);
  rec r;
  stop_wait w;
  note q[Q], ff, late;
  tether_future fw = {0}, f[Q], lf = {77};
  tether_actor a;
  tether_actor_stats st;
  int i;
  rec_init(&r);
  counter_init(&w.drops);
  event_init(&w.started);
  counter_init(&w.saw_stop);
  event_init(&w.gate);
  note_init(&ff);
  note_init(&late);
  a = create_rec_actor(&o, &r);

  CHECK_ST(tether_actor_call(a, NULL, m_stop_wait, &w, count_drop, &fw), TETHER_OK);
  CHECK(event_wait(&w.started, T_LONG));
  for (i = 0; i < Q; i++) {
    note_init(&q[i]);
    CHECK_ST(tether_actor_call(a, NULL, m_note, &q[i], count_drop, &f[i]), TETHER_OK);
  }
  CHECK_ST(tether_actor_call(a, NULL, m_note, &ff, count_drop, NULL), TETHER_OK);

  CHECK_ST(tether_actor_stop(a, TETHER_STOP_CANCEL, T_SHORT), TETHER_E_TIMEOUT);
  /* Before stop returned: every queued call CANCELLED, its arg dropped once. */
  for (i = 0; i < Q; i++) {
    CHECK_EQ(future_poll(f[i]), TETHER_CANCELLED);
    CHECK_FUTURE_ERROR(f[i], TETHER_E_CANCELLED, 0, NULL, NULL);
    CHECK_EQ(counter_get(&q[i].drops), 1);
  }
  CHECK_EQ(counter_get(&ff.drops), 1);
  CHECK(counter_wait(&w.saw_stop, 1, T_LONG)); /* the running method sees the stop */
  CHECK_EQ(future_poll(fw), TETHER_RUNNING);
  CHECK_EQ(actor_state(a), TETHER_ACTOR_STOPPED);
  CHECK_DROPPED_ONCE(tether_actor_call(a, NULL, m_note, &late, count_drop, &lf), TETHER_E_SHUTDOWN,
                     &late.drops);
  CHECK_EQ(lf.id, 0);
  CHECK_DROPPED_ONCE(tether_actor_call_timeout(a, NULL, m_note, &late, count_drop, NULL, T_SHORT),
                     TETHER_E_SHUTDOWN, &late.drops);
  st = actor_stats(a);
  CHECK_EQ(st.queued, 0);
  CHECK_EQ(st.cancelled, Q + 1);
  CHECK_EQ(st.rejected, 2);
  CHECK_EQ(counter_get(&r.dtor_runs), 0);

  event_set(&w.gate);
  CHECK_ST(tether_actor_stop(a, TETHER_STOP_CANCEL, T_LONG), TETHER_OK);
  CHECK_EQ(counter_get(&r.dtor_runs), 1);
  CHECK_EQ(counter_get(&r.dtor_tid), counter_get(&r.ctor_tid));
  CHECK_EQ(future_outcome(fw), TETHER_CANCELLED); /* stop requested, then returned OK */
  CHECK_ST(tether_actor_stop(a, TETHER_STOP_DRAIN, 0), TETHER_OK); /* already done */
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&r.dtor_runs), 1);

  CHECK_ST(tether_future_release(fw), TETHER_OK);
  for (i = 0; i < Q; i++) {
    CHECK_ST(tether_future_release(f[i]), TETHER_OK);
    CHECK_EQ(counter_get(&q[i].drops), 1);
    CHECK_EQ(counter_get(&q[i].runs), 0);
    note_destroy(&q[i]);
  }
  CHECK_EQ(counter_get(&ff.runs), 0);
  CHECK_EQ(counter_get(&ff.drops), 1);
  CHECK_EQ(counter_get(&late.runs), 0);
  CHECK_EQ(counter_get(&w.drops), 1);
  CHECK_EQ(counter_get(&r.drops), 1);
  note_destroy(&ff);
  note_destroy(&late);
  counter_destroy(&w.drops);
  event_destroy(&w.started);
  counter_destroy(&w.saw_stop);
  event_destroy(&w.gate);
  rec_destroy(&r);
}

/* stop(DRAIN): what is queued still runs, in order, on the pinned thread, then the
 * destructor there; calls made after the stop return TETHER_E_SHUTDOWN. */
TEST(actor_stop_drain) {
  const tether_group_spec groups[] = {{"io", 1}};
  tether_actor_options o = actor_opts("drained", groups, 1);
  long n = scaled(200), i;
  rec r;
  blocker b;
  order ord;
  order_item *items = (order_item *)malloc(sizeof *items * (size_t)n);
  note io, late;
  tether_future fb = {0}, fio = {0};
  tether_actor a;
  CHECK(items != NULL);
  rec_init(&r);
  blocker_init(&b);
  note_init(&io);
  note_init(&late);
  counter_init(&ord.drops);
  counter_init(&ord.next);
  counter_init(&ord.bad);
  a = create_rec_actor(&o, &r);

  CHECK_ST(tether_actor_call(a, NULL, m_block, &b, count_drop, &fb), TETHER_OK);
  CHECK(event_wait(&b.started, T_LONG));
  for (i = 0; i < n; i++) {
    items[i].o = &ord;
    items[i].i = i;
    CHECK_ST(tether_actor_call(a, NULL, m_order, &items[i], order_item_drop, NULL), TETHER_OK);
  }
  CHECK_ST(tether_actor_call(a, "io", m_note, &io, count_drop, &fio), TETHER_OK);

  CHECK_ST(tether_actor_stop(a, TETHER_STOP_DRAIN, 0), TETHER_E_TIMEOUT); /* the stop goes on */
  CHECK_EQ(actor_state(a), TETHER_ACTOR_STOPPED);
  CHECK_DROPPED_ONCE(tether_actor_call(a, NULL, m_note, &late, count_drop, NULL), TETHER_E_SHUTDOWN,
                     &late.drops);
  CHECK_DROPPED_ONCE(tether_actor_call(a, "io", m_note, &late, count_drop, NULL), TETHER_E_SHUTDOWN,
                     &late.drops);
  CHECK_ST(tether_actor_stop(a, TETHER_STOP_DRAIN, T_SHORT), TETHER_E_TIMEOUT); /* still blocked */
  CHECK_EQ(counter_get(&ord.next), 0);

  event_set(&b.gate);
  CHECK_ST(tether_actor_stop(a, TETHER_STOP_DRAIN, T_LONG), TETHER_OK);
  CHECK_EQ(counter_get(&ord.next), n); /* every queued call ran ... */
  CHECK_EQ(counter_get(&ord.bad), 0);  /* ... in order */
  CHECK_EQ(counter_get(&ord.drops), n);
  CHECK_EQ(future_outcome(fb), TETHER_SUCCEEDED);
  CHECK_EQ(future_outcome(fio), TETHER_SUCCEEDED);
  CHECK_EQ(counter_get(&b.saw_stop), 0); /* DRAIN asks nobody to stop */
  CHECK_EQ(counter_get(&io.runs), 1);
  CHECK_EQ(counter_get(&r.dtor_runs), 1);
  CHECK_EQ(counter_get(&r.dtor_tid), counter_get(&r.ctor_tid));
  CHECK_EQ(counter_get(&late.runs), 0);
  CHECK_EQ(actor_state(a), TETHER_ACTOR_STOPPED);

  CHECK_ST(tether_future_release(fb), TETHER_OK);
  CHECK_ST(tether_future_release(fio), TETHER_OK);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&b.drops), 1);
  CHECK_EQ(counter_get(&io.drops), 1);
  CHECK_EQ(counter_get(&r.drops), 1);
  counter_destroy(&ord.drops);
  counter_destroy(&ord.next);
  counter_destroy(&ord.bad);
  free(items);
  note_destroy(&io);
  note_destroy(&late);
  blocker_destroy(&b);
  rec_destroy(&r);
}

/* release is stop(DRAIN) waited to the end: when it returns, every queued call has run and
 * the destructor too. */
TEST(actor_release_drains) {
  tether_actor_options o = actor_opts("released", NULL, 0);
  long n = scaled(1000), i;
  rec r;
  note n1;
  tether_actor a;
  rec_init(&r);
  note_init(&n1);
  a = create_rec_actor(&o, &r);
  for (i = 0; i < n; i++) CHECK_ST(tether_actor_call(a, NULL, m_note, &n1, count_drop, NULL), TETHER_OK);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&n1.runs), n);
  CHECK_EQ(counter_get(&n1.drops), n);
  CHECK_EQ(counter_get(&r.method_runs), n);
  CHECK_EQ(counter_get(&r.runs_at_dtor), n);
  CHECK_EQ(counter_get(&r.dtor_runs), 1);
  CHECK_EQ(counter_get(&r.drops), 1);
  CHECK_ST(tether_actor_release(a), TETHER_E_INVALID_HANDLE);
  note_destroy(&n1);
  rec_destroy(&r);
}

typedef struct stop_waiter {
  tether_actor a;
  event waiting;
  tether_status st;
} stop_waiter;

static void *wait_on_stop(void *arg) {
  stop_waiter *w = (stop_waiter *)arg;
  event_set(&w->waiting);
  w->st = tether_actor_stop(w->a, TETHER_STOP_DRAIN, T_LONG);
  return NULL;
}

/* A stop waiting on a blocked actor returns TETHER_E_INVALID_HANDLE promptly when another
 * thread ends the handle (before the gate opens: the blocker would fail otherwise). */
TEST(actor_release_wakes_stop) {
  tether_actor_options o = actor_opts("woken", NULL, 0);
  rec r;
  blocker b;
  stop_waiter w;
  pthread_t th;
  rec_init(&r);
  blocker_init(&b);
  event_init(&w.waiting);
  w.a = create_rec_actor(&o, &r);
  w.st = -1;
  CHECK_ST(tether_actor_call(w.a, NULL, m_block, &b, count_drop, NULL), TETHER_OK);
  CHECK(event_wait(&b.started, T_LONG));
  CHECK(pthread_create(&th, NULL, wait_on_stop, &w) == 0);
  CHECK(event_wait(&w.waiting, T_LONG));
  CHECK_ST(tether_actor_release_nowait(w.a), TETHER_OK);
  join_thread(th);
  CHECK_ST(w.st, TETHER_E_INVALID_HANDLE);
  CHECK_EQ(counter_get(&r.dtor_runs), 0);
  event_set(&b.gate);
  CHECK(counter_wait(&r.dtor_runs, 1, T_LONG)); /* the drain goes on without the handle */
  CHECK(counter_wait(&b.drops, 1, T_LONG));
  CHECK(counter_wait(&r.drops, 1, T_LONG));
  /* Its thread ends, and the control thread joins it (before the process exits). */
  CHECK_SOON(tether_debug_unjoined_threads() == 0);
  event_destroy(&w.waiting);
  blocker_destroy(&b);
  rec_destroy(&r);
}

/* The owner's handle, handed to a method, released there: never deadlocks; the calls queued
 * behind still run, then the destructor. */
typedef struct self_release {
  tether_actor a;
  event queued; /* the call behind is queued: release now */
  tether_status st;
} self_release;

static tether_status m_release_self(tether_task *t, void *state, void *arg) {
  self_release *s = (self_release *)arg;
  (void)t;
  (void)state;
  if (!event_wait(&s->queued, T_LONG)) harness_fail(__FILE__, __LINE__, "m_release_self: never told");
  s->st = tether_actor_release(s->a);
  return TETHER_OK;
}

TEST(actor_release_inside) {
  tether_actor_options o = actor_opts("self-released", NULL, 0);
  rec r;
  note n;
  self_release s;
  tether_future f = {0};
  int32_t st = -1;
  rec_init(&r);
  note_init(&n);
  event_init(&s.queued);
  s.a = create_rec_actor(&o, &r);
  s.st = -1;
  CHECK_ST(tether_actor_call(s.a, NULL, m_release_self, &s, NULL, &f), TETHER_OK);
  CHECK_ST(tether_actor_call(s.a, NULL, m_note, &n, count_drop, NULL), TETHER_OK);
  event_set(&s.queued);
  CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);
  CHECK_ST(s.st, TETHER_OK);
  CHECK(counter_wait(&r.dtor_runs, 1, T_LONG));
  CHECK_EQ(counter_get(&n.runs), 1); /* DRAIN: queued before the release, it ran */
  CHECK_EQ(counter_get(&r.runs_at_dtor), 1);
  CHECK_EQ(counter_get(&n.drops), 1);
  CHECK(counter_wait(&r.drops, 1, T_LONG));
  CHECK_ST(tether_actor_state(s.a, &st, NULL), TETHER_E_INVALID_HANDLE);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  /* Its thread ends, and the control thread joins it (before the process exits). */
  CHECK_SOON(tether_debug_unjoined_threads() == 0);
  event_destroy(&s.queued);
  note_destroy(&n);
  rec_destroy(&r);
}

/* ---- bounded mailbox ---------------------------------------------------------------------- */

typedef struct late_call {
  tether_actor a;
  note *n;
  tether_future f;
  tether_status st;
} late_call;

static void *call_with_room_wait(void *arg) {
  late_call *c = (late_call *)arg;
  c->st = tether_actor_call_timeout(c->a, NULL, m_note, c->n, count_drop, &c->f, T_LONG);
  return NULL;
}

TEST(actor_mailbox_bounded) {
  const tether_group_spec groups[] = {{"io", 1}};
  tether_actor_options o = actor_opts("bounded", groups, 1);
  rec r;
  blocker b;
  note q[2], x, waited;
  tether_future fb = {0}, f[2], xf = {77};
  tether_actor a;
  tether_actor_stats st;
  late_call lc;
  pthread_t th;
  int i;
  rec_init(&r);
  blocker_init(&b);
  note_init(&x);
  note_init(&waited);
  o.mailbox_capacity = 2;
  a = create_rec_actor(&o, &r);

  CHECK_ST(tether_actor_call(a, NULL, m_block, &b, count_drop, &fb), TETHER_OK);
  CHECK(event_wait(&b.started, T_LONG)); /* running: it left the mailbox */
  for (i = 0; i < 2; i++) {
    note_init(&q[i]);
    CHECK_ST(tether_actor_call(a, NULL, m_note, &q[i], count_drop, &f[i]), TETHER_OK);
  }
  st = actor_stats(a);
  CHECK_EQ(st.queued, 2);

  CHECK_DROPPED_ONCE(tether_actor_call(a, NULL, m_note, &x, count_drop, &xf), TETHER_E_QUEUE_FULL, &x.drops);
  CHECK_EQ(xf.id, 0);
  /* Every group's calls count against the actor's one mailbox. */
  CHECK_DROPPED_ONCE(tether_actor_call(a, "io", m_note, &x, count_drop, NULL), TETHER_E_QUEUE_FULL, &x.drops);
  CHECK_DROPPED_ONCE(tether_actor_call_timeout(a, NULL, m_note, &x, count_drop, &xf, T_SHORT), TETHER_E_TIMEOUT,
                     &x.drops);
  CHECK_EQ(xf.id, 0);
  CHECK_DROPPED_ONCE(tether_actor_call_timeout(a, NULL, m_note, &x, count_drop, NULL, 0), TETHER_E_QUEUE_FULL,
                     &x.drops);
  st = actor_stats(a);
  CHECK_EQ(st.queued, 2); /* it never grew past the capacity */
  CHECK_EQ(st.rejected, 4);
  CHECK_EQ(counter_get(&x.runs), 0);

  /* A call that waits for room gets in once the blocked method lets the queue move. */
  lc.a = a;
  lc.n = &waited;
  lc.f.id = 0;
  lc.st = -1;
  CHECK(pthread_create(&th, NULL, call_with_room_wait, &lc) == 0);
  event_set(&b.gate);
  join_thread(th);
  CHECK_ST(lc.st, TETHER_OK);
  CHECK_EQ(future_outcome(lc.f), TETHER_SUCCEEDED);
  CHECK_EQ(future_outcome(fb), TETHER_SUCCEEDED);
  for (i = 0; i < 2; i++) CHECK_EQ(future_outcome(f[i]), TETHER_SUCCEEDED);
  CHECK_EQ(counter_get(&waited.runs), 1);

  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_ST(tether_future_release(lc.f), TETHER_OK);
  CHECK_ST(tether_future_release(fb), TETHER_OK);
  for (i = 0; i < 2; i++) {
    CHECK_ST(tether_future_release(f[i]), TETHER_OK);
    CHECK_EQ(counter_get(&q[i].drops), 1);
    note_destroy(&q[i]);
  }
  CHECK_EQ(counter_get(&waited.drops), 1);
  CHECK_EQ(counter_get(&x.drops), 4);
  CHECK_EQ(counter_get(&b.drops), 1);
  note_destroy(&x);
  note_destroy(&waited);
  blocker_destroy(&b);
  rec_destroy(&r);
}

/* ---- waiting on yourself ---------------------------------------------------------------- */

enum { SW_IO_WAIT, SW_WAIT, SW_WAIT0, SW_WAIT_ANY, SW_WAIT_ANY0, SW_FULL_TIMEOUT, SW_FULL, SW_STOP,
       SW_STOP0, SW_N };

typedef struct self_wait {
  tether_actor a; /* the owner's handle, to compare with the borrowed one */
  tether_status st[SW_N];
  note queued;    /* the call each method queues behind itself */
  note io;
  long ran;       /* 1 once the method finished its calls */
} self_wait;

static tether_status m_self_wait(tether_task *t, void *state, void *arg) {
  self_wait *c = (self_wait *)arg;
  tether_actor self = {0};
  tether_future f = {0}, fio = {0};
  size_t idx = 99;
  (void)state;
  CHECK_ST(tether_task_actor(t, &self), TETHER_OK);
  CHECK_EQ(self.id, c->a.id);
  /* Another group answers: waiting on it from here is fine. */
  CHECK_ST(tether_actor_call(self, "io", m_note, &c->io, NULL, &fio), TETHER_OK);
  c->st[SW_IO_WAIT] = tether_future_wait(fio, T_LONG);
  CHECK_ST(tether_future_release(fio), TETHER_OK);
  /* A call queued behind this one on this thread: waiting for it waits on yourself. */
  CHECK_ST(tether_actor_call(self, NULL, m_note, &c->queued, NULL, &f), TETHER_OK);
  c->st[SW_WAIT] = tether_future_wait(f, T_LONG);
  c->st[SW_WAIT0] = tether_future_wait(f, 0);
  c->st[SW_WAIT_ANY] = tether_future_wait_any(&f, 1, T_LONG, &idx);
  c->st[SW_WAIT_ANY0] = tether_future_wait_any(&f, 1, 0, &idx);
  CHECK_EQ(idx, 99);
  CHECK_ST(tether_future_release(f), TETHER_OK); /* from inside: fine */
  /* The mailbox (capacity 1) is full of that call: waiting for room waits on yourself. */
  c->st[SW_FULL_TIMEOUT] = tether_actor_call_timeout(self, NULL, m_ok, NULL, NULL, NULL, T_LONG);
  c->st[SW_FULL] = tether_actor_call(self, NULL, m_ok, NULL, NULL, NULL);
  /* A stop from inside starts the stop, then: DEADLOCK, or TIMEOUT with timeout 0. */
  c->st[SW_STOP0] = tether_actor_stop(self, TETHER_STOP_DRAIN, 0);
  c->st[SW_STOP] = tether_actor_stop(self, TETHER_STOP_DRAIN, T_LONG);
  c->ran = 1;
  return TETHER_OK;
}

TEST(actor_self_wait_deadlock) {
  const tether_group_spec groups[] = {{"io", 1}};
  tether_actor_options o = actor_opts("self-wait", groups, 1);
  rec r;
  self_wait c;
  tether_future f = {0};
  int i;
  rec_init(&r);
  note_init(&c.queued);
  note_init(&c.io);
  c.ran = 0;
  for (i = 0; i < SW_N; i++) c.st[i] = -1;
  o.mailbox_capacity = 1;
  c.a = create_rec_actor(&o, &r);
  CHECK_ST(tether_actor_call(c.a, NULL, m_self_wait, &c, NULL, &f), TETHER_OK);
  CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);
  CHECK(c.ran);
  CHECK_ST(c.st[SW_IO_WAIT], TETHER_OK);
  CHECK_ST(c.st[SW_WAIT], TETHER_E_DEADLOCK);
  CHECK_ST(c.st[SW_WAIT0], TETHER_E_TIMEOUT);
  CHECK_ST(c.st[SW_WAIT_ANY], TETHER_E_DEADLOCK);
  CHECK_ST(c.st[SW_WAIT_ANY0], TETHER_E_TIMEOUT);
  CHECK_ST(c.st[SW_FULL_TIMEOUT], TETHER_E_DEADLOCK);
  CHECK_ST(c.st[SW_FULL], TETHER_E_QUEUE_FULL);
  CHECK_ST(c.st[SW_STOP0], TETHER_E_TIMEOUT);
  CHECK_ST(c.st[SW_STOP], TETHER_E_DEADLOCK);
  CHECK_EQ(counter_get(&c.io.runs), 1);
  /* The stop went on: DRAIN ran the queued call, then the destructor. */
  CHECK_ST(tether_actor_stop(c.a, TETHER_STOP_DRAIN, T_LONG), TETHER_OK);
  CHECK_EQ(counter_get(&c.queued.runs), 1);
  CHECK_EQ(counter_get(&r.dtor_runs), 1);
  CHECK_EQ(actor_state(c.a), TETHER_ACTOR_STOPPED);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_actor_release(c.a), TETHER_OK);
  note_destroy(&c.queued);
  note_destroy(&c.io);
  rec_destroy(&r);
}

/* ---- borrowed handles ---------------------------------------------------------------------- */

typedef struct handles {
  tether_status actor_st, runner_st, state_st;
  uint64_t actor_id, runner_id;
  int32_t state;
} handles;

static void handles_init(handles *h) {
  h->actor_st = h->runner_st = h->state_st = -1;
  h->actor_id = h->runner_id = 77;
  h->state = -1;
}

static void handles_record(tether_task *t, handles *h) {
  tether_actor a = {77};
  tether_runner r = {77};
  h->actor_st = tether_task_actor(t, &a);
  h->actor_id = a.id;
  h->runner_st = tether_task_runner(t, &r);
  h->runner_id = r.id;
  if (h->actor_st == TETHER_OK) h->state_st = tether_actor_state(a, &h->state, NULL); /* borrowed: usable */
}

typedef struct handles_ctor {
  counter drops; /* FIRST member */
  handles h;
} handles_ctor;

static tether_status ctor_handles(tether_task *t, void *arg, void **state_out) {
  handles_record(t, &((handles_ctor *)arg)->h);
  *state_out = NULL;
  return TETHER_OK;
}

static tether_status m_handles(tether_task *t, void *state, void *arg) {
  (void)state;
  handles_record(t, (handles *)arg);
  return TETHER_OK;
}

static tether_status fn_handles(tether_task *t, void *arg) {
  handles_record(t, (handles *)arg);
  return TETHER_OK;
}

/* tether_task_actor: the actor's borrowed handle in its constructor and methods (default
 * thread and groups); TETHER_E_WRONG_STATE with the null handle in a runner's target and
 * an executor's task. tether_task_runner: TETHER_E_WRONG_STATE inside an actor. */
TEST(actor_task_handles) {
  const tether_group_spec groups[] = {{"io", 2}};
  tether_actor_options o = actor_opts("borrowed", groups, 1);
  handles_ctor hc;
  handles hd, hio, hr, he;
  tether_actor a = {0};
  tether_runner run = {0};
  tether_executor e = {0};
  tether_future f = {0};
  counter_init(&hc.drops);
  handles_init(&hc.h);
  handles_init(&hd);
  handles_init(&hio);
  handles_init(&hr);
  handles_init(&he);

  CHECK_ST(tether_actor_create(&o, ctor_handles, NULL, &hc, count_drop, &a), TETHER_OK);
  CHECK_EQ(call_and_wait(a, NULL, m_handles, &hd), TETHER_SUCCEEDED);
  CHECK_EQ(call_and_wait(a, "io", m_handles, &hio), TETHER_SUCCEEDED);
  CHECK_ST(hc.h.actor_st, TETHER_OK);
  CHECK_EQ(hc.h.actor_id, a.id);
  CHECK_ST(hc.h.state_st, TETHER_OK);
  CHECK_EQ(hc.h.state, TETHER_ACTOR_ALIVE);
  CHECK_ST(hc.h.runner_st, TETHER_E_WRONG_STATE);
  CHECK_EQ(hc.h.runner_id, 0);
  CHECK_ST(hd.actor_st, TETHER_OK);
  CHECK_EQ(hd.actor_id, a.id);
  CHECK_ST(hd.state_st, TETHER_OK);
  CHECK_EQ(hd.state, TETHER_ACTOR_ALIVE);
  CHECK_ST(hd.runner_st, TETHER_E_WRONG_STATE);
  CHECK_EQ(hd.runner_id, 0);
  CHECK_ST(hio.actor_st, TETHER_OK);
  CHECK_EQ(hio.actor_id, a.id);
  CHECK_ST(hio.runner_st, TETHER_E_WRONG_STATE);
  CHECK_EQ(hio.runner_id, 0);

  CHECK_ST(tether_runner_start(NULL, fn_handles, &hr, NULL, &run), TETHER_OK);
  CHECK_ST(tether_runner_join_all(run, T_LONG), TETHER_OK);
  CHECK_ST(hr.actor_st, TETHER_E_WRONG_STATE);
  CHECK_EQ(hr.actor_id, 0);
  CHECK_ST(hr.runner_st, TETHER_OK);
  CHECK_EQ(hr.runner_id, run.id);
  CHECK_ST(tether_runner_release(run), TETHER_OK);

  CHECK_ST(tether_executor_create(NULL, &e), TETHER_OK);
  CHECK_ST(tether_executor_submit(e, fn_handles, &he, NULL, &f), TETHER_OK);
  CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);
  CHECK_ST(he.actor_st, TETHER_E_WRONG_STATE);
  CHECK_EQ(he.actor_id, 0);
  CHECK_ST(he.runner_st, TETHER_E_WRONG_STATE);
  CHECK_EQ(he.runner_id, 0);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_executor_release(e), TETHER_OK);

  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&hc.drops), 1);
  counter_destroy(&hc.drops);
}

/* ---- nested threads inside a method ------------------------------------------------------- */

typedef struct nested_ctx {
  counter drops;      /* FIRST member: the nested thread's arg */
  event gate;         /* the nested thread waits for it */
  event started;      /* set by the nested thread before it waits */
  counter nested_ran;
  const char *fail;   /* non-NULL: the nested thread fails with user_code 4 and this */
} nested_ctx;

static tether_status nested_body(tether_task *t, void *arg) {
  nested_ctx *c = (nested_ctx *)arg;
  event_set(&c->started);
  if (!event_wait(&c->gate, T_LONG)) harness_fail(__FILE__, __LINE__, "nested: gate never opened");
  counter_add(&c->nested_ran, 1);
  return c->fail ? tether_task_fail(t, 4, c->fail) : TETHER_OK;
}

static tether_status m_spawn(tether_task *t, void *state, void *arg) {
  (void)state;
  return tether_task_spawn(t, "nested-1", nested_body, arg, count_drop);
}

/* The call's future completes when the method AND its nested threads are done, and fails
 * with the nested thread's error. */
TEST(actor_nested_spawn) {
  tether_actor_options o = actor_opts("spawner", NULL, 0);
  rec r;
  nested_ctx ok_c, bad_c;
  tether_future f = {0};
  tether_actor a;
  rec_init(&r);
  counter_init(&ok_c.drops);
  event_init(&ok_c.gate);
  event_init(&ok_c.started);
  counter_init(&ok_c.nested_ran);
  ok_c.fail = NULL;
  counter_init(&bad_c.drops);
  event_init(&bad_c.gate);
  event_init(&bad_c.started);
  counter_init(&bad_c.nested_ran);
  bad_c.fail = "nested boom";
  a = create_rec_actor(&o, &r);

  CHECK_ST(tether_actor_call(a, NULL, m_spawn, &ok_c, NULL, &f), TETHER_OK);
  /* Once the nested thread runs (the call may still be queued before: valgrind on a busy
   * machine), the future stays RUNNING until it returns. */
  CHECK(event_wait(&ok_c.started, T_LONG));
  CHECK_ST(tether_future_wait(f, T_SHORT), TETHER_E_TIMEOUT); /* the nested thread still runs */
  CHECK_EQ(future_poll(f), TETHER_RUNNING);
  CHECK_EQ(call_and_wait(a, NULL, m_ok, NULL), TETHER_SUCCEEDED); /* the method itself returned */
  event_set(&ok_c.gate);
  CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);
  CHECK_EQ(counter_get(&ok_c.nested_ran), 1);
  CHECK_ST(tether_future_release(f), TETHER_OK);

  CHECK_ST(tether_actor_call(a, NULL, m_spawn, &bad_c, NULL, &f), TETHER_OK);
  event_set(&bad_c.gate);
  CHECK_EQ(future_outcome(f), TETHER_FAILED);
  CHECK_FUTURE_ERROR(f, TETHER_E_TASK_FAILED, 4, "nested boom", "nested-1");
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_EQ(actor_state(a), TETHER_ACTOR_ALIVE);

  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&ok_c.drops), 1);
  CHECK_EQ(counter_get(&bad_c.drops), 1);
  /* A call's nested threads are joined by the control thread once they exit (the actor's
   * release waits for them to return, not for their join): let them be joined before the
   * process exits. */
  CHECK_SOON(tether_debug_unjoined_threads() == 0);
  counter_destroy(&ok_c.drops);
  event_destroy(&ok_c.gate);
  event_destroy(&ok_c.started);
  counter_destroy(&ok_c.nested_ran);
  counter_destroy(&bad_c.drops);
  event_destroy(&bad_c.gate);
  event_destroy(&bad_c.started);
  counter_destroy(&bad_c.nested_ran);
  rec_destroy(&r);
}

/* ---- an executor released after its last actor -------------------------------------------- */

static pthread_key_t exit_key;

static void exit_key_destructor(void *p) { counter_add((counter *)p, 1); }

static tether_status m_set_exit_key(tether_task *t, void *state, void *arg) {
  (void)t;
  (void)state;
  CHECK(pthread_setspecific(exit_key, arg) == 0);
  return TETHER_OK;
}

/* The actor on a shared executor is released (its release waited for its destructor), then
 * the executor: no actor lives on it any more, so its release "runs what is queued, then
 * joins the thread" — the thread has ended (its thread-local destructors have run) when
 * release returns. Repeated, since the end of the actor and the release race. */
TEST(actor_then_executor_release) {
  long n = scaled(200), i;
  counter thread_ends;
  counter_init(&thread_ends);
  CHECK(pthread_key_create(&exit_key, exit_key_destructor) == 0);
  for (i = 0; i < n; i++) {
    tether_executor e = {0};
    tether_executor_options eo = exec_opts("short-lived");
    tether_actor_options o = actor_opts("on-short-lived", NULL, 0);
    rec r;
    tether_actor a;
    rec_init(&r);
    CHECK_ST(tether_executor_create(&eo, &e), TETHER_OK);
    o.executor = e;
    a = create_rec_actor(&o, &r);
    CHECK_EQ(call_and_wait(a, NULL, m_set_exit_key, &thread_ends), TETHER_SUCCEEDED);
    CHECK_ST(tether_actor_release(a), TETHER_OK);
    CHECK_EQ(counter_get(&r.dtor_runs), 1);
    CHECK_ST(tether_executor_release(e), TETHER_OK);
    CHECK_EQ(tether_debug_unjoined_threads(), 0); /* ... and joined */
    if (counter_get(&thread_ends) != i + 1)
      harness_fail(__FILE__, __LINE__,
                   "round %ld: tether_executor_release returned before its thread ended "
                   "(thread-local destructors run: %ld, want %ld)",
                   i, counter_get(&thread_ends), i + 1);
    rec_destroy(&r);
  }
  CHECK(pthread_key_delete(exit_key) == 0);
  counter_destroy(&thread_ends);
}
