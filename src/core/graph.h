// Graph: the description of a compiled graph — nodes (an actor, an optional group, a node
// function and its arg), edges from the input or from another node, and the outputs.
// Compiling reads a checked snapshot of it (GraphPlan) and leaves it as it was, so a graph
// may be compiled again; while a compiled graph made from it lives, edits are refused.
//
// Thread safety: every public member may be called from any thread; mutex_ guards all
// state. A node's arg is shared (NodeArg) by the graph and every plan made from it, and is
// dropped when the last of them lets go — never under mutex_.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/user_arg.h"
#include "tether/tether.h"

namespace tether {

class Actor;
class Lane;

struct GraphNode {
  std::shared_ptr<Actor> actor;
  Lane* lane = nullptr;   // the actor's lane for group (the actor keeps it alive)
  std::string group;      // "" : the actor's default thread
  tether_node_fn fn = nullptr;
  std::shared_ptr<UserArg> arg;
  std::vector<uint32_t> inputs;  // in the order the edges were added; TETHER_GRAPH_INPUT: the input
};

// GraphPlan: what a compiled graph is built from: a checked, immutable snapshot.
struct GraphPlan {
  std::vector<GraphNode> nodes;
  std::vector<uint32_t> outputs;
  // consumers[n]: the node at the end of each edge out of n (a node fed twice by n twice).
  std::vector<std::vector<uint32_t>> consumers;
  // node_edges[n]: edges into n from other nodes (its inputs minus the input's edges).
  std::vector<uint32_t> node_edges;
};

class Graph {
 public:
  // add_node: a new node on actor (group: "" for the default thread). Throws StatusError:
  // WRONG_STATE while frozen, NOT_FOUND for an unknown group. Returns its index.
  uint32_t add_node(std::shared_ptr<Actor> actor, const char* group, tether_node_fn fn, UserArg arg);
  // add_edge: from (a node, or TETHER_GRAPH_INPUT) feeds to. Throws StatusError.
  void add_edge(uint32_t from, uint32_t to);
  // set_outputs: the nodes whose values an execution returns, in this order.
  void set_outputs(const uint32_t* nodes, size_t n);

  // plan: checks the graph (outputs set, a DAG, every node reachable from the input, groups
  // of one thread, actors not dead or stopped) and snapshots it. Throws StatusError, after
  // recording the failure for last_error().
  [[nodiscard]] GraphPlan plan();
  // freeze / unfreeze: a compiled graph made from this one begins / ends.
  void freeze() noexcept;
  void unfreeze() noexcept;

  // record_failure: why the last compile failed (null: it succeeded).
  void record_failure(ErrorPtr e) noexcept;
  [[nodiscard]] ErrorPtr last_error() const;

 private:
  void require_editable_locked() const;
  void check_locked() const;  // throws StatusError describing the first fault

  mutable std::mutex mutex_;
  std::vector<GraphNode> nodes_;    // guarded by mutex_
  std::vector<uint32_t> outputs_;   // guarded by mutex_
  size_t frozen_ = 0;               // guarded by mutex_: compiled graphs made from it alive
  ErrorPtr last_error_;             // guarded by mutex_
};

}  // namespace tether
