// RingBlockDepot: the ring blocks (CallRing::Block, 16 KiB) no ring holds, kept for the
// next ring that grows, process-wide. A ring keeps up to 16 free blocks of its own; a
// burst that outruns its consumer grows it further (a burst of 65,536 fire-and-forget
// calls to an actor whose thread shares the caller's CPU fills 129 blocks before the
// consumer runs), and each block beyond the ring's 16 went back to the heap, so the next
// burst, on that ring or a new actor's, faulted its pages in again (~450 page faults per
// such burst). Here up to kMaxBlocks (4 MiB) wait for reuse; more go back to the heap.
// Measured (bench/compare, fire and forget on one CPU, 2026-12-04): 17-19 -> 16 ns a call.
//
// Thread safety: take and give from any thread, under the depot's mutex (once per 511
// calls at most). Blocks here are owned by the depot; a block taken is its ring's.
#pragma once

#include <cstddef>

#include "core/call_ring.h"

namespace tether {

class RingBlockDepot {
 public:
  static constexpr size_t kMaxBlocks = 256;

  // take: a kept block, or null when none is kept.
  [[nodiscard]] static CallRing::Block* take() noexcept;
  // give: keeps b (true), or false when kMaxBlocks are kept (b stays the caller's).
  [[nodiscard]] static bool give(CallRing::Block* b) noexcept;

  // The fork handlers (fork_guard.cpp): the depot's lock.
  static void before_fork();
  static void after_fork_in_parent() noexcept;
  static void after_fork_in_child() noexcept;

  // For tests: blocks kept now.
  [[nodiscard]] static size_t blocks_kept() noexcept;
};

}  // namespace tether
