/*
 * actor_fixtures.h — helpers shared by the executor, future, actor and group tests.
 *
 * rec: an actor's state, built by rec_ctor on the default thread and ended by rec_dtor. It
 * records where and how often each ran (OS thread ids from gettid(), kept in counters so
 * every read is synchronised), and the constructor sets the thread-local tl_value to
 * rec.tl_set, so methods can prove they run on the constructor's thread.
 *
 * note: a call's arg. The method (or executor task) records that it ran, its OS thread,
 * the thread-local value it saw, and its thread name; its FIRST member counts its drops.
 *
 * Every id kept here is a gettid() (a Linux thread id); no test compares pthread_t values.
 */
#ifndef TETHER_C_ACTOR_FIXTURES_H
#define TETHER_C_ACTOR_FIXTURES_H

#if !defined(_GNU_SOURCE)
#  error "define _GNU_SOURCE before including actor_fixtures.h (syscall, pthread_getname_np)"
#endif

#include "fixtures.h"

#include "os_calls.h"

/* tl_value: one per OS thread (a GNU C extension that -std=c99 -pedantic accepts). Each file
 * that includes this header has its own; every actor thread starts with 0. */
static __thread long tl_value;

/* thread_baseline: os_thread_count() once the process has created (and joined) a thread of
 * the library's: a sanitizer's runtime may start a thread of its own at the first
 * pthread_create, which must not count against the test. */
#ifndef _WIN32
/* baseline_thread_listed: the baseline executor's thread ("tether-baseline") is still in
 * /proc/self/task: the kernel wakes a joiner before it reaps the thread it joined. */
