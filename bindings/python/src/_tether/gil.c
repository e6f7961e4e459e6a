/* gil.c — the GIL from the library's threads, and the interpreter's exit.
 *
 * A library thread (a runner's, an actor's, an executor's) that runs Python code gets ONE
 * Python thread state for its whole life, created on its first callback and deleted when
 * the OS thread ends. PyGILState_Ensure/Release would create and delete one per callback,
 * and with it every threading.local value: the very loss of thread-affine state (Ray
 * #46336) tether exists to prevent.
 *
 * Exit protocol (tpy_shutdown_py, called from an atexit hook while the interpreter is
 * intact): Python >= 3.11 ends a thread with pthread_exit when it takes the GIL after
 * finalization began; unwinding through the library's task boundary would abort. So before
 * finalization the door is closed (g_exiting), threads inside Python callbacks are waited
 * for (and, after a grace period, interrupted with SystemExit), and from then on no library
 * thread takes the GIL: tpy_gil_enter refuses, and callers leak their Python objects
 * instead of touching a dying interpreter.
 *
 * Memory ordering: g_exiting and g_entering are seq_cst, a Dekker pair: a thread raises
 * g_entering THEN reads g_exiting; shutdown sets g_exiting THEN waits for g_entering == 0.
 * So either the thread sees the door closed, or shutdown sees it entering and waits for it.
 */
#include "tpy.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

/* own_thread: a library thread's Python identity. Created and linked under the GIL; the
 * list (g_threads) and depth are read and written only with the GIL held. */
typedef struct own_thread {
  PyThreadState *ts;
  unsigned long ident;
  int depth; /* callbacks of this thread now running Python code */
  struct own_thread *prev, *next;
} own_thread;

static PyInterpreterState *g_interp;
static pthread_key_t g_thread_key; /* destructor: own_thread_end at OS thread exit */
static _Thread_local own_thread *t_own;
static own_thread *g_threads;      /* GIL */
static atomic_int g_exiting;
static atomic_long g_entering;
static PyObject *g_name_hook;      /* tether._exit.name_thread(name or None); GIL */

static void own_thread_unlink(own_thread *o) {
  if (o->prev) o->prev->next = o->next; else g_threads = o->next;
  if (o->next) o->next->prev = o->prev;
}

static void call_name_hook(const char *name) {
  if (g_name_hook == NULL) return;
  PyObject *arg = name ? PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "replace") : Py_NewRef(Py_None);
  PyObject *r = arg ? PyObject_CallOneArg(g_name_hook, arg) : NULL;
  Py_XDECREF(arg);
  if (r == NULL) PyErr_WriteUnraisable(g_name_hook);
  Py_XDECREF(r);
}

/* own_thread_end: pthread key destructor, on the ending OS thread. Deletes its thread
 * state with the GIL, unless the door is closed (then the state is leaked with the
 * interpreter). */
static void own_thread_end(void *p) {
  own_thread *o = p;
  t_own = NULL;
  atomic_fetch_add(&g_entering, 1);
  if (atomic_load(&g_exiting)) {
    atomic_fetch_sub(&g_entering, 1);
    return;
  }
  PyEval_RestoreThread(o->ts);
  atomic_fetch_sub(&g_entering, 1);
  call_name_hook(NULL);
  own_thread_unlink(o);
  PyThreadState_Clear(o->ts);
  PyThreadState_DeleteCurrent(); /* releases the GIL */
  free(o);
}

int tpy_exiting(void) { return atomic_load(&g_exiting); }

int tpy_on_library_thread(void) { return t_own != NULL; }

