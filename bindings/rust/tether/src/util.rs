//! Glue shared by every callback shape: boxing, string conversion, panic capture.
use std::any::Any;
use std::ffi::{c_char, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use tether_sys as sys;

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
    let (code, msg) = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => return sys::TETHER_OK,
        Ok(Err(msg)) => (sys::TETHER_E_TASK_FAILED, msg),
        Err(payload) => {
            let msg = panic_message(&*payload);
            // A payload whose Drop panics must not unwind into C either.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            (sys::TETHER_E_PANIC, msg)
        }
    };
    let c = cstring(&msg);
    // SAFETY: callback only, and we are in the callback of `task`.
    unsafe { sys::tether_task_fail_with(task, code, 0, c.as_ptr()) };
    code
}

/// Takes the closure out of its `Option` slot in a boxed arg. The box itself is freed
/// later by `free_boxed::<Option<F>>`, the arg's drop, which the library runs after the
/// callback.
///
/// # Safety
/// `arg` points to a live `Option<F>` owned by this callback.
pub(crate) unsafe fn take_closure<F>(arg: *mut c_void) -> Option<F> {
    // SAFETY: per the function's contract.
    unsafe { (*arg.cast::<Option<F>>()).take() }
}

/// Hands `v` to the task's result slot (freed by the library if nobody takes it).
///
/// # Safety
/// Callback only, in the callback of `task`.
pub(crate) unsafe fn set_result<R: Send + 'static>(
    task: *mut sys::tether_task,
    v: R,
) -> Result<(), String> {
    // SAFETY: on failure the library drops the value itself, through free_boxed::<R>.
    let st = unsafe { sys::tether_task_set_result(task, into_arg(v), Some(free_boxed::<R>)) };
    if st == sys::TETHER_OK {
        Ok(())
    } else {
        Err(format!(
            "could not store the result: {}",
            crate::Error::status_name_of(st)
        ))
    }
}
