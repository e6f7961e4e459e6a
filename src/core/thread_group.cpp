#include "core/thread_group.h"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/control_thread.h"
#include "core/status_error.h"
#include "core/thread_exit.h"
#include "tether/tether.h"

namespace tether {
namespace {

constexpr size_t kOsNameMax = 15;

// Library threads created and not yet joined (the control thread is never joined).
std::atomic<size_t> g_unjoined{0};

void join_thread(pthread_t t) noexcept {
  pthread_join(t, nullptr);
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
  (*hook)->exited(pthread_self());
  delete hook;
}

// StartData: what a new thread needs, all of it allocated before pthread_create so the
// thread itself never allocates before its body runs (nothing could report it there).
struct StartData {
  std::string os_name;
  std::unique_ptr<ThreadBody> body;
  std::unique_ptr<std::shared_ptr<ThreadExitHook>> on_exit;  // the exit key's value
};

void* thread_main(void* raw) {
  std::unique_ptr<StartData> start(static_cast<StartData*>(raw));
  std::shared_ptr<ThreadExitHook>* hook = start->on_exit.release();
  // A key past the first 32 may need memory for its block: without it, the notice is
  // given at the end of thread_main instead (before this thread's TLS destructors).
  if (hook != nullptr && set_exit_notice(&on_thread_exit, hook)) hook = nullptr;
  pthread_setname_np(pthread_self(), start->os_name.c_str());
  start->body->run();
  start.reset();  // the body (and what it holds) dies before the exit notice
  if (hook != nullptr) on_thread_exit(hook);
  return nullptr;
}

// Asynchronous signals are blocked in library threads so a process's handlers run on
// the threads it chose; faults (synchronous signals) stay deliverable.
sigset_t async_signals() {
  sigset_t set;
  sigfillset(&set);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS}) sigdelset(&set, sig);
  return set;
}

// read_line: the first line of a small text file, or "".
std::string read_line(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) return "";
  char buf[4096];
  std::string line = std::fgets(buf, sizeof buf, f) != nullptr ? buf : "";
  std::fclose(f);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

// process_cpus: the CPUs the process may use, as the kernel lists them: its cgroup's
// cpuset (v2) when there is one, else the CPUs online.
std::string process_cpus() {
  const std::string cgroup = read_line("/proc/self/cgroup");  // "0::/path" under cgroup v2
  if (cgroup.rfind("0::", 0) == 0) {
    const std::string cpus = read_line("/sys/fs/cgroup" + cgroup.substr(3) + "/cpuset.cpus.effective");
    if (!cpus.empty()) return cpus;
  }
  const std::string online = read_line("/sys/devices/system/cpu/online");
  return online.empty() ? "unknown" : online;
}

std::string cpu_refused(int cpu) {
  return "cpu " + std::to_string(cpu) + " is not a CPU this process may run on (allowed: " + process_cpus() + ")";
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

pthread_t start_os_thread(const ThreadOptions& options, std::unique_ptr<ThreadBody> body,
                          std::shared_ptr<ThreadExitHook> on_exit) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) throw StatusError(TETHER_E_NO_MEMORY, "pthread_attr_init failed");
  struct AttrGuard {
    pthread_attr_t* a;
    ~AttrGuard() { pthread_attr_destroy(a); }
  } attr_guard{&attr};
  if (options.stack_size != 0) {
    if (options.stack_size < static_cast<size_t>(PTHREAD_STACK_MIN)) {
      throw StatusError(TETHER_E_INVALID_ARGUMENT,
                        "stack_size " + std::to_string(options.stack_size) +
                            " is below the platform minimum " + std::to_string(PTHREAD_STACK_MIN));
    }
    if (pthread_attr_setstacksize(&attr, options.stack_size) != 0) {
      throw StatusError(TETHER_E_INVALID_ARGUMENT,
                        "stack_size " + std::to_string(options.stack_size) + " is not usable");
    }
  }
  if (options.cpu >= 0) {
    // Whether the process may run on the CPU is the kernel's to say, for the new thread:
    // the creating thread may be pinned elsewhere, and so may the main thread.
    if (options.cpu >= CPU_SETSIZE) throw StatusError(TETHER_E_INVALID_ARGUMENT, cpu_refused(options.cpu));
    cpu_set_t only;
    CPU_ZERO(&only);
    CPU_SET(options.cpu, &only);
    if (pthread_attr_setaffinity_np(&attr, sizeof only, &only) != 0) {
      throw StatusError(TETHER_E_INVALID_ARGUMENT, cpu_refused(options.cpu));
    }
  }
  if (injected_failure()) {
    throw StatusError(TETHER_E_THREAD_CREATE, "cannot create thread '" + options.name + "': injected failure");
  }
  auto start = std::make_unique<StartData>();
  start->os_name = os_visible_name(options.name);
  start->body = std::move(body);
  if (on_exit) start->on_exit = std::make_unique<std::shared_ptr<ThreadExitHook>>(std::move(on_exit));

  // The new thread starts with asynchronous signals blocked. glibc >= 2.32 takes the mask
  // in the attributes; older ones get it the classic way, by the creator's own mask.
  static const sigset_t blocked = async_signals();
  pthread_t thread;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  if (pthread_attr_setsigmask_np(&attr, &blocked) != 0) {
    throw StatusError(TETHER_E_NO_MEMORY, "cannot create thread '" + options.name + "': no memory for its attributes");
  }
  const int rc = pthread_create(&thread, &attr, &thread_main, start.get());
