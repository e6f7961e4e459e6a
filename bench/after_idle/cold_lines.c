/* cold_lines — N tether blocking calls (tether_actor_call_wait), each after the caches are
 * wiped: 64 KiB of code run (nops) and 128 KiB of data written, which empties a simulated
 * 32 KiB cache. Run under valgrind's cache simulation (scripts/cold_lines.sh), the misses
 * a round trip takes are then the distinct lines it touches: what a round trip after 1 ms
 * idle pays for on these VMs, whose caches are cold by then (target 3, bench/README.md).
 *
 * Usage: cold_lines N [wipe]. With "wipe", only the wipes (and one call before them): what
 * the script subtracts from the calling thread's counts. Exits non-zero on any failure or
 * wrong answer. */
#include <stdlib.h>
#include <string.h>

#include "../callgrind/answer_actor.h"
#include "tether/tether.h"

void cold_lines_nops(void);
__asm__(".text\n.globl cold_lines_nops\ncold_lines_nops:\n.fill 65536,1,0x90\nret\n");
static char wipe[1 << 17];

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 100;
  const int calls = argc <= 2;
  tether_actor a;
  if (tether_actor_create(NULL, answer_ctor, NULL, NULL, NULL, &a) != TETHER_OK) return 1;
  void* r = NULL;
  if (tether_actor_call_wait(a, NULL, add_one, (void*)1L, NULL, -1, &r, NULL) != TETHER_OK) return 2;
  for (int i = 0; i < n; ++i) {
    cold_lines_nops();
    memset(wipe, i, sizeof wipe);
    if (!calls) continue;
    if (tether_actor_call_wait(a, NULL, add_one, (void*)(long)i, NULL, -1, &r, NULL) != TETHER_OK) return 2;
    if ((long)r != i + 1) return 3;
  }
  return tether_actor_release(a) == TETHER_OK ? 0 : 4;
}
