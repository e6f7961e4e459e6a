// Actor: state built by a constructor on the actor's default thread, then used by
// methods on that thread and on the threads of its named concurrency groups, and
// finally freed by a destructor on the default thread. The actor never moves.
//
// Lifetime of the work: every call is counted when accepted and when settled — run,
// failed or cancelled; the constructor counts as a call. Calls of the general path count
// in accepted_ (on the callers' cache line) and settled_ (on the execution threads');
// fire-and-forget calls of the fast path (actor_fast_path.cpp) count in their producer's
// Tally and in fast_settled_, written by one thread each, without read-modify-writes.
// (The three counters live in the ledger, on its lines of the same sides:
// CallLedger::owner_accepted and the like, named accepted() and so on here.)
// The destructor is queued on the default thread, once, by whoever first sees a fenced
// stop with the settled count equal to the accepted count. A call counts itself accepted
// BEFORE it checks the stop (closed_'s kStopped), and a stop sets that bit BEFORE it
// compares the counts, so a call either sees the stop and is refused (un-counting or
// settling itself) or is counted before the comparison: none slips in after the
// destructor is queued. General calls order this with seq_cst operations; fast calls
// (and the fast settle, which checks the stop after counting) with a light_fence() that
// pairs with the heavy_fence() the stop makes before end_ reaches kFenced; no comparison
// is made before that. That fence (a membarrier system call, which interrupts every
// running thread of the process) is made only when a fast sender was ever opened:
// open_sender stores fast_opened_ and then loads closed_, the stop sets kStopped and then
// loads fast_opened_ (a seq_cst Dekker pair), so either the stop sees the sender and
// fences, or the opening sees the stop and gives no sender (its calls take the general
// path, which refuses them). An actor no thread calls twice in a row (100,000 of them, a
// call with a future to each, released together) then makes no system call for it; one a
// thread calls again and again, with futures or not, has that thread's sender (its calls
// go through the ring: actor_ring_future.cpp). The settled counts are read before the
// accepted ones, and a call is always accepted before it settles, so equal counts mean
// nothing was in flight in between.
//
// The actor's life is two states. life_ (atomic), set once by the constructor call:
//   Constructing -> Alive (the constructor succeeded) | Dead (it failed); a constructor
//   cancelled by a stop CANCEL leaves it Constructing (no call then runs).
// end_ (guarded by mutex_), each step taken once and in this order:
//   kRunning    -> kStopping    the first stop or release (start_stop): kStopped set, the
//                               destructor call given the actor's reference (the actor
//                               lives until that call is done with)
//   kStopping   -> kFenced      the stop's heavy fence is done: the counts may be compared
//   kFenced     -> kDtorQueued  settled == accepted (finish_if_idle): dtor_call_ pushed
//   kDtorQueued -> kEnded       the destructor call ran (or a manual lane dropped it):
//                               stop() and release() waiters woken; the call lets the
//                               actor go once its lane is done with it (DtorCall)
// Two flags under mutex_ may be set in any state: cancel_started_ (a CANCEL stop began)
// and handle_ended_ (release). Lock-free mirrors for the hot paths: closed_ (kStopped:
// end_ is past kRunning; kReleased: set before handle_ended_ is; kDead: life_ is Dead),
// cancel_ (a CANCEL stop has cancelled what was queued: running methods see
// stop_requested, and a call that starts after it is cancelled instead: one accepted
// before the stop may reach its queue only after the stop's sweep).
//
// Thread safety: every public member may be called from any thread. mutex_ guards the
// marked fields; life_, closed_ and cancel_ are atomics.
// state_ptr_ is written by the constructor before life_ becomes ALIVE (release) and
// before the group lanes open, and read only by execution threads after that.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/asymmetric_fence.h"
#include "core/call_ledger.h"
#include "core/deadline.h"
#include "core/error.h"
#include "core/event_count.h"
#include "core/executor.h"
#include "core/future.h"
#include "core/lane.h"
#include "core/lazy_thread_group.h"
#include "core/pinned_lane.h"
#include "core/publish.h"
#include "core/scope.h"
#include "core/task.h"
#include "core/user_arg.h"
#include "core/waited_call.h"
#include "core/word_mutex.h"

