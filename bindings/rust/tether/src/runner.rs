//! `Runner`: a scope of threads whose errors are caught (header section 5).
use std::ffi::{c_void, CStr, CString};
use std::fmt::Display;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tether_sys as sys;

use crate::ffi;
use crate::join::{Filler, JoinHandle, Slot};
use crate::util::{
    catch, cstring, fail_task, into_arg, notify_trampoline, pack, put_result, run_task,
    store_waker, take_value, timeout_ns, unpack, WakerSlot,
};
use crate::{Error, State};

/// Options of [`Runner::spawn`]. Fields left unset take the library's defaults (thread
/// name "tether-run", stop on the first error, the platform's stack size).
#[derive(Debug, Clone, Default)]
pub struct RunnerOptions {
    name: Option<String>,
    stop_on_error: Option<bool>,
    stack_size: Option<usize>,
}

impl RunnerOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }
    /// The target thread's name (the OS sees its first 15 bytes).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Whether the first error asks every thread of the scope to stop (default true).
    pub fn stop_on_error(mut self, yes: bool) -> Self {
        self.stop_on_error = Some(yes);
        self
    }
    /// The stack size of the target thread (0 = the platform's default).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }
}

/// The context of a running task: a runner's target or nested thread
/// ([`Runner::spawn`], [`Scope::spawn`]), an executor task
/// ([`Executor::submit_scoped`](crate::Executor::submit_scoped)) or an actor method
/// ([`Actor::call_scoped`](crate::Actor::call_scoped),
/// [`Group::call_scoped`](crate::Group::call_scoped)). Use it to start nested threads
/// that belong to the task (its runner, or its future, ends only when they have returned
/// too, and fails at the first error among them) and to see stop requests.
///
/// A `Scope` is only valid on the thread its callback runs on, for the duration of the
/// callback: it is neither `Send` nor `Sync`, and closures only ever see `&Scope`.
///
/// ```
/// use tether::{Runner, RunnerOptions};
/// let runner = Runner::spawn(&RunnerOptions::new(), |scope| {
///     scope.spawn("helper", |scope| {
///         assert_eq!(scope.thread_name(), "helper");
///         Ok::<(), String>(())
///     }).unwrap();
///     Ok::<_, String>(scope.thread_name())
/// }).unwrap();
/// assert_eq!(runner.into_result().unwrap(), "tether-run");
/// ```
pub struct Scope {
    // A raw pointer: makes Scope !Send and !Sync, as a task is callback only.
    task: *mut sys::tether_task,
    _not_send: PhantomData<*mut ()>,
}

impl Scope {
    pub(crate) fn new(task: *mut sys::tether_task) -> Scope {
        Scope {
            task,
            _not_send: PhantomData,
        }
    }

    /// Starts `f` on a new NESTED thread named `name` that belongs to this task's scope:
    /// the scope ends only when it has returned too, and fails at its first error
    /// (`Err(e)` records TETHER_E_TASK_FAILED with `e`'s text, a panic TETHER_E_PANIC with
    /// the panic message). The [`JoinHandle`] gives the thread's value, or that error.
    /// Nested threads may outlive the task that starts them, so `f` is `'static`; it is
    /// `Send` because it moves to the new thread.
    pub fn spawn<F, T, E>(&self, name: &str, f: F) -> Result<JoinHandle<T>, Error>
    where
        F: FnOnce(&Scope) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: Display,
    {
        /// The closure and the handle's slot, boxed (the Arc has drop glue).
        type Arg<F, T> = Option<(F, Filler<T>)>;
        unsafe extern "C" fn trampoline<F, T, E>(
            task: *mut sys::tether_task,
            arg: *mut c_void,
        ) -> sys::tether_status
        where
            F: FnOnce(&Scope) -> Result<T, E> + Send + 'static,
            T: Send + 'static,
            E: Display,
        {
            // SAFETY: `arg` is the Box<Arg<F, T>> made by `spawn`, handed to this callback
            // once (its drop frees the box later); `task` is this callback's.
            let Some((f, filler)) = (unsafe { (*arg.cast::<Arg<F, T>>()).take() }) else {
                return sys::TETHER_E_INTERNAL;
            };
            let scope = Scope::new(task);
            match catch(|| f(&scope).map_err(|e| e.to_string())) {
                Ok(v) => {
                    filler.0.fill(Ok(v));
                    sys::TETHER_OK
                }
                Err((code, msg)) => {
                    let err = Error::raised(code, msg.clone(), scope.thread_name());
                    filler.0.fill(Err(err));
                    // SAFETY: in the callback of `task`.
                    unsafe { fail_task(task, code, &msg) }
                }
            }
        }
        let name = cstring(name);
        let slot = Slot::new();
        let arg: Arg<F, T> = Some((f, Filler(slot.clone())));
        // SAFETY: callback only: `self.task` is the task of the callback running on this
        // thread (a Scope never leaves it). The box is freed exactly once by its drop,
        // also when the call fails (then the Filler marks the slot CANCELLED).
        let st = unsafe {
            ffi::task_spawn(
                self.task,
                name.as_ptr(),
                Some(trampoline::<F, T, E>),
                ffi::RawArg::new(into_arg(arg)),
                Some(crate::util::free_boxed::<Arg<F, T>>),
            )
        };
        Error::check(st)?;
        Ok(JoinHandle::new(slot))
    }

