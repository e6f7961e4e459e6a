#include "core/actor.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/actor_future_call.h"
#include "core/actor_slab.h"
#include "core/pool_allocator.h"
#include "core/call_future_pool.h"
#include "core/asymmetric_fence.h"
#include "core/call_future.h"
#include "core/call_outcome.h"
#include "core/control_thread.h"
#include "core/status_error.h"
#include "core/task.h"
#include "core/thread_role.h"

namespace tether {

// CtorCall: builds the state on the default thread, then opens the group lanes.
class Actor::CtorCall : public Call {
 public:
  CtorCall(Actor& actor, tether_ctor_fn ctor, UserArg arg) : Call(&actor), actor_(actor), ctor_(ctor), arg_(std::move(arg)) {
    static_assert(sizeof(CtorCall) <= CallPool::kSlotSize, "fits a pool slot");
  }

  void run(Lane& lane) noexcept override {
    void* state = nullptr;
    ErrorPtr err;
    std::shared_ptr<Scope> nested;
    {
      Task task(nullptr, lane.name(), /*is_target=*/true, &actor_.origin());
      err = run_task(task, [&](tether_task* t) { return ctor_(t, arg_.get(), &state); });
      arg_.reset();  // the constructor's arg goes once it has returned
      if (task.lazy_scope()) {
        task.lazy_scope()->finish_call(err);
        nested = task.lazy_scope();
      }
    }
    if (nested) {
      // The constructor is done when its nested threads are: one that fails kills the
      // actor as the constructor's own failure does. The default thread waits (calls
      // queue behind a constructor anyway); a nested thread that waits on a call of its
      // own actor would wait for ever, as the header says.
      nested->wait_quiet();
      if (!err && nested->state() == TETHER_FAILED) err = nested->first_error();
    }
    if (err) {
      actor_.ctor_error_ = std::move(err);
      actor_.life_.store(Life::Dead, std::memory_order_release);
      actor_.close(kDead);
    } else {
      actor_.state_ptr_ = state;
      actor_.life_.store(Life::Alive, std::memory_order_release);
    }
    for (Group& g : actor_.groups()) g.lane->open();
    actor_.settle_when_done(nested.get());
  }

  void cancel() noexcept override {  // stopped with CANCEL before it ran: never constructed
    arg_.reset();
    for (Group& g : actor_.groups()) g.lane->open();
    actor_.settle();
  }

 private:
  Actor& actor_;
  tether_ctor_fn ctor_;
  UserArg arg_;
};

// MethodCall: one fire-and-forget call of a method, on the default lane or a group's,
// that did not take the fast path.
class Actor::MethodCall : public Call {
 public:
  MethodCall(Actor& actor, tether_method_fn m, UserArg arg) : Call(&actor), actor_(actor), method_(m), arg_(std::move(arg)) {
    static_assert(sizeof(MethodCall) <= CallPool::kSlotSize, "fits a pool slot");
  }

  void run(Lane& lane) noexcept override {
    CallLedger& ledger = actor_.ledger_;
    ledger.leave();
    const Life life = actor_.life_.load(std::memory_order_acquire);
    if (life == Life::Dead) {
      fail_dead();
    } else if (life != Life::Alive || actor_.cancelling()) {  // a stop CANCEL: the constructor, or this call
      never_runs();
    } else {
      Task task(nullptr, lane.name(), /*is_target=*/true, &actor_.origin());
      ErrorPtr err = run_task(task, [&](tether_task* t) { return method_(t, actor_.state_ptr_, arg_.get()); });
      arg_.reset();
      settle_fire_and_forget(task, std::move(err), ledger, actor_);
      actor_.settle_when_done(task.lazy_scope().get());
      return;
    }
    actor_.settle();
  }

  void cancel() noexcept override {
    actor_.ledger_.leave();
    never_runs();
    actor_.settle();
  }

 private:
  // never_runs: the call is cancelled; its arg goes now.
  void never_runs() noexcept {
    arg_.reset();
    actor_.ledger_.cancelled();
  }

  void fail_dead() noexcept {
    // Queued before the constructor failed: never runs; the failure is counted and kept
    // like any other.
    ErrorPtr dead = actor_.dead_error_or_null();
    arg_.reset();
    if (dead) {
      actor_.ledger_.fire_and_forget_failed(std::move(dead));
    } else {
      actor_.ledger_.failed();
    }
  }

