/*
 * tether.h — threads you can trust.
 *
 * tether runs code on threads whose failures are never lost and whose state never moves.
 * This header is the whole C API: a reader can learn the library from it. It is plain C99,
 * C++-safe, and every function in it is documented where it is declared.
 *
 * Groups, in order:
 *   1. Conventions, export macro and version
 *   2. Handles
 *   3. Status codes and the last-error text
 *   4. Tasks, callbacks and errors
 *   5. ThreadRunner: a scope of threads whose errors are caught
 *   6. Pinned executors: one OS thread for life
 *   7. Futures
 *   8. Actors: state that lives on one pinned thread
 *   9. Compiled graphs: execution loops on named threads
 *   (testing aids) tether_debug_fail_thread_create, tether_debug_unjoined_threads
 *
 * Thread safety: every function may be called from any thread at any time, unless its
 * comment says "callback only" (valid only inside a callback, on that callback's thread).
 */
#ifndef TETHER_TETHER_H
#define TETHER_TETHER_H

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------------------------
 * 1. Conventions, export macro and version
 *
 * Every function returns a tether_status unless it is a pure accessor. The status speaks
 * about THE CALL (a bad handle, a timeout); the outcome of user code is read separately
 * (poll and the error accessors), so a call can succeed in telling you that a task failed.
 *
 * Ownership: strings handed in are copied, and the library keeps no caller pointer beyond
 * the call, except `arg` (section 4). Strings handed out are copied into a caller buffer:
 * `size_t f(..., char *buf, size_t cap)` returns the full length (without the NUL) and writes
 * at most `cap - 1` bytes plus a NUL when `cap > 0`, like snprintf. `buf` may be NULL when
 * `cap` is 0, to ask for the length.
 *
 * Timeouts are int64_t nanoseconds on the monotonic clock: `< 0` waits forever, `0` never
 * blocks. Deadlines saturate: a huge timeout never overflows.
 *
 * Options structs start with `uint32_t struct_size`; `tether_X_options_init` fills the
 * defaults and the size. A struct_size larger than this library knows, or smaller than the
 * first published version of the struct, is TETHER_E_INVALID_ARGUMENT; an older (smaller,
 * published) size is accepted and the missing fields take their defaults.
 *
 * Threads the library creates block asynchronous signals (synchronous ones such as SIGSEGV
 * stay deliverable), and each has ENDED before its owner is freed: its function returned,
 * then every C++ thread_local destructor and every thread-specific (pthread key)
 * destructor of its first round ran, then the library's own cleanups. What is left of it
 * is the C library's and the OS's teardown, which the library does not wait for on POSIX
 * (it detaches the thread then, as std::thread::detach: the OS frees it once it is over;
 * Windows: see below).
 * Process exit with live handles does not crash. After fork(): a child forked from a
 * process with no live tether object uses the library like any process. In a child forked
 * from a process with live objects, every handle of the parent's (and a parent task's
 * tether_task_* calls) returns TETHER_E_FORKED; nothing of the parent's is dropped, joined
 * or run there, and an `arg` handed to such a call is not dropped either (its drop function
 * could need a lock held by a thread that does not exist there). New objects made in the
 * child work. A callback that calls fork() and then returns in the child ends the child
 * process there, as by exit(0): the copy of the library thread it ran on runs nothing more
 * of the parent's work (the child may also exec, or end itself, before returning).
 *
 * On Windows (tether.dll) the API is the same; these behaviours differ:
 *  - Thread names are set with SetThreadDescription (shown by debuggers and tools; missing
 *    before Windows 10 1607, where names are recorded by the library but not shown). The
 *    OS-visible name is cut to 15 bytes there too, so names read back alike everywhere.
 *  - `cpu` pins with SetThreadAffinityMask and must be one of the process's CPUs in its
 *    first processor group (0..63); `os_thread_id` is GetCurrentThreadId().
 *  - stack_size below 16384 is TETHER_E_INVALID_ARGUMENT (the floor Linux's
 *    PTHREAD_STACK_MIN has); Windows rounds stacks up to 64 KiB.
 *  - There are no signals to block and no fork(): TETHER_E_FORKED never occurs.
 *  - A thread's exit notice (when its owner learns it ended) and the library's per-thread
 *    cleanups run when the thread detaches from tether.dll (its TLS callback), not
 *    necessarily after the thread_locals of other modules are destroyed; so a release
 *    also waits for the thread's exit there (the OS's, as a join), not for the notice
 *    alone. The thread that ends the process runs neither (as on POSIX): its state goes
 *    with the process.
 *  - At process exit Windows ends every thread before the library's static destructors
 *    run, so the library's threads are not joined then (nothing is left to join). Do not
 *    unload tether.dll (FreeLibrary) while any of its objects or threads is alive.
 * ---------------------------------------------------------------------------------------- */

#if defined(_WIN32)
#  if defined(TETHER_BUILDING)
#    define TETHER_API __declspec(dllexport)
#  else
#    define TETHER_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define TETHER_API __attribute__((visibility("default")))
#else
#  define TETHER_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define TETHER_VERSION_MAJOR 0
#define TETHER_VERSION_MINOR 1
#define TETHER_VERSION_PATCH 0
/* TETHER_VERSION: the header's version as tether_version() encodes it. */
#define TETHER_VERSION \
  ((TETHER_VERSION_MAJOR << 16) | (TETHER_VERSION_MINOR << 8) | TETHER_VERSION_PATCH)

/* tether_version: the library's version, `major << 16 | minor << 8 | patch`. Compare it with
 * TETHER_VERSION to detect a header/library mismatch. Never fails. */
TETHER_API uint32_t tether_version(void);

/* tether_version_string: "MAJOR.MINOR.PATCH", static storage. Never fails. */
TETHER_API const char *tether_version_string(void);

/* ------------------------------------------------------------------------------------------
 * 2. Handles
 *
 * Every object is a typed handle passed by value. `id == 0` is the null handle. A handle
 * that is null, forged, of another kind, or already released gives TETHER_E_INVALID_HANDLE:
 * never a crash and never a use-after-free (the library keeps a generation-counted handle
 * table, and the kind is part of the id).
 *
 * tether_X_release(h) ends the caller's handle at once; the object itself lives on for as
 * long as the library still needs it. Releasing twice is TETHER_E_INVALID_HANDLE. A release
 * that waits has a tether_X_release_nowait twin that ends the handle at once and leaves the
 * waiting to the library's control thread (for finalizers and Drop). A wait blocked on a
 * handle that another thread releases returns TETHER_E_INVALID_HANDLE promptly.
 *
 * Handles given to a callback (tether_task_runner, tether_task_actor) are BORROWED: usable
 * during the callback, never released by the callee.
 *
 * Limit: at most 16,777,216 (2^24) handles of all kinds are live at once (a handle is live
 * from the call that returns it until its release; every tether_error copy counts). At the
 * limit, a call that would return a new handle fails with TETHER_E_NO_MEMORY ("too many
 * live handles") and leaves nothing behind: its arg is dropped, as for any failure.
 * Releasing a handle frees its slot at once.
 * ---------------------------------------------------------------------------------------- */

