//! Tests of the Rust idiom: error kinds and origins, `try_call`, bounded and async runner
//! joins, nested-thread join handles, the version check. Every wait is bounded.
use std::collections::HashSet;
use std::future::Future as _;
use std::sync::mpsc;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use crate::tests::{block_on, T};
use crate::*;

/// "InvalidArgument" -> "INVALID_ARGUMENT".
fn upper_snake(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

#[test]
fn error_kind_has_one_variant_per_status_code() {
    let mut seen = HashSet::new();
    for code in sys::TETHER_E_INVALID_ARGUMENT..=sys::TETHER_E_FORKED {
        let kind = ErrorKind::from_code(code);
        assert_ne!(kind, ErrorKind::Unknown, "code {code}");
        assert_eq!(kind.code(), Some(code));
        assert!(seen.insert(kind), "{kind:?} twice");
        let name = format!("TETHER_E_{}", upper_snake(&format!("{kind:?}")));
        assert_eq!(
            name,
            Error::status_name_of(code),
            "the variant's name is the code's"
        );
    }
    assert_eq!(ErrorKind::from_code(sys::TETHER_OK), ErrorKind::Unknown);
    assert_eq!(ErrorKind::from_code(1000), ErrorKind::Unknown);
    assert_eq!(ErrorKind::Unknown.code(), None);
}

#[test]
fn a_call_error_names_the_actor_and_the_calling_thread() {
    let actor = Actor::new(&ActorOptions::new().name("log"), || 0u32).unwrap();
    actor.stop(StopMode::Drain, Some(T)).unwrap();
    let err = actor.call(|n| *n).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Shutdown);
    assert_eq!(err.origin(), Some(r#"actor "log""#));
    let caller = std::thread::current().name().unwrap().to_string();
    assert_eq!(err.thread_name(), caller);
    let text = err.to_string();
    assert!(
        text.starts_with(&format!(
            r#"TETHER_E_SHUTDOWN at actor "log", from thread "{caller}": "#
        )),
        "{text}"
    );
    assert_eq!(
        actor.tell(|_| ()).unwrap_err().origin(),
        Some(r#"actor "log""#)
    );
}

#[test]
fn a_task_error_names_its_object_and_the_thread_it_failed_on() {
    let actor = Actor::new(&ActorOptions::new().name("log"), || 0u32).unwrap();
    let err = actor
        .call(|_| -> u32 { panic!("no space") })
        .unwrap()
        .wait_timeout(T)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Panic);
    assert_eq!(
        err.to_string(),
        r#"TETHER_E_PANIC in actor "log" on thread "log": no space"#
    );

    let srv = Actor::with_groups(&ActorOptions::new().name("srv"), &[("io", 1)], || 0u32).unwrap();
    let err = srv
        .group("io")
        .try_call(|_| Err::<(), _>("refused"))
        .unwrap()
        .wait_timeout(T)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"TETHER_E_TASK_FAILED in actor "srv", group "io" on thread "srv/io": refused"#
    );

    let exec = Executor::new(&ExecutorOptions::new().name("worker")).unwrap();
    let err = exec
        .submit(|| -> u8 { panic!("boom") })
        .unwrap()
        .wait_timeout(T)
        .unwrap_err();
    assert_eq!(err.origin(), Some(r#"executor "worker""#));

    let runner = Runner::spawn(&RunnerOptions::new().name("trainer"), |scope| {
        scope.spawn("upload", |_| Err::<(), _>("disk full"))?;
        Ok::<_, Error>(())
    })
    .unwrap();
    let err = runner.join_timeout(T).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"TETHER_E_TASK_FAILED in runner "trainer" on thread "upload": disk full"#
    );
}

#[test]
fn a_second_compile_is_wrong_state_in_the_graph() {
    let w = Actor::new(&ActorOptions::new(), || 0u32).unwrap();
    let mut g = Graph::<u32>::new().unwrap();
    let n = g.node(&w, g.input(), |_, x: &u32| *x + 1).unwrap();
    let compiled = g.compile(&CompileOptions::new(), n).unwrap();
    let err = g.compile(&CompileOptions::new(), n).unwrap_err();
    assert_eq!(
        (err.kind(), err.origin()),
        (ErrorKind::WrongState, Some("graph"))
    );
    let e = compiled.execute(1).unwrap();
    assert_eq!(e.wait_timeout(T).unwrap(), 2);
    let again = e.wait_timeout(T).unwrap_err();
    assert_eq!(
        (again.kind(), again.origin()),
        (ErrorKind::WrongState, Some("compiled graph"))
    );
}

#[test]
fn try_call_fails_the_future_with_the_errors_text() {
    let actor = Actor::new(&ActorOptions::new(), || 10i64).unwrap();
    let sub = |k: i64| {
        move |n: &mut i64| -> Result<i64, String> {
            if k > *n {
                return Err(format!("{k} > {n}"));
            }
            *n -= k;
            Ok(*n)
        }
    };
    assert_eq!(actor.try_call(sub(4)).unwrap().wait_timeout(T).unwrap(), 6);
    let err = actor.try_call(sub(7)).unwrap().wait_timeout(T).unwrap_err();
    assert_eq!(
        (err.kind(), err.message()),
        (ErrorKind::TaskFailed, "7 > 6")
    );
    // The failed call changed nothing, and a panic is still a panic.
    assert_eq!(actor.call(|n| *n).unwrap().wait_timeout(T).unwrap(), 6);
    let err = actor
        .try_call(|_| -> Result<(), String> { panic!("bad") })
        .unwrap()
        .wait_timeout(T)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Panic);
    // The actor's errors() keeps only fire-and-forget failures: none here.
    assert!(actor.errors().is_empty());

    let shared = Actor::with_groups(&ActorOptions::new(), &[], || 1u8).unwrap();
    let err = shared
        .try_call(|_| Err::<u8, _>(42))
        .unwrap()
        .wait_timeout(T)
        .unwrap_err();
    assert_eq!(err.message(), "42");
    assert_eq!(
        shared
            .try_call(|n| Ok::<_, String>(*n))
            .unwrap()
            .wait_timeout(T)
            .unwrap(),
        1
    );
}

#[test]
fn runner_join_timeout_gives_the_value_or_the_error() {
    let (tx, rx) = mpsc::channel::<u32>();
    let runner = Runner::spawn(&RunnerOptions::new(), move |_| {
        rx.recv_timeout(T).map_err(|e| e.to_string())
    })
    .unwrap();
    let early = runner.join_timeout(Duration::from_millis(1)).unwrap_err();
    assert_eq!(early.kind(), ErrorKind::Timeout);
    tx.send(5).unwrap();
    assert_eq!(runner.join_timeout(T).unwrap(), 5);
    assert_eq!(
        runner.join_timeout(T).unwrap_err().kind(),
        ErrorKind::WrongState
    );

    let failing = Runner::spawn(&RunnerOptions::new().name("f"), |_| Err::<u8, _>("no")).unwrap();
    let err = failing.join_timeout(T).unwrap_err();
    assert_eq!(
        (err.kind(), err.thread_name(), err.message()),
        (ErrorKind::TaskFailed, "f", "no")
    );

    let (_keep, rx) = mpsc::channel::<()>();
    let cancelled = Runner::spawn(&RunnerOptions::new(), move |scope| {
        while !scope.stop_requested() {
            let _ = rx.recv_timeout(Duration::from_millis(1));
        }
        Ok::<_, String>(())
    })
    .unwrap();
    cancelled.cancel();
    assert_eq!(
        cancelled.join_timeout(T).unwrap_err().kind(),
        ErrorKind::Cancelled
    );
}

/// Says on a channel that it was woken.
struct SendWake(std::sync::Mutex<mpsc::Sender<()>>);
impl Wake for SendWake {
    fn wake(self: Arc<Self>) {
        let _ = self.0.lock().unwrap().send(());
    }
}

#[test]
fn runner_join_async_is_pending_then_woken() {
    let (tx, rx) = mpsc::channel::<()>();
    let runner = Runner::spawn(&RunnerOptions::new(), move |_| {
        rx.recv_timeout(T).map_err(|e| e.to_string())?;
        Ok::<_, String>("late")
    })
    .unwrap();
    let (woken_tx, woken) = mpsc::channel();
    let waker = Waker::from(Arc::new(SendWake(std::sync::Mutex::new(woken_tx))));
    let mut cx = Context::from_waker(&waker);
    let mut join = std::pin::pin!(runner.join_async());
    assert!(join.as_mut().poll(&mut cx).is_pending());
    tx.send(()).unwrap();
    woken
        .recv_timeout(T)
        .expect("the end of the scope wakes the task");
    match join.as_mut().poll(&mut cx) {
        Poll::Ready(v) => assert_eq!(v.unwrap(), "late"),
        Poll::Pending => panic!("woken, yet pending"),
    }

    let failing = Runner::spawn(&RunnerOptions::new(), |_| -> Result<(), String> {
        panic!("p")
    })
    .unwrap();
    assert_eq!(
        block_on(failing.join_async()).unwrap_err().kind(),
        ErrorKind::Panic
    );
}

#[test]
fn nested_threads_hand_their_values_back() {
    let runner = Runner::spawn(&RunnerOptions::new(), |scope| {
        let handles = (0..4u64)
            .map(|i| scope.spawn(&format!("part-{i}"), move |_| Ok::<_, String>(i * i)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut sum = 0;
        for h in &handles {
            sum += h.join_timeout(T)?;
            assert!(h.is_finished());
            assert_eq!(h.join_timeout(T).unwrap_err().kind(), ErrorKind::WrongState);
        }
        Ok::<_, Error>(sum)
    })
    .unwrap();
    assert_eq!(runner.join_timeout(T).unwrap(), 14);
}

#[test]
fn a_nested_threads_error_reaches_its_handle_and_the_scope() {
    let (tx, rx) = mpsc::channel::<Result<String, Error>>();
    let runner = Runner::spawn(&RunnerOptions::new().stop_on_error(false), move |scope| {
        let bad = scope.spawn("bad", |_| Err::<String, _>("broken"))?;
        let boom = scope.spawn("boom", |_| -> Result<String, String> { panic!("kaput") })?;
        let (hold_tx, hold_rx) = mpsc::channel::<()>();
        let slow = scope.spawn("slow", move |_| {
            hold_rx.recv_timeout(T).map_err(|e| e.to_string())?;
            Ok::<_, String>("slow done".to_string())
        })?;
        // It waits for hold_tx: the bounded join times out and leaves the handle usable.
        let early = slow.join_timeout(Duration::from_millis(1)).unwrap_err();
        assert_eq!(early.kind(), ErrorKind::Timeout);
        assert!(!slow.is_finished());
        hold_tx.send(()).unwrap();
        tx.send(bad.join_timeout(T)).unwrap();
        tx.send(boom.join()).unwrap();
        tx.send(slow.join_timeout(T)).unwrap();
        Ok::<_, Error>(())
    })
    .unwrap();
    let bad = rx.recv_timeout(T).unwrap().unwrap_err();
    assert_eq!(
        (bad.kind(), bad.thread_name(), bad.message()),
        (ErrorKind::TaskFailed, "bad", "broken")
    );
    let boom = rx.recv_timeout(T).unwrap().unwrap_err();
    assert_eq!(
        (boom.kind(), boom.thread_name(), boom.message()),
        (ErrorKind::Panic, "boom", "kaput")
    );
    assert_eq!(rx.recv_timeout(T).unwrap().unwrap(), "slow done");
    let first = runner.join_timeout(T).unwrap_err();
    assert!(["bad", "boom"].contains(&first.thread_name()), "{first}");
    runner.join_all(Some(T)).unwrap();
    assert_eq!(runner.errors().len(), 2);
}

#[test]
fn a_nested_thread_that_never_ran_is_cancelled() {
    let slot = crate::join::Slot::<u8>::new();
    drop(crate::join::Filler(slot.clone()));
    let err = crate::join::JoinHandle::new(slot)
        .join_timeout(T)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Cancelled);
}

#[test]
fn a_refused_spawn_returns_its_error_and_no_handle() {
    let runner = Runner::spawn(&RunnerOptions::new(), |scope| {
        let err = scope.spawn("", |_| Ok::<_, String>(1)).unwrap_err();
        Ok::<_, String>(err.kind())
    })
    .unwrap();
    assert_eq!(runner.join_timeout(T).unwrap(), ErrorKind::InvalidArgument);
}

#[test]
fn the_version_rule_needs_the_same_major_and_at_least_the_minor() {
    let v = |major: u32, minor: u32, patch: u32| (major << 16) | (minor << 8) | patch;
    assert!(compatible(v(0, 1, 0), v(0, 1, 0)).is_ok());
    assert!(
        compatible(v(0, 1, 3), v(0, 1, 0)).is_ok(),
        "patches add no functions"
    );
    assert!(
        compatible(v(1, 2, 0), v(1, 4, 1)).is_ok(),
        "a newer minor keeps every function"
    );
    let older = compatible(v(1, 2, 0), v(1, 1, 9)).unwrap_err();
    assert_eq!(older.kind(), ErrorKind::WrongState);
    assert!(
        older.message().contains("version 1.1.9") && older.message().contains("1.2.0 header"),
        "{older}"
    );
    assert!(compatible(v(1, 2, 0), v(2, 2, 0)).is_err());
    assert!(compatible(v(1, 2, 0), v(0, 9, 0)).is_err());
    // The library under test matches the declarations, and the check is what every
    // constructor runs first.
    check_version().unwrap();
    assert_eq!(unsafe { sys::tether_version() }, sys::TETHER_VERSION);
}
