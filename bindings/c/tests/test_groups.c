/*
 * test_groups.c — Ray's python/ray/tests/test_concurrency_group.py, ported to the C API
 * (issue 3, acceptance 1), plus what Ray's threaded actors get wrong (ray-project/ray#46336,
 * #51016, #54639): thread-local state set in a constructor is there in every method, and
 * a blocked group never stalls another group or the control plane.
 *
 *   groups on separate threads, named "name" and "name/group"
 *   a blocked default group while another group answers; a blocked group while a third does
 *   the "system" group: state, stats and stop(CANCEL) answer while every thread is blocked
 *   thread-local data: default group, named group, kept separately per group
 *   5 calls provably at once on a 5-thread group, each thread keeping its own value
 *   per-group ordering
 *   a group of 0 threads or a duplicate name -> TETHER_E_INVALID_ARGUMENT at create
 *   an unknown group -> TETHER_E_NOT_FOUND at call time
 *
 * "Answers" means: the answer comes while the blocked method still waits on a gate only the
 * test opens after it. Had it waited on the blocked thread, the gate would time out and the
 * blocker would fail the test ("gate never opened"): no clock decides the verdict.
 */
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#include "actor_fixtures.h"

/* ---- groups on separate threads --------------------------------------------------------- */

TEST(cg_groups_separate_threads) {
  const tether_group_spec groups[] = {{"io", 1}, {"compute", 1}};
  tether_actor_options o = actor_opts("cg-sep", groups, 2);
  rec r;
  note d, io, comp;
  tether_actor a;
  long main_tid = os_tid();
  rec_init(&r);
  note_init(&d);
  note_init(&io);
  note_init(&comp);
  a = create_rec_actor(&o, &r);

  CHECK_EQ(call_and_wait(a, NULL, m_note, &d), TETHER_SUCCEEDED);
  CHECK_EQ(call_and_wait(a, "io", m_note, &io), TETHER_SUCCEEDED);
  CHECK_EQ(call_and_wait(a, "compute", m_note, &comp), TETHER_SUCCEEDED);

  /* default, io, compute and this thread: four OS threads. */
  CHECK(counter_get(&d.tid) != main_tid);
  CHECK(counter_get(&io.tid) != main_tid);
  CHECK(counter_get(&comp.tid) != main_tid);
  CHECK(counter_get(&d.tid) != counter_get(&io.tid));
  CHECK(counter_get(&d.tid) != counter_get(&comp.tid));
  CHECK(counter_get(&io.tid) != counter_get(&comp.tid));
  /* The default group is the constructor's thread, and the one the stats name. */
  CHECK_EQ(counter_get(&d.tid), counter_get(&r.ctor_tid));
  CHECK_EQ(actor_stats(a).os_thread_id, counter_get(&r.ctor_tid));
  /* "names its threads ("name", "name/io")" */
  CHECK_STR(d.thread, "cg-sep");
  CHECK_STR(io.thread, "cg-sep/io");
  CHECK_STR(comp.thread, "cg-sep/compute");

  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&r.dtor_runs), 1);
  CHECK_EQ(counter_get(&r.dtor_tid), counter_get(&r.ctor_tid));
  CHECK_EQ(counter_get(&r.drops), 1);
  note_destroy(&d);
  note_destroy(&io);
  note_destroy(&comp);
  rec_destroy(&r);
}

/* ---- blocked groups --------------------------------------------------------------------- */

/* A default-group method blocked until the end of the test; the io group keeps answering,
 * and a default call queued behind the blocked one waits its turn (ordering is per group). */
