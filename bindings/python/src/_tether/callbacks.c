/* callbacks.c — the trampolines the library calls, and the Scope they hand to Python.
 *
 * Each trampoline runs on a library thread: it takes the GIL (tpy_gil_enter), calls the
 * Python function, turns a raised exception into the task's failure (errors.c), stores the
 * value as the task's result, and releases the GIL. A call's references are cleared INSIDE
 * the callback, while the GIL is held, so that the library's later arg_drop (on the same
 * thread, right after) only frees memory and needs no second trip through the GIL.
 */
#include "tpy.h"

#include <stdlib.h>

tpy_call *tpy_call_new(PyObject *fn, PyObject *args, PyObject *kwargs, PyObject *kept, int flags) {
  tpy_call *c = malloc(sizeof *c); /* freed by tpy_call_drop, maybe without the GIL */
  if (c == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  c->fn = Py_NewRef(fn);
  c->args = Py_XNewRef(args);
  c->kwargs = (kwargs != NULL && PyDict_GET_SIZE(kwargs) > 0) ? Py_NewRef(kwargs) : NULL;
  c->kept = Py_XNewRef(kept);
  c->flags = flags;
  return c;
}

static void call_clear(tpy_call *c) {
  Py_CLEAR(c->fn);
  Py_CLEAR(c->args);
  Py_CLEAR(c->kwargs);
  Py_CLEAR(c->kept);
}

void tpy_call_drop(void *p) {
  tpy_call *c = p;
  if (c->fn != NULL || c->args != NULL || c->kwargs != NULL || c->kept != NULL) {
    tpy_gil g = tpy_gil_enter(NULL);
    if (g.how != TPY_GIL_REFUSED) call_clear(c); /* refused: the interpreter is exiting; leak */
    tpy_gil_leave(g);
  }
  free(c);
}

void tpy_object_drop(void *p) {
  tpy_gil g = tpy_gil_enter(NULL);
  if (g.how != TPY_GIL_REFUSED) Py_XDECREF((PyObject *)p);
  tpy_gil_leave(g);
}

/* invoke: fn(*prefix[0..n_prefix), *args, **kwargs), a new reference or NULL. */
static PyObject *invoke(PyObject *fn, PyObject *const *prefix, Py_ssize_t n_prefix, PyObject *args,
                        PyObject *kwargs) {
  const Py_ssize_t n_args = args ? PyTuple_GET_SIZE(args) : 0;
  PyObject *stack[10];
  if (kwargs == NULL && n_prefix + n_args <= 9) {
    for (Py_ssize_t i = 0; i < n_prefix; ++i) stack[i + 1] = prefix[i];
    for (Py_ssize_t i = 0; i < n_args; ++i) stack[n_prefix + i + 1] = PyTuple_GET_ITEM(args, i);
    return PyObject_Vectorcall(fn, stack + 1, (size_t)(n_prefix + n_args) | PY_VECTORCALL_ARGUMENTS_OFFSET,
                               NULL);
  }
  PyObject *all = PyTuple_New(n_prefix + n_args);
  if (all == NULL) return NULL;
  for (Py_ssize_t i = 0; i < n_prefix; ++i) PyTuple_SET_ITEM(all, i, Py_NewRef(prefix[i]));
  for (Py_ssize_t i = 0; i < n_args; ++i) PyTuple_SET_ITEM(all, n_prefix + i, Py_NewRef(PyTuple_GET_ITEM(args, i)));
  PyObject *r = PyObject_Call(fn, all, kwargs);
  Py_DECREF(all);
  return r;
}

/* ---- Scope ---- */

/* Scope: the Python face of the running task. `task` is valid only during the callback
 * that created the Scope, and only on its thread: it is cleared when the callback returns,
 * and every method checks it (the library also refuses another thread's task). */
typedef struct {
  PyObject_HEAD
  tether_task *task;
  PyObject *kept;
} scope_object;

static _Thread_local PyObject *t_scope; /* borrowed: the Scope of this thread's running callback */

static PyObject *scope_new(tether_task *t, PyObject *kept) {
  scope_object *s = PyObject_New(scope_object, &tpy_scope_type);
  if (s == NULL) return NULL;
  s->task = t;
  s->kept = Py_XNewRef(kept);
  return (PyObject *)s;
}

static void scope_dealloc(PyObject *self) {
  Py_XDECREF(((scope_object *)self)->kept);
  PyObject_Free(self);
}

static tether_task *scope_task(PyObject *self) {
  scope_object *s = (scope_object *)self;
  if (s->task == NULL || t_scope != self) {
    PyErr_SetString(PyExc_RuntimeError,
                    "tether.Scope used outside the callback that received it (or from another thread)");
    return NULL;
  }
  return s->task;
}

static PyObject *scope_spawn(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  tether_task *t = scope_task(self);
  if (t == NULL) return NULL;
  if (nargs < 2 || !PyUnicode_Check(args[0]) || !PyCallable_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "spawn(name: str, fn: callable, *args, **kwargs)");
    return NULL;
  }
  const char *name = PyUnicode_AsUTF8(args[0]);
  if (name == NULL) return NULL;
  PyObject *rest = PyTuple_New(nargs - 2);
  if (rest == NULL) return NULL;
  for (Py_ssize_t i = 2; i < nargs; ++i) PyTuple_SET_ITEM(rest, i - 2, Py_NewRef(args[i]));
  PyObject *kwargs = NULL;
  if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
    kwargs = PyDict_New();
    for (Py_ssize_t i = 0; kwargs && i < PyTuple_GET_SIZE(kwnames); ++i)
      if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) Py_CLEAR(kwargs);
    if (kwargs == NULL) {
      Py_DECREF(rest);
      return NULL;
    }
  }
  tpy_call *c = tpy_call_new(args[1], rest, kwargs, ((scope_object *)self)->kept, 0);
  Py_DECREF(rest);
  Py_XDECREF(kwargs);
  if (c == NULL) return NULL;
  const tether_status rc = tether_task_spawn(t, name, tpy_run_task, c, tpy_call_drop); /* never blocks */
  if (rc != TETHER_OK) return tpy_raise_status(rc);
  Py_RETURN_NONE;
}