static inline int baseline_thread_listed(void) {
  struct dirent *d;
  int listed = 0;
  DIR *dir = opendir("/proc/self/task");
  CHECK(dir != NULL);
  while ((d = readdir(dir)) != NULL && !listed) {
    char path[300], comm[32] = "";
    FILE *f;
    if (d->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", d->d_name);
    f = fopen(path, "r");
    if (f == NULL) continue; /* it has just exited */
    if (fgets(comm, sizeof comm, f) != NULL && strcmp(comm, "tether-baseline\n") == 0) listed = 1;
    fclose(f);
  }
  closedir(dir);
  return listed;
}
#endif

static inline long thread_baseline(void) {
  tether_executor e = {0};
  tether_executor_options o;
  tether_executor_options_init(&o);
  o.name = "tether-baseline";
  CHECK_ST(tether_executor_create(&o, &e), TETHER_OK);
  CHECK_ST(tether_executor_release(e), TETHER_OK); /* joins its thread */
#ifndef _WIN32
  /* Counted once it is gone from /proc too: a count taken while it is still listed would
   * be one too high for good. */
  CHECK_SOON(!baseline_thread_listed());
#endif
  return os_thread_count();
}

/* CHECK_DROPPED_ONCE: `expr` (which hands `ctr` as its arg with count_drop) returns `want`,
 * and the arg was dropped exactly once by the time it returned. */
#define CHECK_DROPPED_ONCE(expr, want, ctr)                                                  \
  do {                                                                                       \
    long before_ = counter_get(ctr);                                                         \
    CHECK_ST((expr), (want));                                                                \
    CHECK_EQ(counter_get(ctr) - before_, 1);                                                 \
  } while (0)

/* ---- options and stats ------------------------------------------------------------------ */

static inline tether_executor_options exec_opts(const char *name) {
  tether_executor_options o;
  tether_executor_options_init(&o);
  o.name = name;
  return o;
}

static inline tether_actor_options actor_opts(const char *name, const tether_group_spec *groups,
                                              size_t group_count) {
  tether_actor_options o;
  tether_actor_options_init(&o);
  o.name = name;
  o.groups = groups;
  o.group_count = group_count;
  return o;
}

static inline tether_executor_stats exec_stats(tether_executor e) {
  tether_executor_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = (uint32_t)sizeof s;
  CHECK_ST(tether_executor_get_stats(e, &s), TETHER_OK);
  return s;
}

static inline tether_actor_stats actor_stats(tether_actor a) {
  tether_actor_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = (uint32_t)sizeof s;
  CHECK_ST(tether_actor_get_stats(a, &s), TETHER_OK);
  return s;
}

/* actor_state: the actor's TETHER_ACTOR_* state (the cause, if any, is released). */
static inline int32_t actor_state(tether_actor a) {
  int32_t s = -1;
  tether_error cause = {0};
  CHECK_ST(tether_actor_state(a, &s, &cause), TETHER_OK);
  if (cause.id != 0) CHECK_ST(tether_error_release(cause), TETHER_OK);
  return s;
}

/* ---- futures ---------------------------------------------------------------------------- */

/* future_poll: the future's state now. */
static inline int32_t future_poll(tether_future f) {
  int32_t s = -1;
  CHECK_ST(tether_future_poll(f, &s), TETHER_OK);
  return s;
}

/* future_outcome: waits (bounded) until the future is terminal, then its state. */
static inline int32_t future_outcome(tether_future f) {
  CHECK_ST(tether_future_wait(f, T_LONG), TETHER_OK);
  return future_poll(f);
}

/* CHECK_FUTURE_ERROR: the future's first error has these fields (NULL msg/thread: not
 * checked); the handle taken is released. */
#define CHECK_FUTURE_ERROR(f, code, user_code, msg, thread)                                  \
  do {                                                                                       \
    tether_error fe_ = {0};                                                                  \
    CHECK_ST(tether_future_error((f), &fe_), TETHER_OK);                                     \
    check_error_(__FILE__, __LINE__, fe_, (code), (user_code), (msg), (thread));             \
    CHECK_ST(tether_error_release(fe_), TETHER_OK);                                          \
  } while (0)

/* CHECK_NO_ERROR: the future has no error (the null handle). */
#define CHECK_NO_ERROR(f)                                                                    \
  do {                                                                                       \
    tether_error fe_ = {77};                                                                 \
    CHECK_ST(tether_future_error((f), &fe_), TETHER_OK);                                     \
    CHECK_EQ(fe_.id, 0);                                                                     \
  } while (0)

/* ---- rec: an actor's state -------------------------------------------------------------- */

typedef struct rec {
  counter drops;         /* FIRST member: the constructor arg's drops */
  counter ctor_runs;
  counter ctor_tid;      /* gettid() of the constructor */
  counter ctor_tl;       /* tl_value the constructor found (0 on a fresh thread) */
  counter dtor_runs;
  counter dtor_tid;
  counter method_runs;   /* methods that called rec_method_ran */
  counter runs_at_dtor;  /* method_runs when the destructor ran */
  long tl_set;           /* the constructor sets tl_value to this */
  int ctor_wait;         /* nonzero: the constructor waits (bounded) for ctor_gate */
  event ctor_gate;
  const char *ctor_fail; /* non-NULL: the constructor fails with user_code 5 and this message */
} rec;

static inline void rec_init(rec *r) {
  counter_init(&r->drops);
  counter_init(&r->ctor_runs);
  counter_init(&r->ctor_tid);
  counter_init(&r->ctor_tl);
  counter_init(&r->dtor_runs);
  counter_init(&r->dtor_tid);
  counter_init(&r->method_runs);
  counter_init(&r->runs_at_dtor);
  event_init(&r->ctor_gate);
  r->tl_set = 0;
  r->ctor_wait = 0;
  r->ctor_fail = NULL;
}

static inline void rec_destroy(rec *r) {
  counter_destroy(&r->drops);
  counter_destroy(&r->ctor_runs);
  counter_destroy(&r->ctor_tid);
  counter_destroy(&r->ctor_tl);
  counter_destroy(&r->dtor_runs);
  counter_destroy(&r->dtor_tid);
  counter_destroy(&r->method_runs);
  counter_destroy(&r->runs_at_dtor);
  event_destroy(&r->ctor_gate);
}

/* rec_ctor: the state is the arg itself (it lives on the test's stack; its drop only
 * counts). */
static inline tether_status rec_ctor(tether_task *t, void *arg, void **state_out) {
  rec *r = (rec *)arg;
  counter_set(&r->ctor_tid, os_tid());
  counter_set(&r->ctor_tl, tl_value);
  counter_add(&r->ctor_runs, 1);
  if (r->ctor_wait && !event_wait(&r->ctor_gate, T_LONG))
    harness_fail(__FILE__, __LINE__, "rec_ctor: gate never opened");
  if (r->ctor_fail) return tether_task_fail(t, 5, r->ctor_fail);
  tl_value = r->tl_set;
  *state_out = r;
  return TETHER_OK;
}

static inline void rec_dtor(void *state) {
  rec *r = (rec *)state;
  counter_set(&r->runs_at_dtor, counter_get(&r->method_runs));
  counter_set(&r->dtor_tid, os_tid());
  counter_add(&r->dtor_runs, 1);
}

/* create_rec_actor: an actor over r (constructor arg r, counted by r->drops). */
static inline tether_actor create_rec_actor(const tether_actor_options *o, rec *r) {
  tether_actor a = {0};
  CHECK_ST(tether_actor_create(o, rec_ctor, rec_dtor, r, count_drop, &a), TETHER_OK);
  CHECK(a.id != 0);
  return a;
}

/* ---- note: a call's arg ----------------------------------------------------------------- */

typedef struct note {
  counter drops;     /* FIRST member: arg_drop(count_drop) calls */
  counter runs;
  counter tid;       /* gettid() of the last run */
  counter tl;        /* tl_value the last run found */
  counter saw_stop;  /* tether_task_stop_requested at the last run */
  char thread[64];   /* tether_task_thread_name of the last run (read after a wait) */
} note;

static inline void note_init(note *n) {
  counter_init(&n->drops);
  counter_init(&n->runs);
  counter_init(&n->tid);
  counter_init(&n->tl);
  counter_init(&n->saw_stop);
  n->thread[0] = '\0';
}

static inline void note_destroy(note *n) {
  counter_destroy(&n->drops);
  counter_destroy(&n->runs);
  counter_destroy(&n->tid);
  counter_destroy(&n->tl);
  counter_destroy(&n->saw_stop);
}

static inline void note_record(tether_task *t, note *n) {
  const char *name = tether_task_thread_name(t);
  CHECK(name != NULL && strlen(name) < sizeof n->thread);
  strcpy(n->thread, name);
  counter_set(&n->tid, os_tid());
  counter_set(&n->tl, tl_value);
  counter_set(&n->saw_stop, tether_task_stop_requested(t) ? 1 : 0);
  counter_add(&n->runs, 1);
}

/* note_fn: an executor task that records itself in its note. */
static inline tether_status note_fn(tether_task *t, void *arg) {
  note_record(t, (note *)arg);
  return TETHER_OK;
}

/* m_note: a method that records itself in its note (and, when state is a rec, counts). */
static inline tether_status m_note(tether_task *t, void *state, void *arg) {
  note_record(t, (note *)arg);
  if (state) counter_add(&((rec *)state)->method_runs, 1);
  return TETHER_OK;
}

/* m_block: blocker_fn (fixtures.h) as a method. */
static inline tether_status m_block(tether_task *t, void *state, void *arg) {
  (void)state;
  return blocker_fn(t, arg);
}

/* m_ok / m_fail: a method that succeeds at once / fails with user_code 1 and message arg. */
static inline tether_status m_ok(tether_task *t, void *state, void *arg) {
  (void)t;
  (void)state;
  (void)arg;
  return TETHER_OK;
}

static inline tether_status m_fail(tether_task *t, void *state, void *arg) {
  (void)state;
  return tether_task_fail(t, 1, (const char *)arg);
}

/* call_and_wait: calls m(arg) on group (arg not dropped by the library: no arg_drop) and
 * returns the outcome; the future is released. */
static inline int32_t call_and_wait(tether_actor a, const char *group, tether_method_fn m, void *arg) {
  tether_future f = {0};
  int32_t s;
  CHECK_ST(tether_actor_call(a, group, m, arg, NULL, &f), TETHER_OK);
  CHECK(f.id != 0);
  s = future_outcome(f);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  return s;
}

/* join_thread: pthread_join that fails the test on error. */
static inline void join_thread(pthread_t th) { CHECK(pthread_join(th, NULL) == 0); }

/* order: checks that calls run in submission order; each call carries an order_item. */
typedef struct order {
  counter drops; /* FIRST member: arg drops of every call */
  counter next;
  counter bad;
} order;

typedef struct order_item {
  order *o;
  long i;
} order_item;

static inline tether_status m_order(tether_task *t, void *state, void *arg) {
  order_item *it = (order_item *)arg;
  (void)t;
  (void)state;
  if (counter_get(&it->o->next) != it->i) counter_add(&it->o->bad, 1);
  counter_set(&it->o->next, it->i + 1);
  return TETHER_OK;
}

static inline void order_item_drop(void *p) { counter_add(&((order_item *)p)->o->drops, 1); }

#endif /* TETHER_C_ACTOR_FIXTURES_H */