TEST(cg_blocked_default_other_group_answers) {
  const tether_group_spec groups[] = {{"io", 1}};
  tether_actor_options o = actor_opts("cg-blockdef", groups, 1);
  rec r;
  blocker b;
  note behind, io;
  tether_actor a;
  tether_future fb = {0}, fbehind = {0};
  long i, n = 20;
  rec_init(&r);
  blocker_init(&b);
  note_init(&behind);
  note_init(&io);
  a = create_rec_actor(&o, &r);

  CHECK_ST(tether_actor_call(a, NULL, m_block, &b, count_drop, &fb), TETHER_OK);
  CHECK(event_wait(&b.started, T_LONG));
  CHECK_ST(tether_actor_call(a, NULL, m_note, &behind, count_drop, &fbehind), TETHER_OK);

  for (i = 0; i < n; i++) CHECK_EQ(call_and_wait(a, "io", m_note, &io), TETHER_SUCCEEDED);
  CHECK_EQ(counter_get(&io.runs), n);
  CHECK(counter_get(&io.tid) != counter_get(&r.ctor_tid));

  CHECK_EQ(future_poll(fb), TETHER_RUNNING);
  CHECK_EQ(future_poll(fbehind), TETHER_PENDING);
  CHECK_EQ(counter_get(&behind.runs), 0);
  CHECK_EQ(actor_state(a), TETHER_ACTOR_ALIVE);

  event_set(&b.gate); /* the end */
  CHECK_EQ(future_outcome(fb), TETHER_SUCCEEDED);
  CHECK_EQ(future_outcome(fbehind), TETHER_SUCCEEDED);
  CHECK_EQ(counter_get(&behind.tid), counter_get(&r.ctor_tid));
  CHECK_ST(tether_future_release(fb), TETHER_OK);
  CHECK_ST(tether_future_release(fbehind), TETHER_OK);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&b.drops), 1);
  CHECK_EQ(counter_get(&behind.drops), 1);
  CHECK_EQ(counter_get(&r.dtor_runs), 1);
  note_destroy(&behind);
  note_destroy(&io);
  blocker_destroy(&b);
  rec_destroy(&r);
}

/* A blocked named group; a third group (and the default one) keep answering. */
TEST(cg_blocked_group_third_answers) {
  const tether_group_spec groups[] = {{"io", 1}, {"compute", 1}};
  tether_actor_options o = actor_opts("cg-block3", groups, 2);
  rec r;
  blocker b;
  note behind, comp, d;
  tether_actor a;
  tether_future fb = {0}, fbehind = {0};
  long i;
  rec_init(&r);
  blocker_init(&b);
  note_init(&behind);
  note_init(&comp);
  note_init(&d);
  a = create_rec_actor(&o, &r);

  CHECK_ST(tether_actor_call(a, "io", m_block, &b, count_drop, &fb), TETHER_OK);
  CHECK(event_wait(&b.started, T_LONG));
  CHECK_ST(tether_actor_call(a, "io", m_note, &behind, count_drop, &fbehind), TETHER_OK);

  for (i = 0; i < 10; i++) {
    CHECK_EQ(call_and_wait(a, "compute", m_note, &comp), TETHER_SUCCEEDED);
    CHECK_EQ(call_and_wait(a, NULL, m_note, &d), TETHER_SUCCEEDED);
  }
  CHECK_EQ(counter_get(&comp.runs), 10);
  CHECK_EQ(counter_get(&d.runs), 10);
  CHECK_EQ(future_poll(fb), TETHER_RUNNING);
  CHECK_EQ(future_poll(fbehind), TETHER_PENDING);
  CHECK_EQ(counter_get(&behind.runs), 0);

  event_set(&b.gate);
  CHECK_EQ(future_outcome(fb), TETHER_SUCCEEDED);
  CHECK_EQ(future_outcome(fbehind), TETHER_SUCCEEDED);
  CHECK_STR(behind.thread, "cg-block3/io");
  CHECK_ST(tether_future_release(fb), TETHER_OK);
  CHECK_ST(tether_future_release(fbehind), TETHER_OK);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&b.drops), 1);
  CHECK_EQ(counter_get(&behind.drops), 1);
  note_destroy(&behind);
  note_destroy(&comp);
  note_destroy(&d);
  blocker_destroy(&b);
  rec_destroy(&r);
}