typedef struct tether_runner   { uint64_t id; } tether_runner;
typedef struct tether_executor { uint64_t id; } tether_executor;
typedef struct tether_actor    { uint64_t id; } tether_actor;
typedef struct tether_future   { uint64_t id; } tether_future;
typedef struct tether_error    { uint64_t id; } tether_error;
typedef struct tether_graph    { uint64_t id; } tether_graph;
typedef struct tether_compiled { uint64_t id; } tether_compiled;

/* ------------------------------------------------------------------------------------------
 * 3. Status codes and the last-error text
 *
 * The values are stable: they never change meaning, and new codes only take new numbers.
 * TETHER_STATUS_MAP is the one table the codes, their names (tether_status_name) and their
 * sentences (tether_status_describe) all come from, so the three can never drift apart.
 * ---------------------------------------------------------------------------------------- */

typedef int32_t tether_status;

/* TETHER_STATUS_MAP(X): X(suffix, value, description) for every status code. */
#define TETHER_STATUS_MAP(X)                                                                  \
  X(OK,                   0, "success")                                                        \
  X(E_INVALID_ARGUMENT,   1, "invalid argument: a NULL out-pointer, a bad option value or name, or an index out of range") \
  X(E_INVALID_HANDLE,     2, "invalid handle: null, forged, of another kind, or already released") \
  X(E_WRONG_STATE,        3, "the object is not in a state that allows this call")              \
  X(E_TIMEOUT,            4, "the timeout passed before the wait was satisfied")                \
  X(E_CANCELLED,          5, "the work was cancelled before or while it ran")                   \
  X(E_DEADLOCK,           6, "the call would wait on the calling thread itself")               \
  X(E_THREAD_BUSY,        7, "the thread already hosts another compiled graph's loop")         \
  X(E_ACTOR_DEAD,         8, "the actor's constructor failed")                                  \
  X(E_QUEUE_FULL,         9, "the bounded queue is full and the call may not wait")             \
  X(E_SHUTDOWN,          10, "the target executor or actor is stopping or stopped")             \
  X(E_NO_MEMORY,         11, "out of memory")                                                   \
  X(E_THREAD_CREATE,     12, "the operating system refused to create a thread")                 \
  X(E_TASK_FAILED,       13, "user code reported failure")                                      \
  X(E_EXCEPTION,         14, "user C++ code threw a std::exception")                            \
  X(E_UNKNOWN_EXCEPTION, 15, "user C++ code threw something other than a std::exception")       \
  X(E_PANIC,             16, "a binding's user code panicked")                                  \
  X(E_NOT_FOUND,         17, "no such concurrency group or thread name")                       \
  X(E_INTERNAL,          18, "internal error in the tether library")                           \
  X(E_FORKED,            19, "a tether object was used in a child process after fork()")

#define TETHER_STATUS_ENUM_ENTRY_(suffix, value, description) TETHER_##suffix = value,
enum tether_status_code { TETHER_STATUS_MAP(TETHER_STATUS_ENUM_ENTRY_) };
#undef TETHER_STATUS_ENUM_ENTRY_

/* tether_status_name: "TETHER_E_TIMEOUT" for TETHER_E_TIMEOUT; "TETHER_E_UNKNOWN" for a value
 * that is not a status code. Static storage, never NULL, never fails. */
TETHER_API const char *tether_status_name(int32_t status);

/* tether_status_describe: one human sentence for the code; "unknown status code" for a
 * value that is not one. Static storage, never NULL, never fails. */
TETHER_API const char *tether_status_describe(int32_t status);

/* tether_last_error_message: the detail of why the last failing call made on THIS thread
 * failed ("invalid handle: runner was released"), copied into buf as in section 1. A
 * convenience for C: every fact it states is also in the status code or in an error
 * object, so a caller that switches OS threads between calls (a goroutine) loses nothing.
 * Successful calls do not clear it. Returns 0 (empty) when no call on this thread failed. */
TETHER_API size_t tether_last_error_message(char *buf, size_t cap);

/* ------------------------------------------------------------------------------------------
 * 4. Tasks, callbacks and errors
 *
 * User code runs as a callback: `tether_status fn(tether_task *task, void *arg)`. It returns
 * TETHER_OK to succeed, or any other value to fail; a failure's error has the code
 * TETHER_E_TASK_FAILED, `user_code` the returned value, and the message "task returned N".
 *
 * `arg` and its `arg_drop` (which may be NULL) belong to the library from the moment you
 * pass them, whatever the call returns: arg_drop(arg) runs exactly once — after the callback
 * has run, or instead of it when the work is cancelled, rejected (the call failed: it then
 * runs before the call returns) or its actor dies — unless the callback never returns or
 * the process exits first. It may run on any thread, never under a library lock, and may
 * call any tether function except a wait.
 *
 * A C++ exception thrown through a callback is caught at the task boundary: a
 * std::exception becomes TETHER_E_EXCEPTION with what() as the message, anything else
 * TETHER_E_UNKNOWN_EXCEPTION; both record the exception's demangled type name.
 *
 * Ending the thread from a callback (POSIX pthread_exit, or thread cancellation): a
 * runner's threads (its target and nested threads) may end so; the runner fails with
 * TETHER_E_UNKNOWN_EXCEPTION, type "abi::__forced_unwind", and the thread's name, and its
 * arg is dropped as usual. Any other thread (an executor's, an actor's, a compiled graph's,
 * or the caller's inside a library call) owes the work queued behind it: the library
 * writes what happened to stderr and aborts the process.
 *
 * Errors are immutable, shared objects behind tether_error handles. Every tether_error you
 * receive must be released with tether_error_release. An accessor on an invalid error
 * handle returns 0 or the empty string.
 * ---------------------------------------------------------------------------------------- */

typedef struct tether_task tether_task; /* callback only */
typedef tether_status (*tether_fn)(tether_task *task, void *arg);
typedef void (*tether_drop_fn)(void *p);
typedef void (*tether_notify_fn)(void *arg);

/* States of a runner, a future or an actor call. SUCCEEDED, FAILED and CANCELLED are
 * terminal: once reported they never change. */
enum tether_state {
  TETHER_PENDING = 0,
  TETHER_RUNNING = 1,
  TETHER_SUCCEEDED = 2,
  TETHER_FAILED = 3,
  TETHER_CANCELLED = 4
};

/* Actor states (section 8). */
enum tether_actor_state { TETHER_ACTOR_ALIVE = 1, TETHER_ACTOR_DEAD = 2, TETHER_ACTOR_STOPPED = 3 };

/* Stop modes (section 8). */
enum tether_stop_mode { TETHER_STOP_DRAIN = 0, TETHER_STOP_CANCEL = 1 };

