/* graph.c — tether_graph and tether_compiled behind tether.Graph and tether.Compiled.
 *
 * Node values are Python objects: the execution owns one reference to each (value_drop
 * is tpy_object_drop), None travels as NULL, and the outputs pass to the Python future.
 */
#include "tpy.h"

typedef struct {
  PyObject_HEAD
  tether_graph g;
  PyObject *kept; /* exceptions raised by nodes, by key; shared with the compiled graphs */
} graph_object;

typedef struct {
  PyObject_HEAD
  tether_compiled c;
  PyObject *kept;
  int n_outputs, single;
} compiled_object;

static PyObject *graph_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *names[] = {"kept", NULL};
  PyObject *kept;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O!", names, &PyDict_Type, &kept)) return NULL;
  graph_object *go = (graph_object *)type->tp_alloc(type, 0);
  if (go == NULL) return NULL;
  go->kept = Py_NewRef(kept);
  const tether_status rc = tether_graph_create(&go->g);
  if (rc != TETHER_OK) {
    Py_DECREF(go);
    return tpy_raise_status(rc);
  }
  return (PyObject *)go;
}

static void graph_dealloc(PyObject *self) {
  graph_object *go = (graph_object *)self;
  if (go->g.id) tether_graph_release(go->g);
  Py_XDECREF(go->kept);
  Py_TYPE(self)->tp_free(self);
}

static int graph_live(graph_object *go) {
  if (go->g.id) return 1;
  PyErr_SetString(PyExc_ValueError, "the graph was closed");
  return 0;
}

/* add(actor, group, fn) -> node index */
static PyObject *graph_add(PyObject *self, PyObject *args) {
  graph_object *go = (graph_object *)self;
  PyObject *actor_obj, *group_obj, *fn;
  if (!PyArg_ParseTuple(args, "OOO", &actor_obj, &group_obj, &fn) || !graph_live(go)) return NULL;
  tether_actor a;
  if (!tpy_actor_get(actor_obj, &a)) return NULL;
  const char *group = group_obj == Py_None ? NULL : PyUnicode_AsUTF8(group_obj);
  if (group_obj != Py_None && group == NULL) return NULL;
  tpy_call *c = tpy_call_new(fn, NULL, NULL, go->kept, TPY_CALL_KEEP);
  if (c == NULL) return NULL;
  uint32_t node = 0;
  const tether_status rc = tether_graph_add_node(go->g, a, group, tpy_run_node, c, tpy_call_drop, &node);
  return rc == TETHER_OK ? PyLong_FromUnsignedLong(node) : tpy_raise_status(rc);
}

/* edge(from, to): from -1 is the execution's input. */
static PyObject *graph_edge(PyObject *self, PyObject *args) {
  graph_object *go = (graph_object *)self;
  long from = 0, to = 0;
  if (!PyArg_ParseTuple(args, "ll", &from, &to) || !graph_live(go)) return NULL;
  if (from < -1 || to < 0 || from > (long)UINT32_MAX - 1 || to > (long)UINT32_MAX - 1) {
    PyErr_SetString(PyExc_ValueError, "no such node");
    return NULL;
  }
  const tether_status rc =
      tether_graph_add_edge(go->g, from < 0 ? TETHER_GRAPH_INPUT : (uint32_t)from, (uint32_t)to);
  if (rc != TETHER_OK) return tpy_raise_status(rc);
  Py_RETURN_NONE;
}

/* compile(outputs: tuple of node indices, channel_capacity, single) -> Compiled */
static PyObject *graph_compile(PyObject *self, PyObject *args) {
  graph_object *go = (graph_object *)self;
  PyObject *outputs;
  Py_ssize_t capacity = 8;
  int single = 0;
  if (!PyArg_ParseTuple(args, "O!np", &PyTuple_Type, &outputs, &capacity, &single) || !graph_live(go)) return NULL;
  const Py_ssize_t n = PyTuple_GET_SIZE(outputs);
  if (capacity < 1 || n > 1024) {
    PyErr_SetString(PyExc_ValueError, capacity < 1 ? "channel_capacity must be >= 1" : "too many outputs");
    return NULL;
  }
  uint32_t nodes[1024];
  for (Py_ssize_t i = 0; i < n; ++i) {
    const unsigned long v = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(outputs, i));
    if (v == (unsigned long)-1 && PyErr_Occurred()) return NULL;
    nodes[i] = (uint32_t)v;
  }
  tether_status rc = tether_graph_set_outputs(go->g, nodes, (size_t)n);
  if (rc != TETHER_OK) return tpy_raise_status(rc);
  compiled_object *co = PyObject_New(compiled_object, &tpy_compiled_type);
  if (co == NULL) return NULL;
  co->c.id = 0;
  co->kept = Py_NewRef(go->kept);
  co->n_outputs = (int)n;
  co->single = single;
  tether_compile_options o;
  tether_compile_options_init(&o);
  o.channel_capacity = (size_t)capacity;
  o.value_drop = tpy_object_drop;
  rc = tether_graph_compile(go->g, &o, &co->c); /* installs loops; never waits on user code */
  if (rc != TETHER_OK) {
    Py_DECREF(co);
    tether_error e = {0};
    if (tether_graph_error(go->g, &e) == TETHER_OK && e.id) {
      PyObject *exc = tpy_error_object(e, NULL, 0); /* names the node, cycle or busy thread */
      tether_error_release(e);
      if (exc) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
      }
      return NULL;
    }
    return tpy_raise_status(rc);
  }
  return (PyObject *)co;
}

