// The replaced allocation functions of the reliability tests: see alloc_fault.h.
#include "alloc_fault.h"

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <new>

#include <execinfo.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ALLOC_FAULT_HOOK_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ALLOC_FAULT_HOOK_MALLOC 0
#endif
#endif
#if !defined(ALLOC_FAULT_HOOK_MALLOC) && TETHER_TEST_VALGRIND
#define ALLOC_FAULT_HOOK_MALLOC 0  // valgrind replaces malloc itself
#endif
#ifndef ALLOC_FAULT_HOOK_MALLOC
#define ALLOC_FAULT_HOOK_MALLOC 1
#endif

namespace fault {
namespace {

std::atomic<bool> g_armed{false};
std::atomic<uint64_t> g_counted{0};
std::atomic<uint64_t> g_fail_at{0};
std::atomic<bool> g_failed{false};
// Local-exec TLS of the executable: reading it never allocates, so malloc may read it.
thread_local int t_exempt = 0;
const bool g_trace = std::getenv("TETHER_SWEEP_TRACE") != nullptr;

// should_fail: counts one allocation of this thread; true for the armed one.
bool should_fail() noexcept {
  if (!g_armed.load(std::memory_order_acquire) || t_exempt != 0) return false;
  const uint64_t n = g_counted.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n != g_fail_at.load(std::memory_order_relaxed)) return false;
  g_failed.store(true, std::memory_order_relaxed);
  if (g_trace) {  // TETHER_SWEEP_TRACE=1: where the failing allocation was asked for
    ++t_exempt;
    void* frames[32];
    backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
    --t_exempt;
  }
  return true;
}

}  // namespace

void arm(uint64_t fail_at) {
  g_counted.store(0, std::memory_order_relaxed);
  g_failed.store(false, std::memory_order_relaxed);
  g_fail_at.store(fail_at, std::memory_order_relaxed);
  g_armed.store(true, std::memory_order_release);
}

uint64_t disarm() {
  g_armed.store(false, std::memory_order_release);
  return g_counted.load(std::memory_order_relaxed);
}

bool failed() { return g_failed.load(std::memory_order_relaxed); }
bool counts_malloc() { return ALLOC_FAULT_HOOK_MALLOC != 0; }

Exempt::Exempt() { ++t_exempt; }
Exempt::~Exempt() { --t_exempt; }

}  // namespace fault

#if ALLOC_FAULT_HOOK_MALLOC
// glibc lets a program replace malloc (its own internal allocations then come here too);
// the real allocator stays reachable as __libc_*.
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);

// refused: what a real allocator does when it has no memory (glibc reads errno after it).
void* refused() {
  errno = ENOMEM;
  return nullptr;
}
void* malloc(size_t n) { return fault::should_fail() ? refused() : __libc_malloc(n); }
void* calloc(size_t n, size_t size) { return fault::should_fail() ? refused() : __libc_calloc(n, size); }
void* realloc(void* p, size_t n) {
  if (n != 0 && fault::should_fail()) return refused();  // p stays valid, as realloc promises
  return __libc_realloc(p, n);
}
void free(void* p) { __libc_free(p); }
void* memalign(size_t align, size_t n) { return fault::should_fail() ? refused() : __libc_memalign(align, n); }
void* aligned_alloc(size_t align, size_t n) { return memalign(align, n); }
int posix_memalign(void** out, size_t align, size_t n) {
  void* p = memalign(align, n);
  if (p == nullptr) return 12;  // ENOMEM
  *out = p;
  return 0;
}
}
#define ALLOC_FAULT_RAW_MALLOC __libc_malloc
#define ALLOC_FAULT_RAW_ALIGNED __libc_memalign
#else
#define ALLOC_FAULT_RAW_MALLOC std::malloc
#define ALLOC_FAULT_RAW_ALIGNED(a, n) std::aligned_alloc(a, ((n) + (a)-1) / (a) * (a))
#endif

namespace {

// The raw allocator below is never counted, so each new counts exactly once.
void* counted_new(size_t n) noexcept {
  if (fault::should_fail()) return nullptr;
  return ALLOC_FAULT_RAW_MALLOC(n == 0 ? 1 : n);
}

void* counted_new_aligned(size_t n, std::align_val_t a) noexcept {
  if (fault::should_fail()) return nullptr;
  return ALLOC_FAULT_RAW_ALIGNED(static_cast<size_t>(a), n == 0 ? 1 : n);
}

}  // namespace

void* operator new(size_t n) {
  void* p = counted_new(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return counted_new(n); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return counted_new(n); }
void* operator new(size_t n, std::align_val_t a) {
  void* p = counted_new_aligned(n, a);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
