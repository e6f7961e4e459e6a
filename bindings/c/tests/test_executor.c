/*
 * test_executor.c — pinned executors (section 6 of the contract).
 *
 *   one OS thread for life, FIFO, named; its thread-local state persists between tasks and
 *   its thread-local destructors run when it ends
 *   options applied (OS name, CPU affinity, stack size, no idle spin)
 *   fire-and-forget errors: counted, the first 64 kept in order, the rest in errors_dropped
 *   manual executors: run on the main thread; run from another thread, from a task, or on
 *   a non-manual executor -> TETHER_E_WRONG_STATE; release from the owner runs what is
 *   queued there; release from another thread cancels it and ends run with SHUTDOWN
 *   bounded queue: QUEUE_FULL, submit_timeout -> TIMEOUT, DEADLOCK from the inside
 *   waiting on your own executor: TETHER_E_DEADLOCK (timeout 0: TETHER_E_TIMEOUT)
 *   release runs what is queued, then joins; release from inside never deadlocks
 */
#define _GNU_SOURCE /* syscall(SYS_gettid), pthread_getname_np, sched_getaffinity */
#include "actor_fixtures.h"

/* ---- FIFO on one thread ----------------------------------------------------------------- */

typedef struct fifo {
  counter drops; /* FIRST member: every item's drop */
  counter next;
  counter bad_order;
  counter bad_tid;
  counter tid;   /* the first task's gettid() */
  counter bad_name;
} fifo;

typedef struct fifo_item {
  fifo *f;
  long i;
} fifo_item;

static tether_status fifo_fn(tether_task *t, void *arg) {
  fifo_item *it = (fifo_item *)arg;
  char os[64];
  if (it->i == 0) counter_set(&it->f->tid, os_tid());
  if (counter_get(&it->f->tid) != os_tid()) counter_add(&it->f->bad_tid, 1);
  if (counter_get(&it->f->next) != it->i) counter_add(&it->f->bad_order, 1);
  counter_set(&it->f->next, it->i + 1);
  if (it->i % 997 == 0) {
    if (strcmp(tether_task_thread_name(t), "fifo-exec") != 0) counter_add(&it->f->bad_name, 1);
    if (!os_thread_name(os, sizeof os) || strcmp(os, "fifo-exec") != 0)
      counter_add(&it->f->bad_name, 1);
  }
  return TETHER_OK;
}

static void fifo_item_drop(void *p) { counter_add(&((fifo_item *)p)->f->drops, 1); }

TEST(executor_fifo_pinned) {
  long n = scaled(20000), i;
  tether_executor_options o = exec_opts("fifo-exec");
  tether_executor e = {0};
  tether_executor_stats st;
  fifo f;
  fifo_item *items = (fifo_item *)malloc(sizeof *items * (size_t)n);
  tether_future last = {0};
  CHECK(items != NULL);
  counter_init(&f.drops);
  counter_init(&f.next);
  counter_init(&f.bad_order);
  counter_init(&f.bad_tid);
  counter_init(&f.tid);
  counter_init(&f.bad_name);
  CHECK_ST(tether_executor_create(&o, &e), TETHER_OK);
  CHECK(e.id != 0);
  for (i = 0; i < n; i++) {
    items[i].f = &f;
    items[i].i = i;
    /* the last one with a future: FIFO means the others have run when it has */
    CHECK_ST(tether_executor_submit(e, fifo_fn, &items[i], fifo_item_drop, i == n - 1 ? &last : NULL),
             TETHER_OK);
  }
  CHECK_EQ(future_outcome(last), TETHER_SUCCEEDED);
  CHECK_EQ(counter_get(&f.next), n);
  CHECK_EQ(counter_get(&f.bad_order), 0);
  CHECK_EQ(counter_get(&f.bad_tid), 0);
  CHECK_EQ(counter_get(&f.bad_name), 0);
  CHECK(counter_get(&f.tid) != os_tid());
  st = exec_stats(e);
  CHECK_EQ(st.os_thread_id, counter_get(&f.tid));
  CHECK_EQ(st.completed, n);
  CHECK_EQ(st.failed, 0);
  CHECK_EQ(st.queued, 0);
  CHECK_ST(tether_future_release(last), TETHER_OK);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
  CHECK_EQ(counter_get(&f.drops), n);
  counter_destroy(&f.drops);
  counter_destroy(&f.next);
  counter_destroy(&f.bad_order);
  counter_destroy(&f.bad_tid);
  counter_destroy(&f.tid);
  counter_destroy(&f.bad_name);
  free(items);
}