static PyObject *graph_close(PyObject *self, PyObject *unused) {
  (void)unused;
  graph_object *go = (graph_object *)self;
  if (go->g.id) tether_graph_release(go->g);
  go->g.id = 0;
  Py_RETURN_NONE;
}

static PyMethodDef graph_methods[] = {
    {"add", graph_add, METH_VARARGS, "add(actor, group, fn) -> node"},
    {"edge", graph_edge, METH_VARARGS, "edge(from, to); from -1 is the input"},
    {"compile", graph_compile, METH_VARARGS, "compile(outputs, channel_capacity, single) -> Compiled"},
    {"close", graph_close, METH_NOARGS, "release the graph (compiled graphs live on)"},
    {NULL, NULL, 0, NULL}};

PyTypeObject tpy_graph_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tether._tether.GraphHandle",
    .tp_basicsize = sizeof(graph_object),
    .tp_dealloc = graph_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One tether_graph (internal: see tether.Graph).",
    .tp_methods = graph_methods,
    .tp_new = graph_new,
};

/* ---- Compiled ---- */

static void compiled_dealloc(PyObject *self) {
  compiled_object *co = (compiled_object *)self;
  if (co->c.id) tether_compiled_release_nowait(co->c);
  Py_XDECREF(co->kept);
  PyObject_Free(self);
}

/* execute(input, cls, timeout) -> Future. With a full channel, waits for room up to
 * timeout (None: forever) in slices with the GIL released. Each attempt hands the library
 * its own reference to input (dropped by it when the attempt fails). */
static PyObject *compiled_execute(PyObject *self, PyObject *args) {
  compiled_object *co = (compiled_object *)self;
  PyObject *input, *cls, *timeout_obj;
  if (!PyArg_ParseTuple(args, "OOO", &input, &cls, &timeout_obj)) return NULL;
  if (co->c.id == 0) {
    PyErr_SetString(PyExc_ValueError, "the compiled graph was closed");
    return NULL;
  }
  const double timeout = tpy_timeout_arg(timeout_obj);
  if (timeout == -2) return NULL;
  void *in = input == Py_None ? NULL : Py_NewRef(input);
  tether_future f = {0};
  tether_status rc = tether_compiled_execute(co->c, in, in ? tpy_object_drop : NULL, &f);
  if (rc == TETHER_E_QUEUE_FULL && timeout != 0) {
    const int64_t slice = 50000000;
    int64_t left = timeout < 0 ? -1 : (int64_t)(timeout * 1e9);
    while (rc == TETHER_E_QUEUE_FULL || rc == TETHER_E_TIMEOUT) {
      const int64_t this_slice = left < 0 || left > slice ? slice : left;
      in = input == Py_None ? NULL : Py_NewRef(input);
      Py_BEGIN_ALLOW_THREADS
      rc = tether_compiled_execute_timeout(co->c, in, in ? tpy_object_drop : NULL, &f, this_slice);
      Py_END_ALLOW_THREADS
      if (rc != TETHER_E_TIMEOUT) break;
      if (PyErr_CheckSignals() < 0) return NULL;
      if (left >= 0 && (left -= this_slice) <= 0) break;
    }
  }
  if (rc != TETHER_OK) return tpy_raise_status(rc);
  return tpy_future_wrap(cls, f, co->kept, co->n_outputs, co->single);
}

static PyObject *compiled_close(PyObject *self, PyObject *unused) {
  (void)unused;
  compiled_object *co = (compiled_object *)self;
  if (co->c.id) tether_compiled_release(co->c); /* never waits for user code */
  co->c.id = 0;
  Py_RETURN_NONE;
}

static PyMethodDef compiled_methods[] = {
    {"execute", compiled_execute, METH_VARARGS, "execute(input, cls, timeout) -> Future"},
    {"close", compiled_close, METH_NOARGS, "tear the loops down; executions not ended are cancelled"},
    {NULL, NULL, 0, NULL}};

PyTypeObject tpy_compiled_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tether._tether.CompiledHandle",
    .tp_basicsize = sizeof(compiled_object),
    .tp_dealloc = compiled_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One tether_compiled (internal: see tether.Compiled).",
    .tp_methods = compiled_methods,
};
