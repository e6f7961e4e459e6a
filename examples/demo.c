/*
 * demo.c — the scenarios tether exists for, in plain C99.
 *
 * 1. A runner. A "trainer" thread trains for TRAIN_STEPS steps. At step UPLOAD_STEP it
 *    uploads the checkpoint on a nested thread, "upload-1", and keeps training. The upload
 *    fails (the disk is full) while training still runs. Ray Train needed a monitoring
 *    thread and a queue for this (ray-project/ray#55756); with tether the nested thread
 *    belongs to the runner's scope, so:
 *      - the controller (main) sees the failure the moment it happens, although the
 *        trainer itself has not failed and is still running;
 *      - the error says what failed, where, and with which application code;
 *      - the trainer is asked to stop (stop_on_error) and sees it between two steps;
 *      - releasing the runner joins every thread: nothing is leaked or detached.
 * 2. An actor keeps its thread. Its constructor sets a thread-local to 42; a later method
 *    returns 1 + that thread-local = 43, because the constructor, the method and the
 *    destructor all run on the same OS thread (what Ray's threaded actors lose:
 *    ray-project/ray#46336).
 * 3. A blocked method stalls neither the actor's other group nor its control plane. A
 *    default-group method blocks in user code; meanwhile a call to the group "io" answers,
 *    and so do the actor's state and stats. stop(CANCEL) cancels the call queued behind
 *    the blocked one, the blocked method sees stop_requested and returns, and the actor
 *    is released.
 * 4. Pipeline parallelism with a compiled graph (ray-project/ray#46336, PR #50032). Two
 *    workers: worker 0 runs the first forward pass and the last backward pass, worker 1
 *    the middle two. The graph's loops are installed on the workers' own threads (where
 *    their constructors ran); three batches go through, pipelined, and come out in
 *    order. Then, with the graph still compiled, an ordinary call get_logs to worker 0
 *    answers — the call that hung in Ray, whose execution loop monopolised the thread. A
 *    second graph on worker 0's thread is refused with TETHER_E_THREAD_BUSY.
 *
 * The program checks each of these facts and exits 1 if one does not hold, so it doubles
 * as the ctest test `example.demo`.
 */
#define _GNU_SOURCE /* syscall(SYS_gettid); implies POSIX.1-2008 */

#include <tether/tether.h>

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TRAIN_STEPS 20
#define UPLOAD_STEP 2
#define STEP_MS 100           /* one training step */
#define UPLOAD_MS 20          /* how long the upload runs before the disk is full */
#define POLL_JOIN_MS 50       /* the controller's wait between two polls */
#define MAX_POLLS 100         /* 100 x 50 ms: give up after 5 s */
#define UPLOAD_USER_CODE 7
#define UPLOAD_MESSAGE "checkpoint upload failed: disk full"

#define TLS_VALUE 42          /* what the actor's constructor puts in its thread-local */
#define BLOCK_MAX_MS 10000    /* the blocked method's own bound: the demo never hangs */
#define BLOCK_SLICE_MS 5      /* it looks at stop_requested between two condvar waits */
#define ANSWER_MS 2000        /* the controller's bound on every answer it waits for */

#define MS_NS ((int64_t)1000000)

/* demo: what the controller, the trainer and the upload share. */
typedef struct demo {
  int64_t start_ns;
  pthread_mutex_t mu;
  int step;           /* guarded by mu: the step the trainer is in */
  int stopped_at;     /* guarded by mu: the step at which the trainer saw the stop; 0 = none */
  int64_t failed_ns;  /* guarded by mu: when upload-1 failed */
} demo;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double ms_since(const demo *d, int64_t t) { return (double)(t - d->start_ns) / 1e6; }

/* say: one line of the story, flushed at once so the threads' lines come out in order. */
static void say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  fputc('\n', stdout);
  fflush(stdout);
}

