// actor_cache: the actors a thread called last, for the fire-and-forget fast path.
//
// A hit takes no lock and touches no reference count: the entry holds the actor (a
// shared_ptr taken once, at the miss, through the handle table), so the actor outlives
// any call made through it even if another thread releases the handle meanwhile. A
// released handle is seen on the actor itself (Actor::handle_live) and its entry dropped.
// An entry also holds this thread's Sender for the actor (its tally, its leased ring).
//
// The price: an actor whose handle was released stays allocated (not running: its
// destructor has run) until each thread that called it drops its entry: by calling it
// again, by calling kEntries other actors, or by exiting. The releasing thread drops its
// own entry at once (forget).
//
// Thread safety: thread-local; entries are only ever touched by their thread.
#pragma once

#include <cstdint>

#include "core/user_arg.h"
#include "tether/tether.h"

namespace tether::actor_cache {

// post: tether_actor_call(id, NULL, m, arg, out = NULL) through the fast path. False when
// the general path must take the call (arg untouched then). Throws StatusError
// (TETHER_E_INVALID_HANDLE, TETHER_E_SHUTDOWN) or std::bad_alloc; arg is its owner's to
// drop then.
[[nodiscard]] bool post(uint64_t id, tether_method_fn m, UserArg& arg);

// forget: the calling thread's entry for id, if any, goes (its handle is being released).
void forget(uint64_t id) noexcept;

}  // namespace tether::actor_cache
