// forced_unwind: catching the unwind of a thread that ends (POSIX pthread_exit, thread
// cancellation), which must be let through (glibc aborts if it is swallowed).
//
// catch (abi::__forced_unwind&) binds its reference to no C++ object: the unwind is
// foreign to the C++ runtime, which hands the handler a null pointer (libstdc++'s own
// <future> catches it the same way). UBSan's null-reference check reports that binding,
// so a function that catches it is marked TETHER_CATCHES_FORCED_UNWIND.
#pragma once

#include <cxxabi.h>

#define TETHER_CATCHES_FORCED_UNWIND __attribute__((no_sanitize("null")))