/* tether_task_fail: callback only. Records a failure with an application code and a message
 * (copied; NULL gives "task failed"), and returns TETHER_E_TASK_FAILED so a callback can
 * write `return tether_task_fail(t, 7, "disk full");`. A task that recorded a failure fails
 * even if it then returns TETHER_OK; a second record replaces the first.
 * Returns TETHER_E_INVALID_ARGUMENT (nothing recorded) when `t` is NULL or not the task of
 * the callback running on this thread. */
TETHER_API tether_status tether_task_fail(tether_task *t, int64_t user_code, const char *message);

/* tether_task_fail_with: callback only. Like tether_task_fail with an explicit error code,
 * so a binding can record TETHER_E_PANIC with the panic text. `code` must be a failure code
 * of section 3 (not TETHER_OK); returns `code` on success so it can be returned from the
 * callback. TETHER_E_INVALID_ARGUMENT for a bad `t` or `code` (nothing recorded). */
TETHER_API tether_status tether_task_fail_with(tether_task *t, int32_t code, int64_t user_code,
                                               const char *message);

/* tether_task_set_result: callback only. Hands `value` to the task's result slot; `drop`
 * (may be NULL) runs once on it if nobody takes it or the outcome is not SUCCEEDED. A second
 * call replaces the value and drops the first. For a runner, only the target fills the
 * slot: from a nested thread this is TETHER_E_WRONG_STATE. On any failure (also
 * TETHER_E_INVALID_ARGUMENT for a bad `t`) `drop(value)` runs before the call returns. */
TETHER_API tether_status tether_task_set_result(tether_task *t, void *value, tether_drop_fn drop);

/* tether_task_stop_requested: callback only. Nonzero once cancellation, or a sibling's
 * failure under stop_on_error, asked this task's scope to stop. Cooperative: nothing is
 * killed. 0 for a bad `t`. */
TETHER_API int tether_task_stop_requested(const tether_task *t);

/* tether_task_thread_name: callback only. The full name of the thread the task runs on
 * (the OS sees at most 15 bytes of it). Valid until the callback returns; "" for a bad `t`. */
TETHER_API const char *tether_task_thread_name(const tether_task *t);

/* tether_task_runner: callback only. The BORROWED handle of the runner the task belongs to.
 * TETHER_E_INVALID_ARGUMENT for a bad `t` or NULL `out`; TETHER_E_WRONG_STATE (out set to
 * the null handle) when the task belongs to no runner. */
TETHER_API tether_status tether_task_runner(const tether_task *t, tether_runner *out);

/* tether_task_actor: callback only. The BORROWED handle of the actor the task belongs to.
 * TETHER_E_INVALID_ARGUMENT for a bad `t` or NULL `out`; TETHER_E_WRONG_STATE (out set to
 * the null handle) when the task belongs to no actor (every runner task). */
TETHER_API tether_status tether_task_actor(const tether_task *t, tether_actor *out);

/* tether_error_code: the error's status code (TETHER_E_TASK_FAILED, TETHER_E_EXCEPTION, ...);
 * 0 for an invalid handle. */
TETHER_API int32_t tether_error_code(tether_error e);

/* tether_error_user_code: the application code (the callback's return value, or the
 * user_code given to tether_task_fail); 0 for an invalid handle. */
TETHER_API int64_t tether_error_user_code(tether_error e);

/* tether_error_message: the message, copied into buf (section 1). 0 for an invalid handle. */
TETHER_API size_t tether_error_message(tether_error e, char *buf, size_t cap);

/* tether_error_thread_name: the full name of the thread the error was raised on
 * ("upload-2"), copied into buf. 0 for an invalid handle. */
TETHER_API size_t tether_error_thread_name(tether_error e, char *buf, size_t cap);

/* tether_error_type_name: the demangled type of the C++ exception behind the error
 * ("std::runtime_error"), or a binding's type name; empty when there is none. */
TETHER_API size_t tether_error_type_name(tether_error e, char *buf, size_t cap);

/* tether_error_cause: the error that caused this one (an ACTOR_DEAD error's cause is the
 * constructor's error), as a new handle the caller must release; the null handle and
 * TETHER_OK when there is none. TETHER_E_INVALID_ARGUMENT for a NULL `out`,
 * TETHER_E_INVALID_HANDLE for a bad `e`. */
TETHER_API tether_status tether_error_cause(tether_error e, tether_error *out);

/* tether_error_release: ends the handle. The error object itself is shared and freed with
 * its last handle. TETHER_E_INVALID_HANDLE for a bad or already released handle. */
TETHER_API tether_status tether_error_release(tether_error e);

/* ------------------------------------------------------------------------------------------
 * 5. ThreadRunner: a scope of threads whose errors are caught
 *
 * tether_runner_start runs `target` on a new thread. Inside it, and recursively inside the
 * threads it starts, tether_task_spawn starts a NESTED thread that belongs to the same
 * scope. Threads created some other way feed the scope with tether_runner_report_error.
 *
 *  - The scope SUCCEEDS when the target and every nested thread have returned OK. The
 *    target returning does not end the scope while nested threads still run.
 *  - The scope FAILS at its FIRST error, from any of its threads: from that moment poll
 *    says TETHER_FAILED and join returns, even while other threads still run. With
 *    stop_on_error the stop request is published BEFORE the failure becomes visible.
 *  - The scope is CANCELLED when tether_runner_cancel was called and every thread then
 *    ended without an error; an error during cancellation makes it FAILED. Its error (the
 *    only one) has the code TETHER_E_CANCELLED.
 *  - Once poll reports a terminal state it never changes, and the first error never
 *    changes once visible. No poll ever sees SUCCEEDED, or a terminal state without an
 *    error, for a scope that failed.
 *
 * Inside and outside: a call is "from the inside" when the calling thread belongs to the
 * runner's scope. From the inside, a wait that would have to wait returns
 * TETHER_E_DEADLOCK (a wait with timeout 0 returns TETHER_E_TIMEOUT, never DEADLOCK), and
 * release never deadlocks: the handle ends at once and the library's control thread joins
 * the threads and frees the runner once they have returned.
 * ---------------------------------------------------------------------------------------- */

typedef struct tether_runner_options {
  uint32_t struct_size;
  const char *name;  /* thread name (copied; OS-visible, cut to 15 bytes); default "tether-run" */
  int stop_on_error; /* default 1: the first error asks every thread of the scope to stop */
  size_t stack_size; /* 0 = platform default; else at least PTHREAD_STACK_MIN */
} tether_runner_options;

/* tether_runner_options_init: fills the defaults and struct_size. NULL does nothing. */
TETHER_API void tether_runner_options_init(tether_runner_options *o);

/* tether_runner_start: runs target(task, arg) on a new thread named opts->name and returns
 * the runner's handle in *out, which the caller must release. `opts` NULL takes the
 * defaults. `arg`/`arg_drop` follow section 4: dropped once after the target returns, or
 * before this call returns if it fails.
 * Returns TETHER_E_INVALID_ARGUMENT (NULL target or out, bad struct_size, empty name, a
 * stack size below the platform minimum), TETHER_E_THREAD_CREATE (the OS refused the
 * thread), TETHER_E_NO_MEMORY. On failure *out is the null handle (when out is not NULL). */
