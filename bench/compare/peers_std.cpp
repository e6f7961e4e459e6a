// peers_std.cpp: what a C++ programmer has without a library.
//   hand-written executor  bench/baseline_executor.h: a std::thread, a std::deque of
//                          std::function under a std::mutex, a std::condition_variable,
//                          and a std::promise / std::future per answer.
//   std::async             a thread per call (std::launch::async) and its std::future.
#include <future>
#include <vector>

#include "../baseline_executor.h"
#include "peer.h"
#include "placement.h"

namespace compare {

void Peer::burst(int64_t*, int) { std::abort(); }
int64_t Peer::fire(int64_t) { std::abort(); }

namespace {

class HandWritten final : public Peer {
 public:
  int64_t call(int64_t x) override {
    std::promise<int64_t> p;  // on the caller's stack: the caller waits for it
    std::future<int64_t> f = p.get_future();
    ex_.post([&p, x] { p.set_value(x + 1); });
    return f.get();
  }
  void burst(int64_t* xs, int n) override {
    std::vector<std::future<int64_t>> fs;
    fs.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const int64_t x = xs[i];
      fs.push_back(ex_.submit([x] { return x + 1; }));
    }
    for (int i = 0; i < n; ++i) xs[i] = fs[static_cast<size_t>(i)].get();
  }
  int64_t fire(int64_t n) override {
    for (int64_t i = 0; i < n; ++i) ex_.post([this] { ++count_; });
    return ex_.submit([this] { return count_; }).get();
  }

 private:
  int64_t count_ = 0;  // the executor thread's
  tether_bench::BaselineExecutor ex_;
};

// StdAsync: the new thread inherits the caller's CPU; with the sides on different CPUs
// it moves itself to the worker's first (one system call inside the measured time).
class StdAsync final : public Peer {
 public:
  int64_t call(int64_t x) override { return start(x).get(); }
  void burst(int64_t* xs, int n) override {
    std::vector<std::future<int64_t>> fs;
    fs.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) fs.push_back(start(xs[i]));
    for (int i = 0; i < n; ++i) xs[i] = fs[static_cast<size_t>(i)].get();
  }

 private:
  static std::future<int64_t> start(int64_t x) {
    return std::async(std::launch::async, [x] {
      if (workers_apart()) pin_self_to_worker();
      return x + 1;
    });
  }
};

}  // namespace

void add_std_peers(std::vector<PeerKind>& out) {
  out.push_back({"hand-written mutex+cv+future", kRoundTrip | kAfterIdle | kBurst | kFire,
                 [] { return std::unique_ptr<Peer>(new HandWritten); }});
  out.push_back({"std::async", kRoundTrip | kAfterIdle | kBurst, [] { return std::unique_ptr<Peer>(new StdAsync); }});
}

}  // namespace compare
