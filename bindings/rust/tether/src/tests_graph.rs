//! Tests of compiled graphs (header section 9), in the library's own test binary like the
//! others (one valgrind run covers them). Every wait is bounded; drops of values, inputs
//! and node functions are counted.
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use crate::tests::{block_on, os_thread_name, scaled, DropCount, T};
use crate::*;

thread_local! {
    /// Set by a worker's constructor to 100 + its id; every node on it must see that.
    static TL: Cell<u64> = const { Cell::new(0) };
}

/// A worker's state: its log is touched only by its own thread.
struct Worker {
    id: u64,
    ctor_thread: ThreadId,
    log: Vec<String>,
}

impl Worker {
    /// Every node calls this first: it must run where the constructor ran and see its
    /// thread-local; else the node panics and its execution fails.
    fn step(&mut self, tag: &str, x: i64) {
        assert_eq!(
            thread::current().id(),
            self.ctor_thread,
            "node off its thread"
        );
        assert_eq!(
            TL.with(Cell::get),
            100 + self.id,
            "node without the ctor's TL"
        );
        self.log.push(format!("{tag}:{x}"));
    }
}

fn worker(name: &str, id: u64) -> Actor<Worker> {
    Actor::new(&ActorOptions::new().name(name), move || {
        TL.with(|t| t.set(100 + id));
        Worker {
            id,
            ctor_thread: thread::current().id(),
            log: Vec::new(),
        }
    })
    .unwrap()
}

/// The entries of `log` tagged `tag`, in order.
fn entries(log: &[String], tag: &str) -> Vec<String> {
    let prefix = format!("{tag}:");
    log.iter()
        .filter(|e| e.starts_with(&prefix))
        .cloned()
        .collect()
}

/// The worker's log, read by an ordinary call (on its thread), with the call's thread.
fn logs(w: &Actor<Worker>) -> (Vec<String>, ThreadId, ThreadId) {
    w.call(|w| (w.log.clone(), w.ctor_thread, thread::current().id()))
        .unwrap()
        .wait_timeout(T)
        .unwrap()
}

/// Polls `cond` until it holds, at most T.
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + T;
    while !cond() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

