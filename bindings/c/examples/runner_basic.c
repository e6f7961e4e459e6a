/*
 * runner_basic.c — start a thread, wait for it, read its result or its error.
 *
 * The target sums 1..n and hands the sum to the runner as its result. The main thread joins
 * (with a timeout), checks the outcome with poll, and takes the result. Run it with an
 * argument to make the target fail instead: `runner_basic fail`.
 */
#include <tether/tether.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SECONDS(s) ((int64_t)(s) * 1000000000)

typedef struct job {
  long n;
  int fail;
} job;

static tether_status sum_target(tether_task *t, void *arg) {
  const job *j = (const job *)arg;
  long *sum, i;
  if (j->fail) return tether_task_fail(t, 42, "refusing to count");
  sum = (long *)malloc(sizeof *sum);
  if (sum == NULL) return tether_task_fail(t, 1, "out of memory");
  for (*sum = 0, i = 1; i <= j->n; i++) *sum += i;
  /* The result slot owns `sum` until someone takes it; `free` runs if nobody does. */
  return tether_task_set_result(t, sum, free);
}

int main(int argc, char **argv) {
  job *j = (job *)malloc(sizeof *j);
  tether_runner_options opts;
  tether_runner r = {0};
  tether_status st;
  int32_t state = -1;
  int expect_failure = argc > 1 && strcmp(argv[1], "fail") == 0;
  int ok = 0;

  if (j == NULL) return 1;
  j->n = 100;
  j->fail = expect_failure;
  tether_runner_options_init(&opts);
  opts.name = "summer";
  /* From here on `j` belongs to the runner: `free(j)` runs once the target returned. */
  st = tether_runner_start(&opts, sum_target, j, free, &r);
  if (st != TETHER_OK) {
    fprintf(stderr, "start: %s\n", tether_status_name(st));
    return 1;
  }

  st = tether_runner_join(r, SECONDS(10)); /* speaks about the wait, not the target */
  if (st == TETHER_OK) st = tether_runner_poll(r, &state);
  if (st != TETHER_OK) {
    fprintf(stderr, "join/poll: %s\n", tether_status_name(st));
  } else if (state == TETHER_SUCCEEDED) {
    void *result = NULL;
    if (tether_runner_take_result(r, &result) == TETHER_OK && result != NULL) {
      printf("sum of 1..%d = %ld\n", 100, *(long *)result);
      ok = !expect_failure && *(long *)result == 5050;
      free(result); /* taken: ours now */
    }
  } else {
    tether_error e = {0};
    char msg[128], thread[64];
    if (tether_runner_error(r, &e) == TETHER_OK && e.id != 0) {
      tether_error_message(e, msg, sizeof msg);
      tether_error_thread_name(e, thread, sizeof thread);
      printf("failed on thread \"%s\": %s (%s, user code %lld)\n", thread, msg,
             tether_status_name(tether_error_code(e)), (long long)tether_error_user_code(e));
      ok = expect_failure && tether_error_user_code(e) == 42;
      tether_error_release(e);
    }
  }
  /* release waits for every thread of the runner, then frees it. */
  if (tether_runner_release(r) != TETHER_OK) ok = 0;
  return ok ? 0 : 1;
}
