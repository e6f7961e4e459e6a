#include "core/compiled_graph.h"

#include <algorithm>

#include "core/actor.h"
#include "core/graph_hosts.h"
#include "core/lane.h"
#include "core/status_error.h"
#include "core/task.h"
#include "core/thread_role.h"

namespace tether {
namespace {

constexpr const char* kExecutionName = "tether-graph";
constexpr size_t kStackInputs = 8;  // a node with at most this many inputs reads them from the stack

std::atomic<uint64_t> g_next_compiled_id{1};

}  // namespace

// Slot: one execution in flight (see the class comment for who writes what, when).
struct CompiledGraph::Slot {
  std::shared_ptr<CompiledGraph> keep;  // the graph, for this execution's steps: see StepCall
  std::shared_ptr<Scope> future;
  UserArg input;
  std::unique_ptr<void*[]> values;   // node -> its output in this execution
  std::unique_ptr<void*[]> inputs;   // the nodes' input arrays, input_offset_ apart
  std::unique_ptr<std::atomic<uint32_t>[]> missing;  // node -> inputs from nodes not yet present
  std::unique_ptr<uint32_t[]> refused;  // execute's scratch: first steps it could not queue
  std::atomic<uint32_t> hosts_left{0};   // hosts with steps of this execution not yet finished
  std::atomic<bool> failed{false};
  ErrorPtr error;     // written once, by the step that set failed
  bool done = false;  // guarded by mutex_: every step finished
};

// HostSlot: one thread (lane) hosting this graph's loop; the lane is freed (uninstalled)
// once, by whichever of its step and the tear-down comes last. Two flags in one word,
// each changed by one read-modify-write (acq_rel), so the two sides' changes are in one
// order and each sees what the other did before it:
//
//   step (its lane's one thread)               tear_down (any thread, once)
//   S1 fetch_or(kRunning): kReleased seen?     T1 fetch_or(kReleased): kRunning seen?
//      yes: skip the node (T1 uninstalled)        no: uninstall now
//   S2 run the node                               yes: the running step does (S3)
//   S3 fetch_and(~kRunning): kReleased seen?
//      yes: uninstall (T1 came during S2)
//
// A step that skipped (S1 saw kReleased) leaves kRunning set: the word is never looked at
// again but by later steps, which skip too. (A mutex did this before: four read-modify-
// writes a step instead of two; the difference measured within the noise of a step.)
//
// steps_left[slot]: the host's steps of that execution not yet finished. Its steps run on
// its thread, so the count stays in that CPU's cache (a step refused or cancelled is
// finished on another thread: hence atomic); only a host's last step of an execution
// touches the execution's shared count (Slot::hosts_left). One count per execution that
// every step decremented moved its line between the actors' CPUs on every step.
struct CompiledGraph::HostSlot {
  HostSlot(Lane* l, size_t capacity) : lane(l), steps_left(std::make_unique<std::atomic<uint32_t>[]>(capacity)) {}
  static constexpr uint32_t kRunning = 1;   // a step of this graph runs on the lane now
  static constexpr uint32_t kReleased = 2;  // torn down: the lane is freed once not running
  Lane* const lane;
  std::atomic<uint32_t> state{0};
  uint32_t nodes = 0;  // the graph's nodes on this lane (written by build)
  const std::unique_ptr<std::atomic<uint32_t>[]> steps_left;  // slot -> this host's steps not finished
};

// StepCall: one node of one execution, queued on the node's lane as its actor's work.
// The graph is held by the execution (Slot::keep), not by each step: a step that copied
// a shared_ptr would move its count's cache line between the two actors' CPUs on every
// step. The slot ends only after its every step finished (finish_step), so the graph
// lives while a step is queued or running; once finish_step returns, it may be gone.
// The actor outlives the step: the step is its unsettled work until settle_posted().
class CompiledGraph::StepCall : public Call {
 public:
  StepCall(CompiledGraph& graph, size_t slot, uint32_t node, Handed handed)
      : Call(graph.plan_.nodes[node].actor.get()), graph_(graph), slot_(slot), node_(node), handed_(handed) {
    static_assert(sizeof(StepCall) <= CallPool::kSlotSize, "fits a pool slot");
  }