namespace tether {

class Actor final : public std::enable_shared_from_this<Actor>, private FastTarget {
 public:
  struct GroupSpec {
    std::string name;
    uint32_t threads = 1;
  };
  // kDefaultName: an actor's name when its creator gives none (kept by none: name()).
  static constexpr char kDefaultName[] = "tether-actor";
  struct Options {
    std::string name = kDefaultName;
    std::shared_ptr<Executor> executor;  // null: a dedicated new thread
    std::vector<GroupSpec> groups;
    size_t mailbox_capacity = 0;
  };
  enum class Life : int32_t { Constructing, Alive, Dead };

  // create: builds the actor, starts its threads, gives it a handle (publish), and
  // queues the constructor. Returns the handle id. Throws StatusError; nothing is left
  // behind and ctor_arg is dropped before a failing create returns.
  static uint64_t create(Options options, tether_ctor_fn ctor, tether_dtor_fn dtor, UserArg ctor_arg,
                         Publish<Actor> publish);
  // Only create() makes one (the key is private); public for make_shared. name and the
  // mailbox's capacity (0: unbounded) are create's options', dtor its destructor.
  class CreateKey {
    friend class Actor;
    explicit CreateKey() = default;
  };
  Actor(CreateKey, std::string name, size_t mailbox_capacity, tether_dtor_fn dtor);
  ~Actor();

  Actor(const Actor&) = delete;
  Actor& operator=(const Actor&) = delete;

  struct Sender;
  class SenderSource;
  // call: queues m on the group's lane (group null: the default thread). Returns the
  // future when want_future. Throws StatusError (NOT_FOUND, ACTOR_DEAD,
  // SHUTDOWN, QUEUE_FULL, TIMEOUT, DEADLOCK); arg is dropped before a failing call returns.
  // The one place that chooses the path: through this thread's ring when senders (may be
  // null) has a Sender for it and the call goes to the default thread (post_fast without
  // a future, try_call_future with one), else the general path.
  std::shared_ptr<Future> call(const char* group, tether_method_fn m, UserArg arg, bool want_future, Deadline room,
                               SenderSource* senders = nullptr);

  // state: TETHER_ACTOR_*; cause: the constructor's error when DEAD.
  [[nodiscard]] int32_t state(ErrorPtr* cause) const;
  [[nodiscard]] CallLedger& ledger() noexcept { return ledger_; }
  [[nodiscard]] uint64_t os_thread_id() const noexcept { return default_lane_->os_thread_id(); }
  // default_lane: the lane of the default thread (its executor keeps it alive).
  [[nodiscard]] PinnedLane& default_lane() const noexcept { return *default_lane_; }

  // stop: starts the stop (see tether_actor_stop) and waits for the destructor.
  // Returns TETHER_OK, TETHER_E_TIMEOUT, TETHER_E_DEADLOCK or TETHER_E_INVALID_HANDLE
  // (the handle ended while waiting).
  [[nodiscard]] int32_t stop(int32_t mode, Deadline deadline);

  // release: the handle's end. With wait (and from outside), a DRAIN stop waited to the
  // end and the actor's threads joined; otherwise the control thread finishes it.
  void release(bool wait);

  // is_inside: the calling thread is one of the threads that run this actor's work.
  [[nodiscard]] bool is_inside() const noexcept;