TETHER_API tether_status tether_runner_start(const tether_runner_options *opts, tether_fn target,
                                             void *arg, tether_drop_fn arg_drop,
                                             tether_runner *out);

/* tether_task_spawn: callback only. Starts fn(task, arg) on a NESTED thread of the calling
 * task's scope, named `name` (copied; NULL = the runner's or the actor's name). It succeeds while the
 * calling thread runs, even after the scope FAILED (with stop_on_error the new thread then
 * starts with stop requested). Works the same inside an actor's method (section 8).
 * Returns TETHER_E_INVALID_ARGUMENT (bad `t`, NULL fn, empty name), TETHER_E_THREAD_CREATE,
 * TETHER_E_NO_MEMORY; arg is dropped before a failing call returns. */
TETHER_API tether_status tether_task_spawn(tether_task *t, const char *name, tether_fn fn,
                                           void *arg, tether_drop_fn arg_drop);

/* tether_runner_report_error: records an error raised on a thread the scope did not create
 * (a foreign pthread, a thread pool). `code` is a failure code of section 3 (not
 * TETHER_OK); `message` is copied (NULL = ""); the thread name recorded is the calling
 * thread's. The first error fails the scope as any other would.
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (bad code), and
 * TETHER_E_WRONG_STATE on a SUCCEEDED or CANCELLED scope (nothing recorded). */
TETHER_API tether_status tether_runner_report_error(tether_runner r, int32_t code,
                                                    int64_t user_code, const char *message);

/* tether_runner_poll: the scope's state (TETHER_RUNNING, TETHER_SUCCEEDED, TETHER_FAILED or
 * TETHER_CANCELLED) into *state, without blocking.
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL state). */
TETHER_API tether_status tether_runner_poll(tether_runner r, int32_t *state);

/* tether_runner_join: waits until poll would report a terminal state: at the first error,
 * not necessarily when every thread has ended (see join_all).
 * Returns TETHER_OK, TETHER_E_TIMEOUT, TETHER_E_INVALID_HANDLE (also when another thread
 * releases the runner during the wait), TETHER_E_DEADLOCK (from the inside). */
TETHER_API tether_status tether_runner_join(tether_runner r, int64_t timeout_ns);

/* tether_runner_join_all: like join, and in addition waits until every thread of the
 * scope has ended (live_threads reads 0). Same status codes as join. */
TETHER_API tether_status tether_runner_join_all(tether_runner r, int64_t timeout_ns);

/* tether_runner_on_done: the non-blocking form of join. Runs fn(arg) exactly once when the
 * scope becomes terminal, on the thread that makes it terminal, or at once on the caller if
 * it already is; then drops arg. If the runner is released first, fn still runs when the
 * scope ends. Several may be registered. fn must not wait; it may poll and read the runner.
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL fn); on failure fn
 * does not run and arg is dropped before the call returns. */
TETHER_API tether_status tether_runner_on_done(tether_runner r, tether_notify_fn fn, void *arg,
                                               tether_drop_fn arg_drop);

/* tether_runner_error: the first error as a new handle the caller must release; the null
 * handle and TETHER_OK while there is none.
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL out). */
TETHER_API tether_status tether_runner_error(tether_runner r, tether_error *out);

/* tether_runner_error_count: how many errors the scope recorded, in order (the first one
 * included). Once live_threads reads 0 the list is complete. 0 for an invalid handle. */
TETHER_API size_t tether_runner_error_count(tether_runner r);

/* tether_runner_error_at: error i (0 = the first) as a new handle the caller must release.
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL out, i past the end). */
TETHER_API tether_status tether_runner_error_at(tether_runner r, size_t i, tether_error *out);

/* tether_runner_take_result: moves the target's result (tether_task_set_result) to *out; the
 * caller owns it from then on and its drop will not run. Only on a SUCCEEDED scope, once.
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL out),
 * TETHER_E_WRONG_STATE (not SUCCEEDED, or already taken). *out is NULL when the target set
 * no result. */
TETHER_API tether_status tether_runner_take_result(tether_runner r, void **out);

/* tether_runner_live_threads: how many threads of the scope (the target included) have not
 * yet returned. Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL out). */
TETHER_API tether_status tether_runner_live_threads(tether_runner r, size_t *out);

/* tether_runner_cancel: asks every thread of the scope to stop (tether_task_stop_requested).
 * A terminal scope is left unchanged (TETHER_OK). Returns TETHER_E_INVALID_HANDLE. */
TETHER_API tether_status tether_runner_cancel(tether_runner r);

/* tether_runner_release: cancels and ends the handle at once (waiters on it return
 * TETHER_E_INVALID_HANDLE, and see the stop requested), then waits until EVERY thread of
 * the scope has ended (see the top of this file), and frees the runner (a result not
 * taken goes to its drop). From the inside it behaves as tether_runner_release_nowait.
 * Returns TETHER_E_INVALID_HANDLE for a bad handle. */
TETHER_API tether_status tether_runner_release(tether_runner r);

/* tether_runner_release_nowait: cancels and ends the handle at once; the library's control
 * thread joins the threads and frees the runner once they have returned. For finalizers.
 * Returns TETHER_E_INVALID_HANDLE for a bad handle. */
TETHER_API tether_status tether_runner_release_nowait(tether_runner r);

/* ------------------------------------------------------------------------------------------
 * 6. Pinned executors: one OS thread for life
 *
 * An executor is ONE OS thread for its whole life, never swapped: everything submitted to
 * it runs on that thread, in submission order, and thread-local state persists between
 * tasks; its thread-local destructors run when it ends. An idle executor spins for
 * idle_spin_ns, then parks; a submit wakes it only if it really parked.
 *
 * The library's own threads (an executor's, an actor's, a concurrency group's) ask Linux
 * (6.12 and later) for half the time slice it gives them (at least 0.1 ms), so that one
 * woken for a call runs at once on a CPU it shares with its caller; a thread that runs
 * long still gets only its fair share. The environment variable TETHER_TIME_SLICE_NS, read
 * once, changes that for the process: 0 leaves them at the OS default; 100000 to
 * 100000000 (ns) is asked instead. Runners' threads and a manual executor's owner are
 * never touched.
 *
 * A thread that streams calls (without waiting for each) to an executor whose thread
 * shares its CPU, pinned there or put there by the scheduler, would wake that thread for
 * each call, and Linux lets a woken thread preempt the one that woke it (~2.5x slower
 * calls). So such a library thread (an executor's, an actor's, a group of one thread's)
 * that started under SCHED_OTHER switches itself to SCHED_BATCH while it is streamed to
 * from its own CPU: its wake-ups then wait for the caller's time slice, and the calls
 * queued meanwhile run in one go. It switches back to SCHED_OTHER as soon as a caller
 * waits for its call at once (tether_actor_call_wait, a future waited for as soon as it
 * is made), its caller runs on another CPU, or it finds only a few calls each time it
 * wakes. A caller on that CPU that waits on its own (an atomic, a condition variable)
 * after each call without a future may still see its round trips ~20 % slower. The
 * environment variable TETHER_BATCH_STREAMS=0, read once, keeps the threads at
 * SCHED_OTHER. A thread the library found under another policy, or whose policy its user
 * changed (from a task: sched_setscheduler; or chrt -p with stats.os_thread_id), keeps
 * that policy.
 *
 * With `manual = 1` no thread is created: the first thread that calls tether_executor_run
 * becomes the executor's thread for good (a program's main thread, for code that must run
 * there: signal handlers, GUI toolkits).
 *
 * Errors of fire-and-forget tasks are never lost: they are counted in the stats and the
 * first 64 are kept (tether_executor_error); the rest are counted in errors_dropped.
 *
 * An executor lives while anything uses it: releasing its handle while actors still live
 * on it ends the handle at once, and the thread stays until the last of those actors is
 * released. Otherwise release runs what is queued, then joins the thread.
 *
 * Inside: a call is "from the inside" on the executor's thread (for every actor and future
 * it serves), or on a manual executor's owner thread outside tether_executor_run. A wait
 * from the inside that would have to wait returns TETHER_E_DEADLOCK.
 * ---------------------------------------------------------------------------------------- */

