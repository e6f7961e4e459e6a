package tether

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// bound is every test wait's deadline: no test can hang.
const bound = 10 * time.Second

func ctxBound(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	t.Cleanup(cancel)
	return ctx
}

func TestVersion(t *testing.T) {
	if !strings.HasPrefix(Version(), "0.1.") {
		t.Fatalf("Version() = %q", Version())
	}
}

func TestErrorsIsAs(t *testing.T) {
	err := error(&Error{Code: CodeActorDead, Message: "x", Cause: &Error{Code: CodePanic}})
	if !errors.Is(err, ErrActorDead) || !errors.Is(err, ErrPanic) || errors.Is(err, ErrTimeout) {
		t.Fatalf("errors.Is on %v", err)
	}
	wrapped := fmt.Errorf("ctx: %w", err)
	var te *Error
	if !errors.As(wrapped, &te) || te.Code != CodeActorDead {
		t.Fatalf("errors.As on %v", wrapped)
	}
	if got := CodeTimeout.String(); got != "TETHER_E_TIMEOUT" {
		t.Fatalf("CodeTimeout.String() = %q", got)
	}
}

// An actor's constructor and every method run on the same OS thread, across 1,000 calls
// from 50 goroutines.
func TestActorPinnedThread(t *testing.T) {
	type state struct {
		ctorTid int
		calls   int // only touched on the actor's thread
	}
	a, err := NewActor(&ActorOptions{Name: "pinned"}, func() (*state, error) {
		return &state{ctorTid: syscall.Gettid()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	const goroutines, perG = 50, 20
	type obs struct{ ctor, method int }
	results := make(chan obs, goroutines*perG)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perG; i++ {
				f := Call(a, func(s *state) (obs, error) {
					s.calls++
					return obs{s.ctorTid, syscall.Gettid()}, nil
				})
				o, err := f.Wait(ctxBound(t))
				f.Close()
				if err != nil {
					t.Error(err)
					return
				}
				results <- o
			}
		}()
	}
	wg.Wait()
	close(results)
	n := 0
	var tid int
	for o := range results {
		if o.ctor != o.method || o.ctor == 0 {
			t.Fatalf("constructor on thread %d, method on thread %d", o.ctor, o.method)
		}
		tid = o.ctor
		n++
	}
	if n != goroutines*perG {
		t.Fatalf("%d results, want %d", n, goroutines*perG)
	}
	if tid == syscall.Gettid() {
		t.Fatal("the actor ran on the test's own thread")
	}
	calls, err := Call(a, func(s *state) (int, error) { return s.calls, nil }).Wait(ctxBound(t))
	if err != nil || calls != goroutines*perG {
		t.Fatalf("calls = %d, %v", calls, err)
	}
	st, err := a.Stats()
	if err != nil || st.OSThreadID != tid {
		t.Fatalf("Stats().OSThreadID = %d (%v), want %d", st.OSThreadID, err, tid)
	}
}

// A nested runner thread that panics fails the scope with ErrPanic while the target
// still runs.
func TestRunnerNestedPanic(t *testing.T) {
	release := make(chan struct{})
	var targetRunning atomic.Bool
	r, err := Run(&RunOptions{Name: "target", ContinueOnError: true}, func(s *Scope) error {
		targetRunning.Store(true)
		defer targetRunning.Store(false)
		if err := s.Go("nested", func(*Scope) error { panic("boom in nested") }); err != nil {
			return err
		}
		select {
		case <-release:
		case <-time.After(bound):
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	err = r.Wait(ctxBound(t))
	if !errors.Is(err, ErrPanic) {
		t.Fatalf("Wait = %v, want ErrPanic", err)
	}
	if !targetRunning.Load() {
		t.Fatal("the target is not running any more when the failure is seen")
	}
	if st, _ := r.Poll(); st != Failed {
		t.Fatalf("Poll = %v", st)
	}
	var te *Error
	if !errors.As(err, &te) || te.Thread != "nested" || !strings.Contains(te.Message, "boom in nested") {
		t.Fatalf("error = %#v", te)
	}
	close(release)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	if targetRunning.Load() {
		t.Fatal("Close returned before the target did")
	}
}

func TestRunnerSuccessAndErrors(t *testing.T) {
	r, err := Run(nil, func(s *Scope) error {
		for i := 0; i < 3; i++ {
			i := i
			if err := s.Go(fmt.Sprintf("w%d", i), func(*Scope) error {
				if i == 1 {
					return Fail(7, "disk full")
				}
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = r.Wait(ctxBound(t))
	var te *Error
	if !errors.As(err, &te) || te.Code != CodeTaskFailed || te.UserCode != 7 || te.Message != "disk full" || te.Thread != "w1" {
		t.Fatalf("Wait = %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := r.Poll(); err != nil || st != Failed {
		t.Fatalf("Poll after Close = %v, %v; want Failed, nil (the outcome stays readable)", st, err)
	}
	if err := r.Wait(ctxBound(t)); !errors.As(err, &te) || te.UserCode != 7 {
		t.Fatalf("Wait after Close = %v", err)
	}

	ok, err := Run(nil, func(s *Scope) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer ok.Close()
	if err := ok.Wait(ctxBound(t)); err != nil {
		t.Fatal(err)
	}
	if st, _ := ok.Poll(); st != Succeeded || len(ok.Errors()) != 0 {
		t.Fatalf("Poll = %v, Errors = %v", st, ok.Errors())
	}
}

func TestRunnerCancel(t *testing.T) {
	r, err := Run(nil, func(s *Scope) error {
		deadline := time.Now().Add(bound)
		for !s.StopRequested() && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Cancel(); err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(ctxBound(t)); !errors.Is(err, ErrCancelled) {
		t.Fatalf("Wait = %v, want ErrCancelled", err)
	}
}

// Wait(ctx) returns ctx.Err() on cancellation, leaves no thread blocked, and the call
// is not leaked: it still completes and its func is dropped.
func TestWaitContextCancelled(t *testing.T) {
	base := liveHandles.Load()
	e, err := NewExecutor(&ExecutorOptions{Name: "waitctx"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	unblock := make(chan struct{})
	f := Submit(e, func() (int, error) { <-unblock; return 42, nil })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := f.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Wait took %v after its context ended", d)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := f.Wait(ctx2); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait = %v, want Canceled", err)
	}
	if f.Poll().Terminal() {
		t.Fatal("the call ended although it is blocked")
	}
	close(unblock)
	v, err := f.Wait(ctxBound(t))
	if err != nil || v != 42 {
		t.Fatalf("Wait = %d, %v", v, err)
	}
	f.Close()
	waitHandles(t, base+1) // the executor's queue holds one handle until Close
}

// A method blocked (in user code) does not block Stop(StopCancel): the queued call is
// cancelled, the control plane answers, and the blocked method finishes later.
func TestActorStopCancelWhileBlocked(t *testing.T) {
	type state struct{}
	a, err := NewActor(&ActorOptions{Name: "blocked", Groups: []Group{{Name: "io", Threads: 1}}},
		func() (*state, error) { return &state{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	unblock := make(chan struct{})
	started := make(chan struct{})
	blocked := Call(a, func(*state) (int, error) { close(started); <-unblock; return 1, nil })
	defer blocked.Close()
	queued := Call(a, func(*state) (int, error) { return 2, nil })
	defer queued.Close()
	<-started
	// Another group answers while the default thread is blocked.
	if v, err := CallIn(a, "io", func(*state) (int, error) { return 3, nil }).Wait(ctxBound(t)); err != nil || v != 3 {
		t.Fatalf("io call = %d, %v", v, err)
	}
	if _, err := CallIn(a, "nope", func(*state) (int, error) { return 0, nil }).Wait(ctxBound(t)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown group: %v", err)
	}
	start := time.Now()
	err = a.Stop(StopCancel, 50*time.Millisecond)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Stop(StopCancel) took %v", d)
	}
	if err != nil && !errors.Is(err, ErrTimeout) {
		t.Fatalf("Stop = %v", err)
	}
	if _, err := queued.Wait(ctxBound(t)); !errors.Is(err, ErrCancelled) {
		t.Fatalf("queued call: %v, want ErrCancelled", err)
	}
	if s, err := a.State(); err != nil || s != ActorStopped {
		t.Fatalf("State = %v, %v", s, err)
	}
	if err := Tell(a, func(*state) error { return nil }); !errors.Is(err, ErrShutdown) {
		t.Fatalf("Tell after Stop = %v", err)
	}
	close(unblock)
	if _, err := blocked.Wait(ctxBound(t)); err != nil && !errors.Is(err, ErrCancelled) {
		t.Fatalf("blocked call: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

type closingState struct {
	tid    int
	closed *atomic.Int64 // the thread Close ran on
}

func (s *closingState) Close() error { s.closed.Store(int64(syscall.Gettid())); return nil }

func TestActorStateCloseOnItsThread(t *testing.T) {
	var closedOn atomic.Int64
	a, err := NewActor(nil, func() (*closingState, error) {
		return &closingState{tid: syscall.Gettid(), closed: &closedOn}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tid, err := Call(a, func(s *closingState) (int, error) { return s.tid, nil }).Wait(ctxBound(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if int(closedOn.Load()) != tid {
		t.Fatalf("Close ran on thread %d, constructor on %d", closedOn.Load(), tid)
	}
}

func TestActorDead(t *testing.T) {
	a, err := NewActor(nil, func() (*int, error) { return nil, Fail(3, "no config") })
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = Call(a, func(*int) (int, error) { return 0, nil }).Wait(ctxBound(t))
	var te *Error
	if !errors.Is(err, ErrActorDead) || !errors.As(err, &te) || te.Cause == nil ||
		te.Cause.UserCode != 3 || te.Cause.Message != "no config" {
		t.Fatalf("call on a dead actor: %v", err)
	}
	s, cause := a.State()
	if s != ActorDead || !errors.Is(cause, ErrTaskFailed) {
		t.Fatalf("State = %v, %v", s, cause)
	}
	// A later call is refused at once.
	if _, err := Call(a, func(*int) (int, error) { return 0, nil }).Wait(ctxBound(t)); !errors.Is(err, ErrActorDead) {
		t.Fatalf("later call: %v", err)
	}
}

func TestActorCtorPanic(t *testing.T) {
	a, err := NewActor(nil, func() (*int, error) { panic("ctor exploded") })
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = Call(a, func(*int) (int, error) { return 0, nil }).Wait(ctxBound(t))
	if !errors.Is(err, ErrActorDead) || !errors.Is(err, ErrPanic) || !strings.Contains(err.Error(), "ctor exploded") {
		t.Fatalf("call: %v", err)
	}
}

func TestExecutorPanicsAndFireAndForget(t *testing.T) {
	e, err := NewExecutor(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, err = Submit(e, func() (int, error) { panic(errors.New("bad")) }).Wait(ctxBound(t))
	if !errors.Is(err, ErrPanic) || !strings.Contains(err.Error(), "bad") {
		t.Fatalf("Wait = %v", err)
	}
	// The executor survives a panic.
	if v, err := Submit(e, func() (string, error) { return "ok", nil }).Wait(ctxBound(t)); err != nil || v != "ok" {
		t.Fatalf("Wait = %q, %v", v, err)
	}
	if err := e.Go(func() error { return errors.New("background") }); err != nil {
		t.Fatal(err)
	}
	// Submit is ordered: once this returns, the fire-and-forget task has run.
	if _, err := Submit(e, func() (int, error) { return 0, nil }).Wait(ctxBound(t)); err != nil {
		t.Fatal(err)
	}
	errs := e.Errors()
	if len(errs) != 1 || !errors.Is(errs[0], ErrTaskFailed) || !strings.Contains(errs[0].Error(), "background") {
		t.Fatalf("Errors = %v", errs)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Submit(e, func() (int, error) { return 0, nil }).Wait(ctxBound(t)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit after Close: %v", err)
	}
}

func TestQueueFull(t *testing.T) {
	e, err := NewExecutor(&ExecutorOptions{QueueCapacity: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	unblock := make(chan struct{})
	started := make(chan struct{})
	first := Submit(e, func() (int, error) { close(started); <-unblock; return 0, nil })
	defer first.Close()
	<-started
	second := Submit(e, func() (int, error) { return 0, nil })
	defer second.Close()
	_, err = Submit(e, func() (int, error) { return 0, nil }).Wait(ctxBound(t))
	close(unblock)
	if !errors.Is(err, ErrQueueFull) {
		t.Fatalf("third submit: %v, want ErrQueueFull", err)
	}
}

// 100,000 (/ TETHER_TEST_SCALE) funcs submitted then cancelled leave no live handle.
func TestSubmittedThenCancelledLeaveNoHandle(t *testing.T) {
	base := liveHandles.Load()
	e, err := NewExecutor(&ExecutorOptions{Name: "cancelled"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	unblock := make(chan struct{})
	started := make(chan struct{})
	blocker := Submit(e, func() (int, error) { close(started); <-unblock; return 0, nil })
	<-started
	var ran atomic.Int64
	n := testScale(100_000)
	for i := 0; i < n; i++ {
		f := Submit(e, func() (int, error) { ran.Add(1); return 0, nil })
		if err := f.Cancel(); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 0 {
			if s := f.Poll(); s != Cancelled {
				t.Fatalf("state after Cancel = %v", s)
			}
		}
		f.Close()
	}
	close(unblock)
	if _, err := blocker.Wait(ctxBound(t)); err != nil {
		t.Fatal(err)
	}
	blocker.Close()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 0 {
		t.Fatalf("%d cancelled funcs ran", ran.Load())
	}
	waitHandles(t, base)
	t.Logf("%d funcs submitted and cancelled", n)
}

// Scope methods refuse use after their func returned.
func TestScopeAfterReturn(t *testing.T) {
	var kept *Scope
	r, err := Run(nil, func(s *Scope) error { kept = s; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(ctxBound(t)); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if err := kept.Go("late", func(*Scope) error { return nil }); !errors.Is(err, ErrWrongState) {
		t.Fatalf("Go after return: %v", err)
	}
}

// The C demo's third scenario: a method blocked in user code that watches
// StopRequested; Stop(StopCancel) cancels the call queued behind it, the method sees the
// stop and returns, and the stop completes.
func TestActorBlockedMethodSeesStop(t *testing.T) {
	type state struct{}
	a, err := NewActor(&ActorOptions{Name: "watcher"}, func() (*state, error) { return &state{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	started := make(chan struct{})
	blocked := CallScoped(a, "", func(sc *Scope, _ *state) (string, error) {
		close(started)
		deadline := time.Now().Add(bound)
		for !sc.StopRequested() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		return sc.ThreadName(), nil
	})
	defer blocked.Close()
	queued := Call(a, func(*state) (int, error) { return 0, nil })
	defer queued.Close()
	<-started
	if err := a.Stop(StopCancel, bound); err != nil {
		t.Fatalf("Stop = %v", err)
	}
	if _, err := queued.Wait(ctxBound(t)); !errors.Is(err, ErrCancelled) {
		t.Fatalf("queued: %v", err)
	}
	// The blocked call saw the stop and returned OK after a cancel: it ends Cancelled.
	if _, err := blocked.Wait(ctxBound(t)); !errors.Is(err, ErrCancelled) {
		t.Fatalf("blocked: %v", err)
	}
}

// A nested thread started from an actor method belongs to the call's future.
func TestActorMethodNestedThread(t *testing.T) {
	a, err := NewActor(nil, func() (*int, error) { return new(int), nil })
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	f := CallScoped(a, "", func(sc *Scope, _ *int) (int, error) {
		return 1, sc.Go("helper", func(*Scope) error { return Fail(9, "helper failed") })
	})
	defer f.Close()
	_, err = f.Wait(ctxBound(t))
	var te *Error
	if !errors.As(err, &te) || te.UserCode != 9 || te.Thread != "helper" {
		t.Fatalf("Wait = %v", err)
	}
}

// Objects never Closed are released by their finalizers (non-blocking releases): their
// funcs are dropped and their threads joined.
func TestFinalizersBackstop(t *testing.T) {
	runtime.GC()
	waitHandles(t, liveHandles.Load()) // settle
	baseHandles := liveHandles.Load()
	func() {
		e, err := NewExecutor(nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := NewActor(&ActorOptions{Executor: e}, func() (*int, error) { return new(int), nil })
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Call(a, func(p *int) (int, error) { *p++; return *p, nil }).Wait(ctxBound(t)); err != nil {
			t.Fatal(err)
		}
		r, err := Run(nil, func(*Scope) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Wait(ctxBound(t)); err != nil {
			t.Fatal(err)
		}
	}()
	deadline := time.Now().Add(bound)
	for liveHandles.Load() != baseHandles || DebugUnjoinedThreads() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after the finalizers: %d handles (want %d), %d threads unjoined",
				liveHandles.Load(), baseHandles, DebugUnjoinedThreads())
		}
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
}
