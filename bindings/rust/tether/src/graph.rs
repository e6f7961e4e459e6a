//! Compiled graphs (header section 9): [`Graph<In>`](Graph), [`Node<T>`](Node),
//! [`Compiled<In, Out>`](Compiled) and [`Execution<Out>`](Execution).
//!
//! # How values travel
//!
//! Every value of a graph — the input of an execution and the value of each node — lives
//! in a `Slot<T>`: a heap box whose first field is the function that drops it
//! (`drop_slot::<T>`). The library is given ONE drop function for all of them,
//! [`drop_value`], as the compile options' `value_drop` and as every execution's
//! `input_drop`; it reads the slot's own drop function and calls it. So the library owns
//! every value from the moment it exists and drops each exactly once (header section 9):
//! consumers only borrow them (`&T`, during their call), the outputs of a SUCCEEDED
//! execution pass to [`Execution`] at its one `tether_future_outputs` (guarded by a flag,
//! since a later call would hand out the same pointers again) and are moved out of their
//! slots at once, and outputs never taken are dropped by the library with the future.
use std::ffi::{c_char, c_void};
use std::fmt::Display;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tether_sys as sys;

use crate::actor::{Exclusive, Group, Shared};
use crate::executor::{sealed as future_sealed, FutureHandle};
use crate::util::{free_boxed, run_task, timeout_ns};
use crate::{Actor, Error, Future, Scope, State};

// ---- values ----------------------------------------------------------------------------

/// A graph value in its heap box. `repr(C)` puts `drop` at offset 0, where [`drop_value`]
/// finds it whatever `T` is.
#[repr(C)]
struct Slot<T> {
    drop: unsafe fn(*mut c_void),
    value: T,
}

/// Boxes `value` for the library (freed by [`drop_value`], or taken by [`own_value`]).
fn box_value<T: Send + Sync + 'static>(value: T) -> *mut c_void {
    Box::into_raw(Box::new(Slot {
        drop: drop_slot::<T>,
        value,
    }))
    .cast()
}

/// The drop function stored in a `Slot<T>`.
///
/// # Safety
/// `p` came from `box_value::<T>` and is dropped once.
unsafe fn drop_slot<T>(p: *mut c_void) {
    // SAFETY: see above.
    drop(unsafe { Box::from_raw(p.cast::<Slot<T>>()) });
}

/// The `value_drop` of every compiled graph and the `input_drop` of every execution: one
/// function for all values, whatever their type. The library calls it once per value, on
/// any thread (T: Send), never under a lock. A panicking `Drop` is caught and discarded:
/// nothing may unwind into C, and there is no task to report it to.
unsafe extern "C" fn drop_value(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // SAFETY: every value handed to the library was made by box_value::<T>: a Slot<T>,
    // repr(C), whose first field (offset 0, and the slot is at least as aligned as a fn
    // pointer) is drop_slot::<T>.
    let drop = unsafe { p.cast::<unsafe fn(*mut c_void)>().read() };
    // SAFETY: the library drops each value exactly once (header section 9).
    let _ = catch_unwind(AssertUnwindSafe(|| unsafe { drop(p) }));
}

/// Borrows the value of a slot for a node's call.
///
/// # Safety
/// `p` is a live `Slot<T>` made by `box_value::<T>` that outlives `'a` (the library lends
/// inputs for the duration of the consumer's call).
unsafe fn value_ref<'a, T>(p: *mut c_void) -> &'a T {
    // SAFETY: see above.
    unsafe { &(*p.cast::<Slot<T>>()).value }
}

/// Takes ownership of an output's slot (NULL: none).
///
/// # Safety
/// `p` is NULL or a `Slot<T>` made by `box_value::<T>` that the library has just handed
/// over (the first `tether_future_outputs` of a SUCCEEDED execution).
unsafe fn own_value<T>(p: *mut c_void) -> Option<Box<Slot<T>>> {
    if p.is_null() {
        None
    } else {
        // SAFETY: see above.
        Some(unsafe { Box::from_raw(p.cast::<Slot<T>>()) })
    }
}

// ---- nodes, inputs, outputs, hosts -----------------------------------------------------

mod sealed {
    pub trait Sealed {}
}

/// A node of a [`Graph`] whose value is a `T` (or the graph's input, [`Graph::input`]).
/// A small copyable name: it borrows nothing, and it belongs to the graph that made it
/// (using it with another graph is `TETHER_E_INVALID_ARGUMENT`).
pub struct Node<T> {
    graph: u64,
    index: u32,
    // fn() -> T: a Node never holds a T.
    _t: PhantomData<fn() -> T>,
}

impl<T> Node<T> {
    fn new(graph: u64, index: u32) -> Self {
        Node {
            graph,
            index,
            _t: PhantomData,
        }
    }

    /// The node's index in its graph (0, 1, ... in the order they were added;
    /// `tether::sys::TETHER_GRAPH_INPUT` for the input).
    pub fn index(&self) -> u32 {
        self.index
    }

    fn id(&self) -> (u64, u32) {
        (self.graph, self.index)
    }
}

impl<T> Clone for Node<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Node<T> {}
impl<T> PartialEq for Node<T> {
    fn eq(&self, other: &Self) -> bool {
        self.id() == other.id()
    }
}
impl<T> Eq for Node<T> {}
impl<T> std::fmt::Debug for Node<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("index", &self.index)
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
}

