// The platform seam on POSIX systems (Linux first: gettid, membarrier, CPU sets).
#include "platform/platform.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <linux/rseq.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#else
#include "platform/word_park_fallback.h"
#endif

namespace tether::platform {
namespace {

static_assert(sizeof(pthread_t) <= sizeof(std::uintptr_t), "a pthread_t must fit a Thread handle");

std::uintptr_t to_handle(pthread_t t) noexcept {
  std::uintptr_t h = 0;
  std::memcpy(&h, &t, sizeof t);
  return h;
}

pthread_t from_handle(std::uintptr_t h) noexcept {
  pthread_t t;
  std::memcpy(&t, &h, sizeof t);
  return t;
}

// The exit notice: a pthread key whose destructor runs the thread's notice. glibc runs key
// destructors after every C++ thread_local destructor of the thread, so the notice comes
// only once the thread's own work, its destructors included, is done. (A key is also much
// cheaper per thread than a C++ thread_local with a destructor, which registers through
// the loader's lock.) The function sits in a trivial thread_local: no registration.
thread_local void (*t_exit_fn)(void*) noexcept = nullptr;

void run_exit_notice(void* arg) {
  if (t_exit_fn != nullptr) t_exit_fn(arg);
}

pthread_key_t make_exit_key() {
  pthread_key_t key;
  if (pthread_key_create(&key, &run_exit_notice) != 0) std::abort();  // at load: no keys left
  return key;
}
const pthread_key_t g_exit_key = make_exit_key();

// Asynchronous signals are blocked in library threads so a process's handlers run on
// the threads it chose; faults (synchronous signals) stay deliverable.
sigset_t async_signals() {
  sigset_t set;
  sigfillset(&set);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS}) sigdelset(&set, sig);
  return set;
}

// read_line: the first line of a small text file, or "".
std::string read_line(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) return "";
  char buf[4096];
  std::string line = std::fgets(buf, sizeof buf, f) != nullptr ? buf : "";
  std::fclose(f);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

struct Trampoline {
  void (*entry)(void*);
  void* arg;
};

void* thread_main(void* raw) {
  const Trampoline t = *static_cast<Trampoline*>(raw);
  delete static_cast<Trampoline*>(raw);
  t.entry(t.arg);
  return nullptr;
}

}  // namespace

Thread current_thread() noexcept { return Thread{to_handle(pthread_self()), 0}; }

bool same_thread(const Thread& a, const Thread& b) noexcept {
  return pthread_equal(from_handle(a.handle), from_handle(b.handle)) != 0;
}

void* map_huge_region() noexcept {
#if defined(MADV_HUGEPAGE)
  // Twice the size, then the unaligned ends unmapped: an aligned region of exactly one huge page.
  const std::size_t span = 2 * kHugeRegionBytes;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + kHugeRegionBytes - 1) & ~(std::uintptr_t{kHugeRegionBytes} - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const std::uintptr_t end = start + span;
  if (end > aligned + kHugeRegionBytes) munmap(reinterpret_cast<void*>(aligned + kHugeRegionBytes), end - aligned - kHugeRegionBytes);
  void* region = reinterpret_cast<void*>(aligned);
  if (madvise(region, kHugeRegionBytes, MADV_HUGEPAGE) != 0) {  // no huge pages here: ordinary memory is better
    munmap(region, kHugeRegionBytes);
    return nullptr;
  }
  return region;
#else
  return nullptr;
#endif
}

// The hot path's OS calls (current_cpu, monotonic_ns, yield_cpu, park_while and the
// wakes) are placed with the core's hot path ([[gnu::hot]]: .text.hot, core/hot_path.h)
// and, on Linux with glibc on x86-64 and arm64, call nothing in libc but clock_gettime:
// glibc's sched_getcpu, sched_yield and syscall read their own pages of code and data
// (sched_getcpu three: its code, a GOT entry and ld.so's __rseq_offset), as libstdc++'s
// steady_clock does on its way to clock_gettime, and after an idle spell every page a
// round trip touches is a TLB miss the VM's nested page walk pays for (target 3,
// bench/README.md). Elsewhere: libc's.
#if defined(__linux__) && defined(__GLIBC__) && (defined(__x86_64__) || defined(__aarch64__))
#define TETHER_LINUX_DIRECT 1
// glibc 2.35+ registers an rseq area for every thread at __rseq_offset from the thread
// pointer (__rseq_size 0: not registered); weak, so an older glibc leaves them null.
extern "C" {
extern const std::ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));
}

