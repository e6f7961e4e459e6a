//! `Executor` (header section 6) and `Future` (section 7).
use std::ffi::{c_void, CString};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tether_sys as sys;

use crate::util::{cstring, free_boxed, into_arg, run_task, set_result, take_closure, timeout_ns};
use crate::{Error, State};

/// Options of [`Executor::new`]. Fields left unset take the library's defaults.
#[derive(Debug, Clone, Default)]
pub struct ExecutorOptions {
    name: Option<String>,
    cpu: Option<i32>,
    queue_capacity: Option<usize>,
    stack_size: Option<usize>,
    idle_spin: Option<Duration>,
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
    get: impl Fn(usize, *mut sys::tether_error) -> sys::tether_status,
) -> Vec<Error> {
    let mut v = Vec::new();
    loop {
        let mut e = sys::tether_error { id: 0 };
        if get(v.len(), &mut e) != sys::TETHER_OK {
            return v;
        }
        v.push(Error::from_handle(e));
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
}

impl Executor {
    /// Creates an executor and its thread.
    pub fn new(options: &ExecutorOptions) -> Result<Executor, Error> {
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
        let mut handle = sys::tether_executor { id: 0 };
        // SAFETY: `o` and `name` outlive the call.
        Error::check(unsafe { sys::tether_executor_create(&o, &mut handle) })?;
        Ok(Executor { handle })
    }

    fn submit_raw<F, R>(&self, f: F, out: *mut sys::tether_future) -> sys::tether_status
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        unsafe extern "C" fn trampoline<F, R, const KEEP: bool>(
            task: *mut sys::tether_task,
            arg: *mut c_void,
        ) -> sys::tether_status
        where
            F: FnOnce() -> R + Send + 'static,
            R: Send + 'static,
        {
            // SAFETY: `arg` is the Option<F> boxed by submit_raw; `task` is this callback's.
            unsafe {
                let Some(f) = take_closure::<F>(arg) else {
                    return sys::TETHER_E_INTERNAL;
                };
                // Fire and forget (KEEP false): nobody can take a value, so it is dropped
                // here rather than handed to the library.
                run_task(task, move || {
                    let v = f();
                    if KEEP {
                        set_result(task, v)
                    } else {
                        Ok(())
                    }
                })
            }
        }
        // SAFETY: the arg box is freed exactly once by free_boxed (also when the call
        // fails); `out` is NULL or points to a local of the caller.
        unsafe {
            sys::tether_executor_submit(
                self.handle,
                if out.is_null() {
                    Some(trampoline::<F, R, false>)
                } else {
                    Some(trampoline::<F, R, true>)
                },
                into_arg(Some(f)),
                Some(free_boxed::<Option<F>>),
                out,
            )
        }
    }

    /// Queues `f` on the executor's thread and returns a [`Future`] of its value. A panic
    /// in `f` fails the future with TETHER_E_PANIC. `f` is `Send + 'static`: it moves to
    /// the executor's thread, and may be dropped on any thread if it never runs.
    pub fn submit<F, R>(&self, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let mut handle = sys::tether_future { id: 0 };
        Error::check(self.submit_raw(f, &mut handle))?;
        Ok(Future::from_handle(handle))
    }

    /// Queues `f` fire-and-forget: a failure (panic) is counted and kept by the
    /// executor ([`errors`](Self::errors)).
    pub fn execute<F>(&self, f: F) -> Result<(), Error>
    where
        F: FnOnce() + Send + 'static,
    {
        Error::check(self.submit_raw(f, std::ptr::null_mut()))
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
        kept_errors(|i, out| unsafe { sys::tether_executor_error(self.handle, i, out) })
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        // SAFETY: we own the handle and release it exactly once.
        unsafe { sys::tether_executor_release(self.handle) };
    }
}

