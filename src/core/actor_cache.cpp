#include "core/actor_cache.h"

#include <memory>
#include <new>
#include <utility>

#include "core/actor.h"
#include "core/fork_guard.h"
#include "core/handle_table.h"

namespace tether::actor_cache {
namespace {

constexpr size_t kEntries = 4;

struct Entry {
  uint64_t id = 0;  // 0: empty
  std::shared_ptr<Actor> actor;
  std::unique_ptr<Actor::Sender> sender;  // null: this actor takes no fast calls from here

  Entry() = default;
  Entry(uint64_t i, std::shared_ptr<Actor> a, std::unique_ptr<Actor::Sender> s) noexcept
      : id(i), actor(std::move(a)), sender(std::move(s)) {}
  // Moves leave an empty entry behind; the target must be empty (nothing is closed here).
  Entry(Entry&& o) noexcept : id(std::exchange(o.id, 0)), actor(std::move(o.actor)), sender(std::move(o.sender)) {}
  Entry& operator=(Entry&& o) noexcept {
    id = std::exchange(o.id, 0);
    actor = std::move(o.actor);
    sender = std::move(o.sender);
    return *this;
  }

  // close: gives the lease back, then lets go of the actor (possibly its last reference:
  // its destructor may run user drops, so the caller calls this only once the cache no
  // longer depends on the entry).
  void close() noexcept {
    if (sender) actor->close_sender(std::move(sender));
    actor.reset();
    id = 0;
  }
};

struct Cache {
  Entry entries[kEntries];  // most recently filled first
  ~Cache() {
    for (Entry& e : entries) {
      if (in_forked_child()) {
        // Nothing of the parent's may run here: keep the references forever.
        new Entry(std::move(e));
        continue;
      }
      Entry gone = std::move(e);
      gone.close();
    }
  }
};

thread_local Cache t_cache;

Entry* find(Cache& c, uint64_t id) noexcept {
  if (id == 0) return nullptr;  // the null handle; also what empty entries hold
  for (Entry& e : c.entries) {
    if (e.id == id) return &e;
  }
  return nullptr;
}

// fill: a new first entry for id; the evicted last one is moved to `evicted` for the
// caller to close after it is done with the cache.
Entry& fill(Cache& c, uint64_t id, Entry& evicted) {
  std::shared_ptr<Actor> actor = HandleTable::instance().get<Actor>(Kind::Actor, id);
  std::unique_ptr<Actor::Sender> sender;
  try {
    sender = actor->open_sender();
  } catch (const std::bad_alloc&) {  // no memory for the fast path: the general one serves
  }
  evicted = std::move(c.entries[kEntries - 1]);
  for (size_t i = kEntries - 1; i > 0; --i) c.entries[i] = std::move(c.entries[i - 1]);
  c.entries[0] = Entry{id, std::move(actor), std::move(sender)};
  return c.entries[0];
}

}  // namespace

bool post(uint64_t id, tether_method_fn m, UserArg& arg) {
  Cache& c = t_cache;
  Entry evicted, released;  // closed when post returns, after every use of the cache
  struct Close {
    Entry& a;
    Entry& b;
    ~Close() {
      a.close();
      b.close();
    }
  } close{evicted, released};
  Entry* e = find(c, id);
  if (e == nullptr) e = &fill(c, id, evicted);
  if (!e->actor->handle_live()) {  // released: the general path says so
    released = std::move(*e);
    return false;
  }
  if (!e->sender) return false;
  return e->actor->post_fast(*e->sender, m, arg);
}

void forget(uint64_t id) noexcept {
  Entry* e = find(t_cache, id);
  if (e == nullptr) return;
  Entry gone = std::move(*e);
  gone.close();
}

}  // namespace tether::actor_cache
