/*
 * shim.h — the Go binding's C side: one trampoline per callback shape.
 *
 * Go funcs travel through the C API as runtime/cgo.Handle values. Go hands them over as
 * uintptr_t; only here are they turned into the `void *arg` the C API keeps (and back),
 * so no Go code ever converts a handle to unsafe.Pointer (checkptr under -race would
 * reject it). Every `arg` is given `tgo_drop` as its arg_drop, which deletes the handle:
 * the library runs it exactly once.
 */
#ifndef TETHER_GO_SHIM_H
#define TETHER_GO_SHIM_H

#include <stdint.h>
#include <tether/tether.h>

tether_status tgo_runner_start(const tether_runner_options *o, uintptr_t h, tether_runner *out);
tether_status tgo_task_spawn(tether_task *t, const char *name, uintptr_t h);
tether_status tgo_runner_on_done(tether_runner r, uintptr_t h);
/* out may be NULL: fire and forget. */
tether_status tgo_executor_submit(tether_executor e, uintptr_t h, tether_future *out);
tether_status tgo_future_on_done(tether_future f, uintptr_t h);
tether_status tgo_actor_create(const tether_actor_options *o, uintptr_t h, tether_actor *out);
/* group may be NULL (the default thread); out may be NULL (fire and forget). */
tether_status tgo_actor_call(tether_actor a, const char *group, uintptr_t h, tether_future *out);

/* Compiled graphs (section 9). A node's handle holds its Go func (arg_drop: tgo_drop, run
 * once the graph and its compiled graphs are released and drained). Every graph value (an
 * execution's input, each node's output) is a handle too, and the library owns it:
 * tgo_graph_compile makes tgo_drop the value_drop, the executes make it the input_drop.
 * group may be NULL (the actor's default thread). */
tether_status tgo_graph_add_node(tether_graph g, tether_actor a, const char *group, uintptr_t h,
                                 uint32_t *node);
tether_status tgo_graph_compile(tether_graph g, tether_compile_options *o, tether_compiled *out);
tether_status tgo_compiled_execute(tether_compiled c, uintptr_t input, tether_future *out);
tether_status tgo_compiled_execute_timeout(tether_compiled c, uintptr_t input, tether_future *out,
                                           int64_t timeout_ns);
/* tether_future_outputs with the values as handles: outs[0..n). The first successful call
 * on a future hands the handles to the caller, who deletes them. */
tether_status tgo_future_outputs(tether_future f, uintptr_t *outs, size_t n);

/* Drains (queue.go): one C call on an actor's default thread (or an executor's thread) that
 * runs every Go func queued on the Go side. `q` is the queue's cgo.Handle, owned by Go for
 * the queue's life (no drop). When the call is cancelled or its actor dies before it ran,
 * goDrainDropped(q) tells Go; a rejected submission is only the returned status. */
tether_status tgo_actor_drain(tether_actor a, uintptr_t q);
tether_status tgo_executor_drain(tether_executor e, uintptr_t q);
/* sched_yield: a lingering drain lets a thread waiting for its CPU run. */
void tgo_yield(void);
/* The CPU the calling thread runs on now (sched_getcpu; -1 if unknown). */
int tgo_cpu(void);
/* The calling thread's OS id (gettid), cached per thread. */
long tgo_tid(void);

#endif
