/*
 * foreign_thread.c — errors from threads the runner did not create.
 *
 * A thread pool, a library callback thread or a plain pthread can feed a runner's scope
 * with tether_runner_report_error. The error records the reporting thread's name. Here a
 * pthread named "io-callback" reports a failure while the target waits for work.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <tether/tether.h>

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#define MS(ms) ((int64_t)(ms) * 1000000)

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The target "waits for work" until its scope asks it to stop (a foreign error will, since
 * stop_on_error is on by default), or gives up after 10 s. */
static tether_status wait_for_work(tether_task *t, void *arg) {
  int64_t give_up = now_ns() + MS(10000);
  (void)arg;
  while (!tether_task_stop_requested(t) && now_ns() < give_up) sched_yield();
  return TETHER_OK;
}

static void *io_callback(void *arg) {
  tether_runner r = *(tether_runner *)arg;
  pthread_setname_np(pthread_self(), "io-callback");
  tether_runner_report_error(r, TETHER_E_TASK_FAILED, 104, "connection reset by peer");
  return NULL;
}

int main(void) {
  tether_runner r = {0};
  pthread_t th;
  tether_error e = {0};
  int32_t state = -1;
  char msg[128], thread[64];
  int ok;

  if (tether_runner_start(NULL, wait_for_work, NULL, NULL, &r) != TETHER_OK) return 1;
  if (pthread_create(&th, NULL, io_callback, &r) != 0) return 1;
  pthread_join(th, NULL);

  if (tether_runner_join(r, MS(10000)) != TETHER_OK) return 1;
  tether_runner_poll(r, &state);
  tether_runner_error(r, &e);
  tether_error_message(e, msg, sizeof msg);
  tether_error_thread_name(e, thread, sizeof thread);
  printf("state %s, error from \"%s\": %s\n", state == TETHER_FAILED ? "FAILED" : "?", thread, msg);
  ok = state == TETHER_FAILED && tether_error_user_code(e) == 104;
  tether_error_release(e);
  if (tether_runner_release(r) != TETHER_OK) ok = 0;
  return ok ? 0 : 1;
}
