/*
 * test_fork.c — fork() as POSIX allows it (tether.h, section "Threads and processes").
 *
 * A child forked before any tether object existed uses the library like any process. A
 * child forked from a process with live objects gets TETHER_E_FORKED from every handle of
 * the parent's, with nothing dropped, joined or run, and new objects it makes work. The
 * atfork handlers take the library's global locks, so a fork while another thread holds
 * one leaves a child that can still lock it; the child's exit() neither joins the
 * parent's control thread nor takes a lock a parent thread held.
 *
 * Each child reports by its exit code (0: every check held), and every child arms
 * alarm(): a child that hangs dies of SIGALRM, which the parent sees. Under valgrind a
 * child leaves through exec, so memcheck does not weigh the parent's objects it keeps.
 */
#define _GNU_SOURCE
#include "actor_fixtures.h"

#include <sys/types.h>
#include <sys/wait.h>

#define CHILD_ALARM_S 20

static tether_status rec_ctor_plain(tether_task *t, void *arg, void **state_out) {
  (void)t;
  *state_out = arg;
  return TETHER_OK;
}

/* child_exit: ends the child with code. Through exec of a shell when `via_exec`. */
static void child_exit(int code, int via_exec) {
  if (via_exec) {
    char cmd[24];
    snprintf(cmd, sizeof cmd, "exit %d", code);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
  }
  _exit(code);
}

/* Under AddressSanitizer the runtime itself limits what a test may do around fork():
 * GCC 12's libsanitizer takes no lock of its thread registry at fork, so a child forked
 * while another thread creates or ends a thread can hang in it (seen in a backtrace:
 * __asan::AsanThread::Create waiting on thread_registry); and its exit-time leak check
 * counts the parent's objects, which the child keeps by design, as leaks. So there the
 * stress loops fork while no thread is being made, and a child that ends with exit()
 * skips the leak check through an atexit handler registered after the runtime's. */
#if defined(__SANITIZE_ADDRESS__)
#  define UNDER_ASAN 1
#else
#  define UNDER_ASAN 0
#endif

static void skip_leak_check_at_exit(void) { _exit(0); }

/* child_begin: what every child does first. */
static void child_begin(void) {
  alarm(CHILD_ALARM_S);
  if (UNDER_ASAN) atexit(skip_leak_check_at_exit);
}

static int under_valgrind(void) {
  const char *p = getenv("LD_PRELOAD");
  return p != NULL && strstr(p, "valgrind") != NULL;
}

/* wait_child: the child's exit code; fails the test on a signal or a hang. */
static int wait_child(pid_t pid) {
  int status = 0;
  int64_t deadline = now_ns() + T_LONG + CHILD_ALARM_S * SEC;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    CHECK(w >= 0);
    if (w == pid) break;
    if (now_ns() > deadline) harness_fail(__FILE__, __LINE__, "child %d did not exit", (int)pid);
    sched_yield();
  }
  if (WIFSIGNALED(status))
    harness_fail(__FILE__, __LINE__, "child died of signal %d (SIGALRM: it hung)", WTERMSIG(status));
  CHECK(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/* The child's checks: each returns 0, or a distinct code naming the check that failed. */
#define EXPECT_ST(code, expr, want)                                                         \
  do {                                                                                      \
    tether_status got_ = (expr);                                                            \
    if (got_ != (want)) {                                                                   \
      fprintf(stderr, "child check %d: %s returned %s\n", (code), #expr,                    \
              tether_status_name(got_));                                                    \
      return (code);                                                                        \
    }                                                                                       \
  } while (0)
#define EXPECT_TRUE(code, cond)                                                             \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      fprintf(stderr, "child check %d: %s\n", (code), #cond);                              \
      return (code);                                                                        \
    }                                                                                       \
  } while (0)

