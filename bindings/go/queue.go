package tether

/*
#include <tether/tether.h>
#include "shim.h"
*/
import "C"

import (
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"time"
)

// callQueue is the Go side of one serial thread: an actor's default thread or an
// executor's. Go funcs wait here in submission order, and a drain — ONE C call on that
// thread (tgo_actor_drain / tgo_executor_drain) — runs every func queued, so a Tell, Go,
// Call or Submit costs a mutex section, and a cgo crossing each way only when no drain
// is scheduled. Nothing of it goes through a cgo.Handle but the queue itself.
//
// Thread safety: the fields before mu are set at creation or atomic; mu guards those
// after it. Any goroutine may push, close and read stats; only the drain, on the queue's
// thread, runs calls. Memory ordering: waiting and closing are hints for the lingering
// drain, which takes mu before it acts on them, so they need no ordering of their own;
// a call's outcome is written before its done channel is closed (futureCall.settle), and
// the close orders it before every Wait that sees it. Invariants (kept under mu):
//   - at most one drain is in flight (scheduled: queued in C or running);
//   - !scheduled implies len(items) == 0: a push to an empty idle queue schedules;
//   - only the running drain takes items out to run them; Stop(StopCancel) and a drain
//     dropped by the library take them out to fail them.
//
// Stop and Close close the queue first, then stop the owner in the library: every call
// accepted before is held by the drain in flight (the invariant), which the library runs
// (StopDrain, release) or drops (StopCancel: its calls fail), so none is lost, and none
// needs a new drain, which a stopped owner would refuse.
type callQueue struct {
	handle   C.uintptr_t            // this queue as a cgo.Handle: the drains' arg
	submit   func() C.tether_status // submits one drain (rejections are its status)
	dropErr  func() error           // the error of calls whose drain was dropped unrun
	capacity int                    // 0: unbounded; else calls queued and not started
	tid      atomic.Int64           // the OS thread id of the drains (0 until the first)
	// cancelling is set by Stop(StopCancel): a scoped call starting later starts stopped.
	cancelling atomic.Bool
	// linger is how long an emptied drain spins for more calls before it ends, so a
	// streaming producer or a caller's next round trip finds it running (no cgo crossing,
	// no wake-up): the executor's idle spin, which the library would spin anyway.
	linger time.Duration
	// waiting mirrors len(items) for the lingering drain, which reads it without mu;
	// closing is set once closed is. Both are written under mu.
	waiting atomic.Int32
	closing atomic.Bool
	// Where the two sides of a spin run (-1: unknown, or not spinning): the lingering
	// drain's CPU, and the CPU of the last caller that spun waiting for one of its calls.
	// Hints only: a side yields its CPU in a spin only when the other shares it. A yield
	// on a CPU shared with another process hands it over for a whole time slice (measured
	// 2026-12-04, two busy processes beside BenchmarkRoundTrip: ~3 ms a round trip across
	// CPUs while both spins yielded every 64 turns), and a spinner on another CPU than the
	// one it waits for cannot help that one by yielding.
	drainCPU  atomic.Int32
	waiterCPU atomic.Int32

	mu        sync.Mutex
	items     []queued
	spare     []queued // a drained batch's array, reused by the next pushes
	batch     []queued // the batch the drain runs now (its calls are the drain's)
	scheduled bool
	closed    error // non-nil: new calls fail with it
	released  bool  // closed and idle: the handle is deleted, no drain runs again
	stats     queueStats
	errs      []error // the first keptErrors fire-and-forget errors

	ran ranCounts // outside mu: counted before a future settles
}

// keptErrors is how many fire-and-forget errors a queue keeps, as the library does.
const keptErrors = 64

// drainBound is how many calls one drain runs before it hands its thread over (a shared
// executor serves other actors too) by queuing a follow-up drain behind them.
const drainBound = 4096

// queueStats counts the queue's calls (guarded by mu) and the drains the library sees
// (so Stats can take them out of the library's counts).
type queueStats struct {
	cancelled, rejected, errorsDropped                      uint64 // of calls never taken by a drain
	drainsRan, drainsDropped, drainsRejected, drainsWaiting uint64
}

// queued is one call in a queue.
type queued interface {
	// run runs the call on the queue's thread (state: the actor's, nil on an executor)
	// and returns its error; its own future (if any) is settled, and counted, by then.
	run(t *C.tether_task, state any) error
	// fail settles a call that will never run (err: ErrCancelled, ErrShutdown, ...).
	fail(err error)
	// cancel asks the call to stop; a call that has not started never starts.
	cancel()
	// fireAndForget: its error is kept by the queue (Errors, Stats.Failed).
	fireAndForget() bool
}

