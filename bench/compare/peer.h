// peer.h: what every contender of bench/compare does — the same work, its own way.
//
// The work is an actor's: one thread (or the peer's scheduler) owns a counter, and a
// caller asks it for x -> x + 1 (a round trip), for many of those at once (a burst, each
// with its own answer in flight), or sends it increments without waiting (fire and
// forget), then asks for the count. Each peer says which of the workloads it has.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace compare {

enum Workload : unsigned {
  kRoundTrip = 1,  // call() back to back
  kAfterIdle = 2,  // call() after 1 ms of nothing: the other side has parked
  kBurst = 4,      // burst(): kBurstSize calls in flight, then every answer
  kFire = 8,       // fire(): increments without an answer, then the count
};
inline constexpr int kBurstSize = 1024;

// tether's rows: the one every ratio is taken against (round trips through the blocking
// call), and its round trip through a future handle, shown for reference.
inline constexpr const char* kTetherPeer = "tether actor";
inline constexpr const char* kTetherFuturePeer = "tether actor, call + future";

class Peer {
 public:
  virtual ~Peer() = default;
  // call: x + 1, computed on the other side.
  virtual int64_t call(int64_t x) = 0;
  // burst: xs[i] becomes xs[i] + 1 for each i, all n calls queued before the first answer
  // is waited for.
  virtual void burst(int64_t* xs, int n);
  // fire: n increments of the counter, none answered; then the counter (the caller
  // checks it: every increment ran).
  virtual int64_t fire(int64_t n);
};

struct PeerKind {
  std::string name;
  unsigned workloads;
  std::unique_ptr<Peer> (*make)();
  bool same_cpu = true;  // false: the peer cannot work when both sides share a CPU
  // false: a burst's answers come back in order through one queue of numbers, with no
  // future (nor any per-call state) a caller could wait on, cancel or drop one by one.
  // Shown beside the others, but not "the best peer" of the targets on calls with a
  // future each.
  bool future_per_call = true;
};

// Each family of peers adds its kinds; a library's family adds none when the library was
// not found at build time (COMPARE_HAVE_<LIBRARY>, set by bench/CMakeLists.txt).
void add_floor_peers(std::vector<PeerKind>& out);  // spin, futex, Vyukov MPSC
void add_std_peers(std::vector<PeerKind>& out);    // hand-written executor, std::async
void add_tether_peers(std::vector<PeerKind>& out);
void add_asio_peers(std::vector<PeerKind>& out);
void add_caf_peers(std::vector<PeerKind>& out);
void add_moodycamel_peers(std::vector<PeerKind>& out);
void add_tbb_peers(std::vector<PeerKind>& out);

}  // namespace compare
