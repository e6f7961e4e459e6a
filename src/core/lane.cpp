#include "core/lane.h"

#include <thread>
#include <utility>

#include "core/chaos.h"
#include "core/hot_path.h"
#include "core/pinned_lane.h"
#include "core/shared_lane.h"
#include "core/thread_role.h"
#include "core/time_slice.h"
#include "platform/platform.h"

namespace tether {
namespace {

std::atomic<uint64_t> g_next_lane_id{1};

}  // namespace

// Worker: the body of one lane thread: the kind's loop, as the lane's thread.
class Lane::Worker : public ThreadBody {
 public:
  Worker(std::shared_ptr<Lane> lane, std::shared_ptr<void> keepalive)
      : lane_(std::move(lane)), keepalive_(std::move(keepalive)) {}

  void run() noexcept override {
    lane_->consumer_tid_once();
    ask_for_serving_time_slice();  // a library thread, from its first call on: core/time_slice.h
    ServingAs serving(lane_.get());
    lane_->serve();
  }

 private:
  std::shared_ptr<Lane> lane_;
  std::shared_ptr<void> keepalive_;
};

std::shared_ptr<Lane> Lane::make(Options options) {
  if (options.threads <= 1) return std::make_shared<PinnedLane>(std::move(options));
  return std::make_shared<SharedLane>(std::move(options));
}

Lane::Lane(Options options, bool one_consumer)
    : options_(std::move(options)),
      id_(g_next_lane_id.fetch_add(1, std::memory_order_relaxed)),
      inbox_(one_consumer),
      open_(!options_.gated) {}

Lane::~Lane() { inbox_.cancel_everything(); }

bool Lane::is_inside() const noexcept {
  return this_thread_role().serves_lane(this, id_);
}

void Lane::consumer_tid_once() noexcept {
  uint64_t none = 0;
  tid_.compare_exchange_strong(none, platform::current_thread_id(), std::memory_order_acq_rel);
}

void Lane::start(ThreadGroup& group, std::shared_ptr<void> keepalive) {
  try {
    for (size_t i = 0; i < options_.threads; ++i) {
      ThreadOptions thread{options_.name, options_.stack_size, options_.cpu};
      group.spawn(thread, std::make_unique<Worker>(shared_from_this(), keepalive));
    }
  } catch (...) {
    close();
    throw;
  }
}

void Lane::push(Call* c) noexcept {
  if (LanePresence* p = presence()) p->pusher_at(current_cpu());  // a hint: core/spin_policy.h
  inbox_.push(c);
  wake_one();  // the push's exchange is seq_cst: no fence needed before reading sleepers_
  // A closed manual lane has nobody to run it: what reaches it is cancelled. Either
  // close()'s caller cancels after its seq_cst store of closed_ and sees c, or this load
  // (after the push's seq_cst exchange) sees closed_ and cancels c here.
  if (options_.threads == 0 && closed_.load(std::memory_order_seq_cst)) [[unlikely]] {
    (void)inbox_.cancel_all_queued();
  }
}

void Lane::wake_one() noexcept {
  chaos_point();
  if (sleepers_.load(std::memory_order_seq_cst) == 0) return;  // P2: nobody parked: no syscall
  wake_parked();
}

void Lane::open() {
  {
    std::lock_guard lock(mutex_);
    open_.store(true, std::memory_order_release);
  }
  cv_.notify_all();  // a shared lane's consumers wait on cv_
  wake_parked();     // a pinned lane's parks on sleepers_ (its fence orders the store first)
}

void Lane::close() {
  {
    std::lock_guard lock(mutex_);
    closed_.store(true, std::memory_order_seq_cst);  // pairs with push's load (manual lanes)
    open_.store(true, std::memory_order_release);  // a closed lane drains (its calls fail or run)
  }
  cv_.notify_all();
  wake_parked();
}

TETHER_HOT_PATH Lane::Take Lane::take(Work& w) {
  if (try_pop(w)) return Take::kWork;
  if (closed_and_empty()) return Take::kClosed;
  if (work_ready()) return Take::kRetry;
  return Take::kNothing;
}

void Lane::wait_for_link(SpinWait& spin, bool producer_here) noexcept {
  if (producer_here) {
    std::this_thread::yield();  // it cannot finish while this thread holds its CPU
  } else {
    spin.once();
  }
}

void Lane::drain_here() {
  ServingAs serving(this);
  Work w;
  while (try_pop(w)) execute(w);
}

}  // namespace tether
