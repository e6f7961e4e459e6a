//! actor_thread_local — the demo's second scenario, in Rust.
//!
//! An actor keeps its thread. Its constructor sets a thread-local to 42; a later method
//! returns 1 + that thread-local = 43, because the constructor, every method and the
//! state's Drop all run on the same OS thread. The state is an `Rc<RefCell<_>>`, which is
//! not `Send`: it never needs to be, since it never leaves that thread.
//!
//! Run: `cargo run --example actor_thread_local`. Exits 1 if a fact does not hold.
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use tether::{Actor, ActorOptions};

thread_local! {
    static TLS: Cell<i32> = const { Cell::new(0) };
}

struct Counter {
    calls: Rc<RefCell<Vec<i32>>>,
}

impl Drop for Counter {
    fn drop(&mut self) {
        println!(
            "drop on {:?}: thread-local = {}, {} calls",
            os_thread_name(),
            TLS.with(|t| t.get()),
            self.calls.borrow().len()
        );
    }
}

fn os_thread_name() -> String {
    std::fs::read_to_string("/proc/thread-self/comm")
        .unwrap_or_default()
        .trim_end()
        .to_string()
}

fn main() {
    let actor = Actor::new(&ActorOptions::new().name("tls-actor"), || {
        TLS.with(|t| t.set(42));
        println!("constructor on {:?}: thread-local = 42", os_thread_name());
        Counter {
            calls: Rc::new(RefCell::new(Vec::new())),
        }
    })
    .expect("actor");

    let answer = actor
        .call(|c: &mut Counter| {
            let v = 1 + TLS.with(|t| t.get());
            c.calls.borrow_mut().push(v);
            (v, os_thread_name())
        })
        .expect("call")
        .wait_timeout(Duration::from_secs(5))
        .expect("answer");
    println!("method on {:?}: 1 + thread-local = {}", answer.1, answer.0);
    drop(actor); // drains, then drops Counter on its thread
    if answer != (43, "tls-actor".to_string()) {
        eprintln!("actor_thread_local: expected 43 on tls-actor, got {answer:?}");
        std::process::exit(1);
    }
}
