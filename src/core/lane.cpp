#include "core/lane.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "core/asymmetric_fence.h"
#include "core/chaos.h"
#include "core/cpu_relax.h"
#include "core/task.h"
#include "tether/tether.h"

namespace tether {
namespace {

uint64_t current_tid() noexcept { return static_cast<uint64_t>(syscall(SYS_gettid)); }

std::atomic<uint64_t> g_next_lane_id{1};

// Entries the consumer takes from one source before it looks at the next: producers
// share the lane fairly, and a batch stays in the cache lines the producer just wrote.
constexpr uint32_t kBatch = 128;

// Convoy guard. A consumer that has caught up with a streaming producer reads the very
// cache lines the producer is writing (two entries share a line, and the published count
// changes on every call), so each call costs both threads a cache-line transfer. On this
// project's 2-vCPU VM that is cheap while the vCPUs sit close and costly when the host
// places them apart (a plain SPSC ring: 3 ns vs 50 ns an item). So once drain_ring has
// emptied its ring, it lets calls build up before it chases the producer again, while
// the count still grows (the producer is streaming) and nothing waits elsewhere in the
// lane: up to kBuildUp calls, checked kBuildUpShortPauses, then kBuildUpPauses pauses
// apart, kBuildUpTurns times at most. A lone call is run after the first, short check.
// Measured with the vCPUs apart: 28-30 M calls/s without, 39-43 with (the baseline 12).
constexpr uint64_t kBuildUp = 4096;
constexpr int kBuildUpTurns = 512;
constexpr int kBuildUpShortPauses = 4;
constexpr int kBuildUpPauses = 16;

// FastCallView: how cancel_queued's predicate sees a fast call (never run or cancelled).
class FastCallView final : public Call {
 public:
  explicit FastCallView(const void* owner) noexcept : Call(owner) {}
  void run(Lane&) noexcept override {}
  void cancel() noexcept override {}
};

size_t next_source(size_t s) noexcept { return s + 1 == kLaneSources ? 0 : s + 1; }

FastTarget* fast_target(const RingEntry& e) noexcept {
  return reinterpret_cast<FastTarget*>(e.word3 & ~RingEntry::kKindMask);
}

FastCall fast_call(const RingEntry& e, uintptr_t word0) noexcept {
  return FastCall{reinterpret_cast<tether_method_fn>(word0), reinterpret_cast<void*>(e.word1),
                  reinterpret_cast<tether_drop_fn>(e.word2)};
}

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
      open_(!options_.gated),
      idle_budget_ns_(options_.idle_spin_ns),
      presence_(has_rings_ ? LanePresence::acquire() : nullptr) {}

bool Lane::is_inside() const noexcept {
  return current_thread_owner() == this || current_manual_lane() == id_;
}

Lane::~Lane() {
  cancel_everything();
  for (std::atomic<CallRing*>& r : rings_) delete r.load(std::memory_order_acquire);
  if (presence_ != nullptr) LanePresence::release(presence_);
}

void Lane::cancel_everything() noexcept {
  // Only a manual lane nobody ran (or drained) can still hold calls here.
  std::vector<Call*> left;
  {
    Mailbox::ConsumerToken token(mailbox_);
    while (MailboxNode* n = mailbox_.pop(token)) left.push_back(static_cast<Call*>(n));
  }
  for (Call* c : left) {
    if (!c->claimed_) c->cancel();
    c->unref();
  }
  for (std::atomic<CallRing*>& slot : rings_) {
    CallRing* r = slot.load(std::memory_order_acquire);
    if (r == nullptr) continue;
    r->for_each_queued([](RingEntry& e) {
      const uintptr_t word0 = e.word0.load(std::memory_order_acquire);
      if (word0 == 0) return;
      if (e.kind() == RingEntry::kCall) {
        auto* c = reinterpret_cast<Call*>(word0);
        c->cancel();
        c->unref();
      } else if (e.kind() == RingEntry::kFast) {
        fast_target(e)->cancel_fast(fast_call(e, word0));
      }
    });
  }
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

SourceMarks Lane::read_marks() const noexcept {
  SourceMarks m;
  for (size_t s = 0; s < kLaneSources; ++s) {
    m[s] = static_cast<uint32_t>(published_[s].value.load(std::memory_order_acquire));
  }
  return m;
}

void Lane::push(Call* c) noexcept {
  if (has_rings_) {
    // Under push_mutex_, the mailbox's count follows its order: a ring entry that saw
    // count n waits for exactly the first n nodes.
    std::lock_guard lock(push_mutex_);
    c->marks = read_marks();
    mailbox_.push(c);
    std::atomic<uint64_t>& count = published_[kMailboxSource].value;
    count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  } else {
    mailbox_.push(c);
  }
  wake_one();  // the push's exchange is seq_cst: no fence needed before reading sleepers_
  // A closed manual lane has nobody to run it: what reaches it is cancelled. Either
  // close()'s caller cancels after its seq_cst store of closed_ and sees c, or this load
  // (after the push's seq_cst exchange) sees closed_ and cancels c here.
  if (options_.threads == 0 && closed_.load(std::memory_order_seq_cst)) [[unlikely]] {
    (void)cancel_queued([](const Call&) { return true; });
  }
}

CallRing* Lane::lease_ring() {
  if (!has_rings_) return nullptr;
  for (size_t k = 0; k < kLaneRings; ++k) {
    CallRing* r = rings_[k].load(std::memory_order_acquire);
    if (r == nullptr) {
      // Counted before it can be seen: a consumer that finds no ring may skip the heavy
      // fence when it parks (see next()).
      ring_count_.fetch_add(1, std::memory_order_seq_cst);
      auto made = std::make_unique<CallRing>(k, published_[k].value);
      if (rings_[k].compare_exchange_strong(r, made.get(), std::memory_order_acq_rel)) {
        r = made.release();
      } else {
        ring_count_.fetch_sub(1, std::memory_order_relaxed);  // another thread's ring is there
      }
    }
    if (r->try_lease()) return r;
  }
  return nullptr;
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

bool Lane::anything_queued() noexcept {
  if (mailbox_.maybe_nonempty()) return true;
  if (!has_rings_) return false;
  for (size_t s = 0; s < kLaneRings; ++s) {
    if (published_[s].value.load(std::memory_order_acquire) != consumed_[s]) return true;
  }
  return false;
}

bool Lane::work_ready() noexcept { return open_.load(std::memory_order_acquire) && anything_queued(); }

bool Lane::try_pop(Work& w) {
  if (!open_.load(std::memory_order_acquire)) return false;
  if (!has_rings_) return pop_shared(w);
  size_t s = current_;
  size_t empty = 0;  // sources found empty in a row
  for (size_t hops = 0; hops < 4 * kLaneSources && empty < kLaneSources; ++hops) {
    size_t blocked = kLaneSources;
    if (pop_source(s, w, blocked)) {
      if (++batch_ == kBatch) {
        batch_ = 0;
        current_ = next_source(s);
      } else {
        current_ = s;
      }
      return true;
    }
    batch_ = 0;
    if (blocked != kLaneSources) {  // the entry waits for another source: drain that one
      s = blocked;
      empty = 0;
    } else {
      s = next_source(s);
      ++empty;
    }
  }
  current_ = s;
  return false;
}

bool Lane::pop_source(size_t s, Work& w, size_t& blocked) {
  return s == kMailboxSource ? pop_mailbox(w, blocked) : pop_ring(s, w, blocked);
}

bool Lane::pop_shared(Work& w) {
  while (mailbox_.maybe_nonempty()) {
    Call* c;
    {
      Mailbox::ConsumerToken token(mailbox_);
      MailboxNode* n = mailbox_.pop(token);
      if (n == nullptr) return false;  // a push is half linked: the caller retries
      c = static_cast<Call*>(n);
      if (!c->claimed_) {
        w.call = c;
        w.target = nullptr;
        return true;
      }
    }
    c->unref();  // claimed: its canceller finishes it
  }
  return false;
}

bool Lane::pop_mailbox(Work& w, size_t& blocked) {
  while (mailbox_.maybe_nonempty()) {
    Call* c;
    {
      Mailbox::ConsumerToken token(mailbox_);
      MailboxNode* n = mailbox_.peek(token);
      if (n == nullptr) return false;
      const size_t waits_on = first_unreached(n->marks, consumed_, kMailboxSource);
      if (waits_on != kLaneSources) {
        blocked = waits_on;
        return false;
      }
      if (mailbox_.pop(token) == nullptr) return false;  // half linked: retried soon
      ++consumed_[kMailboxSource];
      c = static_cast<Call*>(n);
      if (!c->claimed_) {
        w.call = c;
        w.target = nullptr;
        return true;
      }
    }
    c->unref();  // claimed: its canceller finishes it
  }
  return false;
}

bool Lane::pop_ring(size_t s, Work& w, size_t& blocked) {
  CallRing* r = rings_[s].load(std::memory_order_acquire);
  if (r == nullptr) return false;
  while (RingEntry* e = r->peek()) {
    const uintptr_t word3 = e->word3;
    const auto kind = static_cast<RingEntry::Kind>(word3 & RingEntry::kKindMask);
    if (kind == RingEntry::kMarks) {
      const size_t waits_on = first_unreached(e->marks(), consumed_, s);
      if (waits_on != kLaneSources) {
        blocked = waits_on;
        return false;
      }
      step_ring(*r);
      continue;
    }
    step_ring(*r);
    const uintptr_t word0 = e->word0.load(std::memory_order_acquire);  // after the step: see step_ring
    if (word0 == 0) continue;  // claimed by a canceller, who finishes it
    if (kind == RingEntry::kCall) {
      w.call = reinterpret_cast<Call*>(word0);
      w.target = nullptr;
    } else {
      w.call = nullptr;
      w.target = fast_target(*e);
      w.fast = fast_call(*e, word0);
    }
    return true;
  }
  return false;
}

bool Lane::drain_ring() noexcept {
  const size_t s = current_;
  if (s >= kLaneRings) return false;
  CallRing* r = rings_[s].load(std::memory_order_acquire);
  if (r == nullptr || !open_.load(std::memory_order_acquire)) return false;
  if (caught_up_) build_up(*r);
  uint32_t ran = 0;
  caught_up_ = false;
  while (ran < kBatch) {
    RingEntry* e = r->peek();
    if (e == nullptr) {
      caught_up_ = true;
      if (work_elsewhere(s)) {  // emptied: the others' turn now, not after a full batch
        current_ = next_source(s);
        batch_ = 0;
      }
      break;
    }
    const uintptr_t word3 = e->word3;
    const uintptr_t kind = word3 & RingEntry::kKindMask;
    if (kind == RingEntry::kMarks) {
      if (first_unreached(e->marks(), consumed_, s) != kLaneSources) break;  // next() drains that source
      step_ring(*r);
      continue;
    }
    step_ring(*r);
    const uintptr_t word0 = e->word0.load(std::memory_order_acquire);  // after the step: see step_ring
    if (word0 == 0) continue;  // claimed by a canceller, who finishes it
    ++ran;
    if (kind == RingEntry::kFast) {
      fast_target(*e)->run_fast(*this, fast_call(*e, word0));
    } else {
      auto* c = reinterpret_cast<Call*>(word0);
      c->run(*this);
      c->unref();
    }
  }
  if (ran == kBatch) {  // the others' turn
    current_ = next_source(s);
    batch_ = 0;
  }
  return ran != 0;
}

void Lane::build_up(CallRing& r) noexcept {
  uint64_t n = r.unread_count();
  for (int turn = 0; n != 0 && n < kBuildUp && turn < kBuildUpTurns; ++turn) {
    const int pauses = turn == 0 ? kBuildUpShortPauses : kBuildUpPauses;
    for (int i = 0; i < pauses; ++i) cpu_relax();
    const uint64_t more = r.unread_count();
    if (more == n || work_elsewhere(r.source())) return;  // the producer paused, or others wait
    n = more;
  }
}

bool Lane::work_elsewhere(size_t s) noexcept {
  if (mailbox_.maybe_nonempty()) return true;
  const size_t rings = std::min<size_t>(ring_count_.load(std::memory_order_relaxed), kLaneRings);
  for (size_t k = 0; k < rings; ++k) {
    if (k != s && published_[k].value.load(std::memory_order_acquire) != consumed_[k]) return true;
  }
  return false;
}

void Lane::meet_canceller(CallRing& ring, CallRing::Block* left) noexcept {
  // A canceller may have claimed the entry: wait until it is done, so its claim is
  // visible, and recycle the block only once it no longer walks there.
  Mailbox::ConsumerToken token(mailbox_);
  if (left != nullptr) ring.recycle(left);
}

bool Lane::next(Work& w, const Deadline& deadline) {
  // C1..C8 follow the state table in lane.h.
  for (;;) {
    if (try_pop(w)) return true;
    const bool closed = closed_.load(std::memory_order_acquire);
    if (closed && !anything_queued()) return false;
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
    if (ring_count_.load(std::memory_order_seq_cst) != 0) {
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

void Lane::execute(Work& w) noexcept {
  if (w.call != nullptr) {
    w.call->run(*this);
    w.call->unref();
  } else {
    w.target->run_fast(*this, w.fast);
  }
}

size_t Lane::cancel_queued(const std::function<bool(const Call&)>& pred) {
  std::vector<Call*> shared;   // claimed in the mailbox: a second reference each
  std::vector<Call*> owned;    // claimed in a ring: ours
  std::vector<std::pair<FastTarget*, FastCall>> fast;
  // Whatever was claimed is cancelled, even if a vector cannot grow midway.
  struct Finish {
    std::vector<Call*>& shared;
    std::vector<Call*>& owned;
    std::vector<std::pair<FastTarget*, FastCall>>& fast;
    ~Finish() {  // outside the token: cancel() runs user drops
      for (Call* c : shared) {
        c->cancel();
        c->unref();
      }
      for (Call* c : owned) {
        c->cancel();
        c->unref();
      }
      for (auto& [target, call] : fast) target->cancel_fast(call);
    }
  } finish{shared, owned, fast};
  {
    Mailbox::ConsumerToken token(mailbox_);
    mailbox_.for_each_queued(token, [&](MailboxNode* n) {
      auto* c = static_cast<Call*>(n);
      if (!c->claimed_ && pred(*c)) {
        shared.push_back(c);
        c->claimed_ = true;
        c->add_ref();
      }
    });
    if (has_rings_ && ring_count_.load(std::memory_order_acquire) != 0) {
      struct Cancelling {
        std::atomic<bool>& flag;
        ~Cancelling() { flag.store(false, std::memory_order_release); }
      } cancelling{cancelling_};
      cancelling_.store(true, std::memory_order_relaxed);
      heavy_fence();  // pairs with step_ring's light_fence: the consumer's position is final
      for (std::atomic<CallRing*>& slot : rings_) {
        CallRing* r = slot.load(std::memory_order_acquire);
        if (r == nullptr) continue;
        r->for_each_queued([&](RingEntry& e) {
          const uintptr_t word0 = e.word0.load(std::memory_order_acquire);
          if (word0 == 0 || e.kind() == RingEntry::kMarks) return;
          if (e.kind() == RingEntry::kCall) {
            auto* c = reinterpret_cast<Call*>(word0);
            if (!pred(*c)) return;
            owned.push_back(c);
          } else {
            FastTarget* target = fast_target(e);
            if (!pred(FastCallView(target->fast_owner()))) return;
            fast.emplace_back(target, fast_call(e, word0));
          }
          e.word0.store(0, std::memory_order_release);  // claimed: the consumer steps over it
        });
      }
    }
  }
  return shared.size() + owned.size() + fast.size();
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