typedef struct tether_executor_options {
  uint32_t struct_size;
  const char *name;       /* OS-visible thread name (copied); default "tether-exec" */
  int cpu;                /* -1 (default): no affinity; else pin the thread to this CPU */
  size_t queue_capacity;  /* 0 (default): unbounded; else tasks queued and not yet started */
  size_t stack_size;      /* 0 = platform default; else at least PTHREAD_STACK_MIN */
  int64_t idle_spin_ns;   /* spin before parking when idle; default 20000 (20 us); >= 0 */
  int manual;             /* 0 (default): own thread; 1: driven by tether_executor_run */
} tether_executor_options;

typedef struct tether_executor_stats {
  uint32_t struct_size;                  /* set by the caller: fields within it are filled */
  uint64_t queued;                       /* now: queued and not yet started */
  uint64_t completed, failed, cancelled; /* totals: a call with a future in the state its
                                            future ends in (SUCCEEDED, FAILED, CANCELLED),
                                            counted before the future shows it; a call
                                            without one: cancelled if it never ran, else
                                            by its own return */
  uint64_t rejected;                     /* totals: QUEUE_FULL or SHUTDOWN refusals */
  uint64_t errors_dropped;               /* fire-and-forget errors past the kept limit */
  uint64_t os_thread_id;                 /* gettid() on Linux (Windows: see the top); 0 until a manual executor first runs */
} tether_executor_stats;

/* tether_executor_options_init: fills the defaults and struct_size. NULL does nothing. */
TETHER_API void tether_executor_options_init(tether_executor_options *o);

/* tether_executor_create: a new executor (and its thread, unless manual) in *out, which
 * the caller must release. `o` NULL takes the defaults.
 * Returns TETHER_E_INVALID_ARGUMENT (NULL out, bad struct_size, empty name, cpu < -1 or
 * not a CPU this process may use, negative idle_spin_ns, manual not 0 or 1, a stack size
 * below the minimum), TETHER_E_THREAD_CREATE, TETHER_E_NO_MEMORY. */
TETHER_API tether_status tether_executor_create(const tether_executor_options *o, tether_executor *out);

/* tether_executor_submit: queues fn(task, arg) to run on the executor's thread, after
 * everything submitted before it. With `out` a future for it is returned (the caller must
 * release it); with out NULL it is fire and forget, and its failure is counted and kept by
 * the executor. Never blocks. arg follows section 4.
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL fn),
 * TETHER_E_QUEUE_FULL (a bounded queue is full), TETHER_E_SHUTDOWN (the executor is
 * shutting down), TETHER_E_NO_MEMORY. */
TETHER_API tether_status tether_executor_submit(tether_executor e, tether_fn fn, void *arg,
                                                tether_drop_fn arg_drop, tether_future *out);

/* tether_executor_submit_timeout: like submit, but on a full bounded queue waits up to
 * timeout_ns for room (TETHER_E_TIMEOUT after it; TETHER_E_DEADLOCK from the inside, where
 * room could never be made). */
TETHER_API tether_status tether_executor_submit_timeout(tether_executor e, tether_fn fn, void *arg,
                                                        tether_drop_fn arg_drop, tether_future *out,
                                                        int64_t timeout_ns);

/* tether_executor_get_stats: fills the fields of *out that lie within out->struct_size.
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL out, a struct_size
 * this library does not know). */
TETHER_API tether_status tether_executor_get_stats(tether_executor e, tether_executor_stats *out);

/* tether_executor_error: kept error i (0 = the first) of the executor's fire-and-forget
 * tasks, as a new handle the caller must release.
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL out, i past the end). */
TETHER_API tether_status tether_executor_error(tether_executor e, size_t i, tether_error *out);

/* tether_executor_run: manual executors only. The first caller's thread becomes the
 * executor's thread for good; run executes tasks until timeout_ns passes (TETHER_OK) or
 * the executor is released (TETHER_E_SHUTDOWN). Returns TETHER_E_WRONG_STATE on a
 * non-manual executor, from any other thread, or from inside a task of this executor. */
TETHER_API tether_status tether_executor_run(tether_executor e, int64_t timeout_ns);

/* tether_executor_release: ends the handle. Without actors on it, runs what is queued,
 * then joins the thread and the nested threads its tasks started; with actors, returns at once and the thread ends after the last
 * actor. A manual executor released from its owner thread outside run runs what is
 * queued right there; from another thread its queued tasks are cancelled. From the inside
 * it behaves as release_nowait. Returns TETHER_E_INVALID_HANDLE. */
TETHER_API tether_status tether_executor_release(tether_executor e);

/* tether_executor_release_nowait: ends the handle at once; the control thread joins the
 * thread once it has run what is queued. Returns TETHER_E_INVALID_HANDLE. */
TETHER_API tether_status tether_executor_release_nowait(tether_executor e);

/* ------------------------------------------------------------------------------------------
 * 7. Futures
 *
 * A future names one submitted task or actor call. Its state goes PENDING (queued),
 * RUNNING, then SUCCEEDED, FAILED or CANCELLED. Nested threads spawned by the work belong
 * to it: the future completes when the work and its nested threads are done, and fails at
 * the first error. Releasing a future at any time is fine: the work still runs, and its
 * result is dropped.
 * ---------------------------------------------------------------------------------------- */

/* tether_future_wait: waits until the future is terminal, whatever the outcome (read it
 * with poll and error). Returns TETHER_OK, TETHER_E_TIMEOUT, TETHER_E_INVALID_HANDLE (also
 * when another thread releases the future during the wait), TETHER_E_DEADLOCK (the work
 * can only run on the calling thread, which would be waiting for it). */
TETHER_API tether_status tether_future_wait(tether_future f, int64_t timeout_ns);

