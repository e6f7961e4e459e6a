/* future.c — tether futures behind tether.Future (a concurrent.futures.Future).
 *
 * A FutureHandle owns one tether_future. Whoever first sees the work terminal settles the
 * Python future with its outcome — the library's on_done notice (on the thread that ended
 * the work) or a waiter that returned from tether_future_wait — under the GIL, which makes
 * `settled` a plain flag. Settling takes the result (once) and breaks the handle -> future
 * reference, so the pair is freed with the Python future.
 *
 * Waiters first: while a thread waits in result(), the notice does not take the GIL at all
 * (it would only contend with the waiter it just woke, on the round trip's critical path):
 * it sets TPY_DEFERRED, and the waiter settles and drops the notice's reference.
 * Memory ordering: ctl is seq_cst. The notice sets TPY_DEFERRED only by a compare-exchange
 * that sees a waiter count > 0; each waiter lowers the count, then (GIL held) settles the
 * terminal future and clears TPY_DEFERRED, dropping the reference if it was set. So the
 * notice's work is done once, by itself or by a waiter that was still inside.
 */
#include "tpy.h"

#include <time.h>

/* ---- bounded, interruptible waits ---- */

#define TPY_SLICE_NS 50000000LL /* between two checks for Ctrl-C */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int tpy_wait(tpy_wait_fn fn, void *ctx, double timeout_s) {
  const double deadline = timeout_s >= 0 ? now_s() + timeout_s : 0;
  for (;;) {
    int64_t slice = TPY_SLICE_NS;
    if (timeout_s >= 0) {
      const double left = deadline - now_s();
      slice = left <= 0 ? 0 : (left * 1e9 < (double)slice ? (int64_t)(left * 1e9) : slice);
    }
    tether_status rc;
    Py_BEGIN_ALLOW_THREADS
    rc = fn(ctx, slice);
    Py_END_ALLOW_THREADS
    if (rc == TETHER_OK) return 1;
    if (rc != TETHER_E_TIMEOUT) {
      tpy_raise_status(rc);
      return -1;
    }
    if (PyErr_CheckSignals() < 0) return -1; /* KeyboardInterrupt from Ctrl-C, on the main thread */
    if (tpy_exiting()) {
      tether_status s = TETHER_E_SHUTDOWN;
      tpy_raise_status(s);
      return -1;
    }
    if (timeout_s >= 0 && now_s() >= deadline) return 0;
  }
}

double tpy_timeout_arg(PyObject *o) {
  if (o == NULL || o == Py_None) return -1;
  const double t = PyFloat_AsDouble(o);
  if (t == -1 && PyErr_Occurred()) return -2;
  if (t < 0 || t != t) {
    PyErr_SetString(PyExc_ValueError, "timeout must be None or a number of seconds >= 0");
    return -2;
  }
  return t;
}

/* ---- FutureHandle ---- */

static tether_status future_wait_slice(void *ctx, int64_t ns) {
  return tether_future_wait(*(tether_future *)ctx, ns);
}

/* outcome: the settled value (kind 0), exception (1) or cancellation (2) of a terminal
 * future; a new reference in *payload. -1 with an exception set on failure. */
static int outcome(tpy_future_handle *h, int32_t state, PyObject **payload) {
  if (state == TETHER_SUCCEEDED) {
    if (h->outputs == 0) {
      void *p = NULL;
      const tether_status rc = tether_future_take_result(h->f, &p);
      if (rc != TETHER_OK) return tpy_raise_status(rc), -1;
      *payload = p ? (PyObject *)p : Py_NewRef(Py_None); /* p: owned, taken once */
      return 0;
    }
    void *outs[64];
    void **v = h->outputs <= 64 ? outs : PyMem_Calloc((size_t)h->outputs, sizeof(void *));
    if (v == NULL) return PyErr_NoMemory(), -1;
    const tether_status rc = tether_future_outputs(h->f, v, (size_t)h->outputs); /* hands them to us */
    PyObject *tuple = rc == TETHER_OK ? PyTuple_New(h->outputs) : NULL;
    if (rc != TETHER_OK) tpy_raise_status(rc);
    for (int i = 0; tuple && i < h->outputs; ++i) PyTuple_SET_ITEM(tuple, i, v[i] ? (PyObject *)v[i] : Py_NewRef(Py_None));
    if (v != outs) PyMem_Free(v);
    if (tuple == NULL) return -1;
    if (h->single) {
      *payload = Py_NewRef(PyTuple_GET_ITEM(tuple, 0));
      Py_DECREF(tuple);
    } else {
      *payload = tuple;
    }
    return 0;
  }
  tether_error e = {0};
  const tether_status rc = tether_future_error(h->f, &e);
  if (rc != TETHER_OK) return tpy_raise_status(rc), -1;
  *payload = e.id ? tpy_error_object(e, h->kept, 1) : Py_NewRef(Py_None);
  if (e.id) tether_error_release(e);
  if (*payload == NULL) return -1;
  return state == TETHER_CANCELLED ? 2 : 1;
}

