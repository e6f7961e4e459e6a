// Inbox: the calls queued for a lane, and how its consumer takes them. A Lane (lane.h)
// owns one and adds the threads and the parking; everything about the queue itself is
// here: the sources, the order between them, the claim protocol of cancellers.
//
// Sources. Every inbox has a mailbox (mailbox.h): any Call, from any thread. An inbox
// with ONE consumer (an executor's lane, a manual one) also has up to kLaneRings rings
// (call_ring.h), each leased by one producer thread for its fire-and-forget calls: a call
// through a ring costs no atomic read-modify-write. An inbox with several consumers (an
// actor group of N threads) has the mailbox alone.
//
// Invariants (who may touch what):
//   - Producers: push from any thread. A ring's producer side only by its lease holder
//     (lease_ring to CallRing::end_lease; the lease carries the producer state with it).
//   - The consumer state (consumed_, current_, batch_, caught_up_, mailbox_waits_on_ and
//     mailbox_waits_for_, the rings' consumer sides) only by the lane's one consumer: its thread, the thread in run_manual or
//     drain_here, or the destructor. With several consumers there is no consumer state:
//     each pop is under the mailbox's consumer token.
//   - A Call is owned by the inbox from push until popped (then by whoever runs it). A
//     canceller that claims it (claimed_, under the token; a ring entry's word0 set to 0)
//     takes a second reference (refs_) and finishes it; the consumer then steps over it
//     and drops its own. A call popped unclaimed was never referenced by a canceller and
//     cannot be any more (they claim only what is queued): its runner's reference is the
//     only one, dropped without an atomic (Inbox::run).
//   - dispose() (the last reference's drop) is the inbox's last touch of a call: the call
//     may end the object it lives in there (an actor's destructor call, actor.h). A
//     claimed call stays linked in the mailbox until the consumer steps over it or the
//     inbox ends (cancel_everything), so a lane nobody runs keeps it until then.
//   - Rings are made at their first lease and live as long as the inbox; ring_count_
//     counts them BEFORE one can be seen (rings_[k] is set after the increment). While it
//     is 0 the consumer visits the mailbox alone (try_pop, anything_queued).
//   - light_leases_ counts the leased rings whose holder publishes with a light fence now
//     (CallRing::fences_lightly): incremented (seq_cst) before the holder's first light
//     publication (a lease starts fenced in full), decremented (release) after its last
//     one (a waited call or a call with a future to a sleeping consumer, which fences in
//     full, or the lease's end). A consumer about to park reads it (pinned_lane.h, C3).
//
// What orders what:
//   - Between sources: the ordering marks (source_marks.h). With rings, a mailbox push
//     reads the marks (the rings made so far), pushes and bumps the mailbox's published
//     count under push_mutex_, so the count follows the mailbox's order: a ring entry
//     that saw count n waits for exactly the first n nodes. A ring entry's marks are the
//     other sources' counts read before it was appended (push_fast).
//   - Within a ring: entries and block links are written before the release store of
//     the ring's published count; the consumer reads it with acquire (call_ring.h).
//   - Within the mailbox: its push exchange is seq_cst and its link a release store
//     (mailbox.h); the token's acquire/release orders what consumers and cancellers do.
//
// Which fence pairs with which:
//   - push_fast's light_fence (after publishing) pairs with the heavy_fence a consumer
//     makes before it parks (pinned_lane.h's wait protocol, P1/C3): the lane reads sleepers_
//     right after push_fast returns.
//   - Claims in rings: the consumer steps past an entry (a release store of its
//     position), makes a light_fence() and reads cancelling_; a canceller holds the token,
//     sets cancelling_, makes a heavy_fence(), then reads the consumer's position and
//     claims entries beyond it. Either the canceller sees the step (and leaves that entry
//     alone), or the consumer sees cancelling_ and takes the token before it uses the
//     entry (meet_canceller; and finds it claimed).
//
// Cancelling (cancel_queued_of, cancel_all_queued) reaches every call not yet started
// even while the consumer is blocked forever in user code: nothing of it waits on the
// consumer.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "core/asymmetric_fence.h"
#include "core/call_pool.h"
#include "core/call_ring.h"
#include "core/chaos.h"
#include "core/mailbox.h"
#include "core/source_marks.h"
#include "core/word_mutex.h"