/// What feeds a node: one [`Node<T>`](Node) (the function gets `&T`), a tuple of nodes,
/// up to 8 (it gets a tuple of references, in the same order: the edges are added in that
/// order, so the values arrive in it), or `()` (no input: such a node is unreachable, and
/// compile refuses it). Sealed.
pub trait Inputs: sealed::Sealed {
    /// What the node's function receives, borrowed for the duration of its call.
    type Refs<'a>;
    /// The (graph, index) of each input, in order.
    #[doc(hidden)]
    fn edges(&self) -> Vec<(u64, u32)>;
    /// The references to the values the library lends to the call; `None` if there are
    /// not exactly as many as the edges, or one is missing.
    ///
    /// # Safety
    /// `values` are the node's inputs as the library hands them to this node's call:
    /// slots of the types of `Self`'s nodes, live for `'a`.
    #[doc(hidden)]
    unsafe fn refs<'a>(values: &[*mut c_void]) -> Option<Self::Refs<'a>>;
}

/// What an execution returns: one [`Node<T>`](Node) (the execution yields a `T`) or a
/// tuple of nodes, up to 8 (a tuple of their values, in that order). The graph's input
/// cannot be an output. Sealed.
pub trait Outputs: sealed::Sealed {
    /// The values an execution yields.
    type Values: Send + 'static;
    /// The (graph, index) of each output, in order.
    #[doc(hidden)]
    fn nodes(&self) -> Vec<(u64, u32)>;
    /// Takes the outputs the library handed over; `None` (having dropped the others) if
    /// their number is wrong or one is NULL.
    ///
    /// # Safety
    /// `outs` are the pointers of the first `tether_future_outputs` of a SUCCEEDED
    /// execution of a graph compiled with these outputs; the caller owns them.
    #[doc(hidden)]
    unsafe fn take(outs: &[*mut c_void]) -> Option<Self::Values>;
}

impl<T> sealed::Sealed for Node<T> {}

impl<T: 'static> Inputs for Node<T> {
    type Refs<'a> = &'a T;
    fn edges(&self) -> Vec<(u64, u32)> {
        vec![self.id()]
    }
    unsafe fn refs<'a>(values: &[*mut c_void]) -> Option<&'a T> {
        match *values {
            // SAFETY: the caller's contract.
            [v] if !v.is_null() => Some(unsafe { value_ref::<T>(v) }),
            _ => None,
        }
    }
}

impl<T: Send + 'static> Outputs for Node<T> {
    type Values = T;
    fn nodes(&self) -> Vec<(u64, u32)> {
        vec![self.id()]
    }
    unsafe fn take(outs: &[*mut c_void]) -> Option<T> {
        match *outs {
            // SAFETY: the caller's contract.
            [v] => unsafe { own_value::<T>(v) }.map(|b| b.value),
            _ => None,
        }
    }
}

impl sealed::Sealed for () {}

impl Inputs for () {
    type Refs<'a> = ();
    fn edges(&self) -> Vec<(u64, u32)> {
        Vec::new()
    }
    unsafe fn refs<'a>(values: &[*mut c_void]) -> Option<Self::Refs<'a>> {
        values.is_empty().then_some(())
    }
}

macro_rules! tuples {
    ($(($($t:ident $v:ident $i:tt),+))*) => {$(
        impl<$($t),+> sealed::Sealed for ($(Node<$t>,)+) {}

        impl<$($t: 'static),+> Inputs for ($(Node<$t>,)+) {
            type Refs<'a> = ($(&'a $t,)+);
            fn edges(&self) -> Vec<(u64, u32)> {
                vec![$(self.$i.id()),+]
            }
            unsafe fn refs<'a>(values: &[*mut c_void]) -> Option<Self::Refs<'a>> {
                let &[$($v),+] = values else { return None };
                $(if $v.is_null() { return None; })+
                // SAFETY: the caller's contract; none is NULL.
                Some(($(unsafe { value_ref::<$t>($v) },)+))
            }
        }

        impl<$($t: Send + 'static),+> Outputs for ($(Node<$t>,)+) {
            type Values = ($($t,)+);
            fn nodes(&self) -> Vec<(u64, u32)> {
                vec![$(self.$i.id()),+]
            }
            unsafe fn take(outs: &[*mut c_void]) -> Option<Self::Values> {
                let &[$($v),+] = outs else { return None };
                // Own every one first, so that a NULL among them drops the others.
                // SAFETY: the caller's contract.
                let owned = ($(unsafe { own_value::<$t>($v) },)+);
                match owned {
                    ($(Some($v),)+) => Some(($($v.value,)+)),
                    _ => None,
                }
            }
        }
    )*};
}

tuples! {
    (A a 0)
    (A a 0, B b 1)
    (A a 0, B b 1, C c 2)
    (A a 0, B b 1, C c 2, D d 3)
    (A a 0, B b 1, C c 2, D d 3, E e 4)
    (A a 0, B b 1, C c 2, D d 3, E e 4, F f 5)
    (A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6)
    (A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7)
}

