// A C++20 program using the installed C++ layer (<tether/tether.hpp>, which includes its
// parts from tether/hpp/): an executor's future, an actor's call, and an Error.
#include <tether/tether.hpp>

#include <chrono>
#include <cstdio>

namespace {
struct Counter {
  int n = 0;
};
}  // namespace

int main() {
  using namespace std::chrono_literals;
  try {
    auto exec = tether::Executor::create({.name = "consumer"});
    if (exec.submit([] { return 6 * 7; }).get() != 42) return 1;
    auto actor = tether::Actor<Counter>::create({.name = "counter"}, [](tether::Task&) { return Counter{}; });
    actor.post([](Counter& c) { ++c.n; });
    if (actor.call([](Counter& c) { return c.n; }).get() != 1) return 2;
    if (!actor.stop(tether::StopMode::Drain, 20s)) return 3;
    tether::Future<int> empty;
    try {
      empty.wait();
      return 4;
    } catch (const tether::Error& e) {
      if (e.code() != TETHER_E_INVALID_HANDLE) return 5;
    }
  } catch (const tether::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 10;
  }
  std::printf("tether %s via find_package from C++20 (tether.hpp): ok\n", tether_version_string());
  return 0;
}