/* work_ms: stands for real work (a training step, an upload) of `ms` milliseconds. */
static void work_ms(int ms) {
  struct timespec left;
  left.tv_sec = ms / 1000;
  left.tv_nsec = (long)(ms % 1000) * 1000000L;
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

/* upload: the nested thread. It fails while the trainer is still training. */
static tether_status upload(tether_task *t, void *arg) {
  demo *d = (demo *)arg;
  say("%s: uploading the checkpoint of step %d", tether_task_thread_name(t), UPLOAD_STEP);
  work_ms(UPLOAD_MS);
  say("%s: %s", tether_task_thread_name(t), UPLOAD_MESSAGE);
  pthread_mutex_lock(&d->mu);
  d->failed_ns = now_ns();
  pthread_mutex_unlock(&d->mu);
  return tether_task_fail(t, UPLOAD_USER_CODE, UPLOAD_MESSAGE);
}

/* trainer: the runner's target. It checks for a stop request between two steps. */
static tether_status trainer(tether_task *t, void *arg) {
  demo *d = (demo *)arg;
  int step;
  for (step = 1; step <= TRAIN_STEPS; ++step) {
    if (tether_task_stop_requested(t)) {
      pthread_mutex_lock(&d->mu);
      d->stopped_at = step;
      pthread_mutex_unlock(&d->mu);
      say("trainer: stop requested at step %d, stopping", step);
      return TETHER_OK; /* the scope already failed: returning OK does not hide that */
    }
    pthread_mutex_lock(&d->mu);
    d->step = step;
    pthread_mutex_unlock(&d->mu);
    if (step == UPLOAD_STEP) {
      tether_status st;
      say("trainer: step %d/%d, checkpoint saved, uploading it on nested thread \"upload-1\"",
          step, TRAIN_STEPS);
      st = tether_task_spawn(t, "upload-1", upload, d, NULL);
      if (st != TETHER_OK) return tether_task_fail(t, st, "could not start the upload thread");
    } else {
      say("trainer: step %d/%d", step, TRAIN_STEPS);
    }
    work_ms(STEP_MS);
  }
  say("trainer: finished %d steps", TRAIN_STEPS);
  return TETHER_OK;
}

static const char *state_name(int32_t s) {
  switch (s) {
    case TETHER_PENDING: return "TETHER_PENDING";
    case TETHER_RUNNING: return "TETHER_RUNNING";
    case TETHER_SUCCEEDED: return "TETHER_SUCCEEDED";
    case TETHER_FAILED: return "TETHER_FAILED";
    case TETHER_CANCELLED: return "TETHER_CANCELLED";
    default: return "?";
  }
}

/* check: counts a fact of the story that does not hold. */
static int failures = 0;
static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "demo: FAILED CHECK: %s\n", what);
    ++failures;
  }
}

/* check_call: a tether call that must return TETHER_OK. */
static int check_call(tether_status st, const char *call) {
  if (st != TETHER_OK) {
    char detail[256];
    tether_last_error_message(detail, sizeof detail);
    fprintf(stderr, "demo: %s returned %s: %s\n", call, tether_status_name(st), detail);
    ++failures;
  }
  return st == TETHER_OK;
}

/* ---- scene 1: a runner whose nested thread fails ------------------------------------ */

