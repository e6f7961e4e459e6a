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

// Abandoned: what a forked child's forking thread had put off: the parent's futures,
// never dropped there (fork_guard.h). Written only by the child handler, while the child
// has one thread.
struct Abandoned {
  Abandoned* next;
  std::shared_ptr<Future> entries[FutureGraveyard::kEntries];
};
constinit Abandoned* g_abandoned = nullptr;
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
  if (g == nullptr || g->count == 0) return;
  // Kept for good, reachable (a leak checker in the child sees them held, not lost):
  // moved into a block that g_abandoned's list keeps and nothing ever frees or drops.
  if (auto* kept = new (std::nothrow) Abandoned{g_abandoned, {}}) {
    for (size_t i = 0; i < g->count; ++i) kept->entries[i] = std::move(g->entries[i]);
    g_abandoned = kept;
  } else {
    for (size_t i = 0; i < g->count; ++i) (void)new (&g->entries[i]) std::shared_ptr<Future>();  // forgotten in place
  }
  g->count = 0;
}

}  // namespace tether
