//! The C functions that take an `arg` or a result value, declared a second time with that
//! pointer typed `MaybeUninit<*mut c_void>`.
//!
//! Why: a small closure or value travels IN the pointer itself (`util::pack`), with no
//! allocation. Its bytes may include padding, and Rust may not make a `*mut c_void` out of
//! bytes that are not all initialised; a `MaybeUninit<*mut c_void>` may hold any bytes.
//! `MaybeUninit<T>` is guaranteed to have the same size, alignment and ABI as `T`, so these
//! are the very functions `tether-sys` declares, called with the same machine arguments;
//! the library only stores the pointer and hands it back unchanged, never reads through it
//! or branches on it. Everything else goes through `tether_sys`.
use std::ffi::{c_char, c_void};
use std::mem::MaybeUninit;

use tether_sys::{
    tether_actor, tether_actor_options, tether_ctor_fn, tether_drop_fn, tether_dtor_fn,
    tether_error, tether_executor, tether_fn, tether_future, tether_method_fn, tether_notify_fn,
    tether_runner, tether_runner_options, tether_status, tether_task,
};

/// An `arg` or a result value as it crosses into C: a pointer, or up to a pointer's worth
/// of a small value's bytes.
pub(crate) type RawArg = MaybeUninit<*mut c_void>;

extern "C" {
    #[link_name = "tether_runner_start"]
    pub(crate) fn runner_start(
        opts: *const tether_runner_options,
        target: Option<tether_fn>,
        arg: RawArg,
        arg_drop: Option<tether_drop_fn>,
        out: *mut tether_runner,
    ) -> tether_status;

    #[link_name = "tether_task_spawn"]
    pub(crate) fn task_spawn(
        t: *mut tether_task,
        name: *const c_char,
        f: Option<tether_fn>,
        arg: RawArg,
        arg_drop: Option<tether_drop_fn>,
    ) -> tether_status;

    #[link_name = "tether_runner_on_done"]
    pub(crate) fn runner_on_done(
        r: tether_runner,
        f: Option<tether_notify_fn>,
        arg: RawArg,
        arg_drop: Option<tether_drop_fn>,
    ) -> tether_status;

    #[link_name = "tether_executor_submit"]
    pub(crate) fn executor_submit(
        e: tether_executor,
        f: Option<tether_fn>,
        arg: RawArg,
        arg_drop: Option<tether_drop_fn>,
        out: *mut tether_future,
    ) -> tether_status;

    #[link_name = "tether_executor_submit_timeout"]
    pub(crate) fn executor_submit_timeout(
        e: tether_executor,
        f: Option<tether_fn>,
        arg: RawArg,
        arg_drop: Option<tether_drop_fn>,
        out: *mut tether_future,
        timeout_ns: i64,
    ) -> tether_status;

    #[link_name = "tether_future_on_done"]
    pub(crate) fn future_on_done(
        f: tether_future,
        func: Option<tether_notify_fn>,
        arg: RawArg,
        arg_drop: Option<tether_drop_fn>,
    ) -> tether_status;

    #[link_name = "tether_actor_create"]
    pub(crate) fn actor_create(
        o: *const tether_actor_options,
        ctor: Option<tether_ctor_fn>,
        dtor: Option<tether_dtor_fn>,
        arg: RawArg,
        arg_drop: Option<tether_drop_fn>,
        out: *mut tether_actor,
    ) -> tether_status;

    #[link_name = "tether_actor_call"]
    pub(crate) fn actor_call(
        a: tether_actor,
        group: *const c_char,
        m: Option<tether_method_fn>,
        arg: RawArg,
        arg_drop: Option<tether_drop_fn>,
        out: *mut tether_future,
    ) -> tether_status;

    #[link_name = "tether_actor_call_wait"]
    pub(crate) fn actor_call_wait(
        a: tether_actor,
        group: *const c_char,
        m: Option<tether_method_fn>,
        arg: RawArg,
        arg_drop: Option<tether_drop_fn>,
        timeout_ns: i64,
        result: *mut *mut c_void,
        error: *mut tether_error,
    ) -> tether_status;

    #[link_name = "tether_actor_call_timeout"]
    pub(crate) fn actor_call_timeout(
        a: tether_actor,
        group: *const c_char,
        m: Option<tether_method_fn>,
        arg: RawArg,
        arg_drop: Option<tether_drop_fn>,
        out: *mut tether_future,
        timeout_ns: i64,
    ) -> tether_status;

    #[link_name = "tether_task_set_result"]
    pub(crate) fn task_set_result(
        t: *mut tether_task,
        value: RawArg,
        drop: Option<tether_drop_fn>,
    ) -> tether_status;
}
