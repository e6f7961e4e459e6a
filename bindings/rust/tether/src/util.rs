//! Glue shared by every callback shape: boxing, string conversion, panic capture.
use std::any::Any;
use std::ffi::{c_char, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use tether_sys as sys;

use crate::ffi::{self, RawArg};

/// `None` waits forever (-1); a duration saturates at i64::MAX nanoseconds.
pub(crate) fn timeout_ns(t: Option<Duration>) -> i64 {
    match t {
        None => -1,
        Some(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
    }
}

/// A C string for `s`; interior NULs (which C cannot carry) become U+FFFD.
pub(crate) fn cstring(s: &str) -> CString {
    CString::new(s).unwrap_or_else(|_| CString::new(s.replace('\0', "\u{FFFD}")).unwrap())
}

/// Reads a string the library copies out as `size_t f(buf, cap)` (header section 1).
pub(crate) fn read_string(f: impl Fn(*mut c_char, usize) -> usize) -> String {
    let mut cap = f(std::ptr::null_mut(), 0) + 1;
    loop {
        let mut buf = vec![0u8; cap];
        let len = f(buf.as_mut_ptr().cast(), cap);
        if len < cap {
            buf.truncate(len);
            return String::from_utf8_lossy(&buf).into_owned();
        }
        cap = len + 1; // the value grew between the two calls (never for immutable errors)
    }
}

/// The `arg_drop` of every boxed closure and value: `Box::from_raw` then drop, exactly
/// once (the library's contract). A panicking `Drop` must not unwind into C, so it is
/// caught and swallowed: there is no task left to report it to.
pub(crate) unsafe extern "C" fn free_boxed<T>(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // SAFETY: `p` came from `Box::<T>::into_raw` in this crate, and the library calls the
    // drop function exactly once.
    let b = unsafe { Box::from_raw(p.cast::<T>()) };
    let _ = catch_unwind(AssertUnwindSafe(move || drop(b)));
}

/// Moves `v` into a raw pointer owned by the library, to be freed by `free_boxed::<T>`.
pub(crate) fn into_arg<T>(v: T) -> *mut c_void {
    Box::into_raw(Box::new(v)).cast()
}

/// The text of a panic payload (`panic!("..")` gives a `&str` or a `String`).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

/// Runs user code at a task boundary. `body` returns `Err(message)` to fail the task with
/// TETHER_E_TASK_FAILED; a panic is caught and recorded as TETHER_E_PANIC with the panic
/// message. Nothing unwinds into C.
///
/// # Safety
/// `task` is the task of the callback running on this thread.
pub(crate) unsafe fn run_task(
    task: *mut sys::tether_task,
    body: impl FnOnce() -> Result<(), String>,
) -> sys::tether_status {
    match catch(body) {
        Ok(()) => sys::TETHER_OK,
        // SAFETY: the caller's contract.
        Err((code, msg)) => unsafe { fail_task(task, code, &msg) },
    }
}

/// Runs user code and turns its `Err(message)` into `(TETHER_E_TASK_FAILED, message)` and
/// a panic into `(TETHER_E_PANIC, the panic message)`: nothing unwinds out of it.
#[inline]
pub(crate) fn catch<R>(
    body: impl FnOnce() -> Result<R, String>,
) -> Result<R, (sys::tether_status, String)> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(msg)) => Err((sys::TETHER_E_TASK_FAILED, msg)),
        Err(payload) => {
            let msg = panic_message(&*payload);
            // A payload whose Drop panics must not unwind into C either.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            Err((sys::TETHER_E_PANIC, msg))
        }
    }
}

/// Records `code` and `msg` as the failure of `task` and returns `code`.
///
/// # Safety
/// `task` is the task of the callback running on this thread.
#[cold]
pub(crate) unsafe fn fail_task(
    task: *mut sys::tether_task,
    code: sys::tether_status,
    msg: &str,
) -> sys::tether_status {
    let c = cstring(msg);
    // SAFETY: callback only, and we are in the callback of `task`.
    unsafe { sys::tether_task_fail_with(task, code, 0, c.as_ptr()) };
    code
}

/// Where an async poll leaves its waker for an `on_done` notice to wake.
pub(crate) type WakerSlot = std::sync::Arc<std::sync::Mutex<Option<std::task::Waker>>>;

/// Stores `cx`'s waker in `slot` (made on the first poll) and, on that first poll only,
/// returns the notice to register with the work's `on_done`: it wakes the stored waker.
/// The caller reads the work's state AFTER this: a completion after the read then finds
/// the waker, so no wake-up is lost.
pub(crate) fn store_waker(
    slot: &mut Option<WakerSlot>,
    cx: &std::task::Context<'_>,
) -> Option<impl FnOnce() + Send + 'static> {
    let first = slot.is_none();
    let shared = slot.get_or_insert_with(Default::default).clone();
    *shared.lock().unwrap_or_else(|e| e.into_inner()) = Some(cx.waker().clone());
    first.then_some(move || {
        let w = shared.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(w) = w {
            w.wake();
        }
    })
}

/// Whether a `T` travels IN the `arg` (or result) pointer instead of in a box: it is no
/// bigger and no more aligned than a pointer, and has no drop glue. No drop glue matters
/// twice: an `arg` the library drops without running it (cancelled, rejected) then needs
/// no `arg_drop` (forgetting the bytes is dropping them), and the callback can read the
/// value out of the bits without leaving anything behind for `arg_drop` to free. A closure
/// capturing an `Arc` or a `String` has drop glue and goes boxed; one capturing nothing, a
/// `u64`, a `&'static T` or a `fn` pointer travels inline. A zero-sized `T` needs no
/// storage at all.
pub(crate) const fn travels_inline<T>() -> bool {
    std::mem::size_of::<T>() <= std::mem::size_of::<*mut c_void>()
        && std::mem::align_of::<T>() <= std::mem::align_of::<*mut c_void>()
        && !std::mem::needs_drop::<T>()
}

