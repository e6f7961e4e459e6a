// Calls with a future through the caller's ring (actor_future_call.h): a thread that holds
// a Sender for the actor (the C boundary's cache opens one for a thread that calls the
// actor again and again) queues its call with a future as a fast call whose arg is the
// FutureCall and whose drop is FutureCall::ring_marker, marked RingEntry::kFuture: fenced
// as a waited call (its caller will likely wait: pinned_lane.h, fences_fully), woken as a
// fire-and-forget one (its caller may stream more calls first: wake_preemption.h). The
// default thread runs it in a run of answered calls (run_fast),
// ends it unrun (run_fast_not_alive), or a canceller that claimed it cancels it
// (cancel_fast): each exactly once, the ring's claim choosing between the last two.
//
// Why: a call with a future through the mailbox cost 23 atomic read-modify-writes, ~5 ns
// each on the AMD EPYC VM of 2026-12-07 (bench/README.md); through the ring, 14.
#include "core/actor.h"
#include "core/actor_future_call.h"
#include "core/call_future_pool.h"
#include "core/pool_allocator.h"

#include <new>

namespace tether {

void Actor::FutureCall::ring_marker(void*) noexcept {}

std::shared_ptr<Future> Actor::try_call_future(Sender& sender, tether_method_fn m, UserArg& arg) noexcept {
  void* const raw_arg = arg.get();
  const tether_drop_fn raw_drop = arg.drop_fn();
  std::shared_ptr<CallFuture> call;
  try {
    // As the base from the start, as call_general's (start_queued binds to it).
    call = std::allocate_shared<FutureCall>(PoolAllocator<FutureCall, CallFuturePool>(), *this, *default_lane_, m,
                                            std::move(arg));  // bad_alloc before the call is made: arg untouched
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  CallFuture::start_queued(call);
  auto& made = static_cast<FutureCall&>(*call);
  if (!post_fast(sender, m, &made, &FutureCall::ring_marker, RingEntry::kFuture)) {
    made.undo_post();
    arg = UserArg(raw_arg, raw_drop);  // the call never took it (its destructor drops no arg)
    return nullptr;
  }
  return call;
}

}  // namespace tether
