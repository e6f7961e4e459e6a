/*
 * test_on_done.c — tether_runner_on_done: fn runs exactly once when the scope becomes
 * terminal (at once, on the caller, if it already is), then its arg is dropped once.
 */
#define _POSIX_C_SOURCE 200809L
#include "fixtures.h"

typedef struct notice {
  counter drops; /* FIRST member: the on_done arg's drops */
  counter runs;  /* fn calls; the fields below are written before it is bumped */
  tether_runner r;
  tether_status poll_st, error_st;
  int32_t state_seen;
  uint64_t error_seen; /* the first error's handle id, 0 if none */
  pthread_t ran_on;
} notice;

static void notice_init(notice *n, tether_runner r) {
  memset(n, 0, sizeof *n);
  counter_init(&n->drops);
  counter_init(&n->runs);
  n->r = r;
  n->state_seen = -1;
}

static void notice_destroy(notice *n) {
  counter_destroy(&n->drops);
  counter_destroy(&n->runs);
}

/* on_done_fn: must not wait; polls and reads the runner, as the header allows. */
static void on_done_fn(void *arg) {
  notice *n = (notice *)arg;
  tether_error e = {0};
  n->poll_st = tether_runner_poll(n->r, &n->state_seen);
  n->error_st = tether_runner_error(n->r, &e);
  n->error_seen = e.id;
  if (e.id != 0) CHECK_ST(tether_error_release(e), TETHER_OK);
  n->ran_on = pthread_self();
  counter_add(&n->runs, 1);
}

TEST(on_done_once) {
  blocker b;
  notice n1, n2;
  tether_runner r;
  blocker_init(&b);
  r = start_blocker("waited", &b);
  notice_init(&n1, r);
  notice_init(&n2, r);
  CHECK_ST(tether_runner_on_done(r, on_done_fn, &n1, count_drop), TETHER_OK);
  CHECK_ST(tether_runner_on_done(r, on_done_fn, &n2, count_drop), TETHER_OK); /* several */
  CHECK_EQ(counter_get(&n1.runs), 0); /* not terminal yet */
  CHECK_EQ(counter_get(&n1.drops), 0);

  event_set(&b.gate);
  CHECK(counter_wait(&n1.runs, 1, T_LONG));
  CHECK(counter_wait(&n2.runs, 1, T_LONG));
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK(counter_wait(&n1.drops, 1, T_LONG));
  CHECK(counter_wait(&n2.drops, 1, T_LONG));
  CHECK_ST(n1.poll_st, TETHER_OK);
  CHECK_EQ(n1.state_seen, TETHER_SUCCEEDED); /* fn sees the terminal state */
  CHECK_ST(n1.error_st, TETHER_OK);
  CHECK_EQ(n1.error_seen, 0);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK(!counter_wait(&n1.runs, 2, T_SHORT)); /* exactly once */
  CHECK_EQ(counter_get(&n1.runs), 1);
  CHECK_EQ(counter_get(&n2.runs), 1);
  CHECK_EQ(counter_get(&n1.drops), 1);
  CHECK_EQ(counter_get(&n2.drops), 1);
  CHECK_EQ(counter_get(&b.drops), 1);
  notice_destroy(&n1);
  notice_destroy(&n2);
  blocker_destroy(&b);
}

/* On a FAILED scope fn sees FAILED and the first error. */
TEST(on_done_failed) {
  blocker b;
  notice n;
  tether_runner r;
  blocker_init(&b);
  b.fail_msg = "failed for on_done";
  r = start_blocker("waited", &b);
  notice_init(&n, r);
  CHECK_ST(tether_runner_on_done(r, on_done_fn, &n, count_drop), TETHER_OK);
  event_set(&b.gate);
  CHECK(counter_wait(&n.runs, 1, T_LONG));
  CHECK_EQ(n.state_seen, TETHER_FAILED);
  CHECK_ST(n.error_st, TETHER_OK);
  CHECK(n.error_seen != 0);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK(counter_wait(&n.drops, 1, T_LONG));
  CHECK_EQ(counter_get(&n.runs), 1);
  CHECK_EQ(counter_get(&b.drops), 1);
  notice_destroy(&n);
  blocker_destroy(&b);
}

/* Already terminal: fn runs at once, on the caller, and arg is dropped before it returns. */
TEST(on_done_terminal_runs_on_caller) {
  counter drops;
  notice n;
  tether_runner r = {0};
  counter_init(&drops);
  CHECK_ST(tether_runner_start(NULL, ok_fn, &drops, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join(r, T_LONG), TETHER_OK);
  notice_init(&n, r);
  CHECK_ST(tether_runner_on_done(r, on_done_fn, &n, count_drop), TETHER_OK);
  CHECK_EQ(counter_get(&n.runs), 1);
  CHECK(pthread_equal(n.ran_on, pthread_self()));
  CHECK_EQ(counter_get(&n.drops), 1);
  CHECK_EQ(n.state_seen, TETHER_SUCCEEDED);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&n.runs), 1);
  CHECK_EQ(counter_get(&drops), 1);
  notice_destroy(&n);
  counter_destroy(&drops);
}

/* Released first: fn still runs when the scope ends. */
TEST(on_done_after_release) {
  blocker b;
  notice n;
  tether_runner r;
  blocker_init(&b);
  r = start_blocker("released-early", &b);
  notice_init(&n, r);
  CHECK_ST(tether_runner_on_done(r, on_done_fn, &n, count_drop), TETHER_OK);
  CHECK_ST(tether_runner_release_nowait(r), TETHER_OK);
  CHECK_EQ(counter_get(&n.runs), 0); /* the target is still blocked */
  event_set(&b.gate);
  CHECK(counter_wait(&n.runs, 1, T_LONG));
  CHECK(counter_wait(&n.drops, 1, T_LONG));
  CHECK(counter_wait(&b.drops, 1, T_LONG));
  CHECK_ST(n.poll_st, TETHER_E_INVALID_HANDLE); /* fn's handle was released */
  CHECK(!counter_wait(&n.runs, 2, T_SHORT));
  CHECK_EQ(counter_get(&n.drops), 1);
  notice_destroy(&n);
  blocker_destroy(&b);
}

/* Bad calls: fn never runs, arg is dropped before the call returns. */
TEST(on_done_bad) {
  counter drops;
  notice n;
  tether_runner r = {0}, none = {0};
  counter_init(&drops);
  CHECK_ST(tether_runner_start(NULL, ok_fn, &drops, count_drop, &r), TETHER_OK);
  notice_init(&n, r);
  CHECK_ST(tether_runner_on_done(r, NULL, &n, count_drop), TETHER_E_INVALID_ARGUMENT);
  CHECK_EQ(counter_get(&n.drops), 1);
  CHECK_ST(tether_runner_on_done(r, NULL, NULL, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_runner_on_done(none, on_done_fn, &n, count_drop), TETHER_E_INVALID_HANDLE);
  CHECK_EQ(counter_get(&n.drops), 2);
  CHECK_EQ(counter_get(&n.runs), 0);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_ST(tether_runner_on_done(r, on_done_fn, &n, count_drop), TETHER_E_INVALID_HANDLE);
  CHECK_EQ(counter_get(&n.drops), 3);
  CHECK_EQ(counter_get(&n.runs), 0);
  CHECK_EQ(counter_get(&drops), 1);
  notice_destroy(&n);
  counter_destroy(&drops);
}
