/* A strict C99 program built with `pkg-config --cflags --libs tether` against an installed
 * tether: a failing runner's error surfaces. argv[1] is pkg-config's --modversion. */
#include <tether/tether.h>

#include <stdio.h>
#include <string.h>

static tether_status failing(tether_task *t, void *arg) {
  (void)arg;
  return tether_task_fail(t, 7, "disk full");
}

int main(int argc, char **argv) {
  tether_runner r = {0};
  tether_error e = {0};
  int32_t state = -1;
  char msg[64];
  if (argc != 2 || strcmp(argv[1], tether_version_string()) != 0) {
    fprintf(stderr, "pkg-config version %s, library %s\n", argc > 1 ? argv[1] : "?",
            tether_version_string());
    return 1;
  }
  if (tether_runner_start(NULL, failing, NULL, NULL, &r) != TETHER_OK) return 2;
  if (tether_runner_join_all(r, -1) != TETHER_OK) return 3;
  if (tether_runner_poll(r, &state) != TETHER_OK || state != TETHER_FAILED) return 4;
  if (tether_runner_error(r, &e) != TETHER_OK || e.id == 0) return 5;
  if (tether_error_code(e) != TETHER_E_TASK_FAILED || tether_error_user_code(e) != 7) return 6;
  tether_error_message(e, msg, sizeof msg);
  if (strcmp(msg, "disk full") != 0) return 7;
  if (tether_error_release(e) != TETHER_OK) return 8;
  if (tether_runner_release(r) != TETHER_OK) return 9;
  printf("tether %s via pkg-config: ok\n", tether_version_string());
  return 0;
}
