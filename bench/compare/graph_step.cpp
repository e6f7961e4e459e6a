// graph_step.cpp: what a compiled graph's step between two actors costs (target 6).
//   SPSC ring round trip   the floor: two threads on different CPUs, a ring of integers
//                          each way, both spinning: x goes out, x + 1 comes back.
//   a step                 what one more node costs an execution of a chain whose nodes
//                          (x -> x + 1 each) alternate between actor A and actor B, so each
//                          node is one crossing between the two actors' threads: in one
//                          sample, with the same two actors, a 16-node chain and then a
//                          128-node one, each one execution at a time; the step is the
//                          difference of their executions over the 112 nodes between them.
//                          What is left of the short chain's execution is the execution's
//                          own cost: execute, the first step's queueing, and the caller's
//                          wake-up on the future (the caller parks: it shares a CPU with A
//                          or B). A chain's time over its length (the figure before
//                          2026-12-06, 32 nodes) charged each step ~1/32 of that, ~150 ns.
//                          A and B apart (A on the first CPU, B on the second; the caller
//                          unpinned), or everything on the first CPU.
//   2 nodes, an execution  the graph A -> B, one execution at a time (caller -> A -> B ->
//                          caller).
//   2 chained calls        the same two passes as a caller without graphs writes them:
//                          tether_actor_call on A, wait; then on B, wait.
// Target 6: a step with the actors apart <= 2x the SPSC round trip; on one CPU, the
// two-node execution no slower than the two chained calls.
#include "graph_step.h"

#include <tether/tether.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../call_each.h"
#include "../check.h"
#include "measure.h"
#include "placement.h"

namespace compare {
namespace {

using tether_bench::Check;
using tether_bench::MakeActor;

constexpr int kShortChain = 16;
constexpr int kLongChain = 128;
constexpr size_t kValues = 64;  // values a node (or a ring) holds: more than are ever in flight

inline void pause() noexcept { __builtin_ia32_pause(); }

// SpscRing: one producer, one consumer; tail_ written by the producer, head_ by the
// consumer, each on a line of its own; an item is written before the tail that shows it.
class SpscRing {
 public:
  void push(int64_t x) noexcept {
    while (tail_ - head_.load(std::memory_order_acquire) == kValues) pause();
    items_[tail_ % kValues] = x;
    tail_shown_.store(++tail_, std::memory_order_release);
  }
  // pop: spins until an item is there, unless stop is set first (then false).
  bool pop(int64_t& x, const std::atomic<bool>* stop = nullptr) noexcept {
    while (tail_shown_.load(std::memory_order_acquire) == next_) {
      if (stop != nullptr && stop->load(std::memory_order_acquire)) return false;
      pause();
    }
    x = items_[next_ % kValues];
    head_.store(++next_, std::memory_order_release);
    return true;
  }

 private:
  alignas(64) std::atomic<uint64_t> tail_shown_{0};
  uint64_t tail_ = 0;  // the producer's
  alignas(64) std::atomic<uint64_t> head_{0};
  uint64_t next_ = 0;  // the consumer's
  alignas(64) int64_t items_[kValues] = {};
};

// SpscPair: the worker answers x + 1 on the way back. Built with the worker on the
// second CPU, the caller on the first.
class SpscPair {
 public:
  SpscPair() {
    place_for_build(Placement::kDifferentCpus);
    worker_ = std::thread([this] { serve(); });
    place_caller(Placement::kDifferentCpus);
  }
  ~SpscPair() {
    stop_.store(true, std::memory_order_release);
    worker_.join();
  }
  SpscPair(const SpscPair&) = delete;
  SpscPair& operator=(const SpscPair&) = delete;
  int64_t operator()(int64_t x) {
    out_.push(x);
    int64_t y = 0;
    (void)back_.pop(y);
    return y;
  }

 private:
  void serve() {
    int64_t x = 0;
    while (out_.pop(x, &stop_)) back_.push(x + 1);
  }
  SpscRing out_, back_;
  std::atomic<bool> stop_{false};
  std::thread worker_;
};

// Node: x -> x + 1; its outputs live in a ring it owns (the library passes the pointers on).
struct Node {
  int64_t ring[kValues] = {};
  size_t next = 0;
};
tether_status Step(tether_task*, void*, void* arg, void* const* inputs, size_t, void** output) {
  auto* n = static_cast<Node*>(arg);
  int64_t* slot = &n->ring[n->next++ % kValues];
  *slot = *static_cast<const int64_t*>(inputs[0]) + 1;
  *output = slot;
  return TETHER_OK;
}
tether_status AddOneInPlace(tether_task*, void*, void* arg) {
  ++*static_cast<int64_t*>(arg);
  return TETHER_OK;
}

// Actors: A and B on threads of their own. apart: A on the first CPU, B on the second, the
// caller free; otherwise all three on the first CPU.
class Actors {
 public:
  explicit Actors(bool apart) {
    place_caller(apart ? Placement::kDifferentCpus : Placement::kSameCpu);  // the first CPU
    a_ = MakeActor(tether_executor{0}, "compare-a");
    if (apart) place_for_build(Placement::kDifferentCpus);  // the second
    b_ = MakeActor(tether_executor{0}, "compare-b");
    place_caller(apart ? Placement::kUnpinned : Placement::kSameCpu);
  }
  ~Actors() {
    Check(tether_actor_release(a_), TETHER_OK, "tether_actor_release");
    Check(tether_actor_release(b_), TETHER_OK, "tether_actor_release");
  }
  Actors(const Actors&) = delete;
  Actors& operator=(const Actors&) = delete;
  [[nodiscard]] tether_actor a() const { return a_; }
  [[nodiscard]] tether_actor b() const { return b_; }

