// The actor's fire-and-forget fast path: a call made without a future, to the default
// thread, on an actor with an unbounded mailbox, by a thread holding a Sender. Beside the
// general path (Actor::call, a MethodCall in the lane's mailbox), not instead of it.
//
// What it saves per call: the producer writes its own tally and its own ring (no atomic
// read-modify-write, no shared cache line but the published count the consumer reads);
// the default thread runs the call from the ring entry and counts it in fields only it
// writes; the calls a ring holds next for this actor it runs back to back (a FastRun,
// inbox.h) with one Task, counting and settling those that succeed once, at the run's
// end. The lifetime and stop rules are the class comment's in actor.h.
#include "core/actor.h"
#include "core/actor_future_call.h"
#include "core/asymmetric_fence.h"
#include "core/call_outcome.h"
#include "core/hot_path.h"
#include "core/status_error.h"
#include "core/spin_policy.h"

#include <optional>

namespace tether {

bool Actor::answered(tether_drop_fn drop) noexcept {
  return WaitedCall::is_waited(drop) || FutureCall::in_ring(drop);
}

uintptr_t Actor::ring_flags(tether_drop_fn drop) noexcept {
  if (WaitedCall::is_waited(drop)) return RingEntry::kWaited;
  return FutureCall::in_ring(drop) ? RingEntry::kFuture : 0;
}

std::unique_ptr<Actor::Sender> Actor::open_sender() {
  // Not on a manual executor: its lane may close while nobody runs it (Lane::push).
  if (ledger_.capacity() != 0 || default_lane_->thread_count() != 1) return nullptr;
  // The Dekker pair with start_stop (actor.h): the stop fences for this sender's calls, or
  // this sees the stop.
  if (!fast_opened_.load(std::memory_order_seq_cst)) fast_opened_.store(true, std::memory_order_seq_cst);
  if (stopped(std::memory_order_seq_cst)) return nullptr;
  CallRing* ring = default_lane_->lease_ring();
  if (ring == nullptr) return nullptr;
  try {
    auto sender = std::make_unique<Sender>();
    sender->ring = ring;
    ledger_.add_tally(&sender->tally);
    return sender;
  } catch (...) {
    default_lane_->end_lease(*ring);
    throw;
  }
}

void Actor::close_sender(std::unique_ptr<Sender> sender) noexcept {
  ledger_.remove_tally(&sender->tally);  // what it admitted stays counted
  default_lane_->end_lease(*sender->ring);
}

TETHER_HOT_PATH
bool Actor::post_fast_rare(Sender& sender, tether_method_fn m, void* arg, tether_drop_fn arg_drop) noexcept {
  if (!sender.ring->try_reserve(2)) return false;  // before the call counts: nothing to undo
  sender.tally.add(1);  // accepted, before closed_ is read ...
  light_fence();        // ... for real: pairs with start_stop's heavy_fence
  if (closed_.load(std::memory_order_relaxed) != 0) [[unlikely]] {
    unaccept_fast(sender);
    return false;  // the general path explains: SHUTDOWN, INVALID_HANDLE or ACTOR_DEAD
  }
  const uintptr_t flags = ring_flags(arg_drop);  // as post_now's caller gave
  default_lane_->push_fast(*sender.ring, FastCall{m, arg, arg_drop}, *this, flags);
  return true;
}

TETHER_HOT_PATH
bool Actor::finish_post(FastPost how, Sender& sender, tether_method_fn m, void* arg, tether_drop_fn arg_drop) noexcept {
  switch (how) {
    case FastPost::kPosted:
      return true;
    case FastPost::kPostedToParked:
      default_lane_->wake_after_push_fast(WaitedCall::is_waited(arg_drop));
      return true;
    case FastPost::kRare:
      return post_fast_rare(sender, m, arg, arg_drop);
    case FastPost::kClosed:
      unaccept_fast(sender);
      return false;  // the general path explains: SHUTDOWN, INVALID_HANDLE or ACTOR_DEAD
    case FastPost::kRefused:
      break;
  }
  return false;
}

void Actor::unaccept_fast(Sender& sender) noexcept {
  sender.tally.add(-1);  // it never counted
  finish_if_idle();
}

TETHER_HOT_PATH void Actor::run_fast(Lane& lane, const FastCall& first, FastRun& more) noexcept {
  if (light_fence_kind() == LightFence::kCompilerOnly) [[likely]] {
    run_fast_light(lane, first, more);
  } else {
    run_fast_full(lane, first, more);
  }
}

template <LightFence kFence>
[[gnu::always_inline]] inline void Actor::run_fast_as(Lane& lane, const FastCall& first, FastRun& more) noexcept {
  // life_ cannot change during a run: only the constructor call changes it, and it runs
  // on this thread.
  if (life_.load(std::memory_order_acquire) != Life::Alive || cancelling()) [[unlikely]] {
    run_fast_not_alive(first, more);
    return;
  }
  // A run's calls that succeed are counted and settled once, at its end (a store per
  // count and one fence for the run, not for each call). Each call still leaves the queue
  // before it runs: a running call is not queued (stats).
  // The calls share one Task, made current once, while they leave it as they found it
  // (no failure recorded, no nested thread): a new one only after a call that did not.
  // It is current only while a method runs, as for any callback: not while an arg is
  // dropped or a call finished.
  // An answered call (a waited call, waited_call.h, or one with a future,
  // actor_future_call.h) runs with a task of its own (its result has a slot). A run is
  // all answered calls or none (FastRun takes the entries whose word3 is the first's,
  // RingEntry::kWaited included), so an answered call behind others starts a run of its
  // own, after what ran before it was counted and settled: its caller, once it sees the
  // end, sees them in the stats.
  // A stop CANCEL during the run: the calls not started yet never start (actor.h).
  FastCall call = first;
  if (answered(call.drop)) {
    do {
      ledger_.fast_left();
      if (FutureCall::in_ring(call.drop)) {
        (void)take_woke_here();  // only the run's last call's wake-up counts (PinnedLane::serve)
        FutureCall::of_entry(call.arg).run_from_ring(lane);
      } else {
        run_waited(lane, call.method, call.arg);
      }
      if (!more.next_as<kFence>(call)) return;
    } while (!cancelling());
    run_fast_not_alive(call, more);
    return;
  }
  uint64_t succeeded = 0;
  const bool may_end_thread = take_thread_may_end();  // once for the run's calls
  std::optional<Task> task;
  std::optional<CurrentTask> current;
  auto start_task = [&] {
    task.emplace(nullptr, lane.name(), /*is_target=*/true, &origin_);
    current.emplace(*task);
  };
  start_task();
  ErrorPtr err;
  do {
    if (cancelling()) [[unlikely]] {
      current.reset();
      ledger_.fast_succeeded(succeeded);
      settle_fast(succeeded);
      run_fast_not_alive(call, more);
      return;
    }
    ledger_.fast_left();
    const bool ok = run_current_task_allowing(
        *task, may_end_thread, [&](tether_task* t) { return call.method(t, state_ptr_, call.arg); }, err);
    if (call.drop != nullptr) {
      current.reset();
      call.drop(call.arg);
      if (task->from_parent_process()) [[unlikely]] end_forked_callback();  // the drop forked: no task to mark
      current.emplace(*task);
    }
    if (!ok || (task->unusual() && task->lazy_scope())) [[unlikely]] {
      current.reset();
      finish_fast(*task, std::move(err));
      err = nullptr;
      start_task();
      continue;
    }
    ++succeeded;
  } while (more.next_as<kFence>(call));
  current.reset();
  ledger_.fast_succeeded(succeeded);
  settle_fast(succeeded);
}

TETHER_HOT_PATH void Actor::run_fast_light(Lane& lane, const FastCall& first, FastRun& more) noexcept {
  run_fast_as<LightFence::kCompilerOnly>(lane, first, more);
}

void Actor::run_fast_full(Lane& lane, const FastCall& first, FastRun& more) noexcept {
  run_fast_as<LightFence::kFull>(lane, first, more);
}

void Actor::run_fast_not_alive(FastCall first, FastRun& more) noexcept {
  FastCall call = first;
  do {
    ledger_.fast_left();
    if (FutureCall::in_ring(call.drop)) {
      FutureCall::of_entry(call.arg).end_unrun_from_ring();  // settled there
      continue;
    }
    if (WaitedCall::is_waited(call.drop)) {
      auto& waited = *static_cast<WaitedCall*>(call.arg);
      end_waited_unrun(waited, life_.load(std::memory_order_acquire) == Life::Dead ? dead_error_or_null() : nullptr);
    } else if (life_.load(std::memory_order_acquire) == Life::Dead) {
      fail_dead_fast(call);
    } else {  // a stop CANCEL cancelled the constructor, or came before this call started
      if (call.drop != nullptr) call.drop(call.arg);
      ledger_.cancelled();
    }
    settle_fast();
  } while (more.next(call));
}

void Actor::finish_fast(Task& task, ErrorPtr err) noexcept {
  if (task.lazy_scope()) {  // nested threads run on: the call settles when they are done
    settle_after_nested(task, std::move(err), ledger_, shared_from_this());
    settle_when_done(task.lazy_scope().get());
    return;
  }
  ledger_.fire_and_forget_failed(std::move(err));
  settle_fast();
}

void Actor::fail_dead_fast(const FastCall& call) noexcept {
  // Queued before the constructor failed: never runs, and the failure is counted and
  // kept like any other.
  ErrorPtr dead = dead_error_or_null();
  if (call.drop != nullptr) call.drop(call.arg);
  if (dead) {
    ledger_.fire_and_forget_failed(std::move(dead));
  } else {
    ledger_.failed();
  }
}

void Actor::cancel_fast(const FastCall& call) noexcept {
  if (FutureCall::in_ring(call.drop)) {
    FutureCall::of_entry(call.arg).cancel_from_ring();  // counted and settled there, in the shared counters
    return;
  }
  ledger_.leave();
  if (WaitedCall::is_waited(call.drop)) {
    end_waited_unrun(*static_cast<WaitedCall*>(call.arg), nullptr);
  } else {
    ledger_.cancelled();
    if (call.drop != nullptr) call.drop(call.arg);
  }
  settle();  // a canceller's thread: the shared counter
}

TETHER_HOT_PATH void Actor::settle_fast(uint64_t n) noexcept {
  fast_settled().store(fast_settled().load(std::memory_order_relaxed) + n, std::memory_order_release);
  light_fence();  // the count before the stop is read: pairs with start_stop's heavy_fence
  if (stopped(std::memory_order_relaxed)) finish_if_idle();
}

}  // namespace tether
