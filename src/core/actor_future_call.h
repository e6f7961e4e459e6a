// Actor::FutureCall: one call of a method with a future: the call and its future in one
// block (call_future.h), counted by the actor's ledger as the future ends.
//
// It reaches the default thread one of two ways, and is counted the way it came:
//   the general path   queued in the lane's mailbox (Actor::call_general): accepted and
//                      admitted in the shared counters; run() or cancel() leaves and
//                      settles there too.
//   the caller's ring  (actor_ring_future.cpp) an entry of the caller's Sender ring,
//                      carrying this call (its arg) with ring_marker as its drop: accepted
//                      in the sender's tally, as a fire-and-forget fast call is; the
//                      default thread leaves, counts a success and settles it in the
//                      fields only it writes (run_from_ring, end_unrun_from_ring), a
//                      canceller that claimed its entry in the shared ones
//                      (cancel_from_ring). No atomic read-modify-write of the actor's, and
//                      none of the mailbox's: 9 a call fewer than the general path.
// Either way the lane holds a reference (queued_) until its last touch (release_queued).
#pragma once

#include "core/actor.h"
#include "core/call_future.h"
#include "core/call_future_pool.h"

namespace tether {

class Actor::FutureCall final : public CallFuture {
 public:
  FutureCall(Actor& actor, Lane& lane, tether_method_fn m, UserArg arg) noexcept
      : CallFuture(&actor, &actor.ledger_, &actor.cancel_, lane, m, std::move(arg)) {
    static_assert(sizeof(FutureCall) + 16 <= CallFuturePool::kSlotSize, "a call and its count fit a pool block");
  }

  // The mailbox's (the general path).
  void run(Lane& lane) noexcept override {
    Actor& a = actor();
    a.ledger_.leave();
    if (runs(a)) {
      run_method(a, lane, /*from_ring=*/false);
      return;
    }
    a.settle();
  }
  void cancel() noexcept override {
    Actor& a = actor();
    a.ledger_.leave();
    cancel_queued();
    a.settle();
  }

  // ---- through the caller's ring (actor_ring_future.cpp) ----
  // ring_marker: the drop of a ring entry that carries a FutureCall as its arg (in_ring).
  // Never called.
  static void ring_marker(void* call) noexcept;
  [[nodiscard]] static bool in_ring(tether_drop_fn drop) noexcept { return drop == &ring_marker; }
  [[nodiscard]] static FutureCall& of_entry(void* arg) noexcept { return *static_cast<FutureCall*>(arg); }
  // The default thread, its entry stepped past (and counted out of the queue: fast_left).
  void run_from_ring(Lane& lane) noexcept {
    Actor& a = actor();
    if (runs(a)) {
      run_method(a, lane, /*from_ring=*/true);
    } else {
      a.settle_fast();
    }
    release_queued();  // the last touch
  }
  // end_unrun_from_ring: the default thread, before or without a state, or after a stop
  // CANCEL: the call never runs (run_fast_not_alive).
  void end_unrun_from_ring() noexcept {
    Actor& a = actor();
    end_unrun(a);
    a.settle_fast();
    release_queued();
  }
  // cancel_from_ring: a canceller claimed the entry (or its lane ended): never runs.
  void cancel_from_ring() noexcept {
    cancel();
    release_queued();
  }
  // undo_post: the ring refused the call (the actor is closing): it was never queued,
  // and its arg is still the caller's.
  void undo_post() noexcept { release_queued(); }

 private:
  // actor: the owner (alive: an unsettled call keeps the destructor, and the end, away).
  [[nodiscard]] Actor& actor() const noexcept { return *static_cast<Actor*>(const_cast<void*>(owner())); }

  // runs: the method may run now; else the call ended unrun (FAILED or CANCELLED).
  bool runs(Actor& a) noexcept {
    if (a.life_.load(std::memory_order_acquire) == Life::Alive && !a.cancelling()) [[likely]] return true;
    end_unrun(a);
    return false;
  }
  void end_unrun(Actor& a) noexcept {
    if (a.life_.load(std::memory_order_acquire) == Life::Dead) {
      // Queued before the constructor failed: never runs. Failed, or cancelled when there
      // was no memory for the error.
      if (ErrorPtr dead = a.dead_error_or_null()) fail_pending(std::move(dead));
    }
    cancel_queued();  // a stop CANCEL (of the constructor, or of this call); a no-op once failed
  }

  // run_method: from_ring: the default thread settles it, and counts a success, in its
  // own fields.
  void run_method(Actor& a, Lane& lane, bool from_ring) noexcept {
    UserArg arg;
    if (!start(arg)) {  // cancelled while queued (counted then): never had a thread
      if (from_ring) {
        a.settle_fast();
      } else {
        a.settle();
      }
      return;
    }
    ErrorPtr err;
    std::shared_ptr<Scope> nested;
    {
      Task task(*this, lane.name(), &a.origin());
      const tether_method_fn m = method();
      err = run_task(task, [&](tether_task* t) { return m(t, a.state_ptr_, arg.get()); });
      nested = task.lazy_scope();
    }
    arg.reset();
    if (!finish(std::move(err), nested.get(), from_ring)) {
      a.settle_when_done(nested.get());  // nested threads still run
    } else if (from_ring) {
      a.settle_fast();  // quiet already (the usual case): no notice to make
    } else {
      a.settle();
    }
  }

  [[nodiscard]] std::shared_ptr<void> keep_owner() const override { return actor().shared_from_this(); }
};

}  // namespace tether
