// peers_tbb.cpp: oneTBB — a task_arena of concurrency 1 (one worker joins it, none is
// reserved for the caller), task_arena::enqueue and a std::promise per answer. oneTBB
// makes its workers when it likes, so an observer pins each to the placement's worker
// CPUs as it enters the arena.
#include <vector>

#include "peer.h"

#ifdef COMPARE_HAVE_TBB
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_scheduler_observer.h>

#include <atomic>
#include <future>

#include "placement.h"

namespace compare {
namespace {

// Pinner: moves a worker entering the arena to the placement's CPUs, once per placement.
class Pinner final : public oneapi::tbb::task_scheduler_observer {
 public:
  explicit Pinner(oneapi::tbb::task_arena& arena) : task_scheduler_observer(arena) { observe(true); }
  ~Pinner() override { observe(false); }
  void on_scheduler_entry(bool is_worker) override {
    thread_local unsigned pinned_for = 0;
    if (!is_worker || pinned_for == placement_generation()) return;
    pin_self_to_worker();
    pinned_for = placement_generation();
  }
};

class Tbb final : public Peer {
 public:
  Tbb() : arena_(1, 0), pinner_(arena_) {}
  int64_t call(int64_t x) override {
    std::promise<int64_t> p;
    std::future<int64_t> f = p.get_future();
    arena_.enqueue([&p, x] { p.set_value(x + 1); });
    return f.get();
  }
  void burst(int64_t* xs, int n) override {
    std::vector<std::promise<int64_t>> ps(static_cast<size_t>(n));
    std::vector<std::future<int64_t>> fs;
    fs.reserve(ps.size());
    for (int i = 0; i < n; ++i) {
      std::promise<int64_t>* p = &ps[static_cast<size_t>(i)];
      fs.push_back(p->get_future());
      arena_.enqueue([p, x = xs[i]] { p->set_value(x + 1); });
    }
    for (int i = 0; i < n; ++i) xs[i] = fs[static_cast<size_t>(i)].get();
  }
  int64_t fire(int64_t n) override {
    // enqueue is only roughly FIFO: the increment that reaches the target answers.
    // Relaxed is enough for the count (concurrency 1 runs one task at a time, though not
    // always on the same worker); the promise orders the answer.
    const int64_t target = count_.load(std::memory_order_relaxed) + n;
    std::promise<int64_t> p;
    std::future<int64_t> f = p.get_future();
    for (int64_t i = 0; i < n; ++i) {
      arena_.enqueue([this, &p, target] {
        if (count_.fetch_add(1, std::memory_order_relaxed) + 1 == target) p.set_value(target);
      });
    }
    return f.get();
  }

 private:
  // Enough workers for the arena whatever CPU mask the process had when oneTBB started.
  static oneapi::tbb::global_control& Parallelism() {
    static oneapi::tbb::global_control c(oneapi::tbb::global_control::max_allowed_parallelism, 2);
    return c;
  }
  [[maybe_unused]] oneapi::tbb::global_control& parallelism_ = Parallelism();
  std::atomic<int64_t> count_{0};
  oneapi::tbb::task_arena arena_;
  Pinner pinner_;
};

}  // namespace

void add_tbb_peers(std::vector<PeerKind>& out) {
  out.push_back({"oneTBB task_arena", kRoundTrip | kAfterIdle | kBurst | kFire,
                 [] { return std::unique_ptr<Peer>(new Tbb); }});
}

}  // namespace compare
#else
void compare::add_tbb_peers(std::vector<PeerKind>&) {}
#endif