/* ---- thread-local state ----------------------------------------------------------------- */

static pthread_key_t tl_key;

static void tl_key_destructor(void *p) { counter_add((counter *)p, 1); }

typedef struct tl_ctx {
  counter key_dtor; /* the pthread key's destructor ran (at thread exit) */
  note n;
} tl_ctx;

static tether_status tl_first(tether_task *t, void *arg) {
  tl_ctx *c = (tl_ctx *)arg;
  (void)t;
  tl_value = 5;
  CHECK(pthread_setspecific(tl_key, &c->key_dtor) == 0);
  return TETHER_OK;
}

static tether_status tl_bump(tether_task *t, void *arg) {
  note_record(t, &((tl_ctx *)arg)->n);
  tl_value += 1;
  return TETHER_OK;
}

/* Thread-local state persists between tasks; the thread's thread-local destructors run when
 * the executor ends (here: before release returns, since release joins the thread). */
TEST(executor_thread_local) {
  tether_executor e = {0};
  tl_ctx c;
  tether_future f = {0};
  long i;
  counter_init(&c.key_dtor);
  note_init(&c.n);
  CHECK(pthread_key_create(&tl_key, tl_key_destructor) == 0);
  CHECK_ST(tether_executor_create(NULL, &e), TETHER_OK);
  CHECK_ST(tether_executor_submit(e, tl_first, &c, NULL, NULL), TETHER_OK);
  for (i = 0; i < 10; i++) {
    CHECK_ST(tether_executor_submit(e, tl_bump, &c, NULL, &f), TETHER_OK);
    CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);
    CHECK_ST(tether_future_release(f), TETHER_OK);
    CHECK_EQ(counter_get(&c.n.tl), 5 + i);
    CHECK_EQ(counter_get(&c.n.tid), exec_stats(e).os_thread_id);
  }
  CHECK_STR(c.n.thread, "tether-exec"); /* the default name */
  CHECK_EQ(counter_get(&c.key_dtor), 0);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
  CHECK_EQ(counter_get(&c.key_dtor), 1);
  CHECK(pthread_key_delete(tl_key) == 0);
  counter_destroy(&c.key_dtor);
  note_destroy(&c.n);
}

/* ---- options ---------------------------------------------------------------------------- */

typedef struct placed {
  char os_name[64];
  int ncpus;     /* CPUs in the thread's affinity mask */
  int cpu_ok;    /* the one it was pinned to is in it */
  int want_cpu;
} placed;

static tether_status where_am_i(tether_task *t, void *arg) {
  placed *p = (placed *)arg;
  (void)t;
  CHECK(os_thread_name(p->os_name, sizeof p->os_name));
  p->ncpus = os_cpu_count();
  p->cpu_ok = os_cpu_allowed(p->want_cpu);
  return TETHER_OK;
}

TEST(executor_options_applied) {
  tether_executor_options o = exec_opts("a-long-executor-name");
  tether_executor e = {0};
  tether_future f = {0};
  placed p;
  int cpu = -1, i;
  for (i = 0; i < 1024 && cpu < 0; i++) {
    if (os_cpu_allowed(i)) cpu = i;
  }
  CHECK(cpu >= 0);
  o.cpu = cpu;
  o.stack_size = (size_t)1 << 20;
  o.idle_spin_ns = 0; /* park at once */
  memset(&p, 0, sizeof p);
  p.want_cpu = cpu;
  CHECK_ST(tether_executor_create(&o, &e), TETHER_OK);
  CHECK_ST(tether_executor_submit(e, where_am_i, &p, NULL, &f), TETHER_OK);
  CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);
  CHECK_STR(p.os_name, "a-long-executor"); /* the OS sees 15 bytes */
  CHECK_EQ(p.ncpus, 1);
  CHECK(p.cpu_ok);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
}

