/*
 * test_call_wait.c — tether_actor_call_wait, the blocking round trip (section 8).
 *
 *   a call that succeeds: TETHER_OK, its result taken (its drop never runs); with result
 *     NULL the result is dropped once; the arg is dropped once either way
 *   a call that fails: its error's code, the error in *error (or not asked for), the
 *     message as the thread's last error
 *   bad input: null, forged and released handles, NULL m, an unknown group, a dead or
 *     stopped actor: the status, the arg dropped once, *result and *error left null
 *   no answer in time: TETHER_E_TIMEOUT, a queued call cancelled (never runs), a running one
 *     asked to stop; a full mailbox: TETHER_E_QUEUE_FULL (timeout 0) or TETHER_E_TIMEOUT
 *   from the actor's own thread: TETHER_E_DEADLOCK and the call never runs; from another
 *     group's thread of the same actor it is answered
 */
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#include "actor_fixtures.h"

/* null_ctor: an actor with no state. */
static tether_status null_ctor(tether_task *t, void *arg, void **state_out) {
  (void)t;
  (void)arg;
  *state_out = NULL;
  return TETHER_OK;
}

/* answer: a call's arg: the method answers with `box`, whose value it sets to x + 1. */
typedef struct answer {
  counter drops; /* FIRST member: the arg's drops */
  counter result_drops;
  long x;
  long value;
} answer;

static void answer_init(answer *a, long x) {
  counter_init(&a->drops);
  counter_init(&a->result_drops);
  a->x = x;
  a->value = 0;
}

static void answer_destroy(answer *a) {
  counter_destroy(&a->drops);
  counter_destroy(&a->result_drops);
}

static void drop_result(void *p) { counter_add(&((answer *)p)->result_drops, 1); }

static tether_status m_answer(tether_task *t, void *state, void *arg) {
  answer *a = (answer *)arg;
  (void)state;
  a->value = a->x + 1;
  return tether_task_set_result(t, a, drop_result);
}

/* CHECK_CLEARED: what a call_wait that returned no answer leaves in its outputs. */
#define CHECK_CLEARED(result, error)                                                         \
  do {                                                                                       \
    CHECK((result) == NULL);                                                                 \
    CHECK_EQ((error).id, 0);                                                                 \
  } while (0)

TEST(call_wait_answers) {
  tether_actor a = {0};
  answer x;
  void *result = &x;
  tether_error error = {77};
  int i;
  CHECK_ST(tether_actor_create(NULL, null_ctor, NULL, NULL, NULL, &a), TETHER_OK);
  for (i = 0; i < 3; i++) { /* the first call looks the handle up; the next ones hit the cache */
    answer_init(&x, 41 + i);
    result = NULL;
    CHECK_DROPPED_ONCE(tether_actor_call_wait(a, NULL, m_answer, &x, count_drop, T_LONG, &result, &error), TETHER_OK,
                       &x.drops);
    CHECK(result == &x);
    CHECK_EQ(x.value, 42 + i);
    CHECK_EQ(error.id, 0);
    CHECK_EQ(counter_get(&x.result_drops), 0); /* taken: the caller's now */
    answer_destroy(&x);
  }
  /* result NULL: the answer is dropped, once, and the call still succeeds. */
  answer_init(&x, 1);
  CHECK_ST(tether_actor_call_wait(a, NULL, m_answer, &x, NULL, T_LONG, NULL, NULL), TETHER_OK);
  CHECK(counter_wait(&x.result_drops, 1, T_LONG));
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&x.result_drops), 1);
  answer_destroy(&x);
}

TEST(call_wait_failure) {
  tether_actor a = {0};
  void *result = &result;
  tether_error error = {0};
  char last[128];
  CHECK_ST(tether_actor_create(NULL, null_ctor, NULL, NULL, NULL, &a), TETHER_OK);
  CHECK_ST(tether_actor_call_wait(a, NULL, m_fail, (void *)"disk full", NULL, T_LONG, &result, &error),
           TETHER_E_TASK_FAILED);
  CHECK(result == NULL);
  CHECK_ERROR(error, TETHER_E_TASK_FAILED, 1, "disk full", "tether-actor");
  CHECK_ST(tether_error_release(error), TETHER_OK);
  CHECK(tether_last_error_message(last, sizeof last) == strlen("disk full"));
  CHECK_STR(last, "disk full");
  /* No error asked for: the same status, nothing to release. */
  CHECK_ST(tether_actor_call_wait(a, NULL, m_fail, (void *)"again", NULL, T_LONG, NULL, NULL), TETHER_E_TASK_FAILED);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
}

