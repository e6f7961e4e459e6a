// StatusError: how the core reports a failed call. The C boundary (src/capi/boundary.h)
// turns it into the call's status code and the thread's last-error text.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tether {

class StatusError : public std::runtime_error {
 public:
  StatusError(int32_t code, const std::string& detail) : std::runtime_error(detail), code_(code) {}
  [[nodiscard]] int32_t code() const noexcept { return code_; }

 private:
  int32_t code_;
};

}  // namespace tether
