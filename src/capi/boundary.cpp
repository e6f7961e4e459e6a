#include "capi/boundary.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "core/handle_table.h"
#include "core/hot_path.h"
#include "core/thread_exit.h"

namespace tether::capi {
namespace {

// Made on first use, destroyed by the thread's cleanup (thread_exit.h).
thread_local ThreadLocalSlot<std::string, Cleanup::LastError> t_last_error;
void destroy_last_error() noexcept { t_last_error.destroy(); }

}  // namespace

void set_last_error(const char* text) noexcept {
  std::string* last = t_last_error.get(&destroy_last_error);
  if (last == nullptr) return;  // no memory to keep a text: the status code still says it all
  try {
    *last = text;
  } catch (...) {
    last->clear();
  }
}

size_t last_error_copy(char* buf, size_t cap) noexcept {
  const std::string* last = t_last_error.get(&destroy_last_error);
  return copy_out(last != nullptr ? *last : std::string(), buf, cap);
}

TETHER_HOT_PATH Task& current_task(const tether_task* t) {
  if (t == nullptr) fail(TETHER_E_INVALID_ARGUMENT, "task must not be NULL");
  Task* task = Task::current();
  if (task == nullptr || task->as_c() != t) {
    fail(TETHER_E_INVALID_ARGUMENT, "task is not the task of the callback running on this thread "
                                    "(tether_task_* functions are callback only)");
  }
  if (task->from_parent_process()) {
    fail(TETHER_E_FORKED, "task belongs to the parent process: it cannot be used in a child after fork()");
  }
  return *task;
}

void require_failure_code(int32_t code) {
  if (code == TETHER_OK || code < 0 || code > TETHER_E_FORKED) {
    fail(TETHER_E_INVALID_ARGUMENT, "error code " + std::to_string(code) + " is not a tether failure status");
  }
}

size_t copy_out(const std::string& s, char* buf, size_t cap) noexcept {
  if (buf != nullptr && cap > 0) {
    const size_t n = std::min(s.size(), cap - 1);
    std::memcpy(buf, s.data(), n);
    buf[n] = '\0';
  }
  return s.size();
}

std::string name_option(const char* name, const char* fallback, const char* what) {
  if (name == nullptr) return fallback;
  if (*name == '\0') fail(TETHER_E_INVALID_ARGUMENT, std::string(what) + " must not be empty");
  return name;
}

tether_error error_handle(const ErrorPtr& e) {
  if (!e) return tether_error{0};
  return make_handle<tether_error>(e);
}

tether_status wait_outcome(int32_t rc, const char* what) {
  switch (rc) {
    case TETHER_E_DEADLOCK:
      fail(rc, std::string(what) + " would wait on the calling thread itself (it is the thread that must do the work)");
    case TETHER_E_INVALID_HANDLE:
      fail(rc, std::string("invalid handle: released by another thread during the ") + what);
    case TETHER_E_TIMEOUT:
      fail(rc, std::string(what) + ": the timeout passed first");
    default:
      return rc;
  }
}

tether_future future_handle(std::shared_ptr<Future> future) { return make_handle<tether_future>(std::move(future)); }

void fill_stats(const CallLedger& ledger, tether_executor_stats* out, uint64_t os_thread_id) {
  // The first published tether_executor_stats ends after os_thread_id.
  constexpr size_t kStatsV1 = offsetof(tether_executor_stats, os_thread_id) + sizeof(uint64_t);
  require(out, "out");
  if (out->struct_size < kStatsV1 || out->struct_size > sizeof(tether_executor_stats)) {
    fail(TETHER_E_INVALID_ARGUMENT, "stats struct_size " + std::to_string(out->struct_size) +
                                        " is not a known size (set it to sizeof(tether_executor_stats))");
  }
  const CallStats s = ledger.stats();
  tether_executor_stats full{};
  full.struct_size = out->struct_size;
  full.queued = s.queued;
  full.completed = s.completed;
  full.failed = s.failed;
  full.cancelled = s.cancelled;
  full.rejected = s.rejected;
  full.errors_dropped = s.errors_dropped;
  full.os_thread_id = os_thread_id;
  std::memcpy(static_cast<void*>(out), &full, out->struct_size);  // only the fields the caller knows
}

tether_error kept_error(const CallLedger& ledger, size_t i) {
  ErrorPtr e = ledger.kept_error(i);
  if (!e) fail(TETHER_E_INVALID_ARGUMENT, "error index " + std::to_string(i) + " is past the kept errors");
  return error_handle(e);
}

}  // namespace tether::capi