/* Ray's "system" concurrency group: the control calls answer while EVERY execution thread
 * of the actor (default, io x2, compute) is blocked in user code. */
TEST(cg_control_plane_all_blocked) {
  const tether_group_spec groups[] = {{"io", 2}, {"compute", 1}};
  const char *where[4] = {NULL, "io", "io", "compute"};
  const char *behind_where[3] = {NULL, "io", "compute"};
  tether_actor_options o = actor_opts("cg-system", groups, 2);
  rec r;
  blocker b[4];
  note behind[3], late;
  tether_future fb[4], fq[3];
  tether_actor a;
  tether_actor_stats st;
  tether_error cause = {77};
  int32_t s = -1;
  int i;
  rec_init(&r);
  note_init(&late);
  a = create_rec_actor(&o, &r);

  for (i = 0; i < 4; i++) {
    blocker_init(&b[i]);
    CHECK_ST(tether_actor_call(a, where[i], m_block, &b[i], count_drop, &fb[i]), TETHER_OK);
  }
  for (i = 0; i < 4; i++) CHECK(event_wait(&b[i].started, T_LONG)); /* all four blocked */
  /* Calls to every group still queue at once. */
  for (i = 0; i < 3; i++) {
    note_init(&behind[i]);
    CHECK_ST(tether_actor_call(a, behind_where[i], m_note, &behind[i], count_drop, &fq[i]), TETHER_OK);
  }

  CHECK_ST(tether_actor_state(a, &s, &cause), TETHER_OK);
  CHECK_EQ(s, TETHER_ACTOR_ALIVE);
  CHECK_EQ(cause.id, 0);
  st = actor_stats(a);
  CHECK_EQ(st.os_thread_id, counter_get(&r.ctor_tid));
  CHECK_EQ(st.queued, 3);

  /* stop(CANCEL) with a small timeout: the queued calls are cancelled before it returns,
   * the running ones are asked to stop, and it times out (the destructor cannot run). */
  CHECK_ST(tether_actor_stop(a, TETHER_STOP_CANCEL, T_SHORT), TETHER_E_TIMEOUT);
  for (i = 0; i < 3; i++) {
    CHECK_EQ(future_poll(fq[i]), TETHER_CANCELLED);
    CHECK_FUTURE_ERROR(fq[i], TETHER_E_CANCELLED, 0, NULL, NULL);
    CHECK_EQ(counter_get(&behind[i].drops), 1);
    CHECK_EQ(counter_get(&behind[i].runs), 0);
  }
  CHECK_EQ(actor_state(a), TETHER_ACTOR_STOPPED);
  CHECK_DROPPED_ONCE(tether_actor_call(a, "io", m_note, &late, count_drop, NULL), TETHER_E_SHUTDOWN,
                     &late.drops);
  st = actor_stats(a);
  CHECK_EQ(st.queued, 0);
  CHECK_EQ(st.cancelled, 3);
  for (i = 0; i < 4; i++) CHECK_EQ(future_poll(fb[i]), TETHER_RUNNING);
  CHECK_EQ(counter_get(&r.dtor_runs), 0);

  for (i = 0; i < 4; i++) event_set(&b[i].gate);
  CHECK_ST(tether_actor_stop(a, TETHER_STOP_CANCEL, T_LONG), TETHER_OK);
  CHECK_EQ(counter_get(&r.dtor_runs), 1);
  CHECK_EQ(counter_get(&r.dtor_tid), counter_get(&r.ctor_tid));
  for (i = 0; i < 4; i++) {
    CHECK_EQ(counter_get(&b[i].saw_stop), 1); /* each running method saw the stop request */
    /* Stop requested by a cancel, then returned OK: CANCELLED (section 4). */
    CHECK_EQ(future_outcome(fb[i]), TETHER_CANCELLED);
    CHECK_ST(tether_future_release(fb[i]), TETHER_OK);
  }
  for (i = 0; i < 3; i++) CHECK_ST(tether_future_release(fq[i]), TETHER_OK);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  for (i = 0; i < 4; i++) {
    CHECK_EQ(counter_get(&b[i].drops), 1);
    blocker_destroy(&b[i]);
  }
  for (i = 0; i < 3; i++) {
    CHECK_EQ(counter_get(&behind[i].drops), 1);
    note_destroy(&behind[i]);
  }
  CHECK_EQ(counter_get(&late.runs), 0);
  note_destroy(&late);
  CHECK_EQ(counter_get(&r.drops), 1);
  rec_destroy(&r);
}

