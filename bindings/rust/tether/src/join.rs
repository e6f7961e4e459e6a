//! `JoinHandle<T>`: the value (or the error) of one nested thread ([`Scope::spawn`]).
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tether_sys as sys;

use crate::Error;

/// The outcome of a nested thread started by [`Scope::spawn`](crate::Scope::spawn): wait
/// for it and take its value (`Ok(T)`), or its error (the `Err(e)` it returned, as
/// TETHER_E_TASK_FAILED with `e`'s text, or its panic, TETHER_E_PANIC). The scope sees
/// the same failure (the runner fails at its first error); the handle is for the value.
///
/// The value is taken once: a second successful join is an error (TETHER_E_WRONG_STATE).
/// Dropping the handle does not stop the thread. A thread the library never ran (its
/// scope was torn down first) gives TETHER_E_CANCELLED.
///
/// ```
/// use std::time::Duration;
/// use tether::{Runner, RunnerOptions};
/// let runner = Runner::spawn(&RunnerOptions::new(), |scope| {
///     let parts: Vec<_> = (1..=3u64)
///         .map(|i| scope.spawn(&format!("part-{i}"), move |_| Ok::<_, String>(i * 10)))
///         .collect::<Result<_, _>>()?;
///     let mut sum = 0;
///     for part in parts {
///         sum += part.join_timeout(Duration::from_secs(5))?;
///     }
///     Ok::<_, tether::Error>(sum)
/// }).unwrap();
/// assert_eq!(runner.join_timeout(Duration::from_secs(5)).unwrap(), 60);
/// ```
#[derive(Debug)]
pub struct JoinHandle<T> {
    slot: Arc<Slot<T>>,
}

/// What the nested thread and its handle share. The mutex guards the outcome; the nested
/// thread stores it once (or the closure's drop stores CANCELLED if it never ran), then
/// notifies `done`; the handle waits on `done` and takes the outcome once.
#[derive(Debug)]
pub(crate) struct Slot<T> {
    outcome: Mutex<Outcome<T>>,
    done: Condvar,
}

#[derive(Debug)]
enum Outcome<T> {
    Running,
    Done(Result<T, Error>),
    Taken,
}

impl<T> Slot<T> {
    pub(crate) fn new() -> Arc<Slot<T>> {
        Arc::new(Slot {
            outcome: Mutex::new(Outcome::Running),
            done: Condvar::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Outcome<T>> {
        self.outcome.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores the outcome unless one is stored already (the first one wins).
    pub(crate) fn fill(&self, r: Result<T, Error>) {
        let mut o = self.lock();
        if matches!(*o, Outcome::Running) {
            *o = Outcome::Done(r);
            self.done.notify_all();
        }
    }
}

/// Travels with the nested thread's closure: if the closure is dropped without having
/// filled the slot (the library never ran it), the handle learns it was CANCELLED.
pub(crate) struct Filler<T>(pub(crate) Arc<Slot<T>>);

impl<T> Drop for Filler<T> {
    fn drop(&mut self) {
        self.0.fill(Err(Error::new(
            sys::TETHER_E_CANCELLED,
            "the nested thread never ran",
        )));
    }
}

impl<T> JoinHandle<T> {
    pub(crate) fn new(slot: Arc<Slot<T>>) -> JoinHandle<T> {
        JoinHandle { slot }
    }

    /// Whether the thread has returned (or failed), without blocking.
    pub fn is_finished(&self) -> bool {
        !matches!(*self.slot.lock(), Outcome::Running)
    }

    /// Waits at most `timeout` for the thread, then takes its value or returns its error.
    /// A timeout is an error with kind `Timeout` and leaves the handle usable.
    pub fn join_timeout(&self, timeout: Duration) -> Result<T, Error> {
        let deadline = Instant::now().checked_add(timeout);
        let mut o = self.slot.lock();
        while matches!(*o, Outcome::Running) {
            let left = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => Duration::MAX,
            };
            if left.is_zero() {
                return Err(Error::new(
                    sys::TETHER_E_TIMEOUT,
                    "the nested thread has not returned yet",
                ));
            }
            o = self
                .slot
                .done
                .wait_timeout(o, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        match std::mem::replace(&mut *o, Outcome::Taken) {
            Outcome::Done(r) => r,
            _ => Err(Error::new(
                sys::TETHER_E_WRONG_STATE,
                "the nested thread's outcome was already taken",
            )),
        }
    }

    /// Waits without limit for the thread, then takes its value or returns its error.
    pub fn join(self) -> Result<T, Error> {
        self.join_timeout(Duration::MAX)
    }
}