  Actor& actor_;  // alive: an unsettled call keeps the destructor (and the end) away
  tether_method_fn method_;
  UserArg arg_;
};

// DtorCall: the end of the actor, on the default thread, after every call (actor.h).
void Actor::DtorCall::finish() noexcept {
  // On the default thread, after the constructor call: life_ is final and ours to read.
  // self_ is set: the call is queued only after a stop gave it the reference.
  Actor& actor = *self_;
  if (actor.life_.load(std::memory_order_acquire) == Life::Alive && dtor_ != nullptr) dtor_(actor.state_ptr_);
  for (Group& g : actor.groups()) g.lane->close();
  // The actor leaves its executor before anyone hears it stopped, so a release of the
  // executor's handle that follows the actor's release finds itself the last user.
  actor.executor_->drop_user(/*wait=*/false);
  {
    std::lock_guard lock(actor.mutex_);
    actor.end_ = End::kEnded;  // from kDtorQueued
  }
  actor.ended_.notify_all();
  // Inside the actor, self_ goes in dispose(), the lane's last touch of this call.
  if (!inside_actor_) {
    std::shared_ptr<Actor> last = std::move(self_);  // the actor may end here
  }
}

void Actor::DtorCall::dispose() noexcept {
  if (!inside_actor_) {
    delete this;
    return;
  }
  std::shared_ptr<Actor> last = std::move(self_);  // may end the actor, and this call with it
}

Actor::Actor(CreateKey, std::string name, size_t mailbox_capacity, tether_dtor_fn dtor)
    : ledger_(mailbox_capacity), inner_dtor_call_(dtor, /*inside_actor=*/true) {
  if (name != kDefaultName) extras().name = std::move(name);
  // The layout comment (actor.h), on 64-bit targets. offsetof on a class that is not
  // standard-layout is conditionally supported: g++ and clang give the plain offset. The
  // count's 16 bytes before the actor are libstdc++'s (_Sp_counted_base: a vtable pointer
  // and two ints); tests check the ledger's address (core.ActorLayout).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
  static_assert(sizeof(void*) != 8 || offsetof(Actor, ledger_) == 64 - kActorCountBytes, "the ledger starts a line");
#pragma GCC diagnostic pop
  static_assert(alignof(Actor) <= kActorCountBytes, "the actor follows its count directly");
  static_assert(kActorCountBytes + sizeof(Actor) <= ActorSlab::kBlockBytes, "an actor and its count fit an ActorSlab block");
}

Actor::~Actor() = default;  // the destructor call never ran unless the actor stopped

const std::string& Actor::default_name() noexcept {
  // Short enough for libstdc++ to keep it in the string itself: made without allocating,
  // so it cannot throw.
  static_assert(sizeof(kDefaultName) <= 16, "fits std::string's own buffer");
  alignas(std::string) static unsigned char storage[sizeof(std::string)];
  static const std::string* const name = new (storage) std::string(kDefaultName);
  return *name;
}

bool Actor::ledger_starts_a_line() const noexcept { return reinterpret_cast<uintptr_t>(&ledger_) % 64 == 0; }

uint64_t Actor::create(Options options, tether_ctor_fn ctor, tether_dtor_fn dtor, UserArg ctor_arg,
                       Publish<Actor> publish) {
  const Options& o = options;
  // One block with its count, from the actors' slab (block_slab.h).
  auto actor =
      std::allocate_shared<Actor>(PoolAllocator<Actor, ActorSlab>(), CreateKey(), o.name, o.mailbox_capacity, dtor);
  if (o.executor) {
    if (!o.executor->add_user()) {
      throw StatusError(TETHER_E_SHUTDOWN, "executor '" + o.executor->options().name + "' is shutting down");
    }
    actor->executor_ = o.executor;
  } else {
    Executor::Options dedicated;
    dedicated.name = o.name;
    actor->executor_ = Executor::create(std::move(dedicated));  // its creation hold is this actor's
    actor->dedicated_ = true;
  }
  actor->default_lane_ = &actor->executor_->lane();

  // Undo for a failing create: close what was started and join it, so nothing is left.
  auto undo = [&] {
    for (Group& g : actor->groups()) g.lane->close();
    actor->group_threads_.join_all();
    actor->executor_->drop_user(/*wait=*/true);
  };
  std::unique_ptr<CtorCall> ctor_call;
  try {
    if (actor->executor_->options().manual) {  // made now: the end never lacks memory (DtorCall: actor.h)
      actor->extras().manual_dtor_call.reset(new DtorCall(dtor, /*inside_actor=*/false));
    }
    if (!o.groups.empty()) actor->extras().groups.reserve(o.groups.size());
    for (const GroupSpec& spec : o.groups) {
      Lane::Options lane;
      lane.name = o.name + "/" + spec.name;
      lane.threads = spec.threads;
      lane.gated = true;  // methods start only after the constructor
      std::vector<Group>& groups = actor->extras().groups;
      groups.push_back(Group{spec.name, Lane::make(std::move(lane))});
      groups.back().lane->start(*actor->group_threads_.get(), actor);
    }
    // Made before the handle exists: once it does, nothing may fail (a failing create
    // leaves no handle and no thread behind; its arg dies with the call, before we return).
    ctor_call = std::make_unique<CtorCall>(*actor, ctor, std::move(ctor_arg));
    actor->origin_ = TaskOrigin{&actor->cancel_, publish(actor), &actor->group_threads_};
  } catch (...) {
    undo();
    throw;
  }
  actor->accept();  // the constructor is a call too
  actor->default_lane_->push(ctor_call.release());
  return actor->origin_.actor;
}

std::shared_ptr<Future> Actor::call_general(const char* group, tether_method_fn m, UserArg arg, bool want_future,
                                           Deadline room) {
  Lane* lane = &this->lane(group);
  accept();  // before the stop's check: see the class comment
  struct Refusal {
    Actor* actor;
    bool accepted = false;
    ~Refusal() {
      if (!accepted) actor->settle();
    }
  } refusal{this};
  if (life_.load(std::memory_order_acquire) == Life::Dead) {
    ledger_.reject();
    ErrorPtr cause = dead_error()->cause;
    throw StatusError(TETHER_E_ACTOR_DEAD, "actor '" + name() + "' is dead: its constructor failed: " +
                                               (cause ? cause->message : std::string()));
  }
  if (stopped(std::memory_order_seq_cst)) {
    ledger_.reject();
    throw StatusError(TETHER_E_SHUTDOWN, "actor '" + name() + "' is stopping or stopped");
  }
  if (lane->manual() && lane->closed()) {
    ledger_.reject();
    throw StatusError(TETHER_E_SHUTDOWN, "actor '" + name() + "' is on a manual executor whose handle was released: "
                                             "nothing can run its calls");
  }
  ledger_.admit_or_throw(room, [&] { return lane->is_inside(); }, {"actor", name(), "mailbox"});
  std::shared_ptr<Future> future;
  Call* c;
  try {
    if (want_future) {
      // As the base from the start (a move converts it): start_queued's reference then
      // binds to it, where a FutureCall pointer would make a converted copy (a count added
      // and dropped: two atomic read-modify-writes a call).
      std::shared_ptr<CallFuture> call = std::allocate_shared<FutureCall>(
          PoolAllocator<FutureCall, CallFuturePool>(), *this, *lane, m, std::move(arg));
      CallFuture::start_queued(call);
      c = call.get();
      future = std::move(call);
    } else {
      c = new MethodCall(*this, m, std::move(arg));
    }
  } catch (...) {
    ledger_.leave();
    throw;
  }
  refusal.accepted = true;  // the call settles once it has run, failed or been cancelled
  lane->push(c);
  return future;
}

Lane& Actor::group_lane(const char* group) const {
  for (const Group& g : groups()) {
    if (g.name == group) return *g.lane;
  }
  throw StatusError(TETHER_E_NOT_FOUND, "actor '" + name() + "' has no concurrency group '" + group + "'");
}

bool Actor::post(Lane& lane, Call* c) noexcept {
  accept();  // before the stop's check: see the class comment
  if (stopped(std::memory_order_seq_cst)) {
    settle();
    return false;
  }
  lane.push(c);
  return true;
}

ErrorPtr Actor::dead_error_or_null() const noexcept {
  try {
    return dead_error();
  } catch (...) {  // no memory for it
    return nullptr;
  }
}

ErrorPtr Actor::dead_error() const {
  return make_error(TETHER_E_ACTOR_DEAD, 0, "actor '" + name() + "' is dead: its constructor failed",
                    default_lane_->name(), {}, ctor_error_);
}

int32_t Actor::state(ErrorPtr* cause) const {
  if (life_.load(std::memory_order_acquire) == Life::Dead) {
    if (cause != nullptr) *cause = ctor_error_;
    return TETHER_ACTOR_DEAD;
  }
  return stopped(std::memory_order_acquire) ? TETHER_ACTOR_STOPPED : TETHER_ACTOR_ALIVE;
}

void Actor::settle() noexcept {
  settled().fetch_add(1, std::memory_order_seq_cst);
  if (stopped(std::memory_order_seq_cst)) finish_if_idle();
}

void Actor::finish_if_idle() noexcept {
  std::shared_ptr<Actor> keep;
  DtorCall* queued = nullptr;
  {
    std::lock_guard lock(mutex_);
    // Before kFenced the stop compares itself once fenced; past it, the destructor is queued.
    if (end_ != End::kFenced) return;
    const uint64_t settled_now = settled().load(std::memory_order_seq_cst) +  // first: see the class comment
                                 fast_settled().load(std::memory_order_acquire);
    if (settled_now != accepted().load(std::memory_order_seq_cst) + ledger_.fast_admitted()) return;
    end_ = End::kDtorQueued;
    // The destructor call may run, and the actor and its executor end, before push()
    // returns from waking the lane: hold the actor (and so the lane) until it has.
    keep = dtor_call().self();
    queued = manual_dtor_call() != nullptr ? extras_->manual_dtor_call.release() : &inner_dtor_call_;  // the lane's now
  }
  default_lane_->push(queued);
}

void Actor::settle_when_done(Scope* call) noexcept {
  // A call's nested threads may still run after its method returned — even after the
  // call FAILED (a scope is terminal at its first error): the actor (its state, its
  // destructor) waits until every one of them has returned. The notice holds the actor:
  // the settle it makes may be the last, and the destructor may end the actor on
  // another thread before the settle has returned.
  if (call != nullptr) {
    try {
      // Once in the UserArg, keep is dropped exactly once whatever on_quiet does.
      UserArg keep(new std::shared_ptr<Actor>(shared_from_this()),
                   [](void* p) { delete static_cast<std::shared_ptr<Actor>*>(p); });
      call->on_quiet([](void* p) { (*static_cast<std::shared_ptr<Actor>*>(p))->settle(); }, std::move(keep));
      return;
    } catch (...) {  // no memory to wait without blocking: wait here rather than settle early
      call->wait_quiet();
    }
  }
  settle();
}

void Actor::start_stop(bool cancel) {
  bool first = false;
  bool cancel_now = false;
  {
    std::lock_guard lock(mutex_);
    if (end_ == End::kRunning) {
      end_ = End::kStopping;
      first = true;
      dtor_call().self() = shared_from_this();
      close(kStopped);
    }
    if (cancel && !cancel_started_) cancel_now = cancel_started_ = true;
  }
  if (cancel_now) {
    default_lane_->cancel_queued_of(this);
    for (Group& g : groups()) g.lane->cancel_queued_of(this);
    // Only now are the running methods asked to stop: one that returned at once would
    // otherwise free its lane to start a queued call the cancel had not reached yet.
    cancel_.store(true, std::memory_order_release);
  }
  if (first) {
    // Pairs with the light_fence of fast calls and fast settles; none was ever made when
    // no sender was opened (the Dekker pair with open_sender: actor.h).
    if (fast_opened_.load(std::memory_order_seq_cst)) heavy_fence();
    {
      std::lock_guard lock(mutex_);
      end_ = End::kFenced;  // from kStopping: only this first stop moves it on
    }
    finish_if_idle();
  }
}

bool Actor::is_inside() const noexcept {
  if (default_lane_->is_inside()) return true;
  for (const Group& g : groups()) {
    if (g.lane->is_inside()) return true;
  }
  const Task* task = Task::current();
  return task != nullptr && task->origin().actor == origin_.actor;
}

int32_t Actor::stop(int32_t mode, Deadline deadline) {
  start_stop(mode == TETHER_STOP_CANCEL);
  std::unique_lock lock(mutex_);
  if (end_ == End::kEnded) return TETHER_OK;
  if (handle_ended_) return TETHER_E_INVALID_HANDLE;
  if (deadline.never_blocks()) return TETHER_E_TIMEOUT;
  if (is_inside() || ControlThread::is_current()) return TETHER_E_DEADLOCK;
  (void)ended_.wait_until(lock, deadline, [&] { return end_ == End::kEnded || handle_ended_; });
  if (end_ == End::kEnded) return TETHER_OK;
  return handle_ended_ ? TETHER_E_INVALID_HANDLE : TETHER_E_TIMEOUT;
}

void Actor::release(bool wait) {
  close(kReleased);  // fast-path callers see it (actor_cache, post_now)
  ledger_.end_handle();  // callers waiting for room in the mailbox return INVALID_HANDLE
  start_stop(/*cancel=*/false);  // first, so whoever the end of the handle wakes sees STOPPED
  {
    std::lock_guard lock(mutex_);
    handle_ended_ = true;
  }
  ended_.notify_all();
  if (!wait || is_inside() || ControlThread::is_current()) {
    group_threads_.orphan();
    return;
  }
  {
    std::unique_lock lock(mutex_);
    (void)ended_.wait_until(lock, Deadline(), [&] { return end_ == End::kEnded; });
  }
  group_threads_.join_all();
  // The executor's thread ends with its last user: when that was this actor (its own
  // executor, or a shared one whose handle is gone), this waiting release joins it too.
  if (dedicated_ || executor_->closed()) executor_->join_threads();
}

}  // namespace tether
