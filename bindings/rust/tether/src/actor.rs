//! `Actor<S>`: state that lives on one pinned thread (header section 8).
use std::convert::Infallible;
use std::ffi::{c_char, c_void, CString};
use std::fmt::Display;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use tether_sys as sys;

use crate::executor::{kept_errors, new_stats};
use crate::ffi;
use crate::util::{
    cstring, free_boxed, pack, put_result, run_task, take_value, timeout_ns, unpack,
};
use crate::{Error, Executor, Future, Scope, Stats};

/// Options of [`Actor::new`] and [`Actor::with_groups`]. (Concurrency groups are not an
/// option: they change what calls may do with the state, so they are part of the type,
/// see [`GroupedActor`].)
#[derive(Debug, Clone, Default)]
pub struct ActorOptions {
    name: Option<String>,
    executor: sys::tether_executor,
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

/// Marker of an [`Actor`] without concurrency groups: its state is touched by its
/// default thread only, one call at a time, so calls get `&mut S`.
#[derive(Debug)]
pub enum Exclusive {}

/// Marker of an actor with concurrency groups ([`GroupedActor`]): its state is shared
/// with the groups' threads, so every call gets `&S`, and `S: Sync`.
#[derive(Debug)]
pub enum Shared {}

/// State `S` that lives on ONE pinned thread: it is built there by the constructor
/// closure, every default-group call runs there in order, and it is dropped there. So `S`
/// need not be `Send`: `Rc<RefCell<_>>` and `thread_local!` set by the constructor work.
///
/// Closures going in are `Send + 'static` (they move to the actor's thread, and may be
/// dropped on any thread if they never run); values coming out are `Send`, so nothing of
/// `S` that is not `Send` can ever leave its thread. A closure that fits in a pointer and
/// has no drop glue (one capturing nothing, or a `u64`) travels without allocation.
///
/// Dropping an `Actor` lets the queued calls run (drain), then drops `S` on its thread.
///
/// `Actor<S>` (= `Actor<S, Exclusive>`, made by [`new`](Actor::new)) has no concurrency
/// groups and gives calls `&mut S`. An actor with groups is a [`GroupedActor<S>`]
/// (= `Actor<S, Shared>`, made by [`with_groups`](Actor::with_groups)): there every call
/// gets `&S` and `S: Sync`, because group methods run on other threads at the same time.
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
pub struct Actor<S: 'static, A = Exclusive> {
    handle: sys::tether_actor,
    // `actor "name"`, for the errors of its calls and futures.
    origin: Option<Arc<str>>,
    // fn(S): an Actor never holds or hands out an S (the S lives on the actor's thread,
    // and only Send values come out of it), so the handle is Send + Sync whatever S is.
    _s: PhantomData<fn(S)>,
    // A is a marker type (Exclusive or Shared), never a value.
    _access: PhantomData<fn() -> A>,
}

/// An actor with concurrency groups: its state is shared by the default thread and the
/// groups' threads, so `S: Sync` and every call gets `&S`; use interior mutability
/// (atomics, `Mutex`, `RwLock`) for what changes. Made by [`Actor::with_groups`].
///
/// ```
/// use std::{sync::atomic::{AtomicU64, Ordering}, time::Duration};
/// use tether::{Actor, ActorOptions, GroupedActor};
///
/// let server: GroupedActor<AtomicU64> =
///     Actor::with_groups(&ActorOptions::new().name("srv"), &[("io", 2)], || AtomicU64::new(0)).unwrap();
/// let io = server.group("io");
/// let fs: Vec<_> = (0..4).map(|_| io.call(|hits| hits.fetch_add(1, Ordering::SeqCst)).unwrap()).collect();
/// for f in fs { f.wait_timeout(Duration::from_secs(5)).unwrap(); }
/// let total = server.call(|hits| hits.load(Ordering::SeqCst)).unwrap();   // default thread
/// assert_eq!(total.wait_timeout(Duration::from_secs(5)).unwrap(), 4);
/// ```
pub type GroupedActor<S> = Actor<S, Shared>;

