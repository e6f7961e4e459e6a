// shim.c — see shim.h. Each trampoline only converts `void *` to uintptr_t and calls the
// Go side (callbacks.go), which recovers every panic: none reaches the library's frames.
#define _GNU_SOURCE  /* sched_getcpu */
#include "shim.h"

#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "_cgo_export.h"

/* Inputs and outputs of up to this many values are converted in a stack array. */
#define TGO_SMALL 8

static tether_status tgo_task(tether_task *t, void *arg) {
  return goTaskTramp(t, (uintptr_t)arg);
}

static void tgo_drop(void *arg) { goDropTramp((uintptr_t)arg); }

static void tgo_notify(void *arg) { goNotifyTramp((uintptr_t)arg); }

static tether_status tgo_ctor(tether_task *t, void *arg, void **state_out) {
  uintptr_t state = 0;
  tether_status st = goCtorTramp(t, (uintptr_t)arg, &state);
  *state_out = (void *)state;
  return st;
}

static void tgo_dtor(void *state) {
  if (state != NULL) goDtorTramp((uintptr_t)state);
}

static tether_status tgo_method(tether_task *t, void *state, void *arg) {
  return goMethodTramp(t, (uintptr_t)state, (uintptr_t)arg);
}

/* tgo_node: the one tether_node_fn of every Go node. The inputs (value handles lent for
 * this call) are converted to uintptr_t here, so Go never reads a `void *`; the Go side
 * returns its value as a new handle in `out` (0 when it failed). */
static tether_status tgo_node(tether_task *t, void *state, void *arg, void *const *inputs,
                              size_t n_inputs, void **output) {
  uintptr_t small[TGO_SMALL];
  uintptr_t *ins = small;
  uintptr_t out = 0;
  size_t i;
  tether_status st;
  if (n_inputs > TGO_SMALL) {
    ins = (uintptr_t *)malloc(n_inputs * sizeof *ins);
    if (ins == NULL) return tether_task_fail_with(t, TETHER_E_NO_MEMORY, 0, "tether go: node inputs");
  }
  for (i = 0; i < n_inputs; ++i) ins[i] = (uintptr_t)inputs[i];
  st = goNodeTramp(t, (uintptr_t)state, (uintptr_t)arg, ins, n_inputs, &out);
  if (ins != small) free(ins);
  *output = (void *)out;
  return st;
}

tether_status tgo_runner_start(const tether_runner_options *o, uintptr_t h, tether_runner *out) {
  return tether_runner_start(o, tgo_task, (void *)h, tgo_drop, out);
}

tether_status tgo_task_spawn(tether_task *t, const char *name, uintptr_t h) {
  return tether_task_spawn(t, name, tgo_task, (void *)h, tgo_drop);
}

tether_status tgo_runner_on_done(tether_runner r, uintptr_t h) {
  return tether_runner_on_done(r, tgo_notify, (void *)h, tgo_drop);
}

tether_status tgo_executor_submit(tether_executor e, uintptr_t h, tether_future *out) {
  return tether_executor_submit(e, tgo_task, (void *)h, tgo_drop, out);
}

tether_status tgo_future_on_done(tether_future f, uintptr_t h) {
  return tether_future_on_done(f, tgo_notify, (void *)h, tgo_drop);
}

tether_status tgo_actor_create(const tether_actor_options *o, uintptr_t h, tether_actor *out) {
  return tether_actor_create(o, tgo_ctor, tgo_dtor, (void *)h, tgo_drop, out);
}

tether_status tgo_actor_call(tether_actor a, const char *group, uintptr_t h, tether_future *out) {
  return tether_actor_call(a, group, tgo_method, (void *)h, tgo_drop, out);
}

tether_status tgo_graph_add_node(tether_graph g, tether_actor a, const char *group, uintptr_t h,
                                 uint32_t *node) {
  return tether_graph_add_node(g, a, group, tgo_node, (void *)h, tgo_drop, node);
}