namespace {
// t_cpu_id_offset: where this thread's rseq cpu_id is, from its thread pointer (the same
// for every thread: kept per thread because this thread's TLS is on the page its reads of
// the thread pointer touch anyway, where a global would be one more page: its .bss
// neighbours are the handle table's 32 KiB); kUnknown until the thread's first look,
// kNoRseq without an area (then sched_getcpu).
constexpr std::ptrdiff_t kUnknown = 0;  // never an area's offset: the thread pointer's own word
constexpr std::ptrdiff_t kNoRseq = PTRDIFF_MIN;
__attribute__((tls_model("initial-exec"))) thread_local std::ptrdiff_t t_cpu_id_offset = kUnknown;

[[gnu::cold]] std::ptrdiff_t look_up_cpu_id_offset() noexcept {
  if (&__rseq_size == nullptr || &__rseq_offset == nullptr || __rseq_size == 0) return kNoRseq;
  return __rseq_offset + static_cast<std::ptrdiff_t>(offsetof(struct rseq, cpu_id));
}

// raw_syscall: the system call instruction itself (libc's syscall() without its page);
// returns what the kernel does (-errno on failure).
long raw_syscall(long number, long a, long b, long c, long d, long e, long f) noexcept {
#if defined(__x86_64__)
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
#else  // aarch64
  register long x8 __asm__("x8") = number;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  register long x4 __asm__("x4") = e;
  register long x5 __asm__("x5") = f;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
  return x0;
#endif
}
}  // namespace
#endif

[[gnu::hot]] int current_cpu() noexcept {
#if defined(TETHER_LINUX_DIRECT)
  std::ptrdiff_t offset = t_cpu_id_offset;
  if (offset == kUnknown) [[unlikely]] offset = t_cpu_id_offset = look_up_cpu_id_offset();
  if (offset != kNoRseq) {
    // The kernel writes cpu_id before the thread returns to user space on a CPU: a plain
    // read of this thread's own area, as glibc's sched_getcpu makes it.
    const int cpu = *reinterpret_cast<const volatile std::int32_t*>(
        static_cast<const char*>(__builtin_thread_pointer()) + offset);
    if (cpu >= 0) return cpu;  // else RSEQ_CPU_ID_UNINITIALIZED or REGISTRATION_FAILED
  }
#endif
#if defined(__linux__)
  return sched_getcpu();  // the vDSO: no system call
#else
  return -1;
#endif
}

