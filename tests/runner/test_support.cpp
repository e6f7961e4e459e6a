// test_support.cpp: see test_support.h.
#include "test_support.h"

#include <algorithm>

namespace tt {

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
  for (Gate *g : gates_) g->set();
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