    /// Whether cancellation, or a sibling's failure under stop_on_error, asked this scope
    /// to stop. Cooperative: nothing is killed.
    pub fn stop_requested(&self) -> bool {
        // SAFETY: callback only, as above.
        unsafe { sys::tether_task_stop_requested(self.task) != 0 }
    }

    /// The full name of the thread this task runs on.
    pub fn thread_name(&self) -> String {
        // SAFETY: callback only; the string is valid until the callback returns and is
        // copied here.
        unsafe { CStr::from_ptr(sys::tether_task_thread_name(self.task)) }
            .to_string_lossy()
            .into_owned()
    }

    /// Records a failure (TETHER_E_TASK_FAILED with `user_code` and `message`) without
    /// returning: the task fails even if it then returns normally.
    pub fn fail(&self, user_code: i64, message: &str) {
        let m = cstring(message);
        // SAFETY: callback only, as above.
        unsafe { sys::tether_task_fail(self.task, user_code, m.as_ptr()) };
    }
}

/// A scope of threads whose errors are caught: the target runs on a new thread, and
/// every nested thread it starts ([`Scope::spawn`]) belongs to the same scope. The scope
/// fails at its FIRST error, from any of its threads, even while the others still run;
/// it succeeds when all have returned `Ok`.
///
/// Dropping a `Runner` cancels the scope and joins every one of its threads.
///
/// ```
/// use std::time::Duration;
/// use tether::{Runner, RunnerOptions, State};
///
/// let runner = Runner::spawn(&RunnerOptions::new().name("trainer"), |scope| {
///     scope.spawn("upload-1", |_| Err::<(), _>("disk full"))?;
///     // keep training until the failure asks us to stop (bounded)
///     for _ in 0..500 {
///         if scope.stop_requested() { break; }
///         std::thread::sleep(Duration::from_millis(10));
///     }
///     Ok::<_, tether::Error>(42)
/// }).unwrap();
/// assert_eq!(runner.join(Some(Duration::from_secs(5))).unwrap(), State::Failed);
/// let err = runner.error().unwrap();
/// assert_eq!((err.thread_name(), err.message()), ("upload-1", "disk full"));
/// ```
#[derive(Debug)]
pub struct Runner<T> {
    handle: sys::tether_runner,
    // `runner "name"`, for the errors.
    origin: Option<Arc<str>>,
    // fn() -> T: a Runner only ever hands a T out (into_result), and T: Send is required
    // where the T is made, so the Runner itself is Send + Sync whatever T is.
    _t: PhantomData<fn() -> T>,
}

impl<T: Send + 'static> Runner<T> {
    /// Runs `f` on a new thread. `Ok(v)` becomes the scope's result (read it with
    /// [`into_result`](Self::into_result)); `Err(e)` fails the scope with
    /// TETHER_E_TASK_FAILED and `e`'s text; a panic fails it with TETHER_E_PANIC and the
    /// panic message.
    pub fn spawn<F, E>(options: &RunnerOptions, f: F) -> Result<Runner<T>, Error>
    where
        F: FnOnce(&Scope) -> Result<T, E> + Send + 'static,
        E: Display,
    {
        unsafe extern "C" fn trampoline<T, F, E>(
            task: *mut sys::tether_task,
            arg: *mut c_void,
        ) -> sys::tether_status
        where
            T: Send + 'static,
            F: FnOnce(&Scope) -> Result<T, E> + Send + 'static,
            E: Display,
        {
            // SAFETY: `arg` is the library's copy of pack::<F>(..) made by `spawn`, handed
            // to this callback once; `task` is this callback's, the runner's target.
            unsafe {
                let Some(f) = unpack::<F>(arg) else {
                    return sys::TETHER_E_INTERNAL;
                };
                run_task(task, move || match f(&Scope::new(task)) {
                    Ok(v) => put_result(task, v),
                    Err(e) => Err(e.to_string()),
                })
            }
        }
        crate::check_version()?;
        let origin =
            crate::error::origin("runner", options.name.as_deref().unwrap_or("tether-run"));
        let mut o = std::mem::MaybeUninit::<sys::tether_runner_options>::zeroed();
        // SAFETY: _init fills every field.
        let mut o = unsafe {
            sys::tether_runner_options_init(o.as_mut_ptr());
            o.assume_init()
        };
        let name: Option<CString> = options.name.as_deref().map(cstring);
        if let Some(n) = &name {
            o.name = n.as_ptr();
        }
        if let Some(s) = options.stop_on_error {
            o.stop_on_error = s as _;
        }
        if let Some(s) = options.stack_size {
            o.stack_size = s;
        }
        let mut handle = sys::tether_runner { id: 0 };
        let a = pack(f);
        // SAFETY: `o` and `name` outlive the call; a boxed closure is freed exactly once by
        // its drop (also when the call fails).
        let st = unsafe {
            ffi::runner_start(&o, Some(trampoline::<T, F, E>), a.arg, a.drop, &mut handle)
        };
        Error::check(st).map_err(|e| e.at(&origin))?;
        Ok(Runner {
            handle,
            origin,
            _t: PhantomData,
        })
    }
}

