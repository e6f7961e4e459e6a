// graph_bench.cpp — a compiled graph next to the same work done as chained actor calls.
//
// The pipeline is the seed's: two workers (actors on threads of their own), four nodes —
// worker 0's forward pass, worker 1's forward and backward passes, worker 0's backward
// pass — each doing W ns of busy work (the benchmark argument) on a long.
//
//   BM_Compiled_Latency/W     one execution at a time: tether_compiled_execute, wait,
//                             tether_future_outputs, release: per-execution latency.
//   BM_Chained_Latency/W      the same four passes as ordinary calls: tether_actor_call on
//                             worker 0, wait, then the next on worker 1, ... (submit, wait,
//                             submit the next): what a caller without graphs writes. Its
//                             throughput is the inverse: a caller that waits cannot overlap.
//   BM_Compiled_Throughput/W  executions kept pipelined, channel_capacity (8) in flight:
//                             per-execution time at a steady state.
//
// The goals of issue 4: compiled latency at most 0.5x the chained calls, and pipelined
// throughput at least 2x. bench/README.md holds the figures.
#include <tether/tether.h>

#include "check.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using tether_bench::Check;

constexpr int64_t kWaitForever = -1;
constexpr size_t kCapacity = 8;
constexpr size_t kRing = 64;  // values a node keeps: more than can be in flight

