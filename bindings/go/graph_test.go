package tether

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// worker is the state of the seed's workers: a log only its own thread touches, and the
// thread its constructor ran on.
type worker struct {
	id  int
	tid int
	log []string
}

func newWorker(t *testing.T, id int, opts *ActorOptions) *Actor[worker] {
	t.Helper()
	if opts == nil {
		opts = &ActorOptions{Name: fmt.Sprintf("worker-%d", id)}
	}
	a, err := NewActor(opts, func() (*worker, error) {
		return &worker{id: id, tid: syscall.Gettid()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// stage is a node func of the pipeline: logs "tag:x" and returns x*mul + add.
func stage(tag string, mul, add int) func(*worker, int) (int, error) {
	return func(w *worker, x int) (int, error) {
		w.log = append(w.log, fmt.Sprintf("%s:%d", tag, x))
		return x*mul + add, nil
	}
}

// logOf reads a worker's log with an ordinary call: the entries tagged tag, in order.
func logOf(t *testing.T, a *Actor[worker], tag string) string {
	t.Helper()
	f := Call(a, func(w *worker) ([]string, error) { return append([]string(nil), w.log...), nil })
	defer f.Close()
	log, err := f.Wait(ctxBound(t))
	if err != nil {
		t.Fatalf("get log: %v", err)
	}
	var got []string
	for _, e := range log {
		if strings.HasPrefix(e, tag+":") {
			got = append(got, e)
		}
	}
	return strings.Join(got, " ")
}

// pipeline is the seed's graph: input -> w0.fwd (x2) -> w1.fwd (+3) -> w1.bwd (x5) ->
// w0.bwd (-1) -> output. gate, when set, is called by w0.fwd before its work (to block
// an execution in its first node).
type pipeline struct {
	w    [2]*Actor[worker]
	g    *Graph[int]
	c    *Compiled[int, int]
	gate atomic.Pointer[func(x int)]
	bwd1 atomic.Int64 // runs of w1.bwd
}

func pipelineExpect(x int) int { return ((x*2)+3)*5 - 1 }

func newPipeline(t *testing.T, capacity int) *pipeline {
	t.Helper()
	p := &pipeline{}
	p.w[0] = newWorker(t, 0, nil)
	p.w[1] = newWorker(t, 1, nil)
	g, err := NewGraph[int]()
	if err != nil {
		t.Fatal(err)
	}
	p.g = g
	fwd0 := stage("fwd", 2, 0)
	n0, err := AddNode(g, p.w[0], func(w *worker, x int) (int, error) {
		if gate := p.gate.Load(); gate != nil {
			(*gate)(x)
		}
		return fwd0(w, x)
	}, g.Input())
	if err != nil {
		t.Fatal(err)
	}
	n1, err := AddNode(g, p.w[1], stage("fwd", 1, 3), n0)
	if err != nil {
		t.Fatal(err)
	}
	bwd1 := stage("bwd", 5, 0)
	n2, err := AddNode(g, p.w[1], func(w *worker, x int) (int, error) { p.bwd1.Add(1); return bwd1(w, x) }, n1)
	if err != nil {
		t.Fatal(err)
	}
	n3, err := AddNode(g, p.w[0], stage("bwd", 1, -1), n2)
	if err != nil {
		t.Fatal(err)
	}
	if n0.Index() != 0 || n3.Index() != 3 {
		t.Fatalf("node indices %d, %d", n0.Index(), n3.Index())
	}
	p.c, err = Compile(g, &CompileOptions{ChannelCapacity: capacity}, n3)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// close releases everything, compiled graph first, and checks each Close.
func (p *pipeline) close(t *testing.T) {
	t.Helper()
	for _, err := range []error{p.c.Close(), p.g.Close(), p.w[0].Close(), p.w[1].Close()} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// The seed's pipeline: two workers, forward then backward passes, three batches; the
// outputs in order, each worker's log in batch order, and an ordinary call to worker 0
// answering while the graph is compiled. Every handle (node funcs, values, inputs, the
// workers' states) is gone afterwards.
func TestGraphPipelineSeed(t *testing.T) {
	base := liveHandles.Load()
	p := newPipeline(t, 0)
	var fs []*Future[int]
	for b := 0; b < 3; b++ {
		f, err := p.c.Execute(b)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	for b, f := range fs {
		v, err := f.Wait(ctxBound(t))
		if err != nil || v != pipelineExpect(b) {
			t.Fatalf("batch %d: %d, %v; want %d", b, v, err, pipelineExpect(b))
		}
		if v2, err := f.Wait(ctxBound(t)); err != nil || v2 != v { // the value stays
			t.Fatalf("second Wait: %d, %v", v2, err)
		}
		f.Close()
	}
	// The call that hung in Ray: an ordinary call to worker 0, the graph still compiled.
	// Each worker ran its forward passes, and its backward passes, in batch order.
	if got := logOf(t, p.w[0], "fwd"); got != "fwd:0 fwd:1 fwd:2" {
		t.Fatalf("worker 0 fwd log %q", got)
	}
	if got := logOf(t, p.w[0], "bwd"); got != "bwd:15 bwd:25 bwd:35" {
		t.Fatalf("worker 0 bwd log %q", got)
	}
	if got := logOf(t, p.w[1], "fwd"); got != "fwd:0 fwd:2 fwd:4" {
		t.Fatalf("worker 1 fwd log %q", got)
	}
	if got := logOf(t, p.w[1], "bwd"); got != "bwd:3 bwd:5 bwd:7" {
		t.Fatalf("worker 1 bwd log %q", got)
	}
	p.close(t)
	waitHandles(t, base)
}

// A node runs on its actor's default thread, where the constructor ran (state the
// constructor set there is there); a node on a single-thread group runs on that group's
// thread; a group of several threads is refused at compile.
func TestGraphNodeOnConstructorThread(t *testing.T) {
	base := liveHandles.Load()
	a, err := NewActor(&ActorOptions{Name: "pinned-node", Groups: []Group{{"io", 1}, {"pool", 2}}},
		func() (*worker, error) { return &worker{tid: syscall.Gettid()}, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	g, err := NewGraph[string]()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	type seen struct{ ctor, node, io int }
	n, err := AddNode(g, a, func(w *worker, in string) (seen, error) {
		if in != "go" {
			return seen{}, fmt.Errorf("input %q", in)
		}
		return seen{ctor: w.tid, node: syscall.Gettid()}, nil
	}, g.Input())
	if err != nil {
		t.Fatal(err)
	}
	io, err := AddNode(g, a.InGroup("io"), func(_ *worker, s seen) (seen, error) {
		s.io = syscall.Gettid()
		return s, nil
	}, n)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(g, nil, io)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		f, err := c.Execute("go")
		if err != nil {
			t.Fatal(err)
		}
		s, err := f.Wait(ctxBound(t))
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if s.ctor == 0 || s.node != s.ctor {
			t.Fatalf("constructor on thread %d, node on thread %d", s.ctor, s.node)
		}
		ioTid, err := CallIn(a, "io", func(*worker) (int, error) { return syscall.Gettid(), nil }).Wait(ctxBound(t))
		if err != nil || s.io != ioTid || s.io == s.ctor {
			t.Fatalf("io node on thread %d, io calls on %d (%v), default thread %d", s.io, ioTid, err, s.ctor)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// A node on a group of two threads: compile says no, and names the node.
	g2, err := NewGraph[string]()
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	pool, err := AddNode(g2, a.InGroup("pool"), func(*worker, string) (int, error) { return 0, nil }, g2.Input())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(g2, nil, pool); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("compile with a two-thread group: %v", err)
	}
	if _, err := AddNode(g2, a.InGroup("nope"), func(*worker, string) (int, error) { return 0, nil }, g2.Input()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("node on an unknown group: %v", err)
	}
	g.Close()
	g2.Close()
	a.Close()
	waitHandles(t, base)
}

// A thread hosts one compiled graph: a second graph on the same actor (or on another
// actor of the same executor) fails with ErrThreadBusy and installs nothing; once the
// first is closed it compiles. Misuse: editing while compiled, a node of another graph,
// a closed graph.
func TestGraphThreadBusy(t *testing.T) {
	base := liveHandles.Load()
	w := newWorker(t, 0, &ActorOptions{Name: "busy"})
	defer w.Close()
	identity := func(_ *worker, x int) (int, error) { return x, nil }
	oneNode := func() (*Graph[int], Node[int]) {
		g, err := NewGraph[int]()
		if err != nil {
			t.Fatal(err)
		}
		n, err := AddNode(g, w, identity, g.Input())
		if err != nil {
			t.Fatal(err)
		}
		return g, n
	}
	g0, n0 := oneNode()
	defer g0.Close()
	g1, n1 := oneNode()
	defer g1.Close()
	c0, err := Compile(g0, nil, n0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compile(g1, nil, n1)
	var te *Error
	if !errors.Is(err, ErrThreadBusy) || !errors.As(err, &te) || !strings.Contains(te.Message, "busy") {
		t.Fatalf("second graph on a busy thread: %v", err)
	}
	// The first still works, and cannot be edited or compiled again meanwhile.
	if v, err := executeWait(t, c0, 5); err != nil || v != 5 {
		t.Fatalf("first graph: %d, %v", v, err)
	}
	if _, err := AddNode(g0, w, identity, n0); !errors.Is(err, ErrWrongState) {
		t.Fatalf("edit while compiled: %v", err)
	}
	if _, err := Compile(g0, nil, n0); !errors.Is(err, ErrWrongState) {
		t.Fatalf("compile while compiled: %v", err)
	}
	// A node of another graph is refused before anything is added.
	if _, err := AddNode(g1, w, identity, n0); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("input of another graph: %v", err)
	}
	if _, err := Compile(g1, nil, n0); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("output of another graph: %v", err)
	}
	if _, err := Compile(g1, nil, g1.Input()); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("the input as output: %v", err)
	}
	if _, err := AddNode(g1, w, identity, Node[int]{}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("the zero Node as input: %v", err)
	}
	if err := c0.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c0.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	if _, err := c0.Execute(1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Execute after Close: %v", err)
	}
	c1, err := Compile(g1, nil, n1)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := executeWait(t, c1, 6); err != nil || v != 6 {
		t.Fatalf("second graph: %d, %v", v, err)
	}
	c1.Close()

	// Two actors on one executor: one OS thread, so one graph between them.
	e, err := NewExecutor(&ExecutorOptions{Name: "shared"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	a1 := newWorker(t, 1, &ActorOptions{Name: "on-shared-1", Executor: e})
	defer a1.Close()
	a2 := newWorker(t, 2, &ActorOptions{Name: "on-shared-2", Executor: e})
	defer a2.Close()
	g2, err := NewGraph[int]()
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	g3, err := NewGraph[int]()
	if err != nil {
		t.Fatal(err)
	}
	defer g3.Close()
	m2, err := AddNode(g2, a1, identity, g2.Input())
	if err != nil {
		t.Fatal(err)
	}
	m3, err := AddNode(g3, a2, identity, g3.Input())
	if err != nil {
		t.Fatal(err)
	}
	c2, err := Compile(g2, nil, m2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(g3, nil, m3); !errors.Is(err, ErrThreadBusy) || !strings.Contains(err.Error(), "shared") {
		t.Fatalf("a graph on another actor of a busy executor: %v", err)
	}
	c2.Close()
	c3, err := Compile(g3, nil, m3)
	if err != nil {
		t.Fatal(err)
	}
	c3.Close()

	// After Close: the graph refuses edits and compiles.
	if err := g1.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g1.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	if _, err := Compile(g1, nil, n1); !errors.Is(err, ErrClosed) {
		t.Fatalf("compile after Close: %v", err)
	}
	if _, err := AddNode(g1, w, identity, n1); !errors.Is(err, ErrClosed) {
		t.Fatalf("AddNode after Close: %v", err)
	}
	for _, c := range []interface{ Close() error }{g0, g2, g3, a1, a2, e, w} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	waitHandles(t, base)
}

func executeWait[In, Out any](t *testing.T, c *Compiled[In, Out], in In) (Out, error) {
	t.Helper()
	f, err := c.Execute(in)
	if err != nil {
		var zero Out
		return zero, err
	}
	defer f.Close()
	return f.Wait(ctxBound(t))
}

// Fan-out and fan-in: a node gets its inputs in the order given, typed (AddNode2) or
// as []any (AddNodeN); several outputs come back in order (CompileN).
func TestGraphFanIn(t *testing.T) {
	base := liveHandles.Load()
	w0 := newWorker(t, 0, nil)
	defer w0.Close()
	w1 := newWorker(t, 1, nil)
	defer w1.Close()
	g, err := NewGraph[int]()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	plus, err := AddNode(g, w0, func(_ *worker, x int) (int, error) { return x + 1, nil }, g.Input())
	if err != nil {
		t.Fatal(err)
	}
	times, err := AddNode(g, w1, func(_ *worker, x int) (string, error) { return fmt.Sprint(x * 10), nil }, g.Input())
	if err != nil {
		t.Fatal(err)
	}
	pair, err := AddNode2(g, w0, func(_ *worker, a int, b string) (string, error) {
		return fmt.Sprintf("%d,%s", a, b), nil
	}, plus, times)
	if err != nil {
		t.Fatal(err)
	}
	three, err := AddNodeN(g, w1, func(_ *Scope, _ *worker, in []any) ([]string, error) {
		out := make([]string, len(in))
		for i, v := range in {
			out[i] = fmt.Sprintf("%T=%v", v, v)
		}
		return out, nil
	}, times, pair, g.Input(), plus)
	if err != nil {
		t.Fatal(err)
	}
	c, err := CompileN(g, nil, three, pair, plus)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for x := 0; x < 3; x++ {
		outs, err := executeWait(t, c, x)
		if err != nil {
			t.Fatal(err)
		}
		want3 := fmt.Sprintf("string=%d string=%d,%d int=%d int=%d", x*10, x+1, x*10, x, x+1)
		if len(outs) != 3 || strings.Join(outs[0].([]string), " ") != want3 ||
			outs[1] != fmt.Sprintf("%d,%d", x+1, x*10) || outs[2] != x+1 {
			t.Fatalf("outputs %#v; want [%s] %d,%d %d", outs, want3, x+1, x*10, x+1)
		}
	}
	c.Close()
	// The same graph compiled again, with one typed output.
	c1, err := Compile(g, nil, pair)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := executeWait(t, c1, 4); err != nil || v != "5,40" {
		t.Fatalf("pair: %q, %v", v, err)
	}
	c1.Close()
	g.Close()
	w0.Close()
	w1.Close()
	waitHandles(t, base)
}

// A node that fails, or panics, fails only its own execution: its later nodes do not
// run, the executions before and after it succeed, and the error says what happened.
func TestGraphFailingNode(t *testing.T) {
	base := liveHandles.Load()
	w := newWorker(t, 0, nil)
	defer w.Close()
	g, err := NewGraph[int]()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	check, err := AddNode(g, w, func(_ *worker, x int) (*int, error) {
		switch x {
		case 1:
			return nil, errors.New("bad input 1")
		case 2:
			panic(fmt.Sprintf("node exploded on %d", x))
		case 3:
			return nil, Fail(7, "code seven")
		}
		return &x, nil
	}, g.Input())
	if err != nil {
		t.Fatal(err)
	}
	var after atomic.Int64
	last, err := AddNode(g, w, func(_ *worker, p *int) (int, error) { after.Add(1); return *p * 100, nil }, check)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(g, nil, last)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var fs []*Future[int]
	for x := 0; x < 5; x++ {
		f, err := c.Execute(x)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fs = append(fs, f)
	}
	for x, f := range fs {
		v, err := f.Wait(ctxBound(t))
		var te *Error
		switch x {
		case 0, 4:
			if err != nil || v != x*100 {
				t.Fatalf("execution %d: %d, %v", x, v, err)
			}
		case 1:
			if !errors.Is(err, ErrTaskFailed) || !errors.As(err, &te) || te.Message != "bad input 1" {
				t.Fatalf("failing node: %v", err)
			}
		case 2:
			if !errors.Is(err, ErrPanic) || !strings.Contains(err.Error(), "node exploded on 2") {
				t.Fatalf("panicking node: %v", err)
			}
		case 3:
			if !errors.As(err, &te) || te.Code != CodeTaskFailed || te.UserCode != 7 || te.Message != "code seven" {
				t.Fatalf("Fail(7): %v", err)
			}
		}
		if x > 0 && x < 4 && f.Poll() != Failed {
			t.Fatalf("execution %d: state %v", x, f.Poll())
		}
	}
	if n := after.Load(); n != 2 {
		t.Fatalf("the node after the failing one ran %d times, want 2", n)
	}
	c.Close()
	g.Close()
	w.Close()
	waitHandles(t, base)
}

// Close while a node is blocked returns at once; the executions not yet ended are
// cancelled (ErrCancelled), the blocked node sees the stop when it returns, nothing after
// it runs, its thread is busy until it returns and free after, and every handle — node
// funcs, inputs, the values made before the teardown — is dropped.
func TestGraphCloseWhileNodeBlocked(t *testing.T) {
	base := liveHandles.Load()
	w0 := newWorker(t, 0, nil)
	w1 := newWorker(t, 1, nil)
	g, err := NewGraph[int]()
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	unblock := make(chan struct{})
	sawStop := make(chan bool, 1)
	first, err := AddNode(g, w0, func(_ *worker, x int) ([]int, error) { return []int{x}, nil }, g.Input())
	if err != nil {
		t.Fatal(err)
	}
	blocked, err := AddNodeN(g, w1, func(sc *Scope, _ *worker, in []any) ([]int, error) {
		v := in[0].([]int)
		if v[0] == 0 {
			close(started)
			<-unblock
			sawStop <- sc.StopRequested()
		}
		return append(v, 1), nil
	}, first)
	if err != nil {
		t.Fatal(err)
	}
	var lastRuns atomic.Int64
	last, err := AddNode(g, w0, func(_ *worker, v []int) (int, error) { lastRuns.Add(1); return len(v), nil }, blocked)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(g, nil, last)
	if err != nil {
		t.Fatal(err)
	}
	var fs []*Future[int]
	for x := 0; x < 3; x++ {
		f, err := c.Execute(x)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	select {
	case <-started:
	case <-time.After(bound):
		t.Fatal("the node never started")
	}
	begin := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Fatalf("Close took %v with a node blocked", d)
	}
	for x, f := range fs {
		if _, err := f.Wait(ctxBound(t)); !errors.Is(err, ErrCancelled) {
			t.Fatalf("execution %d: %v, want ErrCancelled", x, err)
		}
		if s := f.Poll(); s != Cancelled {
			t.Fatalf("execution %d: state %v", x, s)
		}
	}
	// Worker 1's thread still runs the node: busy for another graph.
	other, err := NewGraph[int]()
	if err != nil {
		t.Fatal(err)
	}
	on1, err := AddNode(other, w1, func(_ *worker, x int) (int, error) { return -x, nil }, other.Input())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(other, nil, on1); !errors.Is(err, ErrThreadBusy) {
		t.Fatalf("compile on the blocked thread: %v", err)
	}
	close(unblock)
	if !<-sawStop {
		t.Fatal("the blocked node did not see the stop")
	}
	// An ordinary call to worker 1 runs after the node has returned, on that thread:
	// once it answered, the thread is free.
	if _, err := Call(w1, func(*worker) (int, error) { return 0, nil }).Wait(ctxBound(t)); err != nil {
		t.Fatal(err)
	}
	c2, err := Compile(other, nil, on1)
	if err != nil {
		t.Fatalf("compile once the node returned: %v", err)
	}
	if v, err := executeWait(t, c2, 3); err != nil || v != -3 {
		t.Fatalf("the other graph: %d, %v", v, err)
	}
	if n := lastRuns.Load(); n != 0 {
		t.Fatalf("a node after the teardown ran %d times", n)
	}
	for _, cl := range []interface{ Close() error }{c2, other, g, w0, w1} {
		if err := cl.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range fs {
		f.Close()
	}
	waitHandles(t, base)
}

// Future.Cancel on an execution: Cancelled at once (its node still blocked), the nodes
// not yet started never run, and the next execution goes on. An execution whose future
// is closed before it ends leaves its outputs to the library, which drops them.
func TestGraphExecutionCancelAndAbandon(t *testing.T) {
	base := liveHandles.Load()
	p := newPipeline(t, 0)
	started := make(chan struct{})
	unblock := make(chan struct{})
	gate := func(x int) {
		if x == 1 {
			close(started)
			<-unblock
		}
	}
	p.gate.Store(&gate)
	f0, err := p.c.Execute(1)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if err := f0.Cancel(); err != nil {
		t.Fatal(err)
	}
	if s := f0.Poll(); s != Cancelled {
		t.Fatalf("after Cancel: %v", s)
	}
	f1, err := p.c.Execute(2)
	if err != nil {
		t.Fatal(err)
	}
	abandoned, err := p.c.Execute(3)
	if err != nil {
		t.Fatal(err)
	}
	abandoned.Close() // before it ends: its output is never taken
	close(unblock)
	if v, err := f1.Wait(ctxBound(t)); err != nil || v != pipelineExpect(2) {
		t.Fatalf("the execution after the cancelled one: %d, %v", v, err)
	}
	if _, err := f0.Wait(ctxBound(t)); !errors.Is(err, ErrCancelled) {
		t.Fatalf("cancelled execution: %v", err)
	}
	// Executions complete in order: once f2 is done, the abandoned one has ended too.
	f2, err := p.c.Execute(4)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := f2.Wait(ctxBound(t)); err != nil || v != pipelineExpect(4) {
		t.Fatalf("the execution after the abandoned one: %d, %v", v, err)
	}
	// f1's, the abandoned one's and f2's later nodes ran; f0's did not.
	if got := logOf(t, p.w[0], "bwd"); got != "bwd:35 bwd:45 bwd:55" {
		t.Fatalf("worker 0 bwd log %q", got)
	}
	if n := p.bwd1.Load(); n != 3 {
		t.Fatalf("bwd1 ran %d times, want 3", n)
	}
	f0.Close()
	f1.Close()
	f2.Close()
	p.close(t)
	waitHandles(t, base)
}

// 10,000 executions (/ TETHER_TEST_SCALE) through a pipeline of capacity 4: with the
// first blocked in its first node exactly 4 get in, then Execute says ErrQueueFull and
// ExecuteTimeout times out; once it is released, a producer meets backpressure
// (ErrQueueFull, then ExecuteTimeout waits for room). Every output is right, and the
// executions complete in the order they started.
func TestGraphManyExecutionsBackpressure(t *testing.T) {
	base := liveHandles.Load()
	const capacity = 4
	p := newPipeline(t, capacity)
	started := make(chan struct{})
	unblock := make(chan struct{})
	gate := func(x int) {
		if x == 0 {
			close(started)
			<-unblock
		}
	}
	p.gate.Store(&gate)
	n := testScale(10_000)
	if n < 2*capacity {
		n = 2 * capacity
	}
	fs := make([]*Future[int], 0, n)
	for i := 0; i < capacity; i++ {
		f, err := p.c.Execute(i)
		if err != nil {
			t.Fatalf("execution %d of %d: %v", i, capacity, err)
		}
		fs = append(fs, f)
	}
	<-started
	if _, err := p.c.Execute(-1); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("execute past the capacity: %v, want ErrQueueFull", err)
	}
	if _, err := p.c.ExecuteTimeout(-1, 20*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("ExecuteTimeout past the capacity: %v, want ErrTimeout", err)
	}
	// From a thread of the graph, waiting for room would wait on itself.
	deadlock := Call(p.w[1], func(*worker) (error, error) {
		f, err := p.c.ExecuteTimeout(-2, 2*time.Second)
		if f != nil {
			f.Close()
		}
		return err, nil
	})
	if err, _ := deadlock.Wait(ctxBound(t)); !errors.Is(err, ErrDeadlock) {
		t.Fatalf("ExecuteTimeout on a thread of the graph: %v, want ErrDeadlock", err)
	}
	deadlock.Close()
	close(unblock)
	full := 0
	for i := capacity; i < n; i++ {
		f, err := p.c.Execute(i)
		if errors.Is(err, ErrQueueFull) {
			full++
			f, err = p.c.ExecuteTimeout(i, bound)
		}
		if err != nil {
			t.Fatalf("execution %d: %v", i, err)
		}
		fs = append(fs, f)
	}
	// The last to start is done only once every earlier one is.
	if _, err := fs[n-1].Wait(ctxBound(t)); err != nil {
		t.Fatal(err)
	}
	for i, f := range fs {
		select {
		case <-f.Done():
		default:
			t.Fatalf("execution %d not done when the last one is", i)
		}
		v, err := f.Wait(ctxBound(t))
		if err != nil || v != pipelineExpect(i) {
			t.Fatalf("execution %d: %d, %v; want %d", i, v, err, pipelineExpect(i))
		}
		f.Close()
	}
	t.Logf("%d executions, %d ErrQueueFull answers", n, full)
	p.close(t)
	waitHandles(t, base)
}

// Stopping an actor of the graph fails the executions that still need it with
// ErrShutdown, and later executes are refused with it.
func TestGraphActorStopped(t *testing.T) {
	base := liveHandles.Load()
	p := newPipeline(t, 0)
	if v, err := executeWait(t, p.c, 1); err != nil || v != pipelineExpect(1) {
		t.Fatalf("before the stop: %d, %v", v, err)
	}
	if err := p.w[1].Stop(StopCancel, bound); err != nil {
		t.Fatal(err)
	}
	if _, err := executeWait(t, p.c, 2); !errors.Is(err, ErrShutdown) {
		t.Fatalf("after the stop: %v, want ErrShutdown", err)
	}
	p.close(t)
	waitHandles(t, base)
}

// Graphs and compiled graphs never closed are released by their finalizers: node funcs,
// values and actor states are all dropped, and the threads joined.
func TestGraphFinalizersBackstop(t *testing.T) {
	runtime.GC()
	waitHandles(t, liveHandles.Load())
	base := liveHandles.Load()
	func() {
		w := newWorker(t, 0, nil)
		g, err := NewGraph[int]()
		if err != nil {
			t.Fatal(err)
		}
		n, err := AddNode(g, w, func(_ *worker, x int) (int, error) { return x + 1, nil }, g.Input())
		if err != nil {
			t.Fatal(err)
		}
		c, err := Compile(g, nil, n)
		if err != nil {
			t.Fatal(err)
		}
		f, err := c.Execute(1)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := f.Wait(ctxBound(t)); err != nil || v != 2 {
			t.Fatalf("%d, %v", v, err)
		}
	}()
	deadline := time.Now().Add(bound)
	for liveHandles.Load() != base || DebugUnjoinedThreads() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after the finalizers: %d handles (want %d), %d threads unjoined",
				liveHandles.Load(), base, DebugUnjoinedThreads())
		}
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
}

// Wait(ctx) on an execution returns ctx.Err() at once while a node is blocked; the
// execution goes on and its output arrives later.
func TestGraphWaitContext(t *testing.T) {
	base := liveHandles.Load()
	p := newPipeline(t, 0)
	unblock := make(chan struct{})
	gate := func(int) { <-unblock }
	p.gate.Store(&gate)
	f, err := p.c.Execute(4)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := f.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait = %v, want DeadlineExceeded", err)
	}
	close(unblock)
	if v, err := f.Wait(ctxBound(t)); err != nil || v != pipelineExpect(4) {
		t.Fatalf("Wait = %d, %v", v, err)
	}
	f.Close()
	p.close(t)
	waitHandles(t, base)
}
