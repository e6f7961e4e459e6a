//! `Executor` (header section 6) and `Future` (section 7).
use std::ffi::{c_void, CString};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tether_sys as sys;

use crate::ffi;
use crate::util::{
    cstring, notify_trampoline, pack, put_result, run_task, store_waker, take_value, timeout_ns,
    unpack, WakerSlot,
};
use crate::{Error, Scope, State};

/// Options of [`Executor::new`]. Fields left unset take the library's defaults.
#[derive(Debug, Clone, Default)]
pub struct ExecutorOptions {
    name: Option<String>,
    cpu: Option<i32>,
    queue_capacity: Option<usize>,
    stack_size: Option<usize>,
    idle_spin: Option<Duration>,
    manual: bool,
}

impl ExecutorOptions {
    /// The defaults (thread "tether-exec", unbounded queue, 20 us idle spin).
    pub fn new() -> Self {
        Self::default()
    }
    /// The OS-visible thread name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Pins the thread to this CPU.
    pub fn cpu(mut self, cpu: i32) -> Self {
        self.cpu = Some(cpu);
        self
    }
    /// Bounds the queue (tasks queued and not yet started); 0 = unbounded.
    pub fn queue_capacity(mut self, n: usize) -> Self {
        self.queue_capacity = Some(n);
        self
    }
    /// The thread's stack size (0 = platform default).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }
    /// How long an idle executor spins before it parks.
    pub fn idle_spin(mut self, d: Duration) -> Self {
        self.idle_spin = Some(d);
        self
    }
    /// A manual executor (default false): no thread is created; the first thread that
    /// calls [`Executor::run`] becomes the executor's thread for good (a program's main
    /// thread, for code that must run there). Actors on it are built, called and dropped
    /// on that thread, so it should outlive them: the library knows the owner by its OS
    /// thread id.
    pub fn manual(mut self, yes: bool) -> Self {
        self.manual = yes;
        self
    }
}

/// Counters of an executor or an actor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Queued and not yet started, now.
    pub queued: u64,
    /// Totals.
    pub completed: u64,
    /// Totals.
    pub failed: u64,
    /// Totals.
    pub cancelled: u64,
    /// Totals: QUEUE_FULL or SHUTDOWN refusals.
    pub rejected: u64,
    /// Fire-and-forget errors past the 64 kept.
    pub errors_dropped: u64,
    /// gettid() of the (default) thread.
    pub os_thread_id: u64,
}

impl From<sys::tether_executor_stats> for Stats {
    fn from(s: sys::tether_executor_stats) -> Self {
        Stats {
            queued: s.queued,
            completed: s.completed,
            failed: s.failed,
            cancelled: s.cancelled,
            rejected: s.rejected,
            errors_dropped: s.errors_dropped,
            os_thread_id: s.os_thread_id,
        }
    }
}

pub(crate) fn new_stats() -> sys::tether_executor_stats {
    sys::tether_executor_stats {
        struct_size: std::mem::size_of::<sys::tether_executor_stats>() as u32,
        ..Default::default()
    }
}

/// Reads the kept fire-and-forget errors i = 0, 1, ... until the accessor refuses.
pub(crate) fn kept_errors(
    origin: &Option<Arc<str>>,
    get: impl Fn(usize, *mut sys::tether_error) -> sys::tether_status,
) -> Vec<Error> {
    let mut v = Vec::new();
    loop {
        let mut e = sys::tether_error { id: 0 };
        if get(v.len(), &mut e) != sys::TETHER_OK {
            return v;
        }
        v.push(Error::from_handle(e).at(origin));
    }
}

/// One OS thread for life: everything submitted runs on it, in submission order, and
/// thread-local state persists between tasks. Dropping the executor runs what is queued,
/// then joins the thread (or, with actors still on it, leaves the thread to the last of
/// them).
///
/// ```
/// use std::time::Duration;
/// use tether::{Executor, ExecutorOptions};
/// let exec = Executor::new(&ExecutorOptions::new().name("worker")).unwrap();
/// let f = exec.submit(|| std::fs::read_to_string("/proc/thread-self/comm").unwrap()).unwrap();
/// assert_eq!(f.wait_timeout(Duration::from_secs(5)).unwrap().trim_end(), "worker");
/// exec.execute(|| println!("fire and forget")).unwrap();
/// ```
#[derive(Debug)]
pub struct Executor {
    pub(crate) handle: sys::tether_executor,
    origin: Option<Arc<str>>,
}