[[gnu::hot]] std::int64_t monotonic_ns() noexcept {
  timespec now{};
  (void)clock_gettime(CLOCK_MONOTONIC, &now);  // the vDSO; libstdc++'s steady_clock reads the same
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

[[gnu::hot]] void yield_cpu() noexcept {
#if defined(TETHER_LINUX_DIRECT)
  (void)raw_syscall(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
#else
  (void)sched_yield();
#endif
}

std::uint64_t current_thread_id() noexcept {
#if defined(__linux__)
  return static_cast<std::uint64_t>(syscall(SYS_gettid));
#else
  return static_cast<std::uint64_t>(to_handle(pthread_self()));
#endif
}

[[gnu::hot]] void park_while(const std::atomic<std::uint32_t>& word, std::uint32_t expected,
                             std::int64_t deadline_ns) noexcept {
#if defined(__linux__)
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t), "a futex word is 32 bits");
  // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time, steady_clock's clock here.
  timespec until{};
  timespec* at = nullptr;
  if (deadline_ns >= 0) {
    until.tv_sec = static_cast<time_t>(deadline_ns / 1'000'000'000);
    until.tv_nsec = static_cast<long>(deadline_ns % 1'000'000'000);
    at = &until;
  }
  // EAGAIN (word != expected), EINTR, ETIMEDOUT: the caller re-checks in every case.
  auto* const futex = const_cast<std::atomic<std::uint32_t>*>(&word);
#if defined(TETHER_LINUX_DIRECT)
  (void)raw_syscall(SYS_futex, reinterpret_cast<long>(futex), FUTEX_WAIT_BITSET_PRIVATE, static_cast<long>(expected),
                    reinterpret_cast<long>(at), 0, static_cast<long>(FUTEX_BITSET_MATCH_ANY));
#else
  (void)syscall(SYS_futex, futex, FUTEX_WAIT_BITSET_PRIVATE, expected, at, nullptr, FUTEX_BITSET_MATCH_ANY);
#endif
#else
  word_park_fallback::park_while(word, expected, deadline_ns);
#endif
}

#if defined(__linux__)
namespace {
[[gnu::hot]] void futex_wake(const std::atomic<std::uint32_t>& word, int threads) noexcept {
  auto* const futex = const_cast<std::atomic<std::uint32_t>*>(&word);
#if defined(TETHER_LINUX_DIRECT)
  (void)raw_syscall(SYS_futex, reinterpret_cast<long>(futex), FUTEX_WAKE_PRIVATE, threads, 0, 0, 0);
#else
  (void)syscall(SYS_futex, futex, FUTEX_WAKE_PRIVATE, threads, nullptr, nullptr, 0);
#endif
}
}  // namespace
#endif

[[gnu::hot]] void wake_one_parked(const std::atomic<std::uint32_t>& word) noexcept {
#if defined(__linux__)
  futex_wake(word, 1);
#else
  word_park_fallback::wake_all(word);
#endif
}

[[gnu::hot]] void wake_all_parked(const std::atomic<std::uint32_t>& word) noexcept {
#if defined(__linux__)
  futex_wake(word, INT_MAX);
#else
  word_park_fallback::wake_all(word);
#endif
}

std::size_t min_stack_size() noexcept { return static_cast<std::size_t>(PTHREAD_STACK_MIN); }

bool cpu_in_range(int cpu) noexcept {
#if defined(__linux__)
  return cpu >= 0 && cpu < CPU_SETSIZE;
#else
  return false;  // no pinning API here
#endif
}

std::string allowed_cpus() {
  const std::string cgroup = read_line("/proc/self/cgroup");  // "0::/path" under cgroup v2
  if (cgroup.rfind("0::", 0) == 0) {
    const std::string cpus = read_line("/sys/fs/cgroup" + cgroup.substr(3) + "/cpuset.cpus.effective");
    if (!cpus.empty()) return cpus;
  }
  const std::string online = read_line("/sys/devices/system/cpu/online");
  return online.empty() ? "unknown" : online;
}

StartResult start_thread(std::size_t stack_size, int cpu, void (*entry)(void*), void* arg, Thread* out,
                         std::string* reason) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return StartResult::kNoMemory;
  struct AttrGuard {
    pthread_attr_t* a;
    ~AttrGuard() { pthread_attr_destroy(a); }
  } attr_guard{&attr};
  if (stack_size != 0 && pthread_attr_setstacksize(&attr, stack_size) != 0) return StartResult::kStackSizeUnusable;
  if (cpu >= 0) {
#if defined(__linux__)
    cpu_set_t only;
    CPU_ZERO(&only);
    CPU_SET(cpu, &only);
    if (pthread_attr_setaffinity_np(&attr, sizeof only, &only) != 0) return StartResult::kCannotPin;
#else
    return StartResult::kCannotPin;
#endif
  }
  auto* trampoline = new Trampoline{entry, arg};

  // The new thread starts with asynchronous signals blocked. glibc >= 2.32 takes the mask
  // in the attributes; older ones get it the classic way, by the creator's own mask.
  static const sigset_t blocked = async_signals();
  pthread_t thread;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  pthread_attr_setsigmask_np(&attr, &blocked);
  const int rc = pthread_create(&thread, &attr, &thread_main, trampoline);
#else
  sigset_t previous;
  pthread_sigmask(SIG_SETMASK, &blocked, &previous);
  const int rc = pthread_create(&thread, &attr, &thread_main, trampoline);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
#endif
  if (rc == EINVAL && cpu >= 0) {  // the kernel refused the affinity (glibc ends the thread)
    delete trampoline;
    return StartResult::kCannotPin;
  }
  if (rc != 0) {
    delete trampoline;
    *reason = std::strerror(rc);
    return StartResult::kRefused;
  }
  *out = Thread{to_handle(thread), 0};
  return StartResult::kStarted;
}

void join_thread(const Thread& t) noexcept { pthread_join(from_handle(t.handle), nullptr); }

void release_ended_thread(const Thread& t) noexcept { pthread_detach(from_handle(t.handle)); }

#if defined(__linux__) && defined(SYS_sched_setattr) && defined(SYS_sched_getattr)
namespace {

// The kernel's struct sched_attr, first version (SCHED_ATTR_SIZE_VER0, 48 bytes), under a
// name of ours: glibc 2.41 and linux/sched/types.h both define it, and not alike.
struct SchedAttr {
  std::uint32_t size;
  std::uint32_t sched_policy;
  std::uint64_t sched_flags;
  std::int32_t sched_nice;
  std::uint32_t sched_priority;
  std::uint64_t sched_runtime;  // SCHED_OTHER and SCHED_BATCH (6.12+): the slice
  std::uint64_t sched_deadline;
  std::uint64_t sched_period;
};
static_assert(sizeof(SchedAttr) == 48, "SCHED_ATTR_SIZE_VER0");

// fair_attr: the calling thread's attributes, when it runs under the fair scheduler.
bool fair_attr(SchedAttr& attr) noexcept {
  attr = SchedAttr{};
  if (syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) != 0) return false;
  return attr.sched_policy == SCHED_OTHER || attr.sched_policy == SCHED_BATCH;
}

// set_fair_attr: sets attr (read by fair_attr, then changed) on the calling thread. What
// was not changed is set again as it was read, and reset-on-fork kept
// (SCHED_FLAG_RESET_ON_FORK, 0x01: the one flag sched_getattr reports).
bool set_fair_attr(SchedAttr attr) noexcept {
  attr.size = sizeof attr;
  attr.sched_flags &= 0x01;
  return syscall(SYS_sched_setattr, 0, &attr, 0) == 0;
}

FairPolicy fair_policy_of(const SchedAttr& attr) noexcept {
  return attr.sched_policy == SCHED_BATCH ? FairPolicy::kBatch : FairPolicy::kNormal;
}

}  // namespace