/* settle: settles the Python future if the work is terminal and nobody did. GIL held. */
static int settle(tpy_future_handle *h) {
  if (h->settled) return 0;
  int32_t state = TETHER_PENDING;
  if (tether_future_poll(h->f, &state) != TETHER_OK) return 0;
  if (state != TETHER_SUCCEEDED && state != TETHER_FAILED && state != TETHER_CANCELLED) return 0;
  h->settled = 1;
  PyObject *pyf = h->pyfuture; /* our reference, now */
  h->pyfuture = NULL;
  PyObject *payload = NULL;
  const int kind = outcome(h, state, &payload);
  int ret = -1;
  if (kind >= 0) {
    PyObject *r = PyObject_CallMethod(pyf, "_tether_settle", "iO", kind, payload);
    ret = r ? 0 : -1;
    Py_XDECREF(r);
    Py_DECREF(payload);
  } else {
    /* Could not read the outcome: still settle, with the reason, so no waiter hangs. */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *r = PyObject_CallMethod(pyf, "_tether_settle", "iO", 1, value ? value : Py_None);
    Py_XDECREF(r);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    ret = r ? 0 : -1;
  }
  Py_DECREF(pyf);
  return ret;
}

/* on_done notice: consumes the handle reference registered with it (arg_drop is NULL). */
static void future_done(void *arg) {
  tpy_future_handle *h = arg;
  unsigned ctl = atomic_load(&h->ctl);
  while (ctl >= 2) {
    /* Read before the exchange: once it succeeds the waiter may free h at any moment. The
     * waiter registers before raising ctl and leaves after lowering it, so w is its record. */
    tpy_waiter *w = atomic_load(&h->waiter);
    if (atomic_compare_exchange_weak(&h->ctl, &ctl, ctl | TPY_DEFERRED)) {
      if (w != NULL) tpy_waiter_wake(w); /* records are never freed */
      return;                            /* the waiter settles */
    }
  }
  tpy_gil g = tpy_gil_enter(NULL);
  if (g.how == TPY_GIL_REFUSED) return; /* exiting: leaked with the interpreter */
  tpy_in_callback_enter();
  if (settle(h) < 0) PyErr_WriteUnraisable((PyObject *)h);
  tpy_waiter *w = atomic_load(&h->waiter); /* registered after we read ctl: wake it now */
  if (w != NULL) tpy_waiter_wake(w);
  Py_DECREF(h);
  tpy_in_callback_leave();
  tpy_gil_leave(g);
}

PyObject *tpy_future_wrap(PyObject *cls, tether_future f, PyObject *kept, int outputs, int single) {
  PyObject *pyf = PyObject_CallNoArgs(cls);
  tpy_future_handle *h = pyf ? PyObject_New(tpy_future_handle, &tpy_future_handle_type) : NULL;
  if (h == NULL) {
    Py_XDECREF(pyf);
    tether_future_release(f);
    return NULL;
  }
  h->f = f;
  h->pyfuture = Py_NewRef(pyf);
  h->kept = Py_XNewRef(kept);
  h->outputs = outputs;
  h->single = single;
  h->settled = 0;
  atomic_init(&h->ctl, 0u);
  atomic_init(&h->waiter, (tpy_waiter *)NULL);
  if (PyObject_SetAttrString(pyf, "_h", (PyObject *)h) < 0) {
    Py_DECREF(h);
    Py_DECREF(pyf);
    return NULL;
  }
  Py_INCREF(h); /* for future_done */
  const tether_status rc = tether_future_on_done(f, future_done, h, NULL);
  if (rc != TETHER_OK) {
    Py_DECREF(h); /* not run: take its reference back */
    Py_CLEAR(h->pyfuture);
    Py_DECREF(h);
    Py_DECREF(pyf);
    return tpy_raise_status(rc);
  }
  Py_DECREF(h); /* pyf._h keeps it */
  return pyf;
}

static void handle_dealloc(PyObject *self) {
  tpy_future_handle *h = (tpy_future_handle *)self;
  if (h->f.id) tether_future_release(h->f); /* never waits; the work goes on */
  Py_XDECREF(h->pyfuture);
  Py_XDECREF(h->kept);
  PyObject_Free(self);
}