/// A graph value that counts its drops.
#[derive(Debug)]
struct Counted {
    v: i64,
    drops: Arc<AtomicUsize>,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// Counts values made and dropped.
#[derive(Clone, Default)]
struct Ledger {
    made: Arc<AtomicUsize>,
    dropped: Arc<AtomicUsize>,
}

impl Ledger {
    fn value(&self, v: i64) -> Counted {
        self.made.fetch_add(1, Ordering::SeqCst);
        Counted {
            v,
            drops: self.dropped.clone(),
        }
    }
    fn made(&self) -> usize {
        self.made.load(Ordering::SeqCst)
    }
    fn dropped(&self) -> usize {
        self.dropped.load(Ordering::SeqCst)
    }
}

/// The seed's pipeline: two workers, forward passes then backward passes.
/// input -> w0.fwd (x2) -> w1.fwd (+3) -> w1.bwd (x5) -> w0.bwd (-1) -> output
fn expect(b: i64) -> i64 {
    ((b * 2) + 3) * 5 - 1
}

#[test]
fn graph_pipeline_seed() {
    let w = [worker("worker-0", 0), worker("worker-1", 1)];
    let mut g = Graph::<i64>::new().unwrap();
    let fwd0 = g
        .node(&w[0], g.input(), |w, x| {
            w.step("fwd", *x);
            x * 2
        })
        .unwrap();
    let fwd1 = g
        .node(&w[1], fwd0, |w, x| {
            w.step("fwd", *x);
            x + 3
        })
        .unwrap();
    let bwd1 = g
        .node(&w[1], fwd1, |w, x| {
            w.step("bwd", *x);
            x * 5
        })
        .unwrap();
    let bwd0 = g
        .node(&w[0], bwd1, |w, x| {
            w.step("bwd", *x);
            x - 1
        })
        .unwrap();
    assert_eq!((fwd0.index(), bwd0.index()), (0, 3));
    let compiled: Compiled<i64, i64> = g.compile(&CompileOptions::new(), bwd0).unwrap();

    let runs: Vec<Execution<i64>> = (0..3).map(|b| compiled.execute(b).unwrap()).collect();
    for (b, run) in runs.iter().enumerate() {
        assert_eq!(run.wait_timeout(T).unwrap(), expect(b as i64));
        assert_eq!(run.poll(), State::Succeeded);
    }
    // The call that hung in Ray: an ordinary call to worker 0 with the graph compiled,
    // answered on the constructor's thread.
    let (log0, ctor0, call0) = logs(&w[0]);
    assert_eq!(ctor0, call0);
    assert_eq!(entries(&log0, "fwd"), ["fwd:0", "fwd:1", "fwd:2"]);
    assert_eq!(entries(&log0, "bwd"), ["bwd:15", "bwd:25", "bwd:35"]);
    let (log1, _, _) = logs(&w[1]);
    assert_eq!(entries(&log1, "fwd"), ["fwd:0", "fwd:2", "fwd:4"]);
    assert_eq!(entries(&log1, "bwd"), ["bwd:3", "bwd:5", "bwd:7"]);
    // Still compiled: another execution works after the calls.
    assert_eq!(compiled.execute(10).unwrap().wait().unwrap(), expect(10));
}

#[test]
fn every_node_sees_its_constructors_thread_local() {
    let w = [worker("tl-0", 0), worker("tl-1", 1)];
    let fails = Arc::new(AtomicUsize::new(0));
    let mut g = Graph::<i64>::new().unwrap();
    // The three ways to add a node all run where the constructor ran (Worker::step
    // panics otherwise), and see its thread-local.
    let a = g
        .node(&w[0], g.input(), |w, x| {
            w.step("a", *x);
            TL.with(Cell::get) as i64 + x
        })
        .unwrap();
    let b = g
        .try_node(&w[1], a, |w, x| {
            w.step("b", *x);
            Ok::<i64, String>(TL.with(Cell::get) as i64 + x)
        })
        .unwrap();
    let f2 = fails.clone();
    let c = g
        .node_scoped(&w[0], (a, b), move |w, (a, b), scope| {
            w.step("c", *a);
            if scope.thread_name() != "tl-0" {
                f2.fetch_add(1, Ordering::SeqCst);
            }
            (*a, *b, TL.with(Cell::get))
        })
        .unwrap();
    let compiled = g
        .compile(&CompileOptions::new().channel_capacity(2), c)
        .unwrap();
    for i in 0..20 {
        let (a, b, tl) = compiled.execute_timeout(T, i).unwrap().wait().unwrap();
        assert_eq!((a, b, tl), (100 + i, 101 + 100 + i, 100));
    }
    assert_eq!(fails.load(Ordering::SeqCst), 0);
    assert_eq!(logs(&w[0]).0.len(), 40);
    assert_eq!(logs(&w[1]).0.len(), 20);
}

/// A graph of one node on `host`: out = x + add.
fn one_node<H: NodeHost>(host: &H, add: i64) -> (Graph<i64>, Node<i64>) {
    let mut g = Graph::<i64>::new().unwrap();
    let n = g.node(host, g.input(), move |_, x: &i64| x + add).unwrap();
    (g, n)
}

#[test]
fn a_second_graph_on_a_busy_thread_is_thread_busy_until_the_first_is_dropped() {
    let a = worker("busy", 0);
    let (mut g0, n0) = one_node(&a, 1);
    let (mut g1, n1) = one_node(&a, 2);
    let c0 = g0.compile(&CompileOptions::new(), n0).unwrap();
    let err = g1.compile(&CompileOptions::new(), n1).unwrap_err();
    assert_eq!(err.code(), sys::TETHER_E_THREAD_BUSY, "{err}");
    assert!(err.message().contains("thread 'busy'"), "{err}");
    assert_eq!(g1.error().unwrap(), err);
    // The first still works, and nothing of the second was installed.
    assert_eq!(c0.execute(5).unwrap().wait_timeout(T).unwrap(), 6);
    // A compiled graph freezes its description.
    let e = g0.node(&a, n0, |_, x| *x).unwrap_err();
    assert_eq!(e.code(), sys::TETHER_E_WRONG_STATE);
    drop(c0);
    let c1 = g1.compile(&CompileOptions::new(), n1).unwrap();
    assert!(
        g1.error().is_none(),
        "a successful compile clears the error"
    );
    assert_eq!(c1.execute(5).unwrap().wait_timeout(T).unwrap(), 7);
    // Editable again once its compiled graph is gone.
    drop(c1);
    let more = g0.node(&a, n0, |_, x| x * 10).unwrap();
    let c0 = g0.compile(&CompileOptions::new(), more).unwrap();
    assert_eq!(c0.execute(5).unwrap().wait_timeout(T).unwrap(), 60);
    drop(c0);

    // Two actors on one executor share its thread, so one graph between them.
    let shared = Executor::new(&ExecutorOptions::new().name("shared")).unwrap();
    let opts = ActorOptions::new().executor(&shared);
    let s1 = Actor::new(&opts, || 1u32).unwrap();
    let s2 = Actor::new(&opts, || 2u32).unwrap();
    let (mut h1, m1) = one_node(&s1, 0);
    let (mut h2, m2) = one_node(&s2, 0);
    let c = h1.compile(&CompileOptions::new(), m1).unwrap();
    let err = h2.compile(&CompileOptions::new(), m2).unwrap_err();
    assert_eq!(err.code(), sys::TETHER_E_THREAD_BUSY);
    assert!(err.message().contains("thread 'shared'"), "{err}");
    drop(c);
    let c = h2.compile(&CompileOptions::new(), m2).unwrap();
    assert_eq!(c.execute(3).unwrap().wait_timeout(T).unwrap(), 3);
}

/// A grouped actor's state: shared with its groups' threads, so Sync.
struct Server {
    seen: Mutex<Vec<(String, u64)>>,
}

#[test]
fn a_group_graph_coexists_with_a_default_thread_graph() {
    let srv: GroupedActor<Server> = Actor::with_groups(
        &ActorOptions::new().name("grouped"),
        &[("io", 1), ("wide", 2)],
        || {
            TL.with(|t| t.set(7));
            Server {
                seen: Mutex::new(Vec::new()),
            }
        },
    )
    .unwrap();
    // The io group's thread gets a thread-local of its own.
    srv.group("io")
        .call(|_| TL.with(|t| t.set(555)))
        .unwrap()
        .wait_timeout(T)
        .unwrap();
    let record = |s: &Server, x: &i64, add: i64| {
        let me = (os_thread_name().unwrap_or_default(), TL.with(Cell::get));
        s.seen.lock().unwrap().push(me);
        x + add
    };
    let mut g_default = Graph::<i64>::new().unwrap();
    let d = g_default
        .node(&srv, g_default.input(), move |s, x| record(s, x, 10))
        .unwrap();
    let mut g_group = Graph::<i64>::new().unwrap();
    let n = g_group
        .node(&srv.group("io"), g_group.input(), move |s, x| {
            record(s, x, 20)
        })
        .unwrap();
    let (mut g_wide, w) = one_node(&srv.group("wide"), 30);
    let err = g_wide.compile(&CompileOptions::new(), w).unwrap_err();
    assert_eq!(err.code(), sys::TETHER_E_INVALID_ARGUMENT);
    assert!(err.message().contains("group 'wide' of 2 threads"), "{err}");

    let c_default = g_default.compile(&CompileOptions::new(), d).unwrap();
    let c_group = g_group.compile(&CompileOptions::new(), n).unwrap();
    let e1 = c_default.execute(1).unwrap();
    let e2 = c_group.execute(2).unwrap();
    assert_eq!(e1.wait_timeout(T).unwrap(), 11);
    assert_eq!(e2.wait_timeout(T).unwrap(), 22);
    let seen = srv.call(|s| s.seen.lock().unwrap().clone()).unwrap();
    let mut seen = seen.wait_timeout(T).unwrap();
    seen.sort();
    assert_eq!(
        seen,
        [("grouped".to_string(), 7), ("grouped/io".to_string(), 555)]
    );
    // An unknown group is refused when the node is added.
    let mut g = Graph::<i64>::new().unwrap();
    let e = g
        .node(&srv.group("nope"), g.input(), |_, x| *x)
        .unwrap_err();
    assert_eq!(e.code(), sys::TETHER_E_NOT_FOUND);
}

#[test]
fn fan_out_fan_in_with_inputs_in_order_and_two_outputs() {
    let w = [worker("fan-0", 0), worker("fan-1", 1)];
    let ledger = Ledger::default();
    let mut g = Graph::<i64>::new().unwrap();
    let (l1, l2, l3) = (ledger.clone(), ledger.clone(), ledger.clone());
    let a = g
        .node(&w[0], g.input(), move |_, x| l1.value(2 * x))
        .unwrap();
    // A value of another type: b = "3x".
    let b = g
        .node(&w[1], g.input(), |_, x| format!("{}", 3 * x))
        .unwrap();
    // c takes (a, b) in edge order; d takes the input twice (the same edge twice).
    let c = g
        .node(&w[0], (a, b), move |_, (a, b)| {
            l2.value(a.v + 1000 * b.parse::<i64>().unwrap())
        })
        .unwrap();
    let d = g
        .node(&w[1], (g.input(), g.input()), move |_, (x, y)| {
            l3.value(x * 100 + y)
        })
        .unwrap();
    let compiled = g
        .compile(&CompileOptions::new().channel_capacity(4), (c, a, d))
        .unwrap();
    for i in 1..=10 {
        let (c, a, d) = compiled.execute(i).unwrap().wait().unwrap();
        assert_eq!((c.v, a.v, d.v), (2 * i + 1000 * 3 * i, 2 * i, 101 * i));
        // Each output is a value the caller owns; the string was dropped by the library.
        assert_eq!(ledger.dropped(), 3 * (i as usize - 1));
    }
    assert_eq!(ledger.made(), 30);
    assert_eq!(ledger.dropped(), 30);
}

#[test]
fn a_panicking_node_fails_only_its_execution() {
    let w = [worker("worker-0", 0), worker("worker-1", 1)];
    let ledger = Ledger::default();
    let closures = Arc::new(AtomicUsize::new(0));
    let bwd_runs = Arc::new(AtomicUsize::new(0));
    let mut g = Graph::<i64>::new().unwrap();
    let (l0, l1, l2) = (ledger.clone(), ledger.clone(), ledger.clone());
    let (k0, k1, k2) = (
        DropCount(closures.clone()),
        DropCount(closures.clone()),
        DropCount(closures.clone()),
    );
    let runs = bwd_runs.clone();
    let fwd0 = g
        .node(&w[0], g.input(), move |_, x| {
            let _ = &k0;
            l0.value(x * 2)
        })
        .unwrap();
    let fwd1 = g
        .node(&w[1], fwd0, move |_, x| {
            let _ = &k1;
            if x.v == 2 {
                panic!("bad batch {}", x.v);
            }
            l1.value(x.v + 3)
        })
        .unwrap();
    let bwd = g
        .node(&w[0], fwd1, move |_, x| {
            let _ = &k2;
            runs.fetch_add(1, Ordering::SeqCst);
            l2.value(x.v * 5 - 1)
        })
        .unwrap();
    let compiled = g.compile(&CompileOptions::new(), bwd).unwrap();
    let runs: Vec<_> = (0..3).map(|b| compiled.execute(b).unwrap()).collect();
    assert_eq!(runs[0].wait_timeout(T).unwrap().v, expect(0));
    let err = runs[1].wait_timeout(T).unwrap_err();
    assert!(err.is_panic(), "{err}");
    assert_eq!(err.message(), "bad batch 2");
    assert_eq!(err.thread_name(), "worker-1");
    assert_eq!(runs[1].poll(), State::Failed);
    assert_eq!(runs[2].wait_timeout(T).unwrap().v, expect(2));
    assert_eq!(
        bwd_runs.load(Ordering::SeqCst),
        2,
        "not for the failed batch"
    );
    // A second take of outputs already taken is refused (the values were moved out once).
    let again = runs[0].wait_timeout(T).unwrap_err();
    assert_eq!(again.code(), sys::TETHER_E_WRONG_STATE);
    // The actor is fine: an ordinary call answers.
    assert_eq!(w[1].call(|w| w.id).unwrap().wait_timeout(T).unwrap(), 1);

    // try_node: Err fails the execution with TETHER_E_TASK_FAILED and the text.
    let mut h = Graph::<i64>::new().unwrap();
    let odd = h
        .try_node(&w[1], h.input(), |_, x| {
            if x % 2 == 1 {
                Err(format!("odd input {x}"))
            } else {
                Ok(x / 2)
            }
        })
        .unwrap();
    drop(compiled); // worker 1's thread hosts one graph at a time
    let c = h.compile(&CompileOptions::new(), odd).unwrap();
    assert_eq!(c.execute(4).unwrap().wait().unwrap(), 2);
    let err = c.execute(3).unwrap().wait().unwrap_err();
    assert_eq!(err.code(), sys::TETHER_E_TASK_FAILED);
    assert_eq!(err.message(), "odd input 3");
    drop(c);
    drop(h);
    drop(runs);
    drop(g);
    // Every value made was dropped once: the outputs by us, the rest by the library
    // (fwd0's value of the failed batch too).
    eventually("every value dropped", || ledger.dropped() == ledger.made());
    assert_eq!(ledger.made(), 2 * 3 + 1);
    eventually("every node function dropped", || {
        closures.load(Ordering::SeqCst) == 3
    });
}

#[test]
fn dropping_the_compiled_graph_while_a_node_blocks_returns_at_once_and_leaks_nothing() {
    let w = [worker("worker-0", 0), worker("worker-1", 1)];
    let ledger = Ledger::default();
    let inputs = Ledger::default();
    let closures = Arc::new(AtomicUsize::new(0));
    let saw_stop = Arc::new(AtomicBool::new(false));
    let later_runs = Arc::new(AtomicUsize::new(0));
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let (gate_tx, gate_rx) = mpsc::channel::<()>();

    let mut g = Graph::<Counted>::new().unwrap();
    let (l0, l1, l2) = (ledger.clone(), ledger.clone(), ledger.clone());
    let (k0, k1, k2) = (
        DropCount(closures.clone()),
        DropCount(closures.clone()),
        DropCount(closures.clone()),
    );
    let fwd0 = g
        .node(&w[0], g.input(), move |_, x| {
            let _ = &k0;
            l0.value(x.v * 2)
        })
        .unwrap();
    let stop = saw_stop.clone();
    // Batch 0 blocks in worker 1's first node until the gate opens.
    let fwd1 = g
        .node_scoped(&w[1], fwd0, move |_, x, scope| {
            let _ = &k1;
            if x.v == 0 {
                started_tx.send(()).unwrap();
                gate_rx.recv_timeout(T).unwrap();
                stop.store(scope.stop_requested(), Ordering::SeqCst);
            }
            l1.value(x.v + 3)
        })
        .unwrap();
    let later = later_runs.clone();
    let bwd1 = g
        .node(&w[1], fwd1, move |_, x| {
            let _ = &k2;
            later.fetch_add(1, Ordering::SeqCst);
            l2.value(x.v * 5)
        })
        .unwrap();
    let compiled = g.compile(&CompileOptions::new(), bwd1).unwrap();
    let runs: Vec<_> = (0..3)
        .map(|b| compiled.execute(inputs.value(b)).unwrap())
        .collect();
    started_rx.recv_timeout(T).unwrap();

    let t0 = Instant::now();
    drop(compiled); // never waits for user code
    let took = t0.elapsed();
    assert!(took < T / 3, "dropping the compiled graph took {took:?}");
    for run in &runs {
        let err = run.wait_timeout(T).unwrap_err();
        assert!(err.is_cancelled(), "{err}");
        assert_eq!(run.poll(), State::Cancelled);
    }
    // Worker 1's thread still runs the node: busy. Worker 0's is free once it has run the
    // steps it had queued (the later executions' first nodes may still have been running
    // when the drop came: an ordinary call queued behind them answers after them).
    let (mut other, n) = one_node(&w[1], 0);
    let err = other.compile(&CompileOptions::new(), n).unwrap_err();
    assert_eq!(err.code(), sys::TETHER_E_THREAD_BUSY);
    w[0].call(|_| ()).unwrap().wait_timeout(T).unwrap();
    let (mut on_w0, n0) = one_node(&w[0], 0);
    drop(on_w0.compile(&CompileOptions::new(), n0).unwrap());

    gate_tx.send(()).unwrap();
    // An ordinary call queued behind the node runs once the step (and the teardown's
    // uninstall, which follows it on that thread) is done.
    w[1].call(|_| ()).unwrap().wait_timeout(T).unwrap();
    let c2 = other.compile(&CompileOptions::new(), n).unwrap();
    assert!(
        saw_stop.load(Ordering::SeqCst),
        "the node saw the stop request"
    );
    assert_eq!(
        later_runs.load(Ordering::SeqCst),
        0,
        "nothing after the teardown ran"
    );
    drop(c2);
    drop(runs);
    drop(g);
    drop(w);
    // Once the steps drained: every node function, input and value was dropped once.
    eventually("every node function dropped", || {
        closures.load(Ordering::SeqCst) == 3
    });
    eventually("every input dropped", || inputs.dropped() == 3);
    eventually("every value dropped", || ledger.dropped() == ledger.made());
    assert!(
        ledger.made() >= 2,
        "fwd0's and fwd1's values of batch 0 at least"
    );
}

#[test]
fn many_executions_with_backpressure() {
    let count = scaled(10_000) as i64;
    let capacity = 4;
    let a = worker("bp-0", 0);
    let b = worker("bp-1", 1);
    let inputs = Ledger::default();
    let values = Ledger::default();
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let mut g = Graph::<Counted>::new().unwrap();
    let (v0, v1) = (values.clone(), values.clone());
    let first = g
        .node(&a, g.input(), move |_, x| {
            if x.v == 0 {
                started_tx.send(()).unwrap();
                gate_rx.recv_timeout(T).unwrap();
            }
            v0.value(x.v + 1)
        })
        .unwrap();
    let second = g.node(&b, first, move |_, x| v1.value(x.v * 2)).unwrap();
    let compiled = g
        .compile(&CompileOptions::new().channel_capacity(capacity), second)
        .unwrap();

    // With the first execution blocked in its first node, exactly `capacity` get in.
    let mut runs = VecDeque::new();
    for i in 0..capacity as i64 {
        runs.push_back((i, compiled.execute(inputs.value(i)).unwrap()));
    }
    started_rx.recv_timeout(T).unwrap();
    let full = compiled.execute(inputs.value(-1)).unwrap_err();
    assert_eq!(full.code(), sys::TETHER_E_QUEUE_FULL);
    let timeout = compiled
        .execute_timeout(Duration::from_millis(1), inputs.value(-1))
        .unwrap_err();
    assert!(timeout.is_timeout(), "{timeout}");
    eventually("the refused inputs dropped", || inputs.dropped() == 2);
    gate_tx.send(()).unwrap();

    // Executions complete in the order they started: on_done notes it.
    let order = Arc::new(Mutex::new(Vec::with_capacity(count as usize)));
    for (i, run) in &runs {
        let (o, i) = (order.clone(), *i);
        run.on_done(move || o.lock().unwrap().push(i)).unwrap();
    }
    let mut queue_full = 0usize;
    let mut done = 0i64;
    for i in capacity as i64..count {
        let run = match compiled.execute(inputs.value(i)) {
            Ok(run) => run,
            Err(e) => {
                assert_eq!(e.code(), sys::TETHER_E_QUEUE_FULL, "{e}");
                queue_full += 1;
                compiled.execute_timeout(T, inputs.value(i)).unwrap()
            }
        };
        let o = order.clone();
        run.on_done(move || o.lock().unwrap().push(i)).unwrap();
        runs.push_back((i, run));
        // Take the outputs as we go (the executions stay bounded anyway).
        while runs.len() > 2 * capacity {
            let (j, run) = runs.pop_front().unwrap();
            assert_eq!(run.wait_timeout(T).unwrap().v, (j + 1) * 2);
            done += 1;
        }
    }
    for (j, run) in runs.drain(..) {
        assert_eq!(run.wait_timeout(T).unwrap().v, (j + 1) * 2);
        done += 1;
    }
    assert_eq!(done, count);
    eventually("every on_done ran", || {
        order.lock().unwrap().len() == count as usize
    });
    assert!(order.lock().unwrap().iter().copied().eq(0..count));
    drop(compiled);
    // Refused inputs (QUEUE_FULL, timeout) were dropped too, each once.
    eventually("every input dropped", || inputs.dropped() == inputs.made());
    assert_eq!(inputs.made(), count as usize + 2 + queue_full);
    eventually("every value dropped", || values.dropped() == values.made());
    assert_eq!(values.made(), 2 * count as usize);
    println!("executions {count}, QUEUE_FULL answers {queue_full}");
}

#[test]
fn a_non_send_state_is_used_by_nodes() {
    // Rc<RefCell<_>> is neither Send nor Sync: it stays on the actor's thread, where the
    // nodes get &mut to it.
    let actor = Actor::new(&ActorOptions::new().name("rc"), || {
        Rc::new(RefCell::new(Vec::<i64>::new()))
    })
    .unwrap();
    let mut g = Graph::<i64>::new().unwrap();
    let push = g
        .node(&actor, g.input(), |s: &mut Rc<RefCell<Vec<i64>>>, x| {
            s.borrow_mut().push(*x);
            s.borrow().len()
        })
        .unwrap();
    let sum = g
        .node(&actor, push, |s, n| {
            let alias = Rc::clone(s); // a second Rc, on this thread only
            let total: i64 = alias.borrow().iter().sum();
            (*n, total)
        })
        .unwrap();
    let compiled = g.compile(&CompileOptions::new(), sum).unwrap();
    for i in 1..=5 {
        let (n, total) = compiled.execute(i).unwrap().wait_timeout(T).unwrap();
        assert_eq!((n, total), (i as usize, i * (i + 1) / 2));
    }
    let v = actor.call(|s| s.borrow().clone()).unwrap();
    assert_eq!(v.wait_timeout(T).unwrap(), [1, 2, 3, 4, 5]);
}

#[test]
fn an_execution_can_be_awaited() {
    let a = worker("async", 0);
    let mut g = Graph::<String>::new().unwrap();
    let len = g.node(&a, g.input(), |_, s| s.len()).unwrap();
    let upper = g.node(&a, g.input(), |_, s| s.to_uppercase()).unwrap();
    let compiled = g.compile(&CompileOptions::new(), (upper, len)).unwrap();
    let run = compiled.execute("tether".to_string()).unwrap();
    assert_eq!(
        block_on(async { run.await.unwrap() }),
        ("TETHER".to_string(), 6)
    );
    // wait_any takes executions too.
    let r1 = compiled.execute("x".into()).unwrap();
    let i = wait_any(&[&r1], Some(T)).unwrap();
    assert_eq!(i, 0);
    assert_eq!(block_on(r1).unwrap().1, 1);
}

#[test]
fn outputs_never_taken_are_dropped_with_the_execution() {
    let a = worker("untaken", 0);
    let ledger = Ledger::default();
    let l = ledger.clone();
    let mut g = Graph::<i64>::new().unwrap();
    let n = g.node(&a, g.input(), move |_, x| l.value(*x)).unwrap();
    let compiled = g.compile(&CompileOptions::new(), n).unwrap();
    let run = compiled.execute(1).unwrap();
    let (tx, rx) = mpsc::channel();
    run.on_done(move || tx.send(()).unwrap()).unwrap();
    rx.recv_timeout(T).unwrap();
    assert_eq!(run.poll(), State::Succeeded);
    assert_eq!(ledger.dropped(), 0, "the output waits for its taker");
    drop(run);
    // The library drops it with the last reference to the execution's future: ours, or
    // the completer's, which may still hold it while its notices (ours above) run.
    eventually("dropped with the execution", || ledger.dropped() == 1);
    // Dropped before it ends: the library drops the output when it does.
    let run = compiled.execute(2).unwrap();
    drop(run);
    eventually("the output of a dropped execution", || {
        ledger.dropped() == 2
    });
}

#[test]
fn graph_misuse_is_refused() {
    let a = worker("misuse", 0);
    let b = worker("misuse-b", 1);
    let mut g1 = Graph::<i64>::new().unwrap();
    let mut g2 = Graph::<i64>::new().unwrap();
    let n1 = g1.node(&a, g1.input(), |_, x| *x).unwrap();
    // A node of another graph, as an input or an output.
    let e = g2.node(&b, n1, |_, x| *x).unwrap_err();
    assert_eq!(e.code(), sys::TETHER_E_INVALID_ARGUMENT);
    let e = g2.compile(&CompileOptions::new(), n1).unwrap_err();
    assert_eq!(e.code(), sys::TETHER_E_INVALID_ARGUMENT);
    // The input is not an output.
    let e = g1.compile(&CompileOptions::new(), g1.input()).unwrap_err();
    assert_eq!(e.code(), sys::TETHER_E_INVALID_ARGUMENT);
    // A node without inputs is unreachable. (A cycle cannot be written: a node's inputs
    // exist before it.)
    let lone = g2.node(&b, (), |_, ()| 5i64).unwrap();
    let e = g2.compile(&CompileOptions::new(), lone).unwrap_err();
    assert_eq!(e.code(), sys::TETHER_E_INVALID_ARGUMENT);
    assert!(e.message().contains("no inputs"), "{e}");
    assert_eq!(g2.error().unwrap().code(), sys::TETHER_E_INVALID_ARGUMENT);
    // A bad channel capacity.
    let e = g1
        .compile(&CompileOptions::new().channel_capacity(0), n1)
        .unwrap_err();
    assert_eq!(e.code(), sys::TETHER_E_INVALID_ARGUMENT);

    // A stopped actor fails the executions that need it with TETHER_E_SHUTDOWN.
    let c = g1.compile(&CompileOptions::new(), n1).unwrap();
    assert_eq!(c.execute(1).unwrap().wait_timeout(T).unwrap(), 1);
    a.stop(StopMode::Drain, Some(T)).unwrap();
    let e = match c.execute(2) {
        Err(e) => e,
        Ok(run) => run.wait_timeout(T).unwrap_err(),
    };
    assert_eq!(e.code(), sys::TETHER_E_SHUTDOWN, "{e}");
    drop(c);
    let e = g1.compile(&CompileOptions::new(), n1).unwrap_err();
    assert_eq!(e.code(), sys::TETHER_E_SHUTDOWN, "{e}");
}

#[test]
fn node_functions_are_dropped_once_when_refused() {
    let closures = Arc::new(AtomicUsize::new(0));
    let srv =
        Actor::with_groups(&ActorOptions::new().name("refuse"), &[("io", 1)], || 0u8).unwrap();
    let mut g = Graph::<i64>::new().unwrap();
    // Refused by the library (no such group): it drops the function before returning.
    let k = DropCount(closures.clone());
    let e = g
        .node(&srv.group("nope"), g.input(), move |_, x| {
            let _ = &k;
            *x
        })
        .unwrap_err();
    assert_eq!(e.code(), sys::TETHER_E_NOT_FOUND);
    assert_eq!(closures.load(Ordering::SeqCst), 1);
    // Refused while compiled (TETHER_E_WRONG_STATE): the same.
    let n = g.node(&srv.group("io"), g.input(), |_, x| *x).unwrap();
    let c = g.compile(&CompileOptions::new(), n).unwrap();
    let k = DropCount(closures.clone());
    let e = g
        .node(&srv, n, move |_, x| {
            let _ = &k;
            *x
        })
        .unwrap_err();
    assert_eq!(e.code(), sys::TETHER_E_WRONG_STATE);
    assert_eq!(closures.load(Ordering::SeqCst), 2);
    // Refused by the crate (a node of another graph): never handed over, dropped here.
    let other = Graph::<i64>::new().unwrap();
    let k = DropCount(closures.clone());
    drop(c);
    let e = g
        .node(&srv, other.input(), move |_, x| {
            let _ = &k;
            *x
        })
        .unwrap_err();
    assert_eq!(e.code(), sys::TETHER_E_INVALID_ARGUMENT);
    assert_eq!(closures.load(Ordering::SeqCst), 3);
}

#[test]
fn a_panicking_value_drop_never_aborts() {
    struct PanicOnDrop(Arc<AtomicUsize>);
    impl Drop for PanicOnDrop {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
            panic!("value drop panics");
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let a = worker("panic-drop", 0);
    let mut g = Graph::<i64>::new().unwrap();
    let d = drops.clone();
    let mid = g
        .node(&a, g.input(), move |_, x| (PanicOnDrop(d.clone()), *x))
        .unwrap();
    let out = g.node(&a, mid, |_, (_, x)| x + 1).unwrap();
    let compiled = g.compile(&CompileOptions::new(), out).unwrap();
    for i in 0..3 {
        // The intermediate is dropped by the library when the execution ends; its panic
        // is caught in drop_value and goes nowhere.
        assert_eq!(compiled.execute(i).unwrap().wait_timeout(T).unwrap(), i + 1);
    }
    eventually("every intermediate dropped", || {
        drops.load(Ordering::SeqCst) == 3
    });
}