#else
  sigset_t previous;
  pthread_sigmask(SIG_SETMASK, &blocked, &previous);
  const int rc = pthread_create(&thread, &attr, &thread_main, start.get());
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
#endif
  if (rc == EINVAL && options.cpu >= 0) {  // the kernel refused the affinity (glibc ends the thread)
    throw StatusError(TETHER_E_INVALID_ARGUMENT, cpu_refused(options.cpu));
  }
  if (rc != 0) {
    throw StatusError(TETHER_E_THREAD_CREATE,
                      "cannot create thread '" + options.name + "': " + std::strerror(rc));
  }
  (void)start.release();  // thread_main owns it now
  return thread;
}

void ThreadGroup::spawn(const ThreadOptions& options, std::unique_ptr<ThreadBody> body) {
  // Everything that can fail comes before the thread starts: the control thread that
  // will reap it, and room for its entry. Once pthread_create succeeded, nothing throws.
  ControlThread::instance().start();
  // mutex_ is held across the creation so the new thread's exit notice finds its entry.
  std::lock_guard lock(mutex_);
  threads_.reserve(threads_.size() + 1);
  g_unjoined.fetch_add(1, std::memory_order_acq_rel);
  try {
    const pthread_t t = start_os_thread(options, std::move(body), shared_from_this());
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

void ThreadGroup::exited(pthread_t self) noexcept {
  bool schedule = false;
  {
    std::lock_guard lock(mutex_);
    --running_;
    for (Entry& e : threads_) {
      if (pthread_equal(e.thread, self)) e.exited = true;  // absent: join_all already has it
    }
    if (!reap_scheduled_ && (running_ > 0 || orphaned_)) {
      schedule_reap_locked();
      schedule = true;
    }
  }
  if (schedule) ControlThread::instance().post(reap_job_);
}

bool ThreadGroup::claim_locked(bool exited_only, pthread_t* out) noexcept {
  for (auto it = threads_.begin(); it != threads_.end(); ++it) {
    // Never the calling thread: a job run on an exiting thread must not join itself.
    if ((exited_only && !it->exited) || pthread_equal(it->thread, pthread_self())) continue;
    *out = it->thread;
    threads_.erase(it);
    return true;
  }
  return false;
}

void ThreadGroup::reap() noexcept {
  std::unique_lock lock(mutex_);
  for (pthread_t t; claim_locked(/*exited_only=*/true, &t);) {
    lock.unlock();
    join_thread(t);  // it has finished its work
    lock.lock();
  }
  reap_scheduled_ = false;
  cv_.notify_all();
}

void ThreadGroup::join_all() {
  // A thread of the group that joins it (an object released from one of its own nested
  // threads) cannot join itself: it is left to the control thread, which joins it once
  // it has exited (orphaned_ makes its exit notice schedule that), and the rest is joined.
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return !reap_scheduled_; });  // a reap owns the thread it claimed
    pthread_t t;
    if (!claim_locked(/*exited_only=*/false, &t)) {  // claim_locked never returns this thread
      if (!threads_.empty()) orphaned_ = true;        // what is left is this thread: see above
      return;  // every other thread spawned (also by those joined) is joined
    }
    lock.unlock();
    join_thread(t);  // waits for it to end: one wake-up, as std::thread
    lock.lock();
  }
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