namespace tether {

class Lane;

// Call: one unit of work on a lane. Owned by the inbox until popped; a canceller that
// claims it holds it (a mailbox canceller, under the consumer token, takes a second
// reference) while it cancels.
class Call : public MailboxNode {
 public:
  explicit Call(const void* owner) noexcept : owner_(owner) {}
  virtual ~Call() = default;

  // Calls come from the CallPool: a steady stream of them allocates nothing.
  static void* operator new(size_t size) { return CallPool::allocate(size); }
  static void operator delete(void* p) noexcept { CallPool::free(p); }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  // run: executes the work on a lane thread (not called once claimed).
  virtual void run(Lane& lane) noexcept = 0;
  // cancel: the work never runs: drop its arg, complete its future CANCELLED.
  virtual void cancel() noexcept = 0;

  // owner: the actor the call belongs to; null for an executor's own task.
  [[nodiscard]] const void* owner() const noexcept { return owner_; }

 private:
  friend class Inbox;
  void add_ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void unref() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) dispose();
  }
  // dispose: the last reference went. A call that is also a future (CallFuture) lets go
  // of the lane's share of it instead.
  virtual void dispose() noexcept { delete this; }

  const void* owner_;
  std::atomic<int> refs_{1};
  bool claimed_ = false;  // guarded by the mailbox's consumer token
};

class FastRun;

// FastTarget: what runs the fast calls of a ring (an actor). It stays alive while any of
// its calls is queued: it counts them as accepted until run_fast or cancel_fast returns.
class alignas(8) FastTarget {  // aligned for RingEntry's flags in word3 (below)
 public:
  // run_fast: runs first on the lane's consumer, then each call more.next() gives: the
  // ring's next calls to this target, run back to back with one set-up (drain_ring).
  virtual void run_fast(Lane& lane, const FastCall& first, FastRun& more) noexcept = 0;
  // cancel_fast: the call never runs (claimed by a canceller, or its lane ended).
  virtual void cancel_fast(const FastCall& call) noexcept = 0;
  // fast_owner: the owner() its calls would have as Calls (cancel_queued_of compares it).
  [[nodiscard]] virtual const void* fast_owner() const noexcept = 0;

 protected:
  ~FastTarget() = default;
};

static_assert(alignof(FastTarget) > (RingEntry::kKindMask | RingEntry::kWaited | RingEntry::kFuture),
              "a RingEntry's word3 keeps its flags in a FastTarget pointer's low bits");

class Inbox {
 public:
  friend class FastRun;
  // Work: what the consumer took: a Call, or a fast call and its target.
  struct Work {
    Call* call = nullptr;
    FastTarget* target = nullptr;
    FastCall fast{};
  };

  // one_consumer: rings may be leased (and the consumer state is used).
  explicit Inbox(bool one_consumer) noexcept : has_rings_(one_consumer) {}
  ~Inbox();  // frees the rings; cancel_everything() must have run
  Inbox(const Inbox&) = delete;
  Inbox& operator=(const Inbox&) = delete;

  [[nodiscard]] bool has_rings() const noexcept { return has_rings_; }

