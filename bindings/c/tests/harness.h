/*
 * harness.h — the C suite's tiny test harness (libuv style).
 *
 * Each case is a function `TEST(name)`, listed once in test_list.h. The executable runs the
 * one case named by argv[1], so ctest gives every case its own process and its own timeout.
 * A failed CHECK prints where and why, then ends the process with _exit(1) at once: other
 * threads of the test may be blocked in user code, and nothing must wait for them.
 *
 * Synchronisation the tests own is pthread mutex + condvar with timed waits (event,
 * counter). Where nothing else fits, CHECK_SOON spins with sched_yield under a deadline.
 * No sleep is ever used to order events.
 *
 * Stress sizes go through scaled(n): divided by the integer in TETHER_TEST_SCALE (the asan,
 * tsan and valgrind presets set 4, 10 and 20).
 */
#ifndef TETHER_C_HARNESS_H
#define TETHER_C_HARNESS_H

/* Each test file defines _POSIX_C_SOURCE (or _GNU_SOURCE) before its first include: the
 * harness needs clock_gettime, pthread_condattr_setclock and sysconf. */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#  error "define _POSIX_C_SOURCE 200809L (or _GNU_SOURCE) before including harness.h"
#endif

#include <tether/tether.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TEST(name) void test_##name(void)

/* Nanosecond units and the two kinds of bounded wait a test makes. */
#define MS ((int64_t)1000000)
#define SEC ((int64_t)1000000000)
#define T_LONG (30 * SEC) /* a wait that must succeed: generous, for valgrind */
#define T_SHORT (20 * MS) /* a wait that must time out */

#if defined(__MINGW_PRINTF_FORMAT) /* mingw-w64: the C99 printf of __USE_MINGW_ANSI_STDIO */
#  define HARNESS_NORETURN __attribute__((noreturn))
#  define HARNESS_PRINTF(a, b) __attribute__((format(__MINGW_PRINTF_FORMAT, a, b)))
#elif defined(__GNUC__)
#  define HARNESS_NORETURN __attribute__((noreturn))
#  define HARNESS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#  define HARNESS_NORETURN
#  define HARNESS_PRINTF(a, b)
#endif

/* harness_fail: reports a failed check and ends the process at once, from any thread. */
static inline void harness_fail(const char *file, int line, const char *fmt, ...)
    HARNESS_NORETURN HARNESS_PRINTF(3, 4);
static inline void harness_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s:%d: FAILED: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
  _exit(1);
}

#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (!(cond)) harness_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);                       \
  } while (0)

/* CHECK_EQ: integer equality, both sides printed on failure. */
#define CHECK_EQ(a, b)                                                                       \
  do {                                                                                       \
    long long a_ = (long long)(a), b_ = (long long)(b);                                      \
    if (a_ != b_) harness_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, a_, b_); \
  } while (0)

/* CHECK_ST: a call returns the expected status; prints both names and the last-error text. */
#define CHECK_ST(expr, want)                                                                 \
  do {                                                                                       \
    tether_status got_ = (expr), want_ = (want);                                             \
    if (got_ != want_) {                                                                     \
      char m_[256];                                                                          \
      m_[0] = '\0';                                                                          \
      tether_last_error_message(m_, sizeof m_);                                              \
      harness_fail(__FILE__, __LINE__, "%s returned %s, want %s (last error: \"%s\")", #expr, \
                   tether_status_name(got_), tether_status_name(want_), m_);                 \
    }                                                                                        \
  } while (0)

/* CHECK_ST_IN / CHECK_IN: CHECK_ST / CHECK that also name the case under test (`what`). */
#define CHECK_ST_IN(what, expr, want)                                                        \
  do {                                                                                       \
    tether_status g_ = (expr), w_ = (want);                                                  \
    if (g_ != w_)                                                                            \
      harness_fail(__FILE__, __LINE__, "[%s] %s returned %s, want %s", (what), #expr,         \
                   tether_status_name(g_), tether_status_name(w_));                          \
  } while (0)

