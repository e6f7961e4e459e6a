// tether/hpp/error.hpp — tether::Error, and the checks that turn a failing C call into one.
// Part of the C++ layer; include <tether/tether.hpp> (see there for the whole picture).
//
// Failures. Every C call that fails throws tether::Error, built from the status and this
// thread's tether_last_error_message (read right after the call, on the same thread). The
// outcome of user code is an Error too, built from the tether_error object (code, user
// code, message, thread name, exception type name, cause). Only std::bad_alloc, from the
// header's own allocations, is thrown as itself. Non-failures are not thrown: a wait that
// times out returns false, a get() that succeeds returns the value.
#ifndef TETHER_HPP_ERROR_HPP
#define TETHER_HPP_ERROR_HPP

#include "../tether.h"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#if !defined(__cpp_exceptions) && !defined(__EXCEPTIONS)
#error "tether.hpp reports failures with exceptions: build with exceptions enabled"
#endif

namespace tether {

// ------------------------------------------------------------------------------------------
// Error
// ------------------------------------------------------------------------------------------

// Error: why a call or a piece of user code failed. Thrown by every member function whose
// C call fails, and by get() / join_result() for a FAILED or CANCELLED outcome.
//
// code() is a TETHER_E_* status; status_name() its name ("TETHER_E_EXCEPTION"). For an
// outcome of user code, thread_name() is the thread it was raised on, type_name() the
// demangled C++ exception type (TETHER_E_EXCEPTION / _UNKNOWN_EXCEPTION), user_code() the
// application's code (Task::fail), and cause() what caused it (an ACTOR_DEAD error's cause
// is the constructor's error). For a failing call, message() is the library's detail text
// and the other fields are empty.
//
// Copying never throws (the fields are shared, immutable), as std::exception requires.
class Error : public std::exception {
 public:
  // Error: a failure of `code` with `message` (empty: the code's description).
  Error(int32_t code, std::string message) : data_(make(code, 0, std::move(message), {}, {}, nullptr)) {}

  // from_status: the failure of the call that just returned `code` on this thread, with
  // this thread's last-error text as its message.
  [[nodiscard]] static Error from_status(int32_t code) {
    return Error(code, read_string([](char* buf, size_t cap) { return tether_last_error_message(buf, cap); }));
  }

  // from_handle: reads the error object `e` (and its causes); does not release `e`.
  [[nodiscard]] static Error from_handle(tether_error e) {
    auto text = [e](size_t (*fn)(tether_error, char*, size_t)) {
      return read_string([&](char* buf, size_t cap) { return fn(e, buf, cap); });
    };
    std::shared_ptr<const Error> cause;
    tether_error c{0};
    if (tether_error_cause(e, &c) == TETHER_OK && c.id != 0) cause = std::make_shared<const Error>(adopt(c));
    return Error(make(tether_error_code(e), tether_error_user_code(e), text(&tether_error_message),
                      text(&tether_error_thread_name), text(&tether_error_type_name), std::move(cause)));
  }

  // adopt: reads the error object `e` and releases it (whatever happens).
  [[nodiscard]] static Error adopt(tether_error e) {
    struct Release {
      tether_error e;
      ~Release() { (void)tether_error_release(e); }
    } release{e};
    return from_handle(e);
  }

  [[nodiscard]] int32_t code() const noexcept { return data_->code; }
  [[nodiscard]] const char* status_name() const noexcept { return tether_status_name(data_->code); }
  [[nodiscard]] const char* description() const noexcept { return tether_status_describe(data_->code); }
  [[nodiscard]] int64_t user_code() const noexcept { return data_->user_code; }
  [[nodiscard]] const std::string& message() const noexcept { return data_->message; }
  [[nodiscard]] const std::string& thread_name() const noexcept { return data_->thread_name; }
  [[nodiscard]] const std::string& type_name() const noexcept { return data_->type_name; }
  // cause: the error that caused this one, or nullptr. Valid as long as this Error (or a
  // copy of it) lives.
  [[nodiscard]] const Error* cause() const noexcept { return data_->cause.get(); }

  // what: "STATUS_NAME: message (type T, thread 'name', user code N); caused by: ...".
  [[nodiscard]] const char* what() const noexcept override { return data_->what.c_str(); }

 private:
  struct Data {
    int32_t code = 0;
    int64_t user_code = 0;
    std::string message, thread_name, type_name, what;
    std::shared_ptr<const Error> cause;
  };

  explicit Error(std::shared_ptr<const Data> d) noexcept : data_(std::move(d)) {}

  static std::shared_ptr<const Data> make(int32_t code, int64_t user_code, std::string message,
                                          std::string thread_name, std::string type_name,
                                          std::shared_ptr<const Error> cause) {
    auto d = std::make_shared<Data>();
    d->code = code;
    d->user_code = user_code;
    d->message = message.empty() ? std::string(tether_status_describe(code)) : std::move(message);
    d->thread_name = std::move(thread_name);
    d->type_name = std::move(type_name);
    d->what = std::string(tether_status_name(code)) + ": " + d->message;
    std::string details;
    auto add = [&details](const std::string& s) { details += (details.empty() ? " (" : ", ") + s; };
    if (!d->type_name.empty()) add("type " + d->type_name);
    if (!d->thread_name.empty()) add("thread '" + d->thread_name + "'");
    if (d->user_code != 0) add("user code " + std::to_string(d->user_code));
    if (!details.empty()) d->what += details + ")";
    if (cause) d->what += std::string("; caused by: ") + cause->what();
    d->cause = std::move(cause);
    return d;
  }

  // read_string: a string handed out by a `size_t f(char *buf, size_t cap)` accessor.
  template <class Read>
  static std::string read_string(Read&& read) {
    std::string s(read(nullptr, 0), '\0');
    if (!s.empty()) {
      const size_t n = read(s.data(), s.size() + 1);  // writes size() bytes and the NUL
      if (n < s.size()) s.resize(n);
    }
    return s;
  }

  std::shared_ptr<const Data> data_;
};

// detail: the checks every owner makes around its C calls.
namespace detail {

// check: throws the call's Error unless rc is TETHER_OK.
inline void check(tether_status rc) {
  if (rc != TETHER_OK) throw Error::from_status(rc);
}

// require: throws TETHER_E_INVALID_HANDLE for an empty owner, before any C call.
inline void require(uint64_t id, const char* what) {
  if (id == 0) throw Error(TETHER_E_INVALID_HANDLE, std::string(what) + " is empty (moved from or released)");
}

// kept_errors: errors 0.. of an accessor `tether_status f(size_t i, tether_error *out)`
// until the index passes the end.
template <class At>
[[nodiscard]] std::vector<Error> kept_errors(At&& at) {
  std::vector<Error> out;
  for (size_t i = 0;; ++i) {
    tether_error e{0};
    const tether_status rc = at(i, &e);
    if (rc == TETHER_E_INVALID_ARGUMENT) break;  // past the end
    check(rc);
    out.push_back(Error::adopt(e));
  }
  return out;
}

}  // namespace detail

}  // namespace tether

#endif  // TETHER_HPP_ERROR_HPP
