// test_support.cpp: see test_support.h.
#include "test_support.h"

#include <dirent.h>
#include <pthread.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#ifndef TETHER_TEST_DEFAULT_SCALE
#define TETHER_TEST_DEFAULT_SCALE 1
#endif

namespace tt {

int test_scale() {
  static const int scale = [] {
    if (const char *s = std::getenv("TETHER_TEST_SCALE")) {
      const int v = std::atoi(s);
      if (v > 0) return v;
    }
    return TETHER_TEST_DEFAULT_SCALE;
  }();
  return scale;
}

size_t scaled(size_t n) { return std::max<size_t>(1, n / static_cast<size_t>(test_scale())); }

bool instrumented() { return test_scale() > 1 || TETHER_TEST_DEFAULT_SCALE > 1; }

void relax() {
  if (kUnderValgrind) {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  } else {
    std::this_thread::yield();
  }
}

// Notifying under the lock lets a waiter destroy the object as soon as it wakes.
void Event::set() {
  std::lock_guard<std::mutex> lk(mu_);
  set_ = true;
  cv_.notify_all();
}

bool Event::is_set() const {
  std::lock_guard<std::mutex> lk(mu_);
  return set_;
}

bool Event::wait_for(std::chrono::nanoseconds d) const {
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

tether_status closure_trampoline(tether_task *t, void *arg) {
  // No try/catch: a throwing closure is how the exception tests reach the task boundary.
  return static_cast<Closure *>(arg)->fn(t);
}

void closure_drop(void *arg) {
  auto *c = static_cast<Closure *>(arg);
  Counter *drops = c->drops;
  delete c;
  if (drops != nullptr) drops->add();
}

tether_status start_runner(const tether_runner_options *opts, TaskFn fn, Counter *drops,
                           tether_runner *out) {
  return tether_runner_start(opts, closure_trampoline, make_closure(std::move(fn), drops),
                             closure_drop, out);
}

tether_status spawn(tether_task *t, const char *name, TaskFn fn, Counter *drops) {
  return tether_task_spawn(t, name, closure_trampoline, make_closure(std::move(fn), drops),
                           closure_drop);
}

tether_runner_options runner_options(const char *name, int stop_on_error) {
  tether_runner_options o;
  tether_runner_options_init(&o);
  o.name = name;
  o.stop_on_error = stop_on_error;
  return o;
}

Runner::~Runner() {
  for (Event *g : gates_) g->set();
  if (h_.id != 0) (void)tether_runner_release(h_);
}

tether_status Runner::release() {
  const tether_status st = tether_runner_release(h_);
  h_ = {};
  return st;
}

int32_t Runner::state() const {
  int32_t s = -1;
  if (tether_runner_poll(h_, &s) != TETHER_OK) return -1;
  return s;
}

size_t Runner::live() const {
  size_t n = 0;
  if (tether_runner_live_threads(h_, &n) != TETHER_OK) return SIZE_MAX;
  return n;
}

void Error::reset() {
  if (h_.id != 0) (void)tether_error_release(h_);
  h_ = {};
}

std::string Error::message() const { return error_message(h_); }
std::string Error::thread_name() const { return error_thread_name(h_); }
std::string Error::type_name() const { return error_type_name(h_); }

namespace {
template <class F>
std::string read_string(F f) {
  const size_t n = f(nullptr, 0);
  std::string s(n + 1, '\0');
  const size_t m = f(s.data(), s.size());
  s.resize(std::min(n, m));
  return s;
}
}  // namespace

std::string error_message(tether_error e) {
  return read_string([&](char *b, size_t c) { return tether_error_message(e, b, c); });
}
std::string error_thread_name(tether_error e) {
  return read_string([&](char *b, size_t c) { return tether_error_thread_name(e, b, c); });
}
std::string error_type_name(tether_error e) {
  return read_string([&](char *b, size_t c) { return tether_error_type_name(e, b, c); });
}
std::string last_error_message() {
  return read_string([&](char *b, size_t c) { return tether_last_error_message(b, c); });
}

Error first_error(tether_runner r) {
  Error e;
  if (tether_runner_error(r, e.out()) != TETHER_OK) e.reset();
  return e;
}

Error error_at(tether_runner r, size_t i) {
  Error e;
  if (tether_runner_error_at(r, i, e.out()) != TETHER_OK) e.reset();
  return e;
}

std::string os_thread_name() {
  char buf[64] = {};
  if (pthread_getname_np(pthread_self(), buf, sizeof buf) != 0) return {};
  return buf;
}

size_t threads_named(const std::string &name) {
  size_t n = 0;
  DIR *d = opendir("/proc/self/task");
  if (d == nullptr) return 0;
  while (dirent *ent = readdir(d)) {
    if (ent->d_name[0] == '.') continue;
    std::ifstream f(std::string("/proc/self/task/") + ent->d_name + "/comm");
    std::string comm;
    if (std::getline(f, comm) && comm == name) ++n;
  }
  closedir(d);
  return n;
}

bool wait_threads_gone(const std::string &name, std::chrono::nanoseconds d) {
  return wait_until([&] { return threads_named(name) == 0; }, d);
}

const char *state_name(int32_t s) {
  switch (s) {
    case TETHER_PENDING: return "PENDING";
    case TETHER_RUNNING: return "RUNNING";
    case TETHER_SUCCEEDED: return "SUCCEEDED";
    case TETHER_FAILED: return "FAILED";
    case TETHER_CANCELLED: return "CANCELLED";
    default: return "(invalid)";
  }
}

}  // namespace tt
