/* ratio_driver — the median round trip after 1 ms idle of a tether blocking call
 * (tether_actor_call_wait) and of the raw futex ping-pong, interleaved (each after its own
 * 1 ms sleep: the other side has parked), on whatever CPUs the caller allows (taskset -c 0:
 * target 3 on one CPU). Prints "tether <us> futex <us> ratio <r>". Medians of N each:
 * steadier than bench/compare's means of 20, for comparing two builds of the library
 * (scripts/after_idle_ab.sh).
 *
 * Usage: ratio_driver [N]. Exits non-zero on any failure or wrong answer. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../callgrind/answer_actor.h"
#include "tether/tether.h"

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
static int by_value(const void* a, const void* b) {
  const long long x = *(const long long*)a, y = *(const long long*)b;
  return x < y ? -1 : x > y;
}
static void sleep_1ms(void) {
  struct timespec ts = {0, 1000000};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) != 0) {
  }
}

/* The raw futex ping-pong: the floor of target 3. */
static _Atomic unsigned request, response;
static long futex_arg, futex_out;
static void futex_wait(_Atomic unsigned* w, unsigned v) {
  while (atomic_load(w) == v) syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}
static void futex_wake(_Atomic unsigned* w) { syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }
static void* futex_worker(void* p) {
  (void)p;
  unsigned seen = 0;
  for (;;) {
    futex_wait(&request, seen);
    seen = atomic_load(&request);
    if (seen == ~0u) return NULL;
    futex_out = futex_arg + 1;
    atomic_store(&response, seen);
    futex_wake(&response);
  }
}
static long futex_call(long x) {
  futex_arg = x;
  const unsigned s = atomic_load(&request) + 1;
  atomic_store(&request, s);
  futex_wake(&request);
  while (atomic_load(&response) != s) futex_wait(&response, s - 1);
  return futex_out;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 200;
  if (n < 1) return 1;
  tether_actor a;
  if (tether_actor_create(NULL, answer_ctor, NULL, NULL, NULL, &a) != TETHER_OK) return 1;
  pthread_t worker;
  if (pthread_create(&worker, NULL, futex_worker, NULL) != 0) return 1;
  long long* t = malloc(sizeof(long long) * (size_t)n);
  long long* f = malloc(sizeof(long long) * (size_t)n);
  if (t == NULL || f == NULL) return 1;
  for (int i = 0; i < n; ++i) {
    void* r = NULL;
    sleep_1ms();
    long long t0 = now_ns();
    if (tether_actor_call_wait(a, NULL, add_one, (void*)(long)i, NULL, -1, &r, NULL) != TETHER_OK) return 2;
    t[i] = now_ns() - t0;
    if ((long)r != i + 1) return 3;
    sleep_1ms();
    t0 = now_ns();
    if (futex_call(i) != i + 1) return 3;
    f[i] = now_ns() - t0;
  }
  qsort(t, (size_t)n, sizeof *t, by_value);
  qsort(f, (size_t)n, sizeof *f, by_value);
  printf("tether %.2f futex %.2f ratio %.3f\n", t[n / 2] / 1e3, f[n / 2] / 1e3, (double)t[n / 2] / (double)f[n / 2]);
  atomic_store(&request, ~0u);
  futex_wake(&request);
  pthread_join(worker, NULL);
  free(t);
  free(f);
  return tether_actor_release(a) == TETHER_OK ? 0 : 4;
}
