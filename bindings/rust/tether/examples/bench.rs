//! bench — what the Rust binding costs over the C API, next to the `std` baseline.
//!
//! Three measures on one actor (on its executor's thread), each done three ways that do
//! the SAME work (same captures, same effect on the state, same values out). The crate and
//! the C API call the very same actor (`Actor::as_raw`): one thread, one state, one
//! placement, so what differs between them is only the crate's own code per call.
//!
//! | measure | the crate | the C API, called from Rust | `mpsc` + a `std::thread` |
//! |---|---|---|---|
//! | round trip | `call(move \|n\| { *n += k; *n })`, `wait_timeout` | method adds `(u64)arg` and `tether_task_set_result((void *)n)`; `wait`, `poll`, `take_result`, `release` | the same closure boxed into the channel, the value back on a `sync_channel(1)` |
//! | fire-and-forget, small capture | `tell(move \|n\| *n += k)` | method adds `(u64)arg`, no `arg_drop` | `send(Box::new(closure))` |
//! | fire-and-forget, `Arc` capture | `tell(move \|n\| { *n += 1; c.fetch_add(1) })` with `c` an `Arc<AtomicU64>` clone | `arg` = a malloc'd `Arc` clone, `arg_drop` frees it, method adds 1 to both | the same closure |
//!
//! The crate sends a closure that fits in a pointer and has no drop glue (the first two
//! rows) IN the `arg` pointer: no allocation, no `arg_drop`; a `u64` value comes back the
//! same way. The `Arc` closure has drop glue, so it is boxed, like the C side's malloc.
//! Fire-and-forget is N calls queued without futures then one round trip to know they all
//! ran (throughput); round trip is one call and a wait for its value (latency).
//!
//! Run optimised: `cargo run --release --example bench [-- ROUNDS]` (the bundled core, built
//! -O2 and linked statically; both columns call the same library). Against a Release
//! build tree's shared library instead: `TETHER_LIB_DIR=.../build/release/src cargo run ...`.
//! Plain `std::time::Instant`, 21 repetitions, each running every measure in 10 slices
//! interleaved (Rust and C of a pair taking turns to go first), so a burst of load from
//! elsewhere or the scheduler moving a thread falls on both sides of a pair alike. The
//! times shown are the best repetition of each (the least disturbed), and `Rust / C API`
//! is the median over the repetitions of the ratio of the pair, in three placements of the
//! caller's thread and the actor's: different CPUs (0 and 1), the same CPU (0), and
//! unpinned (the actor's executor made with that `cpu`; the `mpsc` thread and the caller
//! pinned with `sched_setaffinity`). Linux only.
use std::ffi::c_void;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use tether::sys;
use tether::{Actor, ActorOptions};

const T: Duration = Duration::from_secs(60);
const REPS: usize = 21;
const BLOCKS: usize = 10;

fn ns(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_nanos() as f64
}

// ---- the C API directly -------------------------------------------------------------------
/// `*state += (u64)arg`.
unsafe extern "C" fn c_add(
    _: *mut sys::tether_task,
    state: *mut c_void,
    arg: *mut c_void,
) -> sys::tether_status {
    // SAFETY: the default thread runs one method at a time.
    unsafe { *state.cast::<u64>() += arg as u64 };
    sys::TETHER_OK
}
/// `*state += (u64)arg`, and the new value is the call's result (in the pointer).
unsafe extern "C" fn c_add_get(
    t: *mut sys::tether_task,
    state: *mut c_void,
    arg: *mut c_void,
) -> sys::tether_status {
    // SAFETY: as c_add; callback only for set_result.
    unsafe {
        let n = state.cast::<u64>();
        *n += arg as u64;
        sys::tether_task_set_result(t, *n as *mut c_void, None)
    }
}
/// `*state += 1` and `arg` (a boxed `Arc<AtomicU64>`) `+= 1`.
unsafe extern "C" fn c_add_arc(
    _: *mut sys::tether_task,
    state: *mut c_void,
    arg: *mut c_void,
) -> sys::tether_status {
    // SAFETY: as c_add; arg is the Box<Arc<AtomicU64>> made by CActor::tell_arc.
    unsafe {
        *state.cast::<u64>() += 1;
        (*arg.cast::<Arc<AtomicU64>>()).fetch_add(1, Ordering::Relaxed);
    }
    sys::TETHER_OK
}
unsafe extern "C" fn c_free_arc(p: *mut c_void) {
    // SAFETY: made by CActor::tell_arc, dropped once by the library.
    drop(unsafe { Box::from_raw(p.cast::<Arc<AtomicU64>>()) });
}

