// CompiledGraph: a graph's execution loop installed on the OS threads of its nodes.
//
// The loop does not own its threads. A node's step is a Call queued on its actor's lane
// once every input of that execution is present, so ordinary calls to the same actor run
// between steps and a thread is never blocked waiting for graph input. Channels are a ring
// of `capacity` execution slots made at compile time: execution k lives in slot
// k % capacity, and each slot holds every node's value for that execution. At most
// `capacity` executions are in flight, so a step always has room for its output; execute
// waits (or refuses) beyond that.
//
// Order: a step is queued by whoever supplied its last input, after that thread's earlier
// steps queued theirs, so each node's steps reach its lane — a FIFO — in execution order.
// Executions end (values dropped, slot freed, then the future completed) strictly in
// order: one thread at a time, the completer, ends the oldest slot whose steps have all
// finished.
//
// Ownership and threads: a slot's fields are written by execute (under mutex_) before its
// first step is queued; values[n] by node n's step; the slot is then read by the steps
// that consume it (the countdowns order them, acq_rel) and ended by the completer after
// every step of it has finished. Each queued step holds the compiled graph alive, so
// teardown never waits for steps: they skip their node once torn_down_ is set, and the
// last of them frees everything. A host thread is free for another graph once released
// and not running one of its steps (HostSlot).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/deadline.h"
#include "core/error.h"
#include "core/graph.h"
#include "core/publish.h"
#include "core/scope.h"
#include "core/user_arg.h"

namespace tether {

class Lane;

class CompiledGraph : public std::enable_shared_from_this<CompiledGraph> {
 public:
  struct Options {
    size_t capacity = 8;
    tether_drop_fn value_drop = nullptr;
  };

  // compile: checks graph, installs its loop on every thread of its nodes, gives it a
  // handle (publish) and returns the handle id. Throws StatusError; installs nothing on
  // failure.
  static uint64_t compile(const std::shared_ptr<Graph>& graph, Options options, Publish<CompiledGraph> publish);
  ~CompiledGraph();
  CompiledGraph(const CompiledGraph&) = delete;
  CompiledGraph& operator=(const CompiledGraph&) = delete;

  // execute: starts one execution of input; its future. Throws StatusError: QUEUE_FULL
  // (room never blocks), TIMEOUT, DEADLOCK (waiting for room on a thread of this graph),
  // SHUTDOWN / ACTOR_DEAD (an actor of the graph stopped / died), INVALID_HANDLE (released
  // meanwhile). input is dropped before a failing execute returns.
  [[nodiscard]] std::shared_ptr<Scope> execute(UserArg input, Deadline room);

  // tear_down: the handle's end: cancels the executions not yet done and frees each host
  // thread as soon as it is not running a step. Never waits on user code.
  void tear_down() noexcept;

 private:
  class StepCall;
  struct Slot;
  struct HostSlot;
  struct Ending;

  CompiledGraph(std::shared_ptr<Graph> graph, GraphPlan plan, Options options);
  void build();  // allocates the slots and the host list; throws NO_MEMORY

  // Handed: a node's output passed on with the step of its consumer (from: the node; none
  // for a step whose inputs are all read from the slot).
  struct Handed {
    uint32_t from = UINT32_MAX - 1;  // never a node, nor TETHER_GRAPH_INPUT
    void* value = nullptr;
  };
  // Steps: queue, run and finish one node of one execution (slot).
  [[nodiscard]] bool try_post(size_t slot, uint32_t node, Handed handed) noexcept;  // false: not queued
  void post_step(size_t slot, uint32_t node, Handed handed) noexcept;  // a step not queued fails its execution
  void run_step(size_t slot, uint32_t node, Handed handed, Lane& lane) noexcept;
  // finish_step: the output, the error, the next steps, then the step counted finished
  // (after which the graph may be gone: the last step ends the execution).
  void finish_step(size_t slot, uint32_t node, ErrorPtr error, void* output) noexcept;
  [[nodiscard]] bool skips(const Slot& s) const noexcept;
  [[nodiscard]] ErrorPtr refusal_error(uint32_t node) const noexcept;

  // Ends: the completer ends executions in order.
  void step_slot_done(size_t slot) noexcept;
  void release_values(Slot& s, Ending& ending) noexcept;  // drops, then the slot can be reused
  static void complete(Ending ending) noexcept;            // the future, once the slot is free
  [[nodiscard]] bool inside() const noexcept;  // the calling thread hosts a node of this graph

  const std::shared_ptr<Graph> graph_;
  const GraphPlan plan_;
  const Options options_;
  uint64_t id_ = 0;  // the hosts' key: unique for the process's life
  std::vector<uint32_t> host_of_;                 // node -> index in hosts_
  std::vector<bool> is_output_;                   // node -> among the outputs
  std::vector<std::unique_ptr<HostSlot>> hosts_;  // one per distinct lane
  std::shared_ptr<const ServingLanes> lanes_;  // the hosts' lanes, for futures
  std::vector<size_t> input_offset_;  // node -> first of its inputs in a slot's input buffer
  std::unique_ptr<Slot[]> slots_;     // capacity of them
  std::atomic<bool> torn_down_{false};  // also the nodes' stop request

  std::mutex mutex_;
  std::condition_variable room_;  // signalled when a slot frees and at teardown
  uint64_t next_seq_ = 0;         // guarded by mutex_: the next execution's number
  uint64_t ended_seq_ = 0;        // guarded by mutex_: executions ended so far
  bool completing_ = false;       // guarded by mutex_: a completer is at work
};

}  // namespace tether
