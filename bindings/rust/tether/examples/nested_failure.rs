//! nested_failure — the demo's first scenario, in Rust.
//!
//! A "trainer" thread trains for 20 steps. At step 2 it uploads the checkpoint on a nested
//! thread, "upload-1", and keeps training. The upload fails (the disk is full) while
//! training still runs. The nested thread belongs to the runner's scope, so the controller
//! (main) sees the failure the moment it happens, with what failed and where; the trainer
//! is asked to stop and sees it between two steps; dropping the runner joins every thread.
//!
//! Run: `cargo run --example nested_failure`. Exits 1 if a fact of the story does not hold.
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::sleep;
use std::time::{Duration, Instant};

use tether::{Runner, RunnerOptions, State};

const TRAIN_STEPS: u32 = 20;
const UPLOAD_STEP: u32 = 2;
const STEP: Duration = Duration::from_millis(100);

fn main() {
    let start = Instant::now();
    let ms = move || start.elapsed().as_secs_f64() * 1e3;
    let stopped_at = Arc::new(AtomicU32::new(0));
    let stopped = stopped_at.clone();

    let runner = Runner::spawn(&RunnerOptions::new().name("trainer"), move |scope| {
        for step in 1..=TRAIN_STEPS {
            if scope.stop_requested() {
                println!(
                    "{:7.1} ms trainer: stop requested at step {step}, stopping",
                    ms()
                );
                stopped.store(step, Ordering::SeqCst);
                return Ok(());
            }
            if step == UPLOAD_STEP {
                println!(
                    "{:7.1} ms trainer: step {step}/{TRAIN_STEPS}, uploading on \"upload-1\"",
                    ms()
                );
                scope.spawn("upload-1", move |scope| {
                    println!(
                        "{:7.1} ms {}: uploading the checkpoint",
                        ms(),
                        scope.thread_name()
                    );
                    sleep(Duration::from_millis(20));
                    Err::<(), _>("checkpoint upload failed: disk full")
                })?;
            } else {
                println!("{:7.1} ms trainer: step {step}/{TRAIN_STEPS}", ms());
            }
            sleep(STEP);
        }
        Ok::<(), tether::Error>(())
    })
    .expect("spawn");

    // The controller: the failure is visible at once, although the trainer still runs.
    let state = runner.join(Some(Duration::from_secs(5))).expect("join");
    let live = runner.live_threads();
    let err = runner.error();
    println!(
        "{:7.1} ms main: runner is {state:?} with {live} thread(s) still running",
        ms()
    );
    if let Some(e) = &err {
        println!("{:7.1} ms main: {e}", ms());
    }
    drop(runner); // cancels and joins every thread
    let mut ok = state == State::Failed;
    ok &= err
        .as_ref()
        .is_some_and(|e| e.thread_name() == "upload-1" && e.message().contains("disk full"));
    ok &= stopped_at.load(Ordering::SeqCst) > 0;
    println!(
        "{:7.1} ms main: runner released, trainer stopped at step {}",
        ms(),
        stopped_at.load(Ordering::SeqCst)
    );
    if !ok {
        eprintln!("nested_failure: a fact of the story did not hold");
        std::process::exit(1);
    }
}
