//! The crate's tests. They live in the library's own test binary (target/debug/deps/
//! tether-<hash>) so one valgrind run covers them all. Every wait is bounded.
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use crate::*;

/// The calling thread's OS name (std's `thread::current().name()` is None on threads the
/// library created).
pub(crate) fn os_thread_name() -> Option<String> {
    std::fs::read_to_string("/proc/thread-self/comm")
        .ok()
        .map(|s| s.trim_end().to_string())
}

pub(crate) const T: Duration = Duration::from_secs(30);

/// block_on: polls an async value on this thread until it is ready (a test's executor: the
/// waker unparks the thread; each park is bounded, and the whole wait by `T`).
pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    use std::task::{Context, Poll, Wake, Waker};
    struct Unpark(thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let mut f = std::pin::pin!(f);
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let deadline = Instant::now() + T;
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        assert!(Instant::now() < deadline, "never completed");
        thread::park_timeout(Duration::from_millis(100));
    }
}

/// Stress sizes are divided by TETHER_TEST_SCALE (the project's convention: 20 under
/// valgrind, 10 under TSan, 4 under ASan; default 1).
pub(crate) fn scaled(n: usize) -> usize {
    let divisor: f64 = std::env::var("TETHER_TEST_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|d: &f64| *d >= 1.0)
        .unwrap_or(1.0);
    ((n as f64 / divisor) as usize).max(10)
}

/// Counts its drops.
pub(crate) struct DropCount(pub(crate) Arc<AtomicUsize>);
impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn nested_thread_panic_is_reported_while_the_target_still_runs() {
    let release = Arc::new(AtomicBool::new(false));
    let saw_stop = Arc::new(AtomicBool::new(false));
    let (r2, s2) = (release.clone(), saw_stop.clone());
    let runner = Runner::spawn(&RunnerOptions::new().name("target"), move |scope| {
        scope.spawn("nested-1", |_| -> Result<(), String> {
            panic!("nested boom {}", 7)
        })?;
        let deadline = Instant::now() + T;
        while !r2.load(Ordering::SeqCst) && Instant::now() < deadline {
            if scope.stop_requested() {
                s2.store(true, Ordering::SeqCst);
            }
            thread::sleep(Duration::from_millis(1));
        }
        if scope.stop_requested() {
            s2.store(true, Ordering::SeqCst);
        }
        Ok::<_, Error>(5)
    })
    .unwrap();
    assert_eq!(runner.join(Some(T)).unwrap(), State::Failed);
    assert_eq!(runner.poll(), State::Failed);
    assert!(runner.live_threads() >= 1, "the target must still run");
    let e = runner.error().unwrap();
    assert_eq!(e.code(), sys::TETHER_E_PANIC);
    assert_eq!(e.status_name(), "TETHER_E_PANIC");
    assert_eq!(e.message(), "nested boom 7");
    assert_eq!(e.thread_name(), "nested-1");
    assert!(e.to_string().contains("nested boom 7"));
    release.store(true, Ordering::SeqCst);
    assert_eq!(runner.join_all(Some(T)).unwrap(), State::Failed);
    assert!(
        saw_stop.load(Ordering::SeqCst),
        "stop_on_error must reach the target"
    );
    assert_eq!(runner.errors().len(), 1);
    assert!(runner.into_result().unwrap_err().is_panic());
}

#[test]
fn runner_value_and_failure() {
    let r = Runner::spawn(&RunnerOptions::new(), |_| Ok::<_, String>(vec![1, 2, 3])).unwrap();
    assert_eq!(r.join(Some(T)).unwrap(), State::Succeeded);
    assert_eq!(r.into_result().unwrap(), vec![1, 2, 3]);

    let r = Runner::spawn(&RunnerOptions::new().name("fails"), |_| {
        Err::<(), _>("no disk")
    })
    .unwrap();
    r.join(Some(T)).unwrap();
    let e = r.into_result().unwrap_err();
    assert_eq!(e.code(), sys::TETHER_E_TASK_FAILED);
    assert_eq!((e.message(), e.thread_name()), ("no disk", "fails"));
    let _: &dyn std::error::Error = &e;

    // The target panics: TETHER_E_PANIC, its value (never made) not leaked.
    let r = Runner::spawn(&RunnerOptions::new(), |_| -> Result<String, String> {
        panic!("target boom")
    })
    .unwrap();
    r.join(Some(T)).unwrap();
    assert_eq!(r.error().unwrap().message(), "target boom");
}

#[test]
fn runner_drop_cancels_and_joins() {
    let ended = Arc::new(AtomicBool::new(false));
    let e2 = ended.clone();
    let r = Runner::spawn(&RunnerOptions::new(), move |scope| {
        let deadline = Instant::now() + T;
        while !scope.stop_requested() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(1));
        }
        e2.store(true, Ordering::SeqCst);
        Ok::<_, String>(DropCount(Arc::new(AtomicUsize::new(0))))
    })
    .unwrap();
    assert!(r
        .join(Some(Duration::from_millis(20)))
        .unwrap_err()
        .is_timeout());
    r.cancel();
    assert_eq!(r.join(Some(T)).unwrap(), State::Cancelled);
    assert!(r.error().unwrap().is_cancelled());
    drop(r);
    assert!(ended.load(Ordering::SeqCst));
}

#[test]
fn thread_local_set_by_the_constructor_is_seen_by_every_call() {
    thread_local!(static TL: Cell<u32> = const { Cell::new(0) });
    let actor = Actor::new(&ActorOptions::new().name("tls"), || {
        TL.with(|t| t.set(42));
        thread::current().id()
    })
    .unwrap();
    let futs: Vec<_> = (0..100)
        .map(|_| {
            actor
                .call(|ctor_thread: &mut ThreadId| {
                    (TL.with(|t| t.get()), *ctor_thread == thread::current().id())
                })
                .unwrap()
        })
        .collect();
    for f in futs {
        assert_eq!(f.wait_timeout(T).unwrap(), (42, true));
    }
    assert_eq!(
        TL.with(|t| t.get()),
        0,
        "the test thread's own copy is untouched"
    );
}

