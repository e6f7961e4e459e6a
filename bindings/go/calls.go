package tether

/*
#include <tether/tether.h>
*/
import "C"

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// The calls a callQueue runs: fire and forget (Tell, Executor.Go) and with a future
// (Call, CallScoped, Submit). Each recovers its own panic and turns its error into an
// *Error that wraps it (runGuarded).

// tellCall is a fire-and-forget actor call (Tell); its error is kept by its queue.
type tellCall[S any] struct{ fn func(*S) error }

func (c *tellCall[S]) run(t *C.tether_task, state any) error {
	s, _ := state.(*S)
	return runGuarded(t, func() error { return c.fn(s) })
}
func (c *tellCall[S]) fail(error)          {}
func (c *tellCall[S]) cancel()             {}
func (c *tellCall[S]) fireAndForget() bool { return true }

// goTask is a fire-and-forget executor task (Executor.Go).
type goTask struct{ fn func() error }

func (c *goTask) run(t *C.tether_task, _ any) error { return runGuarded(t, c.fn) }
func (c *goTask) fail(error)                        {}
func (c *goTask) cancel()                           {}
func (c *goTask) fireAndForget() bool               { return true }

// futureCall is a call with a future. st arbitrates who settles it, once: run (Pending →
// Running → terminal), cancel and fail (Pending → terminal).
type futureCall[T any] struct {
	fn   func(sc *Scope, state any) (T, error)
	q    *callQueue
	res  *futureResult[T]
	done chan struct{}
	st   atomic.Int32 // a State
	// scoped: fn gets a Scope with Go (nested threads) and Context; else sc is nil.
	scoped    bool
	cancelReq atomic.Bool
	scope     *callScope // set while it runs (scoped calls), for cancel
	scopeMu   sync.Mutex // guards scope
}

func newFutureCall[T any](q *callQueue, scoped bool, fn func(sc *Scope, state any) (T, error)) (*futureCall[T], *Future[T]) {
	c := &futureCall[T]{fn: fn, q: q, res: &futureResult[T]{}, done: make(chan struct{}), scoped: scoped}
	c.st.Store(int32(Pending))
	return c, &Future[T]{done: c.done, res: c.res, call: c}
}

func (c *futureCall[T]) fireAndForget() bool { return false }

func (c *futureCall[T]) run(t *C.tether_task, state any) error {
	if !c.st.CompareAndSwap(int32(Pending), int32(Running)) {
		c.q.ran.count(errCancelled) // settled by Cancel before it started
		return errCancelled
	}
	if !c.scoped {
		var v T
		err := runGuarded(t, func() (err error) { v, err = c.fn(nil, state); return err })
		return c.settle(v, err, true)
	}
	// A scoped call ends when its func and every nested thread it started have returned;
	// the first error of any of them is its error.
	var v T
	var final error
	cs := &callScope{running: 1}
	settled := make(chan struct{})
	cs.settle = func(err error) { final = err; close(settled) }
	c.scopeMu.Lock()
	c.scope = cs
	c.scopeMu.Unlock()
	if c.cancelReq.Load() || c.q.cancelling.Load() {
		cs.stop()
	}
	sc := &Scope{t: t, work: cs, inCall: true}
	sc.valid.Store(true)
	err := runGuarded(t, func() (err error) { v, err = c.fn(sc, state); return err })
	sc.valid.Store(false)
	cs.exit(err)
	select {
	case <-settled:
		return c.settle(v, final, true)
	default:
	}
	// Nested threads still run: the future settles when the last one returns; the drain
	// goes on with the next call meanwhile.
	go func() { <-settled; c.settle(v, final, true) }()
	return nil
}

// settle writes the outcome and wakes the waiters; it returns err. A call that ran
// (ran) is counted in its queue's Stats first, so a Stats after Wait counts it.
func (c *futureCall[T]) settle(v T, err error, ran bool) error {
	if err == nil && c.cancelReq.Load() {
		err = &Error{Code: CodeCancelled, Message: "cancelled while it ran"}
	}
	state := Succeeded
	if err != nil {
		state = Failed
		if isCode(err, CodeCancelled) {
			state = Cancelled
		}
	} else {
		c.res.val = v
	}
	if ran {
		c.q.ran.count(err)
	}
	c.res.state, c.res.err = state, err
	c.st.Store(int32(state))
	close(c.done)
	return err
}

func (c *futureCall[T]) fail(err error) {
	if c.st.CompareAndSwap(int32(Pending), int32(Failed)) {
		var zero T
		c.settle(zero, err, false)
	}
}

