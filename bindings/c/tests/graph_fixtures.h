/*
 * graph_fixtures.h — actors and node functions for the compiled-graph tests.
 *
 * worker: an actor's state. Its constructor records its OS thread and sets the
 * thread-local tl_value to 100 + id; every node on it checks both (a node on another thread
 * fails the execution), and appends "<tag>:<input>" to the worker's log, which only the
 * worker's own thread touches (get_logs reads it there too).
 *
 * Values are heap longs (new_value) so value_drop can count and free them; g_value_drops
 * counts the drops of the whole process.
 *
 * stage: a node's arg: out = in * mul + add (the sum of the inputs weighted by position
 * for nodes with several inputs: in0 * mul + in1 * 10 ... see stage_fn). An optional gate
 * blocks the node for one input value.
 */
#ifndef TETHER_C_GRAPH_FIXTURES_H
#define TETHER_C_GRAPH_FIXTURES_H

#include "actor_fixtures.h"

static counter g_value_drops; /* drops by value_drop, all tests of the process */
/* new_value() calls; never waited on, so the default (realtime) condvar is fine. */
static counter g_values_made = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

static inline long *new_value(long v) {
  long *p = (long *)malloc(sizeof *p);
  CHECK(p != NULL);
  counter_add(&g_values_made, 1);
  *p = v;
  return p;
}

static inline void value_drop(void *p) {
  free(p);
  counter_add(&g_value_drops, 1);
}

/* ---- worker ----------------------------------------------------------------------------- */

typedef struct worker {
  counter drops; /* FIRST member: the constructor arg's drops */
  int id;
  long tid;      /* gettid() of the constructor; written before any node runs */
  char log[1024];
  size_t log_len;
  counter dtor_runs;
} worker;

static inline void worker_init(worker *w, int id) {
  memset(w, 0, sizeof *w);
  counter_init(&w->drops);
  counter_init(&w->dtor_runs);
  w->id = id;
}

static inline void worker_destroy(worker *w) {
  counter_destroy(&w->drops);
  counter_destroy(&w->dtor_runs);
}

static inline tether_status worker_ctor(tether_task *t, void *arg, void **state_out) {
  worker *w = (worker *)arg;
  (void)t;
  w->tid = os_tid();
  tl_value = 100 + w->id;
  *state_out = w;
  return TETHER_OK;
}

static inline void worker_dtor(void *state) { counter_add(&((worker *)state)->dtor_runs, 1); }

/* worker_log: appends text to the log (on the worker's thread). */
static inline void worker_log(worker *w, const char *tag, long v) {
  int n = snprintf(w->log + w->log_len, sizeof w->log - w->log_len, "%s%s:%ld", w->log_len ? " " : "", tag, v);
  if (n > 0 && (size_t)n < sizeof w->log - w->log_len) w->log_len += (size_t)n;
}

/* start_worker: an actor named `name` (groups optional) whose state is w. */
static inline tether_actor start_worker(const char *name, worker *w, const tether_group_spec *groups, size_t n) {
  tether_actor a = {0};
  tether_actor_options o = actor_opts(name, groups, n);
  CHECK_ST(tether_actor_create(&o, worker_ctor, worker_dtor, w, count_drop, &a), TETHER_OK);
  return a;
}

/* logs_call: an ordinary call that copies the worker's log into a buffer. */
typedef struct logs_call {
  char text[1024];
  long tid;
} logs_call;

static inline tether_status get_logs(tether_task *t, void *state, void *arg) {
  worker *w = (worker *)state;
  logs_call *c = (logs_call *)arg;
  (void)t;
  memcpy(c->text, w->log, w->log_len);
  c->text[w->log_len] = '\0';
  c->tid = os_tid();
  return TETHER_OK;
}

/* mark_thread: an ordinary call that sets tl_value on its thread to *arg and replaces *arg
 * with the thread's id (to aim a group's node at that thread). */
static inline tether_status mark_thread(tether_task *t, void *state, void *arg) {
  long *v = (long *)arg;
  (void)t;
  (void)state;
  tl_value = *v;
  *v = os_tid();
  return TETHER_OK;
}

/* ---- stage: a node ---------------------------------------------------------------------- */

typedef struct stage {
  counter drops;    /* FIRST member: the node arg's drops */
  const char *tag;  /* logged as "<tag>:<first input>" */
  long mul, add;    /* out = inputs[0] * mul + add (+ 1000 * inputs[1] when there are two) */
  int heap;         /* nonzero: outputs are new_value()s (for value_drop) */
  long gate_on;     /* an input value on which the node announces `started` and waits for `gate` */
  event started;
  event gate;
  long fail_on;     /* an input value on which the node fails: user_code 7, "bad batch" */
  counter runs;
  counter saw_stop; /* set to 1 if the node saw tether_task_stop_requested after its gate */
  counter spawn_status; /* what tether_task_spawn returned in the node (-1: not tried) */
  int try_spawn;
  long want_tid;    /* the thread the node must run on (0: its worker's constructor thread) */
  long want_tl;     /* the tl_value it must see there (0: the constructor's, 100 + id) */
} stage;

static inline void stage_init(stage *s, const char *tag, long mul, long add, int heap) {
  memset(s, 0, sizeof *s);
  counter_init(&s->drops);
  event_init(&s->started);
  event_init(&s->gate);
  counter_init(&s->runs);
  counter_init(&s->saw_stop);
  counter_init(&s->spawn_status);
  counter_set(&s->spawn_status, -1);
  s->tag = tag;
  s->mul = mul;
  s->add = add;
  s->heap = heap;
  s->gate_on = -1;
  s->fail_on = -1;
}

