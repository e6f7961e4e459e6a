// platform: every call the core makes to the operating system, behind one small interface
// so that the rest of src/core includes no OS header. One implementation per OS:
// posix.cpp (Linux and other POSIX systems) and win32.cpp (Windows). The core keeps the
// logic (what is checked, what a failure is called); these functions only make the call.
//
// Thread safety: every function may be called from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tether::platform {

// Thread: a joinable OS thread. handle is what join_thread takes (POSIX: the pthread_t;
// Windows: the thread's HANDLE); id tells threads apart where the handle cannot (Windows,
// where a thread cannot name its own HANDLE). Compare with same_thread, never by value.
struct Thread {
  std::uintptr_t handle = 0;
  std::uint64_t id = 0;
};

// current_thread: the calling thread, for same_thread (not joinable).
[[nodiscard]] Thread current_thread() noexcept;
[[nodiscard]] bool same_thread(const Thread& a, const Thread& b) noexcept;

// current_thread_id: the OS's nonzero id of the calling thread (Linux: gettid), unique
// among live threads.
[[nodiscard]] std::uint64_t current_thread_id() noexcept;

// current_cpu: the CPU the calling thread runs on now, or -1 when the OS cannot say.
[[nodiscard]] int current_cpu() noexcept;

// monotonic_ns: std::chrono::steady_clock's now, in nanoseconds of its epoch (Linux:
// CLOCK_MONOTONIC, read without libstdc++'s pages in between: posix.cpp says why).
[[nodiscard]] std::int64_t monotonic_ns() noexcept;
// yield_cpu: lets another thread ready to run on this CPU run first (sched_yield).
void yield_cpu() noexcept;

// kHugeRegionBytes, map_huge_region: a region of kHugeRegionBytes, aligned to its size,
// that the OS is asked to back with huge pages (Linux: transparent huge pages, madvise;
// one page fault then maps all of it instead of 512), for memory made by the thousand.
// Never given back. Null when the OS has none to give or no such pages (Windows: large
// pages need a privilege): the caller then allocates as usual.
inline constexpr std::size_t kHugeRegionBytes = std::size_t{2} << 20;
[[nodiscard]] void* map_huge_region() noexcept;

// min_stack_size: the smallest stack a new thread may ask for.
[[nodiscard]] std::size_t min_stack_size() noexcept;

// cpu_in_range: cpu is a CPU number this OS can pin to at all (Linux: below CPU_SETSIZE;
// Windows: 0..63, one processor group). Whether the process may run on it is decided
// when the thread starts (start_thread: kCannotPin).
[[nodiscard]] bool cpu_in_range(int cpu) noexcept;

// allowed_cpus: the CPUs the process may use, as the OS lists them, for messages (Linux:
// its cgroup's cpuset (v2) when there is one, else the CPUs online; "unknown" if unread).
[[nodiscard]] std::string allowed_cpus();

// StartResult: how start_thread ended. reason is the OS's text for kRefused.
enum class StartResult { kStarted, kNoMemory, kStackSizeUnusable, kCannotPin, kRefused };

// start_thread: a new thread running entry(arg) with asynchronous signals blocked (POSIX)
// and, when cpu >= 0, pinned to that one CPU before it runs (kCannotPin: the OS refused
// that CPU for the new thread). stack_size 0: the default.
// On kStarted, *out is the thread and entry owns arg; otherwise entry never runs.
[[nodiscard]] StartResult start_thread(std::size_t stack_size, int cpu, void (*entry)(void*), void* arg,
                                       Thread* out, std::string* reason);

// join_thread: waits for t to end and releases it. Once per thread started (or
// release_ended_thread instead).
void join_thread(const Thread& t) noexcept;
// release_ended_thread: releases t once its exit notice came (notify_at_thread_exit), so
// that every destructor of the thread's has run when it returns. POSIX: detaches it
// without waiting (the notice goes out after every thread-specific destructor of the
// first round: thread_exit.cpp; what is left is the C library's teardown). Windows: waits
// for its exit first (the notice comes at tether.dll's thread detach, and other modules'
// thread-detach callbacks, winpthreads' key destructors among them, may come after it).
// Once per thread started, instead of join_thread.
void release_ended_thread(const Thread& t) noexcept;

