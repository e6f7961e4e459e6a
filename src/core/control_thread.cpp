#include "core/control_thread.h"

#include <new>

#include "core/immortal.h"
#include "core/status_error.h"
#include "core/thread_group.h"
#include "core/thread_role.h"

namespace tether {
namespace {

class ControlBody : public ThreadBody {
 public:
  explicit ControlBody(ControlThread* owner, void (*loop)(ControlThread*)) : owner_(owner), loop_(loop) {}
  void run() noexcept override {
    this_thread_role().control = true;
    loop_(owner_);
  }

 private:
  ControlThread* owner_;
  void (*loop_)(ControlThread*);
};

}  // namespace

ControlThread& ControlThread::instance() {
  return immortal<ControlThread>();  // never destroyed: see the class comment
}

bool ControlThread::is_current() noexcept { return this_thread_role().control; }

void ControlThread::start() {
  std::unique_lock lock(mutex_);
  if (started_ || stopping_) return;
  thread_ = start_os_thread(ThreadOptions{"tether-ctl", 0},
                            std::make_unique<ControlBody>(this, [](ControlThread* c) { c->loop(); }), nullptr);
  started_ = true;
  looping_cv_.wait(lock, [&] { return looping_; });  // once, for the process's life
}

void ControlThread::post(ControlJob& job) noexcept {
  std::unique_lock lock(mutex_);
  if (stopping_ || !started_) {
    lock.unlock();
    job.run();  // exiting (or never started): the job only joins exited threads
    return;
  }
  job.next_ = nullptr;
  if (tail_ != nullptr) {
    tail_->next_ = &job;
  } else {
    head_ = &job;
  }
  tail_ = &job;
  lock.unlock();
  cv_.notify_one();
}

void ControlThread::loop() {
  std::unique_lock lock(mutex_);
  looping_ = true;
  looping_cv_.notify_all();
  for (;;) {
    cv_.wait(lock, [&] { return head_ != nullptr || stopping_; });
    if (head_ == nullptr) return;  // stopping, and nothing left to do
    ControlJob* job = head_;
    head_ = job->next_;
    if (head_ == nullptr) tail_ = nullptr;
    lock.unlock();
    job->run();  // may free the job's owner: job is not touched after this
    lock.lock();
  }
}

void ControlThread::before_fork() { mutex_.lock(); }

void ControlThread::after_fork_in_parent() noexcept { mutex_.unlock(); }

void ControlThread::after_fork_in_child() noexcept {
  // mutex_ is held by this thread since before_fork. The parent's control thread may have
  // been waiting on cv_, which the child can never wake: the condition variable is made
  // anew (not destroyed: a glibc condvar owns nothing to free). The queued jobs belong to
  // the parent's objects: forgotten, so nothing ever runs them.
  new (&cv_) std::condition_variable();
  new (&looping_cv_) std::condition_variable();  // a start() of the parent may wait on it
  head_ = nullptr;
  tail_ = nullptr;
  started_ = false;
  looping_ = false;
  stopping_ = false;
  thread_ = {};
  mutex_.unlock();
}

void ControlThread::stop_at_exit() {
  std::unique_lock lock(mutex_);
  stopping_ = true;
  const bool join = started_ && !is_current();
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
