package tether

/*
#include <stdlib.h>
#include <tether/tether.h>
#include "shim.h"
*/
import "C"

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
)

// RunOptions configures Run. The zero value (or nil) takes the library's defaults.
type RunOptions struct {
	// Name names the target's thread (OS-visible, cut to 15 bytes); "" = "tether-run".
	Name string
	// ContinueOnError keeps the other threads running after the first error instead of
	// asking them to stop (the library's stop_on_error = 0).
	ContinueOnError bool
	// StackSize of the threads in bytes; 0 = the platform default.
	StackSize int
}

// Scope is the view a runner thread (or a nested one, or a CallScoped method) has of its
// scope. Its methods other than Context and StopRequested are valid only inside the func
// it was passed to, on that func's goroutine: the C task it names ends when the func
// returns (they then return ErrWrongState / "").
type Scope struct {
	t     *C.tether_task
	valid atomic.Bool
	work  *callScope // the Go side of the scope: stop request, context, (calls) errors
	// inCall: the scope of a CallScoped method, whose nested threads the Go side counts
	// (the library runs the method inside a drain, see queue.go).
	inCall bool
}

// runScoped runs fn as runner task t of work's scope: its error fails the task, and,
// unless the runner continues on errors, asks the scope to stop.
func runScoped(t *C.tether_task, work *callScope, fn func(*Scope) error) C.tether_status {
	s := &Scope{t: t, work: work}
	s.valid.Store(true)
	err := runGuarded(t, func() error { return fn(s) })
	s.valid.Store(false)
	if err == nil {
		return C.TETHER_OK
	}
	if work != nil {
		work.record(err)
	}
	return failTask(t, err)
}

// Go starts fn on a new NESTED OS thread of the scope, named name ("" = the runner's
// name). Its error, or panic, fails the scope as the target's would, even while the
// target still runs. From another goroutine, or after the scope's func has returned, it
// is ErrWrongState.
func (s *Scope) Go(name string, fn func(*Scope) error) error {
	if !s.valid.Load() {
		return &Error{Code: CodeWrongState, Message: "Scope.Go: the scope's func has returned"}
	}
	cname, free := cstring(name)
	defer free()
	work := s.work
	var h C.uintptr_t
	if s.inCall {
		work.enter()
		h = newHandle(taskFunc(func(t *C.tether_task) C.tether_status {
			ns := &Scope{t: t, work: work, inCall: true}
			ns.valid.Store(true)
			err := runGuarded(t, func() error { return fn(ns) })
			ns.valid.Store(false)
			work.exit(err) // the call's future reports it, not the library
			return C.TETHER_OK
		}))
	} else {
		h = newHandle(taskFunc(func(t *C.tether_task) C.tether_status { return runScoped(t, work, fn) }))
	}
	st := C.tgo_task_spawn(s.t, cname, h) // h dropped on failure too
	if st != C.TETHER_OK && s.inCall {
		work.exit(nil)
	}
	if st == C.TETHER_E_INVALID_ARGUMENT {
		return &Error{Code: CodeWrongState, Message: "Scope.Go: called from a goroutine other than the scope's func"}
	}
	return statusError(st, "Scope.Go")
}

// StopRequested reports whether the scope was asked to stop: Runner.Cancel or Close, a
// sibling's failure under the default stop-on-error, Future.Cancel or a Stop with
// StopCancel for a CallScoped method. Usable from any goroutine. Cooperative: nothing is
// killed.
func (s *Scope) StopRequested() bool {
	if s.work != nil && s.work.stopped.Load() {
		return true
	}
	return s.valid.Load() && C.tether_task_stop_requested(s.t) != 0
}

// Context is cancelled when the scope is asked to stop (as StopRequested says) or has
// ended. Usable from any goroutine, for as long as the caller likes.
func (s *Scope) Context() context.Context {
	if s.work == nil {
		return context.Background()
	}
	return s.work.context()
}

// ThreadName is the full name of the thread the func runs on.
func (s *Scope) ThreadName() string {
	if !s.valid.Load() {
		return ""
	}
	return C.GoString(C.tether_task_thread_name(s.t))
}

// Runner is a scope of OS threads whose errors are caught: the target and every nested
// thread it (recursively) starts with Scope.Go. The scope fails at its first error, from
// any of its threads, even while the others still run.
type Runner struct {
	id   atomic.Uint64
	done chan struct{}
	// final is the scope's first error (nil: succeeded) and finalState its state, read
	// by the on_done notice before done is closed, so Wait, Err and Poll answer after Close.
	final      *error
	finalState *State
	work       *callScope // Scope.Context, StopRequested; the Go errors of its funcs
}