  void run(Lane& lane) noexcept override {
    Actor& actor = *graph_.plan_.nodes[node_].actor;  // read before the graph may go
    graph_.run_step(slot_, node_, handed_, lane);
    actor.settle_posted();
  }

  // cancel: the actor stopped (CANCEL) with the step queued: the execution fails.
  void cancel() noexcept override {
    Actor& actor = *graph_.plan_.nodes[node_].actor;
    graph_.finish_step(slot_, node_, graph_.refusal_error(node_), nullptr);
    actor.settle_posted();
  }

 private:
  CompiledGraph& graph_;  // alive until this step's finish_step returns (see above)
  const size_t slot_;
  const uint32_t node_;
  const Handed handed_;
};

CompiledGraph::CompiledGraph(std::shared_ptr<Graph> graph, GraphPlan plan, Options options)
    : graph_(std::move(graph)),
      plan_(std::move(plan)),
      options_(options),
      id_(g_next_compiled_id.fetch_add(1, std::memory_order_relaxed)) {}

CompiledGraph::~CompiledGraph() {
  for (const auto& host : hosts_) GraphHosts::instance().uninstall(*host->lane, id_);
}

void CompiledGraph::build() {
  const size_t nodes = plan_.nodes.size();
  std::vector<const void*> lanes;
  for (const GraphNode& node : plan_.nodes) {
    auto it = std::find(lanes.begin(), lanes.end(), node.lane);
    host_of_.push_back(static_cast<uint32_t>(it - lanes.begin()));
    if (it == lanes.end()) {
      lanes.push_back(node.lane);
      hosts_.push_back(std::make_unique<HostSlot>(node.lane, options_.capacity));
    }
    ++hosts_[host_of_.back()]->nodes;
  }
  auto serving = std::make_shared<ServingLanes>();
  serving->lanes = std::move(lanes);
  for (const auto& host : hosts_) {
    if (LanePresence* p = host->lane->presence()) serving->presences.push_back(p);
  }
  lanes_ = std::move(serving);
  is_output_.assign(nodes, false);
  for (uint32_t o : plan_.outputs) is_output_[o] = true;
  size_t input_count = 0;
  for (const GraphNode& node : plan_.nodes) {
    input_offset_.push_back(input_count);
    input_count += node.inputs.size();
  }
  slots_ = std::make_unique<Slot[]>(options_.capacity);
  for (size_t i = 0; i < options_.capacity; ++i) {
    Slot& s = slots_[i];
    s.values = std::make_unique<void*[]>(nodes);
    s.inputs = std::make_unique<void*[]>(std::max<size_t>(input_count, 1));
    s.missing = std::make_unique<std::atomic<uint32_t>[]>(nodes);
    s.refused = std::make_unique<uint32_t[]>(nodes);
  }
}

uint64_t CompiledGraph::compile(const std::shared_ptr<Graph>& graph, Options options,
                               Publish<CompiledGraph> publish) {
  GraphPlan plan = graph->plan();
  std::shared_ptr<CompiledGraph> compiled(new CompiledGraph(graph, std::move(plan), options));
  compiled->build();
  std::vector<Lane*> lanes;
  for (const auto& host : compiled->hosts_) lanes.push_back(host->lane);
  GraphHosts::instance().install(lanes, compiled->id_);  // THREAD_BUSY: nothing installed
  graph->freeze();  // before the handle exists: its release unfreezes
  try {
    return publish(compiled);
  } catch (...) {
    graph->unfreeze();
    throw;  // ~CompiledGraph uninstalls
  }
}

bool CompiledGraph::inside() const noexcept {
  const void* serving = this_thread_role().serving;
  return serving != nullptr && std::find(lanes_->lanes.begin(), lanes_->lanes.end(), serving) != lanes_->lanes.end();
}

std::shared_ptr<Scope> CompiledGraph::execute(UserArg input, Deadline room) {
  Scope::Options future_options;
  future_options.name = kExecutionName;
  future_options.spin_wait = true;
  future_options.serving_lanes = lanes_;
  // Who ends an execution: usually the thread of its first output's node (a hint only).
  future_options.spin_partner = plan_.nodes[plan_.outputs.front()].lane->presence();
  std::shared_ptr<Scope> future = Scope::pending(std::move(future_options), UserArg());
  for (const GraphNode& node : plan_.nodes) {
    const int32_t state = node.actor->state(nullptr);
    if (state == TETHER_ACTOR_DEAD) {
      throw StatusError(TETHER_E_ACTOR_DEAD, "actor '" + node.actor->name() + "' of the graph is dead: its constructor failed");
    }
    if (state == TETHER_ACTOR_STOPPED) {
      throw StatusError(TETHER_E_SHUTDOWN, "actor '" + node.actor->name() + "' of the graph is stopping or stopped");
    }
  }
  const size_t capacity = options_.capacity;
  size_t slot;
  size_t refused = 0;
  {
    std::unique_lock lock(mutex_);
    auto has_room = [&] { return torn_down_.load(std::memory_order_relaxed) || next_seq_ - ended_seq_ < capacity; };
    if (!has_room()) {
      const std::string full = "the compiled graph has " + std::to_string(capacity) +
                               " executions in flight (its channel capacity)";
      if (room.never_blocks()) throw StatusError(TETHER_E_QUEUE_FULL, full);
      if (inside()) throw StatusError(TETHER_E_DEADLOCK, full + ", and only this thread's steps can make room");
      if (!room.wait(room_, lock, has_room)) throw StatusError(TETHER_E_TIMEOUT, full + " until the timeout");
    }
    if (torn_down_.load(std::memory_order_relaxed)) {
      throw StatusError(TETHER_E_INVALID_HANDLE, "invalid handle: compiled graph was released");
    }
    slot = next_seq_ % capacity;
    Slot& s = slots_[slot];
    s.keep = shared_from_this();
    s.future = future;
    s.input = std::move(input);
    s.failed.store(false, std::memory_order_relaxed);
    s.hosts_left.store(static_cast<uint32_t>(hosts_.size()), std::memory_order_relaxed);
    for (const auto& host : hosts_) host->steps_left[slot].store(host->nodes, std::memory_order_relaxed);
    for (uint32_t n = 0; n < plan_.nodes.size(); ++n) {
      s.values[n] = nullptr;
      s.missing[n].store(plan_.node_edges[n], std::memory_order_relaxed);
    }
    ++next_seq_;
    // Queued under mutex_, so concurrent executes queue their first steps in their order.
    for (uint32_t n = 0; n < plan_.nodes.size(); ++n) {
      if (plan_.node_edges[n] == 0 && !try_post(slot, n, Handed{})) s.refused[refused++] = n;
    }
  }
  // A step refused under the lock is finished outside it (finishing may end the execution).
  for (size_t i = 0; i < refused; ++i) {
    const uint32_t n = slots_[slot].refused[i];
    finish_step(slot, n, refusal_error(n), nullptr);
  }
  return future;
}

bool CompiledGraph::try_post(size_t slot, uint32_t node, Handed handed) noexcept {
  const GraphNode& n = plan_.nodes[node];
  StepCall* step;
  try {
    step = new StepCall(*this, slot, node, handed);
  } catch (...) {
    return false;
  }
  if (n.actor->post(*n.lane, step)) return true;
  delete step;
  return false;
}

void CompiledGraph::post_step(size_t slot, uint32_t node, Handed handed) noexcept {
  if (!try_post(slot, node, handed)) finish_step(slot, node, refusal_error(node), nullptr);
}

ErrorPtr CompiledGraph::refusal_error(uint32_t node) const noexcept {
  const GraphNode& n = plan_.nodes[node];
  try {
    if (n.actor->state(nullptr) == TETHER_ACTOR_ALIVE) return out_of_memory_error();
    return make_error(TETHER_E_SHUTDOWN, 0,
                      "node " + std::to_string(node) + ": actor '" + n.actor->name() + "' is stopping or stopped",
                      n.lane->name());
  } catch (...) {
    return out_of_memory_error();
  }
}

bool CompiledGraph::skips(const Slot& s) const noexcept {
  return torn_down_.load(std::memory_order_acquire) || s.failed.load(std::memory_order_acquire) ||
         s.future->state() == TETHER_CANCELLED;
}

void CompiledGraph::run_step(size_t slot, uint32_t node, Handed handed, Lane& lane) noexcept {
  HostSlot& host = *hosts_[host_of_[node]];
  const bool released = (host.state.fetch_or(HostSlot::kRunning, std::memory_order_acq_rel) & HostSlot::kReleased) != 0;  // S1
  Slot& s = slots_[slot];
  ErrorPtr error;
  void* output = nullptr;
  if (!released && !skips(s)) {
    const GraphNode& n = plan_.nodes[node];
    Actor& actor = *n.actor;
    if (!actor.alive()) {  // its constructor failed: the step never runs
      try {
        error = actor.dead_error();
      } catch (...) {
        error = out_of_memory_error();
      }
    } else {
      // The array a node reads its inputs from: on this stack for a few inputs, so the
      // step writes nothing the other hosts' steps write (the slot's array is shared).
      void* few[kStackInputs];
      void** inputs = n.inputs.size() <= kStackInputs ? few : &s.inputs[input_offset_[node]];
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        const uint32_t from = n.inputs[i];
        inputs[i] = from == TETHER_GRAPH_INPUT ? s.input.get() : from == handed.from ? handed.value : s.values[from];
      }
      TaskOrigin origin = actor.origin();
      origin.graph_stop = &torn_down_;
      Task task(nullptr, lane.name(), /*is_target=*/true, &origin);
      error = run_task(task, [&](tether_task* t) {
        return n.fn(t, actor.state_ptr(), n.arg->get(), inputs, n.inputs.size(), &output);
      });
    }
  }
  // S3 before the next steps are queued: once a step's output is handed on, its host no
  // longer runs it (a tear-down meanwhile frees the thread here, not later).
  if (!released && (host.state.fetch_and(~HostSlot::kRunning, std::memory_order_acq_rel) & HostSlot::kReleased) != 0) {
    GraphHosts::instance().uninstall(lane, id_);  // S3: torn down while it ran
  }
  finish_step(slot, node, std::move(error), output);
}

