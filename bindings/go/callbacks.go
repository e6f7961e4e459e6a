package tether

// This file holds the //export trampolines the C shims (shim.c) call. Its preamble holds
// declarations only, as cgo requires of a file with //export. Each trampoline recovers
// every panic: a task's panic becomes a TETHER_E_PANIC failure of that task, so a Go
// panic never unwinds into the library's C++ frames.

/*
#include <stdint.h>
#include <stdlib.h>
#include <tether/tether.h>
*/
import "C"

import (
	"fmt"
	"os"
	"runtime/cgo"
	"sync/atomic"
	"unsafe"
)

// taskFunc is what a task handle (runner target, nested thread, executor task) holds.
type taskFunc func(t *C.tether_task) C.tether_status

// ctorFunc is what an actor constructor's handle holds: it returns the actor's state.
type ctorFunc func(t *C.tether_task) (any, C.tether_status)

// methodFunc is what an actor call's handle holds; state is the constructor's value.
type methodFunc func(t *C.tether_task, state any) C.tether_status

// notifyFunc is what an on_done handle holds. It must not block.
type notifyFunc func()

// nodeFunc is what a graph node's handle holds. inputs are the handles of its input
// values, lent for the call (valid only until it returns); it returns its own value,
// which the trampoline puts in a new handle that the execution then owns.
type nodeFunc func(t *C.tether_task, state any, inputs []C.uintptr_t) (any, C.tether_status)

// liveHandles counts the cgo.Handles this package created and has not deleted yet: the
// test suite's TestMain fails unless it is back to 0. badDrops counts drops of a handle
// that was not live (a double drop): it must stay 0.
var (
	liveHandles atomic.Int64
	badDrops    atomic.Int64
)

// newHandle wraps v for the C side; the C shim turns the integer into `void *arg`.
func newHandle(v any) C.uintptr_t {
	liveHandles.Add(1)
	return C.uintptr_t(cgo.NewHandle(v))
}

// deleteHandle ends a handle made by newHandle.
func deleteHandle(h C.uintptr_t) {
	defer func() {
		if r := recover(); r != nil {
			badDrops.Add(1)
			fmt.Fprintf(os.Stderr, "tether: dropped an invalid cgo.Handle %d: %v\n", uintptr(h), r)
		}
	}()
	cgo.Handle(h).Delete()
	liveHandles.Add(-1)
}

// panicStatus records a recovered panic as the task's TETHER_E_PANIC failure.
func panicStatus(t *C.tether_task, r any) C.tether_status {
	msg := C.CString(fmt.Sprintf("panic: %v", r))
	defer C.free(unsafe.Pointer(msg))
	st := C.tether_task_fail_with(t, C.TETHER_E_PANIC, 0, msg)
	if st == C.TETHER_OK || st == C.TETHER_E_INVALID_ARGUMENT {
		return C.TETHER_E_PANIC // a failing status in every case
	}
	return st
}

//export goTaskTramp
func goTaskTramp(t *C.tether_task, h C.uintptr_t) (st C.tether_status) {
	defer func() {
		if r := recover(); r != nil {
			st = panicStatus(t, r)
		}
	}()
	return cgo.Handle(h).Value().(taskFunc)(t)
}

//export goCtorTramp
func goCtorTramp(t *C.tether_task, h C.uintptr_t, stateOut *C.uintptr_t) (st C.tether_status) {
	*stateOut = 0
	defer func() {
		if r := recover(); r != nil {
			st = panicStatus(t, r)
		}
	}()
	state, st := cgo.Handle(h).Value().(ctorFunc)(t)
	if st == C.TETHER_OK {
		// The state handle lives until the destructor trampoline (goDtorTramp).
		*stateOut = newHandle(state)
	}
	return st
}

//export goMethodTramp
func goMethodTramp(t *C.tether_task, state C.uintptr_t, h C.uintptr_t) (st C.tether_status) {
	defer func() {
		if r := recover(); r != nil {
			st = panicStatus(t, r)
		}
	}()
	var s any
	if state != 0 {
		s = cgo.Handle(state).Value()
	}
	return cgo.Handle(h).Value().(methodFunc)(t, s)
}

// goNodeTramp runs one step of a graph node on the node's thread. On success *out is a new
// handle holding the node's value: from here the library owns it and drops it once
// (value_drop = tgo_drop), unless it is an output the caller takes (takeOutputs). On
// failure, or a panic, *out stays 0: nothing was made, nothing leaks.
//
//export goNodeTramp
func goNodeTramp(t *C.tether_task, state C.uintptr_t, h C.uintptr_t, inputs *C.uintptr_t, n C.size_t,
	out *C.uintptr_t) (st C.tether_status) {
	*out = 0
	defer func() {
		if r := recover(); r != nil {
			st = panicStatus(t, r)
		}
	}()
	var s any
	if state != 0 {
		s = cgo.Handle(state).Value()
	}
	var ins []C.uintptr_t
	if n > 0 && inputs != nil {
		ins = unsafe.Slice(inputs, int(n)) // the shim's C array, valid during this call
	}
	v, st := cgo.Handle(h).Value().(nodeFunc)(t, s, ins)
	if st == C.TETHER_OK {
		*out = newHandle(v)
	}
	return st
}

// Closer is implemented by an actor's state that wants to release resources on the
// actor's pinned thread when the actor stops (its C destructor).
type Closer interface{ Close() error }

//export goDtorTramp
func goDtorTramp(state C.uintptr_t) {
	defer deleteHandle(state)
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "tether: actor state Close panicked: %v\n", r)
		}
	}()
	if c, ok := cgo.Handle(state).Value().(Closer); ok {
		_ = c.Close() // nowhere to report it: a destructor has no task
	}
}

//export goNotifyTramp
func goNotifyTramp(h C.uintptr_t) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "tether: completion callback panicked: %v\n", r)
		}
	}()
	cgo.Handle(h).Value().(notifyFunc)()
}

//export goDropTramp
func goDropTramp(h C.uintptr_t) { deleteHandle(h) }
