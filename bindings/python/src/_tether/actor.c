/* actor.c — tether_actor behind tether.Actor. */
#include "tpy.h"

#include <stdlib.h>

typedef struct {
  PyObject_HEAD
  tether_actor a;
  PyObject *kept; /* raised exceptions of the constructor and methods, by key (errors.c) */
} actor_object;

#define ACTOR(self) (((actor_object *)(self))->a)

int tpy_actor_get(PyObject *o, tether_actor *out) {
  if (!PyObject_TypeCheck(o, &tpy_actor_type)) {
    PyErr_SetString(PyExc_TypeError, "expected a tether.Actor");
    return 0;
  }
  if (ACTOR(o).id == 0) {
    PyErr_SetString(PyExc_ValueError, "the actor was closed");
    return 0;
  }
  *out = ACTOR(o);
  return 1;
}

static int actor_live(PyObject *self) {
  tether_actor a;
  return tpy_actor_get(self, &a);
}

/* group_specs: the tether_group_spec array for {name: threads}; names borrowed from the
 * dict's keys (copied by the library). Sets *n; NULL with an exception on bad input. */
static tether_group_spec *group_specs(PyObject *groups, size_t *n) {
  *n = 0;
  if (groups == Py_None) return NULL;
  if (!PyDict_Check(groups)) {
    PyErr_SetString(PyExc_TypeError, "groups must be a dict {name: threads}");
    return NULL;
  }
  const Py_ssize_t count = PyDict_GET_SIZE(groups);
  tether_group_spec *specs = PyMem_Calloc(count > 0 ? (size_t)count : 1, sizeof *specs);
  if (specs == NULL) return (tether_group_spec *)PyErr_NoMemory();
  Py_ssize_t pos = 0, i = 0;
  PyObject *k, *v;
  while (PyDict_Next(groups, &pos, &k, &v)) {
    const long threads = PyLong_Check(v) ? PyLong_AsLong(v) : -1;
    specs[i].name = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
    if (specs[i].name == NULL || threads < 0 || threads > UINT32_MAX) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "groups must map str names to thread counts");
      PyMem_Free(specs);
      return NULL;
    }
    specs[i++].threads = (uint32_t)threads;
  }
  *n = (size_t)count;
  return specs;
}

/* _tether.create_actor(factory, args, kwargs, name, groups, cpu, mailbox_capacity, kept,
 * idle_spin_ns) — idle_spin_ns < 0: the library's default. */
PyObject *tpy_actor_create(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *names[] = {"factory", "args", "kwargs", "name", "groups", "cpu", "mailbox_capacity", "kept",
                          "idle_spin_ns", NULL};
  PyObject *factory, *fargs, *fkwargs, *groups, *kept;
  const char *name = NULL;
  int cpu = -1;
  Py_ssize_t mailbox = 0;
  long long idle_spin_ns = -1;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO!O!zOinO!L", names, &factory, &PyTuple_Type, &fargs, &PyDict_Type,
                                   &fkwargs, &name, &groups, &cpu, &mailbox, &PyDict_Type, &kept, &idle_spin_ns))
    return NULL;
  if (mailbox < 0) {
    PyErr_SetString(PyExc_ValueError, "mailbox_capacity must be >= 0");
    return NULL;
  }
  size_t n_groups = 0;
  tether_group_spec *specs = group_specs(groups, &n_groups);
  if (specs == NULL && PyErr_Occurred()) return NULL;
  actor_object *ao = PyObject_New(actor_object, &tpy_actor_type);
  if (ao == NULL) {
    PyMem_Free(specs);
    return NULL;
  }
  ao->a.id = 0;
  ao->kept = Py_NewRef(kept);
  tether_actor_options o;
  tether_actor_options_init(&o);
  o.name = name;
  o.groups = specs;
  o.group_count = n_groups;
  o.mailbox_capacity = (size_t)mailbox;
  tether_status rc = TETHER_OK;
  if (cpu != -1 || idle_spin_ns >= 0) {
    /* An executor of its own (pinned, or with its idle spin); its handle is released once
     * the actor is on it (the thread then lives as long as the actor). */
    tether_executor_options eo;
    tether_executor_options_init(&eo);
    eo.name = name;
    eo.cpu = cpu;
    if (idle_spin_ns >= 0) eo.idle_spin_ns = idle_spin_ns;
    rc = tether_executor_create(&eo, &o.executor);
  }
  tpy_call *c = rc == TETHER_OK ? tpy_call_new(factory, fargs, fkwargs, kept, 0) : NULL;
  if (rc == TETHER_OK && c == NULL) rc = TETHER_E_NO_MEMORY;
  if (c != NULL) rc = tether_actor_create(&o, tpy_run_ctor, tpy_run_dtor, c, tpy_call_drop, &ao->a);
  if (o.executor.id) tether_executor_release_nowait(o.executor);
  PyMem_Free(specs);
  if (rc != TETHER_OK) {
    Py_DECREF(ao);
    if (PyErr_Occurred()) return NULL;
    return tpy_raise_status(rc);
  }
  return (PyObject *)ao;
}

static void actor_dealloc(PyObject *self) {
  actor_object *ao = (actor_object *)self;
  if (ao->a.id) tether_actor_release_nowait(ao->a); /* a finalizer never waits */
  Py_XDECREF(ao->kept);
  PyObject_Free(self);
}

