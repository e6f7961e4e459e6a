/*
 * demo.c — the scenario tether exists for, in plain C99.
 *
 * A "trainer" thread trains for TRAIN_STEPS steps. At step UPLOAD_STEP it uploads the
 * checkpoint on a nested thread, "upload-1", and keeps training. The upload fails (the disk
 * is full) while training still runs. Ray Train needed a monitoring thread and a queue for
 * this (ray-project/ray#55756); with tether the nested thread belongs to the runner's scope,
 * so:
 *   - the controller (main) sees the failure the moment it happens, although the trainer
 *     itself has not failed and is still running;
 *   - the error says what failed, where, and with which application code;
 *   - the trainer is asked to stop (stop_on_error) and sees it between two steps;
 *   - releasing the runner joins every thread: nothing is leaked or detached.
 *
 * The program checks each of these facts and exits 1 if one does not hold, so it doubles
 * as the ctest test `example.demo`.
 */
#define _POSIX_C_SOURCE 200809L

#include <tether/tether.h>

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define TRAIN_STEPS 20
#define UPLOAD_STEP 2
#define STEP_MS 100           /* one training step */
#define UPLOAD_MS 20          /* how long the upload runs before the disk is full */
#define POLL_JOIN_MS 50       /* the controller's wait between two polls */
#define MAX_POLLS 100         /* 100 x 50 ms: give up after 5 s */
#define UPLOAD_USER_CODE 7
#define UPLOAD_MESSAGE "checkpoint upload failed: disk full"

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

int main(void) {
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
  if (!check_call(tether_runner_start(&opts, trainer, &d, NULL, &r), "tether_runner_start"))
    return 1;

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
  return failures == 0 ? 0 : 1;
}