static void runner_scene(void) {
  demo d;
  tether_runner_options opts;
  tether_runner r;
  tether_error err = {0};
  int32_t state = TETHER_RUNNING;
  int polls = 0, step_at_failure, stopped_at;
  int64_t seen_ns, failed_ns;
  size_t live = 99, count;
  char message[128], thread[64], type[128];

  memset(&d, 0, sizeof d);
  pthread_mutex_init(&d.mu, NULL);
  d.start_ns = now_ns();

  tether_runner_options_init(&opts);
  opts.name = "trainer";
  say("demo: tether %s, runner \"trainer\": %d steps of %d ms, stop_on_error=%d",
      tether_version_string(), TRAIN_STEPS, STEP_MS, opts.stop_on_error);
  if (!check_call(tether_runner_start(&opts, trainer, &d, NULL, &r), "tether_runner_start")) {
    pthread_mutex_destroy(&d.mu);
    return;
  }

  /* The controller: poll, and wait a little between two polls. join returns at once when
   * the scope fails, so the error is seen without a polling delay. */
  for (;;) {
    tether_status st;
    if (!check_call(tether_runner_poll(r, &state), "tether_runner_poll")) break;
    ++polls;
    if (state != TETHER_RUNNING || polls > MAX_POLLS) break;
    st = tether_runner_join(r, POLL_JOIN_MS * MS_NS);
    if (st != TETHER_E_TIMEOUT && !check_call(st, "tether_runner_join")) break;
  }
  seen_ns = now_ns();
  pthread_mutex_lock(&d.mu);
  step_at_failure = d.step;
  failed_ns = d.failed_ns;
  pthread_mutex_unlock(&d.mu);

  say("controller: poll #%d -> %s at %.1f ms, the trainer still at step %d", polls,
      state_name(state), ms_since(&d, seen_ns), step_at_failure);
  check(state == TETHER_FAILED, "the scope is FAILED");

  if (check_call(tether_runner_error(r, &err), "tether_runner_error")) {
    check(err.id != 0, "the failed scope has an error");
    tether_error_message(err, message, sizeof message);
    tether_error_thread_name(err, thread, sizeof thread);
    tether_error_type_name(err, type, sizeof type);
    say("controller: error %s, user code %lld", tether_status_name(tether_error_code(err)),
        (long long)tether_error_user_code(err));
    say("controller:   message \"%s\"", message);
    say("controller:   thread  \"%s\", type \"%s\"%s", thread, type,
        type[0] ? "" : " (a C failure: no exception type)");
    check(tether_error_code(err) == TETHER_E_TASK_FAILED, "code TETHER_E_TASK_FAILED");
    check(tether_error_user_code(err) == UPLOAD_USER_CODE, "user code 7");
    check(strcmp(message, UPLOAD_MESSAGE) == 0, "the upload's message");
    check(strcmp(thread, "upload-1") == 0, "raised on thread upload-1");
    check_call(tether_error_release(err), "tether_error_release");
  }

  /* The trainer was asked to stop: wait (bounded) until every thread has returned. */
  check_call(tether_runner_join_all(r, 5000 * MS_NS), "tether_runner_join_all");
  check_call(tether_runner_live_threads(r, &live), "tether_runner_live_threads");
  count = tether_runner_error_count(r);
  pthread_mutex_lock(&d.mu);
  stopped_at = d.stopped_at;
  pthread_mutex_unlock(&d.mu);
  say("controller: trainer stopped at step %d/%d; %zu threads live, %zu error(s) recorded",
      stopped_at, TRAIN_STEPS, live, count);
  check(live == 0, "no live thread after join_all");
  check(count == 1, "exactly one error recorded");
  check(stopped_at > 0 && stopped_at < TRAIN_STEPS, "the trainer stopped early");

  if (check_call(tether_runner_release(r), "tether_runner_release") && failures == 0) {
    say("demo: error surfaced %.2f ms after upload-1 failed, runner released cleanly",
        (double)(seen_ns - failed_ns) / 1e6);
  }
  pthread_mutex_destroy(&d.mu);
}

/* ---- shared by the actor scenes -------------------------------------------------------- */

static int64_t os_tid(void) { return (int64_t)syscall(SYS_gettid); }

static const char *actor_state_name(int32_t s) {
  switch (s) {
    case TETHER_ACTOR_ALIVE: return "TETHER_ACTOR_ALIVE";
    case TETHER_ACTOR_DEAD: return "TETHER_ACTOR_DEAD";
    case TETHER_ACTOR_STOPPED: return "TETHER_ACTOR_STOPPED";
    default: return "?";
  }
}

/* wait_done: waits (bounded: ANSWER_MS) for future f and returns its state; -1 if the
 * wait or the poll failed. */
static int32_t wait_done(tether_future f, const char *what) {
  int32_t state = -1;
  if (!check_call(tether_future_wait(f, ANSWER_MS * MS_NS), what)) return -1;
  if (!check_call(tether_future_poll(f, &state), "tether_future_poll")) return -1;
  return state;
}