 private:
  tether_actor a_{0}, b_{0};
};

// Chain: a compiled graph of n nodes, node i on A when i is even, on B when odd.
class Chain {
 public:
  Chain(const Actors& actors, int n) : nodes_(static_cast<size_t>(n)) {
    Check(tether_graph_create(&graph_), TETHER_OK, "tether_graph_create");
    uint32_t prev = TETHER_GRAPH_INPUT;
    for (int i = 0; i < n; ++i) {
      uint32_t id = 0;
      Check(tether_graph_add_node(graph_, i % 2 == 0 ? actors.a() : actors.b(), nullptr, Step,
                                  &nodes_[static_cast<size_t>(i)], nullptr, &id),
            TETHER_OK, "tether_graph_add_node");
      Check(tether_graph_add_edge(graph_, prev, id), TETHER_OK, "tether_graph_add_edge");
      prev = id;
    }
    Check(tether_graph_set_outputs(graph_, &prev, 1), TETHER_OK, "tether_graph_set_outputs");
    tether_compile_options o;
    tether_compile_options_init(&o);
    Check(tether_graph_compile(graph_, &o, &compiled_), TETHER_OK, "tether_graph_compile");
  }
  ~Chain() {
    Check(tether_compiled_release(compiled_), TETHER_OK, "tether_compiled_release");
    Check(tether_graph_release(graph_), TETHER_OK, "tether_graph_release");
  }
  Chain(const Chain&) = delete;
  Chain& operator=(const Chain&) = delete;
  int64_t operator()(int64_t x) {
    tether_future f;
    Check(tether_compiled_execute(compiled_, &x, nullptr, &f), TETHER_OK, "tether_compiled_execute");
    Check(tether_future_wait(f, -1), TETHER_OK, "tether_future_wait");
    void* out = nullptr;
    Check(tether_future_outputs(f, &out, 1), TETHER_OK, "tether_future_outputs");
    const int64_t y = *static_cast<const int64_t*>(out);
    Check(tether_future_release(f), TETHER_OK, "tether_future_release");
    return y;
  }

