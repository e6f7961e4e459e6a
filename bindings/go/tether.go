// Package tether runs Go code on OS threads that tether pins and watches: the errors of
// background threads are never lost, and an actor's state never moves to another thread.
//
// It binds the C API of the tether library (include/tether/tether.h) with cgo only, and
// compiles the library into the package (tether_core.cpp, written by
// scripts/amalgamate_go.sh), so `go build` needs nothing installed but a C++20 compiler.
// The build tag tether_system links the installed library instead, found by pkg-config.
//
// # Threads and goroutines
//
// Every func handed to this package runs as a cgo callback on a thread the library
// created: the goroutine that runs it stays on that OS thread until the func returns.
// Thus an actor's constructor and every default-group method see the same
// syscall.Gettid(), and thread-local state of C libraries they call persists between
// calls. Goroutines the func starts run wherever the Go scheduler puts them.
//
// # Funcs, handles and panics
//
// Calls queued on an actor's default thread or an executor wait in a Go-side queue that
// one C call on that thread drains (queue.go). Every other func travels through the C API
// as a runtime/cgo.Handle; the library drops it exactly once, when the work has run or
// instead of running it (cancelled, rejected). A panic in a func is recovered and fails
// its task with ErrPanic, the panic value in the message. runtime.Goexit (t.Fatal) in a
// func tether runs ends the process: Go allows it only on threads Go made.
//
// # Compiled graphs
//
// A Graph[In] describes a pipeline of actor methods (AddNode, AddNode2, AddNodeN), each
// on its actor's own thread; Compile installs it there, and Compiled.Execute feeds it one
// input at a time, returning a *Future of the outputs. Every value of a graph travels as a
// cgo.Handle that the library owns and drops once (see graph.go and the README).
//
// # Closing
//
// Runner, Executor, Actor, Future, Graph and Compiled have an explicit, idempotent Close. A finalizer
// only backs it up (with the library's non-blocking release), so forgetting Close leaks
// nothing for long, but Close says when the threads are joined.
package tether

/*
#include <stdlib.h>
#include <tether/tether.h>
#include "shim.h"

#if TETHER_VERSION_MAJOR != 0 || TETHER_VERSION_MINOR < 1
#error "the tether Go binding needs the tether 0.x C API from 0.1 on (tether.h TETHER_VERSION_MAJOR/MINOR)"
#endif
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"
)

// versionErr is non-nil when the library loaded at run time does not match the header
// this package was compiled against (possible only with the tether_system build tag: the
// default build compiles the library in). Every constructor (Run, NewExecutor, NewActor,
// NewGraph) then returns it instead of calling into a library of another ABI.
var versionErr = checkVersion(uint32(C.tether_version()), uint32(C.TETHER_VERSION),
	C.GoString(C.tether_version_string()))

// checkVersion compares the library's tether_version() with the header's TETHER_VERSION:
// the same major and a minor at least the header's (additions only within a major).
func checkVersion(lib, header uint32, libString string) error {
	if lib>>16 == header>>16 && (lib>>8)&0xff >= (header>>8)&0xff {
		return nil
	}
	return &Error{Code: CodeWrongState, Message: fmt.Sprintf(
		"the loaded tether library is %s but this package was built against the %d.%d.%d header: "+
			"rebuild with a matching library (or without -tags tether_system)",
		libString, header>>16, (header>>8)&0xff, header&0xff)}
}

// Version is the loaded library's version, "MAJOR.MINOR.PATCH".
func Version() string { return C.GoString(C.tether_version_string()) }

// State is the state of a runner, a future or an actor call.
type State int32

const (
	Pending   State = C.TETHER_PENDING
	Running   State = C.TETHER_RUNNING
	Succeeded State = C.TETHER_SUCCEEDED
	Failed    State = C.TETHER_FAILED
	Cancelled State = C.TETHER_CANCELLED
)

func (s State) String() string {
	switch s {
	case Pending:
		return "Pending"
	case Running:
		return "Running"
	case Succeeded:
		return "Succeeded"
	case Failed:
		return "Failed"
	case Cancelled:
		return "Cancelled"
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// Terminal reports whether s never changes again.
func (s State) Terminal() bool { return s == Succeeded || s == Failed || s == Cancelled }

// cstring returns a C copy of s, or NULL for "", and the func that frees it.
func cstring(s string) (*C.char, func()) {
	if s == "" {
		return nil, func() {}
	}
	cs := C.CString(s)
	return cs, func() { C.free(unsafe.Pointer(cs)) }
}

// timeoutNS converts d to the C API's timeouts: d < 0 waits forever.
func timeoutNS(d time.Duration) C.int64_t {
	if d < 0 {
		return -1
	}
	return C.int64_t(d.Nanoseconds())
}

// DebugUnjoinedThreads is how many threads the library created and has not yet joined
// (its control thread aside). After a non-blocking release (a finalizer) the threads are
// joined a little later; tests wait for this to reach 0.
func DebugUnjoinedThreads() int { return int(C.tether_debug_unjoined_threads()) }
