//! Raw declarations of the tether C API, written by hand from `include/tether/tether.h`
//! (sections 1-9, and the testing aids).
//!
//! Nothing here is safe to use on its own: see the `tether` crate for the safe API. The
//! test `tests/layout.rs` compiles a C file against the real header and compares every
//! struct's size, alignment and field offsets and every constant with this file, so the
//! two cannot drift apart.
#![allow(non_camel_case_types)]
#![no_std]

use core::ffi::{c_char, c_int, c_void};

// ---- 1. Version ------------------------------------------------------------------------
pub const TETHER_VERSION_MAJOR: u32 = 0;
pub const TETHER_VERSION_MINOR: u32 = 1;
pub const TETHER_VERSION_PATCH: u32 = 0;
pub const TETHER_VERSION: u32 =
    (TETHER_VERSION_MAJOR << 16) | (TETHER_VERSION_MINOR << 8) | TETHER_VERSION_PATCH;

// ---- 2. Handles ------------------------------------------------------------------------
macro_rules! handle {
    ($($name:ident),*) => {$(
        #[repr(C)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name {
            pub id: u64,
        }
    )*};
}
handle!(
    tether_runner,
    tether_executor,
    tether_actor,
    tether_future,
    tether_error,
    tether_graph,
    tether_compiled
);

// ---- 3. Status codes -------------------------------------------------------------------
pub type tether_status = i32;
pub const TETHER_OK: tether_status = 0;
pub const TETHER_E_INVALID_ARGUMENT: tether_status = 1;
pub const TETHER_E_INVALID_HANDLE: tether_status = 2;
pub const TETHER_E_WRONG_STATE: tether_status = 3;
pub const TETHER_E_TIMEOUT: tether_status = 4;
pub const TETHER_E_CANCELLED: tether_status = 5;
pub const TETHER_E_DEADLOCK: tether_status = 6;
pub const TETHER_E_THREAD_BUSY: tether_status = 7;
pub const TETHER_E_ACTOR_DEAD: tether_status = 8;
pub const TETHER_E_QUEUE_FULL: tether_status = 9;
pub const TETHER_E_SHUTDOWN: tether_status = 10;
pub const TETHER_E_NO_MEMORY: tether_status = 11;
pub const TETHER_E_THREAD_CREATE: tether_status = 12;
pub const TETHER_E_TASK_FAILED: tether_status = 13;
pub const TETHER_E_EXCEPTION: tether_status = 14;
pub const TETHER_E_UNKNOWN_EXCEPTION: tether_status = 15;
pub const TETHER_E_PANIC: tether_status = 16;
pub const TETHER_E_NOT_FOUND: tether_status = 17;
pub const TETHER_E_INTERNAL: tether_status = 18;
pub const TETHER_E_FORKED: tether_status = 19;

// ---- 4. Tasks, callbacks, states -------------------------------------------------------
/// Opaque; valid only inside a callback, on that callback's thread.
#[repr(C)]
pub struct tether_task {
    _private: [u8; 0],
    // Not Send, not Sync, not Unpin: it is the library's object.
    _marker: core::marker::PhantomData<(*mut u8, core::marker::PhantomPinned)>,
}

pub type tether_fn =
    unsafe extern "C" fn(task: *mut tether_task, arg: *mut c_void) -> tether_status;
pub type tether_drop_fn = unsafe extern "C" fn(p: *mut c_void);
pub type tether_notify_fn = unsafe extern "C" fn(arg: *mut c_void);

pub const TETHER_PENDING: i32 = 0;
pub const TETHER_RUNNING: i32 = 1;
pub const TETHER_SUCCEEDED: i32 = 2;
pub const TETHER_FAILED: i32 = 3;
pub const TETHER_CANCELLED: i32 = 4;

pub const TETHER_ACTOR_ALIVE: i32 = 1;
pub const TETHER_ACTOR_DEAD: i32 = 2;
pub const TETHER_ACTOR_STOPPED: i32 = 3;

pub const TETHER_STOP_DRAIN: i32 = 0;
pub const TETHER_STOP_CANCEL: i32 = 1;

