package tether

/*
#include <tether/tether.h>
#include "shim.h"
*/
import "C"

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"
)

// Future is the outcome of one submitted task or actor call, of result type T. Close it
// when done with it (or let its finalizer do so); the work runs on either way.
type Future[T any] struct {
	id   atomic.Uint64 // the library's future (calls in a named group, graph executions)
	done chan struct{}
	res  *futureResult[T]
	call goCall // a call queued on the Go side (callQueue): no library future at all
}

// goCall is the Future's view of a call a callQueue runs.
type goCall interface {
	poll() State
	requestCancel() error
	queue() *callQueue
}

// futureResult is shared by the task's func (val) and the on_done notice (state, err),
// not by the Future itself, so an abandoned Future can be finalized while work pends.
// Both are written before done is closed and read only after it.
type futureResult[T any] struct {
	val   T
	state State
	err   error
}

// failedFuture is a future for work that was never queued (the call was rejected).
func failedFuture[T any](err error) *Future[T] {
	f := &Future[T]{done: make(chan struct{}), res: &futureResult[T]{state: Failed, err: err}}
	close(f.done)
	return f
}

// startFuture wraps the future `out` that a submit returned with status st.
func startFuture[T any](res *futureResult[T], st C.tether_status, out C.tether_future, op string) *Future[T] {
	if err := statusError(st, op); err != nil {
		return failedFuture[T](err)
	}
	return watchFuture(res, out, op, nil)
}

// watchFuture wraps a live future: its on_done notice fills res and closes done. With
// take (compiled graph executions), the notice also takes the value of a SUCCEEDED
// future: take runs once, on the completing thread, before any waiter wakes.
func watchFuture[T any](res *futureResult[T], out C.tether_future, op string,
	take func(C.tether_future) (T, error)) *Future[T] {
	f := &Future[T]{done: make(chan struct{}), res: res}
	f.id.Store(uint64(out.id))
	done := f.done
	nh := newHandle(notifyFunc(func() {
		// On the completing thread: read the outcome once, while the handle is surely
		// valid (unless Close came first), then wake the waiters.
		res.state, res.err = readFuture(out)
		if take != nil && res.state == Succeeded && res.err == nil {
			if res.val, res.err = take(out); res.err != nil {
				res.state = Failed // e.g. closed between the poll and the take
			}
		}
		close(done)
	}))
	if err := statusError(C.tgo_future_on_done(out, nh), op+": on_done"); err != nil {
		C.tether_future_release(out)
		return failedFuture[T](err)
	}
	runtime.SetFinalizer(f, (*Future[T]).Close)
	return f
}

func readFuture(f C.tether_future) (State, error) {
	var s C.int32_t
	if st := C.tether_future_poll(f, &s); st != C.TETHER_OK {
		if st == C.TETHER_E_INVALID_HANDLE {
			return Failed, closedError("future (closed before it completed)")
		}
		return Failed, statusError(st, "Future")
	}
	if State(s) == Succeeded {
		return Succeeded, nil
	}
	var e C.tether_error
	if st := C.tether_future_error(f, &e); st != C.TETHER_OK {
		return State(s), statusError(st, "Future")
	}
	if te := takeError(e); te != nil {
		return State(s), te
	}
	return State(s), &Error{Code: CodeInternal, Message: "future failed without an error"}
}

func (f *Future[T]) handle() C.tether_future { return C.tether_future{id: C.uint64_t(f.id.Load())} }

// Done is closed when the work is terminal.
func (f *Future[T]) Done() <-chan struct{} { return f.done }

