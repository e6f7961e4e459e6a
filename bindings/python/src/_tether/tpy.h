/* tpy.h — what the files of the tether._tether extension share.
 *
 * The extension is a thin layer over the C API (tether.h): handle objects for runners,
 * actors, futures, graphs and compiled graphs, and the trampolines that run Python code on
 * the library's threads. The Pythonic API (classes, exceptions, context managers) is the
 * pure-Python package around it (the .py files of tether).
 *
 * GIL rules kept by every file:
 *  - a call that can block (wait, join, stop, release) is made with the GIL released;
 *  - code on a library thread takes the GIL through tpy_gil_enter (gil.c) and nothing else;
 *  - calls that never block (submit, poll, accessors) keep the GIL: cheaper than a switch.
 */
#ifndef TPY_H
#define TPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdatomic.h>
#include <stdint.h>
#include <tether/tether.h>

/* ---- gil.c: the GIL from library threads, and interpreter exit ---- */

/* How tpy_gil_enter got the GIL, for tpy_gil_leave. */
typedef struct tpy_gil {
  int how; /* TPY_GIL_* */
  PyGILState_STATE ensured;
} tpy_gil;
enum { TPY_GIL_REFUSED = 0, TPY_GIL_NESTED = 1, TPY_GIL_OWN = 2, TPY_GIL_ENSURED = 3 };

/* tpy_gil_enter: takes the GIL on any thread. A library thread gets one Python thread
 * state for its whole life (so threading.local and Python's thread identity persist between
 * the calls it runs), named after the tether thread (`name` may be NULL). Returns
 * how == TPY_GIL_REFUSED once the interpreter is exiting: the caller must not touch Python
 * objects then (they are leaked rather than freed too late). */
tpy_gil tpy_gil_enter(const char *name);
void tpy_gil_leave(tpy_gil g);
/* tpy_in_callback_enter/leave: bracket Python code run for the library (the exit protocol
 * interrupts threads that are inside). GIL held. */
void tpy_in_callback_enter(void);
void tpy_in_callback_leave(void);
/* tpy_on_library_thread: nonzero on a thread the library created that has run Python
 * code (the only threads on which a wait can be TETHER_E_DEADLOCK). */
int tpy_on_library_thread(void);
/* tpy_exiting: nonzero once the exit protocol closed the door to Python. */
int tpy_exiting(void);
PyObject *tpy_shutdown_py(PyObject *self, PyObject *args); /* _tether.shutdown(grace_s, bound_s) */
PyObject *tpy_after_fork_child(PyObject *self, PyObject *unused);
int tpy_gil_init(void);

/* ---- errors.c: statuses and tether_error handles as Python exceptions ---- */

/* tpy_raise_status: raises the exception class of `rc`, with this thread's last-error
 * text. Returns NULL so a caller can `return tpy_raise_status(rc);`. */
PyObject *tpy_raise_status(tether_status rc);
/* tpy_error_object: the Python exception for error handle e (not released here): the
 * original Python exception when e records one kept in `kept` (popped when pop is set),
 * else an instance of the status class with the error's fields. NULL with an exception set
 * on failure. */
PyObject *tpy_error_object(tether_error e, PyObject *kept, int pop);
/* tpy_record_exception: on a library thread with a Python exception set: clears it, keeps
 * it in `kept` under a new key, and records it as the task's TETHER_E_PANIC failure with
 * that key as user_code. Returns the status for the callback to return. */
tether_status tpy_record_exception(tether_task *t, PyObject *kept);
PyObject *tpy_set_hooks(PyObject *self, PyObject *args);
/* tpy_error_list: [error 0, 1, ...] read with at(ctx, i, &e) until it answers
 * TETHER_E_INVALID_ARGUMENT (past the end), as Python exceptions. */
typedef tether_status (*tpy_error_at_fn)(void *ctx, size_t i, tether_error *out);
PyObject *tpy_error_list(tpy_error_at_fn at, void *ctx, PyObject *kept);

/* ---- callbacks.c: trampolines ---- */

/* A Python call the library runs later: fn(*prefix, *args, **kwargs). Owned by the
 * library from submission (section 4 of tether.h); freed by tpy_call_drop. */
