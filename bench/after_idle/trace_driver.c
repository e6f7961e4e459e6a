/* trace_driver — round trips after 1 ms idle, both sides on CPU 0, marked in the kernel's
 * trace buffer so that scripts/trace_after_idle.sh can split each one into what the
 * kernel did (syscalls, wake-ups, switches) and the user code between (segments.py).
 *
 * Four kinds, interleaved (each round starting at the next kind), each after its own 1 ms
 * sleep (the other side has parked):
 *   F  the raw futex ping-pong: the floor of target 3 (bench/README.md)
 *   W  a tether blocking call (tether_actor_call_wait): tether's round trip in bench/compare
 *   C  a tether actor call with a future: call, wait, take, release
 *   Q  a tether fire-and-forget call whose method answers through a raw futex: tether's
 *      queue and executor with no future at all
 * A marker is "<kind>0 <ns>" before and "<kind>1 <ns>" after each round trip, with
 * CLOCK_MONOTONIC's nanoseconds (segments.py converts the trace clock with them).
 *
 * Usage: trace_driver MARKER_FILE [ROUNDS]. Needs the trace buffer's marker file open for
 * writing (root). Exits non-zero on any failure or wrong answer. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../callgrind/answer_actor.h" /* answer_ctor, add_one: the callgrind drivers' actor */
#include "tether/tether.h"

static int marker_fd = -1;
static atomic_uint request, answer, queued_answer;

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* mark: "<kind><end> <ns>", formatted by hand: snprintf's code, cold after the idle,
 * would weigh on the caller's figures. */
static void mark(char kind, int end) {
  char text[32];
  char *p = text + sizeof text;
  for (uint64_t ns = (uint64_t)now_ns(); ns != 0 || p == text + sizeof text; ns /= 10) *--p = (char)('0' + ns % 10);
  *--p = ' ';
  *--p = (char)('0' + end);
  *--p = kind;
  const ssize_t n = text + sizeof text - p;
  if (write(marker_fd, p, (size_t)n) != n) {
    perror("trace_driver: marker");
    exit(2);
  }
}

static void idle_1ms(void) {
  const struct timespec t = {0, 1000000};
  clock_nanosleep(CLOCK_MONOTONIC, 0, &t, NULL);
}

static void futex_wait_while(atomic_uint *word, unsigned value) {
  while (atomic_load(word) == value) syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
}

static void futex_wake(atomic_uint *word) { syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }

/* The floor's other side: answers each request with its number. ~0u ends it. */
static void *floor_side(void *unused) {
  (void)unused;
  unsigned seen = 0;
  for (;;) {
    futex_wait_while(&request, seen);
    seen = atomic_load(&request);
    if (seen == ~0u) return NULL;
    atomic_store(&answer, seen);
    futex_wake(&answer);
  }
}

static tether_status answer_by_futex(tether_task *t, void *state, void *arg) {
  (void)t;
  (void)state;
  atomic_store(&queued_answer, (unsigned)(uintptr_t)arg);
  futex_wake(&queued_answer);
  return TETHER_OK;
}

/* The round trips, one of each kind; false on a failure or a wrong answer. */
static tether_actor with_future, fire_and_forget;
static unsigned sequence;

static bool floor_trip(intptr_t i) {
  (void)i;
  atomic_store(&request, ++sequence);
  futex_wake(&request);
  futex_wait_while(&answer, sequence - 1);
  return true;
}

static bool blocking_call(intptr_t i) {
  void *result = NULL;
  return tether_actor_call_wait(with_future, NULL, add_one, (void *)i, NULL, -1, &result, NULL) == TETHER_OK &&
         (intptr_t)result == i + 1;
}

static bool call_with_future(intptr_t i) {
  tether_future f;
  void *result = NULL;
  return tether_actor_call(with_future, NULL, add_one, (void *)i, NULL, &f) == TETHER_OK &&
         tether_future_wait(f, -1) == TETHER_OK && tether_future_take_result(f, &result) == TETHER_OK &&
         tether_future_release(f) == TETHER_OK && (intptr_t)result == i + 1;
}

static bool queued_with_futex_answer(intptr_t i) {
  (void)i;
  const unsigned before = atomic_load(&queued_answer);
  if (tether_actor_call(fire_and_forget, NULL, answer_by_futex, (void *)(uintptr_t)(before + 1), NULL, NULL) != TETHER_OK) {
    return false;
  }
  futex_wait_while(&queued_answer, before);
  return true;
}

static const struct {
  char kind;
  bool (*trip)(intptr_t);
} kTrips[] = {{'F', floor_trip}, {'W', blocking_call}, {'C', call_with_future}, {'Q', queued_with_futex_answer}};
enum { kKinds = sizeof kTrips / sizeof kTrips[0] };

static void pin_to_cpu0(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
    fprintf(stderr, "trace_driver: cannot pin to CPU 0\n");
    exit(2);
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: trace_driver MARKER_FILE [ROUNDS]\n");
    return 2;
  }
  const int rounds = argc > 2 ? atoi(argv[2]) : 400;
  marker_fd = open(argv[1], O_WRONLY);
  if (marker_fd < 0) {
    perror("trace_driver: open marker file");
    return 2;
  }
  pin_to_cpu0(); /* before any thread starts: each inherits CPU 0 */
  /* An actor each: fire-and-forget calls lease a ring, and a lane with a leased ring
   * makes a heavy fence (a membarrier) whenever it parks (pinned_lane.h, C3), which a
   * caller making only calls with futures never meets. */
  if (tether_actor_create(NULL, answer_ctor, NULL, NULL, NULL, &with_future) != TETHER_OK ||
      tether_actor_create(NULL, answer_ctor, NULL, NULL, NULL, &fire_and_forget) != TETHER_OK) {
    return 1;
  }
  pthread_t floor_thread;
  if (pthread_create(&floor_thread, NULL, floor_side, NULL) != 0) return 1;

  /* Each round starts at the next kind, so that every kind follows every other as often
   * (what ran between two of a kind's round trips decides how cold its lines are). */
  for (int i = 0; i < rounds; ++i) {
    for (int k = 0; k < kKinds; ++k) {
      const int which = (i + k) % kKinds;
      idle_1ms();
      mark(kTrips[which].kind, 0);
      if (!kTrips[which].trip(i)) return 1;
      mark(kTrips[which].kind, 1);
    }
  }
  atomic_store(&request, ~0u);
  futex_wake(&request);
  pthread_join(floor_thread, NULL);
  return tether_actor_release(with_future) == TETHER_OK && tether_actor_release(fire_and_forget) == TETHER_OK ? 0 : 1;
}
