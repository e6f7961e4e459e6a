// TETHER_HOT_TLS: thread-locals read on every call use the initial-exec TLS model, so a
// read is one load instead of a __tls_get_addr call. libtether is linked, not dlopen'ed
// late, by its users; glibc's static TLS surplus covers a late dlopen of these few bytes.
// A hot thread-local read from other files is also declared constinit (extern constinit
// thread_local ...): without it every reader outside the defining file calls through a
// TLS init wrapper first (two instructions per read, ~14 per actor call on its thread).
#pragma once

#if defined(__GNUC__) && defined(__ELF__)
#define TETHER_HOT_TLS __attribute__((tls_model("initial-exec")))
#else
#define TETHER_HOT_TLS
#endif