/* tether_future_poll: the state into *state, without blocking.
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL state). */
TETHER_API tether_status tether_future_poll(tether_future f, int32_t *state);

/* tether_future_error: the first error as a new handle the caller must release (a
 * CANCELLED future's has code TETHER_E_CANCELLED); the null handle while there is none.
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL out). */
TETHER_API tether_status tether_future_error(tether_future f, tether_error *out);

/* tether_future_take_result: moves the work's result to *out (the caller owns it; its drop
 * will not run). Once, on a SUCCEEDED future. Returns TETHER_E_INVALID_HANDLE,
 * TETHER_E_INVALID_ARGUMENT (NULL out), TETHER_E_WRONG_STATE (not SUCCEEDED, or taken). */
TETHER_API tether_status tether_future_take_result(tether_future f, void **out);

/* tether_future_outputs: copies a SUCCEEDED compiled graph execution's outputs, in
 * tether_graph_set_outputs order, into outs[0..n) (entries past the outputs are set to
 * NULL). With value_drop, the first copy hands the values to the caller; later copies give
 * the same pointers. Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL outs,
 * n smaller than the number of outputs), TETHER_E_WRONG_STATE (a task's or a call's
 * future, or an execution not SUCCEEDED). */
TETHER_API tether_status tether_future_outputs(tether_future f, void **outs, size_t n);

/* tether_future_cancel: on PENDING work, the work never runs, its arg is dropped before
 * this returns and the future is CANCELLED (one atomic transition decides PENDING or
 * started); on RUNNING work the task sees tether_task_stop_requested, and ends CANCELLED if
 * it then returns OK; on a terminal future nothing changes. Returns TETHER_OK, or
 * TETHER_E_INVALID_HANDLE. */
TETHER_API tether_status tether_future_cancel(tether_future f);

/* tether_future_wait_any: waits until one of fs[0..n) is terminal and puts the lowest such
 * index in *index. On TETHER_E_TIMEOUT *index is untouched. Returns
 * TETHER_E_INVALID_ARGUMENT (n == 0, NULL fs or index), TETHER_E_INVALID_HANDLE with *index
 * the position of the invalid handle, TETHER_E_DEADLOCK as tether_future_wait. A future
 * released by another thread during the wait does not end it (unlike tether_future_wait):
 * it returns when one of the futures completes, or at the timeout. */
TETHER_API tether_status tether_future_wait_any(const tether_future *fs, size_t n, int64_t timeout_ns,
                                                size_t *index);

/* tether_future_on_done: runs fn(arg) exactly once when the future becomes terminal, on
 * the thread that completes it, or at once on the caller if it already is; then drops
 * arg. If the future is released first, fn still runs when the work ends. Several may be
 * registered. fn must not wait; it may poll and read the future.
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL fn; arg dropped). */
TETHER_API tether_status tether_future_on_done(tether_future f, tether_notify_fn fn, void *arg,
                                               tether_drop_fn arg_drop);

/* tether_future_release: ends the handle; the work still runs and its result is dropped.
 * Waiters on the handle return TETHER_E_INVALID_HANDLE. Returns TETHER_E_INVALID_HANDLE. */
TETHER_API tether_status tether_future_release(tether_future f);

/* ------------------------------------------------------------------------------------------
 * 8. Actors: state that lives on one pinned thread
 *
 * The constructor, every default-group method and the destructor run on the actor's
 * default thread, in order: thread-local state set by the constructor is visible to every
 * later method. Many actors may share one executor; an actor never moves to another
 * thread. Named concurrency groups run their methods on threads of their own (a group of
 * several threads runs them concurrently; each thread keeps its own thread-local state for
 * the actor's life); they receive the SAME state pointer as the default thread, so sharing
 * it across threads is the caller's responsibility. A busy or blocked group never delays
 * another, and ordering is per group. Group threads start methods only once the
 * constructor has returned.
 *
 * The control plane never waits on the execution threads: state, stats, stop with
 * TETHER_STOP_CANCEL and calls to other groups all answer while a method is blocked
 * forever in user code.
 * ---------------------------------------------------------------------------------------- */

typedef tether_status (*tether_ctor_fn)(tether_task *t, void *arg, void **state_out);
typedef void (*tether_dtor_fn)(void *state);
typedef tether_status (*tether_method_fn)(tether_task *t, void *state, void *arg);
typedef struct tether_group_spec {
  const char *name;  /* copied; unique within the actor; not empty */
  uint32_t threads;  /* at least 1 */
} tether_group_spec;

typedef struct tether_actor_options {
  uint32_t struct_size;
  const char *name;                /* default "tether-actor"; names its threads ("name", "name/io") */
  tether_executor executor;        /* {0}: a dedicated new thread; else share that executor */
  const tether_group_spec *groups; /* extra concurrency groups, each on threads of its own */
  size_t group_count;
  size_t mailbox_capacity;         /* 0 = unbounded; else calls queued and not yet started */
} tether_actor_options;
typedef tether_executor_stats tether_actor_stats;

/* tether_actor_options_init: fills the defaults and struct_size. NULL does nothing. */
TETHER_API void tether_actor_options_init(tether_actor_options *o);

/* tether_actor_create: creates the actor and queues ctor(task, arg, &state) on its default
 * thread; returns at once with the handle in *out (the caller must release it). Calls
 * queue behind the constructor. arg is dropped after the constructor returns (a
 * constructor that keeps arg as its state passes no arg_drop and frees it in dtor). dtor
 * (may be NULL) runs on the default thread when the actor stops, if the constructor
 * succeeded. A failing constructor makes the actor DEAD (see tether_actor_call).
 * Returns TETHER_E_INVALID_ARGUMENT (NULL ctor or out, bad struct_size, empty name, a group
 * of 0 threads, a duplicate or empty group name, groups NULL with group_count > 0),
 * TETHER_E_INVALID_HANDLE (options.executor is not a live executor), TETHER_E_SHUTDOWN (that
 * executor is shutting down), TETHER_E_THREAD_CREATE (the OS refused a thread; nothing is
 * left behind), TETHER_E_NO_MEMORY. */
TETHER_API tether_status tether_actor_create(const tether_actor_options *o, tether_ctor_fn ctor,
                                             tether_dtor_fn dtor, void *arg, tether_drop_fn arg_drop,
                                             tether_actor *out);

/* tether_actor_call: queues m(task, state, arg) on the group's threads (group NULL: the
 * default thread), after the calls queued to that group before it. With `out` a future is
 * returned (the caller releases it); with out NULL it is fire and forget and a failure is
 * counted and kept by the actor (tether_actor_error). A failing method fails only its own
 * future. Never blocks. arg follows section 4.
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL m), TETHER_E_NOT_FOUND
 * (no such group), TETHER_E_ACTOR_DEAD (the constructor failed; see tether_actor_state for
 * the cause), TETHER_E_SHUTDOWN (stopping or stopped), TETHER_E_QUEUE_FULL (the mailbox is
 * full), TETHER_E_NO_MEMORY. Calls queued before the actor died fail through their futures
 * with TETHER_E_ACTOR_DEAD, whose cause is the constructor's error. */