impl Executor {
    /// Creates an executor and its thread.
    pub fn new(options: &ExecutorOptions) -> Result<Executor, Error> {
        crate::check_version()?;
        let origin =
            crate::error::origin("executor", options.name.as_deref().unwrap_or("tether-exec"));
        let mut o = std::mem::MaybeUninit::<sys::tether_executor_options>::zeroed();
        // SAFETY: _init fills every field.
        let mut o = unsafe {
            sys::tether_executor_options_init(o.as_mut_ptr());
            o.assume_init()
        };
        let name: Option<CString> = options.name.as_deref().map(cstring);
        if let Some(n) = &name {
            o.name = n.as_ptr();
        }
        if let Some(c) = options.cpu {
            o.cpu = c;
        }
        if let Some(q) = options.queue_capacity {
            o.queue_capacity = q;
        }
        if let Some(s) = options.stack_size {
            o.stack_size = s;
        }
        if let Some(d) = options.idle_spin {
            o.idle_spin_ns = timeout_ns(Some(d));
        }
        o.manual = options.manual as _;
        let mut handle = sys::tether_executor { id: 0 };
        // SAFETY: `o` and `name` outlive the call.
        Error::check(unsafe { sys::tether_executor_create(&o, &mut handle) })
            .map_err(|e| e.at(&origin))?;
        Ok(Executor { handle, origin })
    }

    /// Every submit goes through here: `f` gets the task's [`Scope`]; with `out` NULL it
    /// is fire and forget and its value is dropped on the executor's thread.
    fn submit_raw<F, R>(
        &self,
        f: F,
        out: *mut sys::tether_future,
        timeout: Option<Duration>,
    ) -> sys::tether_status
    where
        F: FnOnce(&Scope) -> R + Send + 'static,
        R: Send + 'static,
    {
        unsafe extern "C" fn trampoline<F, R, const KEEP: bool>(
            task: *mut sys::tether_task,
            arg: *mut c_void,
        ) -> sys::tether_status
        where
            F: FnOnce(&Scope) -> R + Send + 'static,
            R: Send + 'static,
        {
            // SAFETY: `arg` is the library's copy of pack::<F>(..) made by submit_raw,
            // handed to this callback once; `task` is this callback's, the task's target.
            unsafe {
                let Some(f) = unpack::<F>(arg) else {
                    return sys::TETHER_E_INTERNAL;
                };
                // Fire and forget (KEEP false): nobody can take a value, so it is dropped
                // here rather than handed to the library.
                run_task(task, move || {
                    let v = f(&Scope::new(task));
                    if KEEP {
                        put_result(task, v)
                    } else {
                        Ok(())
                    }
                })
            }
        }
        let m: sys::tether_fn = if out.is_null() {
            trampoline::<F, R, false>
        } else {
            trampoline::<F, R, true>
        };
        let a = pack(f);
        // SAFETY: a boxed closure is freed exactly once by its drop (also when the call
        // fails); `out` is NULL or points to a local of the caller.
        unsafe {
            match timeout {
                None => ffi::executor_submit(self.handle, Some(m), a.arg, a.drop, out),
                Some(t) => ffi::executor_submit_timeout(
                    self.handle,
                    Some(m),
                    a.arg,
                    a.drop,
                    out,
                    timeout_ns(Some(t)),
                ),
            }
        }
    }

    fn submit_future<F, R>(&self, f: F, timeout: Option<Duration>) -> Result<Future<R>, Error>
    where
        F: FnOnce(&Scope) -> R + Send + 'static,
        R: Send + 'static,
    {
        let mut handle = sys::tether_future { id: 0 };
        Error::check(self.submit_raw(f, &mut handle, timeout)).map_err(|e| e.at(&self.origin))?;
        Ok(Future::from_handle(handle, self.origin.clone()))
    }

    /// Queues `f` on the executor's thread and returns a [`Future`] of its value. A panic
    /// in `f` fails the future with TETHER_E_PANIC. `f` is `Send + 'static`: it moves to
    /// the executor's thread, and may be dropped on any thread if it never runs.
    pub fn submit<F, R>(&self, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.submit_future(move |_: &Scope| f(), None)
    }

