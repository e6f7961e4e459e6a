// peers_moodycamel.cpp: moodycamel::BlockingConcurrentQueue — a worker thread blocks in
// wait_dequeue on a request queue and answers on a reply queue the caller blocks on (the
// queue's semaphore spins briefly, then sleeps).
#include <vector>

#include "peer.h"

#ifdef COMPARE_HAVE_MOODYCAMEL
#include <concurrentqueue/blockingconcurrentqueue.h>

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

}  // namespace

void add_moodycamel_peers(std::vector<PeerKind>& out) {
  out.push_back({"moodycamel BlockingConcurrentQueue", kRoundTrip | kAfterIdle | kBurst | kFire,
                 [] { return std::unique_ptr<Peer>(new Moodycamel); }});
}

}  // namespace compare
#else
void compare::add_moodycamel_peers(std::vector<PeerKind>&) {}
#endif
