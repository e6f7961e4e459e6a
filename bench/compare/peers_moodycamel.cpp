// peers_moodycamel.cpp: moodycamel::BlockingConcurrentQueue — a worker thread blocks in
// wait_dequeue on a request queue (the queue's semaphore spins briefly, then sleeps).
//   moodycamel BlockingConcurrentQueue   answers on a reply queue the caller blocks on: a
//                                        burst's answers come back in order, as numbers,
//                                        with no future per call (future_per_call false)
//   moodycamel + a std::promise per call each request carries its promise; the caller
//                                        waits on its future: what a user who wants a
//                                        future per call builds on the queue
#include <vector>

#include "peer.h"

#ifdef COMPARE_HAVE_MOODYCAMEL
#include <concurrentqueue/blockingconcurrentqueue.h>

#include <future>
#include <limits>
#include <thread>

namespace compare {
namespace {

class Moodycamel final : public Peer {
 public:
  Moodycamel() : worker_([this] { serve(); }) {}
  ~Moodycamel() override {
    requests_.enqueue(kStop);
    worker_.join();
  }
  int64_t call(int64_t x) override {
    requests_.enqueue(x);
    int64_t y;
    replies_.wait_dequeue(y);
    return y;
  }
  void burst(int64_t* xs, int n) override {
    for (int i = 0; i < n; ++i) requests_.enqueue(xs[i]);
    for (int i = 0; i < n; ++i) replies_.wait_dequeue(xs[i]);  // one producer, one consumer: in order
  }
  int64_t fire(int64_t n) override {
    for (int64_t i = 0; i < n; ++i) requests_.enqueue(kIncrement);
    requests_.enqueue(kRead);
    int64_t y;
    replies_.wait_dequeue(y);
    return y;
  }

 private:
  // Three reserved values are commands; every other request is a number to answer.
  static constexpr int64_t kStop = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kIncrement = kStop + 1;
  static constexpr int64_t kRead = kStop + 2;
  void serve() {
    int64_t count = 0;  // the worker's
    for (;;) {
      int64_t x;
      requests_.wait_dequeue(x);
      if (x == kStop) return;
      if (x == kIncrement) {
        ++count;
      } else {
        replies_.enqueue(x == kRead ? count : x + 1);
      }
    }
  }
  moodycamel::BlockingConcurrentQueue<int64_t> requests_, replies_;
  std::thread worker_;
};

class MoodycamelPromise final : public Peer {
 public:
  MoodycamelPromise() : worker_([this] { serve(); }) {}
  ~MoodycamelPromise() override {
    requests_.enqueue(Request{0, nullptr});
    worker_.join();
  }
  int64_t call(int64_t x) override {
    std::promise<int64_t> p;  // on the caller's stack: the caller waits for it
    std::future<int64_t> f = p.get_future();
    requests_.enqueue(Request{x, &p});
    return f.get();
  }
  void burst(int64_t* xs, int n) override {
    promises_.clear();
    promises_.resize(static_cast<size_t>(n));
    futures_.clear();
    for (int i = 0; i < n; ++i) {
      futures_.push_back(promises_[static_cast<size_t>(i)].get_future());
      requests_.enqueue(Request{xs[i], &promises_[static_cast<size_t>(i)]});
    }
    for (int i = 0; i < n; ++i) xs[i] = futures_[static_cast<size_t>(i)].get();
  }

 private:
  struct Request {
    int64_t x;
    std::promise<int64_t>* answer;  // null: stop
  };
  void serve() {
    for (;;) {
      Request r;
      requests_.wait_dequeue(r);
      if (r.answer == nullptr) return;
      r.answer->set_value(r.x + 1);
    }
  }
  moodycamel::BlockingConcurrentQueue<Request> requests_;
  std::vector<std::promise<int64_t>> promises_;  // a burst's, made afresh for each burst
  std::vector<std::future<int64_t>> futures_;
  std::thread worker_;
};

}  // namespace

void add_moodycamel_peers(std::vector<PeerKind>& out) {
  PeerKind in_order{"moodycamel BlockingConcurrentQueue", kRoundTrip | kAfterIdle | kBurst | kFire,
                    [] { return std::unique_ptr<Peer>(new Moodycamel); }};
  in_order.future_per_call = false;
  out.push_back(std::move(in_order));
  out.push_back({"moodycamel + a std::promise per call", kRoundTrip | kBurst,
                 [] { return std::unique_ptr<Peer>(new MoodycamelPromise); }});
}

}  // namespace compare
#else
void compare::add_moodycamel_peers(std::vector<PeerKind>&) {}
#endif