/* ---- fire-and-forget errors ------------------------------------------------------------- */

typedef struct numbered {
  long i;
} numbered;

static tether_status fail_numbered(tether_task *t, void *arg) {
  const numbered *n = (const numbered *)arg;
  char msg[32];
  sprintf(msg, "failure %ld", n->i);
  return tether_task_fail(t, n->i, msg);
}

/* 100 failing fire-and-forget tasks: all counted, the first 64 kept in order, 36 dropped. */
TEST(executor_errors_kept) {
  enum { N = 100, KEPT = 64 };
  tether_executor_options o = exec_opts("ff-exec");
  tether_executor e = {0};
  tether_executor_stats st;
  numbered nums[N];
  tether_error err = {77};
  tether_future last = {0};
  long i;
  CHECK_ST(tether_executor_create(&o, &e), TETHER_OK);
  CHECK_ST(tether_executor_error(e, 0, &err), TETHER_E_INVALID_ARGUMENT); /* none yet */
  CHECK_EQ(err.id, 0);
  for (i = 0; i < N; i++) {
    nums[i].i = i + 1;
    CHECK_ST(tether_executor_submit(e, fail_numbered, &nums[i], NULL, NULL), TETHER_OK);
    if (i == 49) CHECK_ST(tether_executor_submit(e, ok_fn, NULL, NULL, NULL), TETHER_OK);
  }
  CHECK_ST(tether_executor_submit(e, ok_fn, NULL, NULL, &last), TETHER_OK);
  CHECK_EQ(future_outcome(last), TETHER_SUCCEEDED);
  CHECK_SOON(exec_stats(e).completed == 2);
  st = exec_stats(e);
  CHECK_EQ(st.failed, N);
  CHECK_EQ(st.errors_dropped, N - KEPT);
  CHECK_EQ(st.cancelled, 0);
  CHECK_EQ(st.rejected, 0);
  for (i = 0; i < KEPT; i++) {
    char msg[32];
    sprintf(msg, "failure %ld", i + 1);
    CHECK_ST(tether_executor_error(e, (size_t)i, &err), TETHER_OK);
    CHECK_ERROR(err, TETHER_E_TASK_FAILED, i + 1, msg, "ff-exec");
    CHECK_ST(tether_error_release(err), TETHER_OK);
  }
  err.id = 77;
  CHECK_ST(tether_executor_error(e, KEPT, &err), TETHER_E_INVALID_ARGUMENT);
  CHECK_EQ(err.id, 0);
  CHECK_ST(tether_executor_error(e, (size_t)-1, &err), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_future_release(last), TETHER_OK);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
}

/* ---- manual executors ------------------------------------------------------------------- */

typedef struct manual_ctx {
  counter runs;
  counter bad_tid;
  long want_tid;
  tether_executor e;
  tether_status inner_run; /* tether_executor_run from inside a task */
} manual_ctx;

static tether_status manual_task(tether_task *t, void *arg) {
  manual_ctx *m = (manual_ctx *)arg;
  (void)t;
  if (os_tid() != m->want_tid) counter_add(&m->bad_tid, 1);
  counter_add(&m->runs, 1);
  return TETHER_OK;
}

static tether_status manual_nested_run(tether_task *t, void *arg) {
  manual_ctx *m = (manual_ctx *)arg;
  (void)t;
  m->inner_run = tether_executor_run(m->e, 0);
  return TETHER_OK;
}

typedef struct foreign_run {
  manual_ctx *m;
  tether_status run_st;
} foreign_run;

static void *submit_from_elsewhere(void *arg) {
  manual_ctx *m = (manual_ctx *)arg;
  CHECK_ST(tether_executor_submit(m->e, manual_task, m, NULL, NULL), TETHER_OK);
  return NULL;
}