TEST(call_wait_bad_input) {
  tether_actor a = {0}, gone = {0};
  tether_actor forged = {0x7777777777ull};
  counter drops;
  void *result = &result;
  tether_error error = {77};
  rec r;
  tether_actor_options o = actor_opts("dead", NULL, 0);
  counter_init(&drops);
  CHECK_DROPPED_ONCE(tether_actor_call_wait(a, NULL, m_ok, &drops, count_drop, T_LONG, &result, &error),
                     TETHER_E_INVALID_HANDLE, &drops);
  CHECK_CLEARED(result, error);
  CHECK_DROPPED_ONCE(tether_actor_call_wait(forged, NULL, m_ok, &drops, count_drop, T_LONG, &result, &error),
                     TETHER_E_INVALID_HANDLE, &drops);
  CHECK_ST(tether_actor_create(NULL, null_ctor, NULL, NULL, NULL, &gone), TETHER_OK);
  CHECK_ST(tether_actor_release(gone), TETHER_OK);
  CHECK_DROPPED_ONCE(tether_actor_call_wait(gone, NULL, m_ok, &drops, count_drop, T_LONG, &result, &error),
                     TETHER_E_INVALID_HANDLE, &drops);

  CHECK_ST(tether_actor_create(NULL, null_ctor, NULL, NULL, NULL, &a), TETHER_OK);
  CHECK_DROPPED_ONCE(tether_actor_call_wait(a, NULL, NULL, &drops, count_drop, T_LONG, &result, &error),
                     TETHER_E_INVALID_ARGUMENT, &drops);
  CHECK_CLEARED(result, error);
  CHECK_DROPPED_ONCE(tether_actor_call_wait(a, "no-such-group", m_ok, &drops, count_drop, T_LONG, &result, &error),
                     TETHER_E_NOT_FOUND, &drops);
  CHECK_CLEARED(result, error);
  CHECK_ST(tether_actor_stop(a, TETHER_STOP_DRAIN, T_LONG), TETHER_OK);
  CHECK_DROPPED_ONCE(tether_actor_call_wait(a, NULL, m_ok, &drops, count_drop, T_LONG, &result, &error),
                     TETHER_E_SHUTDOWN, &drops);
  CHECK_CLEARED(result, error);
  CHECK_ST(tether_actor_release(a), TETHER_OK);

  /* A dead actor: refused at once, or failed with the constructor's error as the cause. */
  rec_init(&r);
  r.ctor_fail = "no device";
  a = create_rec_actor(&o, &r);
  CHECK_DROPPED_ONCE(tether_actor_call_wait(a, NULL, m_ok, &drops, count_drop, T_LONG, &result, NULL),
                     TETHER_E_ACTOR_DEAD, &drops);
  CHECK(result == NULL);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  rec_destroy(&r);
  counter_destroy(&drops);
}

TEST(call_wait_timeout_cancels) {
  tether_actor a = {0};
  blocker running;
  note queued;
  void *result = &result;
  tether_error error = {77};
  tether_future first = {0};
  blocker_init(&running);
  note_init(&queued);
  CHECK_ST(tether_actor_create(NULL, null_ctor, NULL, NULL, NULL, &a), TETHER_OK);
  CHECK_ST(tether_actor_call(a, NULL, m_block, &running, NULL, &first), TETHER_OK);
  CHECK(event_wait(&running.started, T_LONG));
  /* Queued behind the blocked call: not answered in time, so it never runs. */
  CHECK_DROPPED_ONCE(tether_actor_call_wait(a, NULL, m_note, &queued, count_drop, T_SHORT, &result, &error),
                     TETHER_E_TIMEOUT, &queued.drops);
  CHECK_CLEARED(result, error);
  event_set(&running.gate);
  CHECK_EQ(future_outcome(first), TETHER_SUCCEEDED);
  CHECK_ST(tether_future_release(first), TETHER_OK);
  CHECK_ST(tether_actor_call_wait(a, NULL, m_ok, NULL, NULL, T_LONG, NULL, NULL), TETHER_OK); /* after it */
  CHECK_EQ(counter_get(&queued.runs), 0);
  CHECK_EQ(actor_stats(a).cancelled, 1);
  blocker_destroy(&running);

  /* Running when the time is up: asked to stop, and the caller has gone. (The actor is
   * idle, so the call starts at once; 25x T_SHORT leaves it room to, even under valgrind.) */
  blocker_init(&running);
  CHECK_ST(tether_actor_call_wait(a, NULL, m_block, &running, count_drop, 25 * T_SHORT, &result, &error),
           TETHER_E_TIMEOUT);
  CHECK(event_is_set(&running.started));
  event_set(&running.gate);
  CHECK(counter_wait(&running.drops, 1, T_LONG));
  CHECK_EQ(counter_get(&running.saw_stop), 1);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&running.drops), 1);
  blocker_destroy(&running);
  note_destroy(&queued);
}

