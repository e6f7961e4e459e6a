package tether

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// TestMain fails the run when a cgo.Handle made by this package is still live after
// every test (a func the library never dropped, or dropped twice), or when a library
// thread is still unjoined. Both are awaited with a bound: non-blocking releases (the
// finalizers) finish a little later.
func TestMain(m *testing.M) {
	code := m.Run()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC() // run the finalizers of objects a test (or example) did not Close
		if liveHandles.Load() == 0 && DebugUnjoinedThreads() == 0 {
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "FAIL: after the tests: %d cgo.Handle(s) live, %d thread(s) unjoined\n",
				liveHandles.Load(), DebugUnjoinedThreads())
			code = 1
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := badDrops.Load(); n != 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d invalid cgo.Handle drop(s)\n", n)
		code = 1
	}
	os.Exit(code)
}

// testScale divides stress sizes by env TETHER_TEST_SCALE, the project's convention
// (20 under valgrind, 10 under TSan, 4 under ASan; default 1).
func testScale(n int) int {
	d, err := strconv.ParseFloat(os.Getenv("TETHER_TEST_SCALE"), 64)
	if err != nil || d < 1 {
		return n
	}
	if m := int(float64(n) / d); m > 0 {
		return m
	}
	return 1
}

// waitHandles waits (bounded) until the live handle count is back to want.
func waitHandles(t *testing.T, want int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for liveHandles.Load() != want {
		if time.Now().After(deadline) {
			t.Fatalf("live cgo.Handles: %d, want %d", liveHandles.Load(), want)
		}
		time.Sleep(time.Millisecond)
	}
}
