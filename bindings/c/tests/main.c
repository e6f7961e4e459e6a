/*
 * main.c — runs the one case named by argv[1] (libuv style: one process per case).
 *
 *   tether_c_tests <case>    run it; exit 0 on success, 1 on a failed check
 *   tether_c_tests --list    print every case name
 *
 * With TETHER_TEST_STARTED set, it first creates the file that names: the mark that main
 * began, by which cmake/wine_case.sh tells a case that failed from a process wine never
 * started.
 */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "test_list.h"

#define DECLARE(name) void test_##name(void);
TEST_LIST(DECLARE)
#undef DECLARE

static const struct {
  const char *name;
  void (*fn)(void);
} cases[] = {
#define ENTRY(name) {#name, test_##name},
    TEST_LIST(ENTRY)
#undef ENTRY
};

static void mark_started(void) {
  const char *path = getenv("TETHER_TEST_STARTED");
  FILE *f = path != NULL ? fopen(path, "w") : NULL;
  if (f != NULL) fclose(f);
}

int main(int argc, char **argv) {
  size_t i, n = sizeof cases / sizeof cases[0];
  mark_started();
  if (argc != 2) {
    fprintf(stderr, "usage: %s <case> | --list\n", argv[0]);
    return 2;
  }
  if (strcmp(argv[1], "--list") == 0) {
    for (i = 0; i < n; i++) printf("%s\n", cases[i].name);
    return 0;
  }
  for (i = 0; i < n; i++) {
    if (strcmp(argv[1], cases[i].name) == 0) {
      cases[i].fn();
      fprintf(stderr, "ok %s\n", cases[i].name);
      return 0;
    }
  }
  fprintf(stderr, "no such case: %s\n", argv[1]);
  return 2;
}