#[test]
fn actor_with_rc_refcell_state() {
    let actor = Actor::new(&ActorOptions::new(), || {
        Rc::new(RefCell::new(Vec::<String>::new()))
    })
    .unwrap();
    for i in 0..10 {
        actor
            .tell(move |v: &mut Rc<RefCell<Vec<String>>>| v.borrow_mut().push(format!("item {i}")))
            .unwrap();
    }
    let alias = actor.call(|v| {
        let other = Rc::clone(v); // shares the state, on its thread
        other.borrow_mut().push("via alias".into());
        Rc::strong_count(v)
    });
    assert_eq!(alias.unwrap().wait_timeout(T).unwrap(), 2);
    assert_eq!(
        actor
            .call(|v| Rc::strong_count(v))
            .unwrap()
            .wait_timeout(T)
            .unwrap(),
        1
    );
    let all = actor
        .call(|v| v.borrow().clone())
        .unwrap()
        .wait_timeout(T)
        .unwrap();
    assert_eq!(all.len(), 11);
    assert_eq!(all[0], "item 0");
    assert_eq!(all[10], "via alias");
}

#[test]
fn a_panicking_method_fails_only_its_future() {
    let actor = Actor::new(&ActorOptions::new(), || 0u64).unwrap();
    let a = actor
        .call(|n: &mut u64| {
            *n += 1;
            *n
        })
        .unwrap();
    let b = actor
        .call(|_: &mut u64| -> u64 { panic!("method boom") })
        .unwrap();
    let c = actor
        .call(|n: &mut u64| {
            *n += 1;
            *n
        })
        .unwrap();
    assert_eq!(a.wait_timeout(T).unwrap(), 1);
    let e = b.wait_timeout(T).unwrap_err();
    assert!(e.is_panic());
    assert_eq!(e.message(), "method boom");
    assert_eq!(c.wait_timeout(T).unwrap(), 2);
    assert_eq!(actor.state(), ActorState::Alive);
    // Fire-and-forget panics are kept by the actor.
    actor.tell(|_| panic!("told boom")).unwrap();
    actor.call(|_| ()).unwrap().wait_timeout(T).unwrap();
    let kept = actor.errors();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].message(), "told boom");
    assert_eq!(actor.stats().failed, 2);
}

#[test]
fn a_panicking_constructor_kills_the_actor() {
    let actor = Actor::<u32>::new(&ActorOptions::new(), || panic!("ctor boom")).unwrap();
    let f = actor.call(|n| *n).unwrap_or_else(|e| panic!("{e}"));
    let e = f.wait_timeout(T).unwrap_err();
    assert_eq!(e.code(), sys::TETHER_E_ACTOR_DEAD);
    assert_eq!(e.cause().unwrap().message(), "ctor boom");
    match actor.state() {
        ActorState::Dead(cause) => assert!(cause.is_panic()),
        s => panic!("{s:?}"),
    }
    let e = actor.call(|n| *n).unwrap_err();
    assert_eq!(e.code(), sys::TETHER_E_ACTOR_DEAD);
}

/// Submits `n` boxed closures behind a gate, cancels them in a shuffled order (half of
/// them), releases some futures unwaited, and checks every closure dropped exactly once.
#[test]
fn boxed_closures_are_dropped_exactly_once() {
    let n = scaled(100_000);
    let exec = Executor::new(&ExecutorOptions::new().name("drops")).unwrap();
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let gate = exec
        .submit(move || gate_rx.recv_timeout(T).is_ok())
        .unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    let runs = Arc::new(AtomicUsize::new(0));
    let mut futs: Vec<Option<Future<usize>>> = (0..n)
        .map(|i| {
            let d = DropCount(drops.clone());
            let r = runs.clone();
            Some(
                exec.submit(move || {
                    let _d = d;
                    r.fetch_add(1, Ordering::SeqCst);
                    i
                })
                .unwrap(),
            )
        })
        .collect();
    // A xorshift permutation: cancel even positions, release every third untouched.
    let mut order: Vec<usize> = (0..n).collect();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in (1..n).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    let mut cancelled = vec![false; n];
    for (k, &i) in order.iter().enumerate() {
        if k % 2 == 0 {
            futs[i].as_ref().unwrap().cancel();
            cancelled[i] = true;
        } else if k % 3 == 0 {
            futs[i] = None; // released: the work still runs, its value is dropped
        }
    }
    let n_cancelled = cancelled.iter().filter(|c| **c).count();
    assert_eq!(
        drops.load(Ordering::SeqCst),
        n_cancelled,
        "a cancelled pending arg is dropped before cancel returns"
    );
    gate_tx.send(()).unwrap();
    assert!(gate.wait_timeout(T).unwrap());
    for (i, f) in futs.iter().enumerate() {
        if let Some(f) = f {
            let r = f.wait_timeout(T);
            if cancelled[i] {
                assert!(r.unwrap_err().is_cancelled());
            } else {
                assert_eq!(r.unwrap(), i);
            }
        }
    }
    drop(futs);
    drop(exec); // runs what is queued, joins the thread
    assert_eq!(runs.load(Ordering::SeqCst), n - n_cancelled);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        n,
        "every closure dropped exactly once"
    );
}

/// The same through an actor's mailbox, with fire-and-forget calls and a CANCEL stop.
#[test]
fn actor_closures_are_dropped_exactly_once() {
    let n = scaled(20_000);
    let drops = Arc::new(AtomicUsize::new(0));
    let actor = Actor::new(&ActorOptions::new(), || 0usize).unwrap();
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    actor
        .tell(move |_| {
            let _ = gate_rx.recv_timeout(T);
        })
        .unwrap();
    let mut futs = Vec::new();
    for i in 0..n {
        let d = DropCount(drops.clone());
        if i % 2 == 0 {
            actor
                .tell(move |s| {
                    let _d = d;
                    *s += 1;
                })
                .unwrap();
        } else {
            futs.push(
                actor
                    .call(move |s| {
                        let _d = d;
                        *s += 1;
                    })
                    .unwrap(),
            );
        }
    }
    for f in futs.iter().step_by(3) {
        f.cancel();
    }
    gate_tx.send(()).unwrap();
    actor.stop(StopMode::Cancel, Some(T)).unwrap();
    assert_eq!(actor.state(), ActorState::Stopped);
    assert!(actor.call(|_| ()).unwrap_err().code() == sys::TETHER_E_SHUTDOWN);
    drop(futs);
    drop(actor);
    assert_eq!(drops.load(Ordering::SeqCst), n);
}

