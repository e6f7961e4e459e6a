/* errors.c — statuses and tether_error handles as Python exceptions.
 *
 * The exception classes live in tether/_errors.py; its make_error(code, message, thread,
 * user_code, type_name, cause) builds one, and is handed to the extension at import.
 *
 * A Python exception raised by user code on a library thread is recorded as a
 * TETHER_E_PANIC failure whose user_code is a key into the owner's `kept` dict (a Runner's,
 * an Actor's, a Graph's), where the exception object itself waits with its traceback. Read
 * back, the error is that same object: same type, message, traceback, plus a note naming
 * the thread it was raised on.
 */
#include "tpy.h"

static PyObject *g_make_error; /* GIL */
static long long g_next_key;   /* GIL: keys of kept exceptions, unique in the process */

PyObject *tpy_set_hooks(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *make_error = NULL, *name_hook = NULL;
  if (!PyArg_ParseTuple(args, "OO", &make_error, &name_hook)) return NULL;
  extern PyObject *tpy_set_name_hook(PyObject *hook);
  Py_XSETREF(g_make_error, Py_NewRef(make_error));
  return tpy_set_name_hook(name_hook);
}

static PyObject *make_error(int32_t code, const char *message, const char *thread, long long user_code,
                            const char *type_name, PyObject *cause) {
  if (g_make_error == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "tether: error hooks not installed");
    return NULL;
  }
  return PyObject_CallFunction(g_make_error, "issLsO", (int)code, message, thread, user_code, type_name,
                               cause ? cause : Py_None);
}

PyObject *tpy_raise_status(tether_status rc) {
  char buf[512];
  const size_t n = tether_last_error_message(buf, sizeof buf);
  PyObject *exc = make_error(rc, n > 0 ? buf : tether_status_describe(rc), "", 0, "", NULL);
  if (exc != NULL) {
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  }
  return NULL;
}

/* copy_text: a tether string accessor's text, malloc'd (NULL on no memory). */
static char *copy_text(size_t (*get)(tether_error, char *, size_t), tether_error e) {
  const size_t n = get(e, NULL, 0);
  char *buf = PyMem_Malloc(n + 1);
  if (buf == NULL) return NULL;
  get(e, buf, n + 1);
  return buf;
}

/* kept_exception: the kept exception of key, with its original traceback; a new reference,
 * or NULL (no exception set) when it is not kept. */
static PyObject *kept_exception(PyObject *kept, long long key, int pop) {
  PyObject *k = PyLong_FromLongLong(key);
  if (k == NULL) return NULL;
  PyObject *entry = PyDict_GetItemWithError(kept, k); /* borrowed */
  PyObject *exc = NULL;
  if (entry != NULL && PyTuple_Check(entry) && PyTuple_GET_SIZE(entry) == 2) {
    exc = Py_NewRef(PyTuple_GET_ITEM(entry, 0));
    PyObject *tb = PyTuple_GET_ITEM(entry, 1);
    if (tb != Py_None) PyException_SetTraceback(exc, tb);
    if (pop && PyDict_DelItem(kept, k) < 0) PyErr_Clear();
  }
  Py_DECREF(k);
  return exc;
}

PyObject *tpy_error_object(tether_error e, PyObject *kept, int pop) {
  const int32_t code = tether_error_code(e);
  const long long user_code = (long long)tether_error_user_code(e);
  if (code == TETHER_E_PANIC && kept != NULL) {
    PyObject *exc = kept_exception(kept, user_code, pop);
    if (exc != NULL || PyErr_Occurred()) return exc;
  }
  PyObject *cause_obj = NULL;
  tether_error cause = {0};
  if (tether_error_cause(e, &cause) == TETHER_OK && cause.id != 0) {
    cause_obj = tpy_error_object(cause, kept, 0);
    tether_error_release(cause);
    if (cause_obj == NULL) return NULL;
  }
  char *message = copy_text(tether_error_message, e);
  char *thread = copy_text(tether_error_thread_name, e);
  char *type_name = copy_text(tether_error_type_name, e);
  PyObject *exc = (message && thread && type_name)
                      ? make_error(code, message, thread, user_code, type_name, cause_obj)
                      : PyErr_NoMemory();
  PyMem_Free(message);
  PyMem_Free(thread);
  PyMem_Free(type_name);
  Py_XDECREF(cause_obj);
  return exc;
}