impl<T> Runner<T> {
    /// The scope's state, without blocking.
    pub fn poll(&self) -> State {
        let mut s = 0;
        // SAFETY: out-pointer to a local.
        unsafe { sys::tether_runner_poll(self.handle, &mut s) };
        State::from_raw(s)
    }

    /// Waits until the scope is terminal (at its first error, not necessarily when every
    /// thread has ended), at most `timeout` (`None`: forever). Returns the terminal state,
    /// or an error (`is_timeout()`) when the timeout passed first.
    pub fn join(&self, timeout: Option<Duration>) -> Result<State, Error> {
        // SAFETY: plain call on our handle.
        Error::check(unsafe { sys::tether_runner_join(self.handle, timeout_ns(timeout)) })
            .map_err(|e| e.at(&self.origin))?;
        Ok(self.poll())
    }

    /// Like [`join`](Self::join), and in addition waits until every thread has ended.
    pub fn join_all(&self, timeout: Option<Duration>) -> Result<State, Error> {
        // SAFETY: plain call on our handle.
        Error::check(unsafe { sys::tether_runner_join_all(self.handle, timeout_ns(timeout)) })
            .map_err(|e| e.at(&self.origin))?;
        Ok(self.poll())
    }

    /// The first error, if the scope failed (or was cancelled).
    pub fn error(&self) -> Option<Error> {
        let mut e = sys::tether_error { id: 0 };
        // SAFETY: out-pointer to a local; a returned handle is released by from_handle.
        unsafe { sys::tether_runner_error(self.handle, &mut e) };
        (e.id != 0).then(|| Error::from_handle(e).at(&self.origin))
    }

    /// Every error recorded so far, in order (complete once every thread has ended).
    pub fn errors(&self) -> Vec<Error> {
        // SAFETY: plain calls on our handle; each handle is released by from_handle.
        let n = unsafe { sys::tether_runner_error_count(self.handle) };
        (0..n)
            .filter_map(|i| {
                let mut e = sys::tether_error { id: 0 };
                let st = unsafe { sys::tether_runner_error_at(self.handle, i, &mut e) };
                (st == sys::TETHER_OK).then(|| Error::from_handle(e).at(&self.origin))
            })
            .collect()
    }

    /// How many threads of the scope (the target included) have not yet returned.
    pub fn live_threads(&self) -> usize {
        let mut n = 0;
        // SAFETY: out-pointer to a local.
        unsafe { sys::tether_runner_live_threads(self.handle, &mut n) };
        n
    }

    /// Runs `f` once when the scope becomes terminal (the non-blocking form of
    /// [`join`](Self::join)): on the thread that makes it terminal, or at once on this
    /// thread if it already is. `f` must not wait on tether objects (a wait there may be
    /// refused with TETHER_E_DEADLOCK); it may poll this runner through a handle it owns
    /// (an `Arc<Runner<T>>`) or, more simply, send a message. If the runner is dropped
    /// first, `f` still runs when the scope ends. A panic in `f` is caught and discarded.
    ///
    /// ```
    /// use std::{sync::mpsc, time::Duration};
    /// use tether::{Runner, RunnerOptions};
    /// let runner = Runner::spawn(&RunnerOptions::new(), |_| Ok::<_, String>(1)).unwrap();
    /// let (tx, rx) = mpsc::channel();
    /// runner.on_done(move || tx.send("done").unwrap()).unwrap();
    /// assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), "done");
    /// ```
    pub fn on_done<F>(&self, f: F) -> Result<(), Error>
    where
        F: FnOnce() + Send + 'static,
    {
        let a = pack(f);
        // SAFETY: a boxed closure is freed exactly once by its drop (also on failure).
        Error::check(unsafe {
            ffi::runner_on_done(self.handle, Some(notify_trampoline::<F>), a.arg, a.drop)
        })
        .map_err(|e| e.at(&self.origin))
    }

