#include "core/lane.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include "core/cpu_relax.h"
#include "core/task.h"
#include "tether/tether.h"

namespace tether {
namespace {

uint64_t current_tid() noexcept { return static_cast<uint64_t>(syscall(SYS_gettid)); }


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
    while (Call* c = lane_->next(forever)) lane_->execute(c);
    set_current_thread_owner(nullptr);
  }

 private:
  std::shared_ptr<Lane> lane_;
  std::shared_ptr<void> keepalive_;
};

namespace {
std::atomic<uint64_t> g_next_lane_id{1};
}  // namespace

Lane::Lane(Options options)
    : options_(std::move(options)), id_(g_next_lane_id.fetch_add(1, std::memory_order_relaxed)), open_(!options_.gated) {}

bool Lane::is_inside() const noexcept {
  return current_thread_owner() == this || current_manual_lane() == id_;
}

Lane::~Lane() {
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

bool Lane::work_ready() const noexcept {
  return open_.load(std::memory_order_acquire) && mailbox_.maybe_nonempty();
}

void Lane::push(Call* c) noexcept {
  mailbox_.push(c);
  wake_one();
}

void Lane::wake_one() noexcept {
  if (sleepers_.load(std::memory_order_seq_cst) == 0) return;  // nobody parked: no syscall
  { std::lock_guard lock(mutex_); }
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
    closed_.store(true, std::memory_order_release);
    open_.store(true, std::memory_order_release);  // a closed lane drains (its calls fail or run)
  }
  cv_.notify_all();
}

Call* Lane::try_pop() {
  while (work_ready()) {
    Call* c;
    {
      Mailbox::ConsumerToken token(mailbox_);
      MailboxNode* n = mailbox_.pop(token);
      if (n == nullptr) return nullptr;  // a push is half linked: the caller retries
      c = static_cast<Call*>(n);
      if (!c->claimed_) return c;
    }
    c->unref();  // claimed: its canceller finishes it
  }
  return nullptr;
}

Call* Lane::next(const Deadline& deadline) {
  for (;;) {
    if (Call* c = try_pop()) return c;
    const bool closed = closed_.load(std::memory_order_acquire);
    if (closed && !mailbox_.maybe_nonempty()) return nullptr;
    if (work_ready()) {  // a producer is between its exchange and its link
      std::this_thread::yield();
      continue;
    }
    const auto now = Deadline::Clock::now();
    if (!deadline.forever() && now >= deadline.at()) return nullptr;
    auto spin_until = now + std::chrono::nanoseconds(options_.idle_spin_ns);
    if (!deadline.forever() && deadline.at() < spin_until) spin_until = deadline.at();
    SpinWait spin;
    while (!work_ready() && !closed_.load(std::memory_order_relaxed) && Deadline::Clock::now() < spin_until) {
      spin.once();
    }
    if (work_ready() || closed_.load(std::memory_order_acquire)) continue;
    std::unique_lock lock(mutex_);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    deadline.wait(cv_, lock, [&] { return work_ready() || closed_.load(std::memory_order_acquire); });
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }
}

void Lane::execute(Call* c) noexcept {
  c->run(*this);
  c->unref();
}

size_t Lane::cancel_queued(const std::function<bool(const Call&)>& pred) {
  std::vector<Call*> claimed;
  {
    Mailbox::ConsumerToken token(mailbox_);
    mailbox_.for_each_queued(token, [&](MailboxNode* n) {
      auto* c = static_cast<Call*>(n);
      if (!c->claimed_ && pred(*c)) {
        c->claimed_ = true;
        c->add_ref();
        claimed.push_back(c);
      }
    });
  }
  for (Call* c : claimed) {  // outside the token: cancel() runs user drops
    c->cancel();
    c->unref();
  }
  return claimed.size();
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
  while (Call* c = next(deadline)) execute(c);
  set_current_thread_owner(previous);
  running_manual_.store(false, std::memory_order_release);
  return closed_.load(std::memory_order_acquire) ? TETHER_E_SHUTDOWN : TETHER_OK;
}

void Lane::drain_here() {
  const void* previous = current_thread_owner();
  set_current_thread_owner(this);
  while (Call* c = try_pop()) execute(c);
  set_current_thread_owner(previous);
}

}  // namespace tether
