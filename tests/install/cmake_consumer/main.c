/* A C99 program using the installed C API through find_package(tether CONFIG): starts a
 * runner, joins it, checks its result. */
#include <tether/tether.h>

#include <stdio.h>

static tether_status target(tether_task *t, void *arg) { return tether_task_set_result(t, arg, NULL); }

int main(void) {
  static int value = 42;
  tether_runner r = {0};
  int32_t state = -1;
  void *out = NULL;
  if (tether_version() != TETHER_VERSION) {
    fprintf(stderr, "header %u and library %u disagree\n", (unsigned)TETHER_VERSION, (unsigned)tether_version());
    return 1;
  }
  if (tether_runner_start(NULL, target, &value, NULL, &r) != TETHER_OK) return 2;
  if (tether_runner_join(r, -1) != TETHER_OK) return 3;
  if (tether_runner_poll(r, &state) != TETHER_OK || state != TETHER_SUCCEEDED) return 4;
  if (tether_runner_take_result(r, &out) != TETHER_OK || out != &value) return 5;
  if (tether_runner_release(r) != TETHER_OK) return 6;
  printf("tether %s via find_package from C: ok\n", tether_version_string());
  return 0;
}
