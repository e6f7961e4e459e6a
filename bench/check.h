// check.h: how every benchmark fails. A benchmark that silently measured a failing call
// would report a meaningless figure, so a tether call that does not return `want` aborts
// the run, naming the call, the status and the library's message.
#pragma once

#include <tether/tether.h>

#include <cstdio>
#include <cstdlib>

namespace tether_bench {

inline void Check(tether_status got, tether_status want, const char* what) {
  if (got != want) {
    char detail[256];
    tether_last_error_message(detail, sizeof detail);
    std::fprintf(stderr, "tether bench: %s returned %s (wanted %s): %s\n", what, tether_status_name(got),
                 tether_status_name(want), detail);
    std::abort();
  }
}

}  // namespace tether_bench
