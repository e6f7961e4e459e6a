//! The layout test: compiles tests/layout.c against the real tether.h with the system C
//! compiler (`$CC`, else `cc`), runs it, and compares every struct's size, alignment, field
//! offsets and field sizes, and every constant, with the hand-written declarations in
//! src/lib.rs. A line on either side that the other lacks fails the test too, so a field
//! or constant added to one side only is caught.
use std::collections::BTreeMap;
use std::mem::{align_of, offset_of, size_of};
use std::path::PathBuf;
use std::process::Command;

use tether_sys::*;

fn field_size<T, F>(_: fn(&T) -> &F) -> usize {
    size_of::<F>()
}

macro_rules! rust_layout {
    ($m:ident; structs: [$($s:ident { $($f:ident),* }),* $(,)?]; consts: [$($c:ident),* $(,)?] $(;)?) => {
        $(
            $m.insert(format!("sizeof {}", stringify!($s)), size_of::<$s>() as i64);
            $m.insert(format!("alignof {}", stringify!($s)), align_of::<$s>() as i64);
            $(
                $m.insert(format!("offsetof {}.{}", stringify!($s), stringify!($f)), offset_of!($s, $f) as i64);
                $m.insert(format!("fieldsize {}.{}", stringify!($s), stringify!($f)),
                          field_size(|x: &$s| &x.$f) as i64);
            )*
        )*
        $( $m.insert(format!("const {}", stringify!($c)), $c as i64); )*
    };
}

fn rust_side() -> BTreeMap<String, i64> {
    let mut m = BTreeMap::new();
    rust_layout!(m;
        structs: [
            tether_runner { id }, tether_executor { id }, tether_actor { id },
            tether_future { id }, tether_error { id }, tether_graph { id }, tether_compiled { id },
            tether_runner_options { struct_size, name, stop_on_error, stack_size },
            tether_executor_options { struct_size, name, cpu, queue_capacity, stack_size,
                                      idle_spin_ns, manual },
            tether_executor_stats { struct_size, queued, completed, failed, cancelled, rejected,
                                    errors_dropped, os_thread_id },
            tether_actor_stats { },
            tether_group_spec { name, threads },
            tether_actor_options { struct_size, name, executor, groups, group_count,
                                   mailbox_capacity },
            tether_compile_options { struct_size, channel_capacity, value_drop },
        ];
        consts: [
            TETHER_VERSION_MAJOR, TETHER_VERSION_MINOR, TETHER_VERSION_PATCH, TETHER_VERSION,
            TETHER_OK, TETHER_E_INVALID_ARGUMENT, TETHER_E_INVALID_HANDLE, TETHER_E_WRONG_STATE,
            TETHER_E_TIMEOUT, TETHER_E_CANCELLED, TETHER_E_DEADLOCK, TETHER_E_THREAD_BUSY,
            TETHER_E_ACTOR_DEAD, TETHER_E_QUEUE_FULL, TETHER_E_SHUTDOWN, TETHER_E_NO_MEMORY,
            TETHER_E_THREAD_CREATE, TETHER_E_TASK_FAILED, TETHER_E_EXCEPTION,
            TETHER_E_UNKNOWN_EXCEPTION, TETHER_E_PANIC, TETHER_E_NOT_FOUND, TETHER_E_INTERNAL,
            TETHER_E_FORKED,
            TETHER_PENDING, TETHER_RUNNING, TETHER_SUCCEEDED, TETHER_FAILED, TETHER_CANCELLED,
            TETHER_ACTOR_ALIVE, TETHER_ACTOR_DEAD, TETHER_ACTOR_STOPPED,
            TETHER_STOP_DRAIN, TETHER_STOP_CANCEL,
            TETHER_GRAPH_INPUT,
        ];
    );
    m.insert(
        "sizeof tether_status".into(),
        size_of::<tether_status>() as i64,
    );
    m
}

fn c_side() -> BTreeMap<String, i64> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let include = env!("TETHER_INCLUDE_DIR");
    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let exe = out_dir.join("tether_layout_probe");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-I", include])
        .arg(manifest.join("tests/layout.c"))
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}`: {e}"));
    assert!(
        status.success(),
        "compiling tests/layout.c against {include} failed"
    );
    let out = Command::new(&exe)
        .output()
        .expect("running the layout probe");
    assert!(out.status.success(), "the layout probe failed");
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_string(), v.parse::<i64>().unwrap())
        })
        .collect()
}

#[test]
fn rust_declarations_match_the_c_header() {
    let c = c_side();
    let rust = rust_side();
    assert!(c.len() > 100, "the probe printed too little: {c:?}");
    let mut problems = Vec::new();
    for (k, v) in &c {
        match rust.get(k) {
            Some(r) if r == v => {}
            Some(r) => problems.push(format!("{k}: C {v}, Rust {r}")),
            None => problems.push(format!("{k}: in C ({v}), missing on the Rust side")),
        }
    }
    for k in rust.keys().filter(|k| !c.contains_key(*k)) {
        problems.push(format!("{k}: on the Rust side, missing in C"));
    }
    assert!(
        problems.is_empty(),
        "layout drift:\n{}",
        problems.join("\n")
    );
}

#[test]
fn library_version_matches_the_header() {
    // SAFETY: both are pure accessors with no preconditions.
    let v = unsafe { tether_version() };
    assert_eq!(v, TETHER_VERSION, "header/library version mismatch");
    let s = unsafe { std::ffi::CStr::from_ptr(tether_version_string()) };
    assert_eq!(
        s.to_str().unwrap(),
        format!("{TETHER_VERSION_MAJOR}.{TETHER_VERSION_MINOR}.{TETHER_VERSION_PATCH}")
    );
}