/// The C API's side of the comparison: calls made with `tether_actor_call` on the SAME
/// actor the crate calls (its `as_raw` handle; its state, an `Actor<u64>`'s, is a `*mut
/// u64`). One thread, one state, one placement for both sides of a pair: what differs is
/// only the crate's own code per call.
struct CActor(sys::tether_actor);
impl CActor {
    fn tell(&self, k: u64) {
        // SAFETY: the arg is a plain number; fire and forget.
        let st = unsafe {
            sys::tether_actor_call(
                self.0,
                std::ptr::null(),
                Some(c_add),
                k as *mut c_void,
                None,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(st, sys::TETHER_OK);
    }
    fn tell_arc(&self, c: &Arc<AtomicU64>) {
        let arg = Box::into_raw(Box::new(Arc::clone(c)));
        // SAFETY: arg is freed once by c_free_arc; fire and forget.
        let st = unsafe {
            sys::tether_actor_call(
                self.0,
                std::ptr::null(),
                Some(c_add_arc),
                arg.cast(),
                Some(c_free_arc),
                std::ptr::null_mut(),
            )
        };
        assert_eq!(st, sys::TETHER_OK);
    }
    fn call(&self, k: u64) -> u64 {
        let mut f = sys::tether_future { id: 0 };
        // SAFETY: plain calls; the future is released once; the result is a number.
        unsafe {
            assert_eq!(
                sys::tether_actor_call(
                    self.0,
                    std::ptr::null(),
                    Some(c_add_get),
                    k as *mut c_void,
                    None,
                    &mut f
                ),
                sys::TETHER_OK
            );
            assert_eq!(sys::tether_future_wait(f, 60_000_000_000), sys::TETHER_OK);
            let mut s = 0;
            sys::tether_future_poll(f, &mut s);
            assert_eq!(s, sys::TETHER_SUCCEEDED);
            let mut v: *mut c_void = std::ptr::null_mut();
            assert_eq!(sys::tether_future_take_result(f, &mut v), sys::TETHER_OK);
            sys::tether_future_release(f);
            v as u64
        }
    }
}
// ---- std::sync::mpsc + a dedicated thread ------------------------------------------------
type Job = Box<dyn FnOnce(&mut u64) + Send>;
struct StdActor {
    tx: Option<mpsc::Sender<Job>>,
    thread: Option<thread::JoinHandle<()>>,
}
impl StdActor {
    fn new(cpu: i32) -> StdActor {
        let (tx, rx) = mpsc::channel::<Job>();
        let thread = thread::spawn(move || {
            pin_this_thread(cpu);
            let mut state = 0u64;
            for job in rx {
                job(&mut state);
            }
        });
        StdActor {
            tx: Some(tx),
            thread: Some(thread),
        }
    }
    fn tell(&self, f: impl FnOnce(&mut u64) + Send + 'static) {
        self.tx.as_ref().unwrap().send(Box::new(f)).unwrap();
    }
    fn call<R: Send + 'static>(&self, f: impl FnOnce(&mut u64) -> R + Send + 'static) -> R {
        let (rtx, rrx) = mpsc::sync_channel(1);
        self.tell(move |s| drop(rtx.send(f(s))));
        rrx.recv_timeout(T).unwrap()
    }
}
impl Drop for StdActor {
    fn drop(&mut self) {
        drop(self.tx.take());
        self.thread.take().unwrap().join().unwrap();
    }
}

// ---- placement ----------------------------------------------------------------------------
// A cpu_set_t of 1024 CPUs; glibc's sched_{get,set}affinity (the crate has no libc dependency).
type CpuSet = [u64; 16];
extern "C" {
    fn sched_getaffinity(pid: i32, size: usize, mask: *mut CpuSet) -> i32;
    fn sched_setaffinity(pid: i32, size: usize, mask: *const CpuSet) -> i32;
}

/// Pins the calling thread to `cpu` (-1: leaves it as it is); returns its mask before.
fn pin_this_thread(cpu: i32) -> CpuSet {
    let mut old: CpuSet = [0; 16];
    // SAFETY: the masks are live locals of the size given; pid 0 is the calling thread.
    unsafe {
        assert_eq!(
            sched_getaffinity(0, std::mem::size_of::<CpuSet>(), &mut old),
            0
        );
        if cpu >= 0 {
            let mut set: CpuSet = [0; 16];
            set[cpu as usize / 64] |= 1 << (cpu % 64);
            assert_eq!(
                sched_setaffinity(0, std::mem::size_of::<CpuSet>(), &set),
                0,
                "CPU {cpu}"
            );
        }
    }
    old
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5_000);
    let burst = rounds * 10;
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "tether {} — {REPS} repetitions; round trips: {rounds}, fire-and-forget: {burst}; loadavg {}",
        tether::version(),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let cpus = thread::available_parallelism().map_or(1, |n| n.get());
    let mut placements = vec![("unpinned", -1, -1)];
    if cpus >= 2 {
        placements.insert(0, ("same CPU", 0, 0));
        placements.insert(0, ("different CPUs", 0, 1));
    }
    println!(
        "{:<16} {:<30} {:>13} {:>9} {:>12} {:>13}",
        "placement",
        "ns per call (best)",
        "tether (Rust)",
        "C API",
        "mpsc+thread",
        "Rust / C API (median)"
    );
    for (name, caller, worker) in placements {
        let old = pin_this_thread(caller);
        run_placement(name, worker, rounds, burst);
        // SAFETY: restores the mask read above.
        unsafe { sched_setaffinity(0, std::mem::size_of::<CpuSet>(), &old) };
    }
}