static void *run_from_elsewhere(void *arg) {
  foreign_run *r = (foreign_run *)arg;
  r->run_st = tether_executor_run(r->m->e, T_SHORT);
  return NULL;
}

/* run_until: drives the manual executor from this thread until `runs` reaches `want`. */
static void run_until(manual_ctx *m, long want) {
  int64_t deadline = now_ns() + T_LONG;
  while (counter_get(&m->runs) < want) {
    CHECK(now_ns() < deadline);
    CHECK_ST(tether_executor_run(m->e, T_SHORT), TETHER_OK);
  }
}

/* The main thread drives a manual executor: every task runs on it. */
TEST(executor_manual_main_thread) {
  tether_executor_options o = exec_opts("main-loop");
  tether_executor plain = {0};
  manual_ctx m;
  foreign_run fr;
  pthread_t th;
  tether_future f = {0};
  long i;
  counter_init(&m.runs);
  counter_init(&m.bad_tid);
  m.want_tid = os_tid();
  m.inner_run = -1;
  o.manual = 1;
  CHECK_ST(tether_executor_create(&o, &m.e), TETHER_OK);
  CHECK_EQ(exec_stats(m.e).os_thread_id, 0); /* nobody ran it yet */

  for (i = 0; i < 10; i++) CHECK_ST(tether_executor_submit(m.e, manual_task, &m, NULL, NULL), TETHER_OK);
  CHECK(pthread_create(&th, NULL, submit_from_elsewhere, &m) == 0); /* submits: any thread */
  join_thread(th);
  CHECK_EQ(counter_get(&m.runs), 0); /* nothing runs until someone runs it */
  CHECK_EQ(exec_stats(m.e).queued, 11);
  run_until(&m, 11);
  CHECK_EQ(counter_get(&m.bad_tid), 0);
  CHECK_EQ(exec_stats(m.e).os_thread_id, os_tid());

  /* This thread is its thread for good: run from elsewhere or from inside a task is
   * TETHER_E_WRONG_STATE. */
  fr.m = &m;
  fr.run_st = -1;
  CHECK(pthread_create(&th, NULL, run_from_elsewhere, &fr) == 0);
  join_thread(th);
  CHECK_ST(fr.run_st, TETHER_E_WRONG_STATE);
  CHECK_ST(tether_executor_submit(m.e, manual_nested_run, &m, NULL, NULL), TETHER_OK);
  CHECK_ST(tether_executor_submit(m.e, manual_task, &m, NULL, NULL), TETHER_OK);
  run_until(&m, 12);
  CHECK_ST(m.inner_run, TETHER_E_WRONG_STATE);

  /* Outside run, the owner thread is "inside": a wait on a queued task would wait on
   * itself. */
  CHECK_ST(tether_executor_submit(m.e, manual_task, &m, NULL, &f), TETHER_OK);
  CHECK_ST(tether_future_wait(f, T_LONG), TETHER_E_DEADLOCK);
  CHECK_ST(tether_future_wait(f, 0), TETHER_E_TIMEOUT);
  run_until(&m, 13);
  CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);
  CHECK_ST(tether_future_release(f), TETHER_OK);

  /* Release from the owner thread, outside run: what is queued runs right here. */
  for (i = 0; i < 3; i++) CHECK_ST(tether_executor_submit(m.e, manual_task, &m, NULL, NULL), TETHER_OK);
  CHECK_ST(tether_executor_release(m.e), TETHER_OK);
  CHECK_EQ(counter_get(&m.runs), 16);
  CHECK_EQ(counter_get(&m.bad_tid), 0);
  CHECK_ST(tether_executor_run(m.e, 0), TETHER_E_INVALID_HANDLE);

  /* run on an executor that is not manual. */
  CHECK_ST(tether_executor_create(NULL, &plain), TETHER_OK);
  CHECK_ST(tether_executor_run(plain, 0), TETHER_E_WRONG_STATE);
  CHECK_ST(tether_executor_release(plain), TETHER_OK);
  counter_destroy(&m.runs);
  counter_destroy(&m.bad_tid);
}