/// Where a node runs, and what it gets of the actor's state:
///
/// - `&Actor<S>` ([`Exclusive`]): the actor's default thread (where its constructor ran);
///   the node gets `&mut S`. Sound for the reason calls get `&mut S`: the actor has no
///   concurrency groups, so its state is touched by that one thread, by one step or call
///   at a time, and no borrow of it outlives a call (node functions are `'static` and
///   return `'static` values).
/// - `&GroupedActor<S>` ([`Shared`]): the default thread; the node gets `&S` (group
///   methods may run at the same time on other threads, hence `S: Sync`).
/// - `&Group<S>` (`actor.group("io")`): that group's thread, which must be the group's
///   only one (else compile fails with `TETHER_E_INVALID_ARGUMENT`); `&S`.
///
/// Sealed.
pub trait NodeHost: sealed::Sealed {
    /// What a node gets of the state: `&'s mut S` or `&'s S`.
    type Access<'s>;
    /// The actor (borrowed).
    #[doc(hidden)]
    fn raw_actor(&self) -> sys::tether_actor;
    /// The group's name, NULL for the default thread; valid while `self` is.
    #[doc(hidden)]
    fn raw_group(&self) -> *const c_char;
    /// The access to the state for one step.
    ///
    /// # Safety
    /// `state` is the state pointer the library hands to a step of a node hosted by
    /// `self` (the `Box<S>` of its constructor), and the step is running.
    #[doc(hidden)]
    unsafe fn access<'s>(state: *mut c_void) -> Self::Access<'s>;
}

impl<S: 'static, A> sealed::Sealed for Actor<S, A> {}
impl<S: 'static> sealed::Sealed for Group<'_, S> {}

impl<S: 'static> NodeHost for Actor<S, Exclusive> {
    type Access<'s> = &'s mut S;
    fn raw_actor(&self) -> sys::tether_actor {
        self.raw()
    }
    fn raw_group(&self) -> *const c_char {
        std::ptr::null()
    }
    unsafe fn access<'s>(state: *mut c_void) -> &'s mut S {
        // SAFETY: the caller's contract, and the argument on this impl's trait doc: the
        // step runs on the default thread of an actor without groups, alone.
        unsafe { &mut *state.cast::<S>() }
    }
}

impl<S: Sync + 'static> NodeHost for Actor<S, Shared> {
    type Access<'s> = &'s S;
    fn raw_actor(&self) -> sys::tether_actor {
        self.raw()
    }
    fn raw_group(&self) -> *const c_char {
        std::ptr::null()
    }
    unsafe fn access<'s>(state: *mut c_void) -> &'s S {
        // SAFETY: the caller's contract; only `&S` is ever made of a shared actor's state.
        unsafe { &*state.cast::<S>() }
    }
}

impl<S: Sync + 'static> NodeHost for Group<'_, S> {
    type Access<'s> = &'s S;
    fn raw_actor(&self) -> sys::tether_actor {
        Group::raw_actor(self)
    }
    fn raw_group(&self) -> *const c_char {
        self.name_ptr()
    }
    unsafe fn access<'s>(state: *mut c_void) -> &'s S {
        // SAFETY: as for `Actor<S, Shared>`.
        unsafe { &*state.cast::<S>() }
    }
}

// ---- the node trampoline -----------------------------------------------------------------

/// The type-erased form every node function takes inside the crate: the raw state, the
/// raw inputs, the step's scope; `Err(message)` fails the execution with
/// TETHER_E_TASK_FAILED.
trait RawNode<T>:
    FnMut(*mut c_void, &[*mut c_void], &Scope) -> Result<T, String> + Send + 'static
{
}
impl<T, G> RawNode<T> for G where
    G: FnMut(*mut c_void, &[*mut c_void], &Scope) -> Result<T, String> + Send + 'static
{
}

/// The `tether_node_fn` of a node whose (wrapped) function is a `G`: one per node type.
/// `arg` is the `Box<G>` given to `tether_graph_add_node`, kept by the library for the
/// compiled graph's life and freed once by `free_boxed::<G>`. The library runs a node's
/// steps on one thread, one at a time, so `&mut G` is unique for the call (`G: Send`: it
/// was made on the caller's thread and may be dropped on any). The value goes into a new
/// slot, owned by the execution from here on. Panics are caught by `run_task` and fail
/// the execution with TETHER_E_PANIC and the message; no slot is made then.
unsafe extern "C" fn node_trampoline<T, G>(
    task: *mut sys::tether_task,
    state: *mut c_void,
    arg: *mut c_void,
    inputs: *const *mut c_void,
    n_inputs: usize,
    output: *mut *mut c_void,
) -> sys::tether_status
where
    T: Send + Sync + 'static,
    G: RawNode<T>,
{
    // SAFETY: `arg` is this node's Box<G>, live until its drop, which runs after the last
    // step; steps of one node never overlap (one thread, one step at a time). `inputs`
    // holds n_inputs pointers, lent for this call; `output` is the library's out-pointer;
    // `task` is this callback's.
    unsafe {
        let g = &mut *arg.cast::<G>();
        let values: &[*mut c_void] = if n_inputs == 0 || inputs.is_null() {
            &[]
        } else {
            std::slice::from_raw_parts(inputs, n_inputs)
        };
        run_task(task, move || {
            let v = g(state, values, &Scope::new(task))?;
            *output = box_value(v);
            Ok(())
        })
    }
}

fn wrong_inputs(n: usize) -> String {
    format!("tether::Graph: a node got {n} inputs, not those it was added with")
}

