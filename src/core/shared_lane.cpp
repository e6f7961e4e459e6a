#include "core/shared_lane.h"

#include <utility>

#include "core/asymmetric_fence.h"
#include "core/chaos.h"
#include "core/cpu_relax.h"
#include "core/deadline.h"

namespace tether {

SharedLane::SharedLane(Options options) : Lane(std::move(options), /*one_consumer=*/false) {}

void SharedLane::serve() noexcept {
  Work w;
  while (next(w)) execute(w);
}

void SharedLane::wake_parked() noexcept {
  // P4 (see the state table in shared_lane.h): every push may need a thread of its own.
  chaos_point();
  { std::lock_guard lock(mutex_); }  // a consumer is in cv_.wait, or has yet to lock
  cv_.notify_one();
}

bool SharedLane::next(Work& w) {
  // C1..C8 follow the state table in shared_lane.h.
  SpinWait link;  // kRetry: a producer between its exchange and its link
  for (;;) {
    if (const Take t = take(w); t != Take::kNothing) {
      if (t == Take::kRetry) {
        wait_for_link(link, /*producer_here=*/false);  // no presence here: SpinWait yields after its pauses
        continue;
      }
      return t == Take::kWork;
    }
    const auto spin_until = Deadline::saturating_after(Deadline::now(), options_.idle_spin_ns);
    SpinWait spin;  // C1
    SpinEnd end(spin_until);
    while (!work_ready() && !closed_relaxed() && !end.passed()) spin.once();
    if (work_ready() || closed_.load(std::memory_order_acquire)) continue;
    sleepers_.fetch_add(1, std::memory_order_seq_cst);  // C2
    chaos_point();
    fence_detail::full_fence();  // C3. mfence: TSan does not model std fences (asymmetric_fence.cpp)
    chaos_point();
    {
      std::unique_lock lock(mutex_);  // C4
      chaos_point();
      if (!work_ready() && !closed_.load(std::memory_order_acquire)) cv_.wait(lock);  // C5, C7
    }
    sleepers_.fetch_sub(1, std::memory_order_relaxed);  // C8
  }
}

}  // namespace tether
