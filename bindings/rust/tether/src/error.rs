//! `Error`: a failure of user code (read from a `tether_error`) or of a call (a status).
use std::ffi::CStr;
use std::fmt;
use std::sync::Arc;

use tether_sys as sys;

use crate::util::read_string;

/// A tether error: its status code, message, the thread it was raised on, the type name
/// (of a C++ exception, when there was one), the application's `user_code`, and the error
/// that caused it (an `ACTOR_DEAD` error's cause is the constructor's error).
///
/// The same type describes a failing call (a timeout, a bad state: the thread is the
/// caller's) and a failing task (the thread is the one the task failed on). Both name the
/// object involved, its [`origin`](Self::origin): `actor "log"`, `actor "srv", group
/// "io"`, `executor "worker"`, `runner "trainer"`, `graph`, `compiled graph`. Match on
/// [`kind`](Self::kind) to tell the failures apart.
///
/// ```
/// use std::time::Duration;
/// use tether::{ErrorKind, Runner, RunnerOptions, Error};
/// let runner = Runner::spawn(&RunnerOptions::new().name("failing"), |_scope| -> Result<(), String> {
///     Err("disk full".to_string())
/// }).unwrap();
/// let err: Error = runner.join_timeout(Duration::from_secs(5)).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::TaskFailed);
/// assert_eq!(err.status_name(), "TETHER_E_TASK_FAILED");
/// assert_eq!(err.message(), "disk full");
/// assert_eq!(err.thread_name(), "failing");
/// assert_eq!(err.origin(), Some(r#"runner "failing""#));
/// assert_eq!(err.to_string(), r#"TETHER_E_TASK_FAILED in runner "failing" on thread "failing": disk full"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: i32,
    user_code: i64,
    message: String,
    thread_name: String,
    type_name: String,
    cause: Option<Box<Error>>,
    origin: Option<Arc<str>>,
    // True when a call returned the status on the calling thread (thread_name is the
    // caller's); false when a task failed (thread_name is where it failed).
    at_call: bool,
}

/// What went wrong: one variant per tether status code (`ErrorKind::Shutdown` is
/// `TETHER_E_SHUTDOWN`), so callers match on names instead of numbers. Non-exhaustive: a
/// newer library may add codes; one this binding does not know is [`Unknown`](Self::Unknown).
///
/// ```
/// use std::time::Duration;
/// use tether::{Actor, ActorOptions, ErrorKind, StopMode};
/// let actor = Actor::new(&ActorOptions::new().name("log"), || 0u32).unwrap();
/// actor.stop(StopMode::Drain, Some(Duration::from_secs(5))).unwrap();
/// let err = actor.call(|n| *n).unwrap_err();
/// match err.kind() {
///     ErrorKind::Shutdown | ErrorKind::ActorDead => println!("gone: {err}"),
///     other => panic!("unexpected {other:?}"),
/// }
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// TETHER_E_INVALID_ARGUMENT: a bad option value or name, an index out of range.
    InvalidArgument,
    /// TETHER_E_INVALID_HANDLE: the object was released (or never existed).
    InvalidHandle,
    /// TETHER_E_WRONG_STATE: the object's state refuses the call (a value taken twice, a
    /// graph compiled twice, a header/library version mismatch).
    WrongState,
    /// TETHER_E_TIMEOUT: the wait's bound passed first.
    Timeout,
    /// TETHER_E_CANCELLED: the work was cancelled before or while it ran.
    Cancelled,
    /// TETHER_E_DEADLOCK: the wait could only be satisfied by the waiting thread.
    Deadlock,
    /// TETHER_E_THREAD_BUSY: the thread already hosts another compiled graph's loop.
    ThreadBusy,
    /// TETHER_E_ACTOR_DEAD: the actor's constructor failed (see [`Error::cause`]).
    ActorDead,
    /// TETHER_E_QUEUE_FULL: a bounded queue or mailbox is full.
    QueueFull,
    /// TETHER_E_SHUTDOWN: the executor or actor is stopping or stopped.
    Shutdown,
    /// TETHER_E_NO_MEMORY.
    NoMemory,
    /// TETHER_E_THREAD_CREATE: the operating system refused a thread.
    ThreadCreate,
    /// TETHER_E_TASK_FAILED: user code returned `Err` (or called [`Scope::fail`](crate::Scope::fail)).
    TaskFailed,
    /// TETHER_E_EXCEPTION: C++ code threw a `std::exception`.
    Exception,
    /// TETHER_E_UNKNOWN_EXCEPTION: C++ code threw something else.
    UnknownException,
    /// TETHER_E_PANIC: user code panicked.
    Panic,
    /// TETHER_E_NOT_FOUND: no such concurrency group or thread name.
    NotFound,
    /// TETHER_E_INTERNAL: a defect of the library.
    Internal,
    /// TETHER_E_FORKED: a tether object was used in a child process after `fork()`.
    Forked,
    /// A status code this binding does not know (from a newer library): see
    /// [`Error::code`].
    Unknown,
}

