#include "capi/actor_cache.h"

#include <new>
#include <utility>

#include "core/actor.h"
#include "core/thread_exit.h"
#include "platform/platform.h"

namespace tether::capi::actor_cache {

namespace detail {
TETHER_HOT_TLS constinit thread_local Hot t_hot{};
}  // namespace detail

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

using detail::Hot;
using detail::t_hot;

// Set once this thread's cache is destroyed: a call from a later thread-local destructor
// takes the general path without touching it.
TETHER_HOT_TLS thread_local bool t_cache_gone = false;
// The id remember() saw last (0: none): an id it sees twice in a row gets an entry.
TETHER_HOT_TLS constinit thread_local uint64_t t_looked_up = 0;

struct Cache {
  Entry entries[kEntries];  // most recently used first

  void sync_hot() noexcept {
    const Entry& e = entries[0];
    if (e.id == 0) {
      t_hot = Hot{};
    } else if (e.sender) {
      t_hot = Hot{e.id, e.actor.get(), e.sender.get(), e.sender->ring, &e.actor->default_lane()};
    } else {
      t_hot = Hot{e.id, e.actor.get(), nullptr, nullptr, nullptr};
    }
  }

  ~Cache() {
    t_hot = Hot{};  // a call made later on this thread takes the general path
    t_cache_gone = true;
    for (Entry& e : entries) {
      Entry gone = std::move(e);
      gone.close();
    }
  }
};

// Touched on the slow paths only; made on first use, destroyed by the thread's cleanup.
thread_local ThreadLocalSlot<Cache, Cleanup::ActorCache> t_cache;
void destroy_cache() noexcept { t_cache.destroy(); }

Entry* find(Cache& c, uint64_t id) noexcept {
  if (id == 0) return nullptr;  // the null handle; also what empty entries hold
  for (Entry& e : c.entries) {
    if (e.id == id) return &e;
  }
  return nullptr;
}

// open_sender_at_need: gives e a sender if it has none (a new entry; or no ring was free
// last time, and one may be now). Without one (no ring free, no memory, the actor
// stopping) the general path serves.
void open_sender_at_need(Entry& e) noexcept {
  if (e.sender) return;
  try {
    e.sender = e.actor->open_sender();
  } catch (const std::bad_alloc&) {
  }
}

// Closes an entry when the function that moved it here returns, after every use of the
// cache (closing may run user code that calls back in).
struct Closing {
  Entry entry;
  ~Closing() { entry.close(); }
};

}  // namespace

void forget_released(uint64_t id) noexcept {
  const Hot& h = t_hot;
  if (h.id == id && id != 0 && !h.actor->handle_live()) forget(id);
}

ThisThread::~ThisThread() {
  if (!evicted_actor_ && !evicted_sender_) return;  // most calls: nothing was evicted
  Entry evicted{0, std::move(evicted_actor_), std::move(evicted_sender_)};
  evicted.close();
}

Actor::Sender* ThisThread::sender_for(Actor& target) noexcept {
  const uint64_t id = id_;
  const std::shared_ptr<Actor>& actor = actor_;
  if (id == 0 || t_cache_gone || &target != actor.get()) return nullptr;
  Cache* cp = t_cache.get(&destroy_cache);
  if (cp == nullptr) return nullptr;  // no memory to arm its cleanup: the general path serves
  Cache& c = *cp;
  Entry* e = find(c, id);
  if (e == nullptr) {
    Entry& last = c.entries[kEntries - 1];
    last.id = 0;
    evicted_actor_ = std::move(last.actor);
    evicted_sender_ = std::move(last.sender);
    for (size_t i = kEntries - 1; i > 0; --i) c.entries[i] = std::move(c.entries[i - 1]);
    c.entries[0] = Entry{id, actor, nullptr};
    open_sender_at_need(c.entries[0]);
  } else {
    if (e != &c.entries[0]) std::swap(*e, c.entries[0]);
    open_sender_at_need(c.entries[0]);
  }
  c.sync_hot();
  return c.entries[0].sender.get();
}

void remember(uint64_t id, const std::shared_ptr<Actor>& actor) noexcept {
  if (id == 0 || t_cache_gone) return;
  if (t_looked_up != id) {  // the first lookup of a run of calls to id: noted only
    t_looked_up = id;
    return;
  }
  Cache* cp = t_cache.get(&destroy_cache);
  if (cp == nullptr) return;  // no memory to arm its cleanup: every call looks the handle up
  Cache& c = *cp;
  Entry* e = find(c, id);
  if (e == &c.entries[0] && c.entries[0].sender) return;
  Closing evicted;
  if (e != nullptr) {
    if (e != &c.entries[0]) std::swap(*e, c.entries[0]);
  } else {
    evicted.entry = std::move(c.entries[kEntries - 1]);
    for (size_t i = kEntries - 1; i > 0; --i) c.entries[i] = std::move(c.entries[i - 1]);
    c.entries[0] = Entry{id, actor, nullptr};
  }
  open_sender_at_need(c.entries[0]);
  c.sync_hot();
}  // evicted is closed here, after the cache's last use

void forget(uint64_t id) noexcept {
  if (t_cache_gone) return;
  Cache* cp = t_cache.get(&destroy_cache);
  if (cp == nullptr) return;
  Cache& c = *cp;
  Entry* e = find(c, id);
  if (e == nullptr) return;
  Closing gone{std::move(*e)};
  if (e == &c.entries[0]) c.sync_hot();
}

namespace {

// after_fork_in_child: the forking thread's entries are the parent's actors: left alone
// for good (nothing of theirs may run in the child), so its next call takes the general
// path (and meets TETHER_E_FORKED there). A handler of its own, registered when the
// library loads (fork_guard.h says what else a child resets).
void after_fork_in_child() noexcept {
  if (t_cache_gone) return;
  Cache* cp = t_cache.get(&destroy_cache);
  if (cp == nullptr) return;
  Cache& c = *cp;
  for (Entry& e : c.entries) {
    if (e.id == 0 && !e.actor) continue;
    try {
      new Entry(std::move(e));  // never closed, never destroyed
    } catch (...) {           // no memory: forget the entry without closing it
      (void)new (&e) Entry();
    }
  }
  c.sync_hot();
}

[[maybe_unused]] const bool g_fork_handler = platform::on_fork(nullptr, nullptr, &after_fork_in_child);

}  // namespace

}  // namespace tether::capi::actor_cache