/* ---- thread-local data ------------------------------------------------------------------ */

/* m_tl_bump: reports the tl_value it found in its note, then adds 1. */
static tether_status m_tl_bump(tether_task *t, void *state, void *arg) {
  note_record(t, (note *)arg);
  (void)state;
  tl_value += 1;
  return TETHER_OK;
}

/* m_tl_set: sets tl_value to *(long *)arg. */
static tether_status m_tl_set(tether_task *t, void *state, void *arg) {
  (void)t;
  (void)state;
  tl_value = *(const long *)arg;
  return TETHER_OK;
}

/* The constructor's thread-local value is there in every default-group method (what Ray's
 * threaded actors lose, ray-project/ray#46336). */
TEST(cg_thread_local_default) {
  tether_actor_options o = actor_opts("cg-tl-default", NULL, 0);
  rec r;
  note n;
  tether_actor a;
  long i;
  rec_init(&r);
  note_init(&n);
  r.tl_set = 42;
  a = create_rec_actor(&o, &r);
  for (i = 0; i < 10; i++) {
    CHECK_EQ(call_and_wait(a, NULL, m_tl_bump, &n), TETHER_SUCCEEDED);
    CHECK_EQ(counter_get(&n.tl), 42 + i);
    CHECK_EQ(counter_get(&n.tid), counter_get(&r.ctor_tid));
  }
  CHECK_EQ(counter_get(&r.ctor_tl), 0); /* a thread of its own: nothing set before */
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&r.dtor_tid), counter_get(&r.ctor_tid));
  note_destroy(&n);
  rec_destroy(&r);
}

/* A named group's thread keeps its thread-local value across calls, apart from the default
 * thread's. */
TEST(cg_thread_local_named_group) {
  const tether_group_spec groups[] = {{"io", 1}};
  tether_actor_options o = actor_opts("cg-tl-io", groups, 1);
  rec r;
  note n, d;
  tether_actor a;
  long seven = 7, i;
  rec_init(&r);
  note_init(&n);
  note_init(&d);
  r.tl_set = 42;
  a = create_rec_actor(&o, &r);

  CHECK_EQ(call_and_wait(a, "io", m_tl_bump, &n), TETHER_SUCCEEDED);
  CHECK_EQ(counter_get(&n.tl), 0); /* the io thread did not run the constructor */
  CHECK_EQ(call_and_wait(a, "io", m_tl_set, &seven), TETHER_SUCCEEDED);
  for (i = 0; i < 10; i++) {
    CHECK_EQ(call_and_wait(a, "io", m_tl_bump, &n), TETHER_SUCCEEDED);
    CHECK_EQ(counter_get(&n.tl), 7 + i);
    CHECK_EQ(call_and_wait(a, NULL, m_note, &d), TETHER_SUCCEEDED);
    CHECK_EQ(counter_get(&d.tl), 42); /* the default thread's is untouched */
  }
  CHECK(counter_get(&n.tid) != counter_get(&d.tid));
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  note_destroy(&n);
  note_destroy(&d);
  rec_destroy(&r);
}

