#include "core/thread_group.h"

#include <atomic>
#include <cerrno>
#include <string>

#include "core/control_thread.h"
#include "core/status_error.h"
#include "core/thread_exit.h"
#include "tether/tether.h"

namespace tether {
namespace {

constexpr size_t kOsNameMax = 15;

// Library threads created and not yet released (the control thread never is).
std::atomic<size_t> g_unjoined{0};

// release_ended: t's exit notice came (ThreadGroup): released as the platform does it
// (POSIX: detached, the OS frees it once the C library's teardown of it is over).
void release_ended(const platform::Thread& t) noexcept {
  platform::release_ended_thread(t);
  g_unjoined.fetch_sub(1, std::memory_order_acq_rel);
}

// Creations left before an injected failure; UINT32_MAX = none armed.
std::atomic<uint32_t> g_creates_before_failure{UINT32_MAX};

// injected_failure: consumes one creation of the armed countdown; true when this one fails.
bool injected_failure() noexcept {
  uint32_t left = g_creates_before_failure.load(std::memory_order_relaxed);
  while (left != UINT32_MAX) {
    const uint32_t next = left == 0 ? UINT32_MAX : left - 1;
    if (g_creates_before_failure.compare_exchange_weak(left, next, std::memory_order_relaxed)) return left == 0;
  }
  return false;
}

// The exit notice tells the thread's owner it exited. It runs last at the thread's end
// (thread_exit.h), after every thread-local destructor and library cleanup, so the owner
// hears of the exit only once the thread's own work, its destructors included, is done.
void on_thread_exit(void* raw) noexcept {
  auto* hook = static_cast<std::shared_ptr<ThreadExitHook>*>(raw);
  (*hook)->exited(platform::current_thread());
  delete hook;
}

// StartData: what a new thread needs, all of it allocated before the thread starts so the
// thread itself never allocates before its body runs (nothing could report it there).
struct StartData {
  std::string os_name;
  std::unique_ptr<ThreadBody> body;
  std::unique_ptr<std::shared_ptr<ThreadExitHook>> on_exit;  // the exit notice's argument
};

// BodyEnd: when the body returns, or a runner's callback ends the thread (ThreadBody),
// the body (and what it holds) dies, then the exit notice goes out if it is not armed.
struct BodyEnd {
  std::unique_ptr<StartData> start;
  std::shared_ptr<ThreadExitHook>* unarmed_hook;
  ~BodyEnd() {
    start.reset();
    if (unarmed_hook != nullptr) on_thread_exit(unarmed_hook);
  }
};

void thread_main(void* raw) {
  BodyEnd end{std::unique_ptr<StartData>(static_cast<StartData*>(raw)), nullptr};
  std::shared_ptr<ThreadExitHook>* hook = end.start->on_exit.release();
  // Arming may need memory (a POSIX key past the first 32): without it, the notice is
  // given when the body ends instead (before this thread's TLS destructors).
  if (hook != nullptr && !set_exit_notice(&on_thread_exit, hook)) end.unarmed_hook = hook;
  platform::set_current_thread_name(end.start->os_name);
  end.start->body->run();
}

std::string cpu_refused(int cpu) {
  return "cpu " + std::to_string(cpu) + " is not a CPU this process may run on (allowed: " + platform::allowed_cpus() + ")";
}

}  // namespace

size_t unjoined_threads() noexcept { return g_unjoined.load(std::memory_order_acquire); }

void forget_parent_threads() noexcept { g_unjoined.store(0, std::memory_order_relaxed); }

void fail_thread_creates_after(uint32_t successes) noexcept {
  g_creates_before_failure.store(successes, std::memory_order_relaxed);
}

std::string os_visible_name(const std::string& name) {
  if (name.size() <= kOsNameMax) return name;
  size_t cut = kOsNameMax;
  // Back off over UTF-8 continuation bytes so the OS name stays valid text.
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
  return name.substr(0, cut);
}

platform::Thread start_os_thread(const ThreadOptions& options, std::unique_ptr<ThreadBody> body,
                                 std::shared_ptr<ThreadExitHook> on_exit) {
  const size_t min_stack = platform::min_stack_size();
  if (options.stack_size != 0 && options.stack_size < min_stack) {
    throw StatusError(TETHER_E_INVALID_ARGUMENT, "stack_size " + std::to_string(options.stack_size) +
                                                     " is below the platform minimum " + std::to_string(min_stack));
  }
  if (options.cpu >= 0 && !platform::cpu_in_range(options.cpu)) {
    throw StatusError(TETHER_E_INVALID_ARGUMENT, cpu_refused(options.cpu));
  }
  if (injected_failure()) {
    throw StatusError(TETHER_E_THREAD_CREATE, "cannot create thread '" + options.name + "': injected failure");
  }
  auto start = std::make_unique<StartData>();
  start->os_name = os_visible_name(options.name);
  start->body = std::move(body);
  if (on_exit) start->on_exit = std::make_unique<std::shared_ptr<ThreadExitHook>>(std::move(on_exit));
  // Whether the process may run on the CPU is the kernel's to say, for the new thread:
  // the creating thread may be pinned elsewhere, and so may the main thread.
  platform::Thread thread;
  std::string reason;
  switch (platform::start_thread(options.stack_size, options.cpu, &thread_main, start.get(), &thread, &reason)) {
    case platform::StartResult::kStarted:
      break;
    case platform::StartResult::kNoMemory:
      throw StatusError(TETHER_E_NO_MEMORY, "no memory for the attributes of thread '" + options.name + "'");
    case platform::StartResult::kStackSizeUnusable:
      throw StatusError(TETHER_E_INVALID_ARGUMENT,
                        "stack_size " + std::to_string(options.stack_size) + " is not usable");
    case platform::StartResult::kCannotPin:
      throw StatusError(TETHER_E_INVALID_ARGUMENT, cpu_refused(options.cpu));
    case platform::StartResult::kRefused:
      throw StatusError(TETHER_E_THREAD_CREATE, "cannot create thread '" + options.name + "': " + reason);
  }
  (void)start.release();  // thread_main owns it now
  return thread;
}

void ThreadGroup::spawn(const ThreadOptions& options, std::unique_ptr<ThreadBody> body) {
  // Everything that can fail comes before the thread starts: the control thread that
  // will reap it, and room for its entry. Once the thread started, nothing throws.
  ControlThread::instance().start();
  // mutex_ is held across the creation so the new thread's exit notice finds its entry.
  std::lock_guard lock(mutex_);
  if (threads_.size() == threads_.capacity()) threads_.reserve(2 * threads_.size() + 4);
  g_unjoined.fetch_add(1, std::memory_order_acq_rel);
  try {
    const platform::Thread t = start_os_thread(options, std::move(body), shared_from_this());
    threads_.push_back(Entry{t, false});  // no allocation: reserved above
  } catch (...) {
    g_unjoined.fetch_sub(1, std::memory_order_acq_rel);
    throw;
  }
  ++running_;
}

void ThreadGroup::ReapJob::run() noexcept {
  std::shared_ptr<ThreadGroup> group;
  {
    std::lock_guard lock(group_->mutex_);
    group = std::move(group_->reap_keepalive_);
  }
  group->reap();  // the group may die with `group`, after its last use
}

void ThreadGroup::schedule_reap_locked() noexcept {
  reap_scheduled_ = true;
  reap_keepalive_ = shared_from_this();  // no allocation: the control block exists
}

void ThreadGroup::exited(const platform::Thread& self) noexcept {
  bool schedule = false;
  bool waited_for = false;
  {
    std::lock_guard lock(mutex_);
    --running_;
    for (Entry& e : threads_) {
      if (platform::same_thread(e.thread, self)) e.exited = true;  // absent: join_all already has it
    }
    if (!reap_scheduled_ && (running_ > 0 || orphaned_)) {
      schedule_reap_locked();
      schedule = true;
    }
    waited_for = end_waiters_ != 0;
  }
  if (waited_for) cv_.notify_all();  // unlocked: the woken joiner takes mutex_ at once
  if (schedule) ControlThread::instance().post(reap_job_);
}

bool ThreadGroup::claim_exited_locked(platform::Thread* out) noexcept {
  const platform::Thread self = platform::current_thread();
  for (auto it = threads_.begin(); it != threads_.end(); ++it) {
    // Never the calling thread: a job run on an exiting thread must not release itself.
    if (!it->exited || platform::same_thread(it->thread, self)) continue;
    *out = it->thread;
    threads_.erase(it);
    return true;
  }
  return false;
}

bool ThreadGroup::others_left_locked() const noexcept {
  const platform::Thread self = platform::current_thread();
  for (const Entry& e : threads_) {
    if (!platform::same_thread(e.thread, self)) return true;
  }
  return false;
}

void ThreadGroup::reap() noexcept {
  std::unique_lock lock(mutex_);
  for (platform::Thread t; claim_exited_locked(&t);) {
    lock.unlock();
    release_ended(t);
    lock.lock();
  }
  reap_scheduled_ = false;
  cv_.notify_all();
}

void ThreadGroup::join_all() {
  // A thread of the group that joins it (an object released from one of its own nested
  // threads) cannot wait for its own end: it is left to the control thread, which
  // releases it once it has ended (orphaned_ makes its exit notice schedule that).
  // Wait protocol (cv_ under mutex_):
  //   joiner                                   | exiting thread (exited)
  //   a reap runs (reap_scheduled_): wait      | the reap ends: notify_all
  //   an entry has ended: claim it, release it |
  //   none has, others left: end_waiters_ + 1, | marks its entry, reads end_waiters_ under
  //     wait; - 1 once woken                   |   mutex_: nonzero -> notify_all
  //   no other entry left: done                |
  // The joiner's predicate and the exiting thread's mark and read are under mutex_, so
  // either the joiner saw the mark or the exiting thread saw it waiting.
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return !reap_scheduled_; });  // a reap owns the thread it claimed
    platform::Thread t;
    if (claim_exited_locked(&t)) {
      lock.unlock();
      release_ended(t);
      lock.lock();
      continue;
    }
    if (!others_left_locked()) {
      if (!threads_.empty()) orphaned_ = true;  // what is left is this thread: see above
      return;  // every other thread spawned (also by those released) has ended
    }
    ++end_waiters_;
    cv_.wait(lock);  // an exit notice, or a reap's end; the loop looks again
    --end_waiters_;
  }
}

bool ThreadGroup::orphaned() const {
  std::lock_guard lock(mutex_);
  return orphaned_;
}

void ThreadGroup::orphan() {
  bool schedule = false;
  {
    std::lock_guard lock(mutex_);
    orphaned_ = true;
    for (const Entry& e : threads_) {
      if (e.exited && !reap_scheduled_) {
        schedule_reap_locked();
        schedule = true;
      }
    }
  }
  if (schedule) ControlThread::instance().post(reap_job_);
}

size_t ThreadGroup::running() const {
  std::lock_guard lock(mutex_);
  return running_;
}

}  // namespace tether
