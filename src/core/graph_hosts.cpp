#include "core/graph_hosts.h"

#include <string>

#include "core/lane.h"
#include "core/immortal.h"
#include "core/status_error.h"
#include "tether/tether.h"

namespace tether {

GraphHosts& GraphHosts::instance() {
  return immortal<GraphHosts>();  // never destroyed: used until exit
}

void GraphHosts::install(const std::vector<Lane*>& lanes, uint64_t graph) {
  std::lock_guard lock(mutex_);
  for (const Lane* lane : lanes) {
    auto it = hosts_.find(lane->id());
    if (it != hosts_.end() && it->second != graph) {
      throw StatusError(TETHER_E_THREAD_BUSY, "thread '" + lane->name() +
                                                  "' already hosts another compiled graph's loop; release that "
                                                  "compiled graph first");
    }
  }
  size_t marked = 0;
  try {
    for (; marked < lanes.size(); ++marked) hosts_.emplace(lanes[marked]->id(), graph);
  } catch (...) {  // out of memory: unmark what was marked, so nothing is half installed
    for (size_t i = 0; i < marked; ++i) hosts_.erase(lanes[i]->id());
    throw;
  }
}

void GraphHosts::uninstall(const Lane& lane, uint64_t graph) noexcept {
  std::lock_guard lock(mutex_);
  auto it = hosts_.find(lane.id());
  if (it != hosts_.end() && it->second == graph) hosts_.erase(it);
}

}  // namespace tether
