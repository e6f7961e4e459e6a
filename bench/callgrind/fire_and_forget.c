/* fire_and_forget — the driver behind the per-call instruction counts (bench/README.md):
 * N fire-and-forget calls to one actor whose method adds its arg to the state, then one
 * round trip so every call has run. scripts/callgrind.sh runs it under callgrind for two
 * N and prints (Ir(30000) - Ir(10000)) / 20000 per thread: the setup cancels out. */
#include <stdio.h>
#include <stdlib.h>

#include "tether/tether.h"

static tether_status ctor(tether_task *t, void *arg, void **out) {
  static long state;
  (void)t;
  (void)arg;
  *out = &state;
  return TETHER_OK;
}

static tether_status add(tether_task *t, void *state, void *arg) {
  (void)t;
  *(long *)state += (long)arg;
  return TETHER_OK;
}

int main(int argc, char **argv) {
  const long n = argc > 1 ? atol(argv[1]) : 10000;
  tether_actor a;
  tether_future f;
  if (tether_actor_create(NULL, ctor, NULL, NULL, NULL, &a) != TETHER_OK) return 1;
  for (long i = 0; i < n; ++i) {
    if (tether_actor_call(a, NULL, add, (void *)1, NULL, NULL) != TETHER_OK) return 1;
  }
  if (tether_actor_call(a, NULL, add, (void *)0, NULL, &f) != TETHER_OK) return 1;
  if (tether_future_wait(f, -1) != TETHER_OK) return 1;
  tether_future_release(f);
  return tether_actor_release(a) == TETHER_OK ? 0 : 1;
}
