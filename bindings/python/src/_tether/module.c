/* module.c — the tether._tether extension module: its types and functions. */
#include "tpy.h"

static PyObject *version(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return Py_BuildValue("(Is)", (unsigned)tether_version(), tether_version_string());
}

static PyObject *status_names(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  PyObject *d = PyDict_New();
#define TPY_STATUS_ENTRY(suffix, value, description)                                   \
  if (d) {                                                                             \
    PyObject *v = Py_BuildValue("(ss)", #suffix, description);                         \
    PyObject *k = PyLong_FromLong(value);                                              \
    if (!v || !k || PyDict_SetItem(d, k, v) < 0) Py_CLEAR(d);                          \
    Py_XDECREF(v);                                                                     \
    Py_XDECREF(k);                                                                     \
  }
  TETHER_STATUS_MAP(TPY_STATUS_ENTRY)
#undef TPY_STATUS_ENTRY
  return d;
}

static PyObject *unjoined_threads(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyLong_FromSize_t(tether_debug_unjoined_threads());
}

static PyObject *fail_thread_create(PyObject *self, PyObject *arg) {
  (void)self;
  const unsigned long n = PyLong_AsUnsignedLong(arg);
  if (n == (unsigned long)-1 && PyErr_Occurred()) return NULL;
  tether_debug_fail_thread_create(n > UINT32_MAX ? UINT32_MAX : (uint32_t)n);
  Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"version", version, METH_NOARGS, "(encoded version, 'MAJOR.MINOR.PATCH') of the library"},
    {"status_names", status_names, METH_NOARGS, "{code: (name suffix, description)}"},
    {"set_hooks", tpy_set_hooks, METH_VARARGS, "set_hooks(make_error, name_thread)"},
    {"start_runner", (PyCFunction)(void (*)(void))tpy_runner_start, METH_VARARGS | METH_KEYWORDS, "starts a runner"},
    {"create_actor", (PyCFunction)(void (*)(void))tpy_actor_create, METH_VARARGS | METH_KEYWORDS, "creates an actor"},
    {"current_scope", tpy_current_scope, METH_NOARGS, "the Scope of the running tether callback, or None"},
    {"shutdown", tpy_shutdown_py, METH_VARARGS, "shutdown(grace_s, bound_s) -> threads still inside"},
    {"after_fork_child", tpy_after_fork_child, METH_NOARGS, "forget the threads a fork() left behind"},
    {"unjoined_threads", unjoined_threads, METH_NOARGS, "library threads not yet joined"},
    {"debug_fail_thread_create", fail_thread_create, METH_O, "testing aid: fail a later thread creation"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_tether", "The C layer of tether (see tether).",
                                        -1, module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__tether(void) {
  if (tether_version() >> 16 != TETHER_VERSION_MAJOR) {
    PyErr_SetString(PyExc_ImportError, "tether: the library's major version differs from the header's");
    return NULL;
  }
  PyTypeObject *types[] = {&tpy_scope_type, &tpy_future_handle_type, &tpy_runner_type, &tpy_actor_type,
                           &tpy_graph_type, &tpy_compiled_type};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
    if (PyType_Ready(types[i]) < 0) return NULL;
  if (tpy_gil_init() < 0) return NULL;
  PyObject *m = PyModule_Create(&module_def);
  if (m == NULL) return NULL;
  if (PyModule_AddObjectRef(m, "Scope", (PyObject *)&tpy_scope_type) < 0 ||
      PyModule_AddObjectRef(m, "GraphHandle", (PyObject *)&tpy_graph_type) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
