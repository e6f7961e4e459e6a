/*
 * nested_failure.c — a nested thread's failure reaches the owner at once.
 *
 * Like Ray Train's training function with an asynchronous checkpoint upload: the target
 * "trains" in steps and starts an uploader thread with tether_task_spawn. The uploader
 * fails. The main thread polls the runner (as Ray's controller does) and sees FAILED with
 * the uploader's error while the target is still running; the scope then asks the target
 * to stop (stop_on_error), and the target ends cooperatively.
 */
#define _POSIX_C_SOURCE 200809L
#include <tether/tether.h>

#include <sched.h>
#include <stdio.h>
#include <time.h>

#define MS(ms) ((int64_t)(ms) * 1000000)

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static tether_status upload_checkpoint(tether_task *t, void *arg) {
  (void)arg;
  return tether_task_fail(t, 507, "upload failed: bucket quota exceeded");
}

static tether_status train(tether_task *t, void *arg) {
  long *steps = (long *)arg;
  int64_t give_up = now_ns() + MS(10000);
  tether_status st = tether_task_spawn(t, "ckpt-upload-1", upload_checkpoint, NULL, NULL);
  if (st != TETHER_OK) return tether_task_fail(t, 1, tether_status_describe(st));
  /* A training loop that checks for a stop request between steps. */
  while (!tether_task_stop_requested(t) && now_ns() < give_up) {
    ++*steps;
    sched_yield();
  }
  return TETHER_OK;
}

int main(void) {
  static long steps; /* read only after join_all */
  tether_runner_options opts;
  tether_runner r = {0};
  tether_error e = {0};
  int32_t state = TETHER_RUNNING;
  char msg[128], thread[64];
  int64_t deadline = now_ns() + MS(10000);
  int ok;

  tether_runner_options_init(&opts);
  opts.name = "train-worker-0";
  if (tether_runner_start(&opts, train, &steps, NULL, &r) != TETHER_OK) return 1;

  /* The controller's loop: poll with a short wait between polls. join with a timeout is
   * the wait; it returns at once when the scope fails. */
  while (state == TETHER_RUNNING && now_ns() < deadline) {
    tether_runner_join(r, MS(100));
    tether_runner_poll(r, &state);
  }
  if (state != TETHER_FAILED || tether_runner_error(r, &e) != TETHER_OK || e.id == 0) {
    fprintf(stderr, "expected FAILED with an error, got state %d\n", (int)state);
    tether_runner_release(r);
    return 1;
  }
  tether_error_message(e, msg, sizeof msg);
  tether_error_thread_name(e, thread, sizeof thread);
  printf("worker failed: thread \"%s\": %s\n", thread, msg);
  ok = tether_error_user_code(e) == 507;
  tether_error_release(e);

  /* Every thread of the scope has been asked to stop; wait for them before reading. */
  if (tether_runner_join_all(r, MS(10000)) != TETHER_OK) ok = 0;
  printf("the target ran %s steps, then stopped\n", steps > 0 ? "some" : "no");
  if (tether_runner_release(r) != TETHER_OK) ok = 0;
  return ok ? 0 : 1;
}