static inline void stage_destroy(stage *s) {
  counter_destroy(&s->drops);
  event_destroy(&s->started);
  event_destroy(&s->gate);
  counter_destroy(&s->runs);
  counter_destroy(&s->saw_stop);
  counter_destroy(&s->spawn_status);
}

static inline tether_status nothing_fn(tether_task *t, void *arg) {
  (void)t;
  (void)arg;
  return TETHER_OK;
}

static inline tether_status stage_fn(tether_task *t, void *state, void *arg, void *const *inputs, size_t n,
                                     void **output) {
  worker *w = (worker *)state;
  stage *s = (stage *)arg;
  long in0, v;
  counter_add(&s->runs, 1);
  if (os_tid() != (s->want_tid ? s->want_tid : w->tid)) return tether_task_fail(t, 90, "node ran on a wrong thread");
  if (tl_value != (s->want_tl ? s->want_tl : 100 + w->id)) return tether_task_fail(t, 91, "node sees a wrong thread-local");
  if (n < 1 || n > 2) return tether_task_fail(t, 92, "unexpected input count");
  in0 = *(const long *)inputs[0];
  if (s->want_tid == 0) worker_log(w, s->tag, in0); /* the log is the default thread's alone */
  if (s->try_spawn) counter_set(&s->spawn_status, tether_task_spawn(t, "x", nothing_fn, NULL, NULL));
  if (in0 == s->gate_on) {
    event_set(&s->started);
    if (!event_wait(&s->gate, T_LONG)) harness_fail(__FILE__, __LINE__, "stage: gate never opened");
    counter_set(&s->saw_stop, tether_task_stop_requested(t) ? 1 : 0);
  }
  if (in0 == s->fail_on) return tether_task_fail(t, 7, "bad batch");
  v = in0 * s->mul + s->add;
  if (n == 2) v += 1000 * *(const long *)inputs[1];
  if (s->heap) {
    *output = new_value(v);
  } else {
    /* Without value_drop the values are the user's: this node keeps them in a ring it owns. */
    static __thread long ring[64];
    static __thread unsigned next;
    long *slot = &ring[next++ % 64];
    *slot = v;
    *output = slot;
  }
  return TETHER_OK;
}

/* ---- graph building --------------------------------------------------------------------- */

/* add_stage: adds a node running stage_fn(s) on actor a (group may be NULL). */
static inline uint32_t add_stage(tether_graph g, tether_actor a, const char *group, stage *s) {
  uint32_t node = 77;
  CHECK_ST(tether_graph_add_node(g, a, group, stage_fn, s, count_drop, &node), TETHER_OK);
  return node;
}

/* one_node_graph: input -> one node (stage_fn(s) on a/group) -> output. */
static inline tether_graph one_node_graph(tether_actor a, const char *group, stage *s) {
  tether_graph g = {0};
  uint32_t n;
  CHECK_ST(tether_graph_create(&g), TETHER_OK);
  n = add_stage(g, a, group, s);
  CHECK_ST(tether_graph_add_edge(g, TETHER_GRAPH_INPUT, n), TETHER_OK);
  CHECK_ST(tether_graph_set_outputs(g, &n, 1), TETHER_OK);
  return g;
}

static inline tether_compile_options compile_opts(size_t capacity, tether_drop_fn drop) {
  tether_compile_options o;
  tether_compile_options_init(&o);
  o.channel_capacity = capacity;
  o.value_drop = drop;
  return o;
}

/* execute_long: executes with a heap long input (freed by free). */
static inline tether_future execute_long(tether_compiled c, long v) {
  tether_future f = {0};
  CHECK_ST(tether_compiled_execute_timeout(c, new_value(v), free, &f, T_LONG), TETHER_OK);
  return f;
}

/* output_long: waits for a SUCCEEDED execution and returns its output i of n (values it
 * takes from a graph with value_drop are freed). */
static inline long output_long(tether_future f, size_t i, size_t n, int owned) {
  void *outs[4] = {0};
  long v;
  CHECK(n <= 4);
  CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);
  CHECK_ST(tether_future_outputs(f, outs, n), TETHER_OK);
  v = *(long *)outs[i];
  if (owned) {
    size_t k;
    for (k = 0; k < n; ++k) free(outs[k]);
  }
  return v;
}

/* CHECK_GRAPH_ERROR: the graph's last compile error has this code and its message contains
 * `part`. */
#define CHECK_GRAPH_ERROR(g, code, part)                                                     \
  do {                                                                                       \
    tether_error ge_ = {0};                                                                  \
    char gm_[256];                                                                           \
    CHECK_ST(tether_graph_error((g), &ge_), TETHER_OK);                                      \
    CHECK(ge_.id != 0);                                                                      \
    CHECK_EQ(tether_error_code(ge_), (code));                                                \
    tether_error_message(ge_, gm_, sizeof gm_);                                              \
    if (strstr(gm_, (part)) == NULL)                                                         \
      harness_fail(__FILE__, __LINE__, "graph error \"%s\" does not say \"%s\"", gm_, (part)); \
    CHECK_ST(tether_error_release(ge_), TETHER_OK);                                          \
  } while (0)

#endif /* TETHER_C_GRAPH_FIXTURES_H */