typedef struct tpy_call {
  PyObject *fn, *args, *kwargs; /* kwargs may be NULL */
  PyObject *kept;               /* dict of the owner: raised exceptions by key */
  int flags;                    /* TPY_CALL_* */
} tpy_call;
enum {
  TPY_CALL_SCOPE = 1,  /* a runner's target: called with the Scope first */
  TPY_CALL_RESULT = 2, /* the value becomes the task's result (a target, a call with a future) */
  TPY_CALL_KEEP = 4    /* reused (a graph node): the callback must not clear it */
};

/* tpy_call_new: a new call holding new references (args NULL: no arguments). GIL held. */
tpy_call *tpy_call_new(PyObject *fn, PyObject *args, PyObject *kwargs, PyObject *kept, int flags);
void tpy_call_drop(void *p);
void tpy_object_drop(void *p); /* a PyObject* value or result: Py_DECREF with the GIL */
tether_status tpy_run_task(tether_task *t, void *arg);
tether_status tpy_run_ctor(tether_task *t, void *arg, void **state_out);
void tpy_run_dtor(void *state);
tether_status tpy_run_method(tether_task *t, void *state, void *arg);
tether_status tpy_run_node(tether_task *t, void *state, void *arg, void *const *inputs, size_t n_inputs,
                           void **output);
extern PyTypeObject tpy_scope_type;
PyObject *tpy_current_scope(PyObject *self, PyObject *unused);

/* ---- waiter.c: a thread's semaphore for future waits ---- */
typedef struct tpy_waiter tpy_waiter;
tpy_waiter *tpy_waiter_mine(void); /* this thread's; NULL on no memory */
void tpy_waiter_wake(tpy_waiter *w);
void tpy_waiter_sleep(tpy_waiter *w, int64_t ns); /* until woken or ns passed */

/* ---- future.c ---- */

typedef struct tpy_future_handle {
  PyObject_HEAD
  tether_future f;
  PyObject *pyfuture; /* the tether.Future it settles; cleared once settled */
  PyObject *kept;     /* where the work's Python exceptions are kept */
  int outputs;        /* 0: a call (take_result); n > 0: an execution with n outputs */
  int single;         /* an execution whose one output is returned bare */
  int settled;        /* set, under the GIL, by whoever settles pyfuture first */
  /* ctl: 2 x (threads now in wait()) | TPY_DEFERRED. The on_done notice leaves settling
   * to a waiter (and its reference to the waiter to drop) instead of taking the GIL. */
  _Atomic unsigned ctl;
  _Atomic(tpy_waiter *) waiter; /* the thread sleeping in wait(), registered before ctl rises */
} tpy_future_handle;
#define TPY_DEFERRED 1u
extern PyTypeObject tpy_future_handle_type;
/* tpy_future_wrap: a new tether.Future (cls()) for f, which it now owns, settled when f
 * ends. Releases f on failure. */
PyObject *tpy_future_wrap(PyObject *cls, tether_future f, PyObject *kept, int outputs, int single);

/* ---- waits ---- */

/* One slice of a wait, made with the GIL released. */
typedef tether_status (*tpy_wait_fn)(void *ctx, int64_t timeout_ns);
/* tpy_wait: waits with fn in slices, with the GIL released, checking for signals (Ctrl-C)
 * between slices. timeout < 0: forever. Returns 1 when fn returned TETHER_OK, 0 on
 * timeout, -1 with an exception set (a signal handler raised, or fn failed: its status is
 * raised). */
int tpy_wait(tpy_wait_fn fn, void *ctx, double timeout_s);
/* tpy_timeout_arg: None -> -1, a number >= 0 -> seconds; -2 with ValueError/TypeError set. */
double tpy_timeout_arg(PyObject *o);

/* ---- types ---- */
extern PyTypeObject tpy_runner_type, tpy_actor_type, tpy_graph_type, tpy_compiled_type;
PyObject *tpy_runner_start(PyObject *self, PyObject *args, PyObject *kw);
PyObject *tpy_actor_create(PyObject *self, PyObject *args, PyObject *kw);
/* tpy_actor_handle: the tether_actor of an _tether.Actor, or 0 with TypeError set. */
int tpy_actor_get(PyObject *o, tether_actor *out);

#endif