void CompiledGraph::finish_step(size_t slot, uint32_t node, ErrorPtr error, void* output) noexcept {
  Slot& s = slots_[slot];
  s.values[node] = output;
  if (error && !s.failed.exchange(true, std::memory_order_acq_rel)) s.error = std::move(error);
  for (uint32_t consumer : plan_.consumers[node]) {
    // A consumer fed by this one edge alone (of the edges from nodes) is ready now: its
    // countdown, whose line other nodes' steps write too, is not touched, and its one
    // node input comes with the step (Handed), not from this slot's values, whose line
    // this thread has just written.
    if (plan_.node_edges[consumer] == 1) {
      post_step(slot, consumer, Handed{node, output});
    } else if (s.missing[consumer].fetch_sub(1, std::memory_order_acq_rel) == 1) {
      post_step(slot, consumer, Handed{});
    }
  }
  // The host's count, then (its last step of this execution) the execution's: acq_rel
  // both, so the step that ends the execution sees every step's writes.
  if (hosts_[host_of_[node]]->steps_left[slot].fetch_sub(1, std::memory_order_acq_rel) == 1 &&
      s.hosts_left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    step_slot_done(slot);
  }
}

// Ending: an execution whose slot is being freed, and what its future will be told.
struct CompiledGraph::Ending {
  std::shared_ptr<Scope> future;
  ErrorPtr error;
  bool succeeds = false;
  std::vector<UserArg> outputs;  // with value_drop, owned until the future takes them
};

