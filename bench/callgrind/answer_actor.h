/* answer_actor.h — the actor of round_trip.c, in_flight.c and ../after_idle's drivers: a
 * constructor that makes no state worth the name, and a method that answers arg + 1
 * through tether_task_set_result. */
#ifndef TETHER_BENCH_CALLGRIND_ANSWER_ACTOR_H
#define TETHER_BENCH_CALLGRIND_ANSWER_ACTOR_H

#include "tether/tether.h"

static tether_status answer_ctor(tether_task *t, void *arg, void **out) {
  static long state;
  (void)t;
  (void)arg;
  *out = &state;
  return TETHER_OK;
}

static tether_status add_one(tether_task *t, void *state, void *arg) {
  (void)state;
  return tether_task_set_result(t, (void *)((long)arg + 1), NULL);
}

#endif