func (c *futureCall[T]) cancel() {
	c.cancelReq.Store(true)
	if c.st.CompareAndSwap(int32(Pending), int32(Cancelled)) {
		var zero T
		c.settle(zero, &Error{Code: CodeCancelled, Message: "cancelled before it ran"}, false)
		return
	}
	c.scopeMu.Lock()
	cs := c.scope
	c.scopeMu.Unlock()
	if cs != nil {
		cs.stop()
	}
}

func (c *futureCall[T]) poll() State          { return State(c.st.Load()) }
func (c *futureCall[T]) queue() *callQueue    { return c.q }
func (c *futureCall[T]) requestCancel() error { c.cancel(); return nil }

// errCancelled counts a call cancelled before it started.
var errCancelled = &Error{Code: CodeCancelled, Message: "cancelled before it ran"}

// callScope is the Go side of one scope: its stop request and context, and for a scoped
// actor call also how many of its funcs still run and its first error (a runner's are
// the library's).
//
// Thread safety: mu guards running, err, ctx, cancelFn; stopped is read without it.
type callScope struct {
	stopped atomic.Bool

	mu       sync.Mutex
	running  int   // the call's func and its nested threads not yet returned
	err      error // the first error
	ctx      context.Context
	cancelFn context.CancelFunc
	settle   func(err error) // run once, when running reaches 0 (nil for a runner)
	// A runner's: whether a failure stops the scope, and the Go errors its funcs returned
	// (the library keeps their text; attach gives them back to errors.Is / errors.As).
	stopOnError bool
	goErrs      []goErrRecord
}

// goErrRecord is one error a runner's func returned, as the library recorded it.
type goErrRecord struct {
	thread, msg string
	err         error
}

// maxGoErrs bounds the Go errors a runner keeps for attach.
const maxGoErrs = 64

// record keeps the Go error a runner's func failed with and, under stop-on-error, asks
// the scope to stop (the library does the same for its threads).
func (s *callScope) record(err error) {
	te, ok := err.(*Error)
	if !ok || te.Err == nil {
		if s.stopOnError {
			s.stop()
		}
		return
	}
	s.mu.Lock()
	if len(s.goErrs) < maxGoErrs {
		s.goErrs = append(s.goErrs, goErrRecord{thread: te.Thread, msg: te.Message, err: te.Err})
	}
	s.mu.Unlock()
	if s.stopOnError {
		s.stop()
	}
}

// attach sets Err of the library's error err to the Go error it was recorded from.
func (s *callScope) attach(err error) error {
	te, ok := err.(*Error)
	if !ok || te == nil || te.Err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.goErrs {
		if r.thread == te.Thread && r.msg == te.Message {
			te.Err = r.err
			break
		}
	}
	return err
}

// enter counts one more func of the scope (a nested thread about to start).
func (s *callScope) enter() {
	s.mu.Lock()
	s.running++
	s.mu.Unlock()
}

// exit ends one func of the scope with its error; the first error stops the scope.
func (s *callScope) exit(err error) {
	s.mu.Lock()
	first := err != nil && s.err == nil
	if first {
		s.err = err
	}
	s.running--
	last := s.running == 0
	final := s.err
	s.mu.Unlock()
	if first {
		s.stop()
	}
	if last && s.settle != nil {
		s.settle(final)
	}
}

// stop asks the scope to stop: StopRequested turns true and Context is cancelled.
func (s *callScope) stop() {
	s.stopped.Store(true)
	s.mu.Lock()
	cancel := s.cancelFn
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// context is the scope's context, made on first use.
func (s *callScope) context() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil {
		s.ctx, s.cancelFn = context.WithCancel(context.Background())
		if s.stopped.Load() {
			s.cancelFn()
		}
	}
	return s.ctx
}

// runGuarded runs fn as the body of task t: a panic becomes an ErrPanic error, an error
// an *Error wrapping it (userError). A runtime.Goexit (t.Fatal, t.FailNow, t.SkipNow)
// cannot be stopped on a thread the library made: the process ends, and this says why.
func runGuarded(t *C.tether_task, fn func() error) (err error) {
	returned := false
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Code: CodePanic, Message: fmt.Sprintf("panic: %v", r), Thread: threadName(t)}
		} else if !returned {
			fmt.Fprintln(os.Stderr, goexitNotice)
		}
	}()
	err = fn()
	returned = true
	if err != nil {
		return userError(t, err)
	}
	return nil
}

// goexitNotice is printed when a func run by tether calls runtime.Goexit.
const goexitNotice = "tether: runtime.Goexit (t.Fatal, t.FailNow, t.SkipNow) was called in a func that " +
	"tether runs on its own thread; Go ends the process for it. Return an error (or use t.Error) instead."

// threadName is the name of the thread running task t ("" for a nil task).
func threadName(t *C.tether_task) string {
	if t == nil {
		return ""
	}
	return C.GoString(C.tether_task_thread_name(t))
}
