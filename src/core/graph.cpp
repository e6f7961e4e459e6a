#include "core/graph.h"

#include <algorithm>

#include "core/actor.h"
#include "core/lane.h"
#include "core/status_error.h"

namespace tether {
namespace {

std::string node_name(uint32_t n) { return "node " + std::to_string(n); }

[[noreturn]] void refuse(int32_t code, const std::string& message) { throw StatusError(code, message); }

}  // namespace

void Graph::require_editable_locked() const {
  if (frozen_ > 0) {
    refuse(TETHER_E_WRONG_STATE, "the graph is compiled: it cannot change until its compiled graph is released");
  }
}

uint32_t Graph::add_node(std::shared_ptr<Actor> actor, const char* group, tether_node_fn fn, UserArg arg) {
  // Built before the lock: the arg must be owned (and so dropped on every failure) at once.
  auto shared_arg = std::make_shared<UserArg>(std::move(arg));
  Lane& lane = actor->lane(group);  // NOT_FOUND for an unknown group
  std::lock_guard lock(mutex_);
  require_editable_locked();
  if (nodes_.size() >= UINT32_MAX - 1) refuse(TETHER_E_INVALID_ARGUMENT, "the graph has too many nodes");
  GraphNode node;
  node.actor = std::move(actor);
  node.lane = &lane;
  node.group = group != nullptr ? group : "";
  node.fn = fn;
  node.arg = std::move(shared_arg);
  nodes_.push_back(std::move(node));
  return static_cast<uint32_t>(nodes_.size() - 1);
}

void Graph::add_edge(uint32_t from, uint32_t to) {
  std::lock_guard lock(mutex_);
  require_editable_locked();
  const size_t count = nodes_.size();
  if (to >= count) {
    refuse(TETHER_E_INVALID_ARGUMENT, "edge to " + node_name(to) + ": the graph has " + std::to_string(count) + " nodes");
  }
  if (from != TETHER_GRAPH_INPUT && from >= count) {
    refuse(TETHER_E_INVALID_ARGUMENT,
           "edge from " + node_name(from) + ": the graph has " + std::to_string(count) + " nodes");
  }
  nodes_[to].inputs.push_back(from);
}

void Graph::set_outputs(const uint32_t* nodes, size_t n) {
  std::lock_guard lock(mutex_);
  require_editable_locked();
  std::vector<uint32_t> outputs(nodes, nodes + n);
  for (size_t i = 0; i < n; ++i) {
    if (outputs[i] >= nodes_.size()) {
      refuse(TETHER_E_INVALID_ARGUMENT, "output " + std::to_string(i) + " is " + node_name(outputs[i]) +
                                            ": the graph has " + std::to_string(nodes_.size()) + " nodes");
    }
    if (std::find(outputs.begin(), outputs.begin() + static_cast<ptrdiff_t>(i), outputs[i]) !=
        outputs.begin() + static_cast<ptrdiff_t>(i)) {
      refuse(TETHER_E_INVALID_ARGUMENT, node_name(outputs[i]) + " is an output twice");
    }
  }
  outputs_ = std::move(outputs);
}

void Graph::check_locked() const {
  const size_t count = nodes_.size();
  if (count == 0) refuse(TETHER_E_INVALID_ARGUMENT, "the graph has no nodes");
  if (outputs_.empty()) refuse(TETHER_E_INVALID_ARGUMENT, "the graph has no outputs: call tether_graph_set_outputs");
  // Kahn's algorithm from the input: a node is reached once all its inputs are. A node
  // left unreached either has no path from the input or sits on a cycle.
  std::vector<uint32_t> waiting(count, 0);
  std::vector<std::vector<uint32_t>> consumers(count);
  std::vector<uint32_t> ready;
  for (uint32_t n = 0; n < count; ++n) {
    for (uint32_t from : nodes_[n].inputs) {
      if (from == TETHER_GRAPH_INPUT) continue;
      ++waiting[n];
      consumers[from].push_back(n);
    }
    if (nodes_[n].inputs.empty()) {
      refuse(TETHER_E_INVALID_ARGUMENT, node_name(n) + " has no inputs: it is not reachable from the input");
    }
    if (waiting[n] == 0) ready.push_back(n);
  }
  std::vector<bool> reached(count, false);
  while (!ready.empty()) {
    const uint32_t n = ready.back();
    ready.pop_back();
    reached[n] = true;
    for (uint32_t c : consumers[n]) {
      if (--waiting[c] == 0) ready.push_back(c);
    }
  }
  // Unreached nodes fed (transitively) by a cycle are not on it; name one that is: follow
  // unreached inputs from an unreached node until a node repeats.
  for (uint32_t n = 0; n < count; ++n) {
    if (reached[n]) continue;
    std::vector<bool> seen(count, false);
    uint32_t at = n;
    while (!seen[at]) {
      seen[at] = true;
      for (uint32_t from : nodes_[at].inputs) {
        if (from != TETHER_GRAPH_INPUT && !reached[from]) {
          at = from;
          break;
        }
      }
    }
    refuse(TETHER_E_INVALID_ARGUMENT, "the graph has a cycle through " + node_name(at));
  }
  for (uint32_t n = 0; n < count; ++n) {
    const GraphNode& node = nodes_[n];
    if (node.lane->thread_count() > 1) {
      refuse(TETHER_E_INVALID_ARGUMENT, node_name(n) + " is on group '" + node.group + "' of " +
                                            std::to_string(node.lane->thread_count()) +
                                            " threads: a compiled graph's loop needs a group of one thread");
    }
    const int32_t state = node.actor->state(nullptr);
    if (state == TETHER_ACTOR_DEAD) {
      refuse(TETHER_E_ACTOR_DEAD, node_name(n) + ": actor '" + node.actor->name() + "' is dead: its constructor failed");
    }
    if (state == TETHER_ACTOR_STOPPED) {
      refuse(TETHER_E_SHUTDOWN, node_name(n) + ": actor '" + node.actor->name() + "' is stopping or stopped");
    }
  }
}

GraphPlan Graph::plan() {
  std::lock_guard lock(mutex_);
  try {
    check_locked();
  } catch (const StatusError& e) {
    last_error_ = error_or_out_of_memory(e.code(), e.what());
    throw;
  }
  GraphPlan plan;
  plan.nodes = nodes_;
  plan.outputs = outputs_;
  plan.consumers.resize(nodes_.size());
  plan.node_edges.assign(nodes_.size(), 0);
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    for (uint32_t from : nodes_[n].inputs) {
      if (from == TETHER_GRAPH_INPUT) continue;
      plan.consumers[from].push_back(n);
      ++plan.node_edges[n];
    }
  }
  return plan;
}

void Graph::freeze() noexcept {
  std::lock_guard lock(mutex_);
  ++frozen_;
  last_error_.reset();
}

void Graph::unfreeze() noexcept {
  std::lock_guard lock(mutex_);
  --frozen_;
}

void Graph::record_failure(ErrorPtr e) noexcept {
  std::lock_guard lock(mutex_);
  last_error_ = std::move(e);
}

ErrorPtr Graph::last_error() const {
  std::lock_guard lock(mutex_);
  return last_error_;
}

}  // namespace tether