TEST(call_wait_full_mailbox) {
  tether_actor a = {0};
  tether_actor_options o = actor_opts("bounded", NULL, 0);
  blocker running;
  note waiting, late;
  tether_future first = {0}, second = {0};
  void *result = &result;
  blocker_init(&running);
  note_init(&waiting);
  note_init(&late);
  o.mailbox_capacity = 1;
  CHECK_ST(tether_actor_create(&o, null_ctor, NULL, NULL, NULL, &a), TETHER_OK);
  CHECK_ST(tether_actor_call(a, NULL, m_block, &running, NULL, &first), TETHER_OK);
  CHECK(event_wait(&running.started, T_LONG));
  CHECK_ST(tether_actor_call(a, NULL, m_note, &waiting, NULL, &second), TETHER_OK); /* the one queued slot */
  CHECK_DROPPED_ONCE(tether_actor_call_wait(a, NULL, m_note, &late, count_drop, 0, &result, NULL),
                     TETHER_E_QUEUE_FULL, &late.drops);
  CHECK(result == NULL);
  CHECK_DROPPED_ONCE(tether_actor_call_wait(a, NULL, m_note, &late, count_drop, T_SHORT, &result, NULL),
                     TETHER_E_TIMEOUT, &late.drops);
  event_set(&running.gate);
  CHECK_EQ(future_outcome(second), TETHER_SUCCEEDED);
  CHECK_EQ(counter_get(&late.runs), 0);
  CHECK_ST(tether_future_release(first), TETHER_OK);
  CHECK_ST(tether_future_release(second), TETHER_OK);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  blocker_destroy(&running);
  note_destroy(&waiting);
  note_destroy(&late);
}

/* inside: what a method of the actor sees when it calls the actor and waits. */
typedef struct inside {
  tether_actor self;
  note same_thread, other_group;
  tether_status same_st, other_st;
} inside;

static tether_status m_call_self(tether_task *t, void *state, void *arg) {
  inside *c = (inside *)arg;
  (void)t;
  (void)state;
  c->same_st = tether_actor_call_wait(c->self, NULL, m_note, &c->same_thread, count_drop, T_LONG, NULL, NULL);
  c->other_st = tether_actor_call_wait(c->self, "io", m_note, &c->other_group, count_drop, T_LONG, NULL, NULL);
  return TETHER_OK;
}

TEST(call_wait_from_inside) {
  const tether_group_spec groups[] = {{"io", 1}};
  tether_actor_options o = actor_opts("self-call", groups, 1);
  inside c;
  note_init(&c.same_thread);
  note_init(&c.other_group);
  c.same_st = c.other_st = -1;
  CHECK_ST(tether_actor_create(&o, null_ctor, NULL, NULL, NULL, &c.self), TETHER_OK);
  CHECK_ST(tether_actor_call_wait(c.self, NULL, m_call_self, &c, NULL, T_LONG, NULL, NULL), TETHER_OK);
  CHECK_ST(c.same_st, TETHER_E_DEADLOCK);
  CHECK_ST(c.other_st, TETHER_OK);
  CHECK_EQ(counter_get(&c.same_thread.drops), 1); /* cancelled: dropped, never run */
  CHECK_EQ(counter_get(&c.other_group.runs), 1);
  CHECK_ST(tether_actor_stop(c.self, TETHER_STOP_DRAIN, T_LONG), TETHER_OK);
  CHECK_EQ(counter_get(&c.same_thread.runs), 0);
  CHECK_ST(tether_actor_release(c.self), TETHER_OK);
  note_destroy(&c.same_thread);
  note_destroy(&c.other_group);
}
