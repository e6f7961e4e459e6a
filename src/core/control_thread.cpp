#include "core/control_thread.h"

#include <new>

#include "core/status_error.h"
#include "core/thread_group.h"
#include "core/hot_tls.h"

namespace tether {
namespace {

TETHER_HOT_TLS thread_local bool t_is_control_thread = false;

class ControlBody : public ThreadBody {
 public:
  explicit ControlBody(ControlThread* owner, void (*loop)(ControlThread*)) : owner_(owner), loop_(loop) {}
  void run() noexcept override {
    t_is_control_thread = true;
    loop_(owner_);
  }

 private:
  ControlThread* owner_;
  void (*loop_)(ControlThread*);
};

}  // namespace

ControlThread& ControlThread::instance() {
  static ControlThread* control = new ControlThread();  // never destroyed: see the class comment
  return *control;
}

bool ControlThread::is_current() noexcept { return t_is_control_thread; }

void ControlThread::post(std::function<void()> job) {
  std::unique_lock lock(mutex_);
  if (stopping_) {
    lock.unlock();
    job();  // the process is exiting: the job only joins exited threads, so run it here
    return;
  }
  if (!started_) {
    try {
      thread_ = start_os_thread(ThreadOptions{"tether-ctl", 0},
                            std::make_unique<ControlBody>(this, [](ControlThread* c) { c->loop(); }),
                            nullptr);
      started_ = true;
    } catch (const StatusError&) {
      lock.unlock();
      job();  // no control thread: the job only joins exited threads, so run it here
      return;
    }
  }
  jobs_.push_back(std::move(job));
  lock.unlock();
  cv_.notify_one();
}

void ControlThread::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return !jobs_.empty() || stopping_; });
    if (jobs_.empty()) return;  // stopping, and nothing left to do
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    job = nullptr;  // what the job held (maybe an object's last reference) dies unlocked
    lock.lock();
  }
}

void ControlThread::before_fork() { mutex_.lock(); }

void ControlThread::after_fork_in_parent() noexcept { mutex_.unlock(); }

void ControlThread::after_fork_in_child() noexcept {
  // mutex_ is held by this thread since before_fork. The parent's control thread may have
  // been waiting on cv_, which the child can never wake: the condition variable is made
  // anew (not destroyed: a glibc condvar owns nothing to free). The queued jobs hold the
  // parent's objects: moved where nothing will ever run or destroy them.
  new (&cv_) std::condition_variable();
  if (!jobs_.empty()) {
    try {
      new std::deque<std::function<void()>>(std::move(jobs_));
    } catch (...) {  // no memory: leaking the jobs in place is as good
      new (&jobs_) std::deque<std::function<void()>>();
    }
  }
  started_ = false;
  stopping_ = false;
  thread_ = {};
  mutex_.unlock();
}

void ControlThread::stop_at_exit() {
  std::unique_lock lock(mutex_);
  stopping_ = true;
  const bool join = started_ && !t_is_control_thread;
  lock.unlock();
  cv_.notify_all();
  if (join) platform::join_thread(thread_);
}

namespace {

// Stops the control thread when static objects are destroyed (exit, dlclose).
struct StopControlThreadAtExit {
  ~StopControlThreadAtExit() {
    if (platform::threads_run_at_exit()) ControlThread::instance().stop_at_exit();
  }
} g_stop_control_thread_at_exit;

}  // namespace

}  // namespace tether
