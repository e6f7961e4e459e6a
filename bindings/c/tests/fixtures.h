/*
 * fixtures.h — callbacks shared by several test files.
 *
 * blocker: a target (or nested thread) that announces it started, waits for a gate the test
 * opens, records whether its scope asked it to stop, then returns OK or fails. Its context
 * starts with a counter, so count_drop counts the drops of the arg.
 *
 * failer: a callback that fails at once with a given code and message.
 *
 * stopper: a target that runs until its scope asks it to stop (bounded), then returns OK or
 * fails.
 */
#ifndef TETHER_C_FIXTURES_H
#define TETHER_C_FIXTURES_H

#include "harness.h"

typedef struct blocker {
  counter drops;        /* FIRST member: arg_drop(count_drop) calls */
  event started;        /* set when the callback begins */
  event gate;           /* the callback waits (bounded) until the test sets it */
  counter saw_stop;     /* -1 until the gate opened; then tether_task_stop_requested != 0 */
  counter returned;     /* set just before the callback returns */
  const char *fail_msg; /* non-NULL: fail with user_code 1 and this message after the gate */
} blocker;

static inline void blocker_init(blocker *b) {
  counter_init(&b->drops);
  event_init(&b->started);
  event_init(&b->gate);
  counter_init(&b->saw_stop);
  counter_set(&b->saw_stop, -1);
  counter_init(&b->returned);
  b->fail_msg = NULL;
}

static inline void blocker_destroy(blocker *b) {
  counter_destroy(&b->drops);
  event_destroy(&b->started);
  event_destroy(&b->gate);
  counter_destroy(&b->saw_stop);
  counter_destroy(&b->returned);
}

static inline tether_status blocker_fn(tether_task *t, void *arg) {
  blocker *b = (blocker *)arg;
  event_set(&b->started);
  if (!event_wait(&b->gate, T_LONG)) harness_fail(__FILE__, __LINE__, "blocker: gate never opened");
  counter_set(&b->saw_stop, tether_task_stop_requested(t) ? 1 : 0);
  event_set(&b->returned);
  if (b->fail_msg) return tether_task_fail(t, 1, b->fail_msg);
  return TETHER_OK;
}

/* start_blocker: starts a runner named `name` whose target is blocker_fn(b) and waits until
 * the target runs. */
static inline tether_runner start_blocker(const char *name, blocker *b) {
  tether_runner r = {0};
  tether_runner_options o = runner_opts(name);
  CHECK_ST(tether_runner_start(&o, blocker_fn, b, count_drop, &r), TETHER_OK);
  CHECK(r.id != 0);
  CHECK(event_wait(&b->started, T_LONG));
  return r;
}

/* wait_stop: spins (yielding) until the task's scope asks it to stop; 0 on timeout. */
static inline int wait_stop(tether_task *t) {
  int64_t deadline = now_ns() + T_LONG;
  while (!tether_task_stop_requested(t)) {
    if (now_ns() > deadline) return 0;
    sched_yield();
  }
  return 1;
}

typedef struct stopper {
  counter drops;        /* FIRST member */
  event started;
  counter saw_stop;     /* 1 once the stop request was seen */
  const char *fail_msg; /* non-NULL: fail with user_code 3 and this message once stopped */
  counter result_drops; /* it sets a result; the result's drop counts here */
  tether_status want_set_result; /* OK for a target; WRONG_STATE for a nested thread */
} stopper;

static inline void stopper_init(stopper *s) {
  counter_init(&s->drops);
  event_init(&s->started);
  counter_init(&s->saw_stop);
  counter_init(&s->result_drops);
  s->fail_msg = NULL;
  s->want_set_result = TETHER_OK;
}

static inline void stopper_destroy(stopper *s) {
  counter_destroy(&s->drops);
  event_destroy(&s->started);
  counter_destroy(&s->saw_stop);
  counter_destroy(&s->result_drops);
}

static inline tether_status stopper_fn(tether_task *t, void *arg) {
  stopper *s = (stopper *)arg;
  event_set(&s->started);
  if (!wait_stop(t)) harness_fail(__FILE__, __LINE__, "stopper: stop never requested");
  counter_set(&s->saw_stop, 1);
  CHECK_ST(tether_task_set_result(t, &s->result_drops, count_drop), s->want_set_result);
  if (s->fail_msg) return tether_task_fail(t, 3, s->fail_msg);
  return TETHER_OK;
}

/* failer: a callback context that fails at once with its code and message. */
typedef struct failer {
  counter drops; /* FIRST member */
  int64_t code;
  const char *msg;
} failer;

static inline void failer_init(failer *f, int64_t code, const char *msg) {
  counter_init(&f->drops);
  f->code = code;
  f->msg = msg;
}

static inline tether_status failer_fn(tether_task *t, void *arg) {
  failer *f = (failer *)arg;
  return tether_task_fail(t, f->code, f->msg);
}

/* ok_fn: a callback that returns TETHER_OK at once. */
static inline tether_status ok_fn(tether_task *t, void *arg) {
  (void)t;
  (void)arg;
  return TETHER_OK;
}

/* fail_fn: a callback that fails with user_code 1 and message arg (a const char *). */
static inline tether_status fail_fn(tether_task *t, void *arg) {
  return tether_task_fail(t, 1, (const char *)arg);
}

#endif /* TETHER_C_FIXTURES_H */