// current_time_slice_ns: the calling thread's time slice as the OS scheduler reports it
// (Linux 6.12 and later: sched_getattr's sched_runtime for a SCHED_OTHER or SCHED_BATCH
// thread), or 0 where it reports none (other OSes, older kernels, other policies).
[[nodiscard]] std::int64_t current_time_slice_ns() noexcept;
// request_time_slice: asks the OS scheduler to give the calling thread time slices of ns
// (core/time_slice.h says why). Linux: sched_setattr's sched_runtime for a SCHED_OTHER or
// SCHED_BATCH thread, keeping its policy and nice value (kernels before 6.12 accept and
// ignore it); other policies are left alone. false where the OS has no such request or
// refused it (the thread is then as it was).
bool request_time_slice(std::int64_t ns) noexcept;

// FairPolicy: the two policies of the fair scheduler a thread may switch between by
// itself (Linux: SCHED_OTHER and SCHED_BATCH; core/wake_preemption.h says why), or kNone:
// another policy, or an OS without them.
enum class FairPolicy : std::uint8_t { kNone, kNormal, kBatch };
// current_fair_policy: the calling thread's.
[[nodiscard]] FairPolicy current_fair_policy() noexcept;
// switch_fair_policy: if the calling thread's policy is `from` (not kNone), sets `to` (not
// kNone), keeping its nice value, time slice and reset-on-fork flag, and returns true;
// otherwise, or if the OS refused, false, and the thread is as it was.
bool switch_fair_policy(FairPolicy from, FairPolicy to) noexcept;

// set_current_thread_name / current_thread_name: the name OS tools show (Linux: the
// 15-byte comm; Windows: the thread description), UTF-8. Empty when there is none.
void set_current_thread_name(const std::string& name) noexcept;
[[nodiscard]] std::string current_thread_name();

// notify_at_thread_exit: fn(arg) runs on the calling thread when it exits, after its C++
// thread_locals are destroyed (Windows: those of this library; see tether.h). The core
// uses one fn for every thread. Arming again from inside fn runs it once more, for at
// least 4 rounds in all (POSIX: PTHREAD_DESTRUCTOR_ITERATIONS). false: it could not be
// armed (no memory) and fn will not run.
[[nodiscard]] bool notify_at_thread_exit(void (*fn)(void*) noexcept, void* arg) noexcept;

// Asymmetric fence (see core/asymmetric_fence.h). enable_process_barrier: at load, true
// when process_barrier is available (Linux membarrier PRIVATE_EXPEDITED, registered;
// Windows FlushProcessWriteBuffers). process_barrier: every running thread of the process
// executes a full barrier; false if that failed.
[[nodiscard]] bool enable_process_barrier() noexcept;
[[nodiscard]] bool process_barrier() noexcept;

// Parking on a word (Linux: futex; elsewhere word_park_fallback.h, a table of mutexes and
// condition variables). park_while: sleeps while word == expected (compared atomically
// with every wake_one_parked on the same word: a wake that follows a change of word is
// never missed), until woken, the absolute steady-clock time deadline_ns (steady_clock's
// epoch; -1: none), or spuriously: the caller re-checks. wake_one_parked / wake_all_parked:
// wake one / every thread parked on word; call them after changing word.
void park_while(const std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t deadline_ns) noexcept;
void wake_one_parked(const std::atomic<std::uint32_t>& word) noexcept;
void wake_all_parked(const std::atomic<std::uint32_t>& word) noexcept;

// threads_run_at_exit: whether the library's threads still run when its static destructors
// do (POSIX: yes, they may be joined; Windows: no, the process has ended every other
// thread first, and signalling or joining one could wait forever).
[[nodiscard]] bool threads_run_at_exit() noexcept;

// on_fork: registers fork handlers (pthread_atfork): prepare before fork() in the parent,
// parent after it there, child in the child. false where there is no fork (Windows) or
// they could not be registered.
bool on_fork(void (*prepare)(), void (*parent)(), void (*child)()) noexcept;

}  // namespace tether::platform