 private:
  std::vector<Node> nodes_;
  tether_graph graph_{0};
  tether_compiled compiled_{0};
};

// chained: x + 1 on A, waited for; then + 1 on B, waited for.
int64_t chained(const Actors& actors, int64_t x) {
  for (tether_actor a : {actors.a(), actors.b()}) {
    tether_future f;
    Check(tether_actor_call(a, nullptr, AddOneInPlace, &x, nullptr, &f), TETHER_OK, "tether_actor_call");
    Check(tether_future_wait(f, -1), TETHER_OK, "tether_future_wait");
    Check(tether_future_release(f), TETHER_OK, "tether_future_release");
  }
  return x;
}

enum class Shape { kSpsc, kChainStep, kPair, kChained };

// Case: samples of one shape; for kChainStep a sample is the short chain's execution and
// long_samples[i] the long chain's, measured right after it with the same actors.
struct Case {
  Shape shape;
  bool apart;
  const char* what;
  std::vector<Sample> samples;
  std::vector<Sample> long_samples;
};

// time_it: op(x) must give x + adds; runs for sample_ms after a warm-up; per_op divides
// an operation's time (a chain's execution into its steps).
template <class Op>
Sample time_it(int sample_ms, int64_t adds, double per_op, Op op) {
  int64_t x = 1;
  auto one = [&] {
    if (op(x) != x + adds) {
      std::fprintf(stderr, "compare: graph step: wrong answer\n");
      std::abort();
    }
    ++x;
  };
  for (int i = 0; i < 16; ++i) one();
  const int64_t budget = static_cast<int64_t>(sample_ms) * 1'000'000;
  const int64_t wall0 = now_ns(), mine0 = thread_cpu_ns(), all0 = process_cpu_ns();
  int64_t ops = 0;
  do {
    for (int i = 0; i < 8; ++i) one();
    ops += 8;
  } while (now_ns() - wall0 < budget);
  const double wall = static_cast<double>(now_ns() - wall0);
  const double mine = static_cast<double>(thread_cpu_ns() - mine0);
  const double all = static_cast<double>(process_cpu_ns() - all0);
  return Sample{wall / static_cast<double>(ops) / per_op, mine / wall, std::max(0.0, all - mine) / wall};
}

// chain_samples: one execution of the short chain, then of the long one, half the time each.
std::pair<Sample, Sample> chain_samples(const Actors& actors, int sample_ms) {
  auto executions = [&](int n) {
    Chain chain(actors, n);  // released before the next is compiled: a thread hosts one graph
    return time_it(sample_ms / 2, n, 1, [&](int64_t x) { return chain(x); });
  };
  Sample short_chain = executions(kShortChain);
  return {short_chain, executions(kLongChain)};
}

void sample(Case& c, int sample_ms) {
  Sample s;
  if (c.shape == Shape::kSpsc) {
    SpscPair pair;
    s = time_it(sample_ms, 1, 1, [&](int64_t x) { return pair(x); });
  } else {
    Actors actors(c.apart);
    if (c.shape == Shape::kChained) {
      s = time_it(sample_ms, 2, 1, [&](int64_t x) { return chained(actors, x); });
    } else if (c.shape == Shape::kPair) {
      Chain pair(actors, 2);
      s = time_it(sample_ms, 2, 1, [&](int64_t x) { return pair(x); });
    } else {
      auto [short_chain, long_chain] = chain_samples(actors, sample_ms);
      s = short_chain;
      c.long_samples.push_back(long_chain);
    }
  }
  place_caller(Placement::kUnpinned);
  c.samples.push_back(s);
}

double time_of(const std::vector<Sample>& samples) {
  std::vector<double> v;
  for (const Sample& s : samples) v.push_back(s.ns_per_op);
  return median(v);
}
double cpu_of(const std::vector<Sample>& samples, double Sample::*side) {
  std::vector<double> v;
  for (const Sample& s : samples) v.push_back(s.*side);
  return median(v);
}
// The chain's derived figures, each the median of the samples' own (a short and a long
// chain measured together): a step, and the execution's own cost.
double step_ns(const Sample& short_chain, const Sample& long_chain) {
  return (long_chain.ns_per_op - short_chain.ns_per_op) / (kLongChain - kShortChain);
}
std::vector<Sample> steps_of(const Case& c) {
  std::vector<Sample> v;
  for (size_t i = 0; i < c.samples.size(); ++i) {
    v.push_back({step_ns(c.samples[i], c.long_samples[i]), c.long_samples[i].caller_cpu, c.long_samples[i].other_cpu});
  }
  return v;
}
std::vector<Sample> own_costs_of(const Case& c) {
  std::vector<Sample> v;
  for (size_t i = 0; i < c.samples.size(); ++i) {
    const Sample& s = c.samples[i];
    v.push_back({s.ns_per_op - kShortChain * step_ns(s, c.long_samples[i]), s.caller_cpu, s.other_cpu});
  }
  return v;
}

std::string fmt(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}
std::string duration(double ns) { return ns < 1000 ? fmt("%.0f ns", ns) : fmt("%.2f us", ns / 1000); }

}  // namespace

GraphStepReport graph_step_report(int reps, int sample_ms, unsigned seed) {
  std::vector<Case> cases;
  if (usable_cpus() >= 2) {
    cases.push_back({Shape::kSpsc, true, "SPSC ring round trip (floor; spinning both sides)", {}, {}});
    cases.push_back({Shape::kChainStep, true, "compiled graph, chain A/B/A/...", {}, {}});
    cases.push_back({Shape::kPair, true, "compiled graph A -> B: one execution", {}, {}});
    cases.push_back({Shape::kChained, true, "two chained calls, A then B", {}, {}});
  }
  cases.push_back({Shape::kChainStep, false, "compiled graph, chain A/B/A/...", {}, {}});
  cases.push_back({Shape::kPair, false, "compiled graph A -> B: one execution", {}, {}});
  cases.push_back({Shape::kChained, false, "two chained calls, A then B", {}, {}});
  auto find = [&](Shape shape, bool apart) -> Case* {
    for (Case& c : cases) {
      if (c.shape == shape && c.apart == apart) return &c;
    }
    return nullptr;
  };
  // A unit: one sample, or the two cases a target compares, side by side in a random order
  // (this VM changes state for seconds at a time: two medians of samples scattered over the
  // run may each come from another state).
  struct Unit {
    Case* first;
    Case* second = nullptr;
    bool step_pair = false;  // else the one-CPU pair: A -> B against two chained calls
  };
  Case* spsc = find(Shape::kSpsc, true);
  Case* step_apart = find(Shape::kChainStep, true);
  Case* pair_same = find(Shape::kPair, false);
  Case* chained_same = find(Shape::kChained, false);
  std::mt19937 rng(seed + 6);
  std::vector<Unit> schedule;
  for (Case& c : cases) {
    if (&c == spsc || &c == step_apart || &c == pair_same || &c == chained_same) continue;
    for (int i = 0; i < reps; ++i) schedule.push_back(Unit{&c});
  }
  for (int i = 0; i < reps; ++i) {
    const bool swap = (rng() & 1) != 0;
    if (spsc != nullptr && step_apart != nullptr) {
      schedule.push_back(Unit{swap ? step_apart : spsc, swap ? spsc : step_apart, true});
    }
    schedule.push_back(Unit{swap ? chained_same : pair_same, swap ? pair_same : chained_same, false});
  }
  std::shuffle(schedule.begin(), schedule.end(), rng);
  std::vector<double> step_ratios, pair_ratios;
  for (const Unit& u : schedule) {
    sample(*u.first, sample_ms);
    if (u.second == nullptr) continue;
    sample(*u.second, sample_ms);
    if (u.step_pair) {
      const double floor = spsc->samples.back().ns_per_op;
      const double step = step_ns(step_apart->samples.back(), step_apart->long_samples.back());
      if (floor > 0) step_ratios.push_back(step / floor);
    } else {
      const double chained = chained_same->samples.back().ns_per_op;
      if (chained > 0) pair_ratios.push_back(pair_same->samples.back().ns_per_op / chained);
    }
  }

  GraphStepReport out;
  if (!step_ratios.empty()) out.step_to_spsc = median(step_ratios);
  if (!pair_ratios.empty()) out.pair_to_chained = median(pair_ratios);
  std::string& md = out.markdown;
  md += "### A compiled graph's step between two actors (median of " + std::to_string(reps) +
        ")\n\nApart: actor A on the first CPU, actor B on the second, the caller unpinned (the SPSC "
        "ring: its two threads on the two CPUs). One CPU: A, B and the caller on the first. `CPU`: CPU seconds "
        "per wall second, caller / other threads. A step: in each sample, with the same two actors, a " +
        std::to_string(kShortChain) + "-node chain's execution and then a " + std::to_string(kLongChain) +
        "-node chain's; a step is their difference over the nodes between them (median of the samples' "
        "own), and what is left of the short one is the execution's own cost (execute, the caller's "
        "wake-up).\n\n| | apart | CPU | one CPU | CPU |\n|---|---:|---:|---:|---:|\n";
  // A row's cell for one placement: the median of what figure makes of its case's samples.
  using Figure = std::vector<Sample> (*)(const Case&);
  auto cell = [&](const Case* c, Figure figure) {
    if (c == nullptr) return std::string(" – | |");
    const std::vector<Sample> v = figure(*c);
    std::string text = " ";  // appended, not added: g++ 12 warns (-Wrestrict) on a + chain here
    text += duration(time_of(v));
    text += " | ";
    text += fmt("%.2f", cpu_of(v, &Sample::caller_cpu));
    text += " / ";
    text += fmt("%.2f", cpu_of(v, &Sample::other_cpu));
    text += " |";
    return text;
  };
  auto row = [&](Shape shape, const std::string& what, Figure figure) {
    md += "| " + what + " |" + cell(find(shape, true), figure) + cell(find(shape, false), figure) + "\n";
  };
  const Figure samples = [](const Case& c) { return c.samples; };
  const std::string chain = "compiled graph, chain A/B/A/... of ";
  if (find(Shape::kSpsc, true) != nullptr) row(Shape::kSpsc, find(Shape::kSpsc, true)->what, samples);
  row(Shape::kChainStep, chain + std::to_string(kShortChain) + " nodes: one execution", samples);
  row(Shape::kChainStep, chain + std::to_string(kLongChain) + " nodes: one execution",
      [](const Case& c) { return c.long_samples; });
  row(Shape::kChainStep,
      "**a step between A and B**: the two executions' difference over " +
          std::to_string(kLongChain - kShortChain) + " nodes",
      steps_of);
  row(Shape::kChainStep,
      "an execution's own cost: the " + std::to_string(kShortChain) + "-node execution less its steps", own_costs_of);
  row(Shape::kPair, find(Shape::kPair, false)->what, samples);
  row(Shape::kChained, find(Shape::kChained, false)->what, samples);
  if (const Case* c = find(Shape::kSpsc, true)) out.spsc_round_trip_ns = time_of(c->samples);
  if (const Case* c = find(Shape::kChainStep, true)) out.step_apart_ns = time_of(steps_of(*c));
  out.pair_same_ns = time_of(find(Shape::kPair, false)->samples);
  out.chained_same_ns = time_of(find(Shape::kChained, false)->samples);
  return out;
}

}  // namespace compare
