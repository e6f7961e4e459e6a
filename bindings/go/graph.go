package tether

/*
#include <stdlib.h>
#include <tether/tether.h>
#include "shim.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"time"
)

// Compiled graphs (tether.h section 9).
//
// A Graph[In] describes a pipeline of actor methods ("nodes"), each on its actor's own
// thread; Compile installs the graph's loop on those threads and Compiled.Execute feeds
// it one input at a time, returning a *Future for the outputs. Executions are pipelined
// (up to CompileOptions.ChannelCapacity in flight) and complete in the order they started.
//
// How values travel: every value of a graph — an execution's input and each node's
// output — is a cgo.Handle, and the library owns it through ONE drop function (the shim's
// tgo_drop, the compiled graph's value_drop and every execution's input_drop), which
// deletes the handle. A node reads its inputs during its call (the library lends them);
// the outputs of a SUCCEEDED execution are taken by the execution's completion notice
// (tether_future_outputs, called once per future) and their handles deleted there; values
// never taken are deleted by the library when the execution or its future ends. So each
// value handle is deleted exactly once, by the library or by the one taker.

// NodeHost is where a graph node runs and whose state it gets: an *Actor[S] (its
// default thread, where its constructor ran) or Actor.InGroup (a single-thread
// concurrency group of the actor). Sealed: only this package implements it.
type NodeHost[S any] interface {
	nodeHost(*S) nodeHost
}

// actorRef is an *Actor[S] of any S.
type actorRef interface{ handle() C.tether_actor }

// nodeHost is a NodeHost's actor and group ("" = the default thread).
type nodeHost struct {
	actor actorRef
	group string
}

// groupHost is Actor.InGroup's NodeHost.
type groupHost[S any] struct {
	a    *Actor[S]
	name string
}

func (g groupHost[S]) nodeHost(*S) nodeHost {
	if g.a == nil {
		return nodeHost{}
	}
	return nodeHost{actor: g.a, group: g.name}
}

// graphKeys names graphs for their nodes, so a Node of one graph is refused by another
// (its index would name a node of another type there).
var graphKeys atomic.Uint64

// AnyNode is a Node[T] of any T (AddNodeN's inputs, CompileN's outputs).
type AnyNode interface {
	node() (graph uint64, index uint32)
}

// Node is a node of a Graph whose value is a T, or the graph's input (Graph.Input). A
// small value that holds nothing: it only names the node in its graph. The zero Node
// names no node.
type Node[T any] struct {
	graph uint64
	index uint32
}

func (n Node[T]) node() (uint64, uint32) { return n.graph, n.index }

// Index is the node's index in its graph (0, 1, ... in the order they were added;
// math.MaxUint32 for the graph's input).
func (n Node[T]) Index() uint32 { return n.index }

// Graph is a pipeline of actor methods fed with an In. It is a description: Compile
// installs it, and it may be compiled again once its compiled graph is closed (while one
// is alive it cannot be edited: ErrWrongState). Close it when done; compiled graphs made
// from it live on.
type Graph[In any] struct {
	id  atomic.Uint64 // the tether_graph
	key uint64        // its Nodes' graph
	// mu makes each edit (a node and its edges) and each compile (its outputs and the
	// compile itself) one step for concurrent users of the graph.
	mu sync.Mutex
}

// NewGraph makes an empty graph whose executions take an In.
func NewGraph[In any]() (*Graph[In], error) {
	if versionErr != nil {
		return nil, versionErr
	}
	var out C.tether_graph
	if err := statusError(C.tether_graph_create(&out), "NewGraph"); err != nil {
		return nil, err
	}
	g := &Graph[In]{key: graphKeys.Add(1)}
	g.id.Store(uint64(out.id))
	runtime.SetFinalizer(g, (*Graph[In]).Close) // graph_release never waits
	return g, nil
}

// Input is the node that stands for an execution's input.
func (g *Graph[In]) Input() Node[In] {
	return Node[In]{graph: g.key, index: C.TETHER_GRAPH_INPUT}
}

// Close releases the graph's handle. Compiled graphs made from it keep working; the
// node funcs are dropped once the graph and all of them are closed (and their running
// steps returned). Idempotent.
func (g *Graph[In]) Close() error {
	id := g.id.Swap(0)
	if id == 0 {
		return nil
	}
	runtime.SetFinalizer(g, nil)
	return statusError(C.tether_graph_release(C.tether_graph{id: C.uint64_t(id)}), "Graph.Close")
}

// AddNode adds a node that runs fn on its host's thread (an *Actor[S]: its default
// thread; Actor.InGroup: that group's thread) with the actor's state and the value of
// input, once per execution. fn's value goes to the nodes that take this node as input
// and, if it is an output, to the execution's future. An error from fn fails only that
// execution (its later nodes do not run): an *Error keeps its code and user code, any
// other error becomes ErrTaskFailed with its text; a panic becomes ErrPanic.
//
// fn is kept until the graph and its compiled graphs are closed, and is called on one
// thread, one execution at a time (it may keep state of its own). A value may reach
// several nodes at once (fan-out): treat values as read-only.
func AddNode[S, In, A, T any](g *Graph[In], on NodeHost[S], fn func(*S, A) (T, error),
	input Node[A]) (Node[T], error) {
	return addNode(g, on, []AnyNode{input}, func(_ *C.tether_task, s *S, ins []C.uintptr_t) (T, error) {
		a, err := graphValue[A](ins[0])
		if err != nil {
			var zero T
			return zero, err
		}
		return fn(s, a)
	})
}

// AddNode2 is AddNode for a node with two inputs (fan-in): fn gets a's value, then b's.
func AddNode2[S, In, A, B, T any](g *Graph[In], on NodeHost[S], fn func(*S, A, B) (T, error),
	a Node[A], b Node[B]) (Node[T], error) {
	return addNode(g, on, []AnyNode{a, b}, func(_ *C.tether_task, s *S, ins []C.uintptr_t) (T, error) {
		var zero T
		va, err := graphValue[A](ins[0])
		if err != nil {
			return zero, err
		}
		vb, err := graphValue[B](ins[1])
		if err != nil {
			return zero, err
		}
		return fn(s, va, vb)
	})
}

// AddNodeN is the general form of AddNode: any number of inputs, whose values fn gets
// in the order given (as Node[T] values of their T), and the step's Scope:
// Scope.StopRequested turns true when the compiled graph is closed (or the actor is
// stopped with StopCancel) while the node runs. Scope.Go fails with ErrWrongState in a
// node (a step ends when its func returns). The Scope is valid during the call only.
func AddNodeN[S, In, T any](g *Graph[In], on NodeHost[S], fn func(*Scope, *S, []any) (T, error),
	inputs ...AnyNode) (Node[T], error) {
	return addNode(g, on, inputs, func(t *C.tether_task, s *S, ins []C.uintptr_t) (T, error) {
		vals := make([]any, len(ins))
		for i, h := range ins {
			vals[i] = handleValue(h)
		}
		sc := &Scope{t: t}
		sc.valid.Store(true)
		defer sc.valid.Store(false)
		return fn(sc, s, vals)
	})
}

// addNode is where every node goes in: step reads the inputs and runs the user's func.
func addNode[S, In, T any](g *Graph[In], on NodeHost[S], inputs []AnyNode,
	step func(t *C.tether_task, s *S, ins []C.uintptr_t) (T, error)) (Node[T], error) {
	if on == nil {
		return Node[T]{}, &Error{Code: CodeInvalidArgument, Message: "AddNode: no host (nil actor)"}
	}
	host := on.nodeHost(nil)
	if host.actor == nil {
		return Node[T]{}, &Error{Code: CodeInvalidArgument, Message: "AddNode: a nil actor"}
	}
	edges := make([]C.uint32_t, len(inputs))
	for i, in := range inputs {
		if in == nil {
			return Node[T]{}, &Error{Code: CodeInvalidArgument, Message: "AddNode: a nil input"}
		}
		key, index := in.node()
		if key != g.key {
			return Node[T]{}, &Error{Code: CodeInvalidArgument,
				Message: "AddNode: an input is not a node of this graph"}
		}
		edges[i] = C.uint32_t(index)
	}
	n := len(inputs)
	// Made only now that nothing in Go can fail any more: from the add_node call on, the
	// handle is the library's (dropped on failure before the call returns).
	h := newHandle(nodeFunc(func(t *C.tether_task, state any, ins []C.uintptr_t) (any, C.tether_status) {
		if len(ins) != n { // an edge that failed to go in (out of memory)
			return nil, failTask(t, &Error{Code: CodeInternal,
				Message: fmt.Sprintf("graph node got %d inputs, not the %d it was added with", len(ins), n)})
		}
		s, _ := state.(*S)
		v, err := step(t, s, ins)
		if err != nil {
			return nil, failTask(t, err)
		}
		return v, C.TETHER_OK
	}))
	cgroup, free := cstring(host.group)
	defer free()
	g.mu.Lock()
	defer g.mu.Unlock()
	gh := g.handle()
	var index C.uint32_t
	st := C.tgo_graph_add_node(gh, host.actor.handle(), cgroup, h, &index)
	runtime.KeepAlive(host.actor)
	if st != C.TETHER_OK {
		return Node[T]{}, g.callError(st, "AddNode")
	}
	for _, from := range edges {
		if st := C.tether_graph_add_edge(gh, from, index); st != C.TETHER_OK {
			// Only out of memory gets here (mu excludes a compile in between); the node
			// stays, and its steps fail for want of inputs rather than misread a value.
			return Node[T]{}, g.callError(st, "AddNode: edge")
		}
	}
	runtime.KeepAlive(g)
	return Node[T]{graph: g.key, index: uint32(index)}, nil
}

func (g *Graph[In]) handle() C.tether_graph { return C.tether_graph{id: C.uint64_t(g.id.Load())} }

func (g *Graph[In]) callError(st C.tether_status, op string) error {
	if st == C.TETHER_E_INVALID_HANDLE && g.id.Load() == 0 {
		return closedError("graph")
	}
	return statusError(st, op)
}

// CompileOptions configures Compile. The zero value (or nil) takes the defaults.
type CompileOptions struct {
	// ChannelCapacity is how many executions may be in flight (1 to 1,048,576; 0 = the
	// default, 8). Beyond it Execute fails with ErrQueueFull and ExecuteTimeout waits.
	ChannelCapacity int
}

// Compile checks the graph and installs its loop on the threads of its nodes; each
// execution yields the value of output. Errors (with a message naming the node, the cycle
// or the busy thread): ErrInvalidArgument (a cycle, a node not reachable from the input,
// a node on a group of several threads, bad options), ErrThreadBusy (a thread already
// hosts another compiled graph; nothing is installed), ErrActorDead, ErrShutdown,
// ErrWrongState while a compiled graph made from g is alive, and ErrInvalidHandle after
// Close.
func Compile[In, T any](g *Graph[In], opts *CompileOptions, output Node[T]) (*Compiled[In, T], error) {
	return compile(g, opts, []AnyNode{output}, func(vals []any) (T, error) { return asValue[T](vals[0]) })
}

// CompileN is Compile with several outputs: each execution yields their values, in the
// order given (as Node[T] values of their T).
func CompileN[In any](g *Graph[In], opts *CompileOptions, outputs ...AnyNode) (*Compiled[In, []any], error) {
	return compile(g, opts, outputs, func(vals []any) ([]any, error) { return vals, nil })
}

func compile[In, Out any](g *Graph[In], opts *CompileOptions, outputs []AnyNode,
	convert func([]any) (Out, error)) (*Compiled[In, Out], error) {
	if len(outputs) == 0 {
		return nil, &Error{Code: CodeInvalidArgument, Message: "Compile: no outputs"}
	}
	nodes := make([]C.uint32_t, len(outputs))
	for i, o := range outputs {
		if o == nil {
			return nil, &Error{Code: CodeInvalidArgument, Message: "Compile: a nil output"}
		}
		key, index := o.node()
		if key != g.key {
			return nil, &Error{Code: CodeInvalidArgument, Message: "Compile: an output is not a node of this graph"}
		}
		if index == C.TETHER_GRAPH_INPUT {
			return nil, &Error{Code: CodeInvalidArgument, Message: "Compile: the input cannot be an output"}
		}
		nodes[i] = C.uint32_t(index)
	}
	var o C.tether_compile_options
	C.tether_compile_options_init(&o)
	if opts != nil {
		if opts.ChannelCapacity < 0 {
			return nil, &Error{Code: CodeInvalidArgument, Message: "Compile: negative ChannelCapacity"}
		}
		if opts.ChannelCapacity > 0 {
			o.channel_capacity = C.size_t(opts.ChannelCapacity)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	gh := g.handle()
	// The array is Go memory without Go pointers, read during the call only.
	if st := C.tether_graph_set_outputs(gh, &nodes[0], C.size_t(len(nodes))); st != C.TETHER_OK {
		return nil, g.callError(st, "Compile: outputs")
	}
	var out C.tether_compiled
	st := C.tgo_graph_compile(gh, &o, &out)
	if st != C.TETHER_OK {
		err := g.callError(st, "Compile")
		var e C.tether_error
		if C.tether_graph_error(gh, &e) == C.TETHER_OK {
			if te := takeError(e); te != nil {
				err = te // the library's account: names the node, the cycle or the thread
			}
		}
		runtime.KeepAlive(g)
		return nil, err
	}
	runtime.KeepAlive(g)
	c := &Compiled[In, Out]{outputs: len(outputs), convert: convert}
	c.id.Store(uint64(out.id))
	runtime.SetFinalizer(c, (*Compiled[In, Out]).finalize)
	return c, nil
}

// Compiled is a graph's loop installed on its actors' threads: feed it inputs with
// Execute. Close it to tear the loops down.
type Compiled[In, Out any] struct {
	id      atomic.Uint64 // the tether_compiled
	outputs int
	convert func([]any) (Out, error)
}

func (c *Compiled[In, Out]) handle() C.tether_compiled {
	return C.tether_compiled{id: C.uint64_t(c.id.Load())}
}

// Execute starts one execution of input and returns its future, whose Wait yields the
// outputs once the execution SUCCEEDED, or the first failing node's error (ErrCancelled
// if it was cancelled with Future.Cancel or the compiled graph was closed first). It
// never blocks: with ChannelCapacity executions in flight it fails with ErrQueueFull.
// Other errors: ErrShutdown / ErrActorDead (an actor of the graph is stopped / dead),
// ErrClosed after Close.
//
// Closing the future does not cancel the execution. An execution in flight keeps c from
// being finalized (the future's completion notice refers to c).
func (c *Compiled[In, Out]) Execute(input In) (*Future[Out], error) {
	return c.execute(input, false, 0, "Execute")
}

// ExecuteTimeout is Execute that, with ChannelCapacity executions in flight, waits up to
// timeout (< 0: forever) for one to end, then fails with ErrTimeout. It blocks the
// calling OS thread in the library meanwhile. On a thread of the graph (in one of its
// nodes, or a method of one of its actors) a wait for room fails with ErrDeadlock at
// once: only that thread's steps could make room.
func (c *Compiled[In, Out]) ExecuteTimeout(input In, timeout time.Duration) (*Future[Out], error) {
	return c.execute(input, true, timeout, "ExecuteTimeout")
}

// ExecuteCtx is ExecuteTimeout bounded by ctx instead of a duration: when ctx ends
// while it waits for room it returns ctx.Err().
func (c *Compiled[In, Out]) ExecuteCtx(ctx context.Context, input In) (*Future[Out], error) {
	for { // slices of waiting in the library, so that ctx is honoured
		f, err := c.execute(input, true, 5*time.Millisecond, "ExecuteCtx")
		if !errors.Is(err, ErrTimeout) {
			return f, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

func (c *Compiled[In, Out]) execute(input In, wait bool, timeout time.Duration, op string) (*Future[Out], error) {
	if c.id.Load() == 0 {
		return nil, closedError("compiled graph")
	}
	// From here the input's handle is the library's: deleted by input_drop once the
	// execution has ended, or before the call returns when it fails.
	h := newHandle(input)
	var out C.tether_future
	var st C.tether_status
	if wait {
		st = C.tgo_compiled_execute_timeout(c.handle(), h, &out, timeoutNS(timeout))
	} else {
		st = C.tgo_compiled_execute(c.handle(), h, &out)
	}
	runtime.KeepAlive(c)
	if st != C.TETHER_OK {
		return nil, c.callError(st, op)
	}
	res := &futureResult[Out]{}
	return watchFuture(res, out, op, func(f C.tether_future) (Out, error) {
		vals, err := takeOutputs(f, c.outputs)
		if err != nil {
			var zero Out
			return zero, err
		}
		return c.convert(vals)
	}), nil
}

// Close tears the loops down and returns at once, without waiting for user code — also
// while a node is running: the executions not yet ended fail with ErrCancelled (their
// remaining nodes never run), and each thread is free for another compiled graph once
// its running node returns. Every value and input is still dropped exactly once, as the
// steps drain. Idempotent.
func (c *Compiled[In, Out]) Close() error {
	id := c.id.Swap(0)
	if id == 0 {
		return nil
	}
	runtime.SetFinalizer(c, nil)
	return statusError(C.tether_compiled_release(C.tether_compiled{id: C.uint64_t(id)}), "Compiled.Close")
}

func (c *Compiled[In, Out]) finalize() {
	if id := c.id.Swap(0); id != 0 {
		C.tether_compiled_release_nowait(C.tether_compiled{id: C.uint64_t(id)})
	}
}

func (c *Compiled[In, Out]) callError(st C.tether_status, op string) error {
	if st == C.TETHER_E_INVALID_HANDLE && c.id.Load() == 0 {
		return closedError("compiled graph")
	}
	return statusError(st, op)
}

// takeOutputs takes the n outputs of the SUCCEEDED execution f and deletes their
// handles: the first tether_future_outputs hands them over, and it is called once per
// future (by its completion notice). Every handle handed over is deleted, whatever else
// fails.
func takeOutputs(f C.tether_future, n int) ([]any, error) {
	hs := make([]C.uintptr_t, n) // Go memory without Go pointers, written during the call
	if st := C.tgo_future_outputs(f, &hs[0], C.size_t(n)); st != C.TETHER_OK {
		if st == C.TETHER_E_INVALID_HANDLE {
			return nil, closedError("future (closed before it completed)")
		}
		return nil, statusError(st, "Future: outputs")
	}
	vals := make([]any, n)
	var err error
	for i, h := range hs {
		if h == 0 {
			err = &Error{Code: CodeInternal, Message: "an execution succeeded without all of its outputs"}
			continue
		}
		vals[i] = cgo.Handle(h).Value()
		deleteHandle(h)
	}
	return vals, err
}

// handleValue is the value a graph value handle holds (nil for none).
func handleValue(h C.uintptr_t) any {
	if h == 0 {
		return nil
	}
	return cgo.Handle(h).Value()
}

// graphValue is the value of handle h as a T.
func graphValue[T any](h C.uintptr_t) (T, error) { return asValue[T](handleValue(h)) }

// asValue is v as a T: nil is T's zero value (a nil interface or pointer a node
// returned). Another type cannot happen through typed Nodes; it fails the step.
func asValue[T any](v any) (T, error) {
	if v == nil {
		var zero T
		return zero, nil
	}
	t, ok := v.(T)
	if !ok {
		return t, &Error{Code: CodeInternal,
			Message: fmt.Sprintf("graph value of type %T where a %T was expected", v, (*T)(nil))}
	}
	return t, nil
}
