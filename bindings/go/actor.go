package tether

/*
#include <stdlib.h>
#include <tether/tether.h>
#include "shim.h"
*/
import "C"

import (
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
	return "ActorState(?)"
}

// Actor is state of type S that lives on one pinned OS thread: the constructor, every
// default-group method and S's Close (if S implements Closer) run there, in order.
type Actor[S any] struct {
	id atomic.Uint64
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
		return s, C.TETHER_OK
	}))
	var out C.tether_actor
	if err := statusError(C.tgo_actor_create(&o, h, &out), "NewActor"); err != nil {
		return nil, err
	}
	a := &Actor[S]{}
	a.id.Store(uint64(out.id))
	runtime.SetFinalizer(a, (*Actor[S]).finalize)
	return a, nil
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
	return CallIn(a, "", fn)
}

// CallIn queues fn on the threads of the actor's concurrency group ("" = the default
// thread). An unknown group fails the future with ErrNotFound.
func CallIn[S, R any](a *Actor[S], group string, fn func(*S) (R, error)) *Future[R] {
	return CallScoped(a, group, func(_ *Scope, s *S) (R, error) { return fn(s) })
}

// CallScoped is CallIn for a method that needs its task: to see Scope.StopRequested
// (a Stop with StopCancel, a Future.Cancel) or to start nested threads with Scope.Go,
// which then belong to the call's future.
func CallScoped[S, R any](a *Actor[S], group string, fn func(*Scope, *S) (R, error)) *Future[R] {
	if a.id.Load() == 0 {
		return failedFuture[R](closedError("actor"))
	}
	res := &futureResult[R]{}
	h := newHandle(methodFunc(func(t *C.tether_task, state any) C.tether_status {
		s, _ := state.(*S)
		return runScoped(t, func(sc *Scope) error {
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
	h := newHandle(methodFunc(func(t *C.tether_task, state any) C.tether_status {
		s, _ := state.(*S)
		if err := fn(s); err != nil {
			return failTask(t, err)
		}
		return C.TETHER_OK
	}))
	st := C.tgo_actor_call(a.handle(), nil, h, nil)
	runtime.KeepAlive(a)
	return statusError(st, "Tell")
}

// State is the actor's life state; for a dead actor, also its constructor's error.
// It never waits, even while a method is blocked.
func (a *Actor[S]) State() (ActorState, error) {
	var s C.int32_t
	var cause C.tether_error
	st := C.tether_actor_state(a.handle(), &s, &cause)
	runtime.KeepAlive(a)
	if st != C.TETHER_OK {
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
	return statsFrom(&s), nil
}

// Errors is the kept errors of fire-and-forget calls (the first 64).
func (a *Actor[S]) Errors() []error {
	var errs []error
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
// never blocks Stop beyond timeout.
func (a *Actor[S]) Stop(mode StopMode, timeout time.Duration) error {
	st := C.tether_actor_stop(a.handle(), C.int32_t(mode), timeoutNS(timeout))
	runtime.KeepAlive(a)
	return a.callError(st, "Actor.Stop")
}

// Close stops the actor with StopDrain, waits until it has ended, and ends its threads.
// Idempotent. (Stop with StopCancel first to not run what is queued.)
func (a *Actor[S]) Close() error {
	id := a.id.Swap(0)
	if id == 0 {
		return nil
	}
	runtime.SetFinalizer(a, nil)
	return statusError(C.tether_actor_release(C.tether_actor{id: C.uint64_t(id)}), "Actor.Close")
}

func (a *Actor[S]) finalize() {
	if id := a.id.Swap(0); id != 0 {
		C.tether_actor_release_nowait(C.tether_actor{id: C.uint64_t(id)})
	}
}

func (a *Actor[S]) callError(st C.tether_status, op string) error {
	if st == C.TETHER_E_INVALID_HANDLE && a.id.Load() == 0 {
		return closedError("actor")
	}
	return statusError(st, op)
}