typedef struct manual_release {
  tether_executor e;
  blocker *b;
  note q[3];
  tether_status release_st;
  int32_t states[3];
  long drops_at_return[3];
} manual_release;

/* While the owner is blocked in a task inside run, another thread queues three tasks and
 * releases the executor: they are cancelled (futures CANCELLED, args dropped) before release
 * returns, and run then ends with TETHER_E_SHUTDOWN. */
static void *release_from_elsewhere(void *arg) {
  manual_release *r = (manual_release *)arg;
  tether_future f[3];
  int i;
  CHECK(event_wait(&r->b->started, T_LONG));
  for (i = 0; i < 3; i++) CHECK_ST(tether_executor_submit(r->e, note_fn, &r->q[i], count_drop, &f[i]), TETHER_OK);
  r->release_st = tether_executor_release(r->e);
  for (i = 0; i < 3; i++) {
    r->drops_at_return[i] = counter_get(&r->q[i].drops);
    r->states[i] = future_poll(f[i]);
    CHECK_ST(tether_future_release(f[i]), TETHER_OK);
  }
  event_set(&r->b->gate);
  return NULL;
}

TEST(executor_manual_release_other_thread) {
  tether_executor_options o = exec_opts("main-loop-2");
  manual_release r;
  blocker b;
  pthread_t th;
  int i;
  blocker_init(&b);
  for (i = 0; i < 3; i++) note_init(&r.q[i]);
  r.b = &b;
  r.release_st = -1;
  o.manual = 1;
  CHECK_ST(tether_executor_create(&o, &r.e), TETHER_OK);
  CHECK_ST(tether_executor_run(r.e, 0), TETHER_OK); /* this thread is the owner */
  CHECK_ST(tether_executor_submit(r.e, blocker_fn, &b, count_drop, NULL), TETHER_OK);
  CHECK(pthread_create(&th, NULL, release_from_elsewhere, &r) == 0);
  CHECK_ST(tether_executor_run(r.e, T_LONG), TETHER_E_SHUTDOWN);
  join_thread(th);
  CHECK_ST(r.release_st, TETHER_OK);
  for (i = 0; i < 3; i++) {
    CHECK_EQ(r.states[i], TETHER_CANCELLED);
    CHECK_EQ(r.drops_at_return[i], 1);
    CHECK_EQ(counter_get(&r.q[i].runs), 0);
    CHECK_EQ(counter_get(&r.q[i].drops), 1);
    note_destroy(&r.q[i]);
  }
  CHECK_EQ(counter_get(&b.drops), 1);
  CHECK_EQ(counter_get(&b.returned), 1);
  blocker_destroy(&b);
}

/* ---- bounded queue ---------------------------------------------------------------------- */

typedef struct inside_full {
  tether_executor e;
  tether_status st[4];
} inside_full;

/* From the executor's own thread: fill the queue (capacity 2), then submit more. */
static tether_status fill_from_inside(tether_task *t, void *arg) {
  inside_full *c = (inside_full *)arg;
  (void)t;
  c->st[0] = tether_executor_submit(c->e, ok_fn, NULL, NULL, NULL);
  c->st[1] = tether_executor_submit(c->e, ok_fn, NULL, NULL, NULL);
  c->st[2] = tether_executor_submit(c->e, ok_fn, NULL, NULL, NULL);
  c->st[3] = tether_executor_submit_timeout(c->e, ok_fn, NULL, NULL, NULL, T_LONG);
  return TETHER_OK;
}

typedef struct room_wait {
  tether_executor e;
  note *n;
  tether_future f;
  tether_status st;
} room_wait;

static void *submit_with_room_wait(void *arg) {
  room_wait *w = (room_wait *)arg;
  w->st = tether_executor_submit_timeout(w->e, note_fn, w->n, count_drop, &w->f, T_LONG);
  return NULL;
}