tether_status tgo_graph_compile(tether_graph g, tether_compile_options *o, tether_compiled *out) {
  o->value_drop = tgo_drop;
  return tether_graph_compile(g, o, out);
}

tether_status tgo_compiled_execute(tether_compiled c, uintptr_t input, tether_future *out) {
  return tether_compiled_execute(c, (void *)input, tgo_drop, out);
}

tether_status tgo_compiled_execute_timeout(tether_compiled c, uintptr_t input, tether_future *out,
                                           int64_t timeout_ns) {
  return tether_compiled_execute_timeout(c, (void *)input, tgo_drop, out, timeout_ns);
}

tether_status tgo_future_outputs(tether_future f, uintptr_t *outs, size_t n) {
  void *small[TGO_SMALL];
  void **vals = small;
  size_t i;
  tether_status st;
  if (outs == NULL || n == 0) return tether_future_outputs(f, NULL, 0); /* the library's answer */
  if (n > TGO_SMALL) {
    vals = (void **)malloc(n * sizeof *vals);
    if (vals == NULL) return TETHER_E_NO_MEMORY;
  }
  st = tether_future_outputs(f, vals, n);
  if (st == TETHER_OK) {
    for (i = 0; i < n; ++i) outs[i] = (uintptr_t)vals[i];
  }
  if (vals != small) free(vals);
  return st;
}

/* tgo_drain_box: one per drain submission (malloc'd by the submitter, freed by the drop).
 * `ran` is written by the drain's thread before it enters Go and read by the drop, which
 * the library runs after the callback (or instead of it). tgo_submitting_box names the box
 * being submitted on this thread during the submit call, where the library runs the drop
 * of a rejected submission: that drop must not report a cancellation (the returned status
 * says it all). A drop on any other thread, or later, is a cancellation or a dead actor. */
typedef struct tgo_drain_box {
  uintptr_t q;
  int ran;
} tgo_drain_box;

static _Thread_local tgo_drain_box *tgo_submitting_box;

static tether_status tgo_drain_method(tether_task *t, void *state, void *arg) {
  tgo_drain_box *b = (tgo_drain_box *)arg;
  b->ran = 1;
  return goDrainTramp(t, (uintptr_t)state, b->q);
}

static tether_status tgo_drain_task(tether_task *t, void *arg) { return tgo_drain_method(t, NULL, arg); }

static void tgo_drain_drop(void *arg) {
  tgo_drain_box *b = (tgo_drain_box *)arg;
  if (!b->ran && tgo_submitting_box != b) goDrainDropped(b->q);
  free(b);
}

/* tgo_new_box: a box for one drain of q, marked as being submitted on this thread until
 * tgo_submitted clears the mark (NULL when out of memory). */
static tgo_drain_box *tgo_new_box(uintptr_t q) {
  tgo_drain_box *b = (tgo_drain_box *)malloc(sizeof *b);
  if (b != NULL) {
    b->q = q;
    b->ran = 0;
  }
  tgo_submitting_box = b;
  return b;
}

static tether_status tgo_submitted(tether_status st) {
  tgo_submitting_box = NULL;
  return st;
}

tether_status tgo_actor_drain(tether_actor a, uintptr_t q) {
  tgo_drain_box *b = tgo_new_box(q);
  if (b == NULL) return TETHER_E_NO_MEMORY;
  return tgo_submitted(tether_actor_call(a, NULL, tgo_drain_method, b, tgo_drain_drop, NULL));
}

tether_status tgo_executor_drain(tether_executor e, uintptr_t q) {
  tgo_drain_box *b = tgo_new_box(q);
  if (b == NULL) return TETHER_E_NO_MEMORY;
  return tgo_submitted(tether_executor_submit(e, tgo_drain_task, b, tgo_drain_drop, NULL));
}

void tgo_yield(void) { sched_yield(); }

int tgo_cpu(void) {
#ifdef __linux__
  return sched_getcpu();
#else
  return -1;
#endif
}

long tgo_tid(void) {
  static _Thread_local long tid;
  if (tid == 0) tid = (long)syscall(SYS_gettid);
  return tid;
}
