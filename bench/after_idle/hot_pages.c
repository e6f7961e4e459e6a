/* hot_pages — blocking calls (tether_actor_call_wait) to one actor, each between two
 * stores to marker pages, so that scripts/hot_pages.sh can take the pages a round trip
 * touches from valgrind's lackey trace: after an idle spell each page is a TLB miss this
 * VM's nested page walk pays for (target 3, bench/README.md), both threads sharing one
 * CPU's TLB. Prints the two markers' addresses, then writes /proc/self/maps to the file
 * given (the script's map of addresses to objects).
 *
 * Usage: hot_pages MAPS_FILE [ROUNDS]. Exits non-zero on any failure or wrong answer. */
#include <stdio.h>
#include <stdlib.h>

#include "../callgrind/answer_actor.h"
#include "tether/tether.h"

static volatile char before_call[4096] __attribute__((aligned(4096)));
static volatile char after_call[4096] __attribute__((aligned(4096)));

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const int rounds = argc > 2 ? atoi(argv[2]) : 5;
  tether_actor a;
  if (tether_actor_create(NULL, answer_ctor, NULL, NULL, NULL, &a) != TETHER_OK) return 1;
  for (int i = 0; i < rounds; ++i) {
    void* r = NULL;
    before_call[0] = 1;
    if (tether_actor_call_wait(a, NULL, add_one, (void*)(long)i, NULL, -1, &r, NULL) != TETHER_OK) return 1;
    after_call[0] = 1;
    if ((long)r != i + 1) return 1;
  }
  printf("%p %p\n", (void*)before_call, (void*)after_call);
  FILE* in = fopen("/proc/self/maps", "r");
  FILE* out = fopen(argv[1], "w");
  if (in == NULL || out == NULL) return 1;
  char line[1024];
  while (fgets(line, sizeof line, in) != NULL) fputs(line, out);
  fclose(in);
  fclose(out);
  return tether_actor_release(a) == TETHER_OK ? 0 : 1;
}