#[test]
fn dropping_an_actor_drains_and_drops_the_state_on_its_thread() {
    struct State {
        calls: usize,
        report: Arc<Mutex<Option<(ThreadId, usize)>>>,
    }
    impl Drop for State {
        fn drop(&mut self) {
            *self.report.lock().unwrap() = Some((thread::current().id(), self.calls));
        }
    }
    let report = Arc::new(Mutex::new(None));
    let r2 = report.clone();
    let (tid_tx, tid_rx) = mpsc::channel();
    let actor = Actor::new(&ActorOptions::new().name("drainer"), move || {
        tid_tx.send(thread::current().id()).unwrap();
        State {
            calls: 0,
            report: r2,
        }
    })
    .unwrap();
    let n = 1000;
    actor
        .tell(|s| {
            thread::sleep(Duration::from_millis(20));
            s.calls += 1;
        })
        .unwrap();
    for _ in 1..n {
        actor.tell(|s| s.calls += 1).unwrap();
    }
    drop(actor);
    let ctor_thread = tid_rx.recv_timeout(T).unwrap();
    assert_ne!(ctor_thread, thread::current().id());
    assert_eq!(*report.lock().unwrap(), Some((ctor_thread, n)));
}

#[test]
fn grouped_actors_share_state_as_ref() {
    let actor: GroupedActor<AtomicUsize> =
        Actor::with_groups(&ActorOptions::new(), &[("io", 2)], || AtomicUsize::new(0)).unwrap();
    let io = actor.group("io");
    let fs: Vec<_> = (0..10)
        .map(|_| {
            io.call(|n: &AtomicUsize| {
                n.fetch_add(1, Ordering::SeqCst);
                os_thread_name()
            })
            .unwrap()
        })
        .collect();
    for f in fs {
        assert_eq!(
            f.wait_timeout(T).unwrap().as_deref(),
            Some("tether-actor/io")
        );
    }
    io.tell(|n| {
        n.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap();
    actor
        .tell(|n| {
            n.fetch_add(100, Ordering::SeqCst);
        })
        .unwrap();
    // The told calls run asynchronously on their threads: look until both are seen.
    let deadline = Instant::now() + T;
    loop {
        let seen = actor
            .call(|n| (n.load(Ordering::SeqCst), os_thread_name()))
            .unwrap()
            .wait_timeout(T)
            .unwrap();
        assert_eq!(seen.1.as_deref(), Some("tether-actor"));
        if seen.0 == 111 {
            break;
        }
        assert!(Instant::now() < deadline, "saw {}", seen.0);
        thread::yield_now();
    }
    assert_eq!(
        io.call_timeout(T, |n| n.load(Ordering::SeqCst))
            .unwrap()
            .wait_timeout(T)
            .unwrap(),
        111
    );
    assert_eq!(
        actor.group("nope").call(|_| ()).unwrap_err().code(),
        sys::TETHER_E_NOT_FOUND
    );
    let e =
        Actor::with_groups(&ActorOptions::new(), &[("io", 0)], || AtomicUsize::new(0)).unwrap_err();
    assert_eq!(e.code(), sys::TETHER_E_INVALID_ARGUMENT);
    let e = Actor::with_groups(&ActorOptions::new(), &[("a", 1), ("a", 1)], || ()).unwrap_err();
    assert_eq!(e.code(), sys::TETHER_E_INVALID_ARGUMENT);
}

/// A blocked group never delays the default thread or another group, and a grouped
/// actor's state (Sync, not Send) is dropped on the default thread after every group.
#[test]
fn grouped_actor_groups_are_independent_and_state_drops_on_the_default_thread() {
    // Sync but not Send: a MutexGuard-like marker, dropped where it was built.
    struct Pinned {
        built_on: ThreadId,
        dropped_on: Arc<Mutex<Option<ThreadId>>>,
        hits: AtomicUsize,
        _not_send: std::marker::PhantomData<std::sync::MutexGuard<'static, ()>>,
    }
    impl Drop for Pinned {
        fn drop(&mut self) {
            *self.dropped_on.lock().unwrap() = Some(thread::current().id());
        }
    }
    let dropped_on = Arc::new(Mutex::new(None));
    let d2 = dropped_on.clone();
    let actor = Actor::with_groups(
        &ActorOptions::new().name("pinned"),
        &[("slow", 1), ("fast", 1)],
        move || Pinned {
            built_on: thread::current().id(),
            dropped_on: d2,
            hits: AtomicUsize::new(0),
            _not_send: std::marker::PhantomData,
        },
    )
    .unwrap();
    let (tx, rx) = mpsc::channel::<()>();
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let blocked = actor
        .group("slow")
        .call(move |p| {
            started_tx.send(()).unwrap();
            let _ = rx.recv_timeout(T);
            p.hits.fetch_add(1, Ordering::SeqCst)
        })
        .unwrap();
    started_rx.recv_timeout(T).unwrap();
    let fast = actor
        .group("fast")
        .call(|p| p.hits.fetch_add(1, Ordering::SeqCst))
        .unwrap();
    assert_eq!(fast.wait_timeout(T).unwrap(), 0);
    let built_on = actor
        .call(|p| (p.built_on, thread::current().id()))
        .unwrap()
        .wait_timeout(T)
        .unwrap();
    assert_eq!(
        built_on.0, built_on.1,
        "default calls run where S was built"
    );
    assert_eq!(blocked.poll(), State::Running);
    tx.send(()).unwrap();
    assert_eq!(blocked.wait_timeout(T).unwrap(), 1);
    drop(actor);
    assert_eq!(*dropped_on.lock().unwrap(), Some(built_on.0));
}

#[test]
fn actors_share_an_executor() {
    let exec = Executor::new(&ExecutorOptions::new().name("shared")).unwrap();
    let a = Actor::new(&ActorOptions::new().executor(&exec), || 1).unwrap();
    let b = Actor::new(&ActorOptions::new().executor(&exec), || 2).unwrap();
    drop(exec); // the thread stays while actors use it
    let fa = a.call(|s: &mut i32| (*s, os_thread_name())).unwrap();
    let fb = b.call(|s: &mut i32| (*s, os_thread_name())).unwrap();
    assert_eq!(fa.wait_timeout(T).unwrap(), (1, Some("shared".to_string())));
    assert_eq!(fb.wait_timeout(T).unwrap(), (2, Some("shared".to_string())));
}

#[test]
fn executor_fire_and_forget_errors_are_kept() {
    let exec = Executor::new(&ExecutorOptions::new()).unwrap();
    exec.execute(|| panic!("lost? no")).unwrap();
    exec.submit(|| ()).unwrap().wait_timeout(T).unwrap();
    let errs = exec.errors();
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].message(), "lost? no");
    let s = exec.stats();
    assert_eq!((s.failed, s.completed), (1, 1));
}

