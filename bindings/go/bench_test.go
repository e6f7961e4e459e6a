package tether

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"unsafe"
)

// The benchmarks set tether's cost beside what a Go user would write without it: a
// goroutine pinned with runtime.LockOSThread, fed by a channel. Each runs in three
// placements of the two threads (the benchmark's goroutine and the worker's thread):
// different CPUs, the same CPU, and unpinned.
//
//	go test -run '^$' -bench . -count 5 | tee new.txt && benchstat new.txt

type benchState struct{ n int }

// placement pins the caller's goroutine (locked to its thread) and the worker's thread.
type placement struct {
	name           string
	caller, worker int // CPU, or -1: unpinned
}

func placements(b *testing.B) []placement {
	if runtime.NumCPU() < 2 {
		return []placement{{"unpinned", -1, -1}, {"sameCPU", 0, 0}}
	}
	return []placement{{"diffCPU", 0, 1}, {"sameCPU", 0, 0}, {"unpinned", -1, -1}}
}

// cpuSet is a cpu_set_t of 1024 CPUs.
type cpuSet [16]uint64

func affinity(set *cpuSet, get bool) syscall.Errno {
	nr := uintptr(syscall.SYS_SCHED_SETAFFINITY)
	if get {
		nr = syscall.SYS_SCHED_GETAFFINITY
	}
	_, _, e := syscall.RawSyscall(nr, 0, unsafe.Sizeof(*set), uintptr(unsafe.Pointer(set)))
	return e
}

// lockPinned locks the calling goroutine to its OS thread and binds that thread to cpu
// (-1: leaves it as it is); the func it returns restores the thread's mask and unlocks
// it, so no thread of the pool (the main thread may be one) stays pinned.
func lockPinned(b *testing.B, cpu int) func() {
	runtime.LockOSThread()
	var old cpuSet
	if cpu < 0 || affinity(&old, true) != 0 {
		return runtime.UnlockOSThread
	}
	var set cpuSet
	set[cpu/64] |= 1 << (uint(cpu) % 64)
	if e := affinity(&set, false); e != 0 {
		b.Errorf("sched_setaffinity(%d): %v", cpu, e) // Errorf: callers run off the test goroutine
	}
	return func() { affinity(&old, false); runtime.UnlockOSThread() }
}

// runPlaced runs body on a goroutine locked to a thread placed on p.caller, or, unpinned,
// on a goroutine as any Go code runs (not locked).
func runPlaced(b *testing.B, p placement, body func()) {
	if p.caller < 0 {
		body()
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer lockPinned(b, p.caller)()
		body()
	}()
	<-done
}

// pinned is the baseline: a goroutine locked to its OS thread, running funcs sent on ch.
type pinned struct {
	ch   chan func()
	done chan struct{}
}

func newPinned(b *testing.B, cpu int) *pinned {
	p := &pinned{ch: make(chan func(), 1024), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer lockPinned(b, cpu)()
		for f := range p.ch {
			f()
		}
	}()
	return p
}

func (p *pinned) close() { close(p.ch); <-p.done }

// benchActor makes an actor on an executor pinned to cpu.
func benchActor(b *testing.B, cpu int) (*Actor[benchState], func()) {
	o := &ExecutorOptions{Name: "bench"}
	if cpu >= 0 {
		o.CPU = &cpu
	}
	e, err := NewExecutor(o)
	if err != nil {
		b.Fatal(err)
	}
	a, err := NewActor(&ActorOptions{Executor: e}, func() (*benchState, error) { return &benchState{}, nil })
	if err != nil {
		b.Fatal(err)
	}
	return a, func() { a.Close(); e.Close() }
}

// BenchmarkRoundTrip: one actor call and its Wait, one after another, against the same
// through a channel to a LockOSThread goroutine and a reply channel.
func BenchmarkRoundTrip(b *testing.B) {
	for _, p := range placements(b) {
		b.Run("tether/"+p.name, func(b *testing.B) {
			a, end := benchActor(b, p.worker)
			defer end()
			ctx := context.Background()
			runPlaced(b, p, func() {
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					f := Call(a, func(s *benchState) (int, error) { s.n++; return s.n, nil })
					if _, err := f.Wait(ctx); err != nil {
						b.Error(err)
						return
					}
					f.Close()
				}
			})
		})
		b.Run("lockOSThread/"+p.name, func(b *testing.B) {
			w := newPinned(b, p.worker)
			defer w.close()
			s := &benchState{}
			reply := make(chan int)
			runPlaced(b, p, func() {
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					w.ch <- func() { s.n++; reply <- s.n }
					<-reply
				}
			})
		})
	}
}

// BenchmarkTell: b.N actor calls without a future, then one Call to wait until they all
// ran, against the same number of funcs sent to a LockOSThread goroutine.
func BenchmarkTell(b *testing.B) {
	for _, p := range placements(b) {
		b.Run("tether/"+p.name, func(b *testing.B) {
			a, end := benchActor(b, p.worker)
			defer end()
			runPlaced(b, p, func() {
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := Tell(a, func(s *benchState) error { s.n++; return nil }); err != nil {
						b.Error(err)
						return
					}
				}
				n, err := Call(a, func(s *benchState) (int, error) { return s.n, nil }).Wait(context.Background())
				if err != nil || n != b.N {
					b.Errorf("n = %d (%v), want %d", n, err, b.N)
				}
			})
		})
		b.Run("lockOSThread/"+p.name, func(b *testing.B) { benchPinnedFireAndForget(b, p) })
	}
}

// BenchmarkExecutorGo: b.N Executor.Go funcs, then one Submit to wait until they all ran.
func BenchmarkExecutorGo(b *testing.B) {
	for _, p := range placements(b) {
		b.Run("tether/"+p.name, func(b *testing.B) {
			o := &ExecutorOptions{Name: "bench"}
			if p.worker >= 0 {
				cpu := p.worker
				o.CPU = &cpu
			}
			e, err := NewExecutor(o)
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			n := 0
			runPlaced(b, p, func() {
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := e.Go(func() error { n++; return nil }); err != nil {
						b.Error(err)
						return
					}
				}
				got, err := Submit(e, func() (int, error) { return n, nil }).Wait(context.Background())
				if err != nil || got != b.N {
					b.Errorf("n = %d (%v), want %d", got, err, b.N)
				}
			})
		})
		b.Run("lockOSThread/"+p.name, func(b *testing.B) { benchPinnedFireAndForget(b, p) })
	}
}

func benchPinnedFireAndForget(b *testing.B, p placement) {
	w := newPinned(b, p.worker)
	s := &benchState{}
	runPlaced(b, p, func() {
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			w.ch <- func() { s.n++ }
		}
		w.close()
	})
	if s.n != b.N {
		b.Fatalf("n = %d, want %d", s.n, b.N)
	}
}
