package tether

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// sliceOf: thread tid's time slice in ns, from /proc's scheduler statistics (se.slice),
// and false where the kernel shows none.
func sliceOf(t *testing.T, tid int) (int64, bool) {
	t.Helper()
	data, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/sched")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "se.slice" {
			n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// Importing the package sets TETHER_TIME_SLICE_NS to 0 when the program had not set it
// (time_slice.go), so the library's threads keep the OS's time slice: an executor's thread
// has the same slice as a thread of the program.
func TestLibraryThreadsKeepTheOSTimeSlice(t *testing.T) {
	switch v, set := os.LookupEnv("TETHER_TIME_SLICE_NS"); {
	case !set:
		t.Fatal("TETHER_TIME_SLICE_NS is unset: the package's init should have set it to 0")
	case v != "0":
		t.Skipf("TETHER_TIME_SLICE_NS=%q: the program's own setting, which the package keeps", v)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	own, ok := sliceOf(t, syscall.Gettid())
	if !ok {
		t.Skip("this kernel shows no time slices in /proc")
	}
	e, err := NewExecutor(&ExecutorOptions{Name: "slice"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := Submit(e, func() (int, error) { return 0, nil }).Wait(ctxBound(t)); err != nil {
		t.Fatal(err) // the thread has started serving: it asked for its slice, if at all
	}
	st, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := sliceOf(t, st.OSThreadID); !ok || got != own {
		t.Fatalf("the executor thread's slice is %d (%v), want the OS's %d", got, ok, own)
	}
}