#define CHECK_IN(what, cond)                                                                 \
  do {                                                                                       \
    if (!(cond)) harness_fail(__FILE__, __LINE__, "[%s] CHECK(%s)", (what), #cond);          \
  } while (0)

#define CHECK_STR(a, b)                                                                      \
  do {                                                                                       \
    const char *a_ = (a), *b_ = (b);                                                         \
    if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0)                                     \
      harness_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b,                 \
                   a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                  \
  } while (0)

static inline int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * SEC + ts.tv_nsec;
}

/* CHECK_SOON: spins (yielding) until cond holds; fails after T_LONG. For states the library
 * exposes only by polling (live_threads, error_count). */
#define CHECK_SOON(cond)                                                                     \
  do {                                                                                       \
    int64_t d_ = now_ns() + T_LONG;                                                          \
    while (!(cond)) {                                                                        \
      if (now_ns() > d_) harness_fail(__FILE__, __LINE__, "timed out waiting for %s", #cond); \
      sched_yield();                                                                         \
    }                                                                                        \
  } while (0)

/* scaled: a stress size divided by TETHER_TEST_SCALE (when set), never below 1. */
static inline long scaled(long n) {
  const char *s = getenv("TETHER_TEST_SCALE");
  long k = s ? strtol(s, NULL, 10) : 1;
  if (k > 1) n /= k;
  return n < 1 ? 1 : n;
}

/* ---- Synchronisation owned by the tests ------------------------------------------------ */

/* The clock condvar deadlines are on: CLOCK_MONOTONIC, except with winpthreads, whose
 * pthread_cond_timedwait takes CLOCK_REALTIME whatever the attribute says. */
#if defined(_WIN32)
#  define HARNESS_COND_CLOCK CLOCK_REALTIME
#else
#  define HARNESS_COND_CLOCK CLOCK_MONOTONIC
#endif

static inline void abs_deadline(struct timespec *ts, int64_t timeout_ns) {
  struct timespec base;
  int64_t t;
  clock_gettime(HARNESS_COND_CLOCK, &base);
  t = (int64_t)base.tv_sec * SEC + base.tv_nsec + timeout_ns;
  ts->tv_sec = (time_t)(t / SEC);
  ts->tv_nsec = (long)(t % SEC);
}

static inline void cond_init_monotonic(pthread_cond_t *cv) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, HARNESS_COND_CLOCK);
  pthread_cond_init(cv, &a);
  pthread_condattr_destroy(&a);
}

/* counter: a waitable integer. Counts arg_drop calls, callback runs, and the like. */
typedef struct counter {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  long n; /* guarded by mu */
} counter;

static inline void counter_init(counter *c) {
  pthread_mutex_init(&c->mu, NULL);
  cond_init_monotonic(&c->cv);
  c->n = 0;
}

static inline void counter_destroy(counter *c) {
  pthread_cond_destroy(&c->cv);
  pthread_mutex_destroy(&c->mu);
}

static inline void counter_add(counter *c, long k) {
  pthread_mutex_lock(&c->mu);
  c->n += k;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

static inline void counter_set(counter *c, long v) {
  pthread_mutex_lock(&c->mu);
  c->n = v;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

static inline long counter_get(counter *c) {
  long v;
  pthread_mutex_lock(&c->mu);
  v = c->n;
  pthread_mutex_unlock(&c->mu);
  return v;
}

/* counter_wait: waits until the count is at least `at_least`; 1 if it is, 0 on timeout. */
static inline int counter_wait(counter *c, long at_least, int64_t timeout_ns) {
  struct timespec ts;
  int ok;
  abs_deadline(&ts, timeout_ns);
  pthread_mutex_lock(&c->mu);
  while (c->n < at_least) {
    if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) == ETIMEDOUT) break;
  }
  ok = c->n >= at_least;
  pthread_mutex_unlock(&c->mu);
  return ok;
}