/* Two groups and the default thread: three values, each kept by its own thread. */
TEST(cg_thread_local_per_group) {
  const tether_group_spec groups[] = {{"a", 1}, {"b", 1}};
  tether_actor_options o = actor_opts("cg-tl-per", groups, 2);
  rec r;
  note na, nb, nd;
  tether_actor a;
  long va = 100, vb = 200, i;
  rec_init(&r);
  note_init(&na);
  note_init(&nb);
  note_init(&nd);
  r.tl_set = 42;
  a = create_rec_actor(&o, &r);

  CHECK_EQ(call_and_wait(a, "a", m_tl_set, &va), TETHER_SUCCEEDED);
  CHECK_EQ(call_and_wait(a, "b", m_tl_set, &vb), TETHER_SUCCEEDED);
  for (i = 0; i < 10; i++) {
    CHECK_EQ(call_and_wait(a, "b", m_tl_bump, &nb), TETHER_SUCCEEDED);
    CHECK_EQ(call_and_wait(a, "a", m_tl_bump, &na), TETHER_SUCCEEDED);
    CHECK_EQ(call_and_wait(a, NULL, m_tl_bump, &nd), TETHER_SUCCEEDED);
    CHECK_EQ(counter_get(&na.tl), 100 + i);
    CHECK_EQ(counter_get(&nb.tl), 200 + i);
    CHECK_EQ(counter_get(&nd.tl), 42 + i);
  }
  CHECK(counter_get(&na.tid) != counter_get(&nb.tid));
  CHECK(counter_get(&na.tid) != counter_get(&nd.tid));
  CHECK(counter_get(&nb.tid) != counter_get(&nd.tid));
  CHECK_STR(na.thread, "cg-tl-per/a");
  CHECK_STR(nb.thread, "cg-tl-per/b");
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  note_destroy(&na);
  note_destroy(&nb);
  note_destroy(&nd);
  rec_destroy(&r);
}

/* ---- a 5-thread group ------------------------------------------------------------------- */

enum { POOL = 5 };

typedef struct pool_call {
  counter drops;   /* FIRST member */
  counter *arrived; /* the barrier: every call adds 1, then waits for `need` */
  long need;
  long set;        /* nonzero: set tl_value to this after the barrier */
  long tid;        /* written by the method, read after its future completed */
  long tl_found;
  int passed;      /* the barrier was met */
} pool_call;

/* m_pool: a counting barrier with a bounded wait: it passes only when `need` calls are
 * inside at once. */
static tether_status m_pool(tether_task *t, void *state, void *arg) {
  pool_call *c = (pool_call *)arg;
  (void)state;
  c->tid = os_tid();
  c->tl_found = tl_value;
  counter_add(c->arrived, 1);
  c->passed = counter_wait(c->arrived, c->need, T_LONG);
  if (!c->passed) return tether_task_fail(t, 1, "barrier: not every call ran at once");
  if (c->set) tl_value = c->set;
  return TETHER_OK;
}

/* Round 1: five calls pass a barrier that needs all five inside at once, so five threads
 * run them concurrently; each sets its thread's value. Round 2: five more, again all at
 * once (so again one per thread), each finding the value its thread set. */
