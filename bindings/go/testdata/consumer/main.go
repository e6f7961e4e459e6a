// The consumer that scripts/test.d/40-go.sh builds as a fresh module outside the package
// (a `replace` to bindings/go, no CGO_* or PKG_CONFIG_PATH set): it proves `go run` works
// with nothing installed beforehand.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"tether.dev/tether"
)

type counter struct{ n int }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

func run() error {
	r, err := tether.Run(&tether.RunOptions{Name: "consumer"}, func(s *tether.Scope) error {
		return s.Go("worker", func(*tether.Scope) error { return errors.New("disk full") })
	})
	if err != nil {
		return err
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Wait(ctx); err == nil || !errors.Is(err, tether.ErrTaskFailed) {
		return fmt.Errorf("runner error = %v, want the worker's ErrTaskFailed", err)
	}

	a, err := tether.NewActor(nil, func() (*counter, error) { return &counter{}, nil })
	if err != nil {
		return err
	}
	defer a.Close()
	n, err := tether.Call(a, func(c *counter) (int, error) { c.n++; return c.n, nil }).Wait(ctx)
	if err != nil || n != 1 {
		return fmt.Errorf("call = %d, %v; want 1, nil", n, err)
	}
	fmt.Printf("tether %s: runner error caught, actor call returned %d\n", tether.Version(), n)
	return nil
}