    /// Like [`submit`](Self::submit), and `f` gets the task's [`Scope`]: nested threads it
    /// starts with [`Scope::spawn`] belong to the task, whose future completes when `f`
    /// and all of them have returned, and fails at the first error among them (with
    /// stop_on_error semantics: the others see [`Scope::stop_requested`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tether::{Executor, ExecutorOptions};
    /// let exec = Executor::new(&ExecutorOptions::new()).unwrap();
    /// let f = exec.submit_scoped(|scope| {
    ///     scope.spawn("helper", |_| Err::<(), _>("helper failed")).unwrap();
    ///     "the task itself returned"
    /// }).unwrap();
    /// let err = f.wait_timeout(Duration::from_secs(5)).unwrap_err();
    /// assert_eq!((err.thread_name(), err.message()), ("helper", "helper failed"));
    /// ```
    pub fn submit_scoped<F, R>(&self, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce(&Scope) -> R + Send + 'static,
        R: Send + 'static,
    {
        self.submit_future(f, None)
    }

    /// Like [`submit`](Self::submit), but on a full bounded queue
    /// ([`ExecutorOptions::queue_capacity`]) waits up to `timeout` for room (then an error
    /// with `is_timeout()`; TETHER_E_DEADLOCK from the executor's own thread).
    pub fn submit_timeout<F, R>(&self, timeout: Duration, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.submit_future(move |_: &Scope| f(), Some(timeout))
    }

    /// Queues `f` fire-and-forget: a failure (panic) is counted and kept by the
    /// executor ([`errors`](Self::errors)). A closure that fits in a pointer and has no
    /// drop glue costs no allocation.
    pub fn execute<F>(&self, f: F) -> Result<(), Error>
    where
        F: FnOnce() + Send + 'static,
    {
        Error::check(self.submit_raw(move |_: &Scope| f(), std::ptr::null_mut(), None))
            .map_err(|e| e.at(&self.origin))
    }

    /// Runs a manual executor's tasks on the calling thread ([`ExecutorOptions::manual`])
    /// until `timeout` has passed, then returns `Ok(())`. The first thread to call it
    /// becomes the executor's thread for good. `None` never returns: the C call ends early
    /// only when the executor is released, and this borrow keeps the `Executor` alive; run
    /// in slices instead, as below. Errors: TETHER_E_WRONG_STATE on an executor that is not
    /// manual, from another thread, or from inside one of its own tasks.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tether::{Executor, ExecutorOptions};
    /// let exec = Executor::new(&ExecutorOptions::new().manual(true)).unwrap();
    /// let f = exec.submit(|| std::thread::current().id()).unwrap();
    /// while !f.poll().is_terminal() {
    ///     exec.run(Some(Duration::from_millis(1))).unwrap();
    /// }
    /// assert_eq!(f.wait_timeout(Duration::ZERO).unwrap(), std::thread::current().id());
    /// ```
    pub fn run(&self, timeout: Option<Duration>) -> Result<(), Error> {
        // SAFETY: plain call on our handle.
        Error::check(unsafe { sys::tether_executor_run(self.handle, timeout_ns(timeout)) })
            .map_err(|e| e.at(&self.origin))
    }

    /// The executor's counters.
    pub fn stats(&self) -> Stats {
        let mut s = new_stats();
        // SAFETY: struct_size is set; out-pointer to a local.
        unsafe { sys::tether_executor_get_stats(self.handle, &mut s) };
        s.into()
    }

    /// The kept errors of fire-and-forget tasks (the first 64).
    pub fn errors(&self) -> Vec<Error> {
        // SAFETY: out-pointer given by kept_errors.
        kept_errors(&self.origin, |i, out| unsafe {
            sys::tether_executor_error(self.handle, i, out)
        })
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        // SAFETY: we own the handle and release it exactly once.
        unsafe { sys::tether_executor_release(self.handle) };
    }
}

/// One submitted task or actor call, and its value of type `R` once it SUCCEEDED.
///
/// Wait for it with [`wait`](Self::wait) / [`wait_timeout`](Self::wait_timeout), or
/// `.await` it from async code (built on `tether_future_on_done`: no thread blocks).
/// Dropping a future does not cancel the work: it still runs, and its value is dropped.
///
/// ```
/// use std::time::Duration;
/// use tether::{Executor, ExecutorOptions};
/// let exec = Executor::new(&ExecutorOptions::new()).unwrap();
/// let ok = exec.submit(|| 6 * 7).unwrap();
/// let bad = exec.submit(|| -> i32 { panic!("boom") }).unwrap();
/// assert_eq!(ok.wait_timeout(Duration::from_secs(5)).unwrap(), 42);
/// let err = bad.wait_timeout(Duration::from_secs(5)).unwrap_err();
/// assert!(err.is_panic() && err.message() == "boom");
/// ```
#[derive(Debug)]
pub struct Future<R> {
    handle: sys::tether_future,
    notify: Option<WakerSlot>,
    // Who runs the work (`actor "log"`), for the errors (an Arc clone per call: the
    // caller's thread alone touches it while the future lives).
    origin: Option<Arc<str>>,
    // fn() -> R: the future only ever hands an R out, and R: Send is required where it is
    // made, so the Future is Send + Sync whatever R is.
    _r: PhantomData<fn() -> R>,
}

impl<R> Future<R> {
    pub(crate) fn from_handle(handle: sys::tether_future, origin: Option<Arc<str>>) -> Future<R> {
        Future {
            handle,
            notify: None,
            origin,
            _r: PhantomData,
        }
    }