TEST(executor_bounded_queue) {
  tether_executor_options o = exec_opts("bounded-exec");
  tether_executor e = {0};
  tether_executor_stats st;
  blocker b;
  note q[2], x, waited;
  tether_future f[2], xf = {77};
  inside_full in;
  room_wait w;
  pthread_t th;
  int i;
  blocker_init(&b);
  note_init(&x);
  note_init(&waited);
  o.queue_capacity = 2;
  CHECK_ST(tether_executor_create(&o, &e), TETHER_OK);
  CHECK_ST(tether_executor_submit(e, blocker_fn, &b, count_drop, NULL), TETHER_OK);
  CHECK(event_wait(&b.started, T_LONG));
  for (i = 0; i < 2; i++) {
    note_init(&q[i]);
    CHECK_ST(tether_executor_submit(e, note_fn, &q[i], count_drop, &f[i]), TETHER_OK);
  }
  CHECK_DROPPED_ONCE(tether_executor_submit(e, note_fn, &x, count_drop, &xf), TETHER_E_QUEUE_FULL, &x.drops);
  CHECK_EQ(xf.id, 0);
  CHECK_DROPPED_ONCE(tether_executor_submit(e, note_fn, &x, count_drop, NULL), TETHER_E_QUEUE_FULL, &x.drops);
  CHECK_DROPPED_ONCE(tether_executor_submit_timeout(e, note_fn, &x, count_drop, &xf, T_SHORT), TETHER_E_TIMEOUT,
                     &x.drops);
  CHECK_EQ(xf.id, 0);
  st = exec_stats(e);
  CHECK_EQ(st.queued, 2);
  CHECK_EQ(st.rejected, 3);

  w.e = e;
  w.n = &waited;
  w.f.id = 0;
  w.st = -1;
  CHECK(pthread_create(&th, NULL, submit_with_room_wait, &w) == 0);
  event_set(&b.gate);
  join_thread(th);
  CHECK_ST(w.st, TETHER_OK);
  CHECK_EQ(future_outcome(w.f), TETHER_SUCCEEDED);
  for (i = 0; i < 2; i++) CHECK_EQ(future_outcome(f[i]), TETHER_SUCCEEDED);

  /* From the inside: the third submit finds the queue full; waiting for room there would
   * wait on itself. */
  in.e = e;
  for (i = 0; i < 4; i++) in.st[i] = -1;
  {
    tether_future fi = {0};
    CHECK_ST(tether_executor_submit(e, fill_from_inside, &in, NULL, &fi), TETHER_OK);
    CHECK_EQ(future_outcome(fi), TETHER_SUCCEEDED);
    CHECK_ST(tether_future_release(fi), TETHER_OK);
  }
  CHECK_ST(in.st[0], TETHER_OK);
  CHECK_ST(in.st[1], TETHER_OK);
  CHECK_ST(in.st[2], TETHER_E_QUEUE_FULL);
  CHECK_ST(in.st[3], TETHER_E_DEADLOCK);

  CHECK_ST(tether_executor_release(e), TETHER_OK);
  CHECK_ST(tether_future_release(w.f), TETHER_OK);
  for (i = 0; i < 2; i++) {
    CHECK_ST(tether_future_release(f[i]), TETHER_OK);
    CHECK_EQ(counter_get(&q[i].drops), 1);
    note_destroy(&q[i]);
  }
  CHECK_EQ(counter_get(&x.drops), 3);
  CHECK_EQ(counter_get(&x.runs), 0);
  CHECK_EQ(counter_get(&waited.drops), 1);
  CHECK_EQ(counter_get(&b.drops), 1);
  note_destroy(&x);
  note_destroy(&waited);
  blocker_destroy(&b);
}

/* ---- waiting on yourself ---------------------------------------------------------------- */

typedef struct exec_self {
  tether_executor e;
  tether_status wait, wait0, any, any0;
  size_t idx;
  note queued;
} exec_self;

static tether_status wait_on_own(tether_task *t, void *arg) {
  exec_self *c = (exec_self *)arg;
  tether_future f = {0};
  (void)t;
  CHECK_ST(tether_executor_submit(c->e, note_fn, &c->queued, NULL, &f), TETHER_OK);
  c->wait = tether_future_wait(f, T_LONG);
  c->wait0 = tether_future_wait(f, 0);
  c->any = tether_future_wait_any(&f, 1, T_LONG, &c->idx);
  c->any0 = tether_future_wait_any(&f, 1, 0, &c->idx);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  return TETHER_OK;
}

