package tether_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"tether.dev/tether"
)

// A trainer uploads a checkpoint on a nested thread and keeps training. The upload fails
// while the trainer still runs: the controller sees the failure at once, with where it
// happened and its application code; the trainer is asked to stop between two steps; and
// Close joins every thread. (The first scenario of the C demo, examples/demo.c.)
func ExampleRun() {
	stoppedAt := make(chan int, 1)
	r, err := tether.Run(&tether.RunOptions{Name: "trainer"}, func(s *tether.Scope) error {
		for step := 1; step <= 20; step++ {
			if s.StopRequested() {
				stoppedAt <- step
				return nil // the scope already failed: returning nil does not hide it
			}
			if step == 2 {
				err := s.Go("upload-1", func(*tether.Scope) error {
					time.Sleep(20 * time.Millisecond)
					return tether.Fail(7, "checkpoint upload failed: disk full")
				})
				if err != nil {
					return err
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		stoppedAt <- 20
		return nil
	})
	if err != nil {
		panic(err)
	}
	defer r.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = r.Wait(ctx) // returns at the first error, while the trainer is still training
	var te *tether.Error
	if errors.As(err, &te) {
		fmt.Printf("failed on %q: %s (user code %d)\n", te.Thread, te.Message, te.UserCode)
	}
	fmt.Println("is ErrTaskFailed:", errors.Is(err, tether.ErrTaskFailed))
	fmt.Println("trainer stopped early:", <-stoppedAt < 20)
	r.Close() // joins the trainer and upload-1
	// Output:
	// failed on "upload-1": checkpoint upload failed: disk full (user code 7)
	// is ErrTaskFailed: true
	// trainer stopped early: true
}

// An actor keeps its thread: the constructor, every method and the state's Close all run
// on one OS thread, so what the constructor set up there (thread-local state of a C
// library, say) is still there in every method. (The second scenario of the C demo.)
func ExampleNewActor() {
	type counter struct {
		tid int // the thread the constructor ran on
		n   int
	}
	a, err := tether.NewActor(&tether.ActorOptions{Name: "counter"}, func() (*counter, error) {
		return &counter{tid: syscall.Gettid(), n: 42}, nil
	})
	if err != nil {
		panic(err)
	}
	defer a.Close()

	f := tether.Call(a, func(c *counter) (int, error) {
		if syscall.Gettid() != c.tid {
			return 0, errors.New("moved to another thread")
		}
		c.n++
		return c.n, nil
	})
	defer f.Close()
	v, err := f.Wait(context.Background())
	fmt.Println(v, err)
	// Output: 43 <nil>
}

// A constructor's failure makes the actor dead; its calls fail with ErrActorDead, whose
// cause is the constructor's error.
func ExampleCall_deadActor() {
	a, err := tether.NewActor(nil, func() (*int, error) {
		return nil, tether.Fail(3, "no config file")
	})
	if err != nil {
		panic(err)
	}
	defer a.Close()
	_, err = tether.Call(a, func(*int) (int, error) { return 0, nil }).Wait(context.Background())
	var te *tether.Error
	errors.As(err, &te)
	fmt.Println(errors.Is(err, tether.ErrActorDead), te.Cause.Message)
	// Output: true no config file
}

// The seed's pipeline compiled onto two workers' own threads: a forward pass on worker
// 0 then worker 1, a backward pass on worker 1 then worker 0. Three batches go in
// pipelined and come out in order; each worker's log (touched only on its thread) is
// read with an ordinary call while the graph is still compiled.
func ExampleCompile() {
	type worker struct{ log []string }
	newWorker := func(name string) *tether.Actor[worker] {
		a, err := tether.NewActor(&tether.ActorOptions{Name: name}, func() (*worker, error) {
			return &worker{}, nil
		})
		if err != nil {
			panic(err)
		}
		return a
	}
	w0, w1 := newWorker("worker-0"), newWorker("worker-1")
	defer w0.Close()
	defer w1.Close()
	pass := func(tag string, f func(int) int) func(*worker, int) (int, error) {
		return func(w *worker, x int) (int, error) {
			w.log = append(w.log, fmt.Sprintf("%s(%d)", tag, x))
			return f(x), nil
		}
	}

	g, err := tether.NewGraph[int]()
	if err != nil {
		panic(err)
	}
	defer g.Close()
	fwd0, _ := tether.AddNode(g, w0, pass("fwd", func(x int) int { return x + 1 }), g.Input())
	fwd1, _ := tether.AddNode(g, w1, pass("fwd", func(x int) int { return x + 1 }), fwd0)
	bwd1, _ := tether.AddNode(g, w1, pass("bwd", func(x int) int { return x * 2 }), fwd1)
	bwd0, err := tether.AddNode(g, w0, pass("bwd", func(x int) int { return x * 2 }), bwd1)
	if err != nil {
		panic(err)
	}
	c, err := tether.Compile(g, &tether.CompileOptions{ChannelCapacity: 8}, bwd0)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var runs []*tether.Future[int]
	for _, batch := range []int{10, 20, 30} {
		f, err := c.Execute(batch)
		if err != nil {
			panic(err)
		}
		defer f.Close()
		runs = append(runs, f)
	}
	for _, f := range runs {
		out, err := f.Wait(ctx)
		fmt.Println(out, err) // (x + 2) * 4
	}
	// Each pass ran in batch order (how forward and backward interleave depends on the
	// pipelining).
	passes, err := tether.Call(w0, func(w *worker) ([2][]string, error) {
		var p [2][]string
		for _, e := range w.log {
			if strings.HasPrefix(e, "fwd") {
				p[0] = append(p[0], e)
			} else {
				p[1] = append(p[1], e)
			}
		}
		return p, nil
	}).Wait(ctx)
	fmt.Println(passes[0], passes[1], err)
	// Output:
	// 48 <nil>
	// 88 <nil>
	// 128 <nil>
	// [fwd(10) fwd(20) fwd(30)] [bwd(24) bwd(44) bwd(64)] <nil>
}