TEST(cg_five_threads_concurrent) {
  const tether_group_spec groups[] = {{"pool", POOL}};
  tether_actor_options o = actor_opts("cg-pool", groups, 1);
  rec r;
  counter arrived;
  pool_call c[2][POOL];
  tether_future f[2][POOL];
  tether_actor a;
  int round, i, j;
  rec_init(&r);
  counter_init(&arrived);
  r.tl_set = 42;
  a = create_rec_actor(&o, &r);

  for (round = 0; round < 2; round++) {
    for (i = 0; i < POOL; i++) {
      pool_call *p = &c[round][i];
      counter_init(&p->drops);
      p->arrived = &arrived;
      p->need = (long)POOL * (round + 1);
      p->set = round == 0 ? 1000 + i : 0;
      p->tid = 0;
      p->tl_found = -1;
      p->passed = 0;
      CHECK_ST(tether_actor_call(a, "pool", m_pool, p, count_drop, &f[round][i]), TETHER_OK);
    }
    for (i = 0; i < POOL; i++) {
      CHECK_EQ(future_outcome(f[round][i]), TETHER_SUCCEEDED);
      CHECK(c[round][i].passed);
    }
  }
  /* Each round ran on five distinct threads, none of them the default one. */
  for (round = 0; round < 2; round++) {
    for (i = 0; i < POOL; i++) {
      CHECK(c[round][i].tid != counter_get(&r.ctor_tid));
      for (j = 0; j < i; j++) CHECK(c[round][i].tid != c[round][j].tid);
    }
  }
  /* Round 1 found fresh threads; round 2 found, on each thread, that thread's value. */
  for (i = 0; i < POOL; i++) {
    int found = 0;
    CHECK_EQ(c[0][i].tl_found, 0);
    for (j = 0; j < POOL; j++) {
      if (c[1][j].tid == c[0][i].tid) {
        CHECK_EQ(c[1][j].tl_found, c[0][i].set);
        found = 1;
      }
    }
    CHECK(found); /* the same five threads served both rounds */
  }
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  for (round = 0; round < 2; round++) {
    for (i = 0; i < POOL; i++) {
      CHECK_ST(tether_future_release(f[round][i]), TETHER_OK);
      CHECK_EQ(counter_get(&c[round][i].drops), 1);
      counter_destroy(&c[round][i].drops);
    }
  }
  counter_destroy(&arrived);
  rec_destroy(&r);
}

/* ---- ordering per group ------------------------------------------------------------------ */

/* Calls to one single-thread group run in submission order, interleaved with calls to the
 * default group and another group, each also in order. */
TEST(cg_per_group_order) {
  const tether_group_spec groups[] = {{"io", 1}, {"compute", 1}};
  const char *where[3] = {NULL, "io", "compute"};
  tether_actor_options o = actor_opts("cg-order", groups, 2);
  rec r;
  order s[3];
  order_item *items;
  tether_actor a;
  long n = scaled(5000), i;
  int g;
  rec_init(&r);
  a = create_rec_actor(&o, &r);
  items = (order_item *)malloc(sizeof *items * (size_t)n * 3);
  CHECK(items != NULL);
  for (g = 0; g < 3; g++) {
    counter_init(&s[g].drops);
    counter_init(&s[g].next);
    counter_init(&s[g].bad);
  }
  for (i = 0; i < n; i++) {
    for (g = 0; g < 3; g++) {
      order_item *it = &items[i * 3 + g];
      it->o = &s[g];
      it->i = i;
      CHECK_ST(tether_actor_call(a, where[g], m_order, it, order_item_drop, NULL), TETHER_OK);
    }
  }
  CHECK_ST(tether_actor_release(a), TETHER_OK); /* DRAIN: every call ran */
  for (g = 0; g < 3; g++) {
    CHECK_EQ(counter_get(&s[g].next), n);
    CHECK_EQ(counter_get(&s[g].bad), 0);
    CHECK_EQ(counter_get(&s[g].drops), n);
    counter_destroy(&s[g].drops);
    counter_destroy(&s[g].next);
    counter_destroy(&s[g].bad);
  }
  free(items);
  rec_destroy(&r);
}

/* ---- bad groups -------------------------------------------------------------------------- */

/* try_create_groups: a create with these groups must fail with `want` before the constructor
 * ever runs, dropping its arg once before it returns and leaving *out null. */
static void try_create_groups(const tether_group_spec *groups, size_t n, tether_status want) {
  tether_actor_options o = actor_opts("cg-bad", groups, n);
  rec r;
  tether_actor a = {77};
  rec_init(&r);
  CHECK_ST(tether_actor_create(&o, rec_ctor, rec_dtor, &r, count_drop, &a), want);
  CHECK_EQ(a.id, 0);
  CHECK_EQ(counter_get(&r.drops), 1);
  CHECK_EQ(counter_get(&r.ctor_runs), 0);
  rec_destroy(&r);
}