TETHER_API tether_status tether_actor_call(tether_actor a, const char *group, tether_method_fn m, void *arg,
                                           tether_drop_fn arg_drop, tether_future *out);

/* tether_actor_call_timeout: like call, but on a full mailbox waits up to timeout_ns for
 * room (TETHER_E_TIMEOUT after it; TETHER_E_DEADLOCK from the group's own thread). */
TETHER_API tether_status tether_actor_call_timeout(tether_actor a, const char *group, tether_method_fn m,
                                                   void *arg, tether_drop_fn arg_drop, tether_future *out,
                                                   int64_t timeout_ns);

/* tether_actor_call_wait: the blocking round trip: queues m(task, state, arg) as
 * tether_actor_call does and waits for its answer, with no future handle to wait on, take
 * and release. timeout_ns (-1: forever) bounds the whole call: the wait for room in a full
 * mailbox and the wait for the answer. *result and *error (each may be NULL) are cleared
 * first. arg follows section 4.
 * Returns TETHER_OK once the call succeeded, its result in *result (yours: its drop does
 * not run; with result NULL the result is dropped). A call that ran and did not succeed
 * returns its error's code (TETHER_E_TASK_FAILED, TETHER_E_EXCEPTION, TETHER_E_PANIC,
 * TETHER_E_CANCELLED, TETHER_E_ACTOR_DEAD, ...), the error's message as the thread's last
 * error and, with error not NULL, the error itself in *error (release it). Not queued:
 * tether_actor_call_timeout's statuses, *error stays null. TETHER_E_TIMEOUT when no answer
 * came in time and TETHER_E_DEADLOCK from the thread that would have to run it (the
 * group's own thread): the call is then cancelled (not started: it never runs and its arg
 * is dropped; running: it is asked to stop, and its result is dropped). */
TETHER_API tether_status tether_actor_call_wait(tether_actor a, const char *group, tether_method_fn m, void *arg,
                                                tether_drop_fn arg_drop, int64_t timeout_ns, void **result,
                                                tether_error *error);

/* tether_actor_state: TETHER_ACTOR_ALIVE, _DEAD or _STOPPED into *state; with `cause` not
 * NULL, a DEAD actor's constructor error as a new handle (the null handle otherwise).
 * ALIVE while the constructor is still queued or running. Never waits.
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL state). */
TETHER_API tether_status tether_actor_state(tether_actor a, int32_t *state, tether_error *cause);

/* tether_actor_get_stats: the actor's calls (all its groups): as tether_executor_get_stats;
 * os_thread_id is the default thread's. */
TETHER_API tether_status tether_actor_get_stats(tether_actor a, tether_actor_stats *out);

/* tether_actor_error: kept error i of the actor's fire-and-forget calls (the first 64 are
 * kept), as a new handle. As tether_executor_error. */
TETHER_API tether_status tether_actor_error(tether_actor a, size_t i, tether_error *out);

/* tether_actor_stop: from now on the actor is STOPPED (or stays DEAD) and new calls return
 * TETHER_E_SHUTDOWN. TETHER_STOP_CANCEL cancels every queued call before it returns (their
 * futures CANCELLED, their args dropped) and asks running methods to stop;
 * TETHER_STOP_DRAIN lets what is queued run. Then the destructor runs on the default
 * thread, once every group is idle. Returns TETHER_OK once the destructor has run (without
 * one: once every call has settled), TETHER_E_TIMEOUT if it has not within timeout_ns (the stop
 * goes on), TETHER_E_DEADLOCK from the actor's own threads with timeout_ns != 0 (the stop
 * is started first), TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (unknown mode).
 * A second stop may turn a DRAIN into a CANCEL. */
TETHER_API tether_status tether_actor_stop(tether_actor a, int32_t mode, int64_t timeout_ns);

/* tether_actor_release: stop(DRAIN) waited to the end, then the end of the handle and of
 * the actor's own threads (its groups', and the nested threads its calls started), and of
 * its executor's thread when the actor was that executor's last user (its own executor, or
 * a shared one whose handle was released before). From the inside it behaves as release_nowait. Waiters on the
 * handle return TETHER_E_INVALID_HANDLE. Returns TETHER_E_INVALID_HANDLE. */
TETHER_API tether_status tether_actor_release(tether_actor a);

/* tether_actor_release_nowait: ends the handle at once; the stop (DRAIN) goes on and the
 * control thread joins the actor's threads when it is done. Returns TETHER_E_INVALID_HANDLE. */
TETHER_API tether_status tether_actor_release_nowait(tether_actor a);

/* ------------------------------------------------------------------------------------------
 * 9. Compiled graphs: execution loops on named threads
 *
 * A graph describes a pipeline of actor methods ("nodes"): each node runs on its actor's
 * default thread (where the constructor ran) or on one of its single-thread groups, and
 * receives its inputs in the order their edges were added. Compiling installs the graph's
 * loop on every participating OS thread; a thread hosts at most one compiled graph
 * (TETHER_E_THREAD_BUSY otherwise — two actors sharing one executor share one thread).
 * The loop never blocks its thread: a node's step is queued on its thread only once every
 * input of that execution is there, so ordinary calls to the same actor keep running
 * between steps. Up to channel_capacity executions are in flight (pipelining), and they
 * complete in the order they were started.
 *
 * Steps count as the actor's work: its destructor runs after the steps already queued,
 * a stop with TETHER_STOP_CANCEL cancels the queued ones, and from a stop on every
 * execution that needs the actor fails with TETHER_E_SHUTDOWN. Steps are not calls: the
 * actor's stats and mailbox capacity do not count them.
 * ---------------------------------------------------------------------------------------- */

/* A node: `state` is its actor's state, `arg` the node's arg, inputs[0..n_inputs) the
 * values of its edges (TETHER_GRAPH_INPUT: the execution's input) in edge order (the array
 * lives for the call; the values until the execution ends). It stores
 * its value in *output (NULL by default) and returns TETHER_OK, or fails like any task
 * (section 4): the execution then fails with that error and its later nodes do not run.
 * tether_task_stop_requested turns true when the compiled graph is released or the actor
 * is stopped with TETHER_STOP_CANCEL; tether_task_spawn is TETHER_E_WRONG_STATE in a node
 * (a step ends when its function returns). */
typedef tether_status (*tether_node_fn)(tether_task *t, void *state, void *arg, void *const *inputs,
                                        size_t n_inputs, void **output);

typedef struct tether_compile_options {
  uint32_t struct_size;
  size_t channel_capacity;   /* default 8: executions in flight; 1 to 1048576. Slots are made
                                at compile: memory grows as capacity x nodes (about 100 bytes
                                each; 2^20 x 2 nodes is some 200 MB) */
  tether_drop_fn value_drop; /* default NULL: the library never frees node values */
} tether_compile_options;

#define TETHER_GRAPH_INPUT UINT32_MAX