/* poll_state: future f's state now; -1 if the poll failed. */
static int32_t poll_state(tether_future f) {
  int32_t state = -1;
  return check_call(tether_future_poll(f, &state), "tether_future_poll") ? state : -1;
}

/* ---- scene 2: an actor keeps its thread ------------------------------------------------ */

/* tls_value: one per OS thread. __thread is GNU C's thread-local storage class (C11
 * spells it _Thread_local); it compiles with -std=c99 -pedantic on GCC and Clang. */
static __thread int tls_value;

/* tls_actor: where the actor's thread notes which OS thread ran what. main reads it only
 * after a future wait or the release, which order it after the writes. */
typedef struct tls_actor {
  int64_t ctor_tid, method_tid, dtor_tid;
} tls_actor;

static tether_status tls_ctor(tether_task *t, void *arg, void **state_out) {
  tls_actor *s = (tls_actor *)arg;
  tls_value = TLS_VALUE;
  s->ctor_tid = os_tid();
  say("%s: constructor sets its thread-local to %d, on OS thread %lld", tether_task_thread_name(t),
      tls_value, (long long)s->ctor_tid);
  *state_out = s; /* the state is the caller's struct: no arg_drop, no free in the dtor */
  return TETHER_OK;
}

/* tls_add_one: the method: 1 + the thread-local the constructor set. */
static tether_status tls_add_one(tether_task *t, void *state, void *arg) {
  (void)arg;
  ((tls_actor *)state)->method_tid = os_tid();
  return tether_task_set_result(t, (void *)(intptr_t)(1 + tls_value), NULL);
}

static void tls_dtor(void *state) { ((tls_actor *)state)->dtor_tid = os_tid(); }

static void thread_local_scene(void) {
  tls_actor s;
  tether_actor_options opts;
  tether_actor a;
  tether_future f;
  tether_actor_stats stats;
  void *result = NULL;
  int sum = 0;

  memset(&s, 0, sizeof s);
  tether_actor_options_init(&opts);
  opts.name = "tls-actor";
  say("demo: actor \"tls-actor\" on a thread of its own");
  if (!check_call(tether_actor_create(&opts, tls_ctor, tls_dtor, &s, NULL, &a), "tether_actor_create"))
    return;
  if (check_call(tether_actor_call(a, NULL, tls_add_one, NULL, NULL, &f), "tether_actor_call")) {
    check(wait_done(f, "tether_future_wait(add_one)") == TETHER_SUCCEEDED, "add_one SUCCEEDED");
    if (check_call(tether_future_take_result(f, &result), "tether_future_take_result"))
      sum = (int)(intptr_t)result;
    check_call(tether_future_release(f), "tether_future_release");
    say("controller: add_one returned 1 + thread-local = %d, on OS thread %lld (the constructor's)",
        sum, (long long)s.method_tid);
    check(sum == 1 + TLS_VALUE, "add_one returned 43");
    check(s.method_tid == s.ctor_tid, "the method ran on the constructor's OS thread");
    check(tls_value == 0, "main's own thread-local is untouched");
  }
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  check_call(tether_actor_get_stats(a, &stats), "tether_actor_get_stats");
  check((int64_t)stats.os_thread_id == s.ctor_tid, "stats.os_thread_id is the constructor's thread");
  check_call(tether_actor_release(a), "tether_actor_release"); /* runs the destructor */
  check(s.dtor_tid == s.ctor_tid, "the destructor ran on the constructor's OS thread");
  say("controller: stats.os_thread_id %llu, destructor on OS thread %lld: one thread for life",
      (unsigned long long)stats.os_thread_id, (long long)s.dtor_tid);
}

/* ---- scene 3: a blocked default group; the group "io" and the control plane answer ---- */

