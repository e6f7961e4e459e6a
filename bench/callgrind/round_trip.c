/* round_trip — the driver behind the per-call instruction counts of a call with a future
 * (bench/README.md): N round trips to one actor whose method answers arg + 1 through
 * tether_task_set_result, each with tether_actor_call, tether_future_wait,
 * tether_future_take_result and tether_future_release, as a user writes them.
 * scripts/callgrind.sh runs it under callgrind, on one CPU (so no thread spins), for two N
 * and prints the difference per round trip. */
#include <stdlib.h>

#include "answer_actor.h"
#include "tether/tether.h"

int main(int argc, char **argv) {
  const long n = argc > 1 ? atol(argv[1]) : 10000;
  tether_actor a;
  if (tether_actor_create(NULL, answer_ctor, NULL, NULL, NULL, &a) != TETHER_OK) return 1;
  for (long i = 0; i < n; ++i) {
    tether_future f;
    void *out = NULL;
    if (tether_actor_call(a, NULL, add_one, (void *)i, NULL, &f) != TETHER_OK) return 1;
    if (tether_future_wait(f, -1) != TETHER_OK) return 1;
    if (tether_future_take_result(f, &out) != TETHER_OK || (long)out != i + 1) return 1;
    if (tether_future_release(f) != TETHER_OK) return 1;
  }
  return tether_actor_release(a) == TETHER_OK ? 0 : 1;
}
