//! `Error`: a failure of user code (read from a `tether_error`) or of a call (a status).
use std::ffi::CStr;
use std::fmt;

use tether_sys as sys;

use crate::util::read_string;

/// A tether error: its status code, message, the thread it was raised on, the type name
/// (of a C++ exception, when there was one), the application's `user_code`, and the error
/// that caused it (an `ACTOR_DEAD` error's cause is the constructor's error).
///
/// The same type describes a failing call (a timeout, a bad state) and a failing task.
///
/// ```
/// use tether::{Runner, RunnerOptions, Error};
/// let runner = Runner::spawn(&RunnerOptions::new().name("failing"), |_scope| -> Result<(), String> {
///     Err("disk full".to_string())
/// }).unwrap();
/// let err: Error = runner.into_result().unwrap_err();
/// assert_eq!(err.code(), tether::sys::TETHER_E_TASK_FAILED);
/// assert_eq!(err.status_name(), "TETHER_E_TASK_FAILED");
/// assert_eq!(err.message(), "disk full");
/// assert_eq!(err.thread_name(), "failing");
/// println!("{err}"); // TETHER_E_TASK_FAILED on thread "failing": disk full
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: i32,
    user_code: i64,
    message: String,
    thread_name: String,
    type_name: String,
    cause: Option<Box<Error>>,
}

impl Error {
    /// Reads every field of `e` and releases the handle (the caller's ownership ends).
    pub(crate) fn from_handle(e: sys::tether_error) -> Error {
        // SAFETY: accessors on any handle are safe (0 / "" for an invalid one); the
        // closures pass the buffer they are given.
        unsafe {
            let mut cause = sys::tether_error { id: 0 };
            sys::tether_error_cause(e, &mut cause);
            let err = Error {
                code: sys::tether_error_code(e),
                user_code: sys::tether_error_user_code(e),
                message: read_string(|b, c| sys::tether_error_message(e, b, c)),
                thread_name: read_string(|b, c| sys::tether_error_thread_name(e, b, c)),
                type_name: read_string(|b, c| sys::tether_error_type_name(e, b, c)),
                cause: if cause.id != 0 {
                    Some(Box::new(Error::from_handle(cause)))
                } else {
                    None
                },
            };
            sys::tether_error_release(e);
            err
        }
    }

    /// An error for a call that returned `status`, read on the thread that made the call
    /// (the thread-local last-error text gives the detail).
    pub(crate) fn from_status(status: sys::tether_status) -> Error {
        // SAFETY: tether_last_error_message copies into the buffer it is given.
        let mut message = read_string(|b, c| unsafe { sys::tether_last_error_message(b, c) });
        if message.is_empty() {
            message = Self::describe(status).to_string();
        }
        Error::new(status, message)
    }

    /// An error made by the binding itself (not from the library).
    pub(crate) fn new(code: i32, message: impl Into<String>) -> Error {
        Error {
            code,
            user_code: 0,
            message: message.into(),
            thread_name: std::thread::current().name().unwrap_or("").to_string(),
            type_name: String::new(),
            cause: None,
        }
    }

    // Inline: it is on every call's path, and its success branch is one compare.
    #[inline]
    pub(crate) fn check(status: sys::tether_status) -> Result<(), Error> {
        if status == sys::TETHER_OK {
            Ok(())
        } else {
            Err(Error::from_status(status))
        }
    }

    pub(crate) fn status_name_of(code: i32) -> &'static str {
        // SAFETY: static storage, never NULL (header section 3).
        unsafe { CStr::from_ptr(sys::tether_status_name(code)) }
            .to_str()
            .unwrap_or("TETHER_E_UNKNOWN")
    }

    /// One human sentence for a status code ("the timeout passed before ...").
    pub fn describe(code: i32) -> &'static str {
        // SAFETY: static storage, never NULL (header section 3).
        unsafe { CStr::from_ptr(sys::tether_status_describe(code)) }
            .to_str()
            .unwrap_or("")
    }

    /// The status code (`tether::sys::TETHER_E_PANIC`, ...).
    pub fn code(&self) -> i32 {
        self.code
    }
    /// The code's name, "TETHER_E_PANIC".
    pub fn status_name(&self) -> &'static str {
        Self::status_name_of(self.code)
    }
    /// The message ("task returned 3", a panic's text, `E`'s `Display`).
    pub fn message(&self) -> &str {
        &self.message
    }
    /// The full name of the thread the error was raised on.
    pub fn thread_name(&self) -> &str {
        &self.thread_name
    }
    /// The C++ exception's type name, or empty.
    pub fn type_name(&self) -> &str {
        &self.type_name
    }
    /// The application code (a C callback's return value; 0 for Rust closures).
    pub fn user_code(&self) -> i64 {
        self.user_code
    }
    /// The error that caused this one, if any.
    pub fn cause(&self) -> Option<&Error> {
        self.cause.as_deref()
    }
    /// Whether user code panicked (TETHER_E_PANIC).
    pub fn is_panic(&self) -> bool {
        self.code == sys::TETHER_E_PANIC
    }
    /// Whether a wait timed out (TETHER_E_TIMEOUT).
    pub fn is_timeout(&self) -> bool {
        self.code == sys::TETHER_E_TIMEOUT
    }
    /// Whether the work was cancelled (TETHER_E_CANCELLED).
    pub fn is_cancelled(&self) -> bool {
        self.code == sys::TETHER_E_CANCELLED
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.status_name())?;
        if !self.thread_name.is_empty() {
            write!(f, " on thread {:?}", self.thread_name)?;
        }
        write!(f, ": {}", self.message)?;
        if !self.type_name.is_empty() {
            write!(f, " ({})", self.type_name)?;
        }
        if self.user_code != 0 {
            write!(f, " [user code {}]", self.user_code)?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause.as_deref().map(|e| e as _)
    }
}