    /// Asks every thread of the scope to stop ([`Scope::stop_requested`]).
    pub fn cancel(&self) {
        // SAFETY: plain call on our handle.
        unsafe { sys::tether_runner_cancel(self.handle) };
    }

    /// Records an error raised on a thread the scope did not create.
    pub fn report_error(&self, message: &str) -> Result<(), Error> {
        let m = cstring(message);
        // SAFETY: the message outlives the call.
        Error::check(unsafe {
            sys::tether_runner_report_error(self.handle, sys::TETHER_E_TASK_FAILED, 0, m.as_ptr())
        })
        .map_err(|e| e.at(&self.origin))
    }

    /// Waits (without limit) until the scope is terminal, then returns the target's value
    /// if it SUCCEEDED, else the first error. Prefer [`join_timeout`](Self::join_timeout)
    /// if the work might not end.
    pub fn into_result(self) -> Result<T, Error> {
        self.join(None)?;
        self.outcome()
    }

    /// Waits at most `timeout` until the scope is terminal, then takes the target's value
    /// if it SUCCEEDED, else returns the first error (a cancelled scope:
    /// TETHER_E_CANCELLED). A timeout is an error of kind `Timeout` and leaves the runner
    /// usable. The value is taken once: a second successful join is TETHER_E_WRONG_STATE.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tether::{ErrorKind, Runner, RunnerOptions};
    /// let (tx, rx) = std::sync::mpsc::channel::<()>();
    /// let runner = Runner::spawn(&RunnerOptions::new().name("slow"), move |_| {
    ///     rx.recv_timeout(Duration::from_secs(5)).map_err(|e| e.to_string())?;
    ///     Ok::<_, String>("done")
    /// }).unwrap();
    /// let early = runner.join_timeout(Duration::from_millis(1)).unwrap_err();
    /// assert_eq!(early.kind(), ErrorKind::Timeout);
    /// tx.send(()).unwrap();
    /// assert_eq!(runner.join_timeout(Duration::from_secs(5)).unwrap(), "done");
    /// ```
    pub fn join_timeout(&self, timeout: Duration) -> Result<T, Error> {
        self.join(Some(timeout))?;
        self.outcome()
    }

    /// `.await` the scope: resolves (with no thread blocked, through
    /// [`on_done`](Self::on_done)) to what [`join_timeout`](Self::join_timeout) gives once
    /// the scope is terminal.
    ///
    /// ```
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     use std::task::{Context, Poll, Wake, Waker};
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
    /// #     let waker = Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop {
    /// #         if let Poll::Ready(v) = f.as_mut().poll(&mut Context::from_waker(&waker)) { return v; }
    /// #         std::thread::park_timeout(std::time::Duration::from_millis(100));
    /// #     }
    /// # }
    /// use tether::{Runner, RunnerOptions};
    /// let runner = Runner::spawn(&RunnerOptions::new(), |_| Ok::<_, String>(7)).unwrap();
    /// assert_eq!(block_on(runner.join_async()).unwrap(), 7);
    /// ```
    pub fn join_async(&self) -> Join<'_, T> {
        Join {
            runner: self,
            waker: None,
        }
    }

    /// The outcome of a terminal scope.
    fn outcome(&self) -> Result<T, Error> {
        if self.poll() != State::Succeeded {
            return Err(self.error().unwrap_or_else(|| {
                Error::new(sys::TETHER_E_INTERNAL, "terminal runner without an error")
                    .at(&self.origin)
            }));
        }
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: the result was stored by the target's trampoline with put_result::<T>;
        // take_result succeeds once, and taking it makes us its owner (the library will
        // not drop it).
        Error::check(unsafe { sys::tether_runner_take_result(self.handle, &mut p) })
            .map_err(|e| e.at(&self.origin))?;
        unsafe { take_value::<T>(p) }.ok_or_else(|| {
            Error::new(sys::TETHER_E_INTERNAL, "the runner has no result").at(&self.origin)
        })
    }
}

/// The future of [`Runner::join_async`].
#[derive(Debug)]
pub struct Join<'a, T> {
    runner: &'a Runner<T>,
    waker: Option<WakerSlot>,
}

impl<T> std::future::Future for Join<'_, T> {
    type Output = Result<T, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Some(wake) = store_waker(&mut this.waker, cx) {
            if let Err(e) = this.runner.on_done(wake) {
                return Poll::Ready(Err(e));
            }
        }
        if this.runner.poll().is_terminal() {
            Poll::Ready(this.runner.outcome())
        } else {
            Poll::Pending
        }
    }
}

impl<T> Drop for Runner<T> {
    /// Cancels the scope and waits until every thread has ended and been joined (from
    /// inside the scope, the library leaves the joining to its control thread instead).
    fn drop(&mut self) {
        // SAFETY: we own the handle and release it exactly once.
        unsafe { sys::tether_runner_release(self.handle) };
    }
}
