package tether

/*
#include <stdlib.h>
#include <tether/tether.h>
#include "shim.h"
*/
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// Group is a named concurrency group of an actor: its methods run on Threads threads of
// its own (concurrently when Threads > 1), with the SAME state as the default thread:
// sharing it safely across threads is the caller's job.
type Group struct {
	Name    string
	Threads int
}

// ActorOptions configures NewActor. The zero value (or nil) takes the defaults.
type ActorOptions struct {
	Name            string    // names its threads ("name", "name/io"); "" = "tether-actor"
	Executor        *Executor // nil: a dedicated new thread; else share that executor's
	Groups          []Group   // extra concurrency groups
	MailboxCapacity int       // 0 = unbounded; else a full mailbox rejects with ErrQueueFull
}

// StopMode says what Stop does with the calls still queued.
type StopMode int32

const (
	StopDrain  StopMode = C.TETHER_STOP_DRAIN  // let the queued calls run
	StopCancel StopMode = C.TETHER_STOP_CANCEL // cancel them (their futures: ErrCancelled)
)

// ActorState is the life state of an actor.
type ActorState int32

const (
	ActorAlive   ActorState = C.TETHER_ACTOR_ALIVE
	ActorDead    ActorState = C.TETHER_ACTOR_DEAD // its constructor failed
	ActorStopped ActorState = C.TETHER_ACTOR_STOPPED
)

func (s ActorState) String() string {
	switch s {
	case ActorAlive:
		return "Alive"
	case ActorDead:
		return "Dead"
	case ActorStopped:
		return "Stopped"
	}
	return fmt.Sprintf("ActorState(%d)", int32(s))
}

// Actor is state of type S that lives on one pinned OS thread: the constructor, every
// default-group method and S's Close (if S implements Closer) run there, in order.
type Actor[S any] struct {
	id atomic.Uint64
	q  *callQueue // the default thread's calls (queue.go)
}

// NewActor creates an actor whose state ctor makes ON the actor's thread. It returns at
// once: calls queue behind the constructor, and a failing constructor makes the actor
// dead (its calls fail with ErrActorDead, whose Cause is the constructor's error).
func NewActor[S any](opts *ActorOptions, ctor func() (*S, error)) (*Actor[S], error) {
	if versionErr != nil {
		return nil, versionErr
	}
	var o C.tether_actor_options
	C.tether_actor_options_init(&o)
	var frees []func()
	defer func() {
		for _, f := range frees {
			f()
		}
	}()
	if opts != nil {
		var free func()
		o.name, free = cstring(opts.Name)
		frees = append(frees, free)
		if opts.Executor != nil {
			o.executor = opts.Executor.handle()
			defer runtime.KeepAlive(opts.Executor)
		}
		if n := len(opts.Groups); n > 0 {
			// C memory: the options struct may hold only C pointers.
			p := C.calloc(C.size_t(n), C.sizeof_tether_group_spec)
			frees = append(frees, func() { C.free(p) })
			specs := unsafe.Slice((*C.tether_group_spec)(p), n)
			for i, g := range opts.Groups {
				specs[i].name, free = cstring(g.Name)
				frees = append(frees, free)
				specs[i].threads = C.uint32_t(g.Threads)
			}
			o.groups = (*C.tether_group_spec)(p)
			o.group_count = C.size_t(n)
		}
		o.mailbox_capacity = C.size_t(opts.MailboxCapacity)
	}
	h := newHandle(ctorFunc(func(t *C.tether_task) (any, C.tether_status) {
		s, err := ctor()
		if err != nil {
			return nil, failTask(t, err)
		}
		if s == nil {
			return nil, failTask(t, &Error{Code: CodeInvalidArgument,
				Message: "NewActor: the constructor returned a nil state and no error"})
		}
		return s, C.TETHER_OK
	}))
	var out C.tether_actor
	if err := statusError(C.tgo_actor_create(&o, h, &out), "NewActor"); err != nil {
		return nil, err
	}
	linger := defaultLinger
	if opts != nil && opts.Executor != nil {
		linger = opts.Executor.linger
	}
	a := &Actor[S]{q: newActorQueue(out, int(o.mailbox_capacity), linger)}
	a.id.Store(uint64(out.id))
	runtime.SetFinalizer(a, (*Actor[S]).finalize)
	return a, nil
}

// defaultLinger is the library's default idle spin (tether_executor_options.idle_spin_ns).
const defaultLinger = 20 * time.Microsecond

// newActorQueue is the Go queue in front of actor h's default thread. It holds the C
// handle, not the *Actor, so an abandoned Actor can be finalized.
func newActorQueue(h C.tether_actor, capacity int, linger time.Duration) *callQueue {
	return newCallQueue(capacity, linger,
		func(q *callQueue) C.tether_status { return C.tgo_actor_drain(h, q.handle) },
		func() error { return actorGoneError(h) })
}