  // The library's own work on the actor (compiled graph steps: compiled_graph.cpp, graph_hosts.cpp):
  // lane: the lane of group (null: the default thread, inline: most calls). Throws
  // StatusError(NOT_FOUND).
  [[nodiscard]] Lane& lane(const char* group) const { return group == nullptr ? *default_lane_ : group_lane(group); }
  // post: queues c on lane (one of this actor's) as the actor's work, counted like a call,
  // so the destructor waits for it and a stop CANCEL cancels it; c then calls
  // settle_posted() once it has run or been cancelled. False once the actor is stopping:
  // c was not queued and is still the caller's.
  [[nodiscard]] bool post(Lane& lane, Call* c) noexcept;
  void settle_posted() noexcept { settle(); }
  // alive: the constructor succeeded (acquire: state_ptr() is then visible).
  [[nodiscard]] bool alive() const noexcept { return life_.load(std::memory_order_acquire) == Life::Alive; }
  [[nodiscard]] void* state_ptr() const noexcept { return state_ptr_; }
  [[nodiscard]] const std::string& name() const noexcept {
    return extras_ && !extras_->name.empty() ? extras_->name : default_name();
  }
  // origin: what the tasks of this actor's calls know of it.
  [[nodiscard]] const TaskOrigin& origin() const noexcept { return origin_; }
  // dead_error: the ACTOR_DEAD error whose cause is the constructor's.
  [[nodiscard]] ErrorPtr dead_error() const;
  [[nodiscard]] ErrorPtr dead_error_or_null() const noexcept;  // null: no memory for it
  // The fire-and-forget fast path (actor_fast_path.cpp): calls without a future to the
  // default thread (fast_path_applies, the one place that rule is written), through a
  // Sender: what one producer thread holds to call this actor without the general path,
  // its tally and the ring it leased on the default lane. Used by that thread alone,
  // between open and close. The actor's own conditions are open_sender's and post_fast's.
  // A call with a future to the default thread goes through the same ring, as a FutureCall
  // (try_call_future), and a waited call as the thread's WaitedCall (try_call_waited).
  [[nodiscard]] static constexpr bool fast_path_applies(const char* group, bool want_future) noexcept {
    return group == nullptr && !want_future;
  }
  struct Sender {
    CallLedger::Tally tally;
    CallRing* ring = nullptr;
  };
  // SenderSource: where a caller keeps its threads' senders (the C boundary's per-thread
  // cache, keyed by handle id): this thread's Sender for the actor, opened at need; null
  // when it has none (no ring free, no memory).
  class SenderSource {
   public:
    [[nodiscard]] virtual Sender* sender_for(Actor& actor) noexcept = 0;

   protected:
    ~SenderSource() = default;
  };
  // FastPost: how far post_now got.
  enum class FastPost : uint8_t {
    kPosted,          // queued: arg_drop belongs to the call
    kPostedToParked,  // queued, and the consumer may be parked: finish_post wakes it
    kRefused,         // not a fast call, or one call() must take: nothing done
    kRare,            // a fast call for finish_post: the ring needs a block or marks
    kClosed,          // counted, then found closed (stopped, released, DEAD): finish_post takes it back
  };
  // post_now / finish_post: call(group, m, arg, want_future, ...) through sender, when
  // the call may take the fast path and nothing stands in the way, in two halves for a
  // caller's hot path, which then keeps no registers for rare turns: post_now does what
  // needs no call out of line, finish_post (out of line) the rest. kPosted, or
  // finish_post true: queued (arg_drop belongs to the call). kRefused, or finish_post
  // false: call() must take it (arg untouched). flags: the entry's, ring_flags(arg_drop)
  // (RingEntry::kWaited for a waited call, kFuture for a call with a future; else 0).
  [[nodiscard]] FastPost post_now(Sender& sender, const char* group, bool want_future, tether_method_fn m, void* arg,
                                  tether_drop_fn arg_drop, uintptr_t flags = 0) noexcept;
  [[nodiscard]] bool finish_post(FastPost how, Sender& sender, tether_method_fn m, void* arg,
                                 tether_drop_fn arg_drop) noexcept;
  // post_now_as: post_now past its rule, its fences as kFence (light_fence_kind()).
  template <LightFence kFence>
  [[nodiscard]] FastPost post_now_as(Sender& sender, tether_method_fn m, void* arg, tether_drop_fn arg_drop,
                                     uintptr_t flags) noexcept;
  // try_call_waited: call(nullptr, m, arg) through sender, its caller (this thread)
  // waiting for its end with no deadline, made as this thread's WaitedCall
  // (waited_call.h): true once it ended, its terminal state in *terminal and its outcome
  // in WaitedCall::of_this_thread() (arg then belonged to the call). False when the
  // general path must take it (arg untouched): this thread runs the default lane (its
  // wait would wait on itself: the general path says DEADLOCK), it has no WaitedCall,
  // or post_fast refused.
  [[nodiscard]] bool try_call_waited(Sender& sender, tether_method_fn m, UserArg& arg, int32_t* terminal) noexcept;
  // try_call_future: call(nullptr, m, arg, want_future) through sender (a FutureCall in
  // its ring: actor_future_call.h, actor_ring_future.cpp): the future once queued (arg
  // then belonged to the call). Null when the general path must take it (arg untouched):
  // the actor is stopping, released or DEAD, or there was no memory for the call or the
  // ring.
  [[nodiscard]] std::shared_ptr<Future> try_call_future(Sender& sender, tether_method_fn m, UserArg& arg) noexcept;
  // open_sender: a sender for the calling thread, or null when the fast path does not
  // apply (a bounded mailbox, several threads on the default lane, no ring free, the
  // actor stopping).
  // Throws std::bad_alloc.
  [[nodiscard]] std::unique_ptr<Sender> open_sender();
  void close_sender(std::unique_ptr<Sender> sender) noexcept;
  // handle_live: the handle has not been released.
  [[nodiscard]] bool handle_live() const noexcept {
    return (closed_.load(std::memory_order_acquire) & kReleased) == 0;
  }
  // ledger_starts_a_line: the layout's assumption holds for this actor (for tests).
  [[nodiscard]] bool ledger_starts_a_line() const noexcept;