TEST(executor_self_wait_deadlock) {
  tether_executor e = {0};
  exec_self c;
  tether_future f = {0};
  note_init(&c.queued);
  c.wait = c.wait0 = c.any = c.any0 = -1;
  c.idx = 99;
  CHECK_ST(tether_executor_create(NULL, &e), TETHER_OK);
  c.e = e;
  CHECK_ST(tether_executor_submit(e, wait_on_own, &c, NULL, &f), TETHER_OK);
  CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);
  CHECK_ST(c.wait, TETHER_E_DEADLOCK);
  CHECK_ST(c.wait0, TETHER_E_TIMEOUT);
  CHECK_ST(c.any, TETHER_E_DEADLOCK);
  CHECK_ST(c.any0, TETHER_E_TIMEOUT);
  CHECK_EQ(c.idx, 99); /* untouched */
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
  CHECK_EQ(counter_get(&c.queued.runs), 1); /* the released future's task still ran */
  note_destroy(&c.queued);
}

/* ---- release ---------------------------------------------------------------------------- */

/* release runs what is queued, then joins the thread. */
TEST(executor_release_runs_queued) {
  tether_executor e = {0};
  blocker b;
  note n;
  long k = scaled(1000), i, before = thread_baseline();
  blocker_init(&b);
  note_init(&n);
  CHECK_ST(tether_executor_create(NULL, &e), TETHER_OK);
  CHECK_EQ(os_thread_count(), before + 1);
  CHECK_ST(tether_executor_submit(e, blocker_fn, &b, count_drop, NULL), TETHER_OK);
  for (i = 0; i < k; i++) CHECK_ST(tether_executor_submit(e, note_fn, &n, count_drop, NULL), TETHER_OK);
  event_set(&b.gate);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
  CHECK_EQ(counter_get(&n.runs), k);
  CHECK_EQ(counter_get(&n.drops), k);
  CHECK_EQ(counter_get(&b.drops), 1);
  CHECK_SOON(os_thread_count() == before); /* ended ... */
  CHECK_EQ(tether_debug_unjoined_threads(), 0); /* ... and joined */
  CHECK_ST(tether_executor_release(e), TETHER_E_INVALID_HANDLE);
  note_destroy(&n);
  blocker_destroy(&b);
}

typedef struct exec_release_inside {
  tether_executor e;
  event queued; /* the task behind is queued: release now */
  tether_status st;
} exec_release_inside;

static tether_status release_own(tether_task *t, void *arg) {
  exec_release_inside *c = (exec_release_inside *)arg;
  (void)t;
  if (!event_wait(&c->queued, T_LONG)) harness_fail(__FILE__, __LINE__, "release_own: never told");
  c->st = tether_executor_release(c->e);
  return TETHER_OK;
}

/* The owner's handle, released from a task on the executor itself: never deadlocks, and
 * the tasks queued behind still run. */
TEST(executor_release_inside) {
  exec_release_inside c;
  note n;
  tether_future f = {0};
  note_init(&n);
  event_init(&c.queued);
  c.st = -1;
  CHECK_ST(tether_executor_create(NULL, &c.e), TETHER_OK);
  CHECK_ST(tether_executor_submit(c.e, release_own, &c, NULL, &f), TETHER_OK);
  CHECK_ST(tether_executor_submit(c.e, note_fn, &n, count_drop, NULL), TETHER_OK);
  event_set(&c.queued);
  CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);
  CHECK_ST(c.st, TETHER_OK);
  CHECK(counter_wait(&n.drops, 1, T_LONG));
  CHECK_EQ(counter_get(&n.runs), 1);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_executor_release(c.e), TETHER_E_INVALID_HANDLE);
  CHECK_SOON(tether_debug_unjoined_threads() == 0); /* its thread ended and was joined */
  event_destroy(&c.queued);
  note_destroy(&n);
}