// ---- options ---------------------------------------------------------------------------

/// Options of [`Graph::compile`].
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    channel_capacity: Option<usize>,
}

impl CompileOptions {
    /// The defaults: 8 executions in flight.
    pub fn new() -> Self {
        Self::default()
    }
    /// Executions in flight at most (1 to 1,048,576; else compile fails with
    /// TETHER_E_INVALID_ARGUMENT). Beyond it [`Compiled::execute`] fails with
    /// TETHER_E_QUEUE_FULL and [`Compiled::execute_timeout`] waits.
    pub fn channel_capacity(mut self, n: usize) -> Self {
        self.channel_capacity = Some(n);
        self
    }
}

// ---- Graph -----------------------------------------------------------------------------

/// Identities of graphs, so that a [`Node`] cannot be used with another graph (its index
/// would name a node of another type there).
static NEXT_GRAPH: AtomicU64 = AtomicU64::new(1);

/// A pipeline of actor methods ("nodes") fed with an `In`, to compile onto the actors'
/// own threads. A node runs on its actor's default thread (where the constructor ran, so
/// it sees the constructor's `thread_local!`s and, on an [`Actor<S>`](Actor), gets
/// `&mut S`) or on a single-thread group ([`NodeHost`]); it gets references to its
/// inputs' values in the order given and returns its own value.
///
/// ```
/// use std::time::Duration;
/// use tether::{Actor, ActorOptions, CompileOptions, Graph};
///
/// // Two workers, each with a log only its own thread touches.
/// let w0 = Actor::new(&ActorOptions::new().name("worker-0"), Vec::<String>::new).unwrap();
/// let w1 = Actor::new(&ActorOptions::new().name("worker-1"), Vec::<String>::new).unwrap();
///
/// let mut g = Graph::<i64>::new().unwrap();
/// let fwd0 = g.node(&w0, g.input(), |log, x| { log.push(format!("fwd({x})")); x + 1 }).unwrap();
/// let fwd1 = g.node(&w1, fwd0, |log, x| { log.push(format!("fwd({x})")); x + 1 }).unwrap();
/// let bwd1 = g.node(&w1, fwd1, |log, x| { log.push(format!("bwd({x})")); x * 2 }).unwrap();
/// let bwd0 = g.node(&w0, bwd1, |log, x| { log.push(format!("bwd({x})")); x * 2 }).unwrap();
/// let compiled = g.compile(&CompileOptions::new(), bwd0).unwrap(); // Compiled<i64, i64>
///
/// let runs: Vec<_> = [10, 20, 30].map(|b| compiled.execute(b).unwrap()).into();
/// let outs: Vec<i64> = runs.into_iter().map(|r| r.wait().unwrap()).collect();
/// assert_eq!(outs, [48, 88, 128]); // (x + 2) * 4, in order
///
/// // An ordinary call to a worker answers while the graph is compiled. Each pass ran in
/// // batch order (how forward and backward interleave depends on the pipelining).
/// let log = w0.call(|log| log.clone()).unwrap().wait_timeout(Duration::from_secs(5)).unwrap();
/// let fwd: Vec<_> = log.iter().filter(|e| e.starts_with("fwd")).collect();
/// let bwd: Vec<_> = log.iter().filter(|e| e.starts_with("bwd")).collect();
/// assert_eq!(fwd, ["fwd(10)", "fwd(20)", "fwd(30)"]);
/// assert_eq!(bwd, ["bwd(24)", "bwd(44)", "bwd(64)"]);
/// ```
///
/// Values: node values and the input are `Send + Sync + 'static`. `Send`, because each is
/// made on one thread, lent to others and dropped on any; `Sync`, because a value with
/// several consumers (fan-out) is lent to their threads at the same time. The library
/// owns every value and drops each once; an execution's outputs are moved out to the
/// caller by [`Execution::wait`].
///
/// Node functions are `FnMut + Send + 'static`: kept for the compiled graph's life and
/// called once per execution, on their node's one thread (so they may keep state of their
/// own); they may be dropped on any thread.
///
/// Editing or compiling needs `&mut Graph`; while a [`Compiled`] made from it is alive the
/// graph cannot change and a second compile of it fails (both TETHER_E_WRONG_STATE).
/// Dropping the graph leaves its compiled graphs working. Its errors name `graph` as their
/// [`origin`](Error::origin), those of its executions `compiled graph`.
///
/// # What the compiler refuses
///
/// A value that is not `Send` (it would be dropped on another thread):
///
/// ```compile_fail
/// use std::rc::Rc;
/// let w = tether::Actor::new(&tether::ActorOptions::new(), || 0u32).unwrap();
/// let mut g = tether::Graph::<u32>::new().unwrap();
/// let n = g.node(&w, g.input(), |_, x| Rc::new(*x)); // Rc is not Send
/// ```
///
/// nor a value that is not `Sync` (two consumers could borrow it on two threads at once):
///
/// ```compile_fail
/// use std::cell::Cell;
/// let w = tether::Actor::new(&tether::ActorOptions::new(), || 0u32).unwrap();
/// let mut g = tether::Graph::<u32>::new().unwrap();
/// let n = g.node(&w, g.input(), |_, x| Cell::new(*x)); // Cell is not Sync
/// ```
///
/// nor an input of either kind:
///
/// ```compile_fail
/// let g = tether::Graph::<std::rc::Rc<u32>>::new();
/// ```
///
/// A node function that captures something not `Send` (it is dropped on any thread):
///
/// ```compile_fail
/// use std::rc::Rc;
/// let w = tether::Actor::new(&tether::ActorOptions::new(), || 0u32).unwrap();
/// let mut g = tether::Graph::<u32>::new().unwrap();
/// let rc = Rc::new(1);
/// let n = g.node(&w, g.input(), move |_, x| *x + *rc);
/// ```
///
/// or borrows a local (it lives as long as the compiled graph):
///
/// ```compile_fail
/// let w = tether::Actor::new(&tether::ActorOptions::new(), || 0u32).unwrap();
/// let mut g = tether::Graph::<u32>::new().unwrap();
/// let local = 5u32;
/// let n = g.node(&w, g.input(), |_, x| *x + local);
/// ```
///
/// A node's value cannot borrow its state or its inputs (they are lent for the call only):
///
/// ```compile_fail
/// let w = tether::Actor::new(&tether::ActorOptions::new(), || 0u32).unwrap();
/// let mut g = tether::Graph::<u32>::new().unwrap();
/// let n = g.node(&w, g.input(), |state, _| state);
/// ```
///
/// A node on an actor with concurrency groups never gets `&mut S`, on any thread:
///
/// ```compile_fail
/// use std::sync::atomic::AtomicU32;
/// let w = tether::Actor::with_groups(&tether::ActorOptions::new(), &[("io", 1)], || AtomicU32::new(0)).unwrap();
/// let mut g = tether::Graph::<u32>::new().unwrap();
/// let n = g.node(&w, g.input(), |s: &mut AtomicU32, x: &u32| *x);
/// ```
///
/// Edges are typed: a node that takes a `&String` cannot be fed a `u32`:
///
/// ```compile_fail
/// let w = tether::Actor::new(&tether::ActorOptions::new(), || 0u32).unwrap();
/// let mut g = tether::Graph::<u32>::new().unwrap();
/// let n = g.node(&w, g.input(), |_, s: &String| s.len());
/// ```
pub struct Graph<In> {
    handle: sys::tether_graph,
    id: u64,
    // fn(In): a Graph never holds an In.
    _in: PhantomData<fn(In)>,
}

