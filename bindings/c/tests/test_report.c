/*
 * test_report.c — tether_runner_report_error: threads the scope did not create feed it
 * errors; the thread name recorded is the reporting thread's, the message is copied.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "fixtures.h"
#include "os_calls.h"

typedef struct foreign {
  tether_runner r;
  int32_t code;
  event done;
  tether_status st;
} foreign;

static void *foreign_main(void *arg) {
  foreign *f = (foreign *)arg;
  char *msg = (char *)malloc(32);
  CHECK(msg != NULL);
  CHECK(os_set_thread_name("foreign-io"));
  strcpy(msg, "disk full");
  f->st = tether_runner_report_error(f->r, f->code, 99, msg);
  memset(msg, 'X', 31); /* the library must have copied it */
  free(msg);
  event_set(&f->done);
  return NULL;
}

/* report_from_pthread: reports one error on r from a new pthread named "foreign-io". */
static tether_status report_from_pthread(tether_runner r, int32_t code) {
  foreign f;
  pthread_t th;
  tether_status st;
  f.r = r;
  f.code = code;
  f.st = -1;
  event_init(&f.done);
  CHECK(pthread_create(&th, NULL, foreign_main, &f) == 0);
  CHECK(event_wait(&f.done, T_LONG));
  CHECK(pthread_join(th, NULL) == 0);
  st = f.st;
  event_destroy(&f.done);
  return st;
}

TEST(report_error_foreign_thread) {
  blocker b;
  tether_runner r;
  blocker_init(&b);
  r = start_blocker("trainer", &b);

  CHECK_ST(report_from_pthread(r, TETHER_E_TASK_FAILED), TETHER_OK);
  CHECK_ST(tether_runner_join(r, T_LONG), TETHER_OK); /* target still blocked */
  CHECK_STATE(r, TETHER_FAILED);
  CHECK_RUNNER_ERROR(r, 0, TETHER_E_TASK_FAILED, 99, "disk full", "foreign-io");

  event_set(&b.gate);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_EQ(counter_get(&b.saw_stop), 1); /* stop_on_error: the scope asked the target to stop */
  CHECK_EQ(tether_runner_error_count(r), 1);
  CHECK_STATE(r, TETHER_FAILED);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&b.drops), 1);
  blocker_destroy(&b);
}

/* On a FAILED scope a report is one more error, kept in order; any failure code works. */
TEST(report_error_adds_to_failed) {
  blocker b;
  tether_runner r;
  blocker_init(&b);
  CHECK(os_set_thread_name("c-main"));
  r = start_blocker("trainer", &b);

  CHECK_ST(report_from_pthread(r, TETHER_E_TASK_FAILED), TETHER_OK);
  CHECK_ST(tether_runner_report_error(r, TETHER_E_PANIC, 5, NULL), TETHER_OK);
  CHECK_EQ(tether_runner_error_count(r), 2);
  CHECK_RUNNER_ERROR(r, 0, TETHER_E_TASK_FAILED, 99, "disk full", "foreign-io");
  CHECK_RUNNER_ERROR(r, 1, TETHER_E_PANIC, 5, "", "c-main"); /* NULL message: "" */

  event_set(&b.gate);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_EQ(tether_runner_error_count(r), 2);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&b.drops), 1);
  blocker_destroy(&b);
}

/* On a SUCCEEDED scope: TETHER_E_WRONG_STATE, nothing recorded. */
static int done_value = 3;

static tether_status succeed_with_value(tether_task *t, void *arg) {
  (void)arg;
  return tether_task_set_result(t, &done_value, NULL);
}

TEST(report_error_after_success) {
  counter drops;
  tether_runner r = {0};
  tether_error e = {77};
  void *out = NULL;
  counter_init(&drops);
  CHECK_ST(tether_runner_start(NULL, succeed_with_value, &drops, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_SUCCEEDED);

  CHECK_ST(tether_runner_report_error(r, TETHER_E_TASK_FAILED, 1, "too late"), TETHER_E_WRONG_STATE);
  CHECK_ST(report_from_pthread(r, TETHER_E_TASK_FAILED), TETHER_E_WRONG_STATE);
  CHECK_EQ(tether_runner_error_count(r), 0);
  CHECK_ST(tether_runner_error(r, &e), TETHER_OK);
  CHECK_EQ(e.id, 0);
  CHECK_STATE(r, TETHER_SUCCEEDED);
  CHECK_ST(tether_runner_take_result(r, &out), TETHER_OK);
  CHECK(out == (void *)&done_value);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&drops), 1);
  counter_destroy(&drops);
}

/* On a CANCELLED scope: TETHER_E_WRONG_STATE, nothing recorded. */
TEST(report_error_after_cancel) {
  stopper s;
  tether_runner r = {0};
  stopper_init(&s);
  CHECK_ST(tether_runner_start(NULL, stopper_fn, &s, count_drop, &r), TETHER_OK);
  CHECK(event_wait(&s.started, T_LONG));
  CHECK_ST(tether_runner_cancel(r), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_CANCELLED);
  CHECK_EQ(tether_runner_error_count(r), 1);

  CHECK_ST(tether_runner_report_error(r, TETHER_E_TASK_FAILED, 1, "too late"), TETHER_E_WRONG_STATE);
  CHECK_EQ(tether_runner_error_count(r), 1);
  CHECK_STATE(r, TETHER_CANCELLED);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&s.drops), 1);
  stopper_destroy(&s);
}

/* A code that is not a failure code of section 3 is TETHER_E_INVALID_ARGUMENT, and records
 * nothing; a bad handle is TETHER_E_INVALID_HANDLE. */
TEST(report_error_bad_code) {
  blocker b;
  tether_runner r, none = {0};
  blocker_init(&b);
  r = start_blocker("trainer", &b);
  CHECK_ST(tether_runner_report_error(r, TETHER_OK, 1, "ok is no failure"), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_runner_report_error(r, -1, 1, "negative"), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_runner_report_error(r, 20, 1, "past the table"), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_runner_report_error(r, 999, 1, "unknown"), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_runner_report_error(none, TETHER_E_TASK_FAILED, 1, "no runner"), TETHER_E_INVALID_HANDLE);
  CHECK_EQ(tether_runner_error_count(r), 0);
  CHECK_STATE(r, TETHER_RUNNING);

  event_set(&b.gate);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_STATE(r, TETHER_SUCCEEDED);
  CHECK_EQ(counter_get(&b.saw_stop), 0);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&b.drops), 1);
  blocker_destroy(&b);
}
