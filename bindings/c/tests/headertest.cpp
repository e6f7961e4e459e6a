// headertest.cpp — the public header on its own, as C++20 with -pedantic -Werror: the
// extern "C" guards hold and nothing in it is C-only.
#include <tether/tether.h>
#include <tether/tether.h>

#include <type_traits>

static_assert(std::is_same_v<tether_status, int32_t>);
static_assert(sizeof(tether_runner) == sizeof(uint64_t));
static_assert(TETHER_E_FORKED == 19);

int main() {
  tether_runner_options o;
  tether_runner_options_init(&o);
  tether_runner r{};
  int32_t state = TETHER_PENDING;
  if (tether_runner_poll(r, &state) != TETHER_E_INVALID_HANDLE) return 1;
  return tether_version() == TETHER_VERSION ? 0 : 1;
}