/* new_objects_work: a runner, an executor and an actor made here run, and drop args once. */
static int new_objects_work(int base) {
  counter drops;
  tether_runner r = {0};
  tether_executor e = {0};
  tether_actor a = {0};
  tether_future f = {0};
  int32_t s = -1;
  counter_init(&drops);
  EXPECT_ST(base + 1, tether_runner_start(NULL, ok_fn, &drops, count_drop, &r), TETHER_OK);
  EXPECT_ST(base + 2, tether_runner_join(r, T_LONG), TETHER_OK);
  EXPECT_ST(base + 3, tether_runner_poll(r, &s), TETHER_OK);
  EXPECT_TRUE(base + 4, s == TETHER_SUCCEEDED);
  EXPECT_ST(base + 5, tether_runner_release(r), TETHER_OK);
  EXPECT_ST(base + 6, tether_executor_create(NULL, &e), TETHER_OK);
  EXPECT_ST(base + 7, tether_executor_submit(e, ok_fn, &drops, count_drop, &f), TETHER_OK);
  EXPECT_ST(base + 8, tether_future_wait(f, T_LONG), TETHER_OK);
  EXPECT_ST(base + 9, tether_future_release(f), TETHER_OK);
  EXPECT_ST(base + 10, tether_executor_release(e), TETHER_OK);
  tether_actor_options o = actor_opts("child-actor", NULL, 0);
  EXPECT_ST(base + 11, tether_actor_create(&o, rec_ctor_plain, NULL, NULL, NULL, &a), TETHER_OK);
  EXPECT_TRUE(base + 12, call_and_wait(a, NULL, m_ok, NULL) == TETHER_SUCCEEDED);
  EXPECT_ST(base + 13, tether_actor_release(a), TETHER_OK);
  EXPECT_TRUE(base + 14, counter_get(&drops) == 2);
  EXPECT_TRUE(base + 15, tether_debug_unjoined_threads() == 0);
  return 0;
}

/* ---- fork before first use ------------------------------------------------------------ */

TEST(fork_before_first_use_child_uses_library) {
  /* This process has made no tether object (each case runs in its own process). */
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    child_begin();
    child_exit(new_objects_work(0), under_valgrind());
  }
  CHECK_EQ(wait_child(pid), 0);
  /* And the parent, untouched, too. */
  CHECK_EQ(new_objects_work(0), 0);
}

/* ---- fork with live objects ----------------------------------------------------------- */

typedef struct live_set {
  blocker b;          /* a runner blocked in its target */
  tether_runner runner;
  tether_executor exec;
  tether_actor actor;
  tether_future future; /* a pending call: the actor's method blocks on b2 */
  blocker b2;
  tether_graph graph;
  tether_compiled compiled;
  tether_error error;
} live_set;

static tether_status m_blocker(tether_task *t, void *state, void *arg) {
  (void)state;
  return blocker_fn(t, arg);
}

static tether_status node_pass(tether_task *t, void *state, void *arg, void *const *inputs, size_t n,
                               void **out) {
  (void)t;
  (void)state;
  (void)arg;
  (void)n;
  *out = inputs[0];
  return TETHER_OK;
}

static void live_set_start(live_set *l) {
  memset(l, 0, sizeof *l);
  blocker_init(&l->b);
  blocker_init(&l->b2);
  l->runner = start_blocker("parent-runner", &l->b);
  CHECK_ST(tether_executor_create(NULL, &l->exec), TETHER_OK);
  tether_actor_options o = actor_opts("parent-actor", NULL, 0);
  o.executor = l->exec;
  CHECK_ST(tether_actor_create(&o, rec_ctor_plain, NULL, NULL, NULL, &l->actor), TETHER_OK);
  CHECK_ST(tether_actor_call(l->actor, NULL, m_blocker, &l->b2, count_drop, &l->future), TETHER_OK);
  CHECK(event_wait(&l->b2.started, T_LONG));
  tether_actor_options go = actor_opts("parent-graph-actor", NULL, 0);
  tether_actor ga;
  CHECK_ST(tether_actor_create(&go, rec_ctor_plain, NULL, NULL, NULL, &ga), TETHER_OK);
  CHECK_ST(tether_graph_create(&l->graph), TETHER_OK);
  uint32_t node;
  CHECK_ST(tether_graph_add_node(l->graph, ga, NULL, node_pass, NULL, NULL, &node), TETHER_OK);
  CHECK_ST(tether_graph_add_edge(l->graph, TETHER_GRAPH_INPUT, node), TETHER_OK);
  CHECK_ST(tether_graph_set_outputs(l->graph, &node, 1), TETHER_OK);
  CHECK_ST(tether_graph_compile(l->graph, NULL, &l->compiled), TETHER_OK);
  CHECK_ST(tether_actor_release(ga), TETHER_OK); /* the compiled graph holds it */
  /* An error handle: a runner that failed. */
  tether_runner failed;
  CHECK_ST(tether_runner_start(NULL, fail_fn, (void *)"parent failure", NULL, &failed), TETHER_OK);
  CHECK_ST(tether_runner_join_all(failed, T_LONG), TETHER_OK);
  CHECK_ST(tether_runner_error(failed, &l->error), TETHER_OK);
  CHECK_ST(tether_runner_release(failed), TETHER_OK);
}

