//! # tether — threads you can trust, from Rust
//!
//! A safe binding of the tether C library: closures instead of function pointers,
//! `Result` instead of status codes, `Drop` instead of release.
//!
//! - [`Runner`]: a scope of threads (a target and its nested threads, [`Scope::spawn`],
//!   each with a [`JoinHandle`] for its value) whose first error is never lost, even while
//!   the others still run; [`Runner::join_timeout`] gives the value or that error, and
//!   [`Runner::join_async`] the same to `.await`.
//! - [`Executor`]: one OS thread for life; [`Future`] for what you submit to it
//!   (blocking waits, or `.await`).
//! - [`Actor<S>`](Actor): state built ON its pinned thread and never moved, so it need not
//!   be `Send` (`Rc<RefCell<_>>`, `thread_local!` set by the constructor); calls get
//!   `&mut S`. [`GroupedActor<S>`](GroupedActor): an actor with concurrency groups, whose
//!   state is shared with the groups' threads, so `S: Sync` and calls get `&S`.
//! - [`Scope`]: the context of a running task, to start nested threads that belong to it
//!   ([`Scope::spawn`]): in a runner, in an executor task ([`Executor::submit_scoped`]) or
//!   in an actor method ([`Actor::call_scoped`]).
//! - [`Graph<In>`](Graph): a pipeline of actor methods ([`Node<T>`](Node)s, typed edges)
//!   compiled onto the actors' own threads ([`Compiled<In, Out>`](Compiled)); each
//!   [`execute`](Compiled::execute) gives an [`Execution<Out>`](Execution) whose wait (or
//!   `.await`) yields the outputs, in order, pipelined.
//!
//! Every failure is an [`Error`]: match on its [`ErrorKind`] (one variant per status
//! code); its `Display` names the actor, executor, runner or graph and the thread.
//!
//! Every closure runs behind `catch_unwind`: a panic becomes a `TETHER_E_PANIC` [`Error`]
//! with the panic message and never crosses into C. Closures handed to the library are
//! `Send + 'static`, because the library may drop one on any thread (when the work is
//! cancelled or rejected).
//!
//! ```
//! use std::time::Duration;
//! use tether::{Runner, RunnerOptions, State};
//!
//! let runner = Runner::spawn(&RunnerOptions::new(), |scope| {
//!     scope.spawn("nested", |_| -> Result<(), String> { panic!("nested thread died") })?;
//!     Ok::<_, tether::Error>(())
//! }).unwrap();
//! let err = runner.join_timeout(Duration::from_secs(5)).unwrap_err();
//! assert_eq!(err.kind(), tether::ErrorKind::Panic);
//! assert_eq!((err.thread_name(), err.message()), ("nested", "nested thread died"));
//! assert_eq!(runner.poll(), State::Failed);
//! ```
//!
//! The library's version is checked against the one this crate was written for when the
//! first runner, executor, actor or graph is made: a mismatch is an error (see
//! [`check_version`]), never a crash.
//!
//! # What the compiler refuses
//!
//! A value of the actor's state that is not `Send` cannot leave its thread:
//!
//! ```compile_fail
//! use std::rc::Rc;
//! let actor = tether::Actor::new(&tether::ActorOptions::new(), || Rc::new(1)).unwrap();
//! let leaked = actor.call(|rc: &mut Rc<i32>| rc.clone()); // Rc is not Send
//! ```
//!
//! An actor with concurrency groups shares its state with other threads, so it needs
//! `S: Sync`:
//!
//! ```compile_fail
//! use std::cell::Cell;
//! let opts = tether::ActorOptions::new();
//! let actor = tether::Actor::with_groups(&opts, &[("io", 1)], || Cell::new(1)); // Cell is not Sync
//! ```
//!
//! and no call of it gets `&mut S`, not even on the default thread (a group's `&S` could
//! be alive at the same time):
//!
//! ```compile_fail
//! use std::sync::atomic::AtomicU32;
//! let opts = tether::ActorOptions::new();
//! let actor = tether::Actor::with_groups(&opts, &[("io", 1)], || AtomicU32::new(1)).unwrap();
//! actor.call(|n: &mut AtomicU32| *n.get_mut() += 1);
//! ```
//!
//! A `Scope` stays on its callback's thread:
//!
//! ```compile_fail
//! fn must_be_send<T: Send>(_: T) {}
//! tether::Runner::spawn(&tether::RunnerOptions::new(), |scope| {
//!     must_be_send(scope); // &Scope is not Send
//!     Ok::<(), String>(())
//! });
//! ```
//!
//! nor outlives it (here: out of an actor method):
//!
//! ```compile_fail
//! let actor = tether::Actor::new(&tether::ActorOptions::new(), || 0u8).unwrap();
//! let leaked = actor.call_scoped(|_, scope| scope); // not 'static
//! ```
//!
//! Nested threads may outlive their starter, so their closures are `'static`:
//!
//! ```compile_fail
//! tether::Runner::spawn(&tether::RunnerOptions::new(), |scope| {
//!     let local = String::from("borrowed");
//!     scope.spawn("n", |_| { println!("{}", &local); Ok::<(), String>(()) })
//! });
//! ```
//!
//! The constructor closure moves to the actor's thread, so it must be `Send`:
//!
//! ```compile_fail
//! use std::rc::Rc;
//! let rc = Rc::new(5);
//! let actor = tether::Actor::new(&tether::ActorOptions::new(), move || *rc);
//! ```
#![warn(missing_docs)]