/* server: the state of the actor "server", shared by its two groups' threads and main. */
typedef struct server {
  pthread_mutex_t mu;
  pthread_cond_t cv;  /* CLOCK_MONOTONIC; signalled when block starts and to release it */
  int blocked;        /* guarded by mu: block has started */
  int released;       /* guarded by mu: main lets block go (only needed if the stop fails) */
  int saw_stop;       /* guarded by mu: block returned because a stop was requested */
  int queued_ran;     /* guarded by mu: the call queued behind block ran (it must not) */
  int64_t block_tid;  /* guarded by mu */
} server;

/* deadline_in: the CLOCK_MONOTONIC time `ms` from now, for pthread_cond_timedwait. */
static struct timespec deadline_in(int ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (long)(ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec += 1;
    ts.tv_nsec -= 1000000000L;
  }
  return ts;
}

static tether_status server_ctor(tether_task *t, void *arg, void **state_out) {
  (void)t;
  *state_out = arg;
  return TETHER_OK;
}

/* server_block: a default-group method stuck in user code, the way a real one waits on a
 * socket or a lock. It looks at stop_requested between two bounded condvar waits. */
static tether_status server_block(tether_task *t, void *state, void *arg) {
  server *s = (server *)state;
  const int64_t start = now_ns(), give_up = start + BLOCK_MAX_MS * MS_NS;
  int stop = 0;
  (void)arg;
  pthread_mutex_lock(&s->mu);
  s->blocked = 1;
  s->block_tid = os_tid();
  pthread_cond_broadcast(&s->cv);
  while (!s->released && !(stop = tether_task_stop_requested(t)) && now_ns() < give_up) {
    struct timespec at = deadline_in(BLOCK_SLICE_MS);
    pthread_cond_timedwait(&s->cv, &s->mu, &at);
  }
  s->saw_stop = stop;
  pthread_mutex_unlock(&s->mu);
  if (stop) {
    say("%s: block sees stop_requested at its next look (every %d ms), returns after %.1f ms",
        tether_task_thread_name(t), BLOCK_SLICE_MS, (double)(now_ns() - start) / 1e6);
  }
  return TETHER_OK;
}

/* server_queued: queued behind block on the default thread; stop(CANCEL) cancels it. */
static tether_status server_queued(tether_task *t, void *state, void *arg) {
  server *s = (server *)state;
  (void)t;
  (void)arg;
  pthread_mutex_lock(&s->mu);
  s->queued_ran = 1;
  pthread_mutex_unlock(&s->mu);
  return TETHER_OK;
}

/* server_ping: a method of the group "io": answers with its OS thread id. */
static tether_status server_ping(tether_task *t, void *state, void *arg) {
  (void)state;
  (void)arg;
  return tether_task_set_result(t, (void *)(intptr_t)os_tid(), NULL);
}

