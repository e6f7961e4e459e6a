// actor_cache: the actors a thread called last, for the fire-and-forget fast path and for
// calls with a future. It maps C handle ids to core actors without the handle table, so
// it lives in the C boundary. Which path a call takes is the core's choice (Actor::call,
// and Actor::post_now for a cached sender): the cache only supplies this thread's
// Sender, or the actor a call with a future goes to (future_target).
//
// A hit takes no lock and touches no reference count: the entry holds the actor (a
// shared_ptr taken once, when the general path looked the handle up), so the actor
// outlives any call made through it even if another thread releases the handle
// meanwhile. A released handle is seen on the actor itself (Actor::handle_live). An entry
// also holds this thread's Sender for the actor (its tally, its leased ring). The most
// recent entry is mirrored in plain thread-local pointers read on every call.
//
// The price: an actor whose handle was released stays allocated (not running: its
// destructor has run) until each thread that called it (fire and forget, or with a
// future) drops its entry: by calling it again, by calling kEntries other actors, or by
// exiting. The releasing thread drops its own entry at once (forget).
//
// Thread safety: thread-local; entries are only ever touched by their thread.
#pragma once

#include <cstdint>
#include <memory>

#include "core/actor.h"
#include "core/hot_tls.h"
#include "core/user_arg.h"
#include "tether/tether.h"

namespace tether::capi::actor_cache {

namespace detail {
// Hot: this thread's most recent entry, as plain pointers.
struct Hot {
  uint64_t id;  // 0: none
  Actor* actor;
  Actor::Sender* sender;  // null: the actor takes no fast calls from here
  // With a sender: its ring and the actor's default lane, so that a waited call can ask
  // for their lines at once, not after the sender's and the actor's (waited_target).
  CallRing* ring;
  PinnedLane* lane;
};
extern TETHER_HOT_TLS constinit thread_local Hot t_hot;
}  // namespace detail

// try_post: tether_actor_call(id, group, m, arg, arg_drop, out) through what this thread
// has cached (want_future: out is not NULL), as far as Actor::post_now goes: kPosted once
// queued; kRefused when the general path must take the call (a miss, not a fast call, a
// released handle, ...; arg untouched); else finish_post must, next. Inline: every call
// starts here.
[[nodiscard]] inline Actor::FastPost try_post(uint64_t id, const char* group, bool want_future, tether_method_fn m,
                                              void* arg, tether_drop_fn arg_drop) noexcept {
  const detail::Hot& h = detail::t_hot;
  // No test of id == 0: an empty entry (id 0) has no sender.
  if (h.id != id || m == nullptr || h.sender == nullptr) return Actor::FastPost::kRefused;
  return h.actor->post_now(*h.sender, group, want_future, m, arg, arg_drop);  // checks the handle is live
}

// finish_post: Actor::finish_post of what try_post left, right after it (this thread's
// most recent entry is the one it used): true once queued; false: the general path.
[[nodiscard]] inline bool finish_post(Actor::FastPost how, tether_method_fn m, void* arg,
                                      tether_drop_fn arg_drop) noexcept {
  const detail::Hot& h = detail::t_hot;
  return h.actor->finish_post(how, *h.sender, m, arg, arg_drop);
}

// waited_target: the actor, and this thread's sender for it, through which a call to id
// that its caller waits for may go (Actor::try_call_waited), when it is this thread's most
// recent entry and has a sender; the lines that call's push and wake-up touch are asked
// for on the way (PinnedLane::prefetch_for_push: after an idle spell each is a miss).
// False otherwise: the general path looks the handle up.
[[nodiscard]] inline bool waited_target(uint64_t id, Actor** actor, Actor::Sender** sender) noexcept {
  const detail::Hot& h = detail::t_hot;
  if (h.id != id || id == 0 || h.sender == nullptr) return false;
  *actor = h.actor;
  *sender = h.sender;
  h.lane->prefetch_for_push(*h.ring);
  return true;
}

// future_target: the actor a call with a future to id goes to, and this thread's sender
// for it in *sender (null: none), when it is this thread's most recent entry and its
// handle is live: no handle lookup, no reference counted (the entry holds the actor, and
// only this thread changes its entries). Null otherwise: the caller looks the handle up,
// then remembers it. A handle released right after the check is refused by the actor
// itself (SHUTDOWN), as after a lookup.
[[nodiscard]] inline Actor* future_target(uint64_t id, Actor::Sender** sender) noexcept {
  const detail::Hot& h = detail::t_hot;
  if (h.id != id || id == 0 || !h.actor->handle_live()) return nullptr;
  *sender = h.sender;
  return h.actor;
}

// remember: actor (which id named when looked up) becomes this thread's most recent
// entry, with a sender opened at need (its calls with a future then go through its ring:
// Actor::try_call_future), when this thread's previous lookup for a call with a future
// named it too (a thread calling one actor again and again). Else it only notes the id:
// a thread calling many actors in turn (100,000 actors, a call to each) would pay for an
// entry on every call (two reference counts, the shift of the entries and its
// thread-locals: ~230 of ~1,300 instructions a call; a sender, a ring's lease) and use
// none. Call it last: an entry it evicts is closed here, and closing may run code that
// calls in.
void remember(uint64_t id, const std::shared_ptr<Actor>& actor) noexcept;

// forget_released: the general path is about to look id up: if this thread's entry for
// it outlived its handle, it goes now.
void forget_released(uint64_t id) noexcept;

// ThisThread: the general path's SenderSource (Actor::call) for actor `id`, which it has
// looked up: asked for a sender, it caches the actor for this thread (a new entry, or its
// entry moved to the front) and opens its sender at need. An entry that makes room is
// closed only when this goes, after the call (closing may run user code that calls in).
class ThisThread final : public Actor::SenderSource {
 public:
  ThisThread(uint64_t id, const std::shared_ptr<Actor>& actor) noexcept : id_(id), actor_(actor) {}
  ~ThisThread();
  ThisThread(const ThisThread&) = delete;
  ThisThread& operator=(const ThisThread&) = delete;

  [[nodiscard]] Actor::Sender* sender_for(Actor& actor) noexcept override;

 private:
  const uint64_t id_;
  const std::shared_ptr<Actor>& actor_;
  std::shared_ptr<Actor> evicted_actor_;                 // the entry that made room, closed by ~ThisThread
  std::unique_ptr<Actor::Sender> evicted_sender_;
};

// Cached: the SenderSource of a call through this thread's most recent entry: the sender
// future_target gave (null: none), as it is.
class Cached final : public Actor::SenderSource {
 public:
  explicit Cached(Actor::Sender* sender) noexcept : sender_(sender) {}
  [[nodiscard]] Actor::Sender* sender_for(Actor&) noexcept override { return sender_; }

 private:
  Actor::Sender* const sender_;
};

// forget: the calling thread's entry for id, if any, goes (its handle is being released).
void forget(uint64_t id) noexcept;

}  // namespace tether::capi::actor_cache