TEST(cg_bad_groups) {
  const tether_group_spec zero[] = {{"io", 0}};
  const tether_group_spec zero_second[] = {{"io", 2}, {"compute", 0}};
  const tether_group_spec dup[] = {{"io", 1}, {"io", 2}};
  const tether_group_spec dup_far[] = {{"io", 1}, {"compute", 1}, {"net", 1}, {"compute", 3}};
  const tether_group_spec empty[] = {{"", 1}};
  const tether_group_spec null_name[] = {{NULL, 1}};
  const tether_group_spec fine[] = {{"io", 1}, {"IO", 1}}; /* names are case-sensitive */
  long base = thread_baseline();
  tether_actor_options o = actor_opts("cg-bad", NULL, 1); /* groups NULL, count 1 */
  rec r;
  tether_actor a = {77};

  try_create_groups(zero, 1, TETHER_E_INVALID_ARGUMENT);
  try_create_groups(zero_second, 2, TETHER_E_INVALID_ARGUMENT);
  try_create_groups(dup, 2, TETHER_E_INVALID_ARGUMENT);
  try_create_groups(dup_far, 4, TETHER_E_INVALID_ARGUMENT);
  try_create_groups(empty, 1, TETHER_E_INVALID_ARGUMENT);
  try_create_groups(null_name, 1, TETHER_E_INVALID_ARGUMENT);
  rec_init(&r);
  CHECK_ST(tether_actor_create(&o, rec_ctor, rec_dtor, &r, count_drop, &a), TETHER_E_INVALID_ARGUMENT);
  CHECK_EQ(a.id, 0);
  CHECK_EQ(counter_get(&r.drops), 1);
  CHECK_EQ(counter_get(&r.ctor_runs), 0);
  rec_destroy(&r);
  CHECK_SOON(os_thread_count() == base); /* nothing was left behind */

  /* groups with group_count 0 is fine whatever the pointer. */
  rec_init(&r);
  o = actor_opts("cg-fine", zero, 0);
  a = create_rec_actor(&o, &r);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  o = actor_opts("cg-fine", fine, 2);
  a = create_rec_actor(&o, &r);
  CHECK_EQ(call_and_wait(a, "IO", m_ok, NULL), TETHER_SUCCEEDED);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&r.drops), 2);
  rec_destroy(&r);
}

/* An unknown group is TETHER_E_NOT_FOUND at call time: the arg is dropped before the call
 * returns, no future is made, and the actor is unharmed. */
TEST(cg_unknown_group) {
  const tether_group_spec groups[] = {{"io", 1}};
  tether_actor_options o = actor_opts("cg-unknown", groups, 1);
  rec r;
  note n;
  tether_actor a;
  tether_future f = {77};
  rec_init(&r);
  note_init(&n);
  a = create_rec_actor(&o, &r);

  CHECK_DROPPED_ONCE(tether_actor_call(a, "nope", m_note, &n, count_drop, &f), TETHER_E_NOT_FOUND, &n.drops);
  CHECK_EQ(f.id, 0);
  f.id = 77;
  CHECK_DROPPED_ONCE(tether_actor_call(a, "IO", m_note, &n, count_drop, &f), TETHER_E_NOT_FOUND, &n.drops);
  CHECK_EQ(f.id, 0);
  CHECK_DROPPED_ONCE(tether_actor_call(a, "io/", m_note, &n, count_drop, NULL), TETHER_E_NOT_FOUND, &n.drops);
  f.id = 77;
  CHECK_DROPPED_ONCE(tether_actor_call_timeout(a, "nope", m_note, &n, count_drop, &f, T_SHORT),
                     TETHER_E_NOT_FOUND, &n.drops);
  CHECK_EQ(f.id, 0);
  CHECK_EQ(counter_get(&n.runs), 0);

  CHECK_EQ(actor_state(a), TETHER_ACTOR_ALIVE);
  CHECK_EQ(call_and_wait(a, "io", m_note, &n), TETHER_SUCCEEDED);
  CHECK_EQ(counter_get(&n.runs), 1);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&n.drops), 4);
  note_destroy(&n);
  rec_destroy(&r);
}