/// A value on its way into C as `arg` + `arg_drop`.
pub(crate) struct Packed {
    pub(crate) arg: RawArg,
    pub(crate) drop: Option<sys::tether_drop_fn>,
}

/// Packs `v` for the library: inline in the pointer's bytes when `travels_inline::<T>()`
/// (no allocation, no `arg_drop`), else as `Box<Option<T>>` freed by
/// `free_boxed::<Option<T>>` (the callback `take()`s the value, the drop frees the box).
/// Read it back with [`unpack`].
pub(crate) fn pack<T>(v: T) -> Packed {
    if travels_inline::<T>() {
        // Zeroed, so that bytes T does not cover (all of them for a ZST) are defined.
        let mut bits = RawArg::zeroed();
        // SAFETY: T fits the slot's size and alignment (travels_inline).
        unsafe { bits.as_mut_ptr().cast::<T>().write(v) };
        Packed {
            arg: bits,
            drop: None,
        }
    } else {
        Packed {
            arg: RawArg::new(into_arg(Some(v))),
            drop: Some(free_boxed::<Option<T>>),
        }
    }
}

/// Moves the value out of an `arg` made by [`pack`]. Boxed, the box itself is freed later
/// by the arg's drop, which the library runs after the callback.
///
/// # Safety
/// `arg` is the library's copy of a `pack::<T>(..)` result, handed to this callback, and
/// this is the only `unpack` of it (the library runs a callback once).
pub(crate) unsafe fn unpack<T>(arg: *mut c_void) -> Option<T> {
    if travels_inline::<T>() {
        // SAFETY: the library hands `arg` back with the bytes `pack` wrote (it stores and
        // passes the pointer unchanged); T fits and has no drop glue, so reading it once
        // moves it out and leaves nothing behind.
        Some(unsafe { std::ptr::addr_of!(arg).cast::<T>().read() })
    } else {
        // SAFETY: `arg` points to the live Option<T> boxed by `pack`.
        unsafe { (*arg.cast::<Option<T>>()).take() }
    }
}

/// Hands `v` to the task's result slot (freed by the library if nobody takes it): inline
/// as [`pack`] does, but boxed as a plain `Box<R>` since nothing takes it out early. A
/// zero-sized `R` without drop glue is not handed over at all: the taker makes it anew
/// ([`take_value`]), which moves nothing because there is nothing to move, and the
/// library's "take once" rule still holds (a future that SUCCEEDED without a result gives
/// NULL to its first take only).
///
/// # Safety
/// Callback only, in the callback of `task`, which is the target (only the target may
/// set the result).
pub(crate) unsafe fn put_result<R: Send + 'static>(
    task: *mut sys::tether_task,
    v: R,
) -> Result<(), String> {
    let st = if travels_inline::<R>() {
        if std::mem::size_of::<R>() == 0 {
            std::mem::forget(v);
            return Ok(());
        }
        let mut bits = RawArg::zeroed();
        // SAFETY: R fits the slot (travels_inline); no drop is needed for it.
        unsafe {
            bits.as_mut_ptr().cast::<R>().write(v);
            ffi::task_set_result(task, bits, None)
        }
    } else {
        // SAFETY: on failure the library drops the value itself, through free_boxed::<R>.
        unsafe { ffi::task_set_result(task, RawArg::new(into_arg(v)), Some(free_boxed::<R>)) }
    };
    if st == sys::TETHER_OK {
        Ok(())
    } else {
        Err(format!(
            "could not store the result: {}",
            crate::Error::status_name_of(st)
        ))
    }
}

/// The value behind a result pointer taken from the library (`take_result` of a future or
/// runner whose target stored it with `put_result::<R>`). `None` only for a boxed `R`
/// whose pointer is NULL, which our targets never leave.
///
/// # Safety
/// `p` came from a successful `take_result` on work whose result, if any, was stored by
/// `put_result::<R>`, and the work SUCCEEDED (so its target did store one).
pub(crate) unsafe fn take_value<R>(p: *mut c_void) -> Option<R> {
    if travels_inline::<R>() {
        // SAFETY: the bytes `put_result` wrote (for a ZST: none, and reading a ZST from an
        // aligned pointer reads nothing). The value was moved into the slot once and is
        // moved out here once (take_result succeeds once).
        Some(unsafe { std::ptr::addr_of!(p).cast::<R>().read() })
    } else if p.is_null() {
        None
    } else {
        // SAFETY: put_result boxed it as Box<R>; taking it made us its owner.
        Some(*unsafe { Box::from_raw(p.cast::<R>()) })
    }
}

/// The `tether_notify_fn` of an `on_done` closure packed with [`pack`]: runs it once. A
/// panic in it is caught and discarded: there is no task to report it to, and it must not
/// unwind into C.
pub(crate) unsafe extern "C" fn notify_trampoline<F: FnOnce() + Send + 'static>(arg: *mut c_void) {
    // SAFETY: `arg` is the library's copy of pack::<F>(..), and on_done runs fn once.
    if let Some(f) = unsafe { unpack::<F>(arg) } {
        let _ = catch_unwind(AssertUnwindSafe(f));
    }
}