// BusyWork: spins for ns nanoseconds on the steady clock (the pass's "compute").
void BusyWork(int64_t ns) {
  if (ns <= 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  while (std::chrono::steady_clock::now() < until) {
  }
}

// Pass: one node's work: out = in * mul + add after `work_ns` of busy work. Its values
// live in a ring it owns (no value_drop: the library passes the pointers along).
struct Pass {
  long mul, add;
  int64_t work_ns;
  long ring[kRing];
  size_t next;

  long Apply(long in) const {
    BusyWork(work_ns);
    return in * mul + add;
  }
};

tether_status Worker(tether_task *, void *, void **state_out) {
  *state_out = nullptr;
  return TETHER_OK;
}

tether_status RunNode(tether_task *, void *, void *arg, void *const *inputs, size_t, void **output) {
  auto *p = static_cast<Pass *>(arg);
  long *slot = &p->ring[p->next++ % kRing];
  *slot = p->Apply(*static_cast<const long *>(inputs[0]));
  *output = slot;
  return TETHER_OK;
}

// CallArg: one chained call's input and output.
struct CallArg {
  const Pass *pass;
  long value;
};

tether_status RunCall(tether_task *, void *, void *arg) {
  auto *c = static_cast<CallArg *>(arg);
  c->value = c->pass->Apply(c->value);
  return TETHER_OK;
}

// Pipeline: the two workers and the four passes (w0 fwd, w1 fwd, w1 bwd, w0 bwd).
class Pipeline {
 public:
  explicit Pipeline(int64_t work_ns) {
    static const char *const names[2] = {"bench-w0", "bench-w1"};
    for (int i = 0; i < 2; ++i) {
      tether_actor_options o;
      tether_actor_options_init(&o);
      o.name = names[i];
      Check(tether_actor_create(&o, Worker, nullptr, nullptr, nullptr, &workers_[i]), TETHER_OK, "actor_create");
    }
    const long mul[4] = {1, 1, 2, 2}, add[4] = {1, 1, 0, 0};
    for (int i = 0; i < 4; ++i) passes_[i] = Pass{mul[i], add[i], work_ns, {}, 0};
  }
  ~Pipeline() {
    if (compiled_.id != 0) Check(tether_compiled_release(compiled_), TETHER_OK, "compiled_release");
    if (graph_.id != 0) Check(tether_graph_release(graph_), TETHER_OK, "graph_release");
    for (tether_actor a : workers_) Check(tether_actor_release(a), TETHER_OK, "actor_release");
  }
  Pipeline(const Pipeline &) = delete;
  Pipeline &operator=(const Pipeline &) = delete;

  // actor_of: the worker that runs pass i.
  [[nodiscard]] tether_actor actor_of(int i) const { return workers_[i == 0 || i == 3 ? 0 : 1]; }
  [[nodiscard]] const Pass &pass(int i) const { return passes_[i]; }

  tether_compiled Compile() {
    uint32_t n[4];
    Check(tether_graph_create(&graph_), TETHER_OK, "graph_create");
    for (int i = 0; i < 4; ++i) {
      Check(tether_graph_add_node(graph_, actor_of(i), nullptr, RunNode, &passes_[i], nullptr, &n[i]), TETHER_OK,
            "add_node");
    }
    Check(tether_graph_add_edge(graph_, TETHER_GRAPH_INPUT, n[0]), TETHER_OK, "add_edge");
    for (int i = 0; i < 3; ++i) Check(tether_graph_add_edge(graph_, n[i], n[i + 1]), TETHER_OK, "add_edge");
    Check(tether_graph_set_outputs(graph_, &n[3], 1), TETHER_OK, "set_outputs");
    tether_compile_options o;
    tether_compile_options_init(&o);
    o.channel_capacity = kCapacity;
    Check(tether_graph_compile(graph_, &o, &compiled_), TETHER_OK, "graph_compile");
    return compiled_;
  }

  // Expected: what the four passes make of in.
  [[nodiscard]] long Expected(long in) const {
    for (const Pass &p : passes_) in = in * p.mul + p.add;
    return in;
  }

 private:
  tether_actor workers_[2] = {{0}, {0}};
  Pass passes_[4];
  tether_graph graph_{0};
  tether_compiled compiled_{0};
};

long Output(tether_future f) {
  void *out = nullptr;
  Check(tether_future_outputs(f, &out, 1), TETHER_OK, "future_outputs");
  return *static_cast<long *>(out);
}

void BM_Compiled_Latency(benchmark::State &state) {
  Pipeline p(state.range(0));
  tether_compiled c = p.Compile();
  long in = 0;
  for (auto _ : state) {
    tether_future f;
    Check(tether_compiled_execute(c, &in, nullptr, &f), TETHER_OK, "compiled_execute");
    Check(tether_future_wait(f, kWaitForever), TETHER_OK, "future_wait");
    if (Output(f) != p.Expected(in)) state.SkipWithError("wrong output");
    Check(tether_future_release(f), TETHER_OK, "future_release");
    ++in;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Compiled_Latency)->Arg(0)->Arg(1000)->Arg(10000)->UseRealTime()->MeasureProcessCPUTime();

void BM_Chained_Latency(benchmark::State &state) {
  Pipeline p(state.range(0));
  long in = 0;
  for (auto _ : state) {
    CallArg arg{nullptr, in};
    for (int i = 0; i < 4; ++i) {
      tether_future f;
      arg.pass = &p.pass(i);
      Check(tether_actor_call(p.actor_of(i), nullptr, RunCall, &arg, nullptr, &f), TETHER_OK, "actor_call");
      Check(tether_future_wait(f, kWaitForever), TETHER_OK, "future_wait");
      Check(tether_future_release(f), TETHER_OK, "future_release");
    }
    if (arg.value != p.Expected(in)) state.SkipWithError("wrong output");
    ++in;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Chained_Latency)->Arg(0)->Arg(1000)->Arg(10000)->UseRealTime()->MeasureProcessCPUTime();

void BM_Compiled_Throughput(benchmark::State &state) {
  Pipeline p(state.range(0));
  tether_compiled c = p.Compile();
  std::vector<tether_future> window(kCapacity);
  std::vector<long> inputs(kCapacity);
  long in = 0;
  size_t in_flight = 0;
  auto retire = [&](size_t slot) {
    Check(tether_future_wait(window[slot], kWaitForever), TETHER_OK, "future_wait");
    if (Output(window[slot]) != p.Expected(inputs[slot])) state.SkipWithError("wrong output");
    Check(tether_future_release(window[slot]), TETHER_OK, "future_release");
  };
  for (auto _ : state) {
    const size_t slot = static_cast<size_t>(in) % kCapacity;
    if (in_flight == kCapacity) {
      retire(slot);  // the oldest: executions end in order
      --in_flight;
    }
    inputs[slot] = in;
    Check(tether_compiled_execute(c, &inputs[slot], nullptr, &window[slot]), TETHER_OK, "compiled_execute");
    ++in_flight;
    ++in;
  }
  for (size_t k = 0; k < in_flight; ++k) retire((static_cast<size_t>(in) + kCapacity - in_flight + k) % kCapacity);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Compiled_Throughput)->Arg(0)->Arg(1000)->Arg(10000)->UseRealTime()->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