static PyObject *scope_stop_requested(PyObject *self, PyObject *unused) {
  (void)unused;
  tether_task *t = scope_task(self);
  if (t == NULL) return NULL;
  return PyBool_FromLong(tether_task_stop_requested(t));
}

static PyObject *scope_thread_name(PyObject *self, void *unused) {
  (void)unused;
  tether_task *t = scope_task(self);
  if (t == NULL) return NULL;
  return PyUnicode_FromString(tether_task_thread_name(t));
}

static PyMethodDef scope_methods[] = {
    {"spawn", (PyCFunction)(void (*)(void))scope_spawn, METH_FASTCALL | METH_KEYWORDS,
     "spawn(name, fn, *args, **kwargs): runs fn(*args, **kwargs) on a new thread of this scope"},
    {"stop_requested", scope_stop_requested, METH_NOARGS,
     "True once cancellation or a sibling's failure asked this scope to stop"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef scope_getset[] = {
    {"thread_name", scope_thread_name, NULL, "the full name of the thread this callback runs on", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject tpy_scope_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tether.Scope",
    .tp_basicsize = sizeof(scope_object),
    .tp_dealloc = scope_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The scope of the running tether callback: spawn nested threads, observe stop requests.",
    .tp_methods = scope_methods,
    .tp_getset = scope_getset,
};

PyObject *tpy_current_scope(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return Py_NewRef(t_scope ? t_scope : Py_None);
}

/* ---- trampolines ---- */

#define REFUSE(t) tether_task_fail_with((t), TETHER_E_SHUTDOWN, 0, "the Python interpreter is exiting")

/* with_scope: runs body with a Scope for t as the thread's current one. */
typedef struct {
  tether_task *t;
  PyObject *scope, *prev;
} scope_frame;

static int frame_open(scope_frame *f, tether_task *t, PyObject *kept) {
  f->t = t;
  f->prev = t_scope;
  f->scope = scope_new(t, kept);
  if (f->scope == NULL) return -1;
  t_scope = f->scope;
  return 0;
}

static void frame_close(scope_frame *f) {
  t_scope = f->prev;
  if (f->scope) {
    ((scope_object *)f->scope)->task = NULL;
    Py_DECREF(f->scope);
  }
}

/* settle_value: the callback's outcome into the task; consumes res. */
static tether_status settle_value(tether_task *t, PyObject *res, tpy_call *c, PyObject *kept) {
  if (res == NULL) return tpy_record_exception(t, kept);
  if ((c->flags & TPY_CALL_RESULT) && res != Py_None)
    return tether_task_set_result(t, res, tpy_object_drop); /* a failure drops res */
  Py_DECREF(res);
  return TETHER_OK;
}

/* run_call: c's function with self (an actor's state) or the Scope (a target) first. */
static tether_status run_call(tether_task *t, tpy_call *c, PyObject *self) {
  tpy_gil g = tpy_gil_enter(tether_task_thread_name(t));
  if (g.how == TPY_GIL_REFUSED) return REFUSE(t);
  tpy_in_callback_enter();
  PyObject *kept = Py_XNewRef(c->kept); /* call_clear drops c's */
  scope_frame f;
  PyObject *res = NULL;
  if (frame_open(&f, t, kept) == 0) {
    PyObject *first = self ? self : f.scope;
    res = (self || (c->flags & TPY_CALL_SCOPE)) ? invoke(c->fn, &first, 1, c->args, c->kwargs)
                                                : invoke(c->fn, NULL, 0, c->args, c->kwargs);
  }
  frame_close(&f);
  tether_status rc = settle_value(t, res, c, kept);
  Py_XDECREF(kept);
  call_clear(c);
  tpy_in_callback_leave();
  tpy_gil_leave(g);
  return rc;
}

tether_status tpy_run_task(tether_task *t, void *arg) { return run_call(t, arg, NULL); }

tether_status tpy_run_ctor(tether_task *t, void *arg, void **state_out) {
  tpy_call *c = arg;
  tpy_gil g = tpy_gil_enter(tether_task_thread_name(t));
  if (g.how == TPY_GIL_REFUSED) return REFUSE(t);
  tpy_in_callback_enter();
  scope_frame f;
  PyObject *res = NULL;
  if (frame_open(&f, t, c->kept) == 0) res = invoke(c->fn, NULL, 0, c->args, c->kwargs);
  frame_close(&f);
  tether_status rc = TETHER_OK;
  if (res == NULL) rc = tpy_record_exception(t, c->kept);
  else *state_out = res; /* owned by the actor; tpy_run_dtor drops it */
  call_clear(c);
  tpy_in_callback_leave();
  tpy_gil_leave(g);
  return rc;
}

void tpy_run_dtor(void *state) {
  tpy_gil g = tpy_gil_enter(NULL);
  if (g.how == TPY_GIL_REFUSED) return; /* exiting: the state is leaked with the interpreter */
  tpy_in_callback_enter();
  Py_XDECREF((PyObject *)state); /* its __del__ runs here, on the actor's default thread */
  if (PyErr_Occurred()) PyErr_WriteUnraisable(NULL);
  tpy_in_callback_leave();
  tpy_gil_leave(g);
}

tether_status tpy_run_method(tether_task *t, void *state, void *arg) {
  return run_call(t, arg, state ? (PyObject *)state : Py_None);
}

tether_status tpy_run_node(tether_task *t, void *state, void *arg, void *const *inputs, size_t n_inputs,
                           void **output) {
  tpy_call *c = arg; /* TPY_CALL_KEEP: the node's own, reused by every execution */
  tpy_gil g = tpy_gil_enter(tether_task_thread_name(t));
  if (g.how == TPY_GIL_REFUSED) return REFUSE(t);
  tpy_in_callback_enter();
  PyObject *stack[9];
  PyObject **argv = n_inputs + 1 <= 9 ? stack : PyMem_Malloc((n_inputs + 1) * sizeof(PyObject *));
  PyObject *res = NULL;
  if (argv == NULL) {
    PyErr_NoMemory();
  } else {
    argv[0] = (PyObject *)state;
    for (size_t i = 0; i < n_inputs; ++i) argv[i + 1] = inputs[i] ? (PyObject *)inputs[i] : Py_None;
    res = PyObject_Vectorcall(c->fn, argv, n_inputs + 1, NULL);
    if (argv != stack) PyMem_Free(argv);
  }
  tether_status rc = TETHER_OK;
  if (res == NULL) rc = tpy_record_exception(t, c->kept);
  else if (res == Py_None) Py_DECREF(res); /* NULL stands for None: nothing to drop */
  else *output = res;                      /* owned by the execution (value_drop) */
  tpy_in_callback_leave();
  tpy_gil_leave(g);
  return rc;
}