static void live_set_end(live_set *l) {
  int32_t s = -1;
  CHECK_ST(tether_runner_poll(l->runner, &s), TETHER_OK);
  CHECK_EQ(s, TETHER_RUNNING); /* the parent's runner noticed nothing */
  event_set(&l->b.gate);
  event_set(&l->b2.gate);
  CHECK_ST(tether_runner_join_all(l->runner, T_LONG), TETHER_OK);
  CHECK_ST(tether_future_wait(l->future, T_LONG), TETHER_OK);
  CHECK_ST(tether_future_release(l->future), TETHER_OK);
  CHECK_ST(tether_runner_release(l->runner), TETHER_OK);
  CHECK_ST(tether_compiled_release(l->compiled), TETHER_OK);
  CHECK_ST(tether_graph_release(l->graph), TETHER_OK);
  CHECK_ST(tether_actor_release(l->actor), TETHER_OK);
  CHECK_ST(tether_executor_release(l->exec), TETHER_OK);
  CHECK_ST(tether_error_release(l->error), TETHER_OK);
  CHECK_EQ(counter_get(&l->b.drops), 1); /* dropped once, by the parent */
  CHECK_EQ(counter_get(&l->b2.drops), 1);
  blocker_destroy(&l->b);
  blocker_destroy(&l->b2);
}

/* parent_handles_forked: every handle of the parent's is FORKED; args handed in are kept. */
static int parent_handles_forked(live_set *l) {
  counter drops;
  int32_t s = -1;
  tether_future f = {0};
  tether_actor a = {0};
  tether_executor_stats st;
  char buf[8];
  counter_init(&drops);
  memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  EXPECT_ST(101, tether_runner_poll(l->runner, &s), TETHER_E_FORKED);
  EXPECT_ST(102, tether_runner_join(l->runner, -1), TETHER_E_FORKED);
  EXPECT_ST(103, tether_runner_on_done(l->runner, count_drop, &drops, count_drop), TETHER_E_FORKED);
  EXPECT_ST(104, tether_runner_cancel(l->runner), TETHER_E_FORKED);
  EXPECT_ST(105, tether_runner_release(l->runner), TETHER_E_FORKED);
  EXPECT_ST(106, tether_executor_submit(l->exec, ok_fn, &drops, count_drop, &f), TETHER_E_FORKED);
  EXPECT_TRUE(107, f.id == 0);
  EXPECT_ST(108, tether_executor_get_stats(l->exec, &st), TETHER_E_FORKED);
  EXPECT_ST(109, tether_actor_call(l->actor, NULL, m_ok, &drops, count_drop, NULL), TETHER_E_FORKED);
  EXPECT_ST(110, tether_actor_call(l->actor, NULL, m_ok, &drops, count_drop, &f), TETHER_E_FORKED);
  EXPECT_ST(111, tether_actor_stop(l->actor, TETHER_STOP_CANCEL, -1), TETHER_E_FORKED);
  EXPECT_ST(112, tether_actor_release(l->actor), TETHER_E_FORKED);
  EXPECT_ST(113, tether_future_wait(l->future, -1), TETHER_E_FORKED);
  EXPECT_ST(114, tether_future_poll(l->future, &s), TETHER_E_FORKED);
  EXPECT_ST(115, tether_future_release(l->future), TETHER_E_FORKED);
  EXPECT_ST(116, tether_compiled_execute(l->compiled, &drops, count_drop, &f), TETHER_E_FORKED);
  EXPECT_ST(117, tether_compiled_release(l->compiled), TETHER_E_FORKED);
  EXPECT_ST(118, tether_graph_release(l->graph), TETHER_E_FORKED);
  EXPECT_TRUE(119, tether_error_code(l->error) == 0); /* an accessor of a FORKED handle */
  EXPECT_TRUE(120, tether_error_message(l->error, buf, sizeof buf) == 0);
  EXPECT_ST(121, tether_error_release(l->error), TETHER_E_FORKED);
  EXPECT_ST(122, tether_executor_release(l->exec), TETHER_E_FORKED);
  /* A new actor on the parent's executor cannot be made either. */
  tether_actor_options o = actor_opts("on-parent-exec", NULL, 0);
  o.executor = l->exec;
  EXPECT_ST(123, tether_actor_create(&o, rec_ctor_plain, NULL, &drops, count_drop, &a), TETHER_E_FORKED);
  /* A forged id is what it always is. */
  EXPECT_ST(124, tether_runner_poll((tether_runner){0x123456789ULL}, &s), TETHER_E_INVALID_HANDLE);
  EXPECT_TRUE(125, counter_get(&drops) == 0);        /* nothing handed in was dropped */
  EXPECT_TRUE(126, counter_get(&l->b.drops) == 0);   /* nothing of the parent's either */
  return 0;
}