  // ---- producers ----
  // push: queues c in the mailbox (the inbox owns it from now on). Its exchange is
  // seq_cst: the caller may read the consumer's announcement right after (P2).
  void push(Call* c) noexcept;
  // lease_ring: a ring for the calling producer thread's fast calls, or null when none is
  // free (or there are several consumers). The caller alone appends to it until
  // end_lease. Throws std::bad_alloc.
  [[nodiscard]] CallRing* lease_ring();
  void end_lease(CallRing& ring) noexcept {
    fence_fully(ring);  // its last publication is made
    ring.end_lease();
  }
  // push_fast: appends call for target to the leased ring (room reserved beforehand with
  // ring.try_reserve(2)) and publishes it, then fences (P1): with light_fence(), or in
  // full (full: the lane's choice for a waited call, pinned_lane.h's C3), counting the
  // ring in or out of the light leases first. flags: 0, RingEntry::kWaited or kFuture.
  void push_fast(CallRing& ring, const FastCall& call, FastTarget& target, uintptr_t flags, bool full) noexcept {
    if (full) {
      fence_fully(ring);
    } else {
      fence_lightly(ring);
    }
    ring.append_marks(published_count(), rings_to_mark());
    ring.append_fast(call, &target, flags);
    if (full) {
      publish_fast_as<LightFence::kFull>(ring);
    } else {
      publish_fast(ring);
    }
  }
  // ready_to_push_fast / push_fast_ready: push_fast of a fire-and-forget call in two
  // halves without its rare turns, for the caller's hot path: ready when the ring has room
  // in its block, fences lightly and has no marks to write (else push_fast must, nothing
  // done). Marks read before the call counts are as good as after: a call that happened
  // before this one had published by then.
  [[nodiscard]] bool ready_to_push_fast(const CallRing& ring) const noexcept {
    return ring.has_light_room() && ring.marks_current(published_count(), rings_to_mark());
  }
  // kFence: light_fence_kind(), read by the caller.
  template <LightFence kFence>
  void push_fast_ready(CallRing& ring, const FastCall& call, FastTarget& target, uintptr_t flags) noexcept {
    ring.publish_count(ring.append_fast_with_room(call, &target, flags));
    after_publish_as<kFence>();
  }
  // prefetch_for_push: asks for the lines push_fast through ring reads and writes.
  void prefetch_for_push(const CallRing& ring) const noexcept {
    prefetch_for_read(&ring_count_);
    prefetch_for_read(&published_[kMailboxSource]);
    ring.prefetch_for_push();
  }
  // rings_made: how many rings exist.
  [[nodiscard]] uint32_t rings_made() const noexcept { return ring_count_.load(std::memory_order_seq_cst); }
  // light_leases_live: how many leased rings' holders publish with a light fence now
  // (seq_cst: a consumer about to park decides on it whether a producer may be publishing
  // with a light fence, see pinned_lane.h's C3; and, reading 0, it sees every light
  // publication made before a holder was counted out).
  [[nodiscard]] uint32_t light_leases_live() const noexcept { return light_leases_.load(std::memory_order_seq_cst); }

  // ---- the consumer ----
  // anything_queued: a call is queued or being pushed.
  [[nodiscard]] bool anything_queued() noexcept;
  // published_total: the calls every source has published so far (relaxed: a hint, how
  // many came while the consumer yielded).
  [[nodiscard]] uint64_t published_total() const noexcept;
  // try_pop: the next call in program order across the sources; false when none is
  // ready now (empty, or a push half linked: retry).
  [[nodiscard]] bool try_pop(Work& w);
  // drain_ring: the consumer's hot loop: runs on lane up to a batch of the calls queued in
  // the ring being drained (a run goes on past it while nothing may run elsewhere:
  // FastRun), straight from its entries. False when it ran none (the caller
  // takes try_pop: another source, marks to wait for, or the wait). Its look at an empty
  // ring inline: the consumer's look before it idles, whose code is cold after an idle
  // spell (the call's prologue alone spans lines).
  bool drain_ring(Lane& lane) noexcept {
    const size_t s = current_;
    if (s >= kLaneRings) return false;
    CallRing* r = rings_[s].load(std::memory_order_acquire);
    if (r == nullptr) return false;
    if (!r->unread()) {  // empty: try_pop looks elsewhere
      caught_up_ = true;
      return false;
    }
    return drain_ring_from(lane, s, *r);
  }
  // took_futures: the last fast call drain_ring or try_pop took (and so the last run of
  // drain_ring) was a call with a future (RingEntry::kFuture). Consumer only.
  [[nodiscard]] bool took_futures() const noexcept { return took_futures_; }
  // run: runs what try_pop took, on lane, and lets it go.
  static void run(Work& w, Lane& lane) noexcept;

