// FutureGraveyard: a thread's references to settled futures whose drop it puts off until
// it next waits, so that letting go of a future (the end of a wait, a handle's release)
// costs the caller nothing on its way to its next call.
//
// Why: dropping the last reference to a call's future destroys it and gives its block back
// to the pool, and any drop writes the block's count, on the line the call's lane wrote
// last (it unlinked the call and let go of its own reference): ~150 instructions and a
// cache line fetched from the lane's CPU, between the answer and the caller's next call.
// A caller that waits for its next answer has that time to spare: wait_done drains the
// graveyard before it spins or parks (call_future.cpp). Measured in bench/README.md.
//
// Only a future whose destruction runs no user code is put off (Future::quiet_to_drop: a
// settled call with no result left to drop and no notice or nested scope): everything
// else is dropped at once, as before. And only by a thread whose latest wait found its
// future still pending (waited): a thread that finds its answers ready (1,024 calls in
// flight, then their answers) has no wait to hide the drops in, and putting them off
// only batched them: measured 2026-12-05, such a burst 178-183 -> 189-191 ns a call
// across CPUs and 173-177 -> 186-190 on one CPU when every release put its drop off.
// What is put off is bounded (kEntries a thread): defer() drains a full graveyard first.
// A thread's graveyard is drained when it ends (Cleanup::FutureGraveyard, before the
// pools the blocks go back to). In a forked child, the forking thread's entries are the
// parent's: kept for good, reachable and never dropped (fork_guard.h).
//
// Thread safety: thread-local; only the owning thread touches its entries. A future put
// off keeps its block allocated (never running) until the drain; nothing else waits on it.
#pragma once

#include <memory>

namespace tether {

class Future;

class FutureGraveyard {
 public:
  static constexpr size_t kEntries = 8;

  // defer: takes future (any reference to it, possibly the last) and drops it now, or, if
  // quiet_to_drop, at this thread's next drain. Never throws, never allocates.
  static void defer(std::shared_ptr<Future>&& future) noexcept;
  // waited: this thread's wait found its future pending (it is about to spin or park:
  // drains the graveyard first) or settled.
  static void waited(bool pending) noexcept;
  // drain: drops what this thread put off.
  static void drain() noexcept;
  // after_fork_in_child: the forking thread's entries are the parent's: abandoned.
  static void after_fork_in_child() noexcept;
};

}  // namespace tether
