"""tether.Actor: state on one pinned thread, groups, calls, tells, stop, stats."""

import os
import sqlite3
import threading
import time

import pytest

import tether
from conftest import T

local = threading.local()


class Store:
    """Thread-affine state: a sqlite3 connection (check_same_thread=True) and a local."""

    def __init__(self):
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute("create table kv (k text, v integer)")
        local.token = "set in the factory"
        self.thread = threading.get_ident()

    def put(self, k, v):
        self.conn.execute("insert into kv values (?, ?)", (k, v))
        return local.token, threading.get_ident()

    def count(self):
        return self.conn.execute("select count(*) from kv").fetchone()[0]


def test_factory_and_methods_share_one_thread_and_its_locals():
    with tether.Actor(Store, name="store") as a:
        outs = [a.call(Store.put, f"k{i}", i) for i in range(100)]
        results = [f.result(T) for f in outs]
        state_thread = a.call(lambda s: s.thread).result(T)
        assert all(r == ("set in the factory", state_thread) for r in results)
        assert a.call(Store.count).result(T) == 100
        assert a.call(lambda s: threading.current_thread().name).result(T) == "store"
        assert a.stats.os_thread_id > 0


def test_calls_from_many_threads_all_land_on_the_actor_thread():
    with tether.Actor(Store) as a:
        errors = []

        def caller(n):
            try:
                for i in range(50):
                    a.call(Store.put, f"{n}-{i}", i).result(T)
            except Exception as e:  # reported below
                errors.append(e)

        threads = [threading.Thread(target=caller, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(T)
        assert errors == []
        assert a.call(Store.count).result(T) == 400


def test_groups_run_on_their_own_threads_and_keep_their_locals():
    gate = threading.Event()

    def mark(state):
        if not hasattr(local, "group_mark"):
            local.group_mark = threading.get_ident()
        return local.group_mark, threading.get_ident(), threading.current_thread().name

    with tether.Actor(dict, name="svc", groups={"io": 1, "cpu": 2}) as a:
        blocked = a.call(lambda s: gate.wait(T))  # the default thread is busy...
        io = [a.call_in("io", mark).result(T) for _ in range(5)]  # ...the io group answers
        assert len({m for m, _, _ in io}) == 1 and all(m == t for m, t, _ in io)
        assert io[0][2] == "svc/io"
        assert not blocked.done()
        gate.set()
        assert blocked.result(T) is True
        with pytest.raises(tether.NotFound):
            a.call_in("gpu", mark)


def test_method_exception_fails_only_its_future_as_itself():
    with tether.Actor(dict, name="w") as a:
        bad = a.call(lambda s: 1 / 0)
        good = a.call(lambda s: "fine")
        with pytest.raises(ZeroDivisionError) as info:
            bad.result(T)
        assert info.value.tether_thread == "w"
        assert isinstance(bad.exception(T), ZeroDivisionError)
        assert good.result(T) == "fine"
        assert a.stats.failed == 1


def test_tell_failures_are_kept_and_counted():
    with tether.Actor(dict) as a:
        a.tell(lambda s: s.update(x=1))
        a.tell(lambda s, msg: (_ for _ in ()).throw(RuntimeError(msg)), "lost?")
        assert a.call(lambda s: s["x"]).result(T) == 1
        errs = a.errors()
        assert [type(e) for e in errs] == [RuntimeError] and str(errs[0]) == "lost?"
        assert a.stats.failed == 1


def test_constructor_failure_makes_the_actor_dead_with_its_cause():
    def factory():
        raise OSError("no device")

    a = tether.Actor(factory, name="gpu")
    with pytest.raises(tether.ActorDead) as info:
        a.call(lambda s: None).result(T)
    assert isinstance(info.value.__cause__, OSError)
    assert a.state is tether.ActorState.DEAD
    assert isinstance(a.cause, OSError) and str(a.cause) == "no device"
    with pytest.raises(tether.ActorDead):
        a.call(lambda s: None)
    a.close()


def test_stop_drain_runs_queued_calls_then_the_destructor_on_the_actor_thread():
    seen = []

    class State:
        def __init__(self):
            self.thread = threading.get_ident()

        def __del__(self):
            seen.append(threading.get_ident() == self.thread)

    a = tether.Actor(State)
    fs = [a.call(lambda s: time.sleep(0.001)) for _ in range(20)]
    a.stop("drain", timeout=T)
    assert all(f.done() and f.exception(0) is None for f in fs)
    assert seen == [True]
    assert a.state is tether.ActorState.STOPPED
    with pytest.raises(tether.Shutdown):
        a.call(lambda s: None)
    a.close()
    a.close()  # idempotent


def test_stop_cancel_cancels_what_is_queued():
    gate = threading.Event()
    a = tether.Actor(dict)
    saw_stop = []

    def runs_until_stopped(state):
        gate.set()
        while not tether.current_scope().stop_requested():
            time.sleep(0.001)
        saw_stop.append(True)

    running = a.call(runs_until_stopped)
    queued = [a.call(lambda s: "never") for _ in range(5)]
    assert gate.wait(T)
    a.stop("cancel", timeout=T)
    assert saw_stop == [True]
    assert running.cancelled()  # it returned normally after the stop request
    assert all(f.cancelled() for f in queued)
    with pytest.raises(tether.Cancelled):
        queued[0].result(T)
    stats = a.stats
    assert stats.cancelled == 6  # the queued ones, and the running one: it ended CANCELLED
    assert stats.completed == 0
    a.close()


def test_stop_from_the_actor_thread_is_deadlock_and_bad_mode_is_refused():
    holder = []
    a = tether.Actor(dict)
    holder.append(a)
    with pytest.raises(tether.Deadlock):
        a.call(lambda s: holder[0].stop(timeout=1)).result(T)
    with pytest.raises(ValueError):
        a.stop("later")
    a.close()


def test_bounded_mailbox_refuses_with_queue_full():
    gate = threading.Event()
    with tether.Actor(dict, mailbox_capacity=2) as a:
        first = a.call(lambda s: gate.wait(T))
        while first.running() is False and not first.done():
            time.sleep(0.001)
        a.call(lambda s: None)
        a.call(lambda s: None)
        with pytest.raises(tether.QueueFull):
            a.call(lambda s: None)
        gate.set()
        first.result(T)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
def test_cpu_pins_the_actor_thread():
    cpu = sorted(os.sched_getaffinity(0))[-1]
    with tether.Actor(dict, cpu=cpu) as a:
        assert a.call(lambda s: os.sched_getaffinity(0)).result(T) == {cpu}
    with pytest.raises(tether.InvalidArgument):
        tether.Actor(dict, cpu=4096)


def test_bad_group_specs_are_refused():
    with pytest.raises(tether.InvalidArgument):
        tether.Actor(dict, groups={"io": 0})
    with pytest.raises(TypeError):
        tether.Actor(dict, groups={"io": "two"})
    with pytest.raises(TypeError):
        tether.Actor(dict, groups=["io"])


def test_idle_spin_default_zero_or_more_answer_and_negative_is_refused():
    # None (the default) takes the library's adaptive spin; 0 parks at once; both answer.
    for spin in (None, 0, 50_000):
        a = tether.Actor(dict, idle_spin_ns=spin)
        assert a.call(lambda s: 42).result(T) == 42
        a.close()
    with pytest.raises(ValueError, match="idle_spin_ns"):
        tether.Actor(dict, idle_spin_ns=-1)


def test_closed_actor_is_refused():
    a = tether.Actor(dict)
    a.close()
    with pytest.raises(ValueError, match="closed"):
        a.call(lambda s: None)