impl<In> std::fmt::Debug for Graph<In> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("handle", &self.handle)
            .finish()
    }
}

impl<In: Send + Sync + 'static> Graph<In> {
    /// An empty graph.
    pub fn new() -> Result<Graph<In>, Error> {
        crate::check_version()?;
        let mut handle = sys::tether_graph { id: 0 };
        // SAFETY: out-pointer to a local.
        Error::check(unsafe { sys::tether_graph_create(&mut handle) }).map_err(in_graph)?;
        Ok(Graph {
            handle,
            id: NEXT_GRAPH.fetch_add(1, Ordering::Relaxed),
            _in: PhantomData,
        })
    }

    /// The execution's input, as a node to feed others with (it cannot be an output).
    pub fn input(&self) -> Node<In> {
        Node::new(self.id, sys::TETHER_GRAPH_INPUT)
    }

    /// Adds a node running `f(state, inputs)` on `host` ([`NodeHost`]: an `&Actor<S>`
    /// gives `&mut S`; a `&GroupedActor<S>` or one of its single-thread groups gives
    /// `&S`), fed by `inputs` in that order (one node: `&T`; a tuple of nodes: a tuple of
    /// references). Returns the node of its value. A panic fails that execution with
    /// TETHER_E_PANIC; later executions still run.
    ///
    /// Errors: TETHER_E_INVALID_ARGUMENT (an input node of another graph),
    /// TETHER_E_NOT_FOUND (no such group), TETHER_E_WRONG_STATE (a compiled graph made
    /// from this graph is alive), TETHER_E_INVALID_HANDLE (a released actor).
    pub fn node<H, I, T, F>(&mut self, host: &H, inputs: I, mut f: F) -> Result<Node<T>, Error>
    where
        H: NodeHost,
        I: Inputs,
        T: Send + Sync + 'static,
        F: for<'s, 'a> FnMut(H::Access<'s>, I::Refs<'a>) -> T + Send + 'static,
    {
        self.add(
            host,
            inputs,
            move |state, values: &[*mut c_void], _: &Scope| {
                // SAFETY: called only by node_trampoline with this node's state and inputs,
                // whose types are those of `I` (edges added in I's order, from this graph).
                let refs = unsafe { I::refs(values) }.ok_or_else(|| wrong_inputs(values.len()))?;
                Ok(f(unsafe { H::access(state) }, refs))
            },
        )
    }

    /// Like [`node`](Self::node), for a function that may fail: `Err(e)` fails that
    /// execution with TETHER_E_TASK_FAILED and `e`'s text (its later nodes do not run).
    pub fn try_node<H, I, T, E, F>(
        &mut self,
        host: &H,
        inputs: I,
        mut f: F,
    ) -> Result<Node<T>, Error>
    where
        H: NodeHost,
        I: Inputs,
        T: Send + Sync + 'static,
        E: Display,
        F: for<'s, 'a> FnMut(H::Access<'s>, I::Refs<'a>) -> Result<T, E> + Send + 'static,
    {
        self.add(
            host,
            inputs,
            move |state, values: &[*mut c_void], _: &Scope| {
                // SAFETY: as in `node`.
                let refs = unsafe { I::refs(values) }.ok_or_else(|| wrong_inputs(values.len()))?;
                f(unsafe { H::access(state) }, refs).map_err(|e| e.to_string())
            },
        )
    }

    /// Like [`node`](Self::node), and `f` also gets the step's [`Scope`]:
    /// [`Scope::stop_requested`] turns true when the compiled graph is dropped (or the
    /// actor is stopped with `StopMode::Cancel`) while the node runs, and
    /// [`Scope::fail`] fails the execution (the value returned is then dropped).
    /// [`Scope::spawn`] fails with TETHER_E_WRONG_STATE in a node (a step ends when its
    /// function returns).
    pub fn node_scoped<H, I, T, F>(
        &mut self,
        host: &H,
        inputs: I,
        mut f: F,
    ) -> Result<Node<T>, Error>
    where
        H: NodeHost,
        I: Inputs,
        T: Send + Sync + 'static,
        F: for<'s, 'a, 'c> FnMut(H::Access<'s>, I::Refs<'a>, &'c Scope) -> T + Send + 'static,
    {
        self.add(
            host,
            inputs,
            move |state, values: &[*mut c_void], scope: &Scope| {
                // SAFETY: as in `node`.
                let refs = unsafe { I::refs(values) }.ok_or_else(|| wrong_inputs(values.len()))?;
                Ok(f(unsafe { H::access(state) }, refs, scope))
            },
        )
    }

    /// Every node goes in through here: `g` is the node function in its raw form.
    fn add<H, I, T, G>(&mut self, host: &H, inputs: I, g: G) -> Result<Node<T>, Error>
    where
        H: NodeHost,
        I: Inputs,
        T: Send + Sync + 'static,
        G: RawNode<T>,
    {
        self.add_raw(host, inputs, g).map_err(in_graph)
    }

    fn add_raw<H, I, T, G>(&mut self, host: &H, inputs: I, g: G) -> Result<Node<T>, Error>
    where
        H: NodeHost,
        I: Inputs,
        T: Send + Sync + 'static,
        G: RawNode<T>,
    {
        // Checked before anything is added: an edge from another graph's node would feed
        // a value of another type (and the edges go in after the node).
        let edges = inputs.edges();
        if edges.iter().any(|&(graph, _)| graph != self.id) {
            return Err(Error::new(
                sys::TETHER_E_INVALID_ARGUMENT,
                "tether::Graph: an input is a node of another graph",
            ));
        }
        let mut index = 0u32;
        let arg: *mut c_void = Box::into_raw(Box::new(g)).cast();
        // SAFETY: the group pointer is NULL or valid while `host` is borrowed; the Box<G>
        // belongs to the library from here and is freed once by free_boxed::<G> (also when
        // the call fails); `index` is a local.
        Error::check(unsafe {
            sys::tether_graph_add_node(
                self.handle,
                host.raw_actor(),
                host.raw_group(),
                Some(node_trampoline::<T, G>),
                arg,
                Some(free_boxed::<G>),
                &mut index,
            )
        })?;
        // If an edge fails here (only TETHER_E_NO_MEMORY could: `&mut self` excludes a
        // compile in between), the node stays with fewer inputs than its function takes;
        // its step then fails (`I::refs` checks the count) instead of misreading a value.
        for (_, from) in edges {
            // SAFETY: plain call on our handle.
            Error::check(unsafe { sys::tether_graph_add_edge(self.handle, from, index) })?;
        }
        Ok(Node::new(self.id, index))
    }

    /// Checks the graph and installs its loop on the threads of its nodes, with `outputs`
    /// (one node, or a tuple of nodes) as what each execution returns.
    ///
    /// Errors (the graph's error, [`error`](Self::error), which names the node, the cycle
    /// or the busy thread): TETHER_E_INVALID_ARGUMENT (a cycle, a node not reachable from
    /// the input, a node on a group of several threads, an output of another graph or
    /// the input, bad options), TETHER_E_THREAD_BUSY (a thread already hosts another
    /// compiled graph; nothing is installed), TETHER_E_ACTOR_DEAD, TETHER_E_SHUTDOWN, and
    /// TETHER_E_WRONG_STATE while a compiled graph made from this one is alive.
    pub fn compile<O: Outputs>(
        &mut self,
        options: &CompileOptions,
        outputs: O,
    ) -> Result<Compiled<In, O::Values>, Error> {
        self.compile_raw(options, outputs).map_err(in_graph)
    }

    fn compile_raw<O: Outputs>(
        &mut self,
        options: &CompileOptions,
        outputs: O,
    ) -> Result<Compiled<In, O::Values>, Error> {
        let mut indices = Vec::new();
        for (graph, index) in outputs.nodes() {
            if graph != self.id {
                return Err(Error::new(
                    sys::TETHER_E_INVALID_ARGUMENT,
                    "tether::Graph::compile: an output is a node of another graph",
                ));
            }
            // The library refuses it too; here it would also be unsound (the input is
            // dropped by input_drop, an output is taken by the caller).
            if index == sys::TETHER_GRAPH_INPUT {
                return Err(Error::new(
                    sys::TETHER_E_INVALID_ARGUMENT,
                    "tether::Graph::compile: the input cannot be an output",
                ));
            }
            indices.push(index);
        }
        // SAFETY: the array is a live local of indices.len() entries.
        Error::check(unsafe {
            sys::tether_graph_set_outputs(self.handle, indices.as_ptr(), indices.len())
        })?;
        let mut o = std::mem::MaybeUninit::<sys::tether_compile_options>::zeroed();
        // SAFETY: _init fills every field.
        let mut o = unsafe {
            sys::tether_compile_options_init(o.as_mut_ptr());
            o.assume_init()
        };
        if let Some(c) = options.channel_capacity {
            o.channel_capacity = c;
        }
        o.value_drop = Some(drop_value);
        let mut handle = sys::tether_compiled { id: 0 };
        // SAFETY: `o` and the out-pointer are locals. `&mut self` keeps the outputs just
        // set from being replaced before the compile reads them.
        let st = unsafe { sys::tether_graph_compile(self.handle, &o, &mut handle) };
        if st != sys::TETHER_OK {
            let fallback = Error::from_status(st); // before the next call changes it
            return Err(self.error().unwrap_or(fallback));
        }
        Ok(Compiled {
            handle,
            origin: Some(Arc::from("compiled graph")),
            outputs: indices.len(),
            take: take_outputs::<O>,
            _t: PhantomData,
        })
    }

    /// Why the last compile failed (its code is what compile returned; its message names
    /// the node, the cycle or the busy thread); `None` if it succeeded or none ran.
    pub fn error(&self) -> Option<Error> {
        let mut e = sys::tether_error { id: 0 };
        // SAFETY: out-pointer to a local; from_handle releases the handle.
        unsafe { sys::tether_graph_error(self.handle, &mut e) };
        (e.id != 0).then(|| in_graph(Error::from_handle(e)))
    }
}

