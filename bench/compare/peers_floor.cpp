// peers_floor.cpp: the floors — what the hardware and the kernel cost with nothing on top.
//   spin ping-pong      two threads hand a sequence number back and forth through two
//                       cache lines, spinning: the cross-CPU floor (a cache-line transfer
//                       each way). It yields after ~1k pauses so it cannot starve a
//                       partner on its own CPU, but is not shown there: it is no floor there.
//   raw futex ping-pong the same hand-over, but every waiter sleeps in futex_wait at once
//                       and every hand-over is a futex_wake: the parked floor.
//   Vyukov MPSC         fire and forget only: a preallocated intrusive Vyukov queue of
//                       integers drained by a spinning consumer: the floor of a queue.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <memory>
#include <vector>

#include "peer.h"

namespace compare {
namespace {

inline void pause() noexcept { __builtin_ia32_pause(); }

// Spinner: spins ~1k pauses, then yields on every turn.
struct Spinner {
  int turns = 0;
  void once() noexcept {
    if (turns < 1024) {
      ++turns;
      pause();
    } else {
      std::this_thread::yield();
    }
  }
};

struct alignas(64) Word {
  std::atomic<uint32_t> v{0};
};

// SpinPingPong: req_ and resp_ carry sequence numbers; arg_/out_ are handed over with them
// (written before the release store, read after the acquire load that sees it).
class SpinPingPong final : public Peer {
 public:
  SpinPingPong() : worker_([this] { serve(); }) {}
  ~SpinPingPong() override {
    stop_.store(true, std::memory_order_release);
    req_.v.store(seq_ + 1, std::memory_order_release);
    worker_.join();
  }
  int64_t call(int64_t x) override {
    arg_ = x;
    const uint32_t s = ++seq_;
    req_.v.store(s, std::memory_order_release);
    Spinner spin;
    while (resp_.v.load(std::memory_order_acquire) != s) spin.once();
    return out_;
  }

 private:
  void serve() {
    uint32_t last = 0;
    for (;;) {
      Spinner spin;
      uint32_t s;
      while ((s = req_.v.load(std::memory_order_acquire)) == last) spin.once();
      if (stop_.load(std::memory_order_acquire)) return;
      last = s;
      out_ = arg_ + 1;
      resp_.v.store(s, std::memory_order_release);
    }
  }
  Word req_, resp_;
  int64_t arg_ = 0, out_ = 0;
  uint32_t seq_ = 0;  // the caller's
  std::atomic<bool> stop_{false};
  std::thread worker_;
};

long futex(std::atomic<uint32_t>& word, int op, uint32_t value) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), op | FUTEX_PRIVATE_FLAG, value, nullptr, nullptr, 0);
}

// FutexPingPong: as SpinPingPong, but each wait is futex_wait on the word while it holds
// the old value, and each hand-over a futex_wake (always: no waiter flag, the raw floor).
class FutexPingPong final : public Peer {
 public:
  FutexPingPong() : worker_([this] { serve(); }) {}
  ~FutexPingPong() override {
    stop_.store(true, std::memory_order_release);
    req_.v.store(seq_ + 1, std::memory_order_release);
    futex(req_.v, FUTEX_WAKE, 1);
    worker_.join();
  }
  int64_t call(int64_t x) override {
    arg_ = x;
    const uint32_t s = ++seq_;
    req_.v.store(s, std::memory_order_release);
    futex(req_.v, FUTEX_WAKE, 1);
    uint32_t r;
    while ((r = resp_.v.load(std::memory_order_acquire)) != s) futex(resp_.v, FUTEX_WAIT, r);
    return out_;
  }

 private:
  void serve() {
    uint32_t last = 0;
    for (;;) {
      uint32_t s;
      while ((s = req_.v.load(std::memory_order_acquire)) == last) futex(req_.v, FUTEX_WAIT, last);
      if (stop_.load(std::memory_order_acquire)) return;
      last = s;
      out_ = arg_ + 1;
      resp_.v.store(s, std::memory_order_release);
      futex(resp_.v, FUTEX_WAKE, 1);
    }
  }
  Word req_, resp_;
  int64_t arg_ = 0, out_ = 0;
  uint32_t seq_ = 0;
  std::atomic<bool> stop_{false};
  std::thread worker_;
};

// VyukovMpsc: Dmitry Vyukov's intrusive MPSC queue (push: one exchange; pop: plain loads)
// over nodes preallocated for a whole fire(); the consumer spins (then yields) when empty.
class VyukovMpsc final : public Peer {
 public:
  VyukovMpsc() : head_(&stub_), tail_(&stub_), worker_([this] { serve(); }) {}
  ~VyukovMpsc() override {
    stop_.store(true, std::memory_order_release);
    worker_.join();
  }
  int64_t call(int64_t) override { std::abort(); }  // fire and forget only
  int64_t fire(int64_t n) override {
    if (capacity_ < n) {  // every node of the last fire() was taken: none is in use
      nodes_ = std::make_unique<Node[]>(static_cast<size_t>(n));
      capacity_ = n;
    }
    const int64_t target = sent_ + n;
    for (int64_t i = 0; i < n; ++i) push(&nodes_[static_cast<size_t>(i)]);
    sent_ = target;
    Spinner spin;  // the nodes are reused by the next fire(): wait until all were taken
    while (count_.load(std::memory_order_acquire) != target) spin.once();
    return target;
  }

 private:
  struct Node {
    std::atomic<Node*> next{nullptr};
    int64_t value = 1;
  };
  void push(Node* n) {
    n->next.store(nullptr, std::memory_order_relaxed);
    Node* prev = head_.exchange(n, std::memory_order_acq_rel);
    prev->next.store(n, std::memory_order_release);
  }
  Node* pop() {  // the consumer only; the stub is re-pushed when the last node is taken
    Node* tail = tail_;
    Node* next = tail->next.load(std::memory_order_acquire);
    if (tail == &stub_) {
      if (next == nullptr) return nullptr;
      tail_ = next;
      tail = next;
      next = next->next.load(std::memory_order_acquire);
    }
    if (next != nullptr) {
      tail_ = next;
      return tail;
    }
    if (tail != head_.load(std::memory_order_acquire)) return nullptr;  // a push is half linked
    push(&stub_);
    next = tail->next.load(std::memory_order_acquire);
    if (next == nullptr) return nullptr;
    tail_ = next;
    return tail;
  }
  void serve() {
    int64_t count = 0;
    Spinner spin;
    while (!stop_.load(std::memory_order_acquire)) {
      if (Node* n = pop()) {
        count += n->value;
        count_.store(count, std::memory_order_release);
        spin = Spinner{};
      } else {
        spin.once();
      }
    }
  }
  Node stub_;
  alignas(64) std::atomic<Node*> head_;
  alignas(64) Node* tail_;  // the consumer's
  alignas(64) std::atomic<int64_t> count_{0};
  std::unique_ptr<Node[]> nodes_;  // the producer's
  int64_t capacity_ = 0;
  int64_t sent_ = 0;
  std::atomic<bool> stop_{false};
  std::thread worker_;
};

}  // namespace

void add_floor_peers(std::vector<PeerKind>& out) {
  out.push_back({"spin ping-pong", kRoundTrip, [] { return std::unique_ptr<Peer>(new SpinPingPong); }, false});
  out.push_back({"raw futex ping-pong", kRoundTrip | kAfterIdle, [] { return std::unique_ptr<Peer>(new FutexPingPong); }});
  out.push_back({"Vyukov MPSC (spinning)", kFire, [] { return std::unique_ptr<Peer>(new VyukovMpsc); }});
}

}  // namespace compare
