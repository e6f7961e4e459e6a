// Version, status names and texts, and the last-error text.
#include "capi/boundary.h"
#include "core/thread_group.h"

using namespace tether::capi;

#define TETHER_STR2_(x) #x
#define TETHER_STR_(x) TETHER_STR2_(x)

extern "C" {

TETHER_API uint32_t tether_version(void) { return TETHER_VERSION; }

TETHER_API const char* tether_version_string(void) {
  return TETHER_STR_(TETHER_VERSION_MAJOR) "." TETHER_STR_(TETHER_VERSION_MINOR) "." TETHER_STR_(TETHER_VERSION_PATCH);
}

TETHER_API const char* tether_status_name(int32_t status) {
  switch (status) {
#define TETHER_NAME_CASE_(suffix, value, description) \
  case value: return "TETHER_" #suffix;
    TETHER_STATUS_MAP(TETHER_NAME_CASE_)
#undef TETHER_NAME_CASE_
    default: return "TETHER_E_UNKNOWN";
  }
}

TETHER_API const char* tether_status_describe(int32_t status) {
  switch (status) {
#define TETHER_DESCRIBE_CASE_(suffix, value, description) \
  case value: return description;
    TETHER_STATUS_MAP(TETHER_DESCRIBE_CASE_)
#undef TETHER_DESCRIBE_CASE_
    default: return "unknown status code";
  }
}

TETHER_API size_t tether_last_error_message(char* buf, size_t cap) { return last_error_copy(buf, cap); }

}  // extern "C"

extern "C" TETHER_API void tether_debug_fail_thread_create(uint32_t successes) {
  tether::fail_thread_creates_after(successes);
}

extern "C" TETHER_API size_t tether_debug_unjoined_threads(void) { return tether::unjoined_threads(); }
