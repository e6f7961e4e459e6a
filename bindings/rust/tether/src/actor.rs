//! `Actor<S>`: state that lives on one pinned thread (header section 8).
use std::convert::Infallible;
use std::ffi::{c_void, CString};
use std::fmt::Display;
use std::marker::PhantomData;
use std::time::Duration;

use tether_sys as sys;

use crate::executor::{kept_errors, new_stats};
use crate::util::{cstring, free_boxed, into_arg, run_task, set_result, take_closure, timeout_ns};
use crate::{Error, Executor, Future, Stats};

/// Options of [`Actor::new`].
#[derive(Debug, Clone, Default)]
pub struct ActorOptions {
    name: Option<String>,
    executor: sys::tether_executor,
    groups: Vec<(String, u32)>,
    mailbox_capacity: Option<usize>,
}

impl ActorOptions {
    /// The defaults: a dedicated thread named "tether-actor", no groups, unbounded mailbox.
    pub fn new() -> Self {
        Self::default()
    }
    /// The actor's name; it names its threads ("name", "name/io").
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Shares `executor`'s thread instead of a dedicated one. The executor's thread lives
    /// as long as an actor uses it, even if the `Executor` is dropped first.
    pub fn executor(mut self, executor: &Executor) -> Self {
        self.executor = executor.handle;
        self
    }
    /// Adds a named concurrency group running on `threads` threads of its own. An actor
    /// with groups shares its state across threads: see [`Actor::call_in`].
    pub fn group(mut self, name: impl Into<String>, threads: u32) -> Self {
        self.groups.push((name.into(), threads));
        self
    }
    /// Bounds the calls queued and not yet started (0 = unbounded).
    pub fn mailbox_capacity(mut self, n: usize) -> Self {
        self.mailbox_capacity = Some(n);
        self
    }
}

/// How [`Actor::stop`] treats queued calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopMode {
    /// Queued calls still run.
    Drain,
    /// Queued calls are cancelled; running ones see a stop request.
    Cancel,
}

/// The state of an actor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActorState {
    /// Constructed, or its constructor still queued or running.
    Alive,
    /// The constructor failed; its error.
    Dead(Error),
    /// Stopped (or stopping).
    Stopped,
}

/// State `S` that lives on ONE pinned thread: it is built there by the constructor
/// closure, every default-group call runs there in order, and it is dropped there. So `S`
/// need not be `Send`: `Rc<RefCell<_>>` and `thread_local!` set by the constructor work.
///
/// Closures going in are `Send + 'static` (they move to the actor's thread, and may be
/// dropped on any thread if they never run); values coming out are `Send`, so nothing of
/// `S` that is not `Send` can ever leave its thread.
///
/// Dropping an `Actor` lets the queued calls run (drain), then drops `S` on its thread.
///
/// ```
/// use std::{cell::RefCell, rc::Rc, time::Duration};
/// use tether::{Actor, ActorOptions};
///
/// // Rc is not Send: the state never leaves the actor's thread.
/// let actor = Actor::new(&ActorOptions::new().name("log"), || Rc::new(RefCell::new(Vec::new()))).unwrap();
/// actor.call(|log: &mut Rc<RefCell<Vec<String>>>| log.borrow_mut().push("hello".into())).unwrap();
/// let n = actor.call(|log| log.borrow().len()).unwrap();
/// assert_eq!(n.wait_timeout(Duration::from_secs(5)).unwrap(), 1);
/// ```
#[derive(Debug)]
pub struct Actor<S: 'static> {
    handle: sys::tether_actor,
    has_groups: bool,
    // fn(S): an Actor never holds or hands out an S (the S lives on the actor's thread,
    // and only Send values come out of it), so the handle is Send + Sync whatever S is.
    _s: PhantomData<fn(S)>,
}

