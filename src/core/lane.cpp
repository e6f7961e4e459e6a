#include "core/lane.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "core/asymmetric_fence.h"
#include "core/chaos.h"
#include "core/cpu_relax.h"
#include "core/task.h"
#include "platform/platform.h"
#include "tether/tether.h"

namespace tether {
namespace {

uint64_t current_tid() noexcept { return platform::current_thread_id(); }

std::atomic<uint64_t> g_next_lane_id{1};

}  // namespace

// Worker: the body of one lane thread.
class Lane::Worker : public ThreadBody {
 public:
  Worker(std::shared_ptr<Lane> lane, std::shared_ptr<void> keepalive)
      : lane_(std::move(lane)), keepalive_(std::move(keepalive)) {}

  void run() noexcept override {
    uint64_t none = 0;
    lane_->tid_.compare_exchange_strong(none, current_tid(), std::memory_order_acq_rel);
    set_current_thread_owner(lane_.get());
    const Deadline forever = Deadline::after(-1);
    Work w;
    for (;;) {
      if (lane_->drain_ring()) continue;
      if (!lane_->next(w, forever)) break;
      lane_->execute(w);
    }
    set_current_thread_owner(nullptr);
  }

 private:
  std::shared_ptr<Lane> lane_;
  std::shared_ptr<void> keepalive_;
};

Lane::Lane(Options options)
    : options_(std::move(options)),
      id_(g_next_lane_id.fetch_add(1, std::memory_order_relaxed)),
      has_rings_(options_.threads <= 1),
      inbox_(has_rings_),
      open_(!options_.gated),
      idle_budget_ns_(options_.idle_spin_ns),
      presence_(has_rings_ ? LanePresence::acquire() : nullptr) {}

bool Lane::is_inside() const noexcept {
  return current_thread_owner() == this || current_manual_lane() == id_;
}

Lane::~Lane() {
  inbox_.cancel_everything();
  if (presence_ != nullptr) LanePresence::release(presence_);
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

void Lane::wake_parked() noexcept {
  // P3 (see the state table in lane.h). One consumer: the first producer to clear the
  // mark wakes it; the others need not, it is waking (each would pay a lock and a signal
  // while it does). Several consumers: every push may need a thread of its own.
  if (has_rings_) {
    // Pairs with the consumer's fence after C2: a producer whose clear lands before the
    // consumer's mark in sleepers_'s order has its publication seen by the consumer's C5
    // (the ring side published with only a light fence; this slow path pays the real one).
    fence_detail::full_fence();  // mfence: TSan does not model std fences (asymmetric_fence.cpp)
    chaos_point();
    if (sleepers_.exchange(0, std::memory_order_seq_cst) == 0) return;
  }
  chaos_point();
  { std::lock_guard lock(mutex_); }  // P4: the consumer is in cv_.wait, or has yet to lock
  cv_.notify_one();
}

void Lane::open() {
  {
    std::lock_guard lock(mutex_);
    open_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

void Lane::close() {
  {
    std::lock_guard lock(mutex_);
    closed_.store(true, std::memory_order_seq_cst);  // pairs with push's load (manual lanes)
    open_.store(true, std::memory_order_release);  // a closed lane drains (its calls fail or run)
  }
  cv_.notify_all();
}

bool Lane::next(Work& w, const Deadline& deadline) {
  // C1..C8 follow the state table in lane.h.
  for (;;) {
    if (try_pop(w)) return true;
    const bool closed = closed_.load(std::memory_order_acquire);
    if (closed && !inbox_.anything_queued()) return false;
    if (work_ready()) {  // a producer is between its exchange and its link
      std::this_thread::yield();
      continue;
    }
    const auto now = Deadline::Clock::now();
    if (!deadline.forever() && now >= deadline.at()) return false;
    const int64_t budget = idle_spin_budget();
    auto spin_until = Deadline::saturating_after(now, budget);
    if (!deadline.forever() && deadline.at() < spin_until) spin_until = deadline.at();
    SpinWait spin;  // C1
    while (!work_ready() && !closed_.load(std::memory_order_relaxed) && Deadline::Clock::now() < spin_until) {
      spin.once();
    }
    const bool arrived = work_ready() || closed_.load(std::memory_order_acquire);
    if (has_rings_ && budget > 0) {
      idle_budget_ns_ = arrived ? AdaptiveBudget::grown(idle_budget_ns_, options_.idle_spin_ns)
                                : AdaptiveBudget::shrunk(idle_budget_ns_, std::min(options_.idle_spin_ns, kIdleSpinMinNs));
    }
    if (arrived) continue;
    if (presence_ != nullptr) presence_->consumer_parks();
    if (has_rings_) {  // C2: announce
      sleepers_.store(1, std::memory_order_seq_cst);  // a waker sets it back to 0 (P3)
    } else {
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
    }
    chaos_point();
    // C3. A ring producer reads sleepers_ after only a light fence: make it a full one. A
    // ring made after this load counts itself first (lease_ring), and its producers'
    // seq_cst load of sleepers_ then sees ours.
    if (inbox_.rings_made() != 0) {
      heavy_fence();
    } else {
      fence_detail::full_fence();  // mfence: TSan does not model std fences (asymmetric_fence.cpp)
    }
    chaos_point();
    {
      std::unique_lock lock(mutex_);  // C4
      chaos_point();
      // C5: work or a close since the announcement: do not wait. C6 (one consumer): a
      // producer cleared the mark, so it owes a notify that may already have been given
      // (before we locked): waiting now could be for ever. Go round and announce afresh.
      const bool wait = !work_ready() && !closed_.load(std::memory_order_acquire) &&
                        (!has_rings_ || sleepers_.load(std::memory_order_seq_cst) != 0);
      if (wait) {  // C7
        if (deadline.forever()) {
          cv_.wait(lock);
        } else {
          (void)cv_.wait_until(lock, deadline.at());
        }
      }
    }
    // C8: awake; producers need not wake us until we announce again.
    if (has_rings_) {
      sleepers_.store(0, std::memory_order_relaxed);
      presence_->consumer_at(current_cpu());
    } else {
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
}

int64_t Lane::idle_spin_budget() noexcept {
  if (!has_rings_) return options_.idle_spin_ns;
  const int32_t cpu = current_cpu();
  presence_->consumer_at(cpu);
  if (cpu >= 0 && presence_->waiter_cpu() == cpu) return 0;  // the next push comes from this CPU
  return AdaptiveBudget::probe(idle_spins_) ? options_.idle_spin_ns : idle_budget_ns_;
}

bool Lane::is_owner() const noexcept {
  const uint64_t owner = tid_.load(std::memory_order_acquire);
  return owner != 0 && owner == current_tid();
}

int32_t Lane::run_manual(Deadline deadline) {
  uint64_t none = 0;
  const uint64_t self = current_tid();
  if (!tid_.compare_exchange_strong(none, self, std::memory_order_acq_rel) && none != self) {
    return TETHER_E_WRONG_STATE;  // another thread drives this executor
  }
  set_current_manual_lane(id_);
  if (running_manual_.exchange(true, std::memory_order_acq_rel)) return TETHER_E_WRONG_STATE;  // nested run
  const void* previous = current_thread_owner();
  set_current_thread_owner(this);
  Work w;
  while (next(w, deadline)) execute(w);
  set_current_thread_owner(previous);
  running_manual_.store(false, std::memory_order_release);
  return closed_.load(std::memory_order_acquire) ? TETHER_E_SHUTDOWN : TETHER_OK;
}

void Lane::drain_here() {
  const void* previous = current_thread_owner();
  set_current_thread_owner(this);
  Work w;
  while (try_pop(w)) execute(w);
  set_current_thread_owner(previous);
}

}  // namespace tether