static void blocked_group_scene(void) {
  server s;
  pthread_condattr_t attr;
  tether_group_spec io;
  tether_actor_options opts;
  tether_actor a;
  tether_future fblock = {0}, fqueued = {0}, fping = {0};
  tether_actor_stats stats;
  tether_status st;
  int32_t astate = -1, block_state, queued_state;
  int64_t t0, io_ns = 0, stop_ns, block_tid;
  void *io_tid = NULL;
  int blocked, saw_stop, queued_ran;

  memset(&s, 0, sizeof s);
  pthread_mutex_init(&s.mu, NULL);
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&s.cv, &attr);
  pthread_condattr_destroy(&attr);
  io.name = "io";
  io.threads = 1;
  tether_actor_options_init(&opts);
  opts.name = "server";
  opts.groups = &io;
  opts.group_count = 1;

  say("demo: actor \"server\": the default group, and the group \"io\" on a thread of its own");
  if (!check_call(tether_actor_create(&opts, server_ctor, NULL, &s, NULL, &a), "tether_actor_create")) {
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.mu);
    return;
  }
  /* block, and a second default-group call queued behind it. */
  check_call(tether_actor_call(a, NULL, server_block, NULL, NULL, &fblock), "tether_actor_call(block)");
  pthread_mutex_lock(&s.mu);
  {
    struct timespec at = deadline_in(ANSWER_MS);
    while (!s.blocked && pthread_cond_timedwait(&s.cv, &s.mu, &at) != ETIMEDOUT) {
    }
  }
  blocked = s.blocked;
  block_tid = s.block_tid;
  pthread_mutex_unlock(&s.mu);
  check(blocked, "block started");
  say("server: \"block\" (default group) is blocked in user code, on OS thread %lld",
      (long long)block_tid);
  check_call(tether_actor_call(a, NULL, server_queued, NULL, NULL, &fqueued), "tether_actor_call(queued)");

  /* While it is blocked: a call to "io", the state, the stats. */
  t0 = now_ns();
  if (check_call(tether_actor_call(a, "io", server_ping, NULL, NULL, &fping), "tether_actor_call(io)")) {
    check(wait_done(fping, "tether_future_wait(io)") == TETHER_SUCCEEDED, "io answered");
    io_ns = now_ns() - t0;
    check_call(tether_future_take_result(fping, &io_tid), "tether_future_take_result");
  }
  say("controller: group \"io\" answered in %.2f ms, on its own OS thread %lld", (double)io_ns / 1e6,
      (long long)(intptr_t)io_tid);
  say("controller: meanwhile block is %s, the call queued behind it %s",
      state_name(poll_state(fblock)), state_name(poll_state(fqueued)));
  check(io_tid != NULL && (int64_t)(intptr_t)io_tid != block_tid, "io runs on a thread of its own");
  check(poll_state(fblock) == TETHER_RUNNING, "block still RUNNING while io answers");
  check(poll_state(fqueued) == TETHER_PENDING, "the call behind block still PENDING");

  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  check_call(tether_actor_state(a, &astate, NULL), "tether_actor_state");
  check_call(tether_actor_get_stats(a, &stats), "tether_actor_get_stats");
  say("controller: state %s; stats: %llu queued, %llu completed, default thread %llu",
      actor_state_name(astate), (unsigned long long)stats.queued, (unsigned long long)stats.completed,
      (unsigned long long)stats.os_thread_id);
  check(astate == TETHER_ACTOR_ALIVE, "the actor is ALIVE");
  check(stats.queued == 1 && stats.completed == 1, "stats: 1 queued (behind block), 1 completed (io)");
  check((int64_t)stats.os_thread_id == block_tid, "stats name block's thread as the default thread");

  /* stop(CANCEL): the queued call is cancelled, block is asked to stop. */
  t0 = now_ns();
  st = tether_actor_stop(a, TETHER_STOP_CANCEL, ANSWER_MS * MS_NS);
  stop_ns = now_ns() - t0;
  check_call(st, "tether_actor_stop(CANCEL)");
  block_state = wait_done(fblock, "tether_future_wait(block)");
  queued_state = poll_state(fqueued);
  check_call(tether_actor_state(a, &astate, NULL), "tether_actor_state");
  say("controller: stop(CANCEL, %d ms) -> %s in %.1f ms; actor %s", ANSWER_MS, tether_status_name(st),
      (double)stop_ns / 1e6, actor_state_name(astate));
  say("controller: block ended %s, the call queued behind it %s", state_name(block_state),
      state_name(queued_state));
  pthread_mutex_lock(&s.mu);
  saw_stop = s.saw_stop;
  queued_ran = s.queued_ran;
  s.released = 1; /* lets block go if the stop did not: the release below must not hang */
  pthread_cond_broadcast(&s.cv);
  pthread_mutex_unlock(&s.mu);
  check(saw_stop, "block saw stop_requested");
  check(block_state == TETHER_CANCELLED, "block ended CANCELLED (stopped, returned OK)");
  check(queued_state == TETHER_CANCELLED && !queued_ran, "the queued call CANCELLED, never run");
  check(astate == TETHER_ACTOR_STOPPED, "the actor is STOPPED");

  st = tether_actor_call(a, "io", server_ping, NULL, NULL, NULL);
  check(st == TETHER_E_SHUTDOWN, "a call after the stop is TETHER_E_SHUTDOWN");
  if (fblock.id != 0) check_call(tether_future_release(fblock), "tether_future_release");
  if (fqueued.id != 0) check_call(tether_future_release(fqueued), "tether_future_release");
  if (fping.id != 0) check_call(tether_future_release(fping), "tether_future_release");
  check_call(tether_actor_release(a), "tether_actor_release");
  say("controller: a call after the stop -> %s; actor released", tether_status_name(st));
  pthread_cond_destroy(&s.cv);
  pthread_mutex_destroy(&s.mu);
}