impl ErrorKind {
    const ALL: [(ErrorKind, i32); 19] = [
        (ErrorKind::InvalidArgument, sys::TETHER_E_INVALID_ARGUMENT),
        (ErrorKind::InvalidHandle, sys::TETHER_E_INVALID_HANDLE),
        (ErrorKind::WrongState, sys::TETHER_E_WRONG_STATE),
        (ErrorKind::Timeout, sys::TETHER_E_TIMEOUT),
        (ErrorKind::Cancelled, sys::TETHER_E_CANCELLED),
        (ErrorKind::Deadlock, sys::TETHER_E_DEADLOCK),
        (ErrorKind::ThreadBusy, sys::TETHER_E_THREAD_BUSY),
        (ErrorKind::ActorDead, sys::TETHER_E_ACTOR_DEAD),
        (ErrorKind::QueueFull, sys::TETHER_E_QUEUE_FULL),
        (ErrorKind::Shutdown, sys::TETHER_E_SHUTDOWN),
        (ErrorKind::NoMemory, sys::TETHER_E_NO_MEMORY),
        (ErrorKind::ThreadCreate, sys::TETHER_E_THREAD_CREATE),
        (ErrorKind::TaskFailed, sys::TETHER_E_TASK_FAILED),
        (ErrorKind::Exception, sys::TETHER_E_EXCEPTION),
        (ErrorKind::UnknownException, sys::TETHER_E_UNKNOWN_EXCEPTION),
        (ErrorKind::Panic, sys::TETHER_E_PANIC),
        (ErrorKind::NotFound, sys::TETHER_E_NOT_FOUND),
        (ErrorKind::Internal, sys::TETHER_E_INTERNAL),
        (ErrorKind::Forked, sys::TETHER_E_FORKED),
    ];

    /// The kind of a status code (`Unknown` for one this binding does not know, and for
    /// TETHER_OK, which is no error).
    pub fn from_code(code: i32) -> ErrorKind {
        Self::ALL
            .iter()
            .find(|(_, c)| *c == code)
            .map_or(ErrorKind::Unknown, |(k, _)| *k)
    }

    /// The status code of this kind; `None` for `Unknown`.
    pub fn code(self) -> Option<i32> {
        Self::ALL.iter().find(|(k, _)| *k == self).map(|(_, c)| *c)
    }
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
                origin: None,
                at_call: false,
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
            origin: None,
            at_call: true,
        }
    }

    /// An error raised by user code on the thread named `thread_name` (a nested thread's
    /// outcome, as its handle reports it).
    pub(crate) fn raised(code: i32, message: String, thread_name: String) -> Error {
        Error {
            thread_name,
            at_call: false,
            ..Error::new(code, message)
        }
    }

    /// Names the object the error belongs to (`actor "log"`), unless it already has one.
    pub(crate) fn at(mut self, origin: &Option<Arc<str>>) -> Error {
        if self.origin.is_none() {
            self.origin.clone_from(origin);
        }
        self
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

    /// What went wrong, by name.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::from_code(self.code)
    }
    /// The status code (`tether::sys::TETHER_E_PANIC`, ...).
    pub fn code(&self) -> i32 {
        self.code
    }
    /// The object the error belongs to: `actor "log"`, `actor "srv", group "io"`,
    /// `executor "worker"`, `runner "trainer"`, `graph`, `compiled graph`; `None` for
    /// errors of no object (a [`wait_any`](crate::wait_any)).
    pub fn origin(&self) -> Option<&str> {
        self.origin.as_deref()
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
        // A task's error: "in actor "log" on thread "upload""; a call's: "at actor "log",
        // from thread "main"" (the caller's thread).
        write!(f, "{}", self.status_name())?;
        if let Some(origin) = &self.origin {
            write!(f, " {} {origin}", if self.at_call { "at" } else { "in" })?;
        }
        if !self.thread_name.is_empty() {
            let sep = if self.at_call && self.origin.is_some() {
                ","
            } else {
                ""
            };
            let word = if self.at_call { "from" } else { "on" };
            write!(f, "{sep} {word} thread {:?}", self.thread_name)?;
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

/// The origin text `kind "name"` (`actor "log"`) shared by an object and its futures.
pub(crate) fn origin(kind: &str, name: &str) -> Option<Arc<str>> {
    Some(Arc::from(format!("{kind} {name:?}")))
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause.as_deref().map(|e| e as _)
    }
}
