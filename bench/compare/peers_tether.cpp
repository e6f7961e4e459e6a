// peers_tether.cpp: tether's actor on a thread of its own (the default options), called
// through the C API as any user would. Two rows: "tether actor" makes a round trip with
// tether_actor_call_wait (the blocking call, no future handle), a burst with a future per
// call; "tether actor, call + future" makes the round trip with tether_actor_call +
// tether_future_wait + take + release, for reference (its ratio to the first is what
// the handle costs).
#include <tether/tether.h>

#include <vector>

#include "../check.h"
#include "peer.h"

namespace compare {
namespace {

using tether_bench::Check;

struct Counter {
  int64_t count = 0;  // the actor's thread's
};

tether_status MakeCounter(tether_task*, void*, void** state) {
  *state = new Counter;
  return TETHER_OK;
}
void DeleteCounter(void* state) { delete static_cast<Counter*>(state); }

tether_status AddOne(tether_task* t, void*, void* arg) {
  return tether_task_set_result(t, reinterpret_cast<void*>(reinterpret_cast<intptr_t>(arg) + 1), nullptr);
}
tether_status Increment(tether_task*, void* state, void*) {
  ++static_cast<Counter*>(state)->count;
  return TETHER_OK;
}
tether_status ReadCount(tether_task* t, void* state, void*) {
  return tether_task_set_result(t, reinterpret_cast<void*>(static_cast<intptr_t>(static_cast<Counter*>(state)->count)),
                                nullptr);
}

void* as_arg(int64_t x) { return reinterpret_cast<void*>(static_cast<intptr_t>(x)); }

class TetherActor final : public Peer {
 public:
  // blocking: call() is tether_actor_call_wait; else a call with a future.
  explicit TetherActor(bool blocking) : blocking_(blocking) {
    tether_actor_options o;
    tether_actor_options_init(&o);
    o.name = "compare-actor";
    Check(tether_actor_create(&o, MakeCounter, DeleteCounter, nullptr, nullptr, &actor_), TETHER_OK,
          "tether_actor_create");
  }
  ~TetherActor() override { Check(tether_actor_release(actor_), TETHER_OK, "tether_actor_release"); }
  TetherActor(const TetherActor&) = delete;
  TetherActor& operator=(const TetherActor&) = delete;

  int64_t call(int64_t x) override {
    if (!blocking_) return finish(start(AddOne, as_arg(x)));
    void* result = nullptr;
    Check(tether_actor_call_wait(actor_, nullptr, AddOne, as_arg(x), nullptr, -1, &result, nullptr), TETHER_OK,
          "tether_actor_call_wait");
    return static_cast<int64_t>(reinterpret_cast<intptr_t>(result));
  }
  void burst(int64_t* xs, int n) override {
    futures_.clear();
    for (int i = 0; i < n; ++i) futures_.push_back(start(AddOne, as_arg(xs[i])));
    for (int i = 0; i < n; ++i) xs[i] = finish(futures_[static_cast<size_t>(i)]);
  }
  int64_t fire(int64_t n) override {
    for (int64_t i = 0; i < n; ++i) {
      Check(tether_actor_call(actor_, nullptr, Increment, nullptr, nullptr, nullptr), TETHER_OK, "tether_actor_call");
    }
    return finish(start(ReadCount, nullptr));
  }

 private:
  tether_future start(tether_method_fn m, void* arg) {
    tether_future f;
    Check(tether_actor_call(actor_, nullptr, m, arg, nullptr, &f), TETHER_OK, "tether_actor_call");
    return f;
  }
  static int64_t finish(tether_future f) {
    Check(tether_future_wait(f, -1), TETHER_OK, "tether_future_wait");
    void* result = nullptr;
    Check(tether_future_take_result(f, &result), TETHER_OK, "tether_future_take_result");
    Check(tether_future_release(f), TETHER_OK, "tether_future_release");
    return static_cast<int64_t>(reinterpret_cast<intptr_t>(result));
  }
  const bool blocking_;
  tether_actor actor_{0};
  std::vector<tether_future> futures_;
};

}  // namespace

void add_tether_peers(std::vector<PeerKind>& out) {
  out.push_back({kTetherPeer, kRoundTrip | kAfterIdle | kBurst | kFire,
                 [] { return std::unique_ptr<Peer>(new TetherActor(/*blocking=*/true)); }});
  out.push_back({kTetherFuturePeer, kRoundTrip | kAfterIdle,
                 [] { return std::unique_ptr<Peer>(new TetherActor(/*blocking=*/false)); }});
}

}  // namespace compare