impl<S: 'static, A> std::fmt::Debug for Actor<S, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Actor")
            .field("handle", &self.handle)
            .field("origin", &self.origin)
            .finish()
    }
}

/// Creates an actor running `ctor` on its default thread (S is built there, boxed, and
/// freed there by the destructor `free_boxed::<S>`).
fn create<S, F, E>(
    options: &ActorOptions,
    groups: &[(&str, u32)],
    ctor: F,
) -> Result<(sys::tether_actor, Option<Arc<str>>), Error>
where
    S: 'static,
    F: FnOnce() -> Result<S, E> + Send + 'static,
    E: Display,
{
    crate::check_version()?;
    let origin = crate::error::origin("actor", options.name.as_deref().unwrap_or("tether-actor"));
    unsafe extern "C" fn ctor_trampoline<S: 'static, F, E>(
        task: *mut sys::tether_task,
        arg: *mut c_void,
        state_out: *mut *mut c_void,
    ) -> sys::tether_status
    where
        F: FnOnce() -> Result<S, E> + Send + 'static,
        E: Display,
    {
        // SAFETY: `arg` is the library's copy of pack::<F>(..) made by `create`, handed to
        // this callback once; `state_out` is the library's out-pointer; `task` is ours.
        unsafe {
            let Some(f) = unpack::<F>(arg) else {
                return sys::TETHER_E_INTERNAL;
            };
            run_task(task, move || match f() {
                Ok(s) => {
                    *state_out = Box::into_raw(Box::new(s)).cast();
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
    let group_names: Vec<CString> = groups.iter().map(|(n, _)| cstring(n)).collect();
    let specs: Vec<sys::tether_group_spec> = group_names
        .iter()
        .zip(groups)
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
    let a = pack(ctor);
    // SAFETY: `o`, the names and the specs outlive the call. A boxed ctor is freed exactly
    // once by its drop; the state is a Box<S> freed by the dtor, free_boxed::<S>, which
    // the library runs on the actor's default thread (where S was built), once.
    let st = unsafe {
        ffi::actor_create(
            &o,
            Some(ctor_trampoline::<S, F, E>),
            Some(free_boxed::<S>),
            a.arg,
            a.drop,
            &mut handle,
        )
    };
    Error::check(st).map_err(|e| e.at(&origin))?;
    Ok((handle, origin))
}

/// The C method of a call: runs `f` (the closure `pack` boxed) on the actor's thread; with
/// KEEP its value becomes the call's result, else it is dropped there (fire and forget).
unsafe extern "C" fn method_trampoline<S: 'static, F, R, const KEEP: bool>(
    task: *mut sys::tether_task,
    state: *mut c_void,
    arg: *mut c_void,
) -> sys::tether_status
where
    F: FnOnce(*mut S, &Scope) -> Result<R, String> + Send + 'static,
    R: Send + 'static,
{
    // SAFETY: `arg` is the library's copy of pack::<F>(..) made by call_raw or call_wait,
    // handed to this callback once; `state` is the Box<S> made by the constructor, live
    // until the destructor, which runs after every call; `task` is this callback's target.
    unsafe {
        let Some(f) = unpack::<F>(arg) else {
            return sys::TETHER_E_INTERNAL;
        };
        let s = state.cast::<S>();
        // Fire and forget (KEEP false): nobody can take a value, so it is dropped here
        // rather than handed to the library.
        run_task(task, move || {
            let v = f(s, &Scope::new(task))?;
            if KEEP {
                put_result(task, v)
            } else {
                Ok(())
            }
        })
    }
}

/// Queues `f(state, scope)` on the threads of `group` (NULL: the default thread). `f`
/// receives the raw state pointer; the public wrappers turn it into `&mut S` (an
/// [`Exclusive`] actor) or `&S` (a [`Shared`] one), which is where the aliasing argument
/// lives. `Err(text)` fails the call with TETHER_E_TASK_FAILED. With `out` NULL the call is
/// fire and forget and its value is dropped on the actor's thread.
fn call_raw<S, F, R>(
    actor: sys::tether_actor,
    group: *const c_char,
    f: F,
    out: *mut sys::tether_future,
    timeout: Option<Duration>,
) -> sys::tether_status
where
    S: 'static,
    F: FnOnce(*mut S, &Scope) -> Result<R, String> + Send + 'static,
    R: Send + 'static,
{
    let m: sys::tether_method_fn = if out.is_null() {
        method_trampoline::<S, F, R, false>
    } else {
        method_trampoline::<S, F, R, true>
    };
    let a = pack(f);
    // SAFETY: `group` is NULL or a C string the caller keeps alive for the call; a boxed
    // closure is freed exactly once by its drop (also on failure); `out` is NULL or a
    // local of the caller.
    unsafe {
        match timeout {
            None => ffi::actor_call(actor, group, Some(m), a.arg, a.drop, out),
            Some(t) => ffi::actor_call_timeout(
                actor,
                group,
                Some(m),
                a.arg,
                a.drop,
                out,
                timeout_ns(Some(t)),
            ),
        }
    }
}

/// `call_raw` with a future; errors name `origin`.
fn call_future<S, F, R>(
    actor: sys::tether_actor,
    group: *const c_char,
    origin: &Option<Arc<str>>,
    f: F,
    timeout: Option<Duration>,
) -> Result<Future<R>, Error>
where
    S: 'static,
    F: FnOnce(*mut S, &Scope) -> Result<R, String> + Send + 'static,
    R: Send + 'static,
{
    let mut h = sys::tether_future { id: 0 };
    Error::check(call_raw(actor, group, f, &mut h, timeout)).map_err(|e| e.at(origin))?;
    Ok(Future::from_handle(h, origin.clone()))
}

/// `call_raw` fire and forget; errors name `origin`.
fn call_tell<S, F>(
    actor: sys::tether_actor,
    group: *const c_char,
    origin: &Option<Arc<str>>,
    f: F,
) -> Result<(), Error>
where
    S: 'static,
    F: FnOnce(*mut S, &Scope) -> Result<(), String> + Send + 'static,
{
    Error::check(call_raw(actor, group, f, std::ptr::null_mut(), None)).map_err(|e| e.at(origin))
}

/// The blocking round trip (`tether_actor_call_wait`): queues `f` on `group` and waits
/// (at most `timeout`) for its value, with no future. A call that ran and failed gives its
/// error (causes and all); one not answered in time is cancelled by the library (it never
/// runs, or, running, is asked to stop). Errors name `origin`.
fn call_wait<S, F, R>(
    actor: sys::tether_actor,
    group: *const c_char,
    origin: &Option<Arc<str>>,
    f: F,
    timeout: Option<Duration>,
) -> Result<R, Error>
where
    S: 'static,
    F: FnOnce(*mut S, &Scope) -> Result<R, String> + Send + 'static,
    R: Send + 'static,
{
    let a = pack(f);
    let mut value: *mut c_void = std::ptr::null_mut();
    let mut error = sys::tether_error { id: 0 };
    // SAFETY: `group` is NULL or a C string the caller keeps alive for the call; the boxed
    // closure is freed exactly once by its drop (also on failure); the out-pointers are
    // locals. A value given back was stored by method_trampoline with put_result::<R>,
    // and is ours once the call returns it.
    let st = unsafe {
        ffi::actor_call_wait(
            actor,
            group,
            Some(method_trampoline::<S, F, R, true>),
            a.arg,
            a.drop,
            timeout_ns(timeout),
            &mut value,
            &mut error,
        )
    };
    if st != sys::TETHER_OK {
        let err = if error.id != 0 {
            Error::from_handle(error)
        } else {
            Error::from_status(st)
        };
        return Err(err.at(origin));
    }
    // SAFETY: see above.
    unsafe { take_value::<R>(value) }
        .ok_or_else(|| Error::new(sys::TETHER_E_INTERNAL, "the call gave no value").at(origin))
}

// Why `&mut S` is sound on an `Actor<S, Exclusive>`: it is made only by `new`/`try_new`,
// which create the actor WITHOUT concurrency groups, so the constructor, every call and
// the destructor run on the default thread one at a time (the library runs one task of a
// thread at a time, and refuses a nested `run` of a manual executor), and no other
// reference to S exists: closures are 'static and return 'static values, so no borrow of
// S outlives its call.
impl<S: 'static> Actor<S, Exclusive> {
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
        let (handle, origin) = create(options, &[], ctor)?;
        Ok(Actor {
            handle,
            origin,
            _s: PhantomData,
            _access: PhantomData,
        })
    }

    /// Queues `f(&mut state)` on the actor's thread, after the calls queued before it, and
    /// returns a [`Future`] of its value. A panic fails only this call's future.
    pub fn call<F, R>(&self, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce(&mut S) -> R + Send + 'static,
        R: Send + 'static,
    {
        // SAFETY (of the &mut): see the comment on this impl.
        call_future(
            self.handle,
            std::ptr::null(),
            &self.origin,
            move |s: *mut S, _: &Scope| Ok(f(unsafe { &mut *s })),
            None,
        )
    }

    /// Like [`call`](Self::call), for a method that may fail: `Err(e)` fails the call's
    /// future with TETHER_E_TASK_FAILED and `e`'s text (`Ok(v)` gives `v`), so the caller
    /// sees one `Result` instead of `Result<Result<..>>`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tether::{Actor, ActorOptions, ErrorKind};
    /// let account = Actor::new(&ActorOptions::new().name("account"), || 10u64).unwrap();
    /// let withdraw = |amount: u64| move |balance: &mut u64| -> Result<u64, String> {
    ///     *balance = balance.checked_sub(amount).ok_or(format!("{amount} is more than {balance}"))?;
    ///     Ok(*balance)
    /// };
    /// assert_eq!(account.try_call(withdraw(3)).unwrap().wait_timeout(Duration::from_secs(5)).unwrap(), 7);
    /// let err = account.try_call(withdraw(8)).unwrap().wait_timeout(Duration::from_secs(5)).unwrap_err();
    /// assert_eq!((err.kind(), err.message()), (ErrorKind::TaskFailed, "8 is more than 7"));
    /// assert_eq!(err.origin(), Some(r#"actor "account""#));
    /// ```
    pub fn try_call<F, R, E>(&self, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce(&mut S) -> Result<R, E> + Send + 'static,
        R: Send + 'static,
        E: Display,
    {
        // SAFETY (of the &mut): see the comment on this impl.
        call_future(
            self.handle,
            std::ptr::null(),
            &self.origin,
            move |s: *mut S, _: &Scope| f(unsafe { &mut *s }).map_err(|e| e.to_string()),
            None,
        )
    }

    /// Like [`call`](Self::call), and `f` also gets the call's [`Scope`]: nested threads
    /// it starts belong to the call, whose future completes when the method and all of
    /// them have returned, and fails at the first error among them.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tether::{Actor, ActorOptions};
    /// let actor = Actor::new(&ActorOptions::new(), || 0u32).unwrap();
    /// let f = actor.call_scoped(|n, scope| {
    ///     *n += 1;
    ///     scope.spawn("upload", |_| -> Result<(), String> { panic!("disk full") }).unwrap();
    ///     *n
    /// }).unwrap();
    /// let err = f.wait_timeout(Duration::from_secs(5)).unwrap_err();
    /// assert!(err.is_panic() && err.thread_name() == "upload");
    /// ```
    pub fn call_scoped<F, R>(&self, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce(&mut S, &Scope) -> R + Send + 'static,
        R: Send + 'static,
    {
        // SAFETY (of the &mut): see the comment on this impl.
        call_future(
            self.handle,
            std::ptr::null(),
            &self.origin,
            move |s: *mut S, scope: &Scope| Ok(f(unsafe { &mut *s }, scope)),
            None,
        )
    }

    /// Fire-and-forget [`call`](Self::call): a failure is counted and kept by the actor
    /// ([`errors`](Self::errors)). A closure that fits in a pointer and has no drop glue
    /// costs no allocation.
    pub fn tell<F>(&self, f: F) -> Result<(), Error>
    where
        F: FnOnce(&mut S) + Send + 'static,
    {
        // SAFETY (of the &mut): see the comment on this impl.
        call_tell(
            self.handle,
            std::ptr::null(),
            &self.origin,
            move |s: *mut S, _: &Scope| {
                f(unsafe { &mut *s });
                Ok(())
            },
        )
    }

    /// Like [`call`](Self::call), but on a full bounded mailbox waits up to `timeout` for
    /// room (then an error with `is_timeout()`; TETHER_E_DEADLOCK from the actor's own
    /// thread, where room could never be made).
    pub fn call_timeout<F, R>(&self, timeout: Duration, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce(&mut S) -> R + Send + 'static,
        R: Send + 'static,
    {
        // SAFETY (of the &mut): see the comment on this impl.
        call_future(
            self.handle,
            std::ptr::null(),
            &self.origin,
            move |s: *mut S, _: &Scope| Ok(f(unsafe { &mut *s })),
            Some(timeout),
        )
    }

    /// The blocking round trip: `call(f)` and `wait()` in one, with no future in between
    /// (shorter: no handle to make, look up and release). A panic or failure of the method
    /// is the error; from the actor's own thread it is TETHER_E_DEADLOCK and `f` never runs.
    ///
    /// ```
    /// use tether::{Actor, ActorOptions};
    /// let counter = Actor::new(&ActorOptions::new(), || 0u64).unwrap();
    /// assert_eq!(counter.call_wait(|n| { *n += 1; *n }).unwrap(), 1);
    /// assert!(counter.call_wait(|_| -> u64 { panic!("boom") }).unwrap_err().is_panic());
    /// ```
    pub fn call_wait<F, R>(&self, f: F) -> Result<R, Error>
    where
        F: FnOnce(&mut S) -> R + Send + 'static,
        R: Send + 'static,
    {
        self.wait_for(None, f)
    }

    /// Like [`call_wait`](Self::call_wait), giving up after `timeout` (an error with
    /// `is_timeout()`): the call is then cancelled (it never runs, or, running, sees a stop
    /// request and its value is dropped).
    pub fn call_wait_timeout<F, R>(&self, timeout: Duration, f: F) -> Result<R, Error>
    where
        F: FnOnce(&mut S) -> R + Send + 'static,
        R: Send + 'static,
    {
        self.wait_for(Some(timeout), f)
    }

    // The blocking round trip of call_wait and call_wait_timeout (timeout None: forever).
    fn wait_for<F, R>(&self, timeout: Option<Duration>, f: F) -> Result<R, Error>
    where
        F: FnOnce(&mut S) -> R + Send + 'static,
        R: Send + 'static,
    {
        // SAFETY (of the &mut): see the comment on this impl.
        call_wait(
            self.handle,
            std::ptr::null(),
            &self.origin,
            move |s: *mut S, _: &Scope| Ok(f(unsafe { &mut *s })),
            timeout,
        )
    }
}

// Why `&S` is sound on an `Actor<S, Shared>`: every call, on the default thread or a
// group's, gets `&S` only (no `&mut S` is ever made), and S: Sync makes shared access
// from several threads at once sound. S is built on the default thread before any group
// method starts and dropped there once every group is idle (the library's order), and
// `&S` is Send exactly when S: Sync.
impl<S: Sync + 'static> Actor<S, Shared> {
    /// Creates an actor with concurrency groups: `groups` lists `(name, threads)` (names
    /// unique and not empty, at least one thread each; else TETHER_E_INVALID_ARGUMENT).
    /// `S` is built on the default thread, as with [`new`](Actor::new); group methods run
    /// on the groups' own threads (`"name/io"`), so the state is shared: `S: Sync`, and
    /// every call gets `&S`. An empty `groups` gives an actor whose calls get `&S` too.
    pub fn with_groups<F>(
        options: &ActorOptions,
        groups: &[(&str, u32)],
        ctor: F,
    ) -> Result<GroupedActor<S>, Error>
    where
        F: FnOnce() -> S + Send + 'static,
    {
        Self::try_with_groups(options, groups, move || Ok::<S, Infallible>(ctor()))
    }

    /// Like [`with_groups`](Self::with_groups), with a constructor that may fail.
    pub fn try_with_groups<F, E>(
        options: &ActorOptions,
        groups: &[(&str, u32)],
        ctor: F,
    ) -> Result<GroupedActor<S>, Error>
    where
        F: FnOnce() -> Result<S, E> + Send + 'static,
        E: Display,
    {
        let (handle, origin) = create(options, groups, ctor)?;
        Ok(Actor {
            handle,
            origin,
            _s: PhantomData,
            _access: PhantomData,
        })
    }

    /// The concurrency group `name`, to call methods on its threads. An unknown name makes
    /// those calls fail with TETHER_E_NOT_FOUND. The name is converted once, so keep the
    /// `Group` for repeated calls.
    pub fn group(&self, name: &str) -> Group<'_, S> {
        let origin = self
            .origin
            .as_ref()
            .map(|o| Arc::from(format!("{o}, group {name:?}")));
        Group {
            actor: self,
            name: Some(cstring(name)),
            origin,
        }
    }

    fn default_group(&self) -> Group<'_, S> {
        Group {
            actor: self,
            name: None,
            origin: self.origin.clone(),
        }
    }

    /// Queues `f(&state)` on the default thread (where the state was built), after the
    /// calls queued there before it.
    pub fn call<F, R>(&self, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce(&S) -> R + Send + 'static,
        R: Send + 'static,
    {
        self.default_group().call(f)
    }

    /// [`call`](Self::call) for a method that may fail (see [`Actor::try_call`]).
    pub fn try_call<F, R, E>(&self, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce(&S) -> Result<R, E> + Send + 'static,
        R: Send + 'static,
        E: Display,
    {
        self.default_group().try_call(f)
    }

    /// [`call`](Self::call) with the call's [`Scope`] (see [`Actor::call_scoped`]).
    pub fn call_scoped<F, R>(&self, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce(&S, &Scope) -> R + Send + 'static,
        R: Send + 'static,
    {
        self.default_group().call_scoped(f)
    }

    /// Fire-and-forget [`call`](Self::call); a failure is kept by the actor.
    pub fn tell<F>(&self, f: F) -> Result<(), Error>
    where
        F: FnOnce(&S) + Send + 'static,
    {
        self.default_group().tell(f)
    }

    /// [`call`](Self::call) waiting up to `timeout` for room in a bounded mailbox.
    pub fn call_timeout<F, R>(&self, timeout: Duration, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce(&S) -> R + Send + 'static,
        R: Send + 'static,
    {
        self.default_group().call_timeout(timeout, f)
    }

    /// The blocking round trip on the default thread (see [`Actor::call_wait`]).
    pub fn call_wait<F, R>(&self, f: F) -> Result<R, Error>
    where
        F: FnOnce(&S) -> R + Send + 'static,
        R: Send + 'static,
    {
        self.default_group().call_wait(f)
    }

    /// [`call_wait`](Self::call_wait) giving up after `timeout` (see
    /// [`Actor::call_wait_timeout`]).
    pub fn call_wait_timeout<F, R>(&self, timeout: Duration, f: F) -> Result<R, Error>
    where
        F: FnOnce(&S) -> R + Send + 'static,
        R: Send + 'static,
    {
        self.default_group().call_wait_timeout(timeout, f)
    }
}

/// One concurrency group of a [`GroupedActor`] (or its default thread): its methods run
/// on the group's threads, concurrently with the other groups, in order within the group
/// (a group of several threads runs its calls concurrently).
pub struct Group<'a, S: 'static> {
    actor: &'a GroupedActor<S>,
    name: Option<CString>,
    // `actor "srv", group "io"`, for errors.
    origin: Option<Arc<str>>,
}

impl<S: 'static> std::fmt::Debug for Group<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group")
            .field("actor", &self.actor.handle)
            .field("name", &self.name)
            .finish()
    }
}

impl<S: 'static> Group<'_, S> {
    /// The actor's raw handle (still owned by the actor).
    pub(crate) fn raw_actor(&self) -> sys::tether_actor {
        self.actor.handle
    }

    /// The group's name as a C string, NULL for the default thread; valid while `self` is.
    pub(crate) fn name_ptr(&self) -> *const c_char {
        self.name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr())
    }
}

impl<S: Sync + 'static> Group<'_, S> {
    /// Queues `f(&state)` on the group's threads and returns a [`Future`] of its value.
    pub fn call<F, R>(&self, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce(&S) -> R + Send + 'static,
        R: Send + 'static,
    {
        // SAFETY (of the &): see the comment on `impl Actor<S, Shared>`.
        call_future(
            self.actor.handle,
            self.name_ptr(),
            &self.origin,
            move |s: *mut S, _: &Scope| Ok(f(unsafe { &*s })),
            None,
        )
    }

    /// [`call`](Self::call) for a method that may fail (see [`Actor::try_call`]).
    pub fn try_call<F, R, E>(&self, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce(&S) -> Result<R, E> + Send + 'static,
        R: Send + 'static,
        E: Display,
    {
        // SAFETY (of the &): as in `call`.
        call_future(
            self.actor.handle,
            self.name_ptr(),
            &self.origin,
            move |s: *mut S, _: &Scope| f(unsafe { &*s }).map_err(|e| e.to_string()),
            None,
        )
    }

    /// [`call`](Self::call) with the call's [`Scope`] (see [`Actor::call_scoped`]).
    pub fn call_scoped<F, R>(&self, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce(&S, &Scope) -> R + Send + 'static,
        R: Send + 'static,
    {
        // SAFETY (of the &): as in `call`.
        call_future(
            self.actor.handle,
            self.name_ptr(),
            &self.origin,
            move |s: *mut S, scope: &Scope| Ok(f(unsafe { &*s }, scope)),
            None,
        )
    }

    /// Fire-and-forget [`call`](Self::call); a failure is kept by the actor.
    pub fn tell<F>(&self, f: F) -> Result<(), Error>
    where
        F: FnOnce(&S) + Send + 'static,
    {
        // SAFETY (of the &): as in `call`.
        call_tell(
            self.actor.handle,
            self.name_ptr(),
            &self.origin,
            move |s: *mut S, _: &Scope| {
                f(unsafe { &*s });
                Ok(())
            },
        )
    }

    /// [`call`](Self::call) waiting up to `timeout` for room in a bounded mailbox.
    pub fn call_timeout<F, R>(&self, timeout: Duration, f: F) -> Result<Future<R>, Error>
    where
        F: FnOnce(&S) -> R + Send + 'static,
        R: Send + 'static,
    {
        // SAFETY (of the &): as in `call`.
        call_future(
            self.actor.handle,
            self.name_ptr(),
            &self.origin,
            move |s: *mut S, _: &Scope| Ok(f(unsafe { &*s })),
            Some(timeout),
        )
    }

    /// The blocking round trip on the group's threads: [`call`](Self::call) and its wait in
    /// one, with no future (see [`Actor::call_wait`]). From one of the group's own threads
    /// it is TETHER_E_DEADLOCK and `f` never runs.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use tether::{Actor, ActorOptions};
    /// let hits = Actor::with_groups(&ActorOptions::new(), &[("io", 1)], || AtomicU64::new(0)).unwrap();
    /// let io = hits.group("io");
    /// assert_eq!(io.call_wait(|n| n.fetch_add(1, Ordering::Relaxed) + 1).unwrap(), 1);
    /// assert_eq!(hits.call_wait(|n| n.load(Ordering::Relaxed)).unwrap(), 1);
    /// ```
    pub fn call_wait<F, R>(&self, f: F) -> Result<R, Error>
    where
        F: FnOnce(&S) -> R + Send + 'static,
        R: Send + 'static,
    {
        self.wait_for(None, f)
    }

    /// [`call_wait`](Self::call_wait) giving up after `timeout` (an error with
    /// `is_timeout()`): the call is then cancelled (it never runs, or, running, sees a stop
    /// request and its value is dropped).
    pub fn call_wait_timeout<F, R>(&self, timeout: Duration, f: F) -> Result<R, Error>
    where
        F: FnOnce(&S) -> R + Send + 'static,
        R: Send + 'static,
    {
        self.wait_for(Some(timeout), f)
    }

    /// The blocking call of `call_wait` and `call_wait_timeout`.
    fn wait_for<F, R>(&self, timeout: Option<Duration>, f: F) -> Result<R, Error>
    where
        F: FnOnce(&S) -> R + Send + 'static,
        R: Send + 'static,
    {
        // SAFETY (of the &): as in `call`.
        call_wait(
            self.actor.handle,
            self.name_ptr(),
            &self.origin,
            move |s: *mut S, _: &Scope| Ok(f(unsafe { &*s })),
            timeout,
        )
    }
}

impl<S: 'static, A> Actor<S, A> {
    /// The raw handle (still owned by this actor).
    pub(crate) fn raw(&self) -> sys::tether_actor {
        self.handle
    }

    /// The C API's handle of this actor, for code that mixes the crate with
    /// [`sys`](crate::sys) (a C library's method called on this actor's thread). A method
    /// called on it with `tether_actor_call` gets the state as `*mut S`, under the same
    /// rule as the crate's own calls: on an [`Exclusive`] actor only through the default
    /// thread (group NULL), as `&mut S`; on a [`Shared`] one as `&S` from any group. The
    /// handle stays owned by `self`: never release it, and do not use it after `self` drops.
    ///
    /// ```
    /// use std::ffi::c_void;
    /// use tether::{sys, Actor, ActorOptions};
    ///
    /// unsafe extern "C" fn add(_: *mut sys::tether_task, state: *mut c_void, arg: *mut c_void) -> sys::tether_status {
    ///     // SAFETY: the state of an Actor<u64> is a *mut u64, and the default thread has it alone.
    ///     unsafe { *state.cast::<u64>() += arg as u64 };
    ///     sys::TETHER_OK
    /// }
    /// let actor = Actor::new(&ActorOptions::new(), || 1u64).unwrap();
    /// // SAFETY: a live handle; fire and forget, the arg is a plain number.
    /// let status = unsafe {
    ///     sys::tether_actor_call(actor.as_raw(), std::ptr::null(), Some(add), 41 as *mut c_void, None, std::ptr::null_mut())
    /// };
    /// assert_eq!(status, sys::TETHER_OK);
    /// let n = actor.call(|n| *n).unwrap();
    /// assert_eq!(n.wait_timeout(std::time::Duration::from_secs(5)).unwrap(), 42);
    /// ```
    pub fn as_raw(&self) -> sys::tether_actor {
        self.handle
    }

    /// The actor's state: alive, dead (with the constructor's error), or stopped.
    pub fn state(&self) -> ActorState {
        let mut s = 0;
        let mut cause = sys::tether_error { id: 0 };
        // SAFETY: out-pointers to locals; a cause handle is released by from_handle.
        unsafe { sys::tether_actor_state(self.handle, &mut s, &mut cause) };
        match s {
            sys::TETHER_ACTOR_DEAD => ActorState::Dead(
                if cause.id != 0 {
                    Error::from_handle(cause)
                } else {
                    Error::new(
                        sys::TETHER_E_ACTOR_DEAD,
                        Error::describe(sys::TETHER_E_ACTOR_DEAD),
                    )
                }
                .at(&self.origin),
            ),
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
            .map_err(|e| e.at(&self.origin))
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
        kept_errors(&self.origin, |i, out| unsafe {
            sys::tether_actor_error(self.handle, i, out)
        })
    }
}

impl<S: 'static, A> Drop for Actor<S, A> {
    /// Stops the actor letting queued calls run (drain), waits until `S` has been dropped
    /// on its thread, and ends the actor's threads. From the actor's own thread the library
    /// does the waiting on its control thread instead.
    fn drop(&mut self) {
        // SAFETY: we own the handle and release it exactly once.
        unsafe { sys::tether_actor_release(self.handle) };
    }
}