    /// The state, without blocking.
    pub fn poll(&self) -> State {
        self.state_now()
    }

    pub(crate) fn state_now(&self) -> State {
        let mut s = 0;
        // SAFETY: out-pointer to a local.
        unsafe { sys::tether_future_poll(self.handle, &mut s) };
        State::from_raw(s)
    }

    /// Cancels the work: if it has not started it never runs (its closure is dropped
    /// before this returns); if it runs it sees a stop request.
    pub fn cancel(&self) {
        // SAFETY: plain call on our handle.
        unsafe { sys::tether_future_cancel(self.handle) };
    }

    /// Waits without limit, then returns the value or the error.
    pub fn wait(self) -> Result<R, Error> {
        // SAFETY: plain call on our handle.
        Error::check(unsafe { sys::tether_future_wait(self.handle, -1) })
            .map_err(|e| e.at(&self.origin))?;
        self.outcome()
    }

    /// Waits at most `timeout`; a timeout is an error with `is_timeout()` and leaves the
    /// future usable. The value can be taken once: a second successful wait is an error
    /// (TETHER_E_WRONG_STATE).
    pub fn wait_timeout(&self, timeout: Duration) -> Result<R, Error> {
        // SAFETY: plain call on our handle.
        Error::check(unsafe { sys::tether_future_wait(self.handle, timeout_ns(Some(timeout))) })
            .map_err(|e| e.at(&self.origin))?;
        self.outcome()
    }

    /// Runs `f` once when the work becomes terminal: on the thread that completes it, or
    /// at once on this thread if it already is. `f` must not wait on tether objects; a
    /// panic in it is caught and discarded. If the future is dropped first, `f` still runs
    /// when the work ends. Several may be registered. This is what `.await` is built on.
    ///
    /// ```
    /// use std::{sync::mpsc, time::Duration};
    /// use tether::{Executor, ExecutorOptions};
    /// let exec = Executor::new(&ExecutorOptions::new()).unwrap();
    /// let f = exec.submit(|| 5).unwrap();
    /// let (tx, rx) = mpsc::channel();
    /// f.on_done(move || tx.send(()).unwrap()).unwrap();
    /// rx.recv_timeout(Duration::from_secs(5)).unwrap();
    /// assert_eq!(f.wait_timeout(Duration::ZERO).unwrap(), 5);
    /// ```
    pub fn on_done<F>(&self, f: F) -> Result<(), Error>
    where
        F: FnOnce() + Send + 'static,
    {
        let a = pack(f);
        // SAFETY: a boxed closure is freed exactly once by its drop (also on failure).
        Error::check(unsafe {
            ffi::future_on_done(self.handle, Some(notify_trampoline::<F>), a.arg, a.drop)
        })
    }

    /// The outcome of a terminal future.
    fn outcome(&self) -> Result<R, Error> {
        if self.state_now() == State::Succeeded {
            let mut p: *mut c_void = std::ptr::null_mut();
            // SAFETY: the value was stored by our trampoline with put_result::<R>;
            // take_result succeeds once, and taking it makes us its owner.
            Error::check(unsafe { sys::tether_future_take_result(self.handle, &mut p) })
                .map_err(|e| e.at(&self.origin))?;
            return unsafe { take_value::<R>(p) }.ok_or_else(|| {
                Error::new(sys::TETHER_E_INTERNAL, "the future has no value").at(&self.origin)
            });
        }
        Err(self.failure())
    }

