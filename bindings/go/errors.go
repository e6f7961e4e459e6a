package tether

/*
#include <stdlib.h>
#include <tether/tether.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// Code is a tether status code (the stable values of tether.h section 3).
type Code int32

const (
	CodeOK               Code = C.TETHER_OK
	CodeInvalidArgument  Code = C.TETHER_E_INVALID_ARGUMENT
	CodeInvalidHandle    Code = C.TETHER_E_INVALID_HANDLE
	CodeWrongState       Code = C.TETHER_E_WRONG_STATE
	CodeTimeout          Code = C.TETHER_E_TIMEOUT
	CodeCancelled        Code = C.TETHER_E_CANCELLED
	CodeDeadlock         Code = C.TETHER_E_DEADLOCK
	CodeThreadBusy       Code = C.TETHER_E_THREAD_BUSY
	CodeActorDead        Code = C.TETHER_E_ACTOR_DEAD
	CodeQueueFull        Code = C.TETHER_E_QUEUE_FULL
	CodeShutdown         Code = C.TETHER_E_SHUTDOWN
	CodeNoMemory         Code = C.TETHER_E_NO_MEMORY
	CodeThreadCreate     Code = C.TETHER_E_THREAD_CREATE
	CodeTaskFailed       Code = C.TETHER_E_TASK_FAILED
	CodeException        Code = C.TETHER_E_EXCEPTION
	CodeUnknownException Code = C.TETHER_E_UNKNOWN_EXCEPTION
	CodePanic            Code = C.TETHER_E_PANIC
	CodeNotFound         Code = C.TETHER_E_NOT_FOUND
	CodeInternal         Code = C.TETHER_E_INTERNAL
	CodeForked           Code = C.TETHER_E_FORKED
)

// String is the code's C name, "TETHER_E_TIMEOUT".
func (c Code) String() string { return C.GoString(C.tether_status_name(C.int32_t(c))) }

// Describe is the library's sentence for the code.
func (c Code) Describe() string { return C.GoString(C.tether_status_describe(C.int32_t(c))) }

// Error is a tether error: the failure of a call, or of user code (a task, a nested
// thread, an actor method or constructor), with where it happened.
//
// errors.Is(err, ErrX) compares codes, so it matches any *Error with X's code;
// errors.As(err, &te) gives the details.
type Error struct {
	Code     Code   // TETHER_E_*
	Message  string // "checkpoint upload failed: disk full"
	Thread   string // the thread it was raised on ("upload-1"); empty for a call's failure
	Type     string // a C++ exception's type name; empty otherwise
	UserCode int64  // the application code (Fail, or a C callback's return value)
	Cause    *Error // what caused it: an ErrActorDead's cause is the constructor's error
	// Err is the error the Go func returned, when this *Error reports it: errors.Is and
	// errors.As reach it (context.DeadlineExceeded from an inner Wait, say). Message is
	// its text.
	Err error

	closed bool // the object was closed (ErrClosed)
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("tether: ")
	b.WriteString(e.Code.String())
	b.WriteString(": ")
	if e.Message != "" {
		b.WriteString(e.Message)
	} else {
		b.WriteString(e.Code.Describe())
	}
	if e.Thread != "" {
		fmt.Fprintf(&b, " (thread %q)", e.Thread)
	}
	if e.UserCode != 0 {
		fmt.Fprintf(&b, " (user code %d)", e.UserCode)
	}
	if e.Cause != nil {
		b.WriteString(": caused by: ")
		b.WriteString(e.Cause.Error())
	}
	return b.String()
}

// Is reports whether target is an *Error with the same code (the sentinels ErrX are);
// ErrClosed matches only the error of a closed object.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && t.Code == e.Code && (!t.closed || e.closed)
}

// Unwrap returns the cause and the Go error it reports, so errors.Is and errors.As look
// at both.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.Cause != nil {
		errs = append(errs, e.Cause)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// Sentinel errors, for errors.Is. They compare by code only.
var (
	ErrInvalidArgument  = &Error{Code: CodeInvalidArgument}
	ErrInvalidHandle    = &Error{Code: CodeInvalidHandle}
	ErrWrongState       = &Error{Code: CodeWrongState}
	ErrTimeout          = &Error{Code: CodeTimeout}
	ErrCancelled        = &Error{Code: CodeCancelled}
	ErrDeadlock         = &Error{Code: CodeDeadlock}
	ErrThreadBusy       = &Error{Code: CodeThreadBusy}
	ErrActorDead        = &Error{Code: CodeActorDead}
	ErrQueueFull        = &Error{Code: CodeQueueFull}
	ErrShutdown         = &Error{Code: CodeShutdown}
	ErrNoMemory         = &Error{Code: CodeNoMemory}
	ErrThreadCreate     = &Error{Code: CodeThreadCreate}
	ErrTaskFailed       = &Error{Code: CodeTaskFailed}
	ErrException        = &Error{Code: CodeException}
	ErrUnknownException = &Error{Code: CodeUnknownException}
	ErrPanic            = &Error{Code: CodePanic}
	ErrNotFound         = &Error{Code: CodeNotFound}
	ErrInternal         = &Error{Code: CodeInternal}
	ErrForked           = &Error{Code: CodeForked}

	// ErrClosed is the error of a call on an object after its Close. It has the code of
	// ErrShutdown, so errors.Is(err, ErrShutdown) asks "is it gone?" for a stopped and a
	// closed object alike; errors.Is(err, ErrClosed) matches only the closed one.
	ErrClosed = &Error{Code: CodeShutdown, Message: "closed", closed: true}
)

// Fail is an error a func returns to fail its task with an application code:
// the resulting error has code ErrTaskFailed, that UserCode and that Message.
func Fail(userCode int64, message string) error {
	return &Error{Code: CodeTaskFailed, UserCode: userCode, Message: message}
}

// statusError is the error of a call that returned st (nil for TETHER_OK). The thread's
// last-error text is not read: a goroutine may have changed OS threads since the call.
func statusError(st C.tether_status, op string) error {
	if st == C.TETHER_OK {
		return nil
	}
	c := Code(st)
	return &Error{Code: c, Message: op + ": " + c.Describe()}
}

// closedError is the error of a call on an object after its Close (ErrClosed).
func closedError(what string) error {
	return &Error{Code: CodeShutdown, Message: what + " is closed", closed: true}
}

// isCode reports whether err is an *Error of code c (or wraps one).
func isCode(err error, c Code) bool {
	var te *Error
	return errors.As(err, &te) && te.Code == c
}

// userError is the *Error reporting err, which a Go func run as task t returned: the code
// and user code of the first *Error in err's chain (else ErrTaskFailed), err's text
// without that *Error's own "tether: CODE: " prefix (so no text is doubled), the thread,
// and err itself for errors.Is / errors.As.
func userError(t *C.tether_task, err error) *Error {
	if te, ok := err.(*Error); ok && te.Thread != "" {
		return te // already reported (a scoped call's nested thread)
	}
	code, user, msg := userCodeText(err)
	e := &Error{Code: code, UserCode: user, Message: msg, Thread: threadName(t)}
	if te, ok := err.(*Error); ok {
		e.Cause, e.Type = te.Cause, te.Type // a bare *Error: nothing else to reach
	} else {
		e.Err = err
	}
	return e
}

// userCodeText is the code, user code and message a failing func's err is recorded with.
func userCodeText(err error) (Code, int64, string) {
	var te *Error
	if !errors.As(err, &te) || te.Code == CodeOK {
		return CodeTaskFailed, 0, err.Error()
	}
	if te == err {
		if te.Message != "" {
			return te.Code, te.UserCode, te.Message
		}
		return te.Code, te.UserCode, te.Code.Describe()
	}
	return te.Code, te.UserCode, strings.Replace(err.Error(), "tether: "+te.Code.String()+": ", "", 1)
}

// readString reads one of the library's copied-out strings.
func readString(f func(buf *C.char, cap C.size_t) C.size_t) string {
	n := f(nil, 0)
	if n == 0 {
		return ""
	}
	buf := make([]byte, int(n)+1)
	got := f((*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
	if got < n {
		n = got
	}
	return string(buf[:n])
}

// takeError converts an error handle to an *Error and releases it (nil for the null
// handle). Causes are followed (bounded, in case of a cycle).
func takeError(h C.tether_error) *Error {
	return takeErrorDepth(h, 0)
}

func takeErrorDepth(h C.tether_error, depth int) *Error {
	if h.id == 0 {
		return nil
	}
	defer C.tether_error_release(h)
	e := &Error{
		Code:     Code(C.tether_error_code(h)),
		UserCode: int64(C.tether_error_user_code(h)),
		Message: readString(func(b *C.char, n C.size_t) C.size_t {
			return C.tether_error_message(h, b, n)
		}),
		Thread: readString(func(b *C.char, n C.size_t) C.size_t {
			return C.tether_error_thread_name(h, b, n)
		}),
		Type: readString(func(b *C.char, n C.size_t) C.size_t {
			return C.tether_error_type_name(h, b, n)
		}),
	}
	if depth < 16 {
		var cause C.tether_error
		if C.tether_error_cause(h, &cause) == C.TETHER_OK {
			e.Cause = takeErrorDepth(cause, depth+1)
		}
	}
	return e
}

// failTask records err as the failure of task t and returns the status to return from
// the callback. An *Error in err's chain keeps its code and user code; any other error
// becomes ErrTaskFailed with err's text.
func failTask(t *C.tether_task, err error) C.tether_status {
	code, user, msg := userCodeText(err)
	cmsg := C.CString(msg)
	defer C.free(unsafe.Pointer(cmsg))
	// fail_with returns code once recorded (also for CodeInvalidArgument, which is then
	// no refusal); any other status is a refusal of the code.
	if st := C.tether_task_fail_with(t, C.int32_t(code), C.int64_t(user), cmsg); st == C.tether_status(code) {
		return st
	}
	C.tether_task_fail(t, C.int64_t(user), cmsg) // a code fail_with refuses
	return C.TETHER_E_TASK_FAILED
}
