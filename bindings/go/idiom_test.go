package tether

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

type idiomState struct{ n int }

func newIdiomActor(t *testing.T) *Actor[idiomState] {
	t.Helper()
	a, err := NewActor(&ActorOptions{Name: "idiom"}, func() (*idiomState, error) { return &idiomState{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// A method that calls its own actor and waits gets ErrDeadlock at once, also with
// context.Background(), as the library answers such a wait.
func TestWaitOnOwnActorIsDeadlock(t *testing.T) {
	a := newIdiomActor(t)
	v, err := Call(a, func(s *idiomState) (error, error) {
		_, err := Call(a, func(*idiomState) (int, error) { return 1, nil }).Wait(context.Background())
		return err, nil
	}).Wait(ctxBound(t))
	if err != nil || !errors.Is(v, ErrDeadlock) {
		t.Fatalf("inner Wait = %v (outer %v), want ErrDeadlock", v, err)
	}
	// The call it queued still runs, after the method.
	if n, err := Call(a, func(s *idiomState) (int, error) { return 7, nil }).Wait(ctxBound(t)); err != nil || n != 7 {
		t.Fatalf("after: %d, %v", n, err)
	}
}

// Scope.Context and StopRequested see Runner.Cancel from any goroutine; Scope.Go from
// another goroutine is ErrWrongState with its own text.
func TestScopeContextCancelledFromAnyGoroutine(t *testing.T) {
	scopes := make(chan *Scope, 1)
	release := make(chan struct{})
	r, err := Run(nil, func(s *Scope) error {
		scopes <- s
		select {
		case <-s.Context().Done():
		case <-release:
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer close(release)
	s := <-scopes
	if s.StopRequested() {
		t.Fatal("StopRequested before Cancel")
	}
	err = s.Go("x", func(*Scope) error { return nil })
	if !errors.Is(err, ErrWrongState) || !strings.Contains(err.Error(), "other than the scope's func") {
		t.Fatalf("Scope.Go from another goroutine = %v", err)
	}
	if err := r.Cancel(); err != nil {
		t.Fatal(err)
	}
	if !s.StopRequested() {
		t.Fatal("StopRequested from another goroutine stays false after Cancel")
	}
	select {
	case <-s.Context().Done():
	case <-ctxBound(t).Done():
		t.Fatal("Scope.Context not cancelled by Cancel")
	}
	if err := r.Wait(ctxBound(t)); err != nil && !errors.Is(err, ErrCancelled) {
		t.Fatalf("Wait = %v", err)
	}
}

// A sibling's failure (stop on error) cancels the other threads' Context.
func TestScopeContextCancelledBySiblingFailure(t *testing.T) {
	r, err := Run(nil, func(s *Scope) error {
		if err := s.Go("fails", func(*Scope) error { return errors.New("boom") }); err != nil {
			return err
		}
		select {
		case <-s.Context().Done():
			return nil
		case <-time.After(bound):
			return errors.New("Context not cancelled by the sibling's failure")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Wait(ctxBound(t)); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("Wait = %v, want boom", err)
	}
	if errs := r.Errors(); len(errs) != 1 {
		t.Fatalf("errors = %v, want only boom", errs)
	}
}

// CallScoped: Future.Cancel cancels the method's Context; its nested threads belong to
// the call's future (it settles when they have returned, with their error).
func TestCallScopedContextAndNestedThreads(t *testing.T) {
	a := newIdiomActor(t)
	started := make(chan struct{})
	f := CallScoped(a, "", func(s *Scope, _ *idiomState) (int, error) {
		close(started)
		<-s.Context().Done()
		return 0, s.Context().Err()
	})
	<-started
	if err := f.Cancel(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Wait(ctxBound(t)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call = %v, want it to wrap context.Canceled", err)
	}

	var nestedDone atomic.Bool
	g := CallScoped(a, "", func(s *Scope, _ *idiomState) (int, error) {
		err := s.Go("nested", func(*Scope) error {
			time.Sleep(20 * time.Millisecond) // work, not synchronisation: the future must wait for it
			nestedDone.Store(true)
			return errors.New("nested failed")
		})
		return 1, err
	})
	if _, err := g.Wait(ctxBound(t)); err == nil || !strings.Contains(err.Error(), "nested failed") {
		t.Fatalf("call with a failing nested thread = %v", err)
	}
	if !nestedDone.Load() {
		t.Fatal("the call's future settled before its nested thread returned")
	}
}

// Runner.Close on a running scope keeps the outcome: Err and Poll say Cancelled.
func TestRunnerCloseKeepsOutcome(t *testing.T) {
	r, err := Run(nil, func(s *Scope) error {
		<-s.Context().Done()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Err(); !errors.Is(err, ErrCancelled) {
		t.Fatalf("Err after Close = %v, want ErrCancelled", err)
	}
	if st, err := r.Poll(); err != nil || st != Cancelled {
		t.Fatalf("Poll after Close = %v, %v; want Cancelled", st, err)
	}
	if err := r.Wait(ctxBound(t)); !errors.Is(err, ErrCancelled) {
		t.Fatalf("Wait after Close = %v", err)
	}
}

// Errors returned by funcs wrap: errors.Is reaches inner errors, text is never doubled.
func TestErrorsWrapNotDouble(t *testing.T) {
	a := newIdiomActor(t)
	_, err := Call(a, func(*idiomState) (int, error) {
		return 0, fmt.Errorf("upload: %w", context.DeadlineExceeded)
	}).Wait(ctxBound(t))
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrTaskFailed) {
		t.Fatalf("Call error = %v: want it to match DeadlineExceeded and ErrTaskFailed", err)
	}
	_, err = Call(a, func(*idiomState) (int, error) {
		return 0, fmt.Errorf("inner: %w", &Error{Code: CodeTimeout, Message: "took too long"})
	}).Wait(ctxBound(t))
	if !errors.Is(err, ErrTimeout) || strings.Count(err.Error(), "TETHER_E_TIMEOUT") != 1 ||
		!strings.Contains(err.Error(), "inner: took too long") {
		t.Fatalf("Call error = %q: want ErrTimeout once, with the inner text", err)
	}
	var te *Error
	if !errors.As(err, &te) || te.Thread != "idiom" {
		t.Fatalf("error %v: want the actor's thread", err)
	}
	r, err := Run(nil, func(*Scope) error { return fmt.Errorf("step: %w", context.Canceled) })
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Wait(ctxBound(t)); !errors.Is(err, context.Canceled) || !errors.Is(err, ErrTaskFailed) {
		t.Fatalf("runner error = %v: want it to match context.Canceled", err)
	}
}

// One rule for "is it gone?": ErrShutdown matches a stopped and a closed object; ErrClosed
// only the closed one. State of a closed actor is Stopped.
func TestClosedIsShutdown(t *testing.T) {
	stopped := newIdiomActor(t)
	if err := stopped.Stop(StopDrain, bound); err != nil {
		t.Fatal(err)
	}
	err := Tell(stopped, func(*idiomState) error { return nil })
	if !errors.Is(err, ErrShutdown) || errors.Is(err, ErrClosed) {
		t.Fatalf("Tell on a stopped actor = %v", err)
	}
	closed := newIdiomActor(t)
	closed.Close()
	_, err = Call(closed, func(*idiomState) (int, error) { return 0, nil }).Wait(ctxBound(t))
	if !errors.Is(err, ErrShutdown) || !errors.Is(err, ErrClosed) {
		t.Fatalf("Call on a closed actor = %v", err)
	}
	if st, err := closed.State(); st != ActorStopped || !errors.Is(err, ErrClosed) {
		t.Fatalf("State of a closed actor = %v, %v", st, err)
	}
	if s := ActorState(9).String(); s != "ActorState(9)" {
		t.Fatalf("ActorState(9) = %q", s)
	}
}

// A constructor returning (nil, nil) makes a dead actor, never one with a nil state.
func TestNilConstructorStateIsError(t *testing.T) {
	a, err := NewActor(nil, func() (*idiomState, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = Call(a, func(s *idiomState) (int, error) { return s.n, nil }).Wait(ctxBound(t))
	if !errors.Is(err, ErrActorDead) || !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("call on a (nil, nil) actor = %v: want ErrActorDead caused by ErrInvalidArgument", err)
	}
}

// StopCtx and ExecuteCtx end with their context.
func TestStopCtxEndsWithContext(t *testing.T) {
	a := newIdiomActor(t)
	unblock := make(chan struct{})
	started := make(chan struct{})
	f := Call(a, func(*idiomState) (int, error) { close(started); <-unblock; return 0, nil })
	defer f.Close()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	begin := time.Now()
	if err := a.StopCtx(ctx, StopDrain); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("StopCtx = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(begin); d > bound {
		t.Fatalf("StopCtx took %v", d)
	}
	close(unblock)
	if err := a.StopCtx(ctxBound(t), StopDrain); err != nil {
		t.Fatalf("StopCtx after unblock = %v", err)
	}
}

// Every call of the default thread, Tell, Call and CallScoped alike, runs in submission
// order, and none of them holds a cgo.Handle while it is queued.
func TestQueuedCallsInOrderWithoutHandles(t *testing.T) {
	a := newIdiomActor(t)
	if _, err := Call(a, func(*idiomState) (int, error) { return 0, nil }).Wait(ctxBound(t)); err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	Tell(a, func(*idiomState) error { <-gate; return nil }) // hold the thread while we queue
	base := liveHandles.Load()
	n := testScale(3000)
	var futures []*Future[int]
	for i := 0; i < n; i++ {
		i := i
		switch i % 3 {
		case 0:
			if err := Tell(a, func(s *idiomState) error {
				if s.n != i {
					return fmt.Errorf("Tell %d ran at %d", i, s.n)
				}
				s.n++
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		case 1:
			futures = append(futures, Call(a, func(s *idiomState) (int, error) { s.n++; return i, nil }))
		case 2:
			futures = append(futures, CallScoped(a, "", func(_ *Scope, s *idiomState) (int, error) { s.n++; return i, nil }))
		}
	}
	if got := liveHandles.Load(); got != base {
		t.Fatalf("%d queued calls hold %d cgo.Handles", n, got-base)
	}
	close(gate)
	for _, f := range futures {
		if _, err := f.Wait(ctxBound(t)); err != nil {
			t.Fatal(err)
		}
	}
	if n2, _ := Call(a, func(s *idiomState) (int, error) { return s.n, nil }).Wait(ctxBound(t)); n2 != n {
		t.Fatalf("ran %d calls, want %d", n2, n)
	}
	if errs := a.Errors(); len(errs) != 0 {
		t.Fatalf("out of order: %v", errs[0])
	}
	if st, err := a.Stats(); err != nil || st.Completed != uint64(n)+3 || st.Queued != 0 {
		t.Fatalf("Stats = %+v, %v; want %d completed", st, err, n+3)
	}
}

// A bounded mailbox rejects with ErrQueueFull once that many calls wait.
func TestMailboxCapacityFull(t *testing.T) {
	a, err := NewActor(&ActorOptions{MailboxCapacity: 2}, func() (*idiomState, error) { return &idiomState{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	gate := make(chan struct{})
	started := make(chan struct{})
	Tell(a, func(*idiomState) error { close(started); <-gate; return nil })
	<-started
	Tell(a, func(*idiomState) error { return nil })
	Tell(a, func(*idiomState) error { return nil })
	if err := Tell(a, func(*idiomState) error { return nil }); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("third queued Tell = %v, want ErrQueueFull", err)
	}
	close(gate)
}

// runtime.Goexit (t.Fatal) in a func tether runs ends the process; tether says why first.
func TestGoexitInFuncIsExplained(t *testing.T) {
	if os.Getenv("TETHER_GOEXIT_CHILD") == "1" {
		a, err := NewActor(nil, func() (*idiomState, error) { return &idiomState{}, nil })
		if err != nil {
			os.Exit(3)
		}
		Call(a, func(*idiomState) (int, error) { runtime.Goexit(); return 0, nil }).Wait(context.Background())
		os.Exit(4) // not reached: Go ends the process in the Goexit
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestGoexitInFuncIsExplained$")
	cmd.Env = append(os.Environ(), "TETHER_GOEXIT_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "runtime.Goexit (t.Fatal") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// A Stats read after a Wait returned counts that call and every call before it: a call
// is counted before its future settles, in the drain's batch or not. Fire-and-forget
// calls before each Call, and calls that fail or are cancelled before they run, each in
// their own counter.
func TestStatsCountACallBeforeItsWaitReturns(t *testing.T) {
	a := newIdiomActor(t)
	rounds := testScale(2000)
	for i := 1; i <= rounds; i++ {
		Tell(a, func(*idiomState) error { return nil })
		var f *Future[int]
		if i%2 == 0 {
			f = Call(a, func(*idiomState) (int, error) { return 0, errors.New("failed on purpose") })
		} else {
			f = CallScoped(a, "", func(*Scope, *idiomState) (int, error) { return 0, nil })
		}
		f.Wait(ctxBound(t))
		st, err := a.Stats()
		ok, failed := uint64(i+(i+1)/2), uint64(i/2)
		if err != nil || st.Completed != ok || st.Failed != failed {
			t.Fatalf("after %d round trips: Stats = %+v, %v; want %d completed, %d failed",
				i, st, err, ok, failed)
		}
	}
}
