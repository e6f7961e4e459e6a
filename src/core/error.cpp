#include "core/error.h"

#include <cxxabi.h>

#include <cstdlib>

#include "platform/platform.h"
#include "tether/tether.h"

namespace tether {

ErrorPtr make_error(int32_t code, int64_t user_code, std::string message, std::string thread_name,
                    std::string type_name, ErrorPtr cause) {
  auto e = std::make_shared<Error>();
  e->code = code;
  e->user_code = user_code;
  e->message = std::move(message);
  e->thread_name = std::move(thread_name);
  e->type_name = std::move(type_name);
  e->cause = std::move(cause);
  return e;
}

namespace {
// Never destroyed: a process may exit while threads still use it.
const ErrorPtr* const g_out_of_memory = new ErrorPtr(make_error(TETHER_E_NO_MEMORY, 0, "out of memory", ""));
}  // namespace

ErrorPtr out_of_memory_error() noexcept { return *g_out_of_memory; }

ErrorPtr error_or_out_of_memory(int32_t code, const char* message) noexcept {
  try {
    return make_error(code, 0, message, "");
  } catch (...) {
    return out_of_memory_error();
  }
}

std::string demangle(const char* mangled) {
  if (mangled == nullptr) return {};
  int status = 0;
  char* readable = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = (status == 0 && readable != nullptr) ? readable : mangled;
  std::free(readable);
  return out;
}

std::string os_thread_name() { return platform::current_thread_name(); }

}  // namespace tether
