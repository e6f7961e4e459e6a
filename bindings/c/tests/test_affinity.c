/*
 * test_affinity.c — which CPUs an executor may be pinned to: those the PROCESS may run on
 * (its cpuset), whatever the creating thread, or the main thread, is pinned to.
 */
#define _GNU_SOURCE
#include "fixtures.h"

#include <sched.h>

static tether_status record_cpu(tether_task *t, void *arg) {
  (void)t;
  *(int *)arg = sched_getcpu();
  return TETHER_OK;
}

/* run_on: creates an executor pinned to cpu, runs one task there, returns the CPU it saw. */
static int run_on(int cpu) {
  tether_executor_options o;
  tether_executor e;
  tether_future f;
  int seen = -1;
  tether_executor_options_init(&o);
  o.name = "pinned";
  o.cpu = cpu;
  CHECK_ST(tether_executor_create(&o, &e), TETHER_OK);
  CHECK_ST(tether_executor_submit(e, record_cpu, &seen, NULL, &f), TETHER_OK);
  CHECK_ST(tether_future_wait(f, T_LONG), TETHER_OK);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
  return seen;
}

/* Two CPUs the process may use, or -1 when it has fewer. */
static int two_cpus(int *a, int *b) {
  cpu_set_t set;
  CHECK_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  *a = *b = -1;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    if (*a < 0) {
      *a = c;
    } else {
      *b = c;
      return 0;
    }
  }
  return -1;
}

/* The creating thread pinned to one CPU asks for an executor on another: allowed. */
TEST(affinity_pinned_creator_other_cpu) {
  int a, b;
  if (two_cpus(&a, &b) != 0) {
    printf("skipped: the process may use only one CPU\n");
    return;
  }
  cpu_set_t only_a;
  CPU_ZERO(&only_a);
  CPU_SET(a, &only_a);
  CHECK_EQ(sched_setaffinity(0, sizeof only_a, &only_a), 0); /* this (main) thread only */
  CHECK_EQ(run_on(b), b);
  CHECK_EQ(run_on(a), a);
}

/* A CPU that does not exist, or is outside the process's cpuset: INVALID_ARGUMENT, with a
 * message naming the allowed set. */
TEST(affinity_cpu_outside_process_refused) {
  const int missing[] = {CPU_SETSIZE - 1, CPU_SETSIZE, 1 << 20};
  for (size_t i = 0; i < sizeof missing / sizeof missing[0]; ++i) {
    tether_executor_options o;
    tether_executor e = {0};
    char msg[256];
    tether_executor_options_init(&o);
    o.cpu = missing[i];
    CHECK_ST(tether_executor_create(&o, &e), TETHER_E_INVALID_ARGUMENT);
    CHECK(e.id == 0);
    tether_last_error_message(msg, sizeof msg);
    if (strstr(msg, "allowed: ") == NULL)
      harness_fail(__FILE__, __LINE__, "cpu %d: message \"%s\" names no allowed set", missing[i], msg);
  }
  CHECK_EQ(tether_debug_unjoined_threads(), 0);
}
