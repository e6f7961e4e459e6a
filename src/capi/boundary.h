// The C boundary's one wrapper and its helpers. Every exported function runs its body
// through guarded(), which turns a thrown StatusError (or anything else) into a status
// code plus the thread's last-error text: no C++ exception crosses into C.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "capi/handles.h"
#include "core/call_ledger.h"
#include "core/error.h"
#include "core/fork_guard.h"
#include "core/scope.h"
#include "core/status_error.h"
#include "core/task.h"
#include "core/user_arg.h"
#include "tether/tether.h"

namespace tether::capi {

// set_last_error: the text tether_last_error_message returns on this thread.
void set_last_error(const char* text) noexcept;

// last_error_copy: this thread's last-error text copied out as section 1 says.
size_t last_error_copy(char* buf, size_t cap) noexcept;


// fail: throws the status with a message; the body's way out.
[[noreturn]] inline void fail(int32_t code, const std::string& message) { throw StatusError(code, message); }

// guarded: runs body() (returning a tether_status) as an exported function's body.
template <class Body>
[[nodiscard]] tether_status guarded(Body&& body) noexcept {
  try {
    return body();
  } catch (const StatusError& e) {
    set_last_error(e.what());
    return e.code();
  } catch (const std::bad_alloc&) {
    set_last_error("out of memory");
    return TETHER_E_NO_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(e.what());
    return TETHER_E_INTERNAL;
  } catch (...) {
    set_last_error("internal error: unknown exception");
    return TETHER_E_INTERNAL;
  }
}

// guarded_adopting: guarded(body(owned)) where owned holds the caller's arg (section 4:
// dropped exactly once on every path) — except when the call touched a parent's handle in
// a forked child: then nothing is dropped (its drop could need a lock held by a thread
// that does not exist there) and the caller keeps arg.
template <class Body>
[[nodiscard]] tether_status guarded_adopting(void* arg, tether_drop_fn drop, Body&& body) noexcept {
  UserArg owned(arg, drop);
  const tether_status rc = guarded([&] { return body(owned); });
  if (rc == TETHER_E_FORKED) (void)owned.release();
  return rc;
}

// guarded_value: for pure accessors: body()'s value, or fallback on any failure.
template <class T, class Body>
[[nodiscard]] T guarded_value(T fallback, Body&& body) noexcept {
  T out = fallback;
  const tether_status rc = guarded([&] {
    out = body();
    return TETHER_OK;
  });
  return rc == TETHER_OK ? out : fallback;
}

// require: throws TETHER_E_INVALID_ARGUMENT("<what> must not be NULL") for a NULL p.
template <class T>
T* require(T* p, const char* what) {
  if (p == nullptr) fail(TETHER_E_INVALID_ARGUMENT, std::string(what) + " must not be NULL");
  return p;
}

// read_out: an accessor of handle h that gives one value in *out: *out is cleared first
// (no failure leaves a stale value there), then h is looked up, a NULL out is
// TETHER_E_INVALID_ARGUMENT ("<what> must not be NULL"), and *out = read(object).
template <class H, class Out, class Read>
[[nodiscard]] tether_status read_out(H h, Out* out, const char* what, Read&& read) noexcept {
  if (out != nullptr) *out = Out{};
  return guarded([&] {
    auto object = lookup(h);
    require(out, what);
    *out = read(*object);
    return TETHER_OK;
  });
}

// on_done_of: tether_runner_on_done / tether_future_on_done (a scope, a future): fn(arg)
// once what h names has ended, arg_drop(arg) after; arg is dropped on any failure.
template <class H>
[[nodiscard]] tether_status on_done_of(H h, tether_notify_fn fn, void* arg, tether_drop_fn arg_drop) noexcept {
  return guarded_adopting(arg, arg_drop, [&](UserArg& owned) {
    auto work = lookup(h);
    require(fn, "fn");
    work->on_done(fn, std::move(owned));
    return TETHER_OK;
  });
}

// current_task: t checked to be the task of the callback running on this thread.
[[nodiscard]] Task& current_task(const tether_task* t);

// require_failure_code: code is a failure status of section 3 (not OK, not unknown).
void require_failure_code(int32_t code);

// copy_out: s into buf as section 1 says (snprintf-like); returns s's full length.
size_t copy_out(const std::string& s, char* buf, size_t cap) noexcept;

// read_options: *in checked and copied over defaults; NULL gives the defaults. A
// struct_size larger than T, or smaller than the first published version, is
// TETHER_E_INVALID_ARGUMENT; an older size keeps the defaults of the missing fields.
template <class T>
T read_options(const T* in, void (*init)(T*), size_t first_version_size, const char* what) {
  T out;
  init(&out);
  if (in == nullptr) return out;
  if (in->struct_size > sizeof(T) || in->struct_size < first_version_size) {
    fail(TETHER_E_INVALID_ARGUMENT, std::string(what) + ".struct_size " + std::to_string(in->struct_size) +
                                        " is not a known size (this library knows " +
                                        std::to_string(first_version_size) + " to " + std::to_string(sizeof(T)) + ")");
  }
  std::memcpy(static_cast<void*>(&out), in, in->struct_size);
  out.struct_size = sizeof(T);
  return out;
}

// error_handle: a new tether_error handle for e (the null handle for a null e).
[[nodiscard]] tether_error error_handle(const ErrorPtr& e);

// future_handle: a new tether_future handle for a future (a call's, a task's, an execution's).
[[nodiscard]] tether_future future_handle(std::shared_ptr<Future> future);

// fill_stats: checks out->struct_size and fills the stats within it.
void fill_stats(const CallLedger& ledger, tether_executor_stats* out, uint64_t os_thread_id);
// kept_error: kept fire-and-forget error i as a new handle (INVALID_ARGUMENT past the end).
[[nodiscard]] tether_error kept_error(const CallLedger& ledger, size_t i);

// wait_outcome: a core wait's result as the call's status, with the reason as the
// last-error text (what: "join", "future wait", ...).
tether_status wait_outcome(int32_t rc, const char* what);

// name_option: a name option: NULL gives fallback; "" is TETHER_E_INVALID_ARGUMENT.
[[nodiscard]] std::string name_option(const char* name, const char* fallback, const char* what);

}  // namespace tether::capi