void CompiledGraph::step_slot_done(size_t slot) noexcept {
  // The ended slots' holds on the graph, one at a time (a move-assignment takes the next
  // before it lets the last go): dropped after the lock, this function's last touch.
  std::shared_ptr<CompiledGraph> keep;
  std::unique_lock lock(mutex_);
  slots_[slot].done = true;
  if (completing_) return;  // the completer at work will end it, in its turn
  completing_ = true;
  while (ended_seq_ != next_seq_) {
    Slot& s = slots_[ended_seq_ % options_.capacity];
    if (!s.done) break;
    Ending ending;
    ending.future = std::move(s.future);
    keep = std::move(s.keep);
    lock.unlock();
    release_values(s, ending);
    lock.lock();
    s.done = false;
    ++ended_seq_;
    room_.notify_all();
    lock.unlock();
    // The future completes once its slot is free: whoever it wakes finds room.
    complete(std::move(ending));
    lock.lock();
  }
  completing_ = false;
}

void CompiledGraph::release_values(Slot& s, Ending& ending) noexcept {
  const tether_drop_fn drop = options_.value_drop;
  ending.error = std::move(s.error);
  ending.succeeds = !s.failed.load(std::memory_order_acquire) && !torn_down_.load(std::memory_order_acquire) &&
                    ending.future->state() == TETHER_PENDING;
  bool outputs_owned = false;
  if (ending.succeeds) {
    try {
      ending.outputs.reserve(plan_.outputs.size());
      for (uint32_t o : plan_.outputs) ending.outputs.emplace_back(s.values[o], drop);
      outputs_owned = true;
    } catch (...) {
      for (UserArg& o : ending.outputs) (void)o.release();  // still the execution's: dropped below
      ending.outputs.clear();
      ending.error = out_of_memory_error();
    }
  }
  // The execution has ended: every value not passed on is dropped, then the input.
  if (drop != nullptr) {
    for (uint32_t n = 0; n < plan_.nodes.size(); ++n) {
      const bool passed_on = outputs_owned && is_output_[n];
      if (s.values[n] != nullptr && !passed_on) drop(s.values[n]);
    }
  }
  s.input.reset();
}