mod actor;
mod error;
mod executor;
mod ffi;
mod graph;
mod join;
mod runner;
mod util;

pub use tether_sys as sys;

pub use actor::{
    Actor, ActorOptions, ActorState, Exclusive, Group, GroupedActor, Shared, StopMode,
};
pub use error::{Error, ErrorKind};
pub use executor::{wait_any, Executor, ExecutorOptions, Future, FutureHandle, Stats};
pub use graph::{CompileOptions, Compiled, Execution, Graph, Inputs, Node, NodeHost, Outputs};
pub use join::JoinHandle;
pub use runner::{Join, Runner, RunnerOptions, Scope};

/// The state of a runner, a future or an actor call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// Queued, not started.
    Pending,
    /// Started.
    Running,
    /// Terminal: every thread returned Ok.
    Succeeded,
    /// Terminal: at the first error.
    Failed,
    /// Terminal: cancelled, without an error.
    Cancelled,
}

impl State {
    pub(crate) fn from_raw(s: i32) -> State {
        match s {
            sys::TETHER_PENDING => State::Pending,
            sys::TETHER_RUNNING => State::Running,
            sys::TETHER_SUCCEEDED => State::Succeeded,
            sys::TETHER_CANCELLED => State::Cancelled,
            _ => State::Failed,
        }
    }

    /// Succeeded, Failed or Cancelled: once reported, never changes.
    pub fn is_terminal(self) -> bool {
        matches!(self, State::Succeeded | State::Failed | State::Cancelled)
    }
}

/// The library's version string ("0.1.0").
pub fn version() -> &'static str {
    // SAFETY: static storage (header section 1).
    unsafe { std::ffi::CStr::from_ptr(sys::tether_version_string()) }
        .to_str()
        .unwrap_or("")
}

/// Checks, once per process, that the loaded library can serve this crate: the same major
/// version as the header `tether-sys` declares, and at least its minor version (the
/// functions it calls exist). A shared library upgraded or downgraded under a binary is
/// where this fails; the bundled build always matches. Runners, executors, actors and
/// graphs call it before they are made, so a mismatch is an error of kind `WrongState`
/// that names both versions, not a crash.
///
/// ```
/// tether::check_version().unwrap();
/// ```
pub fn check_version() -> Result<(), Error> {
    static CHECKED: std::sync::OnceLock<Result<(), Error>> = std::sync::OnceLock::new();
    // SAFETY: never fails (header section 1).
    CHECKED
        .get_or_init(|| compatible(sys::TETHER_VERSION, unsafe { sys::tether_version() }))
        .clone()
}

/// The rule of [`check_version`] for a header version `declared` and a library version
/// `loaded`, both `major << 16 | minor << 8 | patch`.
pub(crate) fn compatible(declared: u32, loaded: u32) -> Result<(), Error> {
    let text = |v: u32| format!("{}.{}.{}", v >> 16, (v >> 8) & 0xff, v & 0xff);
    if loaded >> 16 == declared >> 16 && (loaded >> 8) >= (declared >> 8) {
        return Ok(());
    }
    Err(Error::new(
        sys::TETHER_E_WRONG_STATE,
        format!(
            "the loaded libtether is version {}, but this crate was written for the {} header: \
             it needs the same major version and at least the same minor version \
             (install a matching libtether, or build with the `bundled` feature)",
            text(loaded),
            text(declared)
        ),
    ))
}

/// How many threads the library created and has not yet joined (a testing aid).
pub fn unjoined_threads() -> usize {
    // SAFETY: never fails.
    unsafe { sys::tether_debug_unjoined_threads() }
}

/// Every Rust snippet of the binding's README, compiled and run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeSnippets;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_graph;
#[cfg(test)]
mod tests_idiom;
