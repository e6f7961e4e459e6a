package tether

import (
	"context"
	"runtime"
	"testing"
)

// The benchmarks set tether's cost beside what a Go user would write without it: a
// goroutine pinned with runtime.LockOSThread, fed by a channel. The difference is the
// price of the cgo crossings (a call into C to queue, a callback from the C thread into
// Go to run the func, another for the completion notice) and of the handles.

type benchState struct{ n int }

// pinned is the baseline: a goroutine locked to its OS thread, running funcs sent on ch.
type pinned struct {
	ch   chan func()
	done chan struct{}
}

func newPinned() *pinned {
	p := &pinned{ch: make(chan func(), 1024), done: make(chan struct{})}
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(p.done)
		for f := range p.ch {
			f()
		}
	}()
	return p
}

func (p *pinned) close() { close(p.ch); <-p.done }

// BenchmarkCallRoundTrip: one actor call and its Wait, one after another.
func BenchmarkCallRoundTrip(b *testing.B) {
	a, err := NewActor(nil, func() (*benchState, error) { return &benchState{}, nil })
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f := Call(a, func(s *benchState) (int, error) { s.n++; return s.n, nil })
		if _, err := f.Wait(ctx); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkCallRoundTripPinnedGoroutine: the same on a LockOSThread goroutine.
func BenchmarkCallRoundTripPinnedGoroutine(b *testing.B) {
	p := newPinned()
	defer p.close()
	s := &benchState{}
	reply := make(chan int)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.ch <- func() { s.n++; reply <- s.n }
		<-reply
	}
}

// BenchmarkFireAndForget: b.N actor calls without a future (Tell), then one Call to
// wait until they all ran.
func BenchmarkFireAndForget(b *testing.B) {
	a, err := NewActor(nil, func() (*benchState, error) { return &benchState{}, nil })
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Tell(a, func(s *benchState) error { s.n++; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	n, err := Call(a, func(s *benchState) (int, error) { return s.n, nil }).Wait(context.Background())
	if err != nil || n != b.N {
		b.Fatalf("n = %d (%v), want %d", n, err, b.N)
	}
}

// BenchmarkFireAndForgetPinnedGoroutine: the same on a LockOSThread goroutine.
func BenchmarkFireAndForgetPinnedGoroutine(b *testing.B) {
	p := newPinned()
	s := &benchState{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.ch <- func() { s.n++ }
	}
	p.close()
	if s.n != b.N {
		b.Fatalf("n = %d, want %d", s.n, b.N)
	}
}