tpy_gil tpy_gil_enter(const char *name) {
  tpy_gil g = {TPY_GIL_REFUSED, PyGILState_UNLOCKED};
  if (PyGILState_Check()) {
    g.how = TPY_GIL_NESTED;
    return g;
  }
  atomic_fetch_add(&g_entering, 1);
  if (atomic_load(&g_exiting)) {
    atomic_fetch_sub(&g_entering, 1);
    return g;
  }
  if (t_own != NULL) {
    PyEval_RestoreThread(t_own->ts);
    g.how = TPY_GIL_OWN;
  } else if (PyGILState_GetThisThreadState() != NULL) {
    g.ensured = PyGILState_Ensure(); /* a Python thread that released the GIL around a call */
    g.how = TPY_GIL_ENSURED;
  } else {
    own_thread *o = calloc(1, sizeof *o);
    if (o == NULL) {
      atomic_fetch_sub(&g_entering, 1);
      return g;
    }
    o->ts = PyThreadState_New(g_interp); /* binds to this OS thread for PyGILState_* */
    PyEval_RestoreThread(o->ts);
    o->ident = PyThread_get_thread_ident();
    o->next = g_threads;
    if (g_threads) g_threads->prev = o;
    g_threads = o;
    t_own = o;
    pthread_setspecific(g_thread_key, o);
    call_name_hook(name);
    g.how = TPY_GIL_OWN;
  }
  atomic_fetch_sub(&g_entering, 1);
  return g;
}

void tpy_gil_leave(tpy_gil g) {
  switch (g.how) {
    case TPY_GIL_OWN: (void)PyEval_SaveThread(); break;
    case TPY_GIL_ENSURED: PyGILState_Release(g.ensured); break;
    default: break;
  }
}

void tpy_in_callback_enter(void) {
  if (t_own) ++t_own->depth;
}
void tpy_in_callback_leave(void) {
  if (t_own) --t_own->depth;
}

/* threads_inside: the other threads now in Python callbacks (the caller may be one). */
static int threads_inside(void) {
  int n = 0;
  for (own_thread *o = g_threads; o; o = o->next) n += o != t_own && o->depth > 0;
  return n;
}

/* _tether.after_fork_child(): in a fork()ed child only the forking thread exists: the
 * records of the others are dropped (leaked: their thread states died with them). */
PyObject *tpy_after_fork_child(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  g_threads = t_own;
  if (t_own) t_own->prev = t_own->next = NULL;
  atomic_store(&g_entering, 0);
  Py_RETURN_NONE;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* _tether._shutdown(grace_s, bound_s): closes the door, interrupts the threads still
 * inside Python callbacks after grace_s with SystemExit, and returns how many are still
 * inside after bound_s (0 when the exit is clean). */
PyObject *tpy_shutdown_py(PyObject *self, PyObject *args) {
  (void)self;
  double grace = 0, bound = 0;
  if (!PyArg_ParseTuple(args, "dd", &grace, &bound)) return NULL;
  atomic_store(&g_exiting, 1);
  const double start = now_s();
  int interrupted = 0;
  for (;;) {
    const int inside = threads_inside();
    if (inside == 0 && atomic_load(&g_entering) == 0) return PyLong_FromLong(0);
    const double waited = now_s() - start;
    if (waited >= bound) return PyLong_FromLong(inside);
    if (!interrupted && waited >= grace) {
      for (own_thread *o = g_threads; o; o = o->next)
        if (o != t_own && o->depth > 0) PyThreadState_SetAsyncExc(o->ident, PyExc_SystemExit);
      interrupted = 1;
    }
    /* Exit-time polling, not test synchronisation: the threads to wait for are in
     * arbitrary user code, with nothing to signal. */
    Py_BEGIN_ALLOW_THREADS
    struct timespec pause = {0, 2000000};
    nanosleep(&pause, NULL);
    Py_END_ALLOW_THREADS
  }
}

PyObject *tpy_set_name_hook(PyObject *hook);
PyObject *tpy_set_name_hook(PyObject *hook) {
  Py_XSETREF(g_name_hook, Py_NewRef(hook));
  Py_RETURN_NONE;
}

int tpy_gil_init(void) {
  g_interp = PyInterpreterState_Get();
  if (pthread_key_create(&g_thread_key, own_thread_end) != 0) {
    PyErr_SetString(PyExc_RuntimeError, "tether: pthread_key_create failed");
    return -1;
  }
  return 0;
}