/// Names `graph` as the error's origin (graph errors are rare: the text is made then).
fn in_graph(e: Error) -> Error {
    e.at(&Some(Arc::from("graph")))
}

impl<In> Drop for Graph<In> {
    /// Releases the description; compiled graphs made from it live on.
    fn drop(&mut self) {
        // SAFETY: we own the handle and release it exactly once.
        unsafe { sys::tether_graph_release(self.handle) };
    }
}

/// `Outputs::take` with its error.
///
/// # Safety
/// As `Outputs::take`.
unsafe fn take_outputs<O: Outputs>(outs: &[*mut c_void]) -> Result<O::Values, Error> {
    // SAFETY: the caller's contract.
    unsafe { O::take(outs) }.ok_or_else(|| {
        Error::new(
            sys::TETHER_E_INTERNAL,
            "tether::Execution: the execution succeeded without all of its outputs",
        )
    })
}

/// What takes an execution's outputs: `take_outputs::<O>` of the compile's `O`.
type TakeFn<Out> = unsafe fn(&[*mut c_void]) -> Result<Out, Error>;

// ---- Compiled --------------------------------------------------------------------------

/// A graph's loops installed on its actors' threads: feed it inputs with
/// [`execute`](Self::execute). Up to the channel capacity of executions are in flight
/// (pipelined), and they complete in the order they were started.
///
/// Dropping it tears the loops down at once, without waiting for user code — also while a
/// node runs: executions not yet ended are CANCELLED, each thread is free for another
/// graph once its running node returns, and every value, input and node function is
/// still dropped exactly once, as the steps drain.
pub struct Compiled<In, Out> {
    handle: sys::tether_compiled,
    // `compiled graph`, shared with the executions' futures.
    origin: Option<Arc<str>>,
    outputs: usize,
    take: TakeFn<Out>,
    // fn(In) -> Out: a Compiled holds neither; In goes in (Send, Sync), Out comes out
    // (Send), so it is Send + Sync whatever they are.
    _t: PhantomData<fn(In) -> Out>,
}

