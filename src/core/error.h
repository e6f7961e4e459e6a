// Error: an immutable description of a failure raised by user code or by the library.
// Shared by shared_ptr between the object that recorded it and every tether_error handle.
//
// Thread safety: immutable after construction; any thread may read it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tether {

struct Error;
using ErrorPtr = std::shared_ptr<const Error>;

struct Error {
  int32_t code = 0;        // a TETHER_E_* status
  int64_t user_code = 0;   // the application's code (a callback's return value, ...)
  std::string message;
  std::string thread_name;  // the full name of the thread it was raised on
  std::string type_name;    // demangled exception type, or a binding's type name
  ErrorPtr cause;           // what caused this one (ACTOR_DEAD -> the constructor's error)
};

[[nodiscard]] ErrorPtr make_error(int32_t code, int64_t user_code, std::string message,
                                  std::string thread_name, std::string type_name = {},
                                  ErrorPtr cause = nullptr);

// out_of_memory_error: TETHER_E_NO_MEMORY "out of memory", built when the library loads:
// what is kept where even building an error failed, so a failure is never lost.
[[nodiscard]] ErrorPtr out_of_memory_error() noexcept;

// error_or_out_of_memory: make_error(code, 0, message, "") or, when even that needs
// memory it cannot have, out_of_memory_error(): for recording a failure in noexcept code.
[[nodiscard]] ErrorPtr error_or_out_of_memory(int32_t code, const char* message) noexcept;

// Demangles a C++ type name ("St13runtime_error" -> "std::runtime_error").
[[nodiscard]] std::string demangle(const char* mangled);

// The name of the calling OS thread as the OS knows it (at most 15 bytes on Linux).
[[nodiscard]] std::string os_thread_name();

}  // namespace tether