#[test]
fn a_future_can_be_awaited() {
    let exec = Executor::new(&ExecutorOptions::new()).unwrap();
    let slow = exec
        .submit(|| {
            thread::sleep(Duration::from_millis(30));
            7
        })
        .unwrap();
    let bad = exec.submit(|| -> i32 { panic!("async boom") }).unwrap();
    assert_eq!(block_on(async { slow.await.unwrap() + 1 }), 8);
    assert_eq!(block_on(bad).unwrap_err().message(), "async boom");
    // Awaiting a future that is already terminal completes at the first poll.
    let ready = exec.submit(|| 2).unwrap();
    let deadline = Instant::now() + T;
    while !ready.poll().is_terminal() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(block_on(ready).unwrap(), 2);
}

#[test]
fn call_errors_carry_status_and_message() {
    let exec = Executor::new(&ExecutorOptions::new().queue_capacity(1)).unwrap();
    let (tx, rx) = mpsc::channel::<()>();
    let blocker = exec
        .submit(move || {
            let _ = rx.recv_timeout(T);
        })
        .unwrap();
    // The blocker may still be queued or already running: fill the queue until it refuses.
    let mut held = Vec::new();
    let err = loop {
        match exec.submit(|| ()) {
            Ok(f) => held.push(f),
            Err(e) => break e,
        }
        assert!(held.len() < 3);
    };
    assert_eq!(err.code(), sys::TETHER_E_QUEUE_FULL);
    assert_eq!(err.status_name(), "TETHER_E_QUEUE_FULL");
    assert!(!err.message().is_empty());
    tx.send(()).unwrap();
    blocker.wait_timeout(T).unwrap();
    assert!(Error::describe(sys::TETHER_E_TIMEOUT).contains("timeout"));
    assert_eq!(version(), "0.1.0");
}

/// Panics in a Drop: inside a run closure it fails the task (caught); in an arg that is
/// dropped without running (cancelled) it is swallowed by free_boxed. Never an abort.
#[test]
fn a_panicking_drop_never_aborts() {
    struct PanicOnDrop;
    impl Drop for PanicOnDrop {
        fn drop(&mut self) {
            panic!("drop boom");
        }
    }
    let exec = Executor::new(&ExecutorOptions::new()).unwrap();
    let (tx, rx) = mpsc::channel::<()>();
    let gate = exec
        .submit(move || {
            let _ = rx.recv_timeout(T);
        })
        .unwrap();
    let p = PanicOnDrop;
    let ran = exec
        .submit(move || {
            let _p = p;
            1
        })
        .unwrap();
    let p = PanicOnDrop;
    let cancelled = exec
        .submit(move || {
            let _p = p;
            2
        })
        .unwrap();
    cancelled.cancel();
    tx.send(()).unwrap();
    gate.wait_timeout(T).unwrap();
    let e = ran.wait_timeout(T).unwrap_err();
    assert!(e.is_panic());
    assert_eq!(e.message(), "drop boom");
    assert!(cancelled.wait_timeout(T).unwrap_err().is_cancelled());
}

#[test]
fn bounded_mailbox_call_timeout() {
    let actor = Actor::new(&ActorOptions::new().mailbox_capacity(1), || ()).unwrap();
    let (tx, rx) = mpsc::channel::<()>();
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let blocker = actor
        .call(move |_| {
            started_tx.send(()).unwrap();
            let _ = rx.recv_timeout(T);
        })
        .unwrap();
    started_rx.recv_timeout(T).unwrap();
    let queued = actor.call(|_| 1).unwrap();
    assert_eq!(
        actor.call(|_| 2).unwrap_err().code(),
        sys::TETHER_E_QUEUE_FULL
    );
    let e = actor
        .call_timeout(Duration::from_millis(20), |_| 3)
        .unwrap_err();
    assert!(e.is_timeout());
    tx.send(()).unwrap();
    blocker.wait_timeout(T).unwrap();
    assert_eq!(queued.wait_timeout(T).unwrap(), 1);
    assert_eq!(
        actor
            .call_timeout(T, |_| 4)
            .unwrap()
            .wait_timeout(T)
            .unwrap(),
        4
    );
    assert_eq!(actor.stats().rejected, 2);
}