impl<In, Out> std::fmt::Debug for Compiled<In, Out> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("handle", &self.handle)
            .field("outputs", &self.outputs)
            .finish()
    }
}

impl<In: Send + Sync + 'static, Out> Compiled<In, Out> {
    fn execute_raw(&self, input: In, timeout: Option<Duration>) -> Result<Execution<Out>, Error> {
        let p = box_value(input);
        let mut f = sys::tether_future { id: 0 };
        // SAFETY: the slot belongs to the library from here, dropped once by drop_value
        // (once the execution has ended, or on failure before the call returns).
        let st = unsafe {
            match timeout {
                None => sys::tether_compiled_execute(self.handle, p, Some(drop_value), &mut f),
                Some(t) => sys::tether_compiled_execute_timeout(
                    self.handle,
                    p,
                    Some(drop_value),
                    &mut f,
                    timeout_ns(Some(t)),
                ),
            }
        };
        Error::check(st).map_err(|e| e.at(&self.origin))?;
        Ok(Execution {
            future: Future::from_handle(f, self.origin.clone()),
            taken: AtomicBool::new(false),
            outputs: self.outputs,
            take: self.take,
            _out: PhantomData,
        })
    }

    /// Starts one execution of `input` (moved into the graph, lent to its nodes, dropped
    /// once the execution has ended). Errors: TETHER_E_QUEUE_FULL with channel-capacity
    /// executions in flight, TETHER_E_SHUTDOWN / TETHER_E_ACTOR_DEAD (an actor of the
    /// graph is stopped / dead); the input is dropped then.
    pub fn execute(&self, input: In) -> Result<Execution<Out>, Error> {
        self.execute_raw(input, None)
    }

    /// Like [`execute`](Self::execute), but with channel-capacity executions in flight
    /// waits up to `timeout` for one to end (then an error with `is_timeout()`;
    /// TETHER_E_DEADLOCK from a thread of the graph, where only its own steps could make
    /// room).
    pub fn execute_timeout(&self, timeout: Duration, input: In) -> Result<Execution<Out>, Error> {
        self.execute_raw(input, Some(timeout))
    }
}