// Wait waits for the outcome: the work's value, or its error (ErrCancelled for work
// cancelled; the func's error, ErrPanic, ErrActorDead, ...). When ctx ends first it
// returns ctx.Err() at once; the work is NOT cancelled (call Cancel for that), and no OS
// thread is left blocked in the library.
func (f *Future[T]) Wait(ctx context.Context) (T, error) {
	select {
	case <-f.done:
	default:
		if err := f.deadlock(); err != nil {
			var zero T
			return zero, err
		}
		if f.call == nil || !spinUntil(f.done, f.call.queue(), ctx) {
			select {
			case <-f.done:
			case <-ctx.Done():
				var zero T
				return zero, ctx.Err()
			}
		}
	}
	if f.res.err != nil || f.res.state != Succeeded {
		var zero T
		err := f.res.err
		if err == nil {
			err = &Error{Code: CodeInternal, Message: "future ended " + f.res.state.String()}
		}
		return zero, err
	}
	return f.res.val, nil
}

// spinUntil spins up to q.linger for done (true) before a Wait parks: a call that
// completes within it costs no wake-up of the waiting goroutine (the drain spins alike on
// its side, see callQueue.lingerForCalls). It yields the CPU now and then only when the
// lingering drain shares it (see callQueue.drainCPU; parking there instead measured
// 42 us a same-CPU round trip against 3.7, and 2.7 ms under load: the goroutine's thread
// spins in Go's scheduler before it sleeps); it gives up early when ctx ends.
func spinUntil(done <-chan struct{}, q *callQueue, ctx context.Context) bool {
	d := q.linger
	if d <= 0 {
		return false
	}
	cpu := int32(C.tgo_cpu())
	q.waiterCPU.Store(cpu)
	var end time.Time
	for i := 0; ; i++ {
		select {
		case <-done:
			return true
		default:
		}
		if i&63 == 0 {
			now := time.Now()
			if i == 0 {
				end = now.Add(d)
			} else if now.After(end) || ctx.Err() != nil {
				return false
			}
			if cpu < 0 || q.drainCPU.Load() == cpu {
				C.tgo_yield() // the drain on this CPU (or CPU unknown) runs first
			}
		}
	}
}

// deadlock is ErrDeadlock when the caller runs on the only thread the work can run on
// (a method waiting for a call of its own actor), as the library says for such a wait.
func (f *Future[T]) deadlock() error {
	if f.call != nil {
		if f.call.queue().onOwnThread() {
			return &Error{Code: CodeDeadlock, Message: "Future.Wait: the call can only run on this thread, which would wait for it"}
		}
		return nil
	}
	id := f.id.Load()
	if id == 0 {
		return nil
	}
	st := C.tether_future_wait(C.tether_future{id: C.uint64_t(id)}, 0)
	runtime.KeepAlive(f)
	if st == C.TETHER_E_DEADLOCK {
		return statusError(st, "Future.Wait")
	}
	return nil
}

// Poll returns the state without blocking.
func (f *Future[T]) Poll() State {
	select {
	case <-f.done:
		return f.res.state
	default:
	}
	if f.call != nil {
		return f.call.poll()
	}
	var s C.int32_t
	st := C.tether_future_poll(f.handle(), &s)
	runtime.KeepAlive(f)
	if st != C.TETHER_OK {
		select { // closed or completing just now
		case <-f.done:
			return f.res.state
		default:
			return Pending
		}
	}
	return State(s)
}

// Cancel cancels the work: pending work never runs (its func is dropped before Cancel
// returns); running work ends Cancelled if it then succeeds (it is not interrupted).
func (f *Future[T]) Cancel() error {
	if f.call != nil {
		return f.call.requestCancel()
	}
	id := f.id.Load()
	if id == 0 {
		return nil // never queued, or closed
	}
	st := C.tether_future_cancel(C.tether_future{id: C.uint64_t(id)})
	runtime.KeepAlive(f)
	if st == C.TETHER_E_INVALID_HANDLE && f.id.Load() == 0 {
		return nil
	}
	return statusError(st, "Future.Cancel")
}

// Close releases the future. The work runs on; a Wait still returns its outcome if the
// work had completed before Close. Idempotent.
func (f *Future[T]) Close() error {
	id := f.id.Swap(0)
	if id == 0 {
		return nil
	}
	runtime.SetFinalizer(f, nil)
	return statusError(C.tether_future_release(C.tether_future{id: C.uint64_t(id)}), "Future.Close")
}