/* ---- scene 4: a pipeline compiled onto the workers' threads ----------------------------- */

#define BATCHES 3

/* pipe_worker: a worker's state: its log is touched only on its own thread. */
typedef struct pipe_worker {
  int id;
  int64_t ctor_tid;
  int off_thread; /* a node that ran on another thread than the constructor's */
  char log[256];
  size_t log_len;
} pipe_worker;

static tether_status pipe_ctor(tether_task *t, void *arg, void **state_out) {
  pipe_worker *w = (pipe_worker *)arg;
  (void)t;
  w->ctor_tid = os_tid();
  *state_out = w;
  return TETHER_OK;
}

/* pass: a forward (+1 per layer) or backward (x2) pass of one worker, logged. */
typedef struct pass {
  const char *name;
  long mul, add;
} pass;

static tether_status run_pass(tether_task *t, void *state, void *arg, void *const *inputs, size_t n,
                              void **output) {
  pipe_worker *w = (pipe_worker *)state;
  const pass *p = (const pass *)arg;
  long in = *(const long *)inputs[0];
  long *out = (long *)malloc(sizeof *out);
  int len;
  (void)t;
  (void)n;
  if (out == NULL) return tether_task_fail(t, 1, "out of memory");
  if (os_tid() != w->ctor_tid) w->off_thread = 1;
  len = snprintf(w->log + w->log_len, sizeof w->log - w->log_len, "%s%s(%ld)", w->log_len ? " " : "", p->name, in);
  if (len > 0 && (size_t)len < sizeof w->log - w->log_len) w->log_len += (size_t)len;
  *out = in * p->mul + p->add;
  *output = out;
  return TETHER_OK;
}

/* get_logs: an ordinary call; copies the log out (on the worker's thread). */
static tether_status get_logs(tether_task *t, void *state, void *arg) {
  pipe_worker *w = (pipe_worker *)state;
  (void)t;
  memcpy(arg, w->log, w->log_len + 1);
  return TETHER_OK;
}