static int terminal(tpy_future_handle *h) {
  int32_t state = TETHER_PENDING;
  return tether_future_poll(h->f, &state) != TETHER_OK || state >= TETHER_SUCCEEDED;
}

/* sleep_until_done: sleeps on w, woken by the notice, in slices for Ctrl-C. As tpy_wait. */
static int sleep_until_done(tpy_future_handle *h, tpy_waiter *w, double timeout_s) {
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  const double start = (double)t0.tv_sec + (double)t0.tv_nsec * 1e-9;
  for (;;) {
    if (terminal(h)) return 1;
    int64_t slice = TPY_SLICE_NS;
    if (timeout_s >= 0) {
      const double left = start + timeout_s - now_s();
      if (left <= 0) return 0;
      if (left * 1e9 < (double)slice) slice = (int64_t)(left * 1e9) + 1;
    }
    Py_BEGIN_ALLOW_THREADS
    tpy_waiter_sleep(w, slice);
    Py_END_ALLOW_THREADS
    if (terminal(h)) return 1;
    if (PyErr_CheckSignals() < 0) return -1; /* KeyboardInterrupt from Ctrl-C, on the main thread */
    if (tpy_exiting()) return tpy_raise_status(TETHER_E_SHUTDOWN), -1;
  }
}

/* wait(timeout) -> bool: True once the work is terminal (and the future settled). */
static PyObject *handle_wait(PyObject *self, PyObject *arg) {
  tpy_future_handle *h = (tpy_future_handle *)self;
  const double timeout = tpy_timeout_arg(arg);
  if (timeout == -2) return NULL;
  /* Only on a library thread can the wait be on itself: there a 1 ns library wait answers
   * Deadlock first. (Not everywhere: even 1 ns sleeps for the kernel's timer slack, ~50 us.) */
  tether_status probe = TETHER_E_TIMEOUT;
  if (tpy_on_library_thread()) {
    Py_BEGIN_ALLOW_THREADS
    probe = tether_future_wait(h->f, 1);
    Py_END_ALLOW_THREADS
  }
  int done;
  if (probe == TETHER_OK) {
    done = 1;
  } else if (probe != TETHER_E_TIMEOUT) {
    return tpy_raise_status(probe);
  } else {
    tpy_waiter *w = tpy_waiter_mine();
    tpy_waiter *none = NULL;
    const int mine = w != NULL && atomic_compare_exchange_strong(&h->waiter, &none, w);
    atomic_fetch_add(&h->ctl, 2u);
    done = mine ? sleep_until_done(h, w, timeout) /* a second waiter: the library's wait */
                : tpy_wait(future_wait_slice, &h->f, timeout);
    atomic_fetch_sub(&h->ctl, 2u);
    if (mine) atomic_store(&h->waiter, (tpy_waiter *)NULL);
  }
  const int settled = settle(h); /* a no-op unless terminal and not yet settled */
  if (atomic_fetch_and(&h->ctl, ~TPY_DEFERRED) & TPY_DEFERRED) Py_DECREF(h); /* the notice's */
  if (done < 0 || settled < 0) return NULL;
  return PyBool_FromLong(done);
}

static PyObject *handle_cancel(PyObject *self, PyObject *unused) {
  (void)unused;
  tpy_future_handle *h = (tpy_future_handle *)self;
  const tether_status rc = tether_future_cancel(h->f); /* never blocks; may settle us at once */
  if (rc != TETHER_OK) return tpy_raise_status(rc);
  if (settle(h) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *handle_poll(PyObject *self, PyObject *unused) {
  (void)unused;
  int32_t state = 0;
  const tether_status rc = tether_future_poll(((tpy_future_handle *)self)->f, &state);
  if (rc != TETHER_OK) return tpy_raise_status(rc);
  return PyLong_FromLong(state);
}

static PyMethodDef handle_methods[] = {
    {"wait", handle_wait, METH_O, "wait(timeout) -> bool, with the GIL released"},
    {"cancel", handle_cancel, METH_NOARGS, "asks the work to stop; pending work never runs"},
    {"poll", handle_poll, METH_NOARGS, "the tether state (0 pending .. 4 cancelled)"},
    {NULL, NULL, 0, NULL}};

PyTypeObject tpy_future_handle_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tether._tether.FutureHandle",
    .tp_basicsize = sizeof(tpy_future_handle),
    .tp_dealloc = handle_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One tether_future (internal: see tether.Future).",
    .tp_methods = handle_methods,
};