func newCallQueue(capacity int, linger time.Duration, submit func(q *callQueue) C.tether_status,
	dropErr func() error) *callQueue {
	q := &callQueue{capacity: capacity, linger: linger, dropErr: dropErr}
	q.drainCPU.Store(-1)
	q.waiterCPU.Store(-1)
	q.handle = newHandle(q)
	q.submit = func() C.tether_status { return submit(q) }
	return q
}

// push queues c. The returned error is the submission's: the queue closed or full, or
// the drain it had to schedule refused (then c is not queued and fail is not called).
func (q *callQueue) push(c queued) error {
	q.mu.Lock()
	if q.closed != nil {
		q.stats.rejected++
		err := q.closed
		q.mu.Unlock()
		return err
	}
	if q.capacity > 0 && len(q.items) >= q.capacity {
		q.stats.rejected++
		q.mu.Unlock()
		return &Error{Code: CodeQueueFull, Message: "the queue is full"}
	}
	q.items = append(q.items, c)
	q.waiting.Store(int32(len(q.items)))
	if q.scheduled {
		q.mu.Unlock()
		return nil
	}
	q.scheduled = true
	q.stats.drainsWaiting++
	q.mu.Unlock()
	st := q.submit()
	if st == C.TETHER_OK {
		return nil
	}
	// Refused: by the invariant c is the only call queued, and nothing else can run it.
	q.mu.Lock()
	q.items = q.items[:0]
	q.waiting.Store(0)
	q.stats.drainsWaiting--
	q.stats.drainsRejected++
	q.stats.rejected++
	q.becomeIdle()
	q.mu.Unlock()
	err := statusError(st, "submit")
	if st == C.TETHER_E_ACTOR_DEAD {
		err = q.dropErr()
	}
	return err
}

// drain runs on the queue's thread: every call queued, batch by batch, until the queue
// is empty (then it is idle) or drainBound calls ran (then a follow-up drain continues).
func (q *callQueue) drain(t *C.tether_task, state any) {
	if q.tid.Load() == 0 {
		q.tid.Store(int64(C.tgo_tid()))
	}
	q.mu.Lock()
	q.stats.drainsWaiting--
	q.stats.drainsRan++
	ran := 0
	for {
		batch := q.items
		if len(batch) == 0 {
			q.mu.Unlock()
			lingered := q.lingerForCalls()
			q.mu.Lock()
			if lingered && len(q.items) > 0 {
				continue
			}
			if len(q.items) == 0 {
				q.becomeIdle()
				q.mu.Unlock()
				return
			}
			continue
		}
		if ran >= drainBound && q.closed == nil {
			q.stats.drainsWaiting++
			q.mu.Unlock()
			if q.submit() == C.TETHER_OK {
				return // the follow-up drain owns the queue now
			}
			q.mu.Lock()
			q.stats.drainsWaiting--
			ran = 0 // refused (a full bounded queue): go on here
			continue
		}
		q.items, q.spare = q.spare[:0], nil
		q.waiting.Store(0)
		q.batch = batch // published for Stop(StopCancel), which cancels its calls
		q.mu.Unlock()
		for _, c := range batch {
			if q.cancelling.Load() { // Stop(StopCancel): what has not started never starts
				q.ran.count(errStopCancelled) // before fail settles a future
				c.fail(errStopCancelled)
				continue
			}
			err := c.run(t, state)
			if c.fireAndForget() { // a call with a future counted itself as it settled
				q.tallyFireAndForget(err)
			}
		}
		q.mu.Lock()
		q.batch = nil
		clear(batch)
		ran += len(batch)
		if q.spare == nil {
			q.spare = batch[:0]
		}
	}
}

// errStopCancelled is the error of calls a Stop(StopCancel) cancelled before they ran.
var errStopCancelled = &Error{Code: CodeCancelled, Message: "cancelled by Stop"}

// lingerForCalls spins up to q.linger for a call to be pushed (true) while the queue
// is open. It runs on the drain's thread without mu, holding its P: it stays short.
func (q *callQueue) lingerForCalls() bool {
	if q.linger <= 0 {
		return false
	}
	cpu := int32(C.tgo_cpu())
	q.drainCPU.Store(cpu)
	defer q.drainCPU.Store(-1)
	var end time.Time
	for i := 0; ; i++ {
		if n := q.waiting.Load(); n > 0 {
			q.letBuildUp(n)
			return true
		}
		if q.closing.Load() {
			return false
		}
		if i&63 == 0 {
			now := time.Now()
			if i == 0 {
				end = now.Add(q.linger)
			} else if now.After(end) {
				return false
			}
			if cpu < 0 || q.waiterCPU.Load() == cpu {
				C.tgo_yield() // a caller waiting on this CPU (or CPU unknown) runs first
			}
		}
	}
}

// letBuildUp lets a streaming producer's calls build up a little before the drain takes
// them (one lock per batch instead of one per call, fewer cache-line hand-overs): it
// waits while the count still grows, at most buildUpSpins spins between two calls and up
// to buildUpMax calls. A lone call (a round trip) waits buildUpSpins spins.
func (q *callQueue) letBuildUp(n int32) {
	for quiet := 0; quiet < buildUpSpins && n < buildUpMax; quiet++ {
		if m := q.waiting.Load(); m != n {
			n, quiet = m, 0
		}
	}
}