    /// The error of a future that did not succeed (CANCELLED: TETHER_E_CANCELLED).
    pub(crate) fn failure(&self) -> Error {
        let mut e = sys::tether_error { id: 0 };
        // SAFETY: out-pointer to a local; from_handle releases it.
        unsafe { sys::tether_future_error(self.handle, &mut e) };
        let err = if e.id != 0 {
            Error::from_handle(e)
        } else {
            Error::new(sys::TETHER_E_WRONG_STATE, "the future is not terminal")
        };
        err.at(&self.origin)
    }
}

impl<R> Future<R> {
    /// The raw handle (still owned by this future).
    pub(crate) fn raw(&self) -> sys::tether_future {
        self.handle
    }

    /// Who runs the work, for errors.
    pub(crate) fn origin(&self) -> &Option<Arc<str>> {
        &self.origin
    }

    /// The async half of `.await`, shared with [`crate::Execution`]: stores `cx`'s waker
    /// (registering one `on_done` notice the first time), then says whether the work is
    /// terminal. The waker is stored BEFORE the state is read: a completion after the
    /// read then finds it, so no wake-up is lost.
    pub(crate) fn poll_terminal(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        if let Some(wake) = store_waker(&mut self.notify, cx) {
            if let Err(e) = self.on_done(wake) {
                return Poll::Ready(Err(e.at(&self.origin)));
            }
        }
        if self.state_now().is_terminal() {
            Poll::Ready(Ok(()))
        } else {
            Poll::Pending
        }
    }
}

impl<R> std::future::Future for Future<R> {
    type Output = Result<R, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match this.poll_terminal(cx) {
            Poll::Ready(Ok(())) => Poll::Ready(this.outcome()),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }
}

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// Anything that names one tether future: a [`Future<R>`](Future) of any `R`, or a
/// reference to one. Lets [`wait_any`] take `&[Future<R>]` as well as a mixed
/// `&[&dyn FutureHandle]`. Sealed: implemented only by this crate's types.
pub trait FutureHandle: sealed::Sealed {
    /// The raw handle (borrowed: still owned by the `Future`).
    fn raw_future(&self) -> sys::tether_future;
}

impl<R> sealed::Sealed for Future<R> {}
impl<R> FutureHandle for Future<R> {
    fn raw_future(&self) -> sys::tether_future {
        self.handle
    }
}
impl<T: FutureHandle + ?Sized> sealed::Sealed for &T {}
impl<T: FutureHandle + ?Sized> FutureHandle for &T {
    fn raw_future(&self) -> sys::tether_future {
        (**self).raw_future()
    }
}

/// Waits until one of `futures` is terminal, at most `timeout` (`None`: forever), and
/// returns the lowest index of a terminal one; read it with
/// [`wait_timeout`](Future::wait_timeout) (it returns at once). Errors: `is_timeout()`;
/// TETHER_E_INVALID_ARGUMENT for an empty slice; TETHER_E_DEADLOCK from a thread some of
/// the work can only run on.
///
/// ```
/// use std::time::Duration;
/// use tether::{Executor, ExecutorOptions, FutureHandle};
/// let slow = Executor::new(&ExecutorOptions::new()).unwrap();
/// let fast = Executor::new(&ExecutorOptions::new()).unwrap();
/// let (tx, rx) = std::sync::mpsc::channel::<()>();
/// let a = slow.submit(move || rx.recv_timeout(Duration::from_secs(5)).is_ok()).unwrap();
/// let b = fast.submit(|| "fast").unwrap();
/// let i = tether::wait_any(&[&a as &dyn FutureHandle, &b], Some(Duration::from_secs(5))).unwrap();
/// assert_eq!(i, 1);
/// assert_eq!(b.wait_timeout(Duration::ZERO).unwrap(), "fast");
/// tx.send(()).unwrap();
/// ```
pub fn wait_any<T: FutureHandle>(futures: &[T], timeout: Option<Duration>) -> Result<usize, Error> {
    let handles: Vec<sys::tether_future> = futures.iter().map(|f| f.raw_future()).collect();
    let mut index = 0usize;
    // SAFETY: the array and the out-pointer are live locals; NULL array for n == 0 is
    // refused by the library (TETHER_E_INVALID_ARGUMENT), never read.
    Error::check(unsafe {
        sys::tether_future_wait_any(
            if handles.is_empty() {
                std::ptr::null()
            } else {
                handles.as_ptr()
            },
            handles.len(),
            timeout_ns(timeout),
            &mut index,
        )
    })?;
    Ok(index)
}

impl<R> Drop for Future<R> {
    fn drop(&mut self) {
        // SAFETY: we own the handle and release it exactly once; the work goes on.
        unsafe { sys::tether_future_release(self.handle) };
    }
}
