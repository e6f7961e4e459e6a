// tether_error_*: read-only access to shared, immutable Error objects.
#include "capi/boundary.h"

using namespace tether;
using namespace tether::capi;

extern "C" {

TETHER_API int32_t tether_error_code(tether_error e) {
  return guarded_value<int32_t>(0, [&] { return lookup(e)->code; });
}

TETHER_API int64_t tether_error_user_code(tether_error e) {
  return guarded_value<int64_t>(0, [&] { return lookup(e)->user_code; });
}

TETHER_API size_t tether_error_message(tether_error e, char* buf, size_t cap) {
  return guarded_value<size_t>(copy_out("", buf, cap), [&] { return copy_out(lookup(e)->message, buf, cap); });
}

TETHER_API size_t tether_error_thread_name(tether_error e, char* buf, size_t cap) {
  return guarded_value<size_t>(copy_out("", buf, cap), [&] { return copy_out(lookup(e)->thread_name, buf, cap); });
}

TETHER_API size_t tether_error_type_name(tether_error e, char* buf, size_t cap) {
  return guarded_value<size_t>(copy_out("", buf, cap), [&] { return copy_out(lookup(e)->type_name, buf, cap); });
}

TETHER_API tether_status tether_error_cause(tether_error e, tether_error* out) {
  return read_out(e, out, "out", [](const Error& error) { return error_handle(error.cause); });
}

TETHER_API tether_status tether_error_release(tether_error e) {
  return guarded([&] {
    (void)take(e);
    return TETHER_OK;
  });
}

}  // extern "C"