  // ---- cancellers (any thread) ----
  // cancel_queued_of / cancel_all_queued: claims every queued call of owner (a Call's
  // owner(), a fast call's target's fast_owner()) / every queued call, and cancels it here
  // (args dropped, futures CANCELLED) before returning. Never waits on user code.
  size_t cancel_queued_of(const void* owner);
  size_t cancel_all_queued();
  // cancel_everything: the owner's end: nobody else is left (no producer, no consumer).
  void cancel_everything() noexcept;

 private:
  // A counter on a cache line of its own.
  struct alignas(64) Counter {
    std::atomic<uint64_t> value{0};
  };

  template <class Pred>
  size_t cancel_queued_if(Pred pred);
  // give: w takes c, popped under the token, unless a canceller claimed it.
  static bool give(Call* c, Work& w) noexcept {
    if (c->claimed_) return false;
    w.call = c;
    w.target = nullptr;
    return true;
  }
  bool pop_shared(Work& w);  // several consumers: the mailbox alone
  bool pop_source(size_t s, Work& w, size_t& blocked);
  bool pop_mailbox(Work& w, size_t& blocked);
  bool pop_ring(size_t s, Work& w, size_t& blocked);
  // step_ring: the consumer steps past the entry it peeked (see "Claims in rings").
  void step_ring(CallRing& ring) noexcept {
    CallRing::Block* left = ring.step();
    consumed_[ring.source()] = ring.consumed();
    light_fence();  // pairs with cancel_queued_if's heavy_fence
    if (cancelling_.load(std::memory_order_acquire)) [[unlikely]] {
      meet_canceller(ring, left);
    } else if (left != nullptr) [[unlikely]] {
      ring.recycle(left);
    }
  }
  void meet_canceller(CallRing& ring, CallRing::Block* left) noexcept;
  // PublishedCount: a source's published count, as a ring's marks hold it.
  struct PublishedCount {
    const Counter* published;
    uint32_t operator()(size_t s) const noexcept {
      return static_cast<uint32_t>(published[s].value.load(std::memory_order_acquire));
    }
  };
  [[nodiscard]] PublishedCount published_count() const noexcept { return PublishedCount{published_}; }
  // rings_to_mark: only the rings made so far can hold calls that happened before this
  // one: rings are made in slot order and counted before anyone can see them
  // (lease_ring), and what made a ring happened before anything published through it.
  // Relaxed suffices: a call published before this one started carries that count.
  [[nodiscard]] size_t rings_to_mark() const noexcept {
    const size_t rings = ring_count_.load(std::memory_order_relaxed);
    return rings < kLaneRings ? rings : kLaneRings;
  }
  void publish_fast(CallRing& ring) noexcept {
    if (light_fence_kind() == LightFence::kCompilerOnly) {
      publish_fast_as<LightFence::kCompilerOnly>(ring);
    } else {
      publish_fast_as<LightFence::kFull>(ring);
    }
  }
  template <LightFence kFence>
  void publish_fast_as(CallRing& ring) noexcept {
    ring.publish();
    after_publish_as<kFence>();
  }
  // fence_lightly / fence_fully: the holder of ring starts or stops publishing with a
  // light fence (light_leases_, Invariants).
  void fence_lightly(CallRing& ring) noexcept {
    if (ring.fences_lightly()) return;
    ring.set_fences_lightly(true);
    light_leases_.fetch_add(1, std::memory_order_seq_cst);  // before its first light publication: C3
  }
  void fence_fully(CallRing& ring) noexcept {
    if (!ring.fences_lightly()) return;
    ring.set_fences_lightly(false);
    light_leases_.fetch_sub(1, std::memory_order_release);  // after its last light publication
  }
  // after_publish_as: what follows every publication of a fast call.
  template <LightFence kFence>
  static void after_publish_as() noexcept {
    chaos_point();
    light_fence_as<kFence>();  // P1: pairs with the heavy_fence of a consumer about to park (C3)
  }
  bool drain_ring_from(Lane& lane, size_t s, CallRing& r) noexcept;  // drain_ring of ring s, r, not empty
  void build_up(CallRing& ring) noexcept;       // drain_ring's convoy guard (see inbox.cpp)
  // rings_hold_entries: one of the first `rings` rings has entries the consumer has not
  // stepped past (consumer side).
  [[nodiscard]] bool rings_hold_entries(size_t rings) const noexcept {
    for (size_t s = 0; s < rings; ++s) {
      if (published_[s].value.load(std::memory_order_acquire) != consumed_[s]) return true;
    }
    return false;
  }
  // work_elsewhere: another source has calls that may run now (a mailbox whose first
  // call waits for source itself has none: see mailbox_waits_on_).
  bool work_elsewhere(size_t source) noexcept;
  [[nodiscard]] SourceMarks read_marks() const noexcept;