// actorGoneError is the error of calls the actor dropped unrun: ErrActorDead with the
// constructor's error as its cause, else ErrCancelled (a Stop with StopCancel).
func actorGoneError(h C.tether_actor) error {
	var s C.int32_t
	var cause C.tether_error
	if C.tether_actor_state(h, &s, &cause) == C.TETHER_OK && s == C.TETHER_ACTOR_DEAD {
		return &Error{Code: CodeActorDead, Message: "the actor's constructor failed", Cause: takeError(cause)}
	}
	takeError(cause)
	return &Error{Code: CodeCancelled, Message: "cancelled by Stop"}
}

func (a *Actor[S]) handle() C.tether_actor { return C.tether_actor{id: C.uint64_t(a.id.Load())} }

// nodeHost makes *Actor[S] a NodeHost[S]: graph nodes on the actor's default thread.
func (a *Actor[S]) nodeHost(*S) nodeHost {
	if a == nil {
		return nodeHost{} // an actorRef holding a nil *Actor would not compare nil
	}
	return nodeHost{actor: a}
}

// InGroup is where a graph node runs on the thread of the actor's concurrency group
// name, which must have one thread (AddNode; Compile refuses a group of several threads
// with ErrInvalidArgument). Such a node gets the same *S as the default thread: sharing
// it safely is the caller's job, as with CallIn.
func (a *Actor[S]) InGroup(name string) NodeHost[S] { return groupHost[S]{a: a, name: name} }

// Call queues fn on the actor's default thread, after the calls queued before it.
func Call[S, R any](a *Actor[S], fn func(*S) (R, error)) *Future[R] {
	if a.id.Load() == 0 {
		return failedFuture[R](closedError("actor"))
	}
	return pushCall(a.q, false, func(_ *Scope, state any) (R, error) {
		s, _ := state.(*S)
		return fn(s)
	})
}

// pushCall queues a call with a future on q.
func pushCall[R any](q *callQueue, scoped bool, fn func(*Scope, any) (R, error)) *Future[R] {
	c, f := newFutureCall(q, scoped, fn)
	if err := q.push(c); err != nil {
		return failedFuture[R](err)
	}
	return f
}

// CallIn queues fn on the threads of the actor's concurrency group ("" = the default
// thread). An unknown group fails the future with ErrNotFound.
func CallIn[S, R any](a *Actor[S], group string, fn func(*S) (R, error)) *Future[R] {
	if group == "" {
		return Call(a, fn)
	}
	return CallScoped(a, group, func(_ *Scope, s *S) (R, error) { return fn(s) })
}

// CallScoped is CallIn for a method that needs its task: to see Scope.StopRequested or
// Scope.Context (a Stop with StopCancel, a Future.Cancel, a failed nested thread) or to
// start nested threads with Scope.Go, which then belong to the call's future: it settles
// when they have all returned, with the first error of any of them.
func CallScoped[S, R any](a *Actor[S], group string, fn func(*Scope, *S) (R, error)) *Future[R] {
	if a.id.Load() == 0 {
		return failedFuture[R](closedError("actor"))
	}
	if group == "" {
		return pushCall(a.q, true, func(sc *Scope, state any) (R, error) {
			s, _ := state.(*S)
			return fn(sc, s)
		})
	}
	res := &futureResult[R]{}
	h := newHandle(methodFunc(func(t *C.tether_task, state any) C.tether_status {
		s, _ := state.(*S)
		return runScoped(t, nil, func(sc *Scope) error {
			v, err := fn(sc, s)
			if err != nil {
				return err
			}
			res.val = v
			return nil
		})
	}))
	cgroup, free := cstring(group)
	defer free()
	var out C.tether_future
	st := C.tgo_actor_call(a.handle(), cgroup, h, &out)
	runtime.KeepAlive(a)
	return startFuture(res, st, out, "Call")
}

// Tell queues fn on the actor's default thread, fire and forget: its error is kept by
// the actor (Errors). The returned error is the submission's.
func Tell[S any](a *Actor[S], fn func(*S) error) error {
	if a.id.Load() == 0 {
		return closedError("actor")
	}
	return a.q.push(&tellCall[S]{fn: fn})
}

// State is the actor's life state; for a dead actor, also its constructor's error; for a
// closed one ActorStopped and ErrClosed. It never waits, even while a method is blocked.
func (a *Actor[S]) State() (ActorState, error) {
	var s C.int32_t
	var cause C.tether_error
	st := C.tether_actor_state(a.handle(), &s, &cause)
	runtime.KeepAlive(a)
	if st != C.TETHER_OK {
		if a.id.Load() == 0 {
			return ActorStopped, closedError("actor") // closed: stopped for good
		}
		return 0, a.callError(st, "Actor.State")
	}
	if e := takeError(cause); e != nil {
		return ActorState(s), e
	}
	return ActorState(s), nil
}