// ---- 5. Runner -------------------------------------------------------------------------
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct tether_runner_options {
    pub struct_size: u32,
    pub name: *const c_char,
    pub stop_on_error: c_int,
    pub stack_size: usize,
}

// ---- 6. Executor -----------------------------------------------------------------------
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct tether_executor_options {
    pub struct_size: u32,
    pub name: *const c_char,
    pub cpu: c_int,
    pub queue_capacity: usize,
    pub stack_size: usize,
    pub idle_spin_ns: i64,
    pub manual: c_int,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct tether_executor_stats {
    pub struct_size: u32,
    pub queued: u64,
    pub completed: u64,
    pub failed: u64,
    pub cancelled: u64,
    pub rejected: u64,
    pub errors_dropped: u64,
    pub os_thread_id: u64,
}

// ---- 8. Actor --------------------------------------------------------------------------
pub type tether_ctor_fn = unsafe extern "C" fn(
    t: *mut tether_task,
    arg: *mut c_void,
    state_out: *mut *mut c_void,
) -> tether_status;
pub type tether_dtor_fn = unsafe extern "C" fn(state: *mut c_void);
pub type tether_method_fn = unsafe extern "C" fn(
    t: *mut tether_task,
    state: *mut c_void,
    arg: *mut c_void,
) -> tether_status;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct tether_group_spec {
    pub name: *const c_char,
    pub threads: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct tether_actor_options {
    pub struct_size: u32,
    pub name: *const c_char,
    pub executor: tether_executor,
    pub groups: *const tether_group_spec,
    pub group_count: usize,
    pub mailbox_capacity: usize,
}
pub type tether_actor_stats = tether_executor_stats;

// ---- 9. Compiled graphs ----------------------------------------------------------------
pub type tether_node_fn = unsafe extern "C" fn(
    t: *mut tether_task,
    state: *mut c_void,
    arg: *mut c_void,
    inputs: *const *mut c_void,
    n_inputs: usize,
    output: *mut *mut c_void,
) -> tether_status;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct tether_compile_options {
    pub struct_size: u32,
    pub channel_capacity: usize,
    pub value_drop: Option<tether_drop_fn>,
}

pub const TETHER_GRAPH_INPUT: u32 = u32::MAX;

extern "C" {
    // 1. version
    pub fn tether_version() -> u32;
    pub fn tether_version_string() -> *const c_char;

    // 3. status
    pub fn tether_status_name(status: i32) -> *const c_char;
    pub fn tether_status_describe(status: i32) -> *const c_char;
    pub fn tether_last_error_message(buf: *mut c_char, cap: usize) -> usize;

    // 4. tasks and errors
    pub fn tether_task_fail(
        t: *mut tether_task,
        user_code: i64,
        message: *const c_char,
    ) -> tether_status;
    pub fn tether_task_fail_with(
        t: *mut tether_task,
        code: i32,
        user_code: i64,
        message: *const c_char,
    ) -> tether_status;
    pub fn tether_task_set_result(
        t: *mut tether_task,
        value: *mut c_void,
        drop: Option<tether_drop_fn>,
    ) -> tether_status;
    pub fn tether_task_stop_requested(t: *const tether_task) -> c_int;
    pub fn tether_task_thread_name(t: *const tether_task) -> *const c_char;
    pub fn tether_task_runner(t: *const tether_task, out: *mut tether_runner) -> tether_status;
    pub fn tether_task_actor(t: *const tether_task, out: *mut tether_actor) -> tether_status;

    pub fn tether_error_code(e: tether_error) -> i32;
    pub fn tether_error_user_code(e: tether_error) -> i64;
    pub fn tether_error_message(e: tether_error, buf: *mut c_char, cap: usize) -> usize;
    pub fn tether_error_thread_name(e: tether_error, buf: *mut c_char, cap: usize) -> usize;
    pub fn tether_error_type_name(e: tether_error, buf: *mut c_char, cap: usize) -> usize;
    pub fn tether_error_cause(e: tether_error, out: *mut tether_error) -> tether_status;
    pub fn tether_error_release(e: tether_error) -> tether_status;

    // 5. runner
    pub fn tether_runner_options_init(o: *mut tether_runner_options);
    pub fn tether_runner_start(
        opts: *const tether_runner_options,
        target: Option<tether_fn>,
        arg: *mut c_void,
        arg_drop: Option<tether_drop_fn>,
        out: *mut tether_runner,
    ) -> tether_status;
    pub fn tether_task_spawn(
        t: *mut tether_task,
        name: *const c_char,
        f: Option<tether_fn>,
        arg: *mut c_void,
        arg_drop: Option<tether_drop_fn>,
    ) -> tether_status;
    pub fn tether_runner_report_error(
        r: tether_runner,
        code: i32,
        user_code: i64,
        message: *const c_char,
    ) -> tether_status;
    pub fn tether_runner_poll(r: tether_runner, state: *mut i32) -> tether_status;
    pub fn tether_runner_join(r: tether_runner, timeout_ns: i64) -> tether_status;
    pub fn tether_runner_join_all(r: tether_runner, timeout_ns: i64) -> tether_status;
    pub fn tether_runner_on_done(
        r: tether_runner,
        f: Option<tether_notify_fn>,
        arg: *mut c_void,
        arg_drop: Option<tether_drop_fn>,
    ) -> tether_status;
    pub fn tether_runner_error(r: tether_runner, out: *mut tether_error) -> tether_status;
    pub fn tether_runner_error_count(r: tether_runner) -> usize;
    pub fn tether_runner_error_at(
        r: tether_runner,
        i: usize,
        out: *mut tether_error,
    ) -> tether_status;
    pub fn tether_runner_take_result(r: tether_runner, out: *mut *mut c_void) -> tether_status;
    pub fn tether_runner_live_threads(r: tether_runner, out: *mut usize) -> tether_status;
    pub fn tether_runner_cancel(r: tether_runner) -> tether_status;
    pub fn tether_runner_release(r: tether_runner) -> tether_status;
    pub fn tether_runner_release_nowait(r: tether_runner) -> tether_status;

    // 6. executor
    pub fn tether_executor_options_init(o: *mut tether_executor_options);
    pub fn tether_executor_create(
        o: *const tether_executor_options,
        out: *mut tether_executor,
    ) -> tether_status;
    pub fn tether_executor_submit(
        e: tether_executor,
        f: Option<tether_fn>,
        arg: *mut c_void,
        arg_drop: Option<tether_drop_fn>,
        out: *mut tether_future,
    ) -> tether_status;
    pub fn tether_executor_submit_timeout(
        e: tether_executor,
        f: Option<tether_fn>,
        arg: *mut c_void,
        arg_drop: Option<tether_drop_fn>,
        out: *mut tether_future,
        timeout_ns: i64,
    ) -> tether_status;
    pub fn tether_executor_get_stats(
        e: tether_executor,
        out: *mut tether_executor_stats,
    ) -> tether_status;
    pub fn tether_executor_error(
        e: tether_executor,
        i: usize,
        out: *mut tether_error,
    ) -> tether_status;
    pub fn tether_executor_run(e: tether_executor, timeout_ns: i64) -> tether_status;
    pub fn tether_executor_release(e: tether_executor) -> tether_status;
    pub fn tether_executor_release_nowait(e: tether_executor) -> tether_status;

    // 7. futures
    pub fn tether_future_wait(f: tether_future, timeout_ns: i64) -> tether_status;
    pub fn tether_future_poll(f: tether_future, state: *mut i32) -> tether_status;
    pub fn tether_future_error(f: tether_future, out: *mut tether_error) -> tether_status;
    pub fn tether_future_take_result(f: tether_future, out: *mut *mut c_void) -> tether_status;
    pub fn tether_future_outputs(
        f: tether_future,
        outs: *mut *mut c_void,
        n: usize,
    ) -> tether_status;
    pub fn tether_future_cancel(f: tether_future) -> tether_status;
    pub fn tether_future_wait_any(
        fs: *const tether_future,
        n: usize,
        timeout_ns: i64,
        index: *mut usize,
    ) -> tether_status;
    pub fn tether_future_on_done(
        f: tether_future,
        func: Option<tether_notify_fn>,
        arg: *mut c_void,
        arg_drop: Option<tether_drop_fn>,
    ) -> tether_status;
    pub fn tether_future_release(f: tether_future) -> tether_status;

    // 8. actors
    pub fn tether_actor_options_init(o: *mut tether_actor_options);
    pub fn tether_actor_create(
        o: *const tether_actor_options,
        ctor: Option<tether_ctor_fn>,
        dtor: Option<tether_dtor_fn>,
        arg: *mut c_void,
        arg_drop: Option<tether_drop_fn>,
        out: *mut tether_actor,
    ) -> tether_status;
    pub fn tether_actor_call(
        a: tether_actor,
        group: *const c_char,
        m: Option<tether_method_fn>,
        arg: *mut c_void,
        arg_drop: Option<tether_drop_fn>,
        out: *mut tether_future,
    ) -> tether_status;
    pub fn tether_actor_call_timeout(
        a: tether_actor,
        group: *const c_char,
        m: Option<tether_method_fn>,
        arg: *mut c_void,
        arg_drop: Option<tether_drop_fn>,
        out: *mut tether_future,
        timeout_ns: i64,
    ) -> tether_status;
    pub fn tether_actor_call_wait(
        a: tether_actor,
        group: *const c_char,
        m: Option<tether_method_fn>,
        arg: *mut c_void,
        arg_drop: Option<tether_drop_fn>,
        timeout_ns: i64,
        result: *mut *mut c_void,
        error: *mut tether_error,
    ) -> tether_status;
    pub fn tether_actor_state(
        a: tether_actor,
        state: *mut i32,
        cause: *mut tether_error,
    ) -> tether_status;
    pub fn tether_actor_get_stats(a: tether_actor, out: *mut tether_actor_stats) -> tether_status;
    pub fn tether_actor_error(a: tether_actor, i: usize, out: *mut tether_error) -> tether_status;
    pub fn tether_actor_stop(a: tether_actor, mode: i32, timeout_ns: i64) -> tether_status;
    pub fn tether_actor_release(a: tether_actor) -> tether_status;
    pub fn tether_actor_release_nowait(a: tether_actor) -> tether_status;

    // 9. compiled graphs
    pub fn tether_graph_create(out: *mut tether_graph) -> tether_status;
    pub fn tether_graph_add_node(
        g: tether_graph,
        a: tether_actor,
        group: *const c_char,
        f: Option<tether_node_fn>,
        arg: *mut c_void,
        arg_drop: Option<tether_drop_fn>,
        node: *mut u32,
    ) -> tether_status;
    pub fn tether_graph_add_edge(g: tether_graph, from: u32, to: u32) -> tether_status;
    pub fn tether_graph_set_outputs(g: tether_graph, nodes: *const u32, n: usize) -> tether_status;
    pub fn tether_graph_error(g: tether_graph, out: *mut tether_error) -> tether_status;
    pub fn tether_graph_release(g: tether_graph) -> tether_status;
    pub fn tether_compile_options_init(o: *mut tether_compile_options);
    pub fn tether_graph_compile(
        g: tether_graph,
        o: *const tether_compile_options,
        out: *mut tether_compiled,
    ) -> tether_status;
    pub fn tether_compiled_execute(
        c: tether_compiled,
        input: *mut c_void,
        input_drop: Option<tether_drop_fn>,
        out: *mut tether_future,
    ) -> tether_status;
    pub fn tether_compiled_execute_timeout(
        c: tether_compiled,
        input: *mut c_void,
        input_drop: Option<tether_drop_fn>,
        out: *mut tether_future,
        timeout_ns: i64,
    ) -> tether_status;
    pub fn tether_compiled_release(c: tether_compiled) -> tether_status;
    pub fn tether_compiled_release_nowait(c: tether_compiled) -> tether_status;

    // testing aids
    pub fn tether_debug_fail_thread_create(successes: u32);
    pub fn tether_debug_unjoined_threads() -> usize;
}
