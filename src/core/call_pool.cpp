#include "core/call_pool.h"

#include <mutex>
#include <new>

#include "core/fork_guard.h"
#include "core/hot_tls.h"
#include "core/immortal.h"
#include "core/thread_exit.h"

namespace tether {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPooled = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kPooled = false;
#else
constexpr bool kPooled = true;
#endif
#else
constexpr bool kPooled = true;
#endif

struct FreeSlot {
  FreeSlot* next;
};

// A batch: kMagazine free slots linked through their first word.
struct Depot {
  static constexpr size_t kMaxBatches = 64;  // beyond this, full magazines go back to the heap
  ForkSafeMutex mutex;
  FreeSlot* batches[kMaxBatches] = {};  // guarded by mutex: a fixed array, so give() never allocates
  size_t count = 0;                     // guarded by mutex

  FreeSlot* take() {
    std::lock_guard lock(mutex);
    return count == 0 ? nullptr : batches[--count];
  }
  bool give(FreeSlot* batch) noexcept {
    std::lock_guard lock(mutex);
    if (count >= kMaxBatches) return false;
    batches[count++] = batch;
    return true;
  }
};

// Never destroyed (threads may free slots during exit); made without allocating, so a
// free() that first touches it cannot fail.
Depot& depot() noexcept { return immortal<Depot>(); }

void release_list(FreeSlot* list) noexcept {
  while (list != nullptr) {
    FreeSlot* next = list->next;
    ::operator delete(list);
    list = next;
  }
}

struct Magazine {
  FreeSlot* slots = nullptr;  // free slots of this thread
  size_t count = 0;
  ~Magazine() {  // the thread ends: its slots go to the depot, or back to the heap
    if (slots != nullptr && !depot().give(slots)) release_list(slots);
  }
};
// Made on first use; null once the thread's cleanup destroyed it, or when the cleanup
// could not be armed (no memory): then this thread uses the heap.
TETHER_HOT_TLS thread_local ThreadLocalSlot<Magazine, Cleanup::CallPool> t_magazine;
void destroy_magazine() noexcept { t_magazine.destroy(); }

}  // namespace

void CallPool::before_fork() { depot().mutex.before_fork(); }
void CallPool::after_fork_in_parent() noexcept { depot().mutex.after_fork_in_parent(); }
void CallPool::after_fork_in_child() noexcept { depot().mutex.after_fork_in_child(); }

void* CallPool::allocate(size_t size) {
  if (!kPooled || size > kSlotSize) return ::operator new(size);
  Magazine* mp = t_magazine.get(&destroy_magazine);
  if (mp == nullptr) return ::operator new(kSlotSize);
  Magazine& m = *mp;
  if (m.slots == nullptr) {
    m.slots = depot().take();
    m.count = m.slots != nullptr ? kMagazine : 0;
    if (m.slots == nullptr) return ::operator new(kSlotSize);
  }
  FreeSlot* s = m.slots;
  m.slots = s->next;
  --m.count;
  return s;
}

void CallPool::free(void* p) noexcept {
  if (p == nullptr) return;
  if (!kPooled) {
    ::operator delete(p);
    return;
  }
  Magazine* mp = t_magazine.get(&destroy_magazine);
  if (mp == nullptr) {
    ::operator delete(p);
    return;
  }
  Magazine& m = *mp;
  if (m.count == kMagazine) {  // full: hand the whole magazine to the depot
    if (!depot().give(m.slots)) release_list(m.slots);
    m.slots = nullptr;
    m.count = 0;
  }
  auto* s = static_cast<FreeSlot*>(p);
  s->next = m.slots;
  m.slots = s;
  ++m.count;
}

}  // namespace tether
