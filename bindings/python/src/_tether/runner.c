/* runner.c — tether_runner behind tether.Runner. */
#include "tpy.h"

typedef struct {
  PyObject_HEAD
  tether_runner r;
  PyObject *kept; /* the scope's raised exceptions, by key (errors.c) */
} runner_object;

#define RUNNER(self) (((runner_object *)(self))->r)

static int runner_live(PyObject *self) {
  if (RUNNER(self).id != 0) return 1;
  PyErr_SetString(PyExc_ValueError, "the runner was closed");
  return 0;
}

/* _tether.start_runner(target, args, kwargs, name, stop_on_error, kept) */
PyObject *tpy_runner_start(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *names[] = {"target", "args", "kwargs", "name", "stop_on_error", "kept", NULL};
  PyObject *target, *targs, *tkwargs, *kept;
  const char *name = NULL;
  int stop_on_error = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO!O!zpO!", names, &target, &PyTuple_Type, &targs, &PyDict_Type,
                                   &tkwargs, &name, &stop_on_error, &PyDict_Type, &kept))
    return NULL;
  runner_object *ro = PyObject_New(runner_object, &tpy_runner_type);
  if (ro == NULL) return NULL;
  ro->r.id = 0;
  ro->kept = Py_NewRef(kept);
  tpy_call *c = tpy_call_new(target, targs, tkwargs, kept, TPY_CALL_SCOPE | TPY_CALL_RESULT);
  if (c == NULL) {
    Py_DECREF(ro);
    return NULL;
  }
  tether_runner_options o;
  tether_runner_options_init(&o);
  o.name = name;
  o.stop_on_error = stop_on_error;
  const tether_status rc = tether_runner_start(&o, tpy_run_task, c, tpy_call_drop, &ro->r); /* never blocks */
  if (rc != TETHER_OK) {
    Py_DECREF(ro);
    return tpy_raise_status(rc);
  }
  return (PyObject *)ro;
}

static void runner_dealloc(PyObject *self) {
  runner_object *ro = (runner_object *)self;
  if (ro->r.id) tether_runner_release_nowait(ro->r); /* a finalizer never waits */
  Py_XDECREF(ro->kept);
  PyObject_Free(self);
}

static tether_status join_slice(void *ctx, int64_t ns) { return tether_runner_join(*(tether_runner *)ctx, ns); }
static tether_status join_all_slice(void *ctx, int64_t ns) {
  return tether_runner_join_all(*(tether_runner *)ctx, ns);
}

static PyObject *do_join(PyObject *self, PyObject *arg, tpy_wait_fn fn) {
  if (!runner_live(self)) return NULL;
  const double timeout = tpy_timeout_arg(arg);
  if (timeout == -2) return NULL;
  const int done = tpy_wait(fn, &((runner_object *)self)->r, timeout);
  return done < 0 ? NULL : PyBool_FromLong(done);
}

static PyObject *runner_join(PyObject *self, PyObject *arg) { return do_join(self, arg, join_slice); }
static PyObject *runner_join_all(PyObject *self, PyObject *arg) { return do_join(self, arg, join_all_slice); }

static PyObject *runner_poll(PyObject *self, PyObject *unused) {
  (void)unused;
  if (!runner_live(self)) return NULL;
  int32_t state = 0;
  const tether_status rc = tether_runner_poll(RUNNER(self), &state);
  return rc == TETHER_OK ? PyLong_FromLong(state) : tpy_raise_status(rc);
}

static PyObject *runner_cancel(PyObject *self, PyObject *unused) {
  (void)unused;
  if (!runner_live(self)) return NULL;
  const tether_status rc = tether_runner_cancel(RUNNER(self));
  if (rc != TETHER_OK) return tpy_raise_status(rc);
  Py_RETURN_NONE;
}

static tether_status runner_error_at(void *ctx, size_t i, tether_error *out) {
  return tether_runner_error_at(*(tether_runner *)ctx, i, out);
}

static PyObject *runner_errors(PyObject *self, PyObject *unused) {
  (void)unused;
  if (!runner_live(self)) return NULL;
  return tpy_error_list(runner_error_at, &((runner_object *)self)->r, ((runner_object *)self)->kept);
}

static PyObject *runner_error(PyObject *self, PyObject *unused) {
  (void)unused;
  if (!runner_live(self)) return NULL;
  tether_error e = {0};
  const tether_status rc = tether_runner_error(RUNNER(self), &e);
  if (rc != TETHER_OK) return tpy_raise_status(rc);
  if (e.id == 0) Py_RETURN_NONE;
  PyObject *exc = tpy_error_object(e, ((runner_object *)self)->kept, 0);
  tether_error_release(e);
  return exc;
}

static PyObject *runner_take_result(PyObject *self, PyObject *unused) {
  (void)unused;
  if (!runner_live(self)) return NULL;
  void *p = NULL;
  const tether_status rc = tether_runner_take_result(RUNNER(self), &p);
  if (rc != TETHER_OK) return tpy_raise_status(rc);
  return p ? (PyObject *)p : Py_NewRef(Py_None); /* owned: taken once */
}

static PyObject *runner_live_threads(PyObject *self, PyObject *unused) {
  (void)unused;
  if (!runner_live(self)) return NULL;
  size_t n = 0;
  const tether_status rc = tether_runner_live_threads(RUNNER(self), &n);
  return rc == TETHER_OK ? PyLong_FromSize_t(n) : tpy_raise_status(rc);
}

/* close(): cancels, waits for every thread with the GIL released, and frees the runner.
 * From inside the scope the library makes it a release_nowait. */
static PyObject *runner_close(PyObject *self, PyObject *unused) {
  (void)unused;
  runner_object *ro = (runner_object *)self;
  if (ro->r.id == 0) Py_RETURN_NONE;
  const tether_runner r = ro->r;
  ro->r.id = 0;
  tether_status rc;
  Py_BEGIN_ALLOW_THREADS
  rc = tether_runner_release(r);
  Py_END_ALLOW_THREADS
  if (rc != TETHER_OK) return tpy_raise_status(rc);
  Py_RETURN_NONE;
}

static PyMethodDef runner_methods[] = {
    {"join", runner_join, METH_O, "join(timeout) -> bool: terminal (at the first error) in time"},
    {"join_all", runner_join_all, METH_O, "join_all(timeout) -> bool: and every thread ended"},
    {"poll", runner_poll, METH_NOARGS, "the state, without blocking"},
    {"cancel", runner_cancel, METH_NOARGS, "asks every thread of the scope to stop"},
    {"error", runner_error, METH_NOARGS, "the first error, or None"},
    {"errors", runner_errors, METH_NOARGS, "every error recorded, in order"},
    {"take_result", runner_take_result, METH_NOARGS, "the target's value (once, on success)"},
    {"live_threads", runner_live_threads, METH_NOARGS, "threads of the scope not yet returned"},
    {"close", runner_close, METH_NOARGS, "cancel, join every thread, free"},
    {NULL, NULL, 0, NULL}};

PyTypeObject tpy_runner_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tether._tether.RunnerHandle",
    .tp_basicsize = sizeof(runner_object),
    .tp_dealloc = runner_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One tether_runner (internal: see tether.Runner).",
    .tp_methods = runner_methods,
};
