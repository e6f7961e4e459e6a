#include "core/fork_guard.h"

#include "platform/platform.h"

#include "core/actor_slab.h"
#include "core/asymmetric_fence.h"
#include "core/call_pool.h"
#include "core/control_thread.h"
#include "core/future_graveyard.h"
#include "core/graph_hosts.h"
#include "core/handle_table.h"
#include "core/hot_path.h"
#include "core/ring_block_depot.h"
#include "core/call_future_pool.h"
#include "core/scope_pool.h"
#include "core/spin_policy.h"
#include "core/task.h"
#include "core/thread_group.h"

namespace tether {
namespace fork_detail {

TETHER_HOT_DATA std::atomic<uint32_t> g_epoch{0};

namespace {

// The global locks, in lock order: the control thread's (held while it starts a thread),
// the graph hosts', the handle table's, the call pool's depot and its slab, the actors'
// slab, the ring block depot, the call future pool's depot and its slab, the scope pool's
// depot and the lane presences' free list's (leaves: nothing is locked under them). Each
// object is never destroyed, so the handlers may run at any time.
void prepare() {
  ControlThread::instance().before_fork();
  GraphHosts::instance().before_fork();
  HandleTable::instance().before_fork();
  CallPool::before_fork();
  CallSlab::before_fork();
  ActorSlab::before_fork();
  RingBlockDepot::before_fork();
  CallFuturePool::before_fork();
  CallFutureSlab::before_fork();
  ScopePool::before_fork();
  LanePresence::before_fork();
}

void parent() {
  LanePresence::after_fork_in_parent();
  ScopePool::after_fork_in_parent();
  CallFutureSlab::after_fork_in_parent();
  CallFuturePool::after_fork_in_parent();
  RingBlockDepot::after_fork_in_parent();
  ActorSlab::after_fork_in_parent();
  CallSlab::after_fork_in_parent();
  CallPool::after_fork_in_parent();
  HandleTable::instance().after_fork_in_parent();
  GraphHosts::instance().after_fork_in_parent();
  ControlThread::instance().after_fork_in_parent();
}

void child() {
  g_epoch.store(g_epoch.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  // A callback that forked returns here first: its runner looks past the common case
  // (Task::unusual) and ends the child (end_forked_callback).
  if (Task* forking = Task::current()) forking->mark_forked();
  LanePresence::after_fork_in_child();
  FutureGraveyard::after_fork_in_child();  // before the pools: its entries are never dropped
  ScopePool::after_fork_in_child();
  CallFutureSlab::after_fork_in_child();
  CallFuturePool::after_fork_in_child();
  RingBlockDepot::after_fork_in_child();
  ActorSlab::after_fork_in_child();
  CallSlab::after_fork_in_child();
  CallPool::after_fork_in_child();
  HandleTable::instance().after_fork_in_child();
  GraphHosts::instance().after_fork_in_child();
  ControlThread::instance().after_fork_in_child();
  forget_parent_threads();
  fence_detail::after_fork_in_child();
}

// Registered when the library loads, so a fork before the first call is seen too.
[[maybe_unused]] const bool g_registered = [] { return platform::on_fork(&prepare, &parent, &child); }();

}  // namespace
}  // namespace fork_detail
}  // namespace tether
