// actor_cache: the actors a thread called last, for the fire-and-forget fast path. It
// maps C handle ids to core actors without the handle table, so it lives in the C
// boundary; whether a call may take the fast path is the core's rule
// (Actor::fast_path_applies), and the fast post itself is the core's (Actor::post_fast).
//
// A hit takes no lock and touches no reference count: the entry holds the actor (a
// shared_ptr taken once, when the general path looked the handle up), so the actor
// outlives any call made through it even if another thread releases the handle
// meanwhile. A released handle is seen on the actor itself (Actor::handle_live). An entry
// also holds this thread's Sender for the actor (its tally, its leased ring). The most
// recent entry is mirrored in plain thread-local pointers read on every call.
//
// The price: an actor whose handle was released stays allocated (not running: its
// destructor has run) until each thread that called it drops its entry: by calling it
// again, by calling kEntries other actors, or by exiting. The releasing thread drops its
// own entry at once (forget).
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
// Hot: this thread's most recent entry, when it takes fast calls, as plain pointers.
struct Hot {
  uint64_t id;  // 0: none
  Actor* actor;
  Actor::Sender* sender;
};
extern TETHER_HOT_TLS constinit thread_local Hot t_hot;
}  // namespace detail

// try_post: tether_actor_call(id, NULL, m, arg, arg_drop, out = NULL) through what this
// thread has cached: true once queued. False when the general path must take the call
// (a miss, a released handle, a stop, ...); arg is untouched then. Inline: every
// fire-and-forget call starts here.
[[nodiscard]] inline bool try_post(uint64_t id, tether_method_fn m, void* arg, tether_drop_fn arg_drop) noexcept {
  const detail::Hot& h = detail::t_hot;
  if (h.id != id || id == 0 || m == nullptr) return false;
  return h.actor->post_fast(*h.sender, m, arg, arg_drop);  // checks the handle is live
}

// forget_released: the general path is about to look id up: if this thread's entry for
// it outlived its handle, it goes now.
void forget_released(uint64_t id) noexcept;

// post_after_lookup: the general path looked actor `id` up for a fire-and-forget call to
// its default thread: cache it for this thread and post through the fast path if it
// applies. False: the general path goes on (arg untouched).
[[nodiscard]] bool post_after_lookup(uint64_t id, const std::shared_ptr<Actor>& actor, tether_method_fn m,
                                     UserArg& arg) noexcept;

// forget: the calling thread's entry for id, if any, goes (its handle is being released).
void forget(uint64_t id) noexcept;

}  // namespace tether::capi::actor_cache
