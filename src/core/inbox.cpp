#include "core/inbox.h"

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "core/cpu_relax.h"
#include "core/hot_path.h"

namespace tether {
namespace {

// Entries the consumer takes from one source before it looks at the next: producers
// share the lane fairly, and a batch stays in the cache lines the producer just wrote.
constexpr uint32_t kBatch = 128;
// Batches one FastRun may take in a row while nothing is queued elsewhere: its calls'
// set-up is paid once for them all, and what they settle (counted at the run's end,
// actor_fast_path.cpp) lags by 1,024 calls at most. Measured 2026-12-06 (callgrind, a
// stream of fire-and-forget calls, then a call with a future: mailbox_waits_on_'s case):
// the actor's thread 47.8 -> 42.7 instructions a call (41.6 with runs of any length).
constexpr uint32_t kRunBatches = 8;

// Convoy guard. A consumer that has caught up with a streaming producer reads the very
// cache lines the producer is writing (two entries share a line, and the published count
// changes on every call), so each call costs both threads a cache-line transfer. On this
// project's 2-vCPU VM that is cheap while the vCPUs sit close and costly when the host
// places them apart (a plain SPSC ring: 3 ns vs 50 ns an item). So once drain_ring has
// emptied its ring, it lets calls build up before it chases the producer again, while
// the count still grows (the producer is streaming) and nothing waits elsewhere in the
// inbox: up to kBuildUp calls, checked kBuildUpShortPauses, then kBuildUpPauses pauses
// apart, kBuildUpTurns times at most. A lone call is run after the first, short check.
// Not when the next call has a future (build_up says why).
// Measured with the vCPUs apart: 28-30 M calls/s without, 39-43 with (the baseline 12).
constexpr uint64_t kBuildUp = 4096;
constexpr int kBuildUpTurns = 512;
constexpr int kBuildUpShortPauses = 4;
constexpr int kBuildUpPauses = 16;

// next_source: the source after s in the consumer's turn, among the mailbox and the first
// `rings` rings (those made: the others hold nothing, see Inbox::rings_to_mark).
size_t next_source(size_t s, size_t rings) noexcept {
  if (s == kMailboxSource) return rings == 0 ? kMailboxSource : 0;
  return s + 1 < rings ? s + 1 : kMailboxSource;
}

}  // namespace

Inbox::~Inbox() {
  for (std::atomic<CallRing*>& r : rings_) delete r.load(std::memory_order_acquire);
}

void Inbox::cancel_everything() noexcept {
  // Only a manual lane nobody ran (or drained) can still hold calls here.
  std::vector<Call*> left;
  {
    Mailbox::ConsumerToken token(mailbox_);
    while (MailboxNode* n = mailbox_.pop(token)) left.push_back(static_cast<Call*>(n));
    mailbox_waits_on_ = kLaneSources;
  }
  for (Call* c : left) {
    if (!c->claimed_) c->cancel();
    c->unref();
  }
  for (std::atomic<CallRing*>& slot : rings_) {
    CallRing* r = slot.load(std::memory_order_acquire);
    if (r == nullptr) continue;
    r->for_each_queued([](RingEntry& e) {
      const uintptr_t word0 = e.word0.load(std::memory_order_acquire);
      if (word0 != 0 && e.kind() == RingEntry::kFast) e.fast_target()->cancel_fast(e.fast_call(word0));
    });
  }
}

SourceMarks Inbox::read_marks() const noexcept {
  // The rings made so far only, as push_fast reads them (its comment says why that is
  // enough): a ring never made has published nothing, and each count is a cache line of
  // its own that a call after idle would fetch for a 0. The mailbox is the pusher's own
  // source, whose mark nobody reads (first_unreached skips it).
  SourceMarks m{};
  const size_t rings = ring_count_.load(std::memory_order_relaxed);
  for (size_t s = 0; s < rings && s < kLaneRings; ++s) {
    m[s] = static_cast<uint32_t>(published_[s].value.load(std::memory_order_acquire));
  }
  return m;
}

void Inbox::push(Call* c) noexcept {
  if (has_rings_) {
    std::lock_guard lock(push_mutex_);  // the count follows the mailbox's order
    c->marks = read_marks();
    mailbox_.push(c);
    std::atomic<uint64_t>& count = published_[kMailboxSource].value;
    count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  } else {
    mailbox_.push(c);
  }
}

CallRing* Inbox::lease_ring() {
  if (!has_rings_) return nullptr;
  for (size_t k = 0; k < kLaneRings; ++k) {
    CallRing* r = rings_[k].load(std::memory_order_acquire);
    if (r == nullptr) {
      // Counted before it can be seen: a consumer that finds no ring may skip the heavy
      // fence when it parks (pinned_lane.h, C3).
      ring_count_.fetch_add(1, std::memory_order_seq_cst);
      auto made = std::make_unique<CallRing>(k, published_[k].value);
      if (rings_[k].compare_exchange_strong(r, made.get(), std::memory_order_acq_rel)) {
        r = made.release();
      } else {
        ring_count_.fetch_sub(1, std::memory_order_relaxed);  // another thread's ring is there
      }
    }
    // A lease starts fenced in full (not counted light): its holder's first light
    // publication counts it (push_fast). A thread that makes calls with a future and waits
    // for each (fenced in full while the consumer sleeps) never makes the lane's parks
    // heavy (pinned_lane.h, C3).
    if (r->try_lease()) return r;
  }
  return nullptr;
}

TETHER_HOT_PATH uint64_t Inbox::published_total() const noexcept {
  uint64_t n = published_[kMailboxSource].value.load(std::memory_order_relaxed);
  const size_t rings = std::min<size_t>(ring_count_.load(std::memory_order_relaxed), kLaneRings);
  for (size_t s = 0; s < rings; ++s) n += published_[s].value.load(std::memory_order_relaxed);
  return n;
}

TETHER_HOT_PATH bool Inbox::anything_queued() noexcept {
  if (mailbox_.maybe_nonempty()) return true;
  // No ring counted, no ring entry. Read seq_cst: a ring counted after this load has its
  // producer's seq_cst load of sleepers_ (P2) see the consumer's announcement (C2). Only
  // the rings counted can hold an entry (made in slot order: rings_to_mark).
  return has_rings_ && rings_hold_entries(std::min<size_t>(ring_count_.load(std::memory_order_seq_cst), kLaneRings));
}

TETHER_HOT_PATH bool Inbox::try_pop(Work& w) {
  if (!has_rings_) return pop_shared(w);
  const uint32_t made = ring_count_.load(std::memory_order_seq_cst);
  if (made == 0) {
    // No ring yet (most lanes: no producer ever called it fire-and-forget): the mailbox
    // is the only source, and there is no other to visit. pop_mailbox still checks the
    // marks: an entry pushed after a ring appeared may wait for it; then this returns
    // false, the lane retries (the entry is there: work_ready) and, having seen the
    // entry, sees the count that preceded it and takes the general path below. seq_cst:
    // drain_here runs after a close (seq_cst), so a ring counted before the close is
    // seen here, and a push after it finds the lane closed (Lane::push).
    size_t blocked = kLaneSources;
    return pop_mailbox(w, blocked);
  }
  // The walk visits the mailbox and the rings made (see rings_to_mark: no other holds an
  // entry; one made since is visited when marks name it, as blocked).
  const size_t rings = std::min<size_t>(made, kLaneRings);
  // Nothing queued: no walk, each source found empty (the consumer's look before it
  // idles, whose code is cold after an idle spell: each line it touches is a miss).
  if (!mailbox_.maybe_nonempty() && !rings_hold_entries(rings)) return false;
  const size_t sources = rings + 1;
  size_t s = current_;
  size_t empty = 0;  // sources found empty in a row
  for (size_t hops = 0; hops < 4 * sources && empty < sources; ++hops) {
    size_t blocked = kLaneSources;
    if (pop_source(s, w, blocked)) {
      if (++batch_ == kBatch) {
        batch_ = 0;
        current_ = next_source(s, rings);
      } else {
        current_ = s;
      }
      return true;
    }
    batch_ = 0;
    if (blocked != kLaneSources) {  // the entry waits for another source: drain that one
      s = blocked;
      empty = 0;
    } else {
      s = next_source(s, rings);
      ++empty;
    }
  }
  current_ = s;
  return false;
}

TETHER_HOT_PATH bool Inbox::pop_source(size_t s, Work& w, size_t& blocked) {
  return s == kMailboxSource ? pop_mailbox(w, blocked) : pop_ring(s, w, blocked);
}

bool Inbox::pop_shared(Work& w) {
  while (mailbox_.maybe_nonempty()) {
    Call* c;
    {
      Mailbox::ConsumerToken token(mailbox_);
      MailboxNode* n = mailbox_.pop(token);
      if (n == nullptr) return false;  // a push is half linked: the caller retries
      c = static_cast<Call*>(n);
      if (give(c, w)) return true;
    }
    c->unref();  // claimed: its canceller finishes it
  }
  return false;
}

TETHER_HOT_PATH bool Inbox::pop_mailbox(Work& w, size_t& blocked) {
  while (mailbox_.maybe_nonempty()) {
    Call* c;
    {
      Mailbox::ConsumerToken token(mailbox_);
      MailboxNode* n = mailbox_.peek(token);
      if (n == nullptr) return false;
      const size_t waits_on = first_unreached(n->marks, consumed_, kMailboxSource);
      if (waits_on != kLaneSources) {
        blocked = waits_on;
        mailbox_waits_on_ = waits_on;
        mailbox_waits_for_ = n->marks[waits_on];
        return false;
      }
      if (mailbox_.pop(token) == nullptr) return false;  // half linked: retried soon
      mailbox_waits_on_ = kLaneSources;
      ++consumed_[kMailboxSource];
      c = static_cast<Call*>(n);
      if (give(c, w)) return true;
    }
    c->unref();  // claimed: its canceller finishes it
  }
  return false;
}

TETHER_HOT_PATH bool Inbox::pop_ring(size_t s, Work& w, size_t& blocked) {
  CallRing* r = rings_[s].load(std::memory_order_acquire);
  if (r == nullptr) return false;
  while (RingEntry* e = r->peek()) {
    if (e->kind() == RingEntry::kMarks) {
      const size_t waits_on = first_unreached(e->marks(), consumed_, s);
      if (waits_on != kLaneSources) {
        blocked = waits_on;
        return false;
      }
      step_ring(*r);
      continue;
    }
    step_ring(*r);
    const uintptr_t word0 = e->word0.load(std::memory_order_acquire);  // after the step: see step_ring
    if (word0 == 0) continue;  // claimed by a canceller, who finishes it
    w.call = nullptr;
    w.target = e->fast_target();
    w.fast = e->fast_call(word0);
    took_futures_ = (e->word3 & RingEntry::kFuture) != 0;
    return true;
  }
  return false;
}

TETHER_HOT_PATH bool Inbox::drain_ring_from(Lane& lane, size_t s, CallRing& ring) noexcept {
  CallRing* r = &ring;
  if (caught_up_) build_up(*r);
  uint32_t ran = 0;
  caught_up_ = false;
  while (ran < kBatch) {
    RingEntry* e = r->peek();
    if (e == nullptr) {
      caught_up_ = true;
      if (work_elsewhere(s)) {  // emptied: the others' turn now, not after a full batch
        current_ = next_source(s, rings_to_mark());
        batch_ = 0;
      }
      break;
    }
    if (e->kind() == RingEntry::kMarks) {
      if (first_unreached(e->marks(), consumed_, s) != kLaneSources) break;  // try_pop drains that source
      step_ring(*r);
      continue;
    }
    step_ring(*r);
    const uintptr_t word0 = e->word0.load(std::memory_order_acquire);  // after the step: see step_ring
    if (word0 == 0) continue;  // claimed by a canceller, who finishes it
    // The target runs this call and the ones right behind it that are its too.
    FastTarget* target = e->fast_target();
    took_futures_ = (e->word3 & RingEntry::kFuture) != 0;
    FastRun more(*this, *r, e->word3, kBatch - ran - 1);
    target->run_fast(lane, e->fast_call(word0), more);
    ran += 1 + more.finish();
  }
  // A full batch (or more: a run goes on while nothing waits elsewhere): the others'
  // turn, if they have calls; else this ring's next batch at once (a turn through the
  // empty sources would take one call the slow way, try_pop).
  if (ran >= kBatch && work_elsewhere(s)) {
    current_ = next_source(s, rings_to_mark());
    batch_ = 0;
  }
  return ran != 0;
}

TETHER_HOT_PATH void FastRun::open_span() noexcept {
  const CallRing::Span span = ring_->readable(room_);
  at_ = base_ = span.begin;
  end_ = span.end;
  room_ -= static_cast<uint32_t>(end_ - at_);
}

TETHER_HOT_PATH void FastRun::catch_up() noexcept {
  const auto n = static_cast<uint32_t>(at_ - base_);
  if (n == 0) return;
  ring_->advance(n);
  inbox_->consumed_[ring_->source()] = ring_->consumed();
  stepped_ += n;
  base_ = at_;
}

TETHER_HOT_PATH FastRun::Taken FastRun::next_beyond_span() noexcept {
  if (ring_ == nullptr) return {};
  catch_up();
  // The next block, or entries published since the span opened: one entry the ring's
  // own way (peek crosses into a block, step_ring recycles the one left), then a span.
  // At the limit, another batch while nothing is queued elsewhere (kRunBatches).
  for (;;) {
    if (room_ == 0) {
      if (batches_ == kRunBatches || inbox_->work_elsewhere(ring_->source())) return {};
      ++batches_;
      room_ = kBatch;
    }
    RingEntry* e = ring_->peek();
    if (e == nullptr || e->word3 != target_word_) return {};
    inbox_->step_ring(*ring_);
    --room_;
    ++stepped_;
    const uintptr_t word0 = e->word0.load(std::memory_order_acquire);  // after the step: see step_ring
    if (word0 == 0) continue;  // claimed by a canceller, who finishes it
    open_span();
    return {e, word0};
  }
}

TETHER_HOT_PATH void Inbox::build_up(CallRing& r) noexcept {
  // Not for calls with a future: their caller may wait for the first while it streams
  // the rest, and the build-up would hold the first until the last was queued (1,024
  // futures in flight across CPUs: 120 -> 134 ns a call, the two sides taking turns).
  if (const RingEntry* e = r.peek(); e != nullptr && (e->word3 & RingEntry::kFuture) != 0) return;
  uint64_t n = r.unread_count();
  for (int turn = 0; n != 0 && n < kBuildUp && turn < kBuildUpTurns; ++turn) {
    const int pauses = turn == 0 ? kBuildUpShortPauses : kBuildUpPauses;
    for (int i = 0; i < pauses; ++i) cpu_relax();
    const uint64_t more = r.unread_count();
    if (more == n || work_elsewhere(r.source())) return;  // the producer paused, or others wait
    n = more;
  }
}

TETHER_HOT_PATH bool Inbox::work_elsewhere(size_t s) noexcept {
  const bool mailbox_waits_here = mailbox_waits_on_ == s && mark_unreached(consumed_[s], mailbox_waits_for_);
  if (!mailbox_waits_here && mailbox_.maybe_nonempty()) return true;
  const size_t rings = std::min<size_t>(ring_count_.load(std::memory_order_relaxed), kLaneRings);
  for (size_t k = 0; k < rings; ++k) {
    if (k != s && published_[k].value.load(std::memory_order_acquire) != consumed_[k]) return true;
  }
  return false;
}

void Inbox::meet_canceller(CallRing& ring, CallRing::Block* left) noexcept {
  // A canceller may have claimed the entry: wait until it is done, so its claim is
  // visible, and recycle the block only once it no longer walks there.
  Mailbox::ConsumerToken token(mailbox_);
  if (left != nullptr) ring.recycle(left);
}

// pred(owner): whether the queued call of that owner is cancelled.
template <class Pred>
size_t Inbox::cancel_queued_if(Pred pred) {
  std::vector<Call*> calls;  // claimed in the mailbox: a second reference each
  std::vector<std::pair<FastTarget*, FastCall>> fast;
  // Whatever was claimed is cancelled, even if a vector cannot grow midway.
  struct Finish {
    std::vector<Call*>& calls;
    std::vector<std::pair<FastTarget*, FastCall>>& fast;
    ~Finish() {  // outside the token: cancel() runs user drops
      for (Call* c : calls) {
        c->cancel();
        c->unref();
      }
      for (auto& [target, call] : fast) target->cancel_fast(call);
    }
  } finish{calls, fast};
  {
    Mailbox::ConsumerToken token(mailbox_);
    mailbox_.for_each_queued(token, [&](MailboxNode* n) {
      auto* c = static_cast<Call*>(n);
      if (!c->claimed_ && pred(c->owner())) {
        calls.push_back(c);
        c->claimed_ = true;
        c->add_ref();
      }
    });
    if (has_rings_ && ring_count_.load(std::memory_order_acquire) != 0) {
      struct Cancelling {
        std::atomic<bool>& flag;
        ~Cancelling() { flag.store(false, std::memory_order_release); }
      } cancelling{cancelling_};
      cancelling_.store(true, std::memory_order_relaxed);
      heavy_fence();  // pairs with step_ring's light_fence: the consumer's position is final
      for (std::atomic<CallRing*>& slot : rings_) {
        CallRing* r = slot.load(std::memory_order_acquire);
        if (r == nullptr) continue;
        r->for_each_queued([&](RingEntry& e) {
          const uintptr_t word0 = e.word0.load(std::memory_order_acquire);
          if (word0 == 0 || e.kind() != RingEntry::kFast) return;
          FastTarget* target = e.fast_target();
          if (!pred(target->fast_owner())) return;
          fast.emplace_back(target, e.fast_call(word0));
          e.word0.store(0, std::memory_order_release);  // claimed: the consumer steps over it
        });
      }
    }
  }
  return calls.size() + fast.size();
}

size_t Inbox::cancel_queued_of(const void* owner) {
  return cancel_queued_if([owner](const void* o) { return o == owner; });
}

size_t Inbox::cancel_all_queued() {
  return cancel_queued_if([](const void*) { return true; });
}

}  // namespace tether
