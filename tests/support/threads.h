// threads.h: what a test can see of the process's threads (Linux: gettid, /proc/self/task).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "support/waits.h"

namespace tether_test {

// tid: the calling thread's gettid().
uint64_t tid();
// os_thread_name: the calling thread's OS name.
std::string os_thread_name();
// thread_names: the OS names of this process's threads, from /proc/self/task.
std::vector<std::string> thread_names();
inline size_t thread_count() { return thread_names().size(); }
// threads_named: how many threads of this process have an OS name starting with `prefix`
// now (an exact name counts too; the library suffixes pool threads' names).
size_t threads_named(const std::string &prefix);
// threads_gone: whether every thread named `prefix` leaves /proc/self/task within `d`.
// A joined thread stays listed a moment after its join returned (the kernel wakes the
// joiner before it reaps the thread), so "none left" is polled, never read once.
bool threads_gone(const std::string &prefix, std::chrono::nanoseconds d = kPrompt);

}  // namespace tether_test
