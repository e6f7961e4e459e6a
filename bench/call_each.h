// call_each.h: many actors called once each, a window of calls in flight: what
// bench/compare's scale rows and tether_bench_actor's ManyActorsTwoExecutors both time.
#pragma once

#include <tether/tether.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "check.h"

namespace tether_bench {

// NoState: an actor constructor whose state is null.
inline tether_status NoState(tether_task*, void*, void** state_out) {
  *state_out = nullptr;
  return TETHER_OK;
}

// MakeActor: an actor of null state on executor `on` (the null handle: a thread of its own),
// named `name` (null: the library's default name).
inline tether_actor MakeActor(tether_executor on, const char* name = nullptr) {
  tether_actor_options o;
  tether_actor_options_init(&o);
  o.executor = on;
  if (name != nullptr) o.name = name;
  tether_actor a;
  Check(tether_actor_create(&o, NoState, nullptr, nullptr, nullptr, &a), TETHER_OK, "tether_actor_create");
  return a;
}

// AddOne: a method whose result is its arg + 1.
inline tether_status AddOne(tether_task* t, void*, void* arg) {
  return tether_task_set_result(t, reinterpret_cast<void*>(reinterpret_cast<intptr_t>(arg) + 1), nullptr);
}

// CallEach: one call of AddOne with a future to every actor, at most `window` in flight:
// the oldest is waited for (and its answer checked) before a call beyond the window.
inline void CallEach(const std::vector<tether_actor>& actors, size_t window = SIZE_MAX) {
  std::vector<tether_future> fs(actors.size());
  auto answer = [&](size_t i) {
    Check(tether_future_wait(fs[i], -1), TETHER_OK, "tether_future_wait");
    void* r = nullptr;
    Check(tether_future_take_result(fs[i], &r), TETHER_OK, "tether_future_take_result");
    if (reinterpret_cast<intptr_t>(r) != static_cast<intptr_t>(i) + 1) std::abort();
    Check(tether_future_release(fs[i]), TETHER_OK, "tether_future_release");
  };
  size_t answered = 0;
  for (size_t i = 0; i < actors.size(); ++i) {
    if (i - answered == window) answer(answered++);
    Check(tether_actor_call(actors[i], nullptr, AddOne, reinterpret_cast<void*>(static_cast<intptr_t>(i)), nullptr,
                            &fs[i]),
          TETHER_OK, "tether_actor_call");
  }
  while (answered < fs.size()) answer(answered++);
}

}  // namespace tether_bench