 private:
  class CtorCall;
  class MethodCall;
  class FutureCall;
  struct Group {
    std::string name;
    std::shared_ptr<Lane> lane;
  };

  // The counts of the class comment: accepted by callers, settled by execution threads
  // and cancellers, fast calls settled by the default thread only.
  std::atomic<uint64_t>& accepted() noexcept { return ledger_.owner_accepted(); }
  std::atomic<uint64_t>& settled() noexcept { return ledger_.owner_settled(); }
  std::atomic<uint64_t>& fast_settled() noexcept { return ledger_.owner_fast_settled(); }
  void accept() noexcept { accepted().fetch_add(1, std::memory_order_seq_cst); }
  void settle() noexcept;                        // may queue the destructor
  void settle_fast(uint64_t n = 1) noexcept;     // n fast calls settled (default thread only)
  void run_fast(Lane& lane, const FastCall& first, FastRun& more) noexcept override;
  // run_fast_as: run_fast, its calls' steps fenced as kFence (light_fence_kind(), read
  // once a run rather than once a call). Inlined into run_fast_light and run_fast_full:
  // a template's instances go where the linker puts their own sections, and the light
  // one belongs with the hot path (core/hot_path.h).
  template <LightFence kFence>
  void run_fast_as(Lane& lane, const FastCall& first, FastRun& more) noexcept;
  void run_fast_light(Lane& lane, const FastCall& first, FastRun& more) noexcept;
  void run_fast_full(Lane& lane, const FastCall& first, FastRun& more) noexcept;
  // run_fast_not_alive: run_fast before or without a state, or after a stop CANCEL: none
  // of the calls runs. first by value: run_fast's call stays in registers.
  void run_fast_not_alive(FastCall first, FastRun& more) noexcept;
  // cancelling: a stop CANCEL has swept the queues: a call not started yet never starts.
  [[nodiscard]] bool cancelling() const noexcept { return cancel_.load(std::memory_order_acquire); }
  void cancel_fast(const FastCall& call) noexcept override;
  [[nodiscard]] const void* fast_owner() const noexcept override { return this; }
  // post_fast: a fast call through sender when nothing stands in the way (post_now
  // and finish_post). False when the general path must decide (DEAD, stopping, no memory
  // for the ring); arg is untouched then. Inline (below the class): it is most of a
  // fire-and-forget call, and a call into it would spill the caller's arguments for
  // the general path.
  // flags: as post_now's.
  [[nodiscard]] bool post_fast(Sender& sender, tether_method_fn m, void* arg, tether_drop_fn arg_drop,
                               uintptr_t flags) noexcept;
  // post_fast_rare: post_fast with its rare turns (a ring block to reserve, marks to
  // write), for finish_post.
  [[nodiscard]] bool post_fast_rare(Sender& sender, tether_method_fn m, void* arg, tether_drop_fn arg_drop) noexcept;
  std::shared_ptr<Future> call_general(const char* group, tether_method_fn m, UserArg arg, bool want_future,
                                       Deadline room);
  [[nodiscard]] Lane& group_lane(const char* group) const;  // lane() of a named group
  void fail_dead_fast(const FastCall& call) noexcept;
  // answered: a ring entry's drop that names a call whose caller takes its answer: a
  // waited call (WaitedCall::marker) or a call with a future (FutureCall::ring_marker).
  // Such entries carry RingEntry::kWaited or kFuture (ring_flags: the flags of an entry
  // with this drop), and run in runs of their own (run_fast_as).
  [[nodiscard]] static bool answered(tether_drop_fn drop) noexcept;
  [[nodiscard]] static uintptr_t ring_flags(tether_drop_fn drop) noexcept;
  // The waited calls among the fast ones (WaitedCall::is_waited: actor_waited_call.cpp).
  class WaitedEnd;
  // run_waited: the default thread runs the waited call (method, its WaitedCall). By
  // value: run_fast's call stays in registers.
  void run_waited(Lane& lane, tether_method_fn method, void* waited) noexcept;
  void end_nested(WaitedCall& w, const Scope& nested) noexcept;  // as its terminal nested scope ended
  // end_waited_after_nested: run_waited's end when the method left nested threads running.
  void end_waited_after_nested(WaitedCall& w, const std::shared_ptr<Scope>& nested, ErrorPtr err) noexcept;
  void end_waited(WaitedCall& w, int32_t terminal, ErrorPtr err) noexcept;  // counts it, ends it (any thread)
  void end_waited_unrun(WaitedCall& w, ErrorPtr err) noexcept;  // never runs: FAILED with err, or CANCELLED
  void unaccept_fast(Sender& sender) noexcept;              // post_fast met a stop
  void finish_fast(Task& task, ErrorPtr err) noexcept;      // run_fast: failed, or nested threads (settles it)
  void settle_when_done(Scope* call) noexcept;  // once call (and its nested threads) ended
  void finish_if_idle() noexcept;               // queues the destructor if stopped and idle
  void start_stop(bool cancel);