/* submit: call(group, fn, args, kwargs, future_cls) and tell(group, fn, args, kwargs). */
static PyObject *submit(PyObject *self, PyObject *const *args, Py_ssize_t nargs, int with_future) {
  if (nargs != 4 + with_future) {
    PyErr_SetString(PyExc_TypeError, "internal: wrong argument count");
    return NULL;
  }
  if (!actor_live(self)) return NULL;
  const char *group = args[0] == Py_None ? NULL : PyUnicode_AsUTF8(args[0]);
  if (args[0] != Py_None && group == NULL) return NULL;
  if (!PyTuple_Check(args[2])) {
    PyErr_SetString(PyExc_TypeError, "internal: args must be a tuple");
    return NULL;
  }
  PyObject *kwargs = PyDict_Check(args[3]) ? args[3] : NULL;
  tpy_call *c = tpy_call_new(args[1], args[2], kwargs, ((actor_object *)self)->kept,
                             with_future ? TPY_CALL_RESULT : 0);
  if (c == NULL) return NULL;
  tether_future f = {0};
  const tether_status rc =
      tether_actor_call(ACTOR(self), group, tpy_run_method, c, tpy_call_drop, with_future ? &f : NULL);
  if (rc != TETHER_OK) return tpy_raise_status(rc); /* c was dropped */
  if (!with_future) Py_RETURN_NONE;
  return tpy_future_wrap(args[4], f, ((actor_object *)self)->kept, 0, 0);
}

static PyObject *actor_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  return submit(self, args, nargs, 1);
}
static PyObject *actor_tell(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  return submit(self, args, nargs, 0);
}

typedef struct {
  tether_actor a;
  int32_t mode;
} stop_ctx;

static tether_status stop_slice(void *ctx, int64_t ns) {
  const stop_ctx *s = ctx;
  return tether_actor_stop(s->a, s->mode, ns);
}

/* stop(mode, timeout) -> bool: the destructor has run in time. */
static PyObject *actor_stop(PyObject *self, PyObject *args) {
  int mode = 0;
  PyObject *timeout_obj = Py_None;
  if (!PyArg_ParseTuple(args, "i|O", &mode, &timeout_obj)) return NULL;
  if (!actor_live(self)) return NULL;
  const double timeout = tpy_timeout_arg(timeout_obj);
  if (timeout == -2) return NULL;
  stop_ctx s = {ACTOR(self), mode};
  const int done = tpy_wait(stop_slice, &s, timeout);
  return done < 0 ? NULL : PyBool_FromLong(done);
}

/* state() -> (state, cause or None) */
static PyObject *actor_state(PyObject *self, PyObject *unused) {
  (void)unused;
  if (!actor_live(self)) return NULL;
  int32_t state = 0;
  tether_error cause = {0};
  const tether_status rc = tether_actor_state(ACTOR(self), &state, &cause);
  if (rc != TETHER_OK) return tpy_raise_status(rc);
  PyObject *exc = cause.id ? tpy_error_object(cause, ((actor_object *)self)->kept, 0) : Py_NewRef(Py_None);
  if (cause.id) tether_error_release(cause);
  if (exc == NULL) return NULL;
  PyObject *out = Py_BuildValue("(iO)", (int)state, exc);
  Py_DECREF(exc);
  return out;
}

static PyObject *actor_stats(PyObject *self, PyObject *unused) {
  (void)unused;
  if (!actor_live(self)) return NULL;
  tether_actor_stats s;
  s.struct_size = sizeof s;
  const tether_status rc = tether_actor_get_stats(ACTOR(self), &s);
  if (rc != TETHER_OK) return tpy_raise_status(rc);
  return Py_BuildValue("(KKKKKKK)", (unsigned long long)s.queued, (unsigned long long)s.completed,
                       (unsigned long long)s.failed, (unsigned long long)s.cancelled,
                       (unsigned long long)s.rejected, (unsigned long long)s.errors_dropped,
                       (unsigned long long)s.os_thread_id);
}

static tether_status actor_error_at(void *ctx, size_t i, tether_error *out) {
  return tether_actor_error(*(tether_actor *)ctx, i, out);
}

static PyObject *actor_errors(PyObject *self, PyObject *unused) {
  (void)unused;
  if (!actor_live(self)) return NULL;
  return tpy_error_list(actor_error_at, &((actor_object *)self)->a, ((actor_object *)self)->kept);
}

/* close(): stop(DRAIN) waited to the end with the GIL released, then the threads joined.
 * From the actor's own threads the library makes it a release_nowait. */
static PyObject *actor_close(PyObject *self, PyObject *unused) {
  (void)unused;
  actor_object *ao = (actor_object *)self;
  if (ao->a.id == 0) Py_RETURN_NONE;
  const tether_actor a = ao->a;
  ao->a.id = 0;
  tether_status rc;
  Py_BEGIN_ALLOW_THREADS
  rc = tether_actor_release(a);
  Py_END_ALLOW_THREADS
  if (rc != TETHER_OK) return tpy_raise_status(rc);
  Py_RETURN_NONE;
}

static PyMethodDef actor_methods[] = {
    {"call", (PyCFunction)(void (*)(void))actor_call, METH_FASTCALL, "call(group, fn, args, kwargs, cls) -> Future"},
    {"tell", (PyCFunction)(void (*)(void))actor_tell, METH_FASTCALL, "tell(group, fn, args, kwargs)"},
    {"stop", actor_stop, METH_VARARGS, "stop(mode, timeout=None) -> bool"},
    {"state", actor_state, METH_NOARGS, "(state, cause)"},
    {"stats", actor_stats, METH_NOARGS, "(queued, completed, failed, cancelled, rejected, errors_dropped, tid)"},
    {"errors", actor_errors, METH_NOARGS, "kept errors of fire-and-forget calls"},
    {"close", actor_close, METH_NOARGS, "stop(drain), wait, free"},
    {NULL, NULL, 0, NULL}};

PyTypeObject tpy_actor_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tether._tether.ActorHandle",
    .tp_basicsize = sizeof(actor_object),
    .tp_dealloc = actor_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One tether_actor (internal: see tether.Actor).",
    .tp_methods = actor_methods,
};
