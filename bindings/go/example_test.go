package tether_test

import (
	"context"
	"errors"
	"fmt"
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
