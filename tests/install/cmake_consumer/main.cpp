// A C++ program using the installed C API: starts a runner, joins it, checks its result.
#include <tether/tether.h>

#include <cstdio>
#include <cstring>

namespace {
tether_status target(tether_task *t, void *arg) {
  return tether_task_set_result(t, arg, nullptr);
}
}  // namespace

int main() {
  if (tether_version() != TETHER_VERSION) {
    std::fprintf(stderr, "header %u and library %u disagree\n", TETHER_VERSION, tether_version());
    return 1;
  }
  static int value = 42;
  tether_runner r{};
  if (tether_runner_start(nullptr, target, &value, nullptr, &r) != TETHER_OK) return 2;
  if (tether_runner_join(r, -1) != TETHER_OK) return 3;
  int32_t state = -1;
  if (tether_runner_poll(r, &state) != TETHER_OK || state != TETHER_SUCCEEDED) return 4;
  void *out = nullptr;
  if (tether_runner_take_result(r, &out) != TETHER_OK || out != &value) return 5;
  if (tether_runner_release(r) != TETHER_OK) return 6;
  std::printf("tether %s via find_package: ok\n", tether_version_string());
  return 0;
}
