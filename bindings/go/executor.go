package tether

/*
#include <tether/tether.h>
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"sync/atomic"
	"time"
)

// ExecutorOptions configures NewExecutor. The zero value (or nil) takes the defaults.
type ExecutorOptions struct {
	Name          string        // OS-visible thread name; "" = "tether-exec"
	CPU           *int          // pin the thread to this CPU; nil = no affinity
	QueueCapacity int           // 0 = unbounded; else a full queue rejects with ErrQueueFull
	StackSize     int           // bytes; 0 = the platform default
	IdleSpin      time.Duration // spin before parking; 0 = the default (20us), < 0 = none
}

// Executor is ONE OS thread for its whole life: everything submitted to it runs on that
// thread, in submission order.
type Executor struct {
	id     atomic.Uint64
	q      *callQueue    // Submit's and Go's calls (queue.go)
	linger time.Duration // its idle spin, which the drains of its actors spin too
}

// NewExecutor starts an executor thread. Close it when done.
func NewExecutor(opts *ExecutorOptions) (*Executor, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	var o C.tether_executor_options
	C.tether_executor_options_init(&o)
	free := func() {}
	if opts != nil {
		o.name, free = cstring(opts.Name)
		if opts.CPU != nil {
			o.cpu = C.int(*opts.CPU)
		}
		o.queue_capacity = C.size_t(opts.QueueCapacity)
		o.stack_size = C.size_t(opts.StackSize)
		if opts.IdleSpin > 0 {
			o.idle_spin_ns = C.int64_t(opts.IdleSpin.Nanoseconds())
		} else if opts.IdleSpin < 0 {
			o.idle_spin_ns = 0
		}
	}
	defer free()
	var out C.tether_executor
	if err := statusError(C.tether_executor_create(&o, &out), "NewExecutor"); err != nil {
		return nil, err
	}
	linger := time.Duration(o.idle_spin_ns)
	e := &Executor{linger: linger, q: newCallQueue(int(o.queue_capacity), linger,
		func(q *callQueue) C.tether_status { return C.tgo_executor_drain(out, q.handle) },
		func() error { return &Error{Code: CodeCancelled, Message: "cancelled: the executor ended"} })}
	e.id.Store(uint64(out.id))
	runtime.SetFinalizer(e, (*Executor).finalize)
	return e, nil
}

func (e *Executor) handle() C.tether_executor {
	return C.tether_executor{id: C.uint64_t(e.id.Load())}
}

// Submit queues fn on e's thread and returns its future.
func Submit[T any](e *Executor, fn func() (T, error)) *Future[T] {
	if e.id.Load() == 0 {
		return failedFuture[T](closedError("executor"))
	}
	return pushCall(e.q, false, func(*Scope, any) (T, error) { return fn() })
}

// Go queues fn on e's thread, fire and forget: its error is counted and kept by the
// executor (Errors, Stats). The returned error is the submission's (ErrQueueFull,
// ErrShutdown, ...).
func (e *Executor) Go(fn func() error) error {
	if e.id.Load() == 0 {
		return closedError("executor")
	}
	return e.q.push(&goTask{fn: fn})
}

// Stats counts an executor's (or an actor's) work.
type Stats struct {
	Queued, Completed, Failed, Cancelled, Rejected, ErrorsDropped uint64
	OSThreadID                                                    int // gettid()
}

func statsFrom(s *C.tether_executor_stats) Stats {
	return Stats{
		Queued: uint64(s.queued), Completed: uint64(s.completed), Failed: uint64(s.failed),
		Cancelled: uint64(s.cancelled), Rejected: uint64(s.rejected),
		ErrorsDropped: uint64(s.errors_dropped), OSThreadID: int(s.os_thread_id),
	}
}

// Stats reads the executor's counters.
func (e *Executor) Stats() (Stats, error) {
	var s C.tether_executor_stats
	s.struct_size = C.uint32_t(C.sizeof_tether_executor_stats)
	st := C.tether_executor_get_stats(e.handle(), &s)
	runtime.KeepAlive(e)
	if err := statusError(st, "Executor.Stats"); err != nil {
		if e.id.Load() == 0 {
			return Stats{}, closedError("executor")
		}
		return Stats{}, err
	}
	return e.q.adjust(statsFrom(&s)), nil
}

// Errors is the kept errors of fire-and-forget tasks (the first 64).
func (e *Executor) Errors() []error {
	errs := e.q.keptErrs()
	h := e.handle()
	for i := 0; ; i++ {
		var te C.tether_error
		if C.tether_executor_error(h, C.size_t(i), &te) != C.TETHER_OK {
			break
		}
		if err := takeError(te); err != nil {
			errs = append(errs, err)
		}
	}
	runtime.KeepAlive(e)
	return errs
}

// Close runs what is queued, then joins the thread (if actors still live on the
// executor, the thread ends after the last of them). Idempotent.
func (e *Executor) Close() error {
	id := e.id.Swap(0)
	if id == 0 {
		return nil
	}
	runtime.SetFinalizer(e, nil)
	e.q.close(closedError("executor"), false)
	return statusError(C.tether_executor_release(C.tether_executor{id: C.uint64_t(id)}), "Executor.Close")
}

func (e *Executor) finalize() {
	if id := e.id.Swap(0); id != 0 {
		e.q.close(closedError("executor"), false)
		C.tether_executor_release_nowait(C.tether_executor{id: C.uint64_t(id)})
	}
}