static int child_of_live_set(live_set *l) {
  int rc = parent_handles_forked(l);
  return rc != 0 ? rc : new_objects_work(200);
}

TEST(fork_with_live_objects_parent_handles_forked_new_work) {
  live_set l;
  live_set_start(&l);
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    child_begin();
    child_exit(child_of_live_set(&l), under_valgrind());
  }
  CHECK_EQ(wait_child(pid), 0);
  live_set_end(&l);
}

/* Defect f: a child of a process with live library threads ends with exit() (static
 * destructors and atexit handlers run): it exits at once, every time. */
TEST(fork_child_exit_with_live_threads_many) {
  live_set l;
  live_set_start(&l);
  const long forks = scaled(300);
  for (long i = 0; i < forks; ++i) {
    /* The control thread is busy now and then: a runner released from its own thread. */
    if (!UNDER_ASAN) {
      tether_runner r;
      CHECK_ST(tether_runner_start(NULL, ok_fn, NULL, NULL, &r), TETHER_OK);
      CHECK_ST(tether_runner_release_nowait(r), TETHER_OK);
    }
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      child_begin();
      if (under_valgrind()) child_exit(0, 1);
      exit(0);
    }
    if (wait_child(pid) != 0) harness_fail(__FILE__, __LINE__, "fork %ld: child exit code non-zero", i);
  }
  live_set_end(&l);
}

/* ---- fork while other threads hold the library's global locks -------------------------- */

typedef struct hammer {
  volatile int stop; /* __atomic */
  tether_runner target;
} hammer;

/* hammer_fn: takes and drops the handle table's lock (lookups, inserts, releases) and the
 * control thread's (release_nowait) as fast as it can. */
static void *hammer_fn(void *p) {
  hammer *h = p;
  while (!__atomic_load_n(&h->stop, __ATOMIC_RELAXED)) {
    int32_t s;
    tether_error e = {0};
    (void)tether_runner_poll(h->target, &s);
    if (tether_runner_error(h->target, &e) == TETHER_OK && e.id != 0) (void)tether_error_release(e);
    tether_runner r;
    if (tether_runner_start(NULL, ok_fn, NULL, NULL, &r) == TETHER_OK) (void)tether_runner_release_nowait(r);
  }
  return NULL;
}

