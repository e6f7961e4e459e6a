#include "core/future_graveyard.h"

#include <new>
#include <utility>

#include "core/future.h"
#include "core/hot_tls.h"
#include "core/thread_exit.h"

namespace tether {
namespace {

struct Graveyard {
  std::shared_ptr<Future> entries[FutureGraveyard::kEntries];
  size_t count = 0;

  void drain() noexcept {
    // Dropped one by one, count first: a destructor never calls back in here (quiet), but
    // the count stays right whatever a drop does.
    while (count != 0) {
      std::shared_ptr<Future> gone = std::move(entries[--count]);
    }
  }
  ~Graveyard() { drain(); }
};

TETHER_HOT_TLS constinit thread_local ThreadLocalSlot<Graveyard, Cleanup::FutureGraveyard> t_graveyard;
TETHER_HOT_TLS constinit thread_local bool t_last_wait_pending = false;
void destroy_graveyard() noexcept { t_graveyard.destroy(); }

}  // namespace

void FutureGraveyard::defer(std::shared_ptr<Future>&& future) noexcept {
  std::shared_ptr<Future> held = std::move(future);
  if (!t_last_wait_pending || !held || !held->quiet_to_drop()) return;  // dropped now, as always
  Graveyard* g = t_graveyard.get(&destroy_graveyard);
  if (g == nullptr) return;  // no cleanup could be armed (or the thread is ending): dropped now
  if (g->count == kEntries) g->drain();
  g->entries[g->count++] = std::move(held);
}

void FutureGraveyard::waited(bool pending) noexcept {
  t_last_wait_pending = pending;
  if (pending) drain();
}

void FutureGraveyard::drain() noexcept {
  if (Graveyard* g = t_graveyard.peek()) g->drain();
}

void FutureGraveyard::after_fork_in_child() noexcept {
  Graveyard* g = t_graveyard.peek();
  if (g == nullptr) return;
  for (size_t i = 0; i < g->count; ++i) {
    // Never dropped: the reference is moved into a block nobody frees.
    (void)new (std::nothrow) std::shared_ptr<Future>(std::move(g->entries[i]));
    if (g->entries[i]) (void)new (&g->entries[i]) std::shared_ptr<Future>();  // no memory: forgotten in place
  }
  g->count = 0;
}

}  // namespace tether