/// The blocking call: the value, a panic as the error, and a call not answered in time
/// cancelled (it never runs, and its closure is dropped once).
#[test]
fn call_wait_answers_fails_and_cancels() {
    let actor = Actor::new(&ActorOptions::new().name("waited"), || 40u64).unwrap();
    assert_eq!(
        actor
            .call_wait(|n| {
                *n += 1;
                *n
            })
            .unwrap(),
        41
    );
    assert_eq!(
        actor.call_wait_timeout(T, |n| format!("{n}")).unwrap(),
        "41"
    );
    let e = actor.call_wait(|_| -> u64 { panic!("boom") }).unwrap_err();
    assert!(e.is_panic());
    assert_eq!(e.origin(), Some(r#"actor "waited""#));

    let (tx, rx) = mpsc::channel::<()>();
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let blocker = actor
        .call(move |_| {
            started_tx.send(()).unwrap();
            let _ = rx.recv_timeout(T);
        })
        .unwrap();
    started_rx.recv_timeout(T).unwrap();
    let ran = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicUsize::new(0));
    let guard = DropCount(dropped.clone());
    let r = ran.clone();
    let e = actor
        .call_wait_timeout(Duration::from_millis(20), move |_| {
            let _keep = &guard;
            r.store(true, Ordering::SeqCst);
        })
        .unwrap_err();
    assert!(e.is_timeout());
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
    tx.send(()).unwrap();
    blocker.wait_timeout(T).unwrap();
    assert_eq!(actor.call_wait(|n| *n).unwrap(), 41);
    assert!(!ran.load(Ordering::SeqCst));
}

/// A grouped actor's blocking calls: on the group's thread and on the default thread (two
/// threads); an unknown group is NotFound (the closure dropped once, never run); a blocking
/// call into the group from its own thread is refused with Deadlock, not hung.
#[test]
fn grouped_call_wait_runs_on_its_group_and_refuses_its_own_thread() {
    let actor = Arc::new(
        Actor::with_groups(&ActorOptions::new().name("grouped"), &[("io", 1)], || {
            AtomicUsize::new(0)
        })
        .unwrap(),
    );
    let io = actor.group("io");
    let (count, io_thread) = io
        .call_wait(|n| (n.fetch_add(1, Ordering::SeqCst) + 1, thread::current().id()))
        .unwrap();
    assert_eq!(count, 1);
    let default_thread = actor.call_wait(|_| thread::current().id()).unwrap();
    assert_ne!(io_thread, default_thread);
    assert_eq!(
        actor
            .call_wait_timeout(T, |n| n.load(Ordering::SeqCst))
            .unwrap(),
        1
    );

    let dropped = Arc::new(AtomicUsize::new(0));
    let guard = DropCount(dropped.clone());
    let e = actor
        .group("nope")
        .call_wait(move |n| {
            let _keep = &guard;
            n.fetch_add(100, Ordering::SeqCst)
        })
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert_eq!(dropped.load(Ordering::SeqCst), 1);

    let inner = actor.clone();
    let nested = io
        .call_wait_timeout(T, move |_| {
            inner.group("io").call_wait(|_| 1).map_err(|e| e.kind())
        })
        .unwrap();
    assert_eq!(nested, Err(ErrorKind::Deadlock));
    assert_eq!(io.call_wait(|n| n.load(Ordering::SeqCst)).unwrap(), 1);
}

/// A wait that could only be satisfied by the waiting thread itself is refused, not hung.
#[test]
fn waiting_on_your_own_thread_is_a_deadlock_error() {
    let exec = Arc::new(Executor::new(&ExecutorOptions::new()).unwrap());
    let e2 = exec.clone();
    let f = exec
        .submit(move || {
            let inner = e2.submit(|| 1).unwrap();
            inner.wait_timeout(T).map_err(|e| e.code())
        })
        .unwrap();
    assert_eq!(f.wait_timeout(T).unwrap(), Err(sys::TETHER_E_DEADLOCK));
}

// ---- closures and values that travel inline in the pointer ---------------------------------

#[test]
fn what_travels_inline() {
    use crate::util::travels_inline;
    struct Token;
    struct Loud;
    impl Drop for Loud {
        fn drop(&mut self) {}
    }
    assert!(travels_inline::<()>());
    assert!(travels_inline::<Token>());
    assert!(travels_inline::<u64>());
    assert!(travels_inline::<(u8, u32)>());
    assert!(travels_inline::<&'static str>() == (std::mem::size_of::<&str>() <= 8));
    assert!(travels_inline::<fn() -> u8>());
    assert!(!travels_inline::<Loud>(), "drop glue: boxed");
    assert!(!travels_inline::<Arc<u8>>(), "drop glue: boxed");
    assert!(!travels_inline::<[u8; 9]>(), "too big: boxed");
    assert!(!travels_inline::<u128>() || std::mem::align_of::<u128>() <= 8);
    let k = 5u64;
    let c = move || k + 1;
    fn inline_of<F>(_: &F) -> bool {
        travels_inline::<F>()
    }
    assert!(inline_of(&c));
    let a = Arc::new(1);
    let c2 = move || *a;
    assert!(!inline_of(&c2));
}

/// Values of every shape come back intact, whether they travel inline (small, no drop
/// glue, padded or not, zero-sized) or boxed, from executors, actors and runners.
#[test]
fn inline_and_boxed_values_round_trip() {
    #[derive(Debug, PartialEq)]
    struct Token;
    let exec = Executor::new(&ExecutorOptions::new()).unwrap();
    let k = 0x1122_3344_5566_7788u64;
    assert_eq!(exec.submit(move || k).unwrap().wait_timeout(T).unwrap(), k);
    let (a, b) = (7u8, 0xdead_beefu32);
    assert_eq!(
        exec.submit(move || (a, b))
            .unwrap()
            .wait_timeout(T)
            .unwrap(),
        (7, 0xdead_beef)
    );
    assert_eq!(
        exec.submit(|| [1u8, 2, 3])
            .unwrap()
            .wait_timeout(T)
            .unwrap(),
        [1, 2, 3]
    );
    assert_eq!(exec.submit(|| 'x').unwrap().wait_timeout(T).unwrap(), 'x');
    assert_eq!(
        exec.submit(|| 0.5f64).unwrap().wait_timeout(T).unwrap(),
        0.5
    );
    assert_eq!(
        exec.submit(|| std::num::NonZeroU64::new(9))
            .unwrap()
            .wait_timeout(T)
            .unwrap(),
        std::num::NonZeroU64::new(9)
    );
    assert_eq!(
        exec.submit(|| None::<&'static u8>)
            .unwrap()
            .wait_timeout(T)
            .unwrap(),
        None
    );
    assert_eq!(exec.submit(|| 0u64).unwrap().wait_timeout(T).unwrap(), 0);
    let s: &'static str = "static";
    assert_eq!(
        exec.submit(move || s).unwrap().wait_timeout(T).unwrap(),
        "static"
    );
    assert_eq!(
        exec.submit(|| String::from("boxed"))
            .unwrap()
            .wait_timeout(T)
            .unwrap(),
        "boxed"
    );
    assert_eq!(
        exec.submit(|| [7u64; 4]).unwrap().wait_timeout(T).unwrap(),
        [7; 4]
    );
    // A zero-sized value is taken once, like any other.
    let z = exec.submit(|| Token).unwrap();
    assert_eq!(z.wait_timeout(T).unwrap(), Token);
    assert_eq!(
        z.wait_timeout(T).unwrap_err().code(),
        sys::TETHER_E_WRONG_STATE
    );
    let u = exec.submit(|| ()).unwrap();
    u.wait_timeout(T).unwrap();
    assert_eq!(
        u.wait_timeout(T).unwrap_err().code(),
        sys::TETHER_E_WRONG_STATE
    );
    // A value whose task failed is never made up.
    let bad = exec.submit(|| -> Token { panic!("no token") }).unwrap();
    assert_eq!(bad.wait_timeout(T).unwrap_err().message(), "no token");

    let actor = Actor::new(&ActorOptions::new(), || 40u64).unwrap();
    let add = 2u64;
    assert_eq!(
        actor
            .call(move |n: &mut u64| {
                *n += add;
                (*n as u8, *n as u32)
            })
            .unwrap()
            .wait_timeout(T)
            .unwrap(),
        (42, 42)
    );
    for i in 0..100u64 {
        actor.tell(move |n| *n += i).unwrap();
    }
    assert_eq!(
        actor.call(|n| *n).unwrap().wait_timeout(T).unwrap(),
        42 + 4950
    );

    let r = Runner::spawn(&RunnerOptions::new(), |_| Ok::<_, String>((1u16, 2u8))).unwrap();
    assert_eq!(r.into_result().unwrap(), (1, 2));
    let r = Runner::spawn(&RunnerOptions::new(), |_| Ok::<_, String>(Token)).unwrap();
    assert_eq!(r.into_result().unwrap(), Token);
    let r = Runner::spawn(&RunnerOptions::new(), |_| Ok::<_, String>(())).unwrap();
    r.into_result().unwrap();
}

/// Inline closures (no drop glue) submitted behind a gate and cancelled in mixed order:
/// each one that was not cancelled runs exactly once, with its own captures.
#[test]
fn inline_closures_cancelled_and_run_in_mixed_order() {
    static SUM: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let n = scaled(20_000);
    let exec = Executor::new(&ExecutorOptions::new()).unwrap();
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let gate = exec
        .submit(move || gate_rx.recv_timeout(T).is_ok())
        .unwrap();
    let futs: Vec<_> = (0..n as u64)
        .map(|i| {
            exec.submit(move || {
                SUM.fetch_add(i, Ordering::SeqCst);
                RUNS.fetch_add(1, Ordering::SeqCst);
                i
            })
            .unwrap()
        })
        .collect();
    let mut expected = 0u64;
    let mut ran = 0;
    for (i, f) in futs.iter().enumerate() {
        if i % 3 == 1 {
            f.cancel();
        } else {
            expected += i as u64;
            ran += 1;
        }
    }
    gate_tx.send(()).unwrap();
    assert!(gate.wait_timeout(T).unwrap());
    for (i, f) in futs.iter().enumerate() {
        let r = f.wait_timeout(T);
        if i % 3 == 1 {
            assert!(r.unwrap_err().is_cancelled());
        } else {
            assert_eq!(r.unwrap(), i as u64);
        }
    }
    assert_eq!(SUM.load(Ordering::SeqCst), expected);
    assert_eq!(RUNS.load(Ordering::SeqCst), ran);
}

// ---- nested threads in executor tasks and actor methods ------------------------------------

/// A scoped task's future completes only when the task AND its nested threads are done.
#[test]
fn scoped_task_waits_for_its_nested_threads() {
    let exec = Executor::new(&ExecutorOptions::new().name("scoped")).unwrap();
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let (returned_tx, returned_rx) = mpsc::channel::<()>();
    let nested_ran = Arc::new(AtomicBool::new(false));
    let nr = nested_ran.clone();
    let f = exec
        .submit_scoped(move |scope| {
            scope
                .spawn("nested", move |s| {
                    assert_eq!(s.thread_name(), "nested");
                    gate_rx.recv_timeout(T).map_err(|e| e.to_string())?;
                    nr.store(true, Ordering::SeqCst);
                    Ok::<(), String>(())
                })
                .unwrap();
            returned_tx.send(()).unwrap();
            scope.thread_name()
        })
        .unwrap();
    returned_rx.recv_timeout(T).unwrap();
    assert!(f
        .wait_timeout(Duration::from_millis(20))
        .unwrap_err()
        .is_timeout());
    assert!(!f.poll().is_terminal());
    gate_tx.send(()).unwrap();
    assert_eq!(f.wait_timeout(T).unwrap(), "scoped");
    assert!(nested_ran.load(Ordering::SeqCst));
}

/// A nested thread's panic fails the task's future at once, while the task still runs,
/// and the task sees the stop request.
#[test]
fn scoped_task_fails_at_the_first_nested_error() {
    let exec = Executor::new(&ExecutorOptions::new()).unwrap();
    let release = Arc::new(AtomicBool::new(false));
    let saw_stop = Arc::new(AtomicBool::new(false));
    let (r2, s2) = (release.clone(), saw_stop.clone());
    let f = exec
        .submit_scoped(move |scope| {
            scope
                .spawn("exploder", |_| -> Result<(), String> {
                    panic!("nested task boom")
                })
                .unwrap();
            let deadline = Instant::now() + T;
            while !r2.load(Ordering::SeqCst) && Instant::now() < deadline {
                if scope.stop_requested() {
                    s2.store(true, Ordering::SeqCst);
                }
                thread::yield_now();
            }
            // The stop is published before the failure is visible, so by now it must be.
            if scope.stop_requested() {
                s2.store(true, Ordering::SeqCst);
            }
            7
        })
        .unwrap();
    let e = f.wait_timeout(T).unwrap_err();
    assert!(e.is_panic());
    assert_eq!(
        (e.message(), e.thread_name()),
        ("nested task boom", "exploder")
    );
    release.store(true, Ordering::SeqCst);
    // The executor goes on: its next task runs once the scoped one has returned.
    assert_eq!(exec.submit(|| 1).unwrap().wait_timeout(T).unwrap(), 1);
    assert!(saw_stop.load(Ordering::SeqCst));
}

#[test]
fn scoped_actor_method_nested_threads() {
    let actor = Actor::new(&ActorOptions::new().name("scoped-actor"), || {
        Rc::new(Cell::new(0u32))
    })
    .unwrap();
    // Success: the value comes once the nested threads are done too.
    let done = Arc::new(AtomicUsize::new(0));
    let d2 = done.clone();
    let f = actor
        .call_scoped(move |n: &mut Rc<Cell<u32>>, scope| {
            n.set(n.get() + 1);
            for i in 0..3 {
                let d = d2.clone();
                scope
                    .spawn(&format!("worker-{i}"), move |_| {
                        d.fetch_add(1, Ordering::SeqCst);
                        Ok::<(), String>(())
                    })
                    .unwrap();
            }
            n.get()
        })
        .unwrap();
    assert_eq!(f.wait_timeout(T).unwrap(), 1);
    assert_eq!(done.load(Ordering::SeqCst), 3);
    // Failure: a nested Err fails only that call's future; the actor stays alive.
    let f = actor
        .call_scoped(|n, scope| {
            scope
                .spawn("uploader", |_| Err::<(), _>("upload failed"))
                .unwrap();
            n.get()
        })
        .unwrap();
    let e = f.wait_timeout(T).unwrap_err();
    assert_eq!(e.code(), sys::TETHER_E_TASK_FAILED);
    assert_eq!(
        (e.message(), e.thread_name()),
        ("upload failed", "uploader")
    );
    assert_eq!(actor.state(), ActorState::Alive);
    assert_eq!(actor.call(|n| n.get()).unwrap().wait_timeout(T).unwrap(), 1);

    // The same from a group's thread and from a grouped actor's default thread.
    let grouped =
        Actor::with_groups(&ActorOptions::new(), &[("io", 1)], || AtomicUsize::new(0)).unwrap();
    let f = grouped
        .group("io")
        .call_scoped(|_, scope| {
            scope
                .spawn("io-child", |_| -> Result<(), String> {
                    panic!("io child boom")
                })
                .unwrap();
        })
        .unwrap();
    let e = f.wait_timeout(T).unwrap_err();
    assert!(e.is_panic());
    assert_eq!(e.thread_name(), "io-child");
    let f = grouped
        .call_scoped(|n, scope| {
            let mine = scope.thread_name();
            scope.spawn("child", |_| Ok::<(), String>(())).unwrap();
            n.fetch_add(1, Ordering::SeqCst);
            mine
        })
        .unwrap();
    assert_eq!(f.wait_timeout(T).unwrap(), "tether-actor");
}

// ---- manual executors ------------------------------------------------------------------------

/// Runs `exec` on this thread in short slices until `done()` (bounded).
fn run_until(exec: &Executor, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + T;
    while !done() {
        assert!(Instant::now() < deadline, "manual executor never got there");
        exec.run(Some(Duration::from_millis(1))).unwrap();
    }
}

#[test]
fn manual_executor_runs_on_the_thread_that_runs_it() {
    let exec = Executor::new(&ExecutorOptions::new().manual(true)).unwrap();
    let me = thread::current().id();
    // Submitted from another thread, run here.
    let f = thread::scope(|s| {
        s.spawn(|| exec.submit(|| thread::current().id()).unwrap())
            .join()
            .unwrap()
    });
    assert_eq!(
        f.poll(),
        State::Pending,
        "nothing runs until someone runs it"
    );
    run_until(&exec, || f.poll().is_terminal());
    assert_eq!(f.wait_timeout(Duration::ZERO).unwrap(), me);
    assert_ne!(exec.stats().os_thread_id, 0);
    // Waiting here for work only this thread can run is refused, not hung.
    let g = exec.submit(|| 2).unwrap();
    assert_eq!(
        g.wait_timeout(T).unwrap_err().code(),
        sys::TETHER_E_DEADLOCK
    );
    run_until(&exec, || g.poll().is_terminal());
    assert_eq!(g.wait_timeout(T).unwrap(), 2);
    // Any other thread is refused.
    let other = thread::scope(|s| s.spawn(|| exec.run(Some(Duration::ZERO))).join().unwrap());
    assert_eq!(other.unwrap_err().code(), sys::TETHER_E_WRONG_STATE);
    // A nested run from one of its own tasks is refused too.
    let exec = Arc::new(exec);
    let e2 = exec.clone();
    let nested = exec
        .submit(move || e2.run(Some(Duration::ZERO)).map_err(|e| e.code()))
        .unwrap();
    run_until(&exec, || nested.poll().is_terminal());
    assert_eq!(
        nested.wait_timeout(T).unwrap(),
        Err(sys::TETHER_E_WRONG_STATE)
    );
    drop(nested);
    // run on an executor that is not manual is refused.
    let auto = Executor::new(&ExecutorOptions::new()).unwrap();
    assert_eq!(
        auto.run(Some(Duration::ZERO)).unwrap_err().code(),
        sys::TETHER_E_WRONG_STATE
    );
}

/// An actor on a manual executor lives on the thread that runs it: Rc state built,
/// used and dropped there.
#[test]
fn actor_on_a_manual_executor() {
    let exec = Executor::new(&ExecutorOptions::new().manual(true)).unwrap();
    let me = thread::current().id();
    let dropped_on = Arc::new(Mutex::new(None));
    struct S {
        rc: Rc<Cell<u32>>,
        dropped_on: Arc<Mutex<Option<ThreadId>>>,
    }
    impl Drop for S {
        fn drop(&mut self) {
            *self.dropped_on.lock().unwrap() = Some(thread::current().id());
        }
    }
    let d2 = dropped_on.clone();
    let actor = Actor::new(&ActorOptions::new().executor(&exec), move || S {
        rc: Rc::new(Cell::new(1)),
        dropped_on: d2,
    })
    .unwrap();
    let f = actor
        .call(|s: &mut S| {
            s.rc.set(s.rc.get() + 1);
            (s.rc.get(), thread::current().id())
        })
        .unwrap();
    run_until(&exec, || f.poll().is_terminal());
    assert_eq!(f.wait_timeout(T).unwrap(), (2, me));
    // Dropped from the owner thread outside run: the library leaves the waiting to its
    // control thread, and the state's Drop runs here at the next run.
    drop(actor);
    run_until(&exec, || dropped_on.lock().unwrap().is_some());
    assert_eq!(*dropped_on.lock().unwrap(), Some(me));
}

/// A manual executor nobody ran, dropped: its queued closures are cancelled, each
/// dropped exactly once.
#[test]
fn manual_executor_dropped_unrun_cancels_what_is_queued() {
    let drops = Arc::new(AtomicUsize::new(0));
    let exec = Executor::new(&ExecutorOptions::new().manual(true)).unwrap();
    let n = scaled(1000);
    let futs: Vec<_> = (0..n)
        .map(|_| {
            let d = DropCount(drops.clone());
            exec.submit(move || drop(d)).unwrap()
        })
        .collect();
    for _ in 0..n {
        let d = DropCount(drops.clone());
        exec.execute(move || drop(d)).unwrap();
    }
    // No thread owns it (nobody ran it), so dropping it cancels what is queued.
    drop(exec);
    assert_eq!(drops.load(Ordering::SeqCst), 2 * n);
    for f in futs {
        assert!(f.wait_timeout(T).unwrap_err().is_cancelled());
    }
}

// ---- on_done and wait_any ---------------------------------------------------------------

#[test]
fn runner_on_done_runs_once_when_terminal() {
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let r = Runner::spawn(&RunnerOptions::new(), move |_| {
        gate_rx.recv_timeout(T).map_err(|e| e.to_string())?;
        Ok::<_, String>(3)
    })
    .unwrap();
    let (tx, rx) = mpsc::channel::<&'static str>();
    let drops = Arc::new(AtomicUsize::new(0));
    let d = DropCount(drops.clone());
    let tx2 = tx.clone();
    r.on_done(move || {
        let _d = d;
        tx2.send("first").unwrap();
    })
    .unwrap();
    assert!(rx.recv_timeout(Duration::from_millis(20)).is_err());
    gate_tx.send(()).unwrap();
    assert_eq!(rx.recv_timeout(T).unwrap(), "first");
    // Already terminal: runs at once, on this thread.
    let me = thread::current().id();
    let (tx3, rx3) = mpsc::channel();
    r.on_done(move || tx3.send(thread::current().id() == me).unwrap())
        .unwrap();
    assert!(rx3.try_recv().unwrap());
    assert_eq!(r.into_result().unwrap(), 3);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    // A panicking notice is caught; the runner and the process are fine.
    let r = Runner::spawn(&RunnerOptions::new(), |_| Ok::<_, String>(())).unwrap();
    r.on_done(|| panic!("notice boom")).unwrap();
    r.join(Some(T)).unwrap();
    // Dropped before it ends: the notice still runs when the scope ends.
    let (tx4, rx4) = mpsc::channel();
    let r = Runner::spawn(&RunnerOptions::new(), |scope| {
        let deadline = Instant::now() + T;
        while !scope.stop_requested() && Instant::now() < deadline {
            thread::yield_now();
        }
        Ok::<_, String>(())
    })
    .unwrap();
    r.on_done(move || tx4.send(()).unwrap()).unwrap();
    drop(r);
    rx4.recv_timeout(T).unwrap();
}

#[test]
fn wait_any_gives_the_lowest_terminal_index() {
    let slow = Executor::new(&ExecutorOptions::new()).unwrap();
    let fast = Executor::new(&ExecutorOptions::new()).unwrap();
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let blocked = slow
        .submit(move || gate_rx.recv_timeout(T).is_ok())
        .unwrap();
    let e = wait_any(&[&blocked], Some(Duration::from_millis(20))).unwrap_err();
    assert!(e.is_timeout());
    let done = fast.submit(|| "done").unwrap();
    let also = fast.submit(|| 5u8).unwrap();
    also.on_done(|| ()).unwrap();
    assert_eq!(also.wait_timeout(T).unwrap(), 5);
    let mixed: [&dyn FutureHandle; 3] = [&blocked, &done, &also];
    let i = wait_any(&mixed, Some(T)).unwrap();
    assert!(i == 1 || i == 2);
    assert_eq!(
        wait_any(&[&blocked as &dyn FutureHandle, &also], Some(T)).unwrap(),
        1
    );
    let homogeneous = vec![fast.submit(|| 1).unwrap(), fast.submit(|| 2).unwrap()];
    let i = wait_any(&homogeneous, Some(T)).unwrap();
    assert!(i < 2);
    let empty: [&dyn FutureHandle; 0] = [];
    assert_eq!(
        wait_any(&empty, Some(T)).unwrap_err().code(),
        sys::TETHER_E_INVALID_ARGUMENT
    );
    gate_tx.send(()).unwrap();
    assert_eq!(wait_any(&[&blocked], Some(T)).unwrap(), 0);
    assert!(blocked.wait_timeout(T).unwrap());
}

#[test]
fn bounded_queue_submit_timeout() {
    let exec = Executor::new(&ExecutorOptions::new().queue_capacity(1)).unwrap();
    let (tx, rx) = mpsc::channel::<()>();
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let blocker = exec
        .submit(move || {
            started_tx.send(()).unwrap();
            let _ = rx.recv_timeout(T);
        })
        .unwrap();
    started_rx.recv_timeout(T).unwrap();
    let queued = exec.submit(|| 1).unwrap();
    assert_eq!(
        exec.submit(|| 2).unwrap_err().code(),
        sys::TETHER_E_QUEUE_FULL
    );
    let e = exec
        .submit_timeout(Duration::from_millis(20), || 3)
        .unwrap_err();
    assert!(e.is_timeout());
    // Room made while waiting: the submit goes through.
    let (go_tx, go_rx) = mpsc::channel::<()>();
    thread::scope(|s| {
        let waiter = s.spawn(|| {
            go_tx.send(()).unwrap();
            exec.submit_timeout(T, || 4)
                .unwrap()
                .wait_timeout(T)
                .unwrap()
        });
        go_rx.recv_timeout(T).unwrap();
        tx.send(()).unwrap();
        assert_eq!(waiter.join().unwrap(), 4);
    });
    blocker.wait_timeout(T).unwrap();
    assert_eq!(queued.wait_timeout(T).unwrap(), 1);
    assert_eq!(exec.stats().rejected, 2);
}