/* count_drop: an arg_drop / notify function for an arg that is a counter, or a struct whose
 * FIRST member is a counter (C guarantees the two pointers convert). */
static inline void count_drop(void *p) { counter_add((counter *)p, 1); }

/* event: a one-shot flag (a gate a callback waits on, or a "started" notice). */
typedef counter event;
#define event_init counter_init
#define event_destroy counter_destroy
static inline void event_set(event *e) { counter_set(e, 1); }
static inline int event_is_set(event *e) { return counter_get(e) != 0; }
static inline int event_wait(event *e, int64_t timeout_ns) { return counter_wait(e, 1, timeout_ns); }

/* ---- Error helpers ---------------------------------------------------------------------- */

/* check_error_: asserts every field of an error; NULL msg/thread are not checked. */
static inline void check_error_(const char *file, int line, tether_error e, int32_t code,
                                int64_t user_code, const char *msg, const char *thread) {
  char buf[256];
  if (e.id == 0) harness_fail(file, line, "error handle is null");
  if (tether_error_code(e) != code)
    harness_fail(file, line, "error code %s, want %s", tether_status_name(tether_error_code(e)),
                 tether_status_name(code));
  if (tether_error_user_code(e) != user_code)
    harness_fail(file, line, "error user_code %lld, want %lld",
                 (long long)tether_error_user_code(e), (long long)user_code);
  if (msg) {
    size_t n = tether_error_message(e, buf, sizeof buf);
    if (n != strlen(msg) || strcmp(buf, msg) != 0)
      harness_fail(file, line, "error message \"%s\" (length %zu), want \"%s\"", buf, n, msg);
  }
  if (thread) {
    size_t n = tether_error_thread_name(e, buf, sizeof buf);
    if (n != strlen(thread) || strcmp(buf, thread) != 0)
      harness_fail(file, line, "error thread \"%s\" (length %zu), want \"%s\"", buf, n, thread);
  }
}
#define CHECK_ERROR(e, code, user_code, msg, thread)                                         \
  check_error_(__FILE__, __LINE__, (e), (code), (user_code), (msg), (thread))

/* CHECK_RUNNER_ERROR: asserts error i of runner r, and releases the handle it took. */
#define CHECK_RUNNER_ERROR(r, i, code, user_code, msg, thread)                               \
  do {                                                                                       \
    tether_error e_ = {0};                                                                   \
    CHECK_ST(tether_runner_error_at((r), (i), &e_), TETHER_OK);                              \
    check_error_(__FILE__, __LINE__, e_, (code), (user_code), (msg), (thread));              \
    CHECK_ST(tether_error_release(e_), TETHER_OK);                                           \
  } while (0)

/* CHECK_STATE: the runner's poll succeeds and says `want`. */
#define CHECK_STATE(r, want)                                                                 \
  do {                                                                                       \
    int32_t s_ = -1;                                                                         \
    CHECK_ST(tether_runner_poll((r), &s_), TETHER_OK);                                       \
    CHECK_EQ(s_, (want));                                                                    \
  } while (0)

/* CHECK_LIVE: the runner's live_threads succeeds and says `want`. */
#define CHECK_LIVE(r, want)                                                                  \
  do {                                                                                       \
    size_t n_ = (size_t)-1;                                                                  \
    CHECK_ST(tether_runner_live_threads((r), &n_), TETHER_OK);                               \
    CHECK_EQ(n_, (want));                                                                    \
  } while (0)

/* live_threads: the count, or (size_t)-1 when the call fails (for CHECK_SOON). */
static inline size_t live_threads(tether_runner r) {
  size_t n = (size_t)-1;
  if (tether_runner_live_threads(r, &n) != TETHER_OK) return (size_t)-1;
  return n;
}

/* runner_opts: options with `name`, other fields at their defaults. */
static inline tether_runner_options runner_opts(const char *name) {
  tether_runner_options o;
  tether_runner_options_init(&o);
  o.name = name;
  return o;
}

#endif /* TETHER_C_HARNESS_H */