/* tether_graph_create: an empty graph in *out (the caller releases it).
 * Returns TETHER_E_INVALID_ARGUMENT (NULL out), TETHER_E_NO_MEMORY. */
TETHER_API tether_status tether_graph_create(tether_graph *out);

/* tether_graph_add_node: a node running fn on actor a — on its default thread (group NULL)
 * or on group `group`, which must have one thread by compile time — with index in *node
 * (0, 1, ...). The graph keeps the actor alive. arg follows section 4: it is dropped when
 * the graph and every compiled graph made from it are released (or at once on failure).
 * Returns TETHER_E_INVALID_HANDLE (g or a), TETHER_E_INVALID_ARGUMENT (NULL fn or node),
 * TETHER_E_NOT_FOUND (no such group), TETHER_E_WRONG_STATE (a compiled graph made from g
 * is alive: release it to edit the graph again), TETHER_E_NO_MEMORY. */
TETHER_API tether_status tether_graph_add_node(tether_graph g, tether_actor a, const char *group, tether_node_fn fn,
                                               void *arg, tether_drop_fn arg_drop, uint32_t *node);

/* tether_graph_add_edge: the value of `from` (a node, or TETHER_GRAPH_INPUT for the
 * execution's input) becomes the next input of node `to`. The same edge may be added
 * twice (the node then gets the value twice). Cycles are refused at compile.
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (no such node),
 * TETHER_E_WRONG_STATE (compiled, as above). */
TETHER_API tether_status tether_graph_add_edge(tether_graph g, uint32_t from, uint32_t to);

/* tether_graph_set_outputs: the nodes whose values an execution returns, in this order
 * (replacing an earlier set). Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT
 * (NULL nodes, n == 0, no such node, a node twice), TETHER_E_WRONG_STATE (compiled). */
TETHER_API tether_status tether_graph_set_outputs(tether_graph g, const uint32_t *nodes, size_t n);

/* tether_graph_error: why the last compile of g failed, as a new handle the caller
 * releases (its code is the status compile returned, its message names the node, the
 * cycle or the busy thread); the null handle if the last compile succeeded or none ran.
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL out). */
TETHER_API tether_status tether_graph_error(tether_graph g, tether_error *out);

/* tether_graph_release: ends the handle. Compiled graphs made from it live on.
 * Returns TETHER_E_INVALID_HANDLE. */
TETHER_API tether_status tether_graph_release(tether_graph g);

/* tether_compile_options_init: fills the defaults and struct_size. NULL does nothing. */
TETHER_API void tether_compile_options_init(tether_compile_options *o);

/* tether_graph_compile: checks g and installs its loop on the threads of its nodes; the
 * compiled graph in *out (the caller releases it). The graph is left as it was and may be
 * compiled again (after a failure, or once this compiled graph is released); until then
 * it cannot be edited. Installs nothing on failure; tether_graph_error says why.
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL out, bad options, no
 * nodes, no outputs, a cycle, a node not reachable from the input — including a node
 * without inputs —, a node on a group of several threads), TETHER_E_THREAD_BUSY (a thread
 * already hosts another compiled graph; the error names it), TETHER_E_ACTOR_DEAD,
 * TETHER_E_SHUTDOWN (an actor is dead / stopping or stopped), TETHER_E_NO_MEMORY. */
TETHER_API tether_status tether_graph_compile(tether_graph g, const tether_compile_options *o, tether_compiled *out);

/* tether_compiled_execute: starts one execution of `input` and returns its future in *out
 * (the caller releases it). The future stays PENDING until the execution has ended, then
 * is SUCCEEDED (read the values with tether_future_outputs), FAILED with the first failing
 * node's error (the other executions go on), or CANCELLED; tether_future_cancel on it skips
 * the nodes not yet started. input_drop(input) runs once the execution has ended, whatever
 * its outcome. Waiting on the future from a thread of the graph before it ended is
 * TETHER_E_DEADLOCK.
 * Values: without value_drop, node values are the user's pointers, passed along and never
 * freed or copied. With value_drop, the execution owns every non-NULL value a node
 * produced (so a node must produce a value of its own, never pass an input through):
 * consumers borrow them during their call; when the execution ends each is dropped once,
 * except the outputs of a SUCCEEDED execution, which pass to the caller at the first
 * tether_future_outputs (dropped with the future if never taken).
 * Returns TETHER_E_INVALID_HANDLE, TETHER_E_INVALID_ARGUMENT (NULL out), TETHER_E_QUEUE_FULL
 * (channel_capacity executions in flight), TETHER_E_SHUTDOWN / TETHER_E_ACTOR_DEAD (an actor
 * of the graph is stopped / dead), TETHER_E_NO_MEMORY; input is dropped on every failure. */
TETHER_API tether_status tether_compiled_execute(tether_compiled c, void *input, tether_drop_fn input_drop,
                                                 tether_future *out);

/* tether_compiled_execute_timeout: like execute, but with channel_capacity executions in
 * flight waits up to timeout_ns for one to end: TETHER_E_TIMEOUT after it,
 * TETHER_E_DEADLOCK from a thread of the graph (only its steps could make room),
 * TETHER_E_INVALID_HANDLE if another thread releases c meanwhile. */
TETHER_API tether_status tether_compiled_execute_timeout(tether_compiled c, void *input, tether_drop_fn input_drop,
                                                         tether_future *out, int64_t timeout_ns);

/* tether_compiled_release: tears the loops down and ends the handle, without waiting for
 * user code — also while a node is running: executions not yet ended are CANCELLED at once
 * (their remaining nodes never run; their values and inputs are dropped as their steps
 * drain), and each thread is free for another compiled graph at once, or once its running
 * node returns. The graph's node args are dropped once the graph too is released and the
 * last step has drained. Returns TETHER_E_INVALID_HANDLE. */
TETHER_API tether_status tether_compiled_release(tether_compiled c);

/* tether_compiled_release_nowait: the same (tether_compiled_release never waits); here
 * for symmetry with the other _nowait releases. Returns TETHER_E_INVALID_HANDLE. */
TETHER_API tether_status tether_compiled_release_nowait(tether_compiled c);

/* ------------------------------------------------------------------------------------------
 * Testing aid
 * ---------------------------------------------------------------------------------------- */

/* tether_debug_fail_thread_create: for tests of the THREAD_CREATE paths. After
 * `successes` more successful thread creations by the library, the next one fails as if
 * the OS refused it (once). UINT32_MAX disarms it. Never fails. */
TETHER_API void tether_debug_fail_thread_create(uint32_t successes);

/* tether_debug_unjoined_threads: how many threads the library created whose end it has
 * not yet seen and released (its own control thread aside). After a _nowait release the
 * control thread releases the object's threads a little later: a test that must end with
 * every thread ended (ThreadSanitizer's leak check, a binding's TestMain) waits for this
 * to reach 0.
 * Never fails. */
TETHER_API size_t tether_debug_unjoined_threads(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TETHER_TETHER_H */
