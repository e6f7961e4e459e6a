//! pipeline_graph — the demo's pipeline scene, in Rust.
//!
//! Two workers (actors), each with a log only its own thread touches. A graph runs a
//! forward pass on worker 0 then worker 1 (+1 each), and a backward pass on worker 1 then
//! worker 0 (x2 each); it is compiled onto the workers' own threads, where their
//! constructors ran. Three batches are executed, pipelined, and come back in order:
//! (x + 1 + 1) * 2 * 2. With the graph still compiled, an ordinary call to worker 0 reads
//! its log (the call that hung in Ray); a second graph on worker 0's thread is refused
//! with TETHER_E_THREAD_BUSY, naming the thread. Every node checks that it runs on its
//! worker's constructor thread.
//!
//! Run: `cargo run --example pipeline_graph`. Exits 1 if a fact of the scene does not hold.
use std::thread::{self, ThreadId};
use std::time::Duration;

use tether::{Actor, ActorOptions, CompileOptions, Graph};

const BATCHES: [i64; 3] = [10, 20, 30];
const WAIT: Duration = Duration::from_secs(5);

/// A worker's state: built, used and dropped on its own thread.
struct Worker {
    ctor_thread: ThreadId,
    off_thread: bool, // a node that ran on another thread than the constructor's
    log: Vec<String>,
}

impl Worker {
    /// A pass: logged as "name(input)", then out = input * mul + add.
    fn pass(&mut self, name: &str, x: i64, mul: i64, add: i64) -> i64 {
        if thread::current().id() != self.ctor_thread {
            self.off_thread = true;
        }
        self.log.push(format!("{name}({x})"));
        x * mul + add
    }
}

fn worker(name: &str) -> Result<Actor<Worker>, tether::Error> {
    Actor::new(&ActorOptions::new().name(name), || Worker {
        ctor_thread: thread::current().id(),
        off_thread: false,
        log: Vec::new(),
    })
}

fn main() -> Result<(), tether::Error> {
    let mut ok = true;
    let mut check = |fact: bool, what: &str| {
        if !fact {
            eprintln!("pipeline_graph: FAILED: {what}");
            ok = false;
        }
    };

    println!("pipeline: two workers, forward then backward passes, compiled onto their threads");
    let w = [worker("worker-0")?, worker("worker-1")?];
    let mut g = Graph::<i64>::new()?;
    let fwd0 = g.node(&w[0], g.input(), |w, x| w.pass("fwd", *x, 1, 1))?;
    let fwd1 = g.node(&w[1], fwd0, |w, x| w.pass("fwd", *x, 1, 1))?;
    let bwd1 = g.node(&w[1], fwd1, |w, x| w.pass("bwd", *x, 2, 0))?;
    let bwd0 = g.node(&w[0], bwd1, |w, x| w.pass("bwd", *x, 2, 0))?;
    let options = CompileOptions::new().channel_capacity(8);
    let compiled = g.compile(&options, bwd0)?;

    let runs = BATCHES
        .iter()
        .map(|&b| compiled.execute(b))
        .collect::<Result<Vec<_>, _>>()?;
    println!(
        "controller: {} batches executed (pipelined, 8 in flight at most)",
        BATCHES.len()
    );
    for (b, (run, input)) in runs.iter().zip(BATCHES).enumerate() {
        let out = run.wait_timeout(WAIT)?;
        println!("controller: batch {b}: {input} -> {out}");
        check(out == (input + 2) * 4, "(x + 1 + 1) * 2 * 2");
    }

    // The ordinary call that hung in Ray, with the graph still compiled.
    let log0 = w[0].call(|w| w.log.join(" "))?.wait_timeout(WAIT)?;
    println!("worker-0: log -> {log0}");

    // A second graph on worker 0's thread: refused, naming the thread.
    let mut other = Graph::<i64>::new()?;
    let again = other.node(&w[0], other.input(), |w, x| w.pass("fwd", *x, 1, 1))?;
    match other.compile(&CompileOptions::new(), again) {
        Err(e) => {
            println!(
                "controller: a second graph on worker-0 -> {}: {}",
                e.status_name(),
                e.message()
            );
            check(
                e.code() == tether::sys::TETHER_E_THREAD_BUSY,
                "a second graph on worker 0 is TETHER_E_THREAD_BUSY",
            );
        }
        Ok(_) => check(false, "a second graph on worker 0 is TETHER_E_THREAD_BUSY"),
    }
    drop(compiled); // tears the loops down (never waits for user code)

    let log1 = w[1].call(|w| w.log.join(" "))?.wait_timeout(WAIT)?;
    println!("worker-1: log -> {log1}");
    for (i, w) in w.iter().enumerate() {
        let off = w.call(|w| w.off_thread)?.wait_timeout(WAIT)?;
        check(
            !off,
            &format!("every node of worker {i} ran on its constructor's thread"),
        );
    }
    drop(w); // each worker drains, then drops its state on its thread
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