const (
	buildUpSpins = 64
	buildUpMax   = 256
)

// ranCounts counts the outcomes of the calls the drain took. They are atomic, not under
// mu, so that a call is counted BEFORE its future settles (futureCall.settle): a Stats
// read after a Wait returned then counts that call and every call before it. The drain
// adds, and so does the goroutine that settles a scoped call whose nested threads
// outlived it; Stats reads.
type ranCounts struct{ completed, failed, cancelled atomic.Uint64 }

// count adds the outcome err of one call.
func (r *ranCounts) count(err error) {
	switch {
	case err == nil:
		r.completed.Add(1)
	case isCode(err, CodeCancelled):
		r.cancelled.Add(1)
	default:
		r.failed.Add(1)
	}
}

// tallyFireAndForget counts a fire-and-forget call that ran and keeps its error.
func (q *callQueue) tallyFireAndForget(err error) {
	q.ran.count(err)
	if err == nil || isCode(err, CodeCancelled) {
		return
	}
	q.mu.Lock()
	if len(q.errs) < keptErrors {
		q.errs = append(q.errs, err)
	} else {
		q.stats.errorsDropped++
	}
	q.mu.Unlock()
}

// dropped: the library dropped a scheduled drain without running it (the owner was
// stopped with StopCancel, or its constructor failed): every queued call fails.
func (q *callQueue) dropped() {
	err := q.dropErr()
	q.mu.Lock()
	q.stats.drainsWaiting--
	q.stats.drainsDropped++
	batch := q.items
	q.items = nil
	q.waiting.Store(0)
	q.stats.cancelled += uint64(len(batch))
	q.becomeIdle()
	q.mu.Unlock()
	for _, c := range batch {
		c.fail(err)
	}
}

// becomeIdle ends the drain in flight (under mu). A closed queue then ends its handle:
// no drain runs again.
func (q *callQueue) becomeIdle() {
	q.scheduled = false
	if q.closed != nil && !q.released {
		q.released = true
		deleteHandle(q.handle)
	}
}

// close refuses new calls with err and, with cancel, fails the queued ones, cancels
// those of the running drain's batch (the drain skips what has not started) and asks
// the running one to stop.
func (q *callQueue) close(err error, cancel bool) {
	q.mu.Lock()
	if q.closed == nil {
		q.closed = err
		q.closing.Store(true)
	}
	var batch, running []queued
	if cancel {
		q.cancelling.Store(true)
		batch, q.items = q.items, nil
		q.waiting.Store(0)
		q.stats.cancelled += uint64(len(batch))
		running = append(running, q.batch...) // the drain's batch: a copy, it clears its own
	}
	if !q.scheduled {
		q.becomeIdle()
	}
	q.mu.Unlock()
	for _, c := range running {
		c.cancel() // settles the calls not started; asks the running one to stop
	}
	for _, c := range batch {
		c.fail(errStopCancelled)
	}
}

// onOwnThread reports whether the caller runs on the queue's thread (a wait there for a
// call of this queue could never end).
func (q *callQueue) onOwnThread() bool {
	tid := q.tid.Load()
	return tid != 0 && tid == int64(C.tgo_tid())
}

// keptErrors returns the kept fire-and-forget errors.
func (q *callQueue) keptErrs() []error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]error(nil), q.errs...)
}

// adjust turns the library's counters of the owner into the counters of its calls:
// the drains are taken out, the queue's calls put in.
func (q *callQueue) adjust(s Stats) Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.stats
	sub := func(v, d uint64) uint64 {
		if v < d {
			return 0
		}
		return v - d
	}
	s.Queued = sub(s.Queued, st.drainsWaiting) + uint64(len(q.items))
	s.Completed = sub(s.Completed, st.drainsRan) + q.ran.completed.Load()
	s.Cancelled = sub(s.Cancelled, st.drainsDropped) + st.cancelled + q.ran.cancelled.Load()
	s.Rejected = sub(s.Rejected, st.drainsRejected) + st.rejected
	s.Failed += q.ran.failed.Load()
	s.ErrorsDropped += st.errorsDropped
	return s
}

//export goDrainTramp
func goDrainTramp(t *C.tether_task, state C.uintptr_t, qh C.uintptr_t) C.tether_status {
	var s any
	if state != 0 {
		s = cgo.Handle(state).Value()
	}
	cgo.Handle(qh).Value().(*callQueue).drain(t, s) // every call recovers its own panics
	return C.TETHER_OK
}

//export goDrainDropped
func goDrainDropped(qh C.uintptr_t) { cgo.Handle(qh).Value().(*callQueue).dropped() }
