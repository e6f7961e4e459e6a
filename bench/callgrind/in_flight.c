/* in_flight — the driver behind the per-call instruction counts with 1,024 calls in flight
 * (bench/README.md, target 5): R rounds of 1,024 calls with a future each to one actor,
 * then every answer waited for, taken and released. scripts/callgrind.sh runs it under
 * callgrind, on one CPU, for two R and prints the difference per call. */
#include <stdlib.h>

#include "answer_actor.h"
#include "tether/tether.h"

enum { kInFlight = 1024 };

int main(int argc, char **argv) {
  const long rounds = argc > 1 ? atol(argv[1]) : 10;
  static tether_future fs[kInFlight];
  tether_actor a;
  if (tether_actor_create(NULL, answer_ctor, NULL, NULL, NULL, &a) != TETHER_OK) return 1;
  for (long r = 0; r < rounds; ++r) {
    for (long i = 0; i < kInFlight; ++i) {
      if (tether_actor_call(a, NULL, add_one, (void *)i, NULL, &fs[i]) != TETHER_OK) return 1;
    }
    for (long i = 0; i < kInFlight; ++i) {
      void *out = NULL;
      if (tether_future_wait(fs[i], -1) != TETHER_OK) return 1;
      if (tether_future_take_result(fs[i], &out) != TETHER_OK || (long)out != i + 1) return 1;
      if (tether_future_release(fs[i]) != TETHER_OK) return 1;
    }
  }
  return tether_actor_release(a) == TETHER_OK ? 0 : 1;
}