  const bool has_rings_;
  Mailbox mailbox_;
  WordMutex push_mutex_;  // with rings: orders mailbox pushes with their published count
  Counter published_[kLaneSources];                  // per source
  std::atomic<CallRing*> rings_[kLaneRings] = {};    // made at their first lease
  std::atomic<uint32_t> ring_count_{0};              // rings made
  std::atomic<uint32_t> light_leases_{0};            // see Invariants
  alignas(64) std::atomic<bool> cancelling_{false};  // a canceller walks the rings

  // Consumer state (see Invariants).
  alignas(64) uint64_t consumed_[kLaneSources] = {};  // per source
  size_t current_ = 0;                                // the source being drained
  uint32_t batch_ = 0;                                // taken from it in a row
  bool caught_up_ = false;                            // drain_ring last emptied its ring
  bool took_futures_ = false;                         // the last fast call taken had a future (took_futures)
  // The mailbox's first call waits for source mailbox_waits_on_ to reach the mark
  // mailbox_waits_for_ (pop_mailbox found so; kLaneSources: not known). It stays so until
  // the consumer pops that call, which only it does. A call with a future behind a
  // stream of fire-and-forget calls from its thread waits so: without this, every full
  // batch of the stream took a turn through the mailbox and one call the slow way.
  size_t mailbox_waits_on_ = kLaneSources;
  uint32_t mailbox_waits_for_ = 0;
};

// FastRun: the calls to one target that a ring holds next, up to a limit, handed out one
// at a time by next(): what drain_ring lets a target's run_fast run back to back. A run
// ends at the first entry that is not such a call (marks, another target's, none
// published yet) and at the limit; calls a canceller claimed are stepped over. At the
// limit, a run whose lane has nothing queued elsewhere goes on for another batch, a few
// times (inbox.cpp, kRunBatches): a stream of calls from one producer pays a run's set-up
// (the drain, the target's run_fast, its task, the settling) every 1,024 calls, not 128.
// Used by the lane's consumer only, within one run_fast.
//
// The hot loop reads a span of the ring's current block (CallRing::readable) by pointer:
// per call it stores the consumer's position (the Dekker store that pairs with a
// canceller, as step_ring) and reads cancelling_, but leaves the ring's and the inbox's
// counts behind until the span is used up or the run ends (finish). Meanwhile nothing
// else reads them: they are the consumer's, and it is inside this run.
class FastRun {
 public:
  FastRun() noexcept = default;  // none: a call taken alone (Inbox::run)
  // Right after drain_ring stepped past the run's first call.
  // target_word: word3 of the run's first call; the run takes the entries right behind
  // it whose word3 is the same (the same target, all waited calls or none).
  FastRun(Inbox& inbox, CallRing& ring, uintptr_t target_word, uint32_t limit) noexcept
      : inbox_(&inbox), ring_(&ring), target_word_(target_word), room_(limit) {
    open_span();
  }
  FastRun(const FastRun&) = delete;
  FastRun& operator=(const FastRun&) = delete;