impl<In, Out> Drop for Compiled<In, Out> {
    fn drop(&mut self) {
        // SAFETY: we own the handle and release it exactly once; it never waits.
        unsafe { sys::tether_compiled_release(self.handle) };
    }
}

// ---- Execution -------------------------------------------------------------------------

/// One execution of a [`Compiled`] graph: its outputs (`Out`: one value, or a tuple)
/// once it SUCCEEDED, else the first failing node's error (TETHER_E_CANCELLED if it was
/// cancelled or its graph dropped first).
///
/// Wait for it with [`wait`](Self::wait) / [`wait_timeout`](Self::wait_timeout), or
/// `.await` it (built on `tether_future_on_done`: no thread blocks). The outputs are moved
/// out once; outputs never taken are dropped with the execution (by the library, on the
/// thread that drops it, or on the thread that ends the execution if that comes later).
/// Dropping an `Execution` does not cancel it.
pub struct Execution<Out> {
    future: Future<()>,
    // Set by the one taker of the outputs: the library's second `tether_future_outputs`
    // would hand out the same pointers again.
    taken: AtomicBool,
    outputs: usize,
    take: TakeFn<Out>,
    // fn() -> Out: hands an Out out, and Out: Send; the execution is Send + Sync.
    _out: PhantomData<fn() -> Out>,
}

impl<Out> std::fmt::Debug for Execution<Out> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Execution")
            .field("future", &self.future.raw())
            .field("taken", &self.taken)
            .finish()
    }
}

impl<Out> Execution<Out> {
    /// The state, without blocking: Pending until the execution has ended, then
    /// Succeeded, Failed or Cancelled.
    pub fn poll(&self) -> State {
        self.future.state_now()
    }

    /// Cancels the execution: its nodes not yet started never run.
    pub fn cancel(&self) {
        self.future.cancel();
    }

    /// Waits without limit, then moves the outputs out, or returns the error.
    pub fn wait(self) -> Result<Out, Error> {
        // SAFETY: plain call on our handle.
        Error::check(unsafe { sys::tether_future_wait(self.future.raw(), -1) })
            .map_err(|e| e.at(self.future.origin()))?;
        self.outcome()
    }

    /// Waits at most `timeout` (a timeout is an error with `is_timeout()` and leaves the
    /// execution usable), then moves the outputs out, or returns the error. The outputs
    /// can be taken once: a second successful wait is TETHER_E_WRONG_STATE.
    pub fn wait_timeout(&self, timeout: Duration) -> Result<Out, Error> {
        // SAFETY: plain call on our handle.
        Error::check(unsafe {
            sys::tether_future_wait(self.future.raw(), timeout_ns(Some(timeout)))
        })
        .map_err(|e| e.at(self.future.origin()))?;
        self.outcome()
    }

    /// Runs `f` once when the execution has ended (see [`Future::on_done`]).
    pub fn on_done<F>(&self, f: F) -> Result<(), Error>
    where
        F: FnOnce() + Send + 'static,
    {
        self.future.on_done(f)
    }

    /// The outcome of an ended execution; errors name `compiled graph`.
    fn outcome(&self) -> Result<Out, Error> {
        self.outcome_raw().map_err(|e| e.at(self.future.origin()))
    }

    fn outcome_raw(&self) -> Result<Out, Error> {
        if self.future.state_now() != State::Succeeded {
            return Err(self.future.failure());
        }
        if self.taken.swap(true, Ordering::AcqRel) {
            return Err(Error::new(
                sys::TETHER_E_WRONG_STATE,
                "tether::Execution: the outputs were already taken",
            ));
        }
        let mut outs = vec![std::ptr::null_mut::<c_void>(); self.outputs];
        // SAFETY: `outs` has as many entries as the graph's outputs; the flag above makes
        // this the only call, so the values pass to us here (a failure hands nothing).
        Error::check(unsafe {
            sys::tether_future_outputs(self.future.raw(), outs.as_mut_ptr(), outs.len())
        })?;
        // SAFETY: the first tether_future_outputs of a SUCCEEDED execution of a graph
        // compiled with the outputs `take` was made for; we own the pointers now.
        unsafe { (self.take)(&outs) }
    }
}

impl<Out> std::future::Future for Execution<Out> {
    type Output = Result<Out, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match this.future.poll_terminal(cx) {
            Poll::Ready(Ok(())) => Poll::Ready(this.outcome()),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<Out> future_sealed::Sealed for Execution<Out> {}
impl<Out> FutureHandle for Execution<Out> {
    fn raw_future(&self) -> sys::tether_future {
        self.future.raw()
    }
}