/* ---- the OS refuses a group's threads ----------------------------------------------------- */

/* tether_debug_fail_thread_create(k): the creation after k more successes fails. With a
 * dedicated actor and a 3-thread group, k = 0 fails the default thread and k = 1..3 a group
 * thread (the first, second, third). Every time: TETHER_E_THREAD_CREATE, the constructor
 * never ran, its arg dropped once before create returned, and nothing left behind. */
TEST(cg_thread_create_fails) {
  const tether_group_spec groups[] = {{"io", 3}};
  tether_actor_options o = actor_opts("cg-refused", groups, 1);
  tether_executor e = {0};
  tether_executor_options eo = exec_opts("cg-refused-ex");
  rec r;
  tether_actor a = {77};
  long base = thread_baseline();
  uint32_t k;

  for (k = 0; k < 4; k++) {
    rec_init(&r);
    a.id = 77;
    tether_debug_fail_thread_create(k);
    CHECK_ST(tether_actor_create(&o, rec_ctor, rec_dtor, &r, count_drop, &a), TETHER_E_THREAD_CREATE);
    tether_debug_fail_thread_create(UINT32_MAX);
    CHECK_EQ(a.id, 0);
    CHECK_EQ(counter_get(&r.drops), 1);
    CHECK_EQ(counter_get(&r.ctor_runs), 0);
    CHECK_EQ(counter_get(&r.dtor_runs), 0);
    CHECK_SOON(os_thread_count() == base);
    CHECK_EQ(tether_debug_unjoined_threads(), 0); /* the threads made so far: joined */
    rec_destroy(&r);
  }

  /* On a shared executor: the second group thread is refused. The executor is unharmed. */
  CHECK_ST(tether_executor_create(&eo, &e), TETHER_OK);
  o.executor = e;
  rec_init(&r);
  tether_debug_fail_thread_create(1);
  CHECK_ST(tether_actor_create(&o, rec_ctor, rec_dtor, &r, count_drop, &a), TETHER_E_THREAD_CREATE);
  tether_debug_fail_thread_create(UINT32_MAX);
  CHECK_EQ(a.id, 0);
  CHECK_EQ(counter_get(&r.drops), 1);
  CHECK_EQ(counter_get(&r.ctor_runs), 0);
  CHECK_SOON(os_thread_count() == base + 1); /* the executor's thread only (a refused one leaves /proc a moment after its join) */
  CHECK_EQ(tether_debug_unjoined_threads(), 1);
  {
    note n;
    tether_future f = {0};
    note_init(&n);
    CHECK_ST(tether_executor_submit(e, note_fn, &n, count_drop, &f), TETHER_OK);
    CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);
    CHECK_ST(tether_future_release(f), TETHER_OK);
    CHECK_EQ(counter_get(&n.drops), 1);
    note_destroy(&n);
  }
  rec_destroy(&r);

  /* Disarmed: the same create works, on that executor. */
  rec_init(&r);
  a = create_rec_actor(&o, &r);
  CHECK_EQ(call_and_wait(a, "io", m_ok, NULL), TETHER_SUCCEEDED);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&r.dtor_runs), 1);
  CHECK_EQ(counter_get(&r.drops), 1);
  rec_destroy(&r);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
  CHECK_SOON(os_thread_count() == base); /* that release joined the thread */
  CHECK_EQ(tether_debug_unjoined_threads(), 0);
}