impl<S: 'static> Actor<S> {
    /// Creates the actor and queues `ctor` on its thread: `S` is built there. Returns at
    /// once; calls queue behind the constructor. A panicking constructor makes the actor
    /// DEAD and its calls fail with TETHER_E_ACTOR_DEAD (cause: the panic).
    pub fn new<F>(options: &ActorOptions, ctor: F) -> Result<Actor<S>, Error>
    where
        F: FnOnce() -> S + Send + 'static,
    {
        Self::try_new(options, move || Ok::<S, Infallible>(ctor()))
    }

    /// Like [`new`](Self::new), with a constructor that may fail: `Err(e)` makes the actor
    /// DEAD with TETHER_E_TASK_FAILED and `e`'s text.
    pub fn try_new<F, E>(options: &ActorOptions, ctor: F) -> Result<Actor<S>, Error>
    where
        F: FnOnce() -> Result<S, E> + Send + 'static,
        E: Display,
    {
        unsafe extern "C" fn ctor_trampoline<S: 'static, F, E>(
            task: *mut sys::tether_task,
            arg: *mut c_void,
            state_out: *mut *mut c_void,
        ) -> sys::tether_status
        where
            F: FnOnce() -> Result<S, E> + Send + 'static,
            E: Display,
        {
            // SAFETY: `arg` is the Option<F> boxed by try_new; `state_out` is the
            // library's out-pointer; `task` is this callback's.
            unsafe {
                let Some(f) = take_closure::<F>(arg) else {
                    return sys::TETHER_E_INTERNAL;
                };
                run_task(task, move || match f() {
                    Ok(s) => {
                        *state_out = into_arg(s);
                        Ok(())
                    }
                    Err(e) => Err(e.to_string()),
                })
            }
        }

        let mut o = std::mem::MaybeUninit::<sys::tether_actor_options>::zeroed();
        // SAFETY: _init fills every field.
        let mut o = unsafe {
            sys::tether_actor_options_init(o.as_mut_ptr());
            o.assume_init()
        };
        let name: Option<CString> = options.name.as_deref().map(cstring);
        if let Some(n) = &name {
            o.name = n.as_ptr();
        }
        o.executor = options.executor;
        let group_names: Vec<CString> = options.groups.iter().map(|(n, _)| cstring(n)).collect();
        let specs: Vec<sys::tether_group_spec> = group_names
            .iter()
            .zip(&options.groups)
            .map(|(n, (_, threads))| sys::tether_group_spec {
                name: n.as_ptr(),
                threads: *threads,
            })
            .collect();
        if !specs.is_empty() {
            o.groups = specs.as_ptr();
            o.group_count = specs.len();
        }
        if let Some(m) = options.mailbox_capacity {
            o.mailbox_capacity = m;
        }
        let mut handle = sys::tether_actor { id: 0 };
        // SAFETY: `o`, the names and the specs outlive the call. The ctor's arg box is
        // freed exactly once by free_boxed; the state is a Box<S> freed by the dtor,
        // free_boxed::<S>, on the actor's default thread (where S was built).
        let st = unsafe {
            sys::tether_actor_create(
                &o,
                Some(ctor_trampoline::<S, F, E>),
                Some(free_boxed::<S>),
                into_arg(Some(ctor)),
                Some(free_boxed::<Option<F>>),
                &mut handle,
            )
        };
        Error::check(st)?;
        Ok(Actor {
            handle,
            has_groups: !specs.is_empty(),
            _s: PhantomData,
        })
    }

    /// `f` receives the raw state pointer; the public wrappers turn it into `&mut S` (the
    /// default thread, no groups) or `&S`, so no `&mut S` is ever made where it could alias.
    fn call_raw<F, R>(
        &self,
        group: Option<&str>,
        f: F,
        out: *mut sys::tether_future,
        timeout: Option<Duration>,
    ) -> sys::tether_status
    where
        F: FnOnce(*mut S) -> R + Send + 'static,
        R: Send + 'static,
    {
        unsafe extern "C" fn trampoline<S: 'static, F, R, const KEEP: bool>(
            task: *mut sys::tether_task,
            state: *mut c_void,
            arg: *mut c_void,
        ) -> sys::tether_status
        where
            F: FnOnce(*mut S) -> R + Send + 'static,
            R: Send + 'static,
        {
            // SAFETY: `arg` is the Option<F> boxed by call_raw; `state` is the Box<S> made
            // by the constructor, live until the destructor, which runs after every call.
            unsafe {
                let Some(f) = take_closure::<F>(arg) else {
                    return sys::TETHER_E_INTERNAL;
                };
                let s = state.cast::<S>();
                // Fire and forget (KEEP false): nobody can take a value, so it is dropped
                // here rather than handed to the library.
                run_task(task, move || {
                    let v = f(s);
                    if KEEP {
                        set_result(task, v)
                    } else {
                        Ok(())
                    }
                })
            }
        }
        let group: Option<CString> = group.map(cstring);
        // SAFETY: the group name outlives the call; the arg box is freed exactly once by
        // free_boxed (also on failure); `out` is NULL or a local of the caller.
        unsafe {
            let g = group.as_ref().map_or(std::ptr::null(), |g| g.as_ptr());
            let m: sys::tether_method_fn = if out.is_null() {
                trampoline::<S, F, R, false>
            } else {
                trampoline::<S, F, R, true>
            };
            let arg = into_arg(Some(f));
            let drop = Some(free_boxed::<Option<F>> as sys::tether_drop_fn);
            match timeout {
                None => sys::tether_actor_call(self.handle, g, Some(m), arg, drop, out),
                Some(t) => sys::tether_actor_call_timeout(
                    self.handle,
                    g,
                    Some(m),
                    arg,
                    drop,
                    out,
                    timeout_ns(Some(t)),
                ),
            }
        }
    }

    fn refuse_mut_with_groups(&self) -> Result<(), Error> {
        if self.has_groups {
            Err(Error::new(
                sys::TETHER_E_WRONG_STATE,
                "call/tell give &mut S, which an actor with concurrency groups shares with \
                 other threads: use call_ref and interior mutability",
            ))
        } else {
            Ok(())
        }
    }

    /// Queues `f(&mut state)` on the actor's default thread, after the calls queued before
    /// it, and returns a [`Future`] of its value. A panic fails only this call's future.
    ///
    /// An actor with concurrency groups shares its state with the group threads, so `&mut`
    /// access would race: there this returns TETHER_E_WRONG_STATE; use
    /// [`call_ref`](Self::call_ref).
    pub fn call<F, R>(&self, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce(&mut S) -> R + Send + 'static,
        R: Send + 'static,
    {
        self.refuse_mut_with_groups()?;
        let mut h = sys::tether_future { id: 0 };
        // SAFETY (of the &mut): without groups every call runs on the default thread, one
        // at a time, after the constructor and before the destructor: access is exclusive.
        Error::check(self.call_raw(None, move |s: *mut S| f(unsafe { &mut *s }), &mut h, None))?;
        Ok(Future::from_handle(h))
    }

    /// Fire-and-forget [`call`](Self::call): a failure is counted and kept by the actor
    /// ([`errors`](Self::errors)).
    pub fn tell<F>(&self, f: F) -> Result<(), Error>
    where
        F: FnOnce(&mut S) + Send + 'static,
    {
        self.refuse_mut_with_groups()?;
        // SAFETY (of the &mut): as in `call`.
        Error::check(self.call_raw(
            None,
            move |s: *mut S| f(unsafe { &mut *s }),
            std::ptr::null_mut(),
            None,
        ))
    }

    /// Like [`call`](Self::call), but on a full bounded mailbox waits up to `timeout` for
    /// room (then an error with `is_timeout()`; TETHER_E_DEADLOCK from the actor's own
    /// thread, where room could never be made).
    pub fn call_timeout<F, R>(&self, timeout: Duration, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce(&mut S) -> R + Send + 'static,
        R: Send + 'static,
    {
        self.refuse_mut_with_groups()?;
        let mut h = sys::tether_future { id: 0 };
        // SAFETY (of the &mut): as in `call`.
        Error::check(self.call_raw(
            None,
            move |s: *mut S| f(unsafe { &mut *s }),
            &mut h,
            Some(timeout),
        ))?;
        Ok(Future::from_handle(h))
    }

    /// Queues `f(&state)` on the default thread (any actor, groups or not).
    pub fn call_ref<F, R>(&self, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce(&S) -> R + Send + 'static,
        R: Send + 'static,
    {
        let mut h = sys::tether_future { id: 0 };
        // SAFETY (of the &): the state is live; shared access never aliases a `&mut S`
        // (those exist only on actors without groups, one call at a time on this thread).
        Error::check(self.call_raw(None, move |s: *mut S| f(unsafe { &*s }), &mut h, None))?;
        Ok(Future::from_handle(h))
    }

    /// The actor's state: alive, dead (with the constructor's error), or stopped.
    pub fn state(&self) -> ActorState {
        let mut s = 0;
        let mut cause = sys::tether_error { id: 0 };
        // SAFETY: out-pointers to locals; a cause handle is released by from_handle.
        unsafe { sys::tether_actor_state(self.handle, &mut s, &mut cause) };
        match s {
            sys::TETHER_ACTOR_DEAD => ActorState::Dead(if cause.id != 0 {
                Error::from_handle(cause)
            } else {
                Error::new(
                    sys::TETHER_E_ACTOR_DEAD,
                    Error::describe(sys::TETHER_E_ACTOR_DEAD),
                )
            }),
            sys::TETHER_ACTOR_STOPPED => ActorState::Stopped,
            _ => ActorState::Alive,
        }
    }

    /// Stops the actor: new calls fail with TETHER_E_SHUTDOWN; `Drain` lets queued calls
    /// run, `Cancel` cancels them. Then `S` is dropped on its thread. Waits at most
    /// `timeout` (`None`: forever) for that drop; a timeout (`is_timeout()`) lets the stop
    /// go on.
    pub fn stop(&self, mode: StopMode, timeout: Option<Duration>) -> Result<(), Error> {
        let m = match mode {
            StopMode::Drain => sys::TETHER_STOP_DRAIN,
            StopMode::Cancel => sys::TETHER_STOP_CANCEL,
        };
        // SAFETY: plain call on our handle.
        Error::check(unsafe { sys::tether_actor_stop(self.handle, m, timeout_ns(timeout)) })
    }

    /// The actor's counters (all groups).
    pub fn stats(&self) -> Stats {
        let mut s = new_stats();
        // SAFETY: struct_size is set; out-pointer to a local.
        unsafe { sys::tether_actor_get_stats(self.handle, &mut s) };
        s.into()
    }

    /// The kept errors of fire-and-forget calls (the first 64).
    pub fn errors(&self) -> Vec<Error> {
        // SAFETY: out-pointer given by kept_errors.
        kept_errors(|i, out| unsafe { sys::tether_actor_error(self.handle, i, out) })
    }
}

impl<S: Sync + 'static> Actor<S> {
    /// Queues `f(&state)` on the threads of the concurrency group `group`, which run
    /// concurrently with the default thread and with each other: so only where `S: Sync`,
    /// and only with `&S`. TETHER_E_NOT_FOUND for an unknown group.
    pub fn call_in<F, R>(&self, group: &str, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce(&S) -> R + Send + 'static,
        R: Send + 'static,
    {
        let mut h = sys::tether_future { id: 0 };
        // SAFETY (of the &): groups exist, so `call`/`tell` refuse `&mut S`; every access
        // is shared, and S: Sync makes shared access from several threads sound.
        Error::check(self.call_raw(
            Some(group),
            move |s: *mut S| f(unsafe { &*s }),
            &mut h,
            None,
        ))?;
        Ok(Future::from_handle(h))
    }
}

impl<S: 'static> Drop for Actor<S> {
    /// Stops the actor letting queued calls run (drain), waits until `S` has been dropped
    /// on its thread, and ends the actor's threads. From the actor's own thread the library
    /// does the waiting on its control thread instead.
    fn drop(&mut self) {
        // SAFETY: we own the handle and release it exactly once.
        unsafe { sys::tether_actor_release(self.handle) };
    }
}