  [[nodiscard]] std::span<Group> groups() const noexcept {
    return extras_ ? std::span<Group>(extras_->groups) : std::span<Group>();
  }

  // DtorCall: the destructor's call, made with the actor (its end never lacks memory) and
  // queued once, on the default thread, by finish_if_idle; start_stop gives it the actor's
  // reference. Most live inside their actor (inner_dtor_call_), so the reference goes in
  // dispose(), the Inbox's last touch of the call, which may end the actor and with it the
  // call. An actor on a manual executor has one of its own on the heap instead
  // (manual_dtor_call_): a manual lane that closes with nobody to run it leaves the calls
  // it cancelled in its queue until the lane ends, and the lane ends only after the actor
  // lets its executor go. That one lets the actor go as soon as it has finished.
  class DtorCall final : public Call {
   public:
    DtorCall(tether_dtor_fn dtor, bool inside_actor) noexcept : Call(nullptr), inside_actor_(inside_actor), dtor_(dtor) {}
    static void* operator new(size_t size) { return ::operator new(size); }  // long-lived: not a pool slot
    static void operator delete(void* p) noexcept { ::operator delete(p); }
    // The actor's reference, guarded by the actor's mutex_ until the call is queued.
    [[nodiscard]] std::shared_ptr<Actor>& self() noexcept { return self_; }

    void run(Lane&) noexcept override { finish(); }
    void cancel() noexcept override { finish(); }  // a manual lane dropped: finish unrun

   private:
    void finish() noexcept;
    void dispose() noexcept override;

    const bool inside_actor_;  // first: it fills the end of Call's last word
    tether_dtor_fn dtor_;
    std::shared_ptr<Actor> self_;
  };