static void pipeline_scene(void) {
  static const pass fwd0 = {"fwd", 1, 1}, fwd1 = {"fwd", 1, 1}, bwd1 = {"bwd", 2, 0}, bwd0 = {"bwd", 2, 0};
  pipe_worker w[2];
  tether_actor a[2] = {{0}, {0}};
  tether_actor_options ao;
  tether_graph g = {0}, other = {0};
  tether_compiled c = {0}, c2 = {0};
  tether_compile_options co;
  tether_future f[BATCHES], logs_call = {0};
  uint32_t n[4], out;
  char logs[256];
  int i, ok = 1;
  long b;

  say("");
  say("pipeline: two workers, forward then backward passes, compiled onto their threads");
  memset(w, 0, sizeof w);
  for (i = 0; i < 2; ++i) {
    static const char *const names[2] = {"worker-0", "worker-1"};
    w[i].id = i;
    tether_actor_options_init(&ao);
    ao.name = names[i];
    ok = ok && check_call(tether_actor_create(&ao, pipe_ctor, NULL, &w[i], NULL, &a[i]), "tether_actor_create");
  }
  ok = ok && check_call(tether_graph_create(&g), "tether_graph_create");
  ok = ok && check_call(tether_graph_add_node(g, a[0], NULL, run_pass, (void *)&fwd0, NULL, &n[0]), "add_node");
  ok = ok && check_call(tether_graph_add_node(g, a[1], NULL, run_pass, (void *)&fwd1, NULL, &n[1]), "add_node");
  ok = ok && check_call(tether_graph_add_node(g, a[1], NULL, run_pass, (void *)&bwd1, NULL, &n[2]), "add_node");
  ok = ok && check_call(tether_graph_add_node(g, a[0], NULL, run_pass, (void *)&bwd0, NULL, &n[3]), "add_node");
  ok = ok && check_call(tether_graph_add_edge(g, TETHER_GRAPH_INPUT, n[0]), "add_edge");
  for (i = 0; ok && i < 3; ++i) ok = check_call(tether_graph_add_edge(g, n[i], n[i + 1]), "add_edge");
  out = n[3];
  ok = ok && check_call(tether_graph_set_outputs(g, &out, 1), "tether_graph_set_outputs");
  tether_compile_options_init(&co);
  co.value_drop = free; /* the executions own the values the passes produce */
  ok = ok && check_call(tether_graph_compile(g, &co, &c), "tether_graph_compile");
  if (ok) {
    static long inputs[BATCHES] = {10, 20, 30};
    for (b = 0; b < BATCHES; ++b) {
      ok = ok && check_call(tether_compiled_execute(c, &inputs[b], NULL, &f[b]), "tether_compiled_execute");
    }
    say("controller: %d batches executed (pipelined, %zu in flight at most)", BATCHES, co.channel_capacity);
    for (b = 0; ok && b < BATCHES; ++b) {
      void *value = NULL;
      int32_t state = wait_done(f[b], "an execution");
      check(state == TETHER_SUCCEEDED, "the execution SUCCEEDED");
      if (state == TETHER_SUCCEEDED && check_call(tether_future_outputs(f[b], &value, 1), "tether_future_outputs")) {
        say("controller: batch %ld: %ld -> %ld", b, inputs[b], *(long *)value);
        check(*(long *)value == (inputs[b] + 2) * 4, "(x + 1 + 1) * 2 * 2");
        free(value);
      }
      check_call(tether_future_release(f[b]), "tether_future_release");
    }
    /* The ordinary call that hung in Ray, with the graph still compiled. */
    if (check_call(tether_actor_call(a[0], NULL, get_logs, logs, NULL, &logs_call), "tether_actor_call")) {
      check(wait_done(logs_call, "get_logs") == TETHER_SUCCEEDED, "get_logs answered with the graph compiled");
      check_call(tether_future_release(logs_call), "tether_future_release");
      say("worker-0: get_logs -> %s", logs);
    }
    /* A second graph on worker 0's thread: refused, naming the thread. */
    if (check_call(tether_graph_create(&other), "tether_graph_create")) {
      uint32_t m;
      tether_error why = {0};
      char msg[160];
      tether_status st;
      check_call(tether_graph_add_node(other, a[0], NULL, run_pass, (void *)&fwd0, NULL, &m), "add_node");
      check_call(tether_graph_add_edge(other, TETHER_GRAPH_INPUT, m), "add_edge");
      check_call(tether_graph_set_outputs(other, &m, 1), "set_outputs");
      st = tether_graph_compile(other, NULL, &c2);
      check(st == TETHER_E_THREAD_BUSY, "a second graph on worker 0 is TETHER_E_THREAD_BUSY");
      if (check_call(tether_graph_error(other, &why), "tether_graph_error") && why.id != 0) {
        tether_error_message(why, msg, sizeof msg);
        say("controller: a second graph on worker-0 -> %s: %s", tether_status_name(st), msg);
        tether_error_release(why);
      }
      if (c2.id != 0) tether_compiled_release(c2);
      tether_graph_release(other);
    }
    check_call(tether_compiled_release(c), "tether_compiled_release");
  }
  if (g.id != 0) check_call(tether_graph_release(g), "tether_graph_release");
  for (i = 0; i < 2; ++i) {
    if (a[i].id == 0) continue;
    check_call(tether_actor_release(a[i]), "tether_actor_release");
    check(!w[i].off_thread, "every node ran on its worker's constructor thread");
  }
  say("worker-1: %s", w[1].log);
}

int main(void) {
  runner_scene();
  thread_local_scene();
  blocked_group_scene();
  pipeline_scene();
  return failures == 0 ? 0 : 1;
}
