// TETHER_HOT_TLS: thread-locals read on every call use the initial-exec TLS model, so a
// read is one load instead of a __tls_get_addr call. libtether is linked, not dlopen'ed
// late, by its users; glibc's static TLS surplus covers a late dlopen of these few bytes.
#pragma once

#if defined(__GNUC__) && defined(__ELF__)
#define TETHER_HOT_TLS __attribute__((tls_model("initial-exec")))
#else
#define TETHER_HOT_TLS
#endif