fn run_placement(placement: &str, worker: i32, rounds: usize, burst: usize) {
    let executor = tether::Executor::new(
        &tether::ExecutorOptions::new()
            .name("bench-actor")
            .cpu(worker),
    )
    .unwrap();
    let rust = Actor::new(
        &ActorOptions::new().name("bench-rust").executor(&executor),
        || 0u64,
    )
    .unwrap();
    let c = CActor(rust.as_raw());
    let std_actor = StdActor::new(worker);
    let counter = Arc::new(AtomicU64::new(0));

    // Each measure: `n` operations, their total time in ns.
    let measures: [Box<dyn Fn(usize) -> f64 + '_>; 9] = [
        Box::new(|n| {
            ns(|| {
                for k in 0..n as u64 {
                    black_box(
                        rust.call(move |s: &mut u64| {
                            *s += k;
                            *s
                        })
                        .unwrap()
                        .wait_timeout(T)
                        .unwrap(),
                    );
                }
            })
        }),
        Box::new(|n| {
            ns(|| {
                for k in 0..n as u64 {
                    black_box(c.call(k));
                }
            })
        }),
        Box::new(|n| {
            ns(|| {
                for k in 0..n as u64 {
                    black_box(std_actor.call(move |s| {
                        *s += k;
                        *s
                    }));
                }
            })
        }),
        Box::new(|n| {
            ns(|| {
                for k in 0..n as u64 {
                    rust.tell(move |s: &mut u64| *s += k).unwrap();
                }
                rust.call(|_| ()).unwrap().wait_timeout(T).unwrap();
            })
        }),
        Box::new(|n| {
            ns(|| {
                for k in 0..n as u64 {
                    c.tell(k);
                }
                c.call(0);
            })
        }),
        Box::new(|n| {
            ns(|| {
                for k in 0..n as u64 {
                    std_actor.tell(move |s| *s += k);
                }
                std_actor.call(|_| ());
            })
        }),
        Box::new(|n| {
            ns(|| {
                for _ in 0..n {
                    let cc = Arc::clone(&counter);
                    rust.tell(move |s: &mut u64| {
                        *s += 1;
                        cc.fetch_add(1, Ordering::Relaxed);
                    })
                    .unwrap();
                }
                rust.call(|_| ()).unwrap().wait_timeout(T).unwrap();
            })
        }),
        Box::new(|n| {
            ns(|| {
                for _ in 0..n {
                    c.tell_arc(&counter);
                }
                c.call(0);
            })
        }),
        Box::new(|n| {
            ns(|| {
                for _ in 0..n {
                    let cc = Arc::clone(&counter);
                    std_actor.tell(move |s| {
                        *s += 1;
                        cc.fetch_add(1, Ordering::Relaxed);
                    });
                }
                std_actor.call(|_| ());
            })
        }),
    ];
    let ops = |i: usize| if i < 3 { rounds } else { burst };

    // Each repetition runs every measure in BLOCKS slices, interleaved (A B C A B C ...,
    // Rust and C of a pair taking turns to go first): a burst of load from elsewhere, or
    // the scheduler moving a thread, then falls on both sides of a pair alike. The best
    // repetition of each is kept, and the ratio of each pair per repetition.
    let mut best = [f64::INFINITY; 9];
    let mut ratios: [Vec<f64>; 3] = Default::default(); // Rust / C API, per repetition
    for _ in 0..REPS {
        let mut total = [0.0f64; 9];
        for block in 0..BLOCKS {
            let order: [usize; 9] = if block % 2 == 0 {
                [0, 1, 2, 3, 4, 5, 6, 7, 8]
            } else {
                [1, 0, 2, 4, 3, 5, 7, 6, 8]
            };
            for i in order {
                total[i] += measures[i](ops(i) / BLOCKS);
            }
        }
        for (i, v) in ratios.iter_mut().enumerate() {
            v.push(total[3 * i] / total[3 * i + 1]);
        }
        for (i, b) in best.iter_mut().enumerate() {
            *b = b.min(total[i] / (ops(i) / BLOCKS * BLOCKS) as f64);
        }
    }
    assert_eq!(
        counter.load(Ordering::Relaxed),
        (3 * REPS * (burst / BLOCKS) * BLOCKS) as u64
    );

    let rows = [
        "round trip (call + wait)",
        "fire-and-forget, u64 capture",
        "fire-and-forget, Arc capture",
    ];
    for (i, name) in rows.iter().enumerate() {
        let (r, c, s) = (best[3 * i], best[3 * i + 1], best[3 * i + 2]);
        ratios[i].sort_by(f64::total_cmp);
        let ratio = ratios[i][REPS / 2];
        println!("{placement:<16} {name:<30} {r:>13.1} {c:>9.1} {s:>12.1} {ratio:>12.2}x");
    }
    drop(measures);
    drop(rust);
    drop(executor);
}