std::int64_t current_time_slice_ns() noexcept {
  SchedAttr attr;
  return fair_attr(attr) ? static_cast<std::int64_t>(attr.sched_runtime) : 0;
}

bool request_time_slice(std::int64_t ns) noexcept {
  SchedAttr attr;
  if (!fair_attr(attr)) return false;
  attr.sched_runtime = static_cast<std::uint64_t>(ns);
  return set_fair_attr(attr);
}

FairPolicy current_fair_policy() noexcept {
  SchedAttr attr;
  return fair_attr(attr) ? fair_policy_of(attr) : FairPolicy::kNone;
}

bool switch_fair_policy(FairPolicy from, FairPolicy to) noexcept {
  SchedAttr attr;
  if (from == FairPolicy::kNone || to == FairPolicy::kNone || !fair_attr(attr) || fair_policy_of(attr) != from) {
    return false;
  }
  attr.sched_policy = to == FairPolicy::kBatch ? SCHED_BATCH : SCHED_OTHER;
  return set_fair_attr(attr);
}
#else
std::int64_t current_time_slice_ns() noexcept { return 0; }

bool request_time_slice(std::int64_t ns) noexcept {
  (void)ns;
  return false;
}

FairPolicy current_fair_policy() noexcept { return FairPolicy::kNone; }

bool switch_fair_policy(FairPolicy from, FairPolicy to) noexcept {
  (void)from;
  (void)to;
  return false;
}
#endif

void set_current_thread_name(const std::string& name) noexcept {
#if defined(__linux__)
  pthread_setname_np(pthread_self(), name.c_str());
#else
  (void)name;
#endif
}

std::string current_thread_name() {
  char buf[64] = {};
  if (pthread_getname_np(pthread_self(), buf, sizeof buf) != 0) return {};
  return buf;
}

bool notify_at_thread_exit(void (*fn)(void*) noexcept, void* arg) noexcept {
  t_exit_fn = fn;
  return pthread_setspecific(g_exit_key, arg) == 0;  // glibc clears the key before each call
}

bool enable_process_barrier() noexcept {
#if defined(__linux__) && defined(__NR_membarrier)
  const long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
  return false;
#endif
}

bool process_barrier() noexcept {
#if defined(__linux__) && defined(__NR_membarrier)
  return syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
  return false;
#endif
}

bool threads_run_at_exit() noexcept { return true; }

bool on_fork(void (*prepare)(), void (*parent)(), void (*child)()) noexcept {
  return pthread_atfork(prepare, parent, child) == 0;
}

}  // namespace tether::platform
