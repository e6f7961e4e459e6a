// sync.cpp: see sync.h.
#include "support/sync.h"

namespace tether_test {

void Gate::set() {
  std::lock_guard<std::mutex> lk(mu_);
  set_ = true;
  cv_.notify_all();
}

bool Gate::is_set() const {
  std::lock_guard<std::mutex> lk(mu_);
  return set_;
}

bool Gate::wait_for(std::chrono::nanoseconds d) const {
  std::unique_lock<std::mutex> lk(mu_);
  return cv_.wait_for(lk, d, [&] { return set_; });
}

void Counter::add(int n) {
  std::lock_guard<std::mutex> lk(mu_);
  n_ += n;
  cv_.notify_all();
}

int Counter::get() const {
  std::lock_guard<std::mutex> lk(mu_);
  return n_;
}

bool Counter::wait_for(int n, std::chrono::nanoseconds d) const {
  std::unique_lock<std::mutex> lk(mu_);
  return cv_.wait_for(lk, d, [&] { return n_ >= n; });
}

void count_drop(void *counter) { static_cast<Counter *>(counter)->add(); }

}  // namespace tether_test