// Run starts target on a new OS thread and returns its runner, which the caller must
// Close. An error is returned when the thread could not be started.
func Run(opts *RunOptions, target func(*Scope) error) (*Runner, error) {
	if versionErr != nil {
		return nil, versionErr
	}
	var o C.tether_runner_options
	C.tether_runner_options_init(&o)
	free := func() {}
	if opts != nil {
		o.name, free = cstring(opts.Name)
		if opts.ContinueOnError {
			o.stop_on_error = 0
		}
		o.stack_size = C.size_t(opts.StackSize)
	}
	defer free()
	work := &callScope{stopOnError: opts == nil || !opts.ContinueOnError}
	h := newHandle(taskFunc(func(t *C.tether_task) C.tether_status { return runScoped(t, work, target) }))
	var out C.tether_runner
	if err := statusError(C.tgo_runner_start(&o, h, &out), "Run"); err != nil {
		return nil, err
	}
	r := &Runner{done: make(chan struct{}), final: new(error), finalState: new(State), work: work}
	r.id.Store(uint64(out.id))
	done, final, finalState := r.done, r.final, r.finalState
	nh := newHandle(notifyFunc(func() {
		*final = work.attach(runnerError(out))
		var s C.int32_t
		*finalState = Failed
		if C.tether_runner_poll(out, &s) == C.TETHER_OK {
			*finalState = State(s)
		}
		work.stop() // the scope has ended: its Context is done
		close(done)
	}))
	if err := statusError(C.tgo_runner_on_done(out, nh), "Run: on_done"); err != nil {
		C.tether_runner_release(out)
		return nil, err
	}
	runtime.SetFinalizer(r, (*Runner).finalize)
	return r, nil
}

func (r *Runner) handle() C.tether_runner { return C.tether_runner{id: C.uint64_t(r.id.Load())} }

// Done is closed when the scope is terminal (succeeded, failed or cancelled).
func (r *Runner) Done() <-chan struct{} { return r.done }

// Wait waits until the scope is terminal, then returns its first error (nil when it
// succeeded; an ErrCancelled error when it was cancelled). When ctx ends first it
// returns ctx.Err() at once: no OS thread is left blocked, and the scope runs on.
func (r *Runner) Wait(ctx context.Context) error {
	select {
	case <-r.done:
	default:
		select {
		case <-r.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return *r.final
}

// Poll returns the scope's state without blocking (Running, Succeeded, Failed or
// Cancelled).
func (r *Runner) Poll() (State, error) {
	select {
	case <-r.done:
		return *r.finalState, nil
	default:
	}
	var s C.int32_t
	st := C.tether_runner_poll(r.handle(), &s)
	runtime.KeepAlive(r)
	if st != C.TETHER_OK {
		return Failed, r.callError(st, "Runner.Poll")
	}
	return State(s), nil
}

// Err is the scope's first error: nil while there is none (running or succeeded); an
// ErrCancelled error for a cancelled scope.
func (r *Runner) Err() error {
	select {
	case <-r.done:
		return *r.final
	default:
	}
	err := r.work.attach(runnerError(r.handle()))
	runtime.KeepAlive(r)
	if errors.Is(err, ErrInvalidHandle) && r.id.Load() == 0 {
		return closedError("runner")
	}
	return err
}

func runnerError(h C.tether_runner) error {
	var e C.tether_error
	if st := C.tether_runner_error(h, &e); st != C.TETHER_OK {
		if st == C.TETHER_E_INVALID_HANDLE {
			return closedError("runner (closed before it ended)")
		}
		return statusError(st, "Runner.Err")
	}
	if e := takeError(e); e != nil {
		return e
	}
	return nil
}

// Errors is every error the scope recorded so far, the first one first. The list is
// complete once every thread of the scope has ended (after Close, for instance).
func (r *Runner) Errors() []error {
	h := r.handle()
	n := int(C.tether_runner_error_count(h))
	errs := make([]error, 0, n)
	for i := 0; i < n; i++ {
		var e C.tether_error
		if C.tether_runner_error_at(h, C.size_t(i), &e) != C.TETHER_OK {
			break
		}
		if te := takeError(e); te != nil {
			errs = append(errs, r.work.attach(te))
		}
	}
	runtime.KeepAlive(r)
	return errs
}

// LiveThreads is how many threads of the scope (the target included) still run.
func (r *Runner) LiveThreads() (int, error) {
	var n C.size_t
	st := C.tether_runner_live_threads(r.handle(), &n)
	runtime.KeepAlive(r)
	if st != C.TETHER_OK {
		return 0, r.callError(st, "Runner.LiveThreads")
	}
	return int(n), nil
}

// Cancel asks every thread of the scope to stop (Scope.StopRequested).
func (r *Runner) Cancel() error {
	st := C.tether_runner_cancel(r.handle()) // first: a func that sees Context end then
	r.work.stop()                            // returns nil still ends Cancelled
	runtime.KeepAlive(r)
	return r.callError(st, "Runner.Cancel")
}

// Close cancels the scope, waits until every one of its threads has returned and been
// joined, and frees the runner. Idempotent. After it, Wait, Err and Poll still give the
// outcome (a running scope closed ends Cancelled, unless a thread failed); Errors and
// LiveThreads fail with ErrClosed.
func (r *Runner) Close() error {
	id := r.id.Load()
	if id == 0 {
		return nil
	}
	h := C.tether_runner{id: C.uint64_t(id)}
	st := C.tether_runner_cancel(h) // before the Go side's stop, as in Cancel
	r.work.stop()
	if st == C.TETHER_OK {
		<-r.done // the outcome is read while the handle is still valid
	}
	if r.id.Swap(0) == 0 {
		return nil // a concurrent Close won
	}
	runtime.SetFinalizer(r, nil)
	return statusError(C.tether_runner_release(h), "Runner.Close")
}

func (r *Runner) finalize() {
	if id := r.id.Swap(0); id != 0 {
		C.tether_runner_release_nowait(C.tether_runner{id: C.uint64_t(id)})
	}
}

func (r *Runner) callError(st C.tether_status, op string) error {
	if st == C.TETHER_E_INVALID_HANDLE && r.id.Load() == 0 {
		return closedError("runner")
	}
	return statusError(st, op)
}