TEST(fork_while_threads_hold_global_locks) {
  if (UNDER_ASAN) {
    printf("skipped under AddressSanitizer: its runtime is not fork-safe while threads are made\n");
    return;
  }
  hammer h;
  pthread_t threads[2];
  blocker b;
  memset(&h, 0, sizeof h);
  blocker_init(&b);
  b.fail_msg = "for the error accessors";
  h.target = start_blocker("hammered", &b);
  for (int i = 0; i < 2; ++i) CHECK_EQ(pthread_create(&threads[i], NULL, hammer_fn, &h), 0);
  const long forks = scaled(200);
  for (long i = 0; i < forks; ++i) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      child_begin();
      /* Takes every lock the hammers take: none is held by a thread that is not here. */
      tether_runner r;
      int32_t s;
      int code = 0;
      if (tether_runner_poll(h.target, &s) != TETHER_E_FORKED) code = 1;
      else if (tether_runner_start(NULL, ok_fn, NULL, NULL, &r) != TETHER_OK) code = 2;
      else if (tether_runner_release_nowait(r) != TETHER_OK) code = 3;
      child_exit(code, under_valgrind());
    }
    int code = wait_child(pid);
    if (code != 0) harness_fail(__FILE__, __LINE__, "fork %ld: child check %d failed", i, code);
  }
  __atomic_store_n(&h.stop, 1, __ATOMIC_RELAXED);
  for (int i = 0; i < 2; ++i) CHECK_EQ(pthread_join(threads[i], NULL), 0);
  event_set(&b.gate);
  CHECK_ST(tether_runner_join_all(h.target, T_LONG), TETHER_OK);
  CHECK_ST(tether_runner_release(h.target), TETHER_OK);
  blocker_destroy(&b);
}

/* ---- fork from inside a callback ------------------------------------------------------ */

typedef struct forking_call {
  int pipe_w;       /* the child writes its check result here */
  pid_t child;      /* set in the parent's copy */
  counter later;    /* calls queued behind the forking one that ran (in the parent) */
} forking_call;

static tether_status m_fork(tether_task *t, void *state, void *arg) {
  (void)state;
  forking_call *fc = arg;
  fflush(NULL);
  pid_t pid = fork();
  if (pid != 0) {
    fc->child = pid;
    return TETHER_OK;
  }
  child_begin();
  /* In the child, on the copy of the actor's thread: the task is the parent's. */
  int code = 0;
  if (tether_task_fail(t, 1, "child") != TETHER_E_FORKED) code = 1;
  else if (tether_task_spawn(t, "n", ok_fn, NULL, NULL) != TETHER_E_FORKED) code = 2;
  else code = new_objects_work(300);
  char c = (char)code;
  if (write(fc->pipe_w, &c, 1) != 1) _exit(99);
  if (under_valgrind()) child_exit(code, 1);
  return TETHER_OK; /* returning in the child ends it, with status 0 */
}

static tether_status m_later(tether_task *t, void *state, void *arg) {
  (void)t;
  (void)state;
  counter_add(&((forking_call *)arg)->later, 1);
  return TETHER_OK;
}

TEST(fork_inside_callback) {
  forking_call fc;
  int fds[2];
  memset(&fc, 0, sizeof fc);
  counter_init(&fc.later);
  CHECK_EQ(pipe(fds), 0);
  fc.pipe_w = fds[1];
  tether_actor_options o = actor_opts("forker", NULL, 0);
  tether_actor a;
  CHECK_ST(tether_actor_create(&o, rec_ctor_plain, NULL, NULL, NULL, &a), TETHER_OK);
  tether_future f;
  CHECK_ST(tether_actor_call(a, NULL, m_fork, &fc, NULL, &f), TETHER_OK);
  for (int i = 0; i < 10; ++i) CHECK_ST(tether_actor_call(a, NULL, m_later, &fc, NULL, NULL), TETHER_OK);
  CHECK_ST(tether_future_wait(f, T_LONG), TETHER_OK);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK(fc.child > 0);
  CHECK_EQ(wait_child(fc.child), 0);
  close(fds[1]);
  char c = 42;
  CHECK_EQ(read(fds[0], &c, 1), 1);
  if (c != 0) harness_fail(__FILE__, __LINE__, "the child's check %d failed", (int)c);
  CHECK_EQ(read(fds[0], &c, 1), 0); /* one report: the child ran none of the later calls */
  close(fds[0]);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&fc.later), 10);
  counter_destroy(&fc.later);
}