  // Extras: what only some actors have: a name of their own, concurrency groups, a manual
  // executor's destructor call. Made at creation when one of them is needed, before the
  // handle exists; then read-only but for manual_dtor_call (guarded by mutex_ until
  // queued). Most actors have none, and carry a null pointer instead of 48 bytes (the
  // layout below).
  struct Extras {
    std::string name;  // empty: kDefaultName
    std::vector<Group> groups;
    std::unique_ptr<DtorCall> manual_dtor_call;
  };
  // default_name: kDefaultName as a string that is never destroyed (an actor may be named
  // while the process exits).
  [[nodiscard]] static const std::string& default_name() noexcept;
  // extras: made at need (creation only). Throws std::bad_alloc.
  Extras& extras() {
    if (!extras_) extras_ = std::make_unique<Extras>();
    return *extras_;
  }

  // Layout: an actor is at most 368 bytes, so that with the shared_ptr's count (16 bytes,
  // before it in its block) it fills a 384-byte ActorSlab block (static_asserts in
  // actor.cpp; 100,000 actors carry 100,000 of them). Measured 2026-12-07: in 448-byte
  // blocks (a name, the groups and a manual destructor call inline, the ledger 160 bytes)
  // 485-512 bytes of RSS an actor, against target 7's 512; in 384-byte ones 427-438.
  // Not aligned to a line itself (that would give the count a line of its own): the
  // block is, and the count's 16 bytes and the actor's first 48 fill its first line.
  //  - Block bytes 0-63: the count; the bases (FastTarget's vtable pointer, the weak self
  //    of enable_shared_from_this); what every call reads (the default lane, the state,
  //    the life and the stop flags). Written once or rarely; the count only where a call
  //    takes a reference (a handle lookup that missed the thread's actor cache).
  //  - Block bytes 64-191: the ledger's two lines (call_ledger.h), each written per call
  //    by one side: callers, execution threads.
  //  - Then the ledger's slow fields and the rest of the actor's, written once at
  //    creation or rarely (under mutex_), by neither side per call.
  PinnedLane* default_lane_ = nullptr;  // the executor's (it keeps it alive)
  void* state_ptr_ = nullptr;           // written by the constructor call before life_ = Alive
  std::atomic<Life> life_{Life::Constructing};
  // closed_: the reasons calls are refused, as bits (Closed) set once each and never
  // cleared: one word, so that the fire-and-forget caller tests them all with one load
  // after its fence (post_now). Set with seq_cst read-modify-writes: the stop's is
  // the Dekker store the class comment speaks of.
  enum Closed : uint8_t {
    kStopped = 1,   // end_ is past kRunning (start_stop)
    kReleased = 2,  // the handle was released (release), before handle_ended_ is set
    kDead = 4,      // the constructor failed, after life_ became Dead
  };
  std::atomic<uint8_t> closed_{0};
  [[nodiscard]] bool stopped(std::memory_order order) const noexcept { return (closed_.load(order) & kStopped) != 0; }
  void close(Closed why) noexcept { closed_.fetch_or(why, std::memory_order_seq_cst); }
  std::atomic<bool> cancel_{false};  // stop CANCEL: running methods see stop_requested
  std::atomic<bool> fast_opened_{false};  // a fast sender was opened (never cleared): see the class comment
  CallLedger ledger_;
  std::shared_ptr<Executor> executor_;  // the default thread's executor (maybe dedicated)
  std::unique_ptr<Extras> extras_;      // null: no name, no groups, not on a manual executor
  LazyThreadGroup group_threads_;  // the groups' threads and the calls' nested ones, made at need
  // origin_: its tasks' (cancel_, the handle, group_threads_); written once, before the
  // constructor call is queued. origin_.actor is the actor's handle.
  TaskOrigin origin_;
  ErrorPtr ctor_error_;  // written by the constructor call before life_ = Dead
  EventCount ended_;     // stop() and release() waiters: end_ or handle_ended_ changed (under mutex_)
  mutable WordMutex mutex_;
  enum class End : uint8_t { kRunning, kStopping, kFenced, kDtorQueued, kEnded };
  End end_ = End::kRunning;      // guarded by mutex_: see the class comment
  bool cancel_started_ = false;  // guarded by mutex_
  bool handle_ended_ = false;    // guarded by mutex_
  bool dedicated_ = false;       // executor_ exists for this actor alone
  // The destructor call (DtorCall, dtor_call()): the heap's for an actor on a manual
  // executor (Extras::manual_dtor_call), else inner_dtor_call_; pushed once by
  // finish_if_idle (the heap's is the lane's then); its self() (guarded by mutex_) holds
  // the actor from the stop to the call's end.
  DtorCall inner_dtor_call_;
  [[nodiscard]] DtorCall* manual_dtor_call() const noexcept {
    return extras_ ? extras_->manual_dtor_call.get() : nullptr;
  }
  [[nodiscard]] DtorCall& dtor_call() noexcept {
    DtorCall* manual = manual_dtor_call();
    return manual != nullptr ? *manual : inner_dtor_call_;
  }
};

inline bool Actor::post_fast(Sender& sender, tether_method_fn m, void* arg, tether_drop_fn arg_drop,
                             uintptr_t flags) noexcept {
  const FastPost how = post_now(sender, nullptr, false, m, arg, arg_drop, flags);
  return how == FastPost::kPosted || finish_post(how, sender, m, arg, arg_drop);
}

inline Actor::FastPost Actor::post_now(Sender& sender, const char* group, bool want_future, tether_method_fn m,
                                      void* arg, tether_drop_fn arg_drop, uintptr_t flags) noexcept {
  if (!fast_path_applies(group, want_future)) return FastPost::kRefused;
  // Its two fences read what they are once.
  if (light_fence_kind() == LightFence::kCompilerOnly) [[likely]] {
    return post_now_as<LightFence::kCompilerOnly>(sender, m, arg, arg_drop, flags);
  }
  return post_now_as<LightFence::kFull>(sender, m, arg, arg_drop, flags);
}

template <LightFence kFence>
inline Actor::FastPost Actor::post_now_as(Sender& sender, tether_method_fn m, void* arg, tether_drop_fn arg_drop,
                                         uintptr_t flags) noexcept {
  // post_fast_rare's steps, in its order, with its rare turns (a block, marks) checked
  // first, so that nothing here calls out of line.
  // The lane in a local: its register outlives the fence's compiler barrier, the member
  // would be read again after it.
  // A waited call that fences in full (PinnedLane::fences_fully) takes the rare turn.
  CallRing& ring = *sender.ring;
  PinnedLane& lane = *default_lane_;
  if (lane.fences_fully(flags) || !lane.ready_to_push_fast(ring)) return FastPost::kRare;
  sender.tally.add(1);  // as post_fast_rare
  light_fence_as<kFence>();
  if (closed_.load(std::memory_order_relaxed) != 0) [[unlikely]] return FastPost::kClosed;
  if (lane.push_fast_ready<kFence>(ring, FastCall{m, arg, arg_drop}, *this, flags)) [[unlikely]] {
    return FastPost::kPostedToParked;
  }
  return FastPost::kPosted;
}

// Inline: a layer every call passes through, whose by-value arguments would otherwise be
// moved once more on the way.
inline std::shared_ptr<Future> Actor::call(const char* group, tether_method_fn m, UserArg arg, bool want_future,
                                          Deadline room, SenderSource* senders) {
  if (senders != nullptr && group == nullptr) {  // the default thread: this thread's sender, if it has one
    Sender* sender = senders->sender_for(*this);
    if (sender != nullptr) {
      if (fast_path_applies(group, want_future)) {
        if (post_fast(*sender, m, arg.get(), arg.drop_fn(), /*flags=*/0)) {
          (void)arg.release();  // the call owns it now
          return nullptr;
        }
      } else if (std::shared_ptr<Future> future = try_call_future(*sender, m, arg)) {
        return future;
      }
    }
  }
  return call_general(group, m, std::move(arg), want_future, room);
}

}  // namespace tether