  // next: the run's next call (the consumer has stepped past its entry), or false.
  // next_as: next with light_fence() as kFence (the caller read light_fence_kind() once).
  [[nodiscard]] bool next(FastCall& call) noexcept {
    return light_fence_kind() == LightFence::kCompilerOnly ? next_as<LightFence::kCompilerOnly>(call)
                                                           : next_as<LightFence::kFull>(call);
  }
  template <LightFence kFence>
  [[nodiscard]] bool next_as(FastCall& call) noexcept {
    while (at_ != end_) {
      RingEntry* e = at_;
      if (e->word3 != target_word_) return false;  // marks (their kind bit), another target's, or waited or not unlike the run
      at_ = e + 1;
      ring_->step_to(at_);
      light_fence_as<kFence>();  // as step_ring's
      if (inbox_->cancelling_.load(std::memory_order_acquire)) [[unlikely]] inbox_->meet_canceller(*ring_, nullptr);
      const uintptr_t word0 = e->word0.load(std::memory_order_acquire);  // after the step: see step_ring
      if (word0 == 0) continue;  // claimed by a canceller, who finishes it
      call = e->fast_call(word0);
      return true;
    }
    const Taken taken = next_beyond_span();
    if (taken.entry == nullptr) return false;
    call = taken.entry->fast_call(taken.word0);
    return true;
  }
  // finish: catches the ring's counts up with the run; returns how many entries the run
  // stepped past after its first call. Once, after run_fast.
  uint32_t finish() noexcept {
    if (ring_ != nullptr) catch_up();
    return stepped_;
  }

 private:
  void open_span() noexcept;    // the span behind the consumer's position, within room_
  void catch_up() noexcept;     // the ring's and the inbox's counts reach at_
  // Taken: an entry stepped past and its word0 as read after the step (entry null: none).
  // Two words, returned in registers: next()'s call, passed by reference, would have to
  // live in memory in run_fast.
  struct Taken {
    const RingEntry* entry;
    uintptr_t word0;
  };
  [[nodiscard]] Taken next_beyond_span() noexcept;  // the span is used up: the ring's own way

  Inbox* inbox_ = nullptr;
  CallRing* ring_ = nullptr;
  uintptr_t target_word_ = 0;  // word3 of the target's fast calls
  RingEntry* at_ = nullptr;    // the span: the next entry, its end, and where it started
  RingEntry* end_ = nullptr;
  RingEntry* base_ = nullptr;
  // room_ and stepped_ apart: side by side, g++ 12 stepped both (one down, one up) as a
  // vector with a constant loaded from .rodata, a page a call after an idle spell
  // touched for nothing else (core/hot_path.h).
  uint32_t room_ = 0;     // calls the run may take beyond the span
  uint32_t batches_ = 1;  // batches of room given (kRunBatches at most)
  uint32_t stepped_ = 0;  // entries stepped past (caught up)
};

inline void Inbox::run(Work& w, Lane& lane) noexcept {
  if (w.call != nullptr) {
    w.call->run(lane);
    // Given to us unclaimed (give): no canceller ever took a reference, and none can now
    // (cancellers claim only what is queued), so ours is the only one: no atomic to count.
    w.call->dispose();
  } else {
    FastRun none;
    w.target->run_fast(lane, w.fast, none);
  }
}

}  // namespace tether