void CompiledGraph::complete(Ending ending) noexcept {
  Scope& future = *ending.future;
  UserArg none;
  if (ending.error) {
    future.fail_pending(std::move(ending.error));
  } else if (ending.succeeds && future.start_call(none)) {
    try {
      future.set_outputs(std::move(ending.outputs));
    } catch (...) {  // no memory to hand the outputs over: the execution fails instead
      future.finish_call(out_of_memory_error());
      return;
    }
    future.finish_call(nullptr);
  } else {
    future.cancel();  // torn down, or cancelled by its caller (then a no-op)
  }
  // Outputs still here (the future was cancelled first) drop with `ending`, unlocked.
}

void CompiledGraph::tear_down() noexcept {
  std::vector<std::shared_ptr<Scope>> futures;
  try {
    futures.reserve(options_.capacity);
  } catch (...) {  // no memory: the executions still end, CANCELLED, as their steps drain
  }
  {
    std::lock_guard lock(mutex_);
    if (torn_down_.exchange(true, std::memory_order_acq_rel)) return;
    for (uint64_t seq = ended_seq_; seq != next_seq_ && futures.size() < futures.capacity(); ++seq) {
      const auto& f = slots_[seq % options_.capacity].future;
      if (f) futures.push_back(f);  // null: the completer is ending it now
    }
  }
  room_.notify_all();
  for (const auto& f : futures) {
    try {
      f->cancel();
    } catch (...) {
    }
  }
  for (const auto& host : hosts_) {
    if ((host->state.fetch_or(HostSlot::kReleased, std::memory_order_acq_rel) & HostSlot::kRunning) == 0) {  // T1
      GraphHosts::instance().uninstall(*host->lane, id_);
    }
  }
  graph_->unfreeze();
}

}  // namespace tether