/* describe: "ValueError: bad input" for exc, or just the type's name. */
static PyObject *describe(PyObject *exc) {
  PyObject *text = PyObject_Str(exc);
  if (text == NULL) {
    PyErr_Clear();
    return PyUnicode_FromString(Py_TYPE(exc)->tp_name);
  }
  PyObject *out = PyUnicode_GET_LENGTH(text) > 0 ? PyUnicode_FromFormat("%s: %U", Py_TYPE(exc)->tp_name, text)
                                                 : PyUnicode_FromString(Py_TYPE(exc)->tp_name);
  Py_DECREF(text);
  return out;
}

tether_status tpy_record_exception(tether_task *t, PyObject *kept) {
  PyObject *type = NULL, *value = NULL, *tb = NULL;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (value == NULL) value = Py_NewRef(Py_None);
  if (tb != NULL && value != Py_None) PyException_SetTraceback(value, tb);
  const char *thread = tether_task_thread_name(t);
  const long long key = ++g_next_key;
  int kept_ok = 0;
  if (value != Py_None && PyExceptionInstance_Check(value)) {
    /* The thread's name travels with the exception: an attribute and a note (shown in
     * every traceback print, and kept by pickling, so also across Ray). */
    PyObject *name = PyUnicode_DecodeUTF8(thread, (Py_ssize_t)strlen(thread), "replace");
    if (name != NULL && PyObject_SetAttrString(value, "tether_thread", name) < 0) PyErr_Clear();
    PyObject *note = name ? PyUnicode_FromFormat("raised in tether thread '%U'", name) : NULL;
    PyObject *r = note ? PyObject_CallMethod(value, "add_note", "O", note) : NULL;
    if (r == NULL) PyErr_Clear();
    Py_XDECREF(r);
    Py_XDECREF(note);
    Py_XDECREF(name);
    PyObject *k = PyLong_FromLongLong(key);
    PyObject *entry = k ? PyTuple_Pack(2, value, tb ? tb : Py_None) : NULL;
    kept_ok = entry != NULL && kept != NULL && PyDict_SetItem(kept, k, entry) == 0;
    if (!kept_ok) PyErr_Clear();
    Py_XDECREF(entry);
    Py_XDECREF(k);
  }
  PyObject *text = value != Py_None ? describe(value) : NULL;
  const char *msg = text ? PyUnicode_AsUTF8(text) : NULL;
  if (msg == NULL) PyErr_Clear();
  const tether_status rc =
      tether_task_fail_with(t, TETHER_E_PANIC, kept_ok ? key : 0, msg ? msg : "Python exception");
  Py_XDECREF(text);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  return rc == TETHER_E_PANIC ? rc : TETHER_E_PANIC;
}

PyObject *tpy_error_list(tpy_error_at_fn at, void *ctx, PyObject *kept) {
  PyObject *list = PyList_New(0);
  for (size_t i = 0; list; ++i) {
    tether_error e = {0};
    const tether_status rc = at(ctx, i, &e);
    if (rc == TETHER_E_INVALID_ARGUMENT) break; /* past the end */
    if (rc != TETHER_OK) {
      Py_DECREF(list);
      return tpy_raise_status(rc);
    }
    PyObject *exc = tpy_error_object(e, kept, 0);
    tether_error_release(e);
    if (exc == NULL || PyList_Append(list, exc) < 0) Py_CLEAR(list);
    Py_XDECREF(exc);
  }
  return list;
}
