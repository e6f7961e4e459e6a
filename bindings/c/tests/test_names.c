/*
 * test_names.c — thread names: the OS sees at most 15 bytes of the option's name, while
 * tether_task_thread_name and the errors keep the whole name. Names are copied.
 */
#define _GNU_SOURCE /* pthread_getname_np */
#include "fixtures.h"
#include "os_calls.h"

typedef struct names {
  counter drops; /* FIRST member */
  counter nested_drops;
  event nested_done;
  const char *nested_name; /* name passed to spawn (may be NULL) */
  const char *fail_msg;    /* non-NULL: the target fails after recording */
  char os_target[64], task_target[64];
  char os_nested[64], task_nested[64];
} names;

static void record_names(tether_task *t, char os[64], char task[64]) {
  const char *n = tether_task_thread_name(t);
  CHECK(os_thread_name(os, 64));
  CHECK(n != NULL && strlen(n) < 64);
  strcpy(task, n);
}

static tether_status nested_names(tether_task *t, void *arg) {
  names *c = (names *)arg;
  record_names(t, c->os_nested, c->task_nested);
  event_set(&c->nested_done);
  return c->fail_msg ? tether_task_fail(t, 2, c->fail_msg) : TETHER_OK;
}

static void names_nested_drop(void *arg) { counter_add(&((names *)arg)->nested_drops, 1); }

/* target_names: records its names, then spawns the nested thread with a name from a heap
 * buffer it scribbles over and frees at once (spawn must have copied it). */
static tether_status target_names(tether_task *t, void *arg) {
  names *c = (names *)arg;
  char *name = NULL;
  record_names(t, c->os_target, c->task_target);
  if (c->nested_name) {
    name = (char *)malloc(strlen(c->nested_name) + 1);
    CHECK(name != NULL);
    strcpy(name, c->nested_name);
  }
  CHECK_ST(tether_task_spawn(t, name, nested_names, c, names_nested_drop), TETHER_OK);
  if (name) {
    memset(name, 'Z', strlen(name));
    free(name);
  }
  CHECK(event_wait(&c->nested_done, T_LONG));
  if (!c->fail_msg) return TETHER_OK;
  {
    /* Fail second: after the nested thread's error is recorded. */
    tether_runner self = {0};
    CHECK_ST(tether_task_runner(t, &self), TETHER_OK);
    CHECK_SOON(tether_runner_error_count(self) == 1);
  }
  return tether_task_fail(t, 1, c->fail_msg);
}

/* run_names: runs target_names under `opts` and waits for every thread. */
static tether_runner run_names(const tether_runner_options *opts, names *c, const char *nested_name,
                               const char *fail_msg) {
  tether_runner r = {0};
  memset(c, 0, sizeof *c);
  counter_init(&c->drops);
  counter_init(&c->nested_drops);
  event_init(&c->nested_done);
  c->nested_name = nested_name;
  c->fail_msg = fail_msg;
  CHECK_ST(tether_runner_start(opts, target_names, c, count_drop, &r), TETHER_OK);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  return r;
}

static void finish_names(tether_runner r, names *c) {
  CHECK_ST(tether_runner_release(r), TETHER_OK);
  CHECK_EQ(counter_get(&c->drops), 1);
  CHECK_EQ(counter_get(&c->nested_drops), 1);
  counter_destroy(&c->drops);
  counter_destroy(&c->nested_drops);
  event_destroy(&c->nested_done);
}

TEST(thread_name_os) {
  names c;
  tether_runner_options o = runner_opts("loader");
  tether_runner r = run_names(&o, &c, "io-2", NULL);
  CHECK_STATE(r, TETHER_SUCCEEDED);
  CHECK_STR(c.os_target, "loader");
  CHECK_STR(c.task_target, "loader");
  CHECK_STR(c.os_nested, "io-2");
  CHECK_STR(c.task_nested, "io-2");
  finish_names(r, &c);
}

/* Exactly 15 bytes fit the OS name whole. */
TEST(thread_name_15_bytes) {
  names c;
  tether_runner_options o = runner_opts("exactly-15-byte");
  tether_runner r = run_names(&o, &c, NULL, NULL);
  CHECK_EQ(strlen("exactly-15-byte"), 15);
  CHECK_STR(c.os_target, "exactly-15-byte");
  CHECK_STR(c.task_target, "exactly-15-byte");
  CHECK_STR(c.os_nested, "exactly-15-byte"); /* NULL nested name: the runner's */
  finish_names(r, &c);
}

/* Longer names: the OS keeps the first 15 bytes; the task and its errors keep it all. */
TEST(thread_name_long) {
  static const char *const target_name = "a-very-long-thread-name-0123";
  static const char *const nested_name = "nested-thread-with-a-long-name";
  names c;
  tether_runner_options o = runner_opts(target_name);
  tether_runner r = run_names(&o, &c, nested_name, "named failure");
  CHECK_STATE(r, TETHER_FAILED);
  CHECK_STR(c.os_target, "a-very-long-thr");
  CHECK_STR(c.task_target, target_name);
  CHECK_STR(c.os_nested, "nested-thread-w");
  CHECK_STR(c.task_nested, nested_name);
  /* Both threads failed; the nested one first (the target waited for it). */
  CHECK_EQ(tether_runner_error_count(r), 2);
  CHECK_RUNNER_ERROR(r, 0, TETHER_E_TASK_FAILED, 2, "named failure", nested_name);
  CHECK_RUNNER_ERROR(r, 1, TETHER_E_TASK_FAILED, 1, "named failure", target_name);
  finish_names(r, &c);
}

/* No options: the default name "tether-run", for the target and a NULL-named nested. */
TEST(thread_name_default) {
  names c;
  tether_runner r = run_names(NULL, &c, NULL, NULL);
  CHECK_STR(c.os_target, "tether-run");
  CHECK_STR(c.task_target, "tether-run");
  CHECK_STR(c.os_nested, "tether-run");
  CHECK_STR(c.task_nested, "tether-run");
  finish_names(r, &c);
}

/* The name is copied by start (and by spawn, see target_names): the caller's buffer may
 * change at once. */
TEST(thread_name_copied) {
  names c;
  char *buf = (char *)malloc(32);
  tether_runner_options o;
  tether_runner r = {0};
  CHECK(buf != NULL);
  strcpy(buf, "copied-name");
  o = runner_opts(buf);
  memset(&c, 0, sizeof c);
  counter_init(&c.drops);
  counter_init(&c.nested_drops);
  event_init(&c.nested_done);
  c.nested_name = "nested-copy";
  CHECK_ST(tether_runner_start(&o, target_names, &c, count_drop, &r), TETHER_OK);
  memset(buf, 'Z', 31);
  buf[31] = '\0';
  free(buf);
  CHECK_ST(tether_runner_join_all(r, T_LONG), TETHER_OK);
  CHECK_STR(c.os_target, "copied-name");
  CHECK_STR(c.task_target, "copied-name");
  CHECK_STR(c.task_nested, "nested-copy");
  finish_names(r, &c);
}
