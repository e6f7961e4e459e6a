// GraphHosts: which OS thread hosts which compiled graph's loop. "Busy" is per thread —
// per lane of one thread — and a thread hosts at most one compiled graph.
//
// Thread safety: every member may be called from any thread; mutex_ guards hosts_. Lanes
// are keyed by id (never reused), so an entry can never name a later lane.
#pragma once

#include "core/immortal.h"

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/fork_guard.h"

namespace tether {

class Lane;

class GraphHosts {
 public:
  static GraphHosts& instance();

  // install: marks every lane as hosting graph — all of them or, when one already hosts
  // another graph, none: throws StatusError(TETHER_E_THREAD_BUSY) naming that thread.
  void install(const std::vector<Lane*>& lanes, uint64_t graph);
  // uninstall: lane is free for another graph (no effect unless it hosts graph).
  void uninstall(const Lane& lane, uint64_t graph) noexcept;

  // The fork handlers (fork_guard.cpp).
  void before_fork() { mutex_.before_fork(); }
  void after_fork_in_parent() noexcept { mutex_.after_fork_in_parent(); }
  void after_fork_in_child() noexcept { mutex_.after_fork_in_child(); }

 private:
  template <class T>
  friend T& immortal() noexcept;
  GraphHosts() = default;
  ForkSafeMutex mutex_;
  std::unordered_map<uint64_t, uint64_t> hosts_;  // guarded by mutex_: lane id -> graph
};

}  // namespace tether
