// peers_caf.cpp: CAF 0.17 actors, asked from a caf::scoped_actor on the caller's thread:
//   CAF detached actor     spawn<caf::detached>: a thread of its own;
//   CAF event-based actor  spawn(): on the actor system's scheduler, given one thread
//                          (scheduler.max-threads = 1), as one tether executor has.
// A round trip is request(...).receive(...); a burst sends n messages and receives the n
// replies (the actor answers the sender); fire and forget sends an increment atom.
#include <vector>

#include "peer.h"

#ifdef COMPARE_HAVE_CAF
#include <caf/all.hpp>

#include <cstdlib>
#include <memory>

namespace compare {
namespace {

using increment_atom = caf::atom_constant<caf::atom("increment")>;
using read_atom = caf::atom_constant<caf::atom("read")>;

// Counter: the actor; its count is touched only by the actor's own handlers.
caf::behavior Counter() {
  auto count = std::make_shared<int64_t>(0);
  return {
      [](int64_t x) { return x + 1; },
      [count](increment_atom) { ++*count; },
      [count](read_atom) { return *count; },
  };
}

caf::actor_system_config& Config() {
  static caf::actor_system_config* cfg = [] {
    auto* c = new caf::actor_system_config;  // built once; CAF keeps pointers into it
    c->set("scheduler.max-threads", 1);
    return c;
  }();
  return *cfg;
}

template <bool Detached>
class Caf final : public Peer {
 public:
  Caf() : system_(Config()), self_(system_) {
    actor_ = Detached ? system_.spawn<caf::detached>(Counter) : system_.spawn(Counter);
  }
  ~Caf() override { self_->send_exit(actor_, caf::exit_reason::user_shutdown); }
  int64_t call(int64_t x) override {
    int64_t y = 0;
    self_->request(actor_, caf::infinite, x).receive([&](int64_t r) { y = r; }, [](caf::error&) { std::abort(); });
    return y;
  }
  void burst(int64_t* xs, int n) override {
    for (int i = 0; i < n; ++i) self_->send(actor_, xs[i]);
    for (int i = 0; i < n; ++i) self_->receive([&](int64_t r) { xs[i] = r; });  // one sender: in order
  }
  int64_t fire(int64_t n) override {
    for (int64_t i = 0; i < n; ++i) self_->send(actor_, increment_atom::value);
    int64_t y = 0;
    self_->request(actor_, caf::infinite, read_atom::value)
        .receive([&](int64_t r) { y = r; }, [](caf::error&) { std::abort(); });
    return y;
  }

 private:
  caf::actor_system system_;
  caf::scoped_actor self_;
  caf::actor actor_;
};

}  // namespace

void add_caf_peers(std::vector<PeerKind>& out) {
  const unsigned all = kRoundTrip | kAfterIdle | kBurst | kFire;
  out.push_back({"CAF 0.17 detached actor", all, [] { return std::unique_ptr<Peer>(new Caf<true>); }});
  out.push_back({"CAF 0.17 event-based actor", all, [] { return std::unique_ptr<Peer>(new Caf<false>); }});
}

}  // namespace compare
#else
void compare::add_caf_peers(std::vector<PeerKind>&) {}
#endif