// Stats reads the actor's counters (all its groups); OSThreadID is the default thread's.
func (a *Actor[S]) Stats() (Stats, error) {
	var s C.tether_actor_stats
	s.struct_size = C.uint32_t(C.sizeof_tether_actor_stats)
	st := C.tether_actor_get_stats(a.handle(), &s)
	runtime.KeepAlive(a)
	if st != C.TETHER_OK {
		return Stats{}, a.callError(st, "Actor.Stats")
	}
	return a.q.adjust(statsFrom(&s)), nil
}

// Errors is the kept errors of fire-and-forget calls (the first 64).
func (a *Actor[S]) Errors() []error {
	errs := a.q.keptErrs()
	h := a.handle()
	for i := 0; ; i++ {
		var te C.tether_error
		if C.tether_actor_error(h, C.size_t(i), &te) != C.TETHER_OK {
			break
		}
		if err := takeError(te); err != nil {
			errs = append(errs, err)
		}
	}
	runtime.KeepAlive(a)
	return errs
}

// Stop stops the actor: new calls fail with ErrShutdown; StopCancel cancels the queued
// calls before it returns and asks running methods to stop. It then waits up to timeout
// (< 0: forever; 0: not at all) for the state's Close to have run on the actor's thread,
// and returns ErrTimeout if it has not (the stop goes on). A method blocked in user code
// never blocks Stop beyond timeout. StopCtx is Stop bounded by a context.
func (a *Actor[S]) Stop(mode StopMode, timeout time.Duration) error {
	if timeout < 0 {
		return a.stop(mode, context.Background(), false)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return a.stop(mode, ctx, timeout == 0)
}

// StopCtx is Stop waiting until ctx ends instead of a timeout: ctx.Err() when it ends
// first (the stop goes on).
func (a *Actor[S]) StopCtx(ctx context.Context, mode StopMode) error {
	return a.stop(mode, ctx, false)
}

// stop closes the Go queue (queue.go says why first), then stops the actor in the
// library and waits there (bounded by ctx) for its Close. noWait: a timeout of 0.
func (a *Actor[S]) stop(mode StopMode, ctx context.Context, noWait bool) error {
	id := a.id.Load()
	if id == 0 {
		return closedError("actor")
	}
	h := C.tether_actor{id: C.uint64_t(id)}
	defer runtime.KeepAlive(a)
	a.q.close(&Error{Code: CodeShutdown, Message: "the actor is stopped"}, mode == StopCancel)
	for { // slices of waiting in the library, so that ctx is honoured
		slice := 5 * time.Millisecond
		if noWait {
			slice = 0
		}
		st := C.tether_actor_stop(h, C.int32_t(mode), C.int64_t(slice))
		if st != C.TETHER_E_TIMEOUT || noWait {
			return a.callError(st, "Actor.Stop")
		}
		if ctx.Err() != nil {
			return a.stopTimeout(ctx)
		}
	}
}

// stopTimeout: ErrTimeout for Stop's timeout (wrapping ctx.Err()), ctx.Err() for a
// StopCtx context without a deadline.
func (a *Actor[S]) stopTimeout(ctx context.Context) error {
	if _, hasDeadline := ctx.Deadline(); hasDeadline {
		return &Error{Code: CodeTimeout, Message: "Actor.Stop: the state's Close has not run yet (the stop goes on)",
			Err: ctx.Err()}
	}
	return ctx.Err()
}

// Close stops the actor with StopDrain, waits until it has ended, and ends its threads.
// Idempotent. (Stop with StopCancel first to not run what is queued.) From one of the
// actor's own methods it does not wait: the actor ends once that method has returned.
func (a *Actor[S]) Close() error {
	id := a.id.Swap(0)
	if id == 0 {
		return nil
	}
	runtime.SetFinalizer(a, nil)
	a.q.close(closedError("actor"), false)
	return statusError(C.tether_actor_release(C.tether_actor{id: C.uint64_t(id)}), "Actor.Close")
}

func (a *Actor[S]) finalize() {
	if id := a.id.Swap(0); id != 0 {
		a.q.close(closedError("actor"), false)
		C.tether_actor_release_nowait(C.tether_actor{id: C.uint64_t(id)})
	}
}

func (a *Actor[S]) callError(st C.tether_status, op string) error {
	if st == C.TETHER_E_INVALID_HANDLE && a.id.Load() == 0 {
		return closedError("actor")
	}
	return statusError(st, op)
}
