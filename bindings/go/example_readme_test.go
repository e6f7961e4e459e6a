package tether_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"tether.dev/tether"
)

// The README's Go snippets, each verbatim in one of the funcs below (indented one tab);
// TestReadmeSnippetsCompiled fails when one is not.

// Counter is the README's actor state.
type Counter struct{ n int }

func readmeRunner(ctx context.Context) error {
	r, err := tether.Run(nil, func(s *tether.Scope) error {
		return s.Go("upload-1", func(*tether.Scope) error { return tether.Fail(7, "disk full") })
	})
	if err != nil {
		return err
	}
	defer r.Close()
	err = r.Wait(ctx) // the first error of any thread of the scope
	var te *tether.Error
	if errors.As(err, &te) {
		fmt.Println(te.Thread, te.UserCode, errors.Is(err, tether.ErrTaskFailed))
	}
	return nil
}

func readmeActor(ctx context.Context) error {
	a, err := tether.NewActor(nil, func() (*Counter, error) { return &Counter{}, nil })
	if err != nil {
		return err
	}
	defer a.Close()
	if err := tether.Tell(a, func(c *Counter) error { c.n++; return nil }); err != nil { // fire and forget
		return err
	}
	f := tether.Call(a, func(c *Counter) (int, error) { c.n++; return c.n, nil })
	defer f.Close()
	n, err := f.Wait(ctx) // 2: the calls ran in order, on the actor's one thread
	fmt.Println(n, err)

	_, err = tether.Call(a, func(c *Counter) (int, error) {
		return 0, fmt.Errorf("save: %w", os.ErrPermission)
	}).Wait(ctx)
	fmt.Println(errors.Is(err, os.ErrPermission)) // true: the *Error wraps what the method returned
	a.Close()
	_, err = tether.Call(a, func(c *Counter) (int, error) { return c.n, nil }).Wait(ctx)
	fmt.Println(errors.Is(err, tether.ErrShutdown), errors.Is(err, tether.ErrClosed)) // gone: stopped or closed
	return nil
}

func readmeScope(ctx context.Context) error {
	r, err := tether.Run(nil, func(s *tether.Scope) error {
		select {
		case <-s.Context().Done(): // Cancel, Close, or a sibling's failure
			return nil
		case <-time.After(time.Minute):
			return fmt.Errorf("step: %w", context.DeadlineExceeded)
		}
	})
	if err != nil {
		return err
	}
	defer r.Close()
	r.Cancel()
	fmt.Println(errors.Is(r.Wait(ctx), tether.ErrCancelled))
	return nil
}

// Worker is the README graph's actor state.
type Worker struct{ k int }

func (w *Worker) forward(x int) (int, error)  { return x + w.k, nil }
func (w *Worker) backward(y int) (int, error) { return y * 2, nil }

func readmeGraph(ctx context.Context, w0, w1 *tether.Actor[Worker]) error {
	g, err := tether.NewGraph[int]()
	if err != nil {
		return err
	}
	defer g.Close()
	fwd0, _ := tether.AddNode(g, w0, func(w *Worker, x int) (int, error) { return w.forward(x) }, g.Input())
	fwd1, _ := tether.AddNode(g, w1, func(w *Worker, x int) (int, error) { return w.forward(x) }, fwd0)
	bwd1, _ := tether.AddNode(g, w1, func(w *Worker, y int) (int, error) { return w.backward(y) }, fwd1)
	bwd0, _ := tether.AddNode(g, w0, func(w *Worker, y int) (int, error) { return w.backward(y) }, bwd1)
	c, err := tether.Compile(g, &tether.CompileOptions{ChannelCapacity: 8}, bwd0) // *Compiled[int, int]
	if err != nil {
		return err
	}
	defer c.Close()
	f, err := c.Execute(3) // ErrQueueFull with 8 in flight; ExecuteCtx waits for room
	if err != nil {
		return err
	}
	defer f.Close()
	out, err := f.Wait(ctx) // the output, or the first failing node's error
	fmt.Println(out, err)
	return nil
}

func Example_readme() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(readmeRunner(ctx))
	must(readmeActor(ctx))
	must(readmeScope(ctx))
	worker := func() *tether.Actor[Worker] {
		a, err := tether.NewActor(nil, func() (*Worker, error) { return &Worker{k: 1}, nil })
		must(err)
		return a
	}
	w0, w1 := worker(), worker()
	defer w0.Close()
	defer w1.Close()
	must(readmeGraph(ctx, w0, w1))
	// Output:
	// upload-1 7 true
	// 2 <nil>
	// true
	// true true
	// true
	// 20 <nil>
}

// TestReadmeSnippetsCompiled: every ```go block of README.md appears, line for line and
// indented one tab, in this file, so each is compiled (and run by Example_readme).
func TestReadmeSnippetsCompiled(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile("example_readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(string(readme)))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && line == "```go":
			in, cur = true, nil
		case in && line == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, "\n"))
		case in:
			if line != "" {
				line = "\t" + line
			}
			cur = append(cur, line)
		}
	}
	if len(blocks) == 0 {
		t.Fatal("no ```go block in README.md")
	}
	for i, b := range blocks {
		if !strings.Contains(string(self), b) {
			t.Errorf("README.md go block %d is not in example_readme_test.go:\n%s", i+1, b)
		}
	}
}
