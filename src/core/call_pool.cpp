#include "core/call_pool.h"

#include <mutex>
#include <new>
#include <vector>

#include "core/fork_guard.h"
#include "core/hot_tls.h"

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
  std::vector<FreeSlot*> batches;  // guarded by mutex

  FreeSlot* take() {
    std::lock_guard lock(mutex);
    if (batches.empty()) return nullptr;
    FreeSlot* b = batches.back();
    batches.pop_back();
    return b;
  }
  bool give(FreeSlot* batch) {
    std::lock_guard lock(mutex);
    if (batches.size() >= kMaxBatches) return false;
    batches.push_back(batch);
    return true;
  }
};

Depot& depot() {
  static Depot* d = new Depot();  // never destroyed: threads may free slots during exit
  return *d;
}

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
  bool gone = false;          // destroyed: a later thread-local destructor uses the heap
  ~Magazine() {  // the thread ends: its slots go to the depot, or back to the heap
    if (slots != nullptr && !depot().give(slots)) release_list(slots);
    slots = nullptr;
    count = 0;
    gone = true;
  }
};
TETHER_HOT_TLS thread_local Magazine t_magazine;

}  // namespace

void CallPool::before_fork() { depot().mutex.before_fork(); }
void CallPool::after_fork_in_parent() noexcept { depot().mutex.after_fork_in_parent(); }
void CallPool::after_fork_in_child() noexcept { depot().mutex.after_fork_in_child(); }

void* CallPool::allocate(size_t size) {
  if (!kPooled || size > kSlotSize) return ::operator new(size);
  Magazine& m = t_magazine;
  if (m.gone) return ::operator new(kSlotSize);
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
  Magazine& m = t_magazine;
  if (m.gone) {
    ::operator delete(p);
    return;
  }
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
