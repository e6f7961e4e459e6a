package tether

import "os"

// The library's serving threads ask Linux for half the time slice it gives them
// (src/core/time_slice.h), so that a woken executor preempts its caller on a shared CPU.
// This package hands the CPU back and forth between a queue's drain (on the library's
// thread) and a waiting goroutine by yielding (queue.go, future.go), and a thread with the
// shorter slice that yields is often picked again at once (a yield moves its deadline one
// slice on): a round trip on one CPU measured 4.5-5.3 us that way against 3.8-4.0 us
// without (go test -bench RoundTrip/tether/sameCPU, 2026-12-05). So unless the program set
// TETHER_TIME_SLICE_NS itself, importing the package sets it to 0: the library's threads
// keep the OS default. The library reads it once, when its first thread starts; child
// processes inherit it.
func init() {
	if _, set := os.LookupEnv("TETHER_TIME_SLICE_NS"); !set {
		_ = os.Setenv("TETHER_TIME_SLICE_NS", "0")
	}
}