/// What the `on_done` notice shares with a polling async task.
#[derive(Default)]
struct Notify {
    waker: Option<Waker>,
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
    notify: Option<Arc<Mutex<Notify>>>,
    // fn() -> R: the future only ever hands an R out, and R: Send is required where it is
    // made, so the Future is Send + Sync whatever R is.
    _r: PhantomData<fn() -> R>,
}

impl std::fmt::Debug for Notify {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Notify")
    }
}

impl<R> Future<R> {
    pub(crate) fn from_handle(handle: sys::tether_future) -> Future<R> {
        Future {
            handle,
            notify: None,
            _r: PhantomData,
        }
    }

    /// The state, without blocking.
    pub fn poll(&self) -> State {
        self.state_now()
    }

    fn state_now(&self) -> State {
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
        Error::check(unsafe { sys::tether_future_wait(self.handle, -1) })?;
        self.outcome()
    }

    /// Waits at most `timeout`; a timeout is an error with `is_timeout()` and leaves the
    /// future usable. The value can be taken once: a second successful wait is an error
    /// (TETHER_E_WRONG_STATE).
    pub fn wait_timeout(&self, timeout: Duration) -> Result<R, Error> {
        // SAFETY: plain call on our handle.
        Error::check(unsafe { sys::tether_future_wait(self.handle, timeout_ns(Some(timeout))) })?;
        self.outcome()
    }

    /// The outcome of a terminal future.
    fn outcome(&self) -> Result<R, Error> {
        if self.state_now() == State::Succeeded {
            let mut p: *mut c_void = std::ptr::null_mut();
            // SAFETY: the value was stored by our trampoline as a Box<R>; taking it makes
            // us its owner.
            Error::check(unsafe { sys::tether_future_take_result(self.handle, &mut p) })?;
            if p.is_null() {
                return Err(Error::new(
                    sys::TETHER_E_INTERNAL,
                    "the future has no value",
                ));
            }
            return Ok(*unsafe { Box::from_raw(p.cast::<R>()) });
        }
        let mut e = sys::tether_error { id: 0 };
        // SAFETY: out-pointer to a local; from_handle releases it.
        unsafe { sys::tether_future_error(self.handle, &mut e) };
        if e.id != 0 {
            Err(Error::from_handle(e))
        } else {
            Err(Error::new(
                sys::TETHER_E_WRONG_STATE,
                "the future is not terminal",
            ))
        }
    }
}

unsafe extern "C" fn notify_trampoline(arg: *mut c_void) {
    // SAFETY: `arg` is the Arc<Mutex<Notify>> boxed by poll; it lives until arg_drop,
    // which the library runs after this function.
    let n = unsafe { &*arg.cast::<Arc<Mutex<Notify>>>() };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let w = n.lock().unwrap_or_else(|e| e.into_inner()).waker.take();
        if let Some(w) = w {
            w.wake();
        }
    }));
}

impl<R> std::future::Future for Future<R> {
    type Output = Result<R, Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Store the waker BEFORE looking at the state: a completion after the look then
        // finds it, so no wake-up is lost.
        let first = self.notify.is_none();
        let notify = self.notify.get_or_insert_with(Default::default).clone();
        notify.lock().unwrap_or_else(|e| e.into_inner()).waker = Some(cx.waker().clone());
        if first {
            // SAFETY: the boxed Arc is freed exactly once by free_boxed (also on failure).
            let st = unsafe {
                sys::tether_future_on_done(
                    self.handle,
                    Some(notify_trampoline),
                    into_arg(notify),
                    Some(free_boxed::<Arc<Mutex<Notify>>>),
                )
            };
            if st != sys::TETHER_OK {
                return Poll::Ready(Err(Error::from_status(st)));
            }
        }
        if self.state_now().is_terminal() {
            Poll::Ready(self.outcome())
        } else {
            Poll::Pending
        }
    }
}

impl<R> Drop for Future<R> {
    fn drop(&mut self) {
        // SAFETY: we own the handle and release it exactly once; the work goes on.
        unsafe { sys::tether_future_release(self.handle) };
    }
}
