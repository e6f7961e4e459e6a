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
fn os_thread_name() -> Option<String> {
    std::fs::read_to_string("/proc/thread-self/comm")
        .ok()
        .map(|s| s.trim_end().to_string())
}

const T: Duration = Duration::from_secs(30);

/// Stress sizes are divided by TETHER_TEST_SCALE (the project's convention: 20 under
/// valgrind, 10 under TSan, 4 under ASan; default 1).
fn scaled(n: usize) -> usize {
    let divisor: f64 = std::env::var("TETHER_TEST_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|d: &f64| *d >= 1.0)
        .unwrap_or(1.0);
    ((n as f64 / divisor) as usize).max(10)
}

/// Counts its drops.
struct DropCount(Arc<AtomicUsize>);
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
        actor
            .group("nope")
            .call(|_| ())
            .unwrap_err()
            .code(),
        sys::TETHER_E_NOT_FOUND
    );
    let e = Actor::with_groups(&ActorOptions::new(), &[("io", 0)], || AtomicUsize::new(0))
        .unwrap_err();
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
    let fast = actor.group("fast").call(|p| p.hits.fetch_add(1, Ordering::SeqCst)).unwrap();
    assert_eq!(fast.wait_timeout(T).unwrap(), 0);
    let built_on = actor
        .call(|p| (p.built_on, thread::current().id()))
        .unwrap()
        .wait_timeout(T)
        .unwrap();
    assert_eq!(built_on.0, built_on.1, "default calls run where S was built");
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
    use std::task::{Context, Poll, Wake, Waker};
    struct Unpark(thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        let mut f = std::pin::pin!(f);
        let waker = Waker::from(Arc::new(Unpark(thread::current())));
        let mut cx = Context::from_waker(&waker);
        let deadline = Instant::now() + T;
        loop {
            if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
            assert!(Instant::now() < deadline, "future never completed");
            thread::park_timeout(Duration::from_millis(100));
        }
    }
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
