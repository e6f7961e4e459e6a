"""tether.Runner: values, errors from any thread of the scope, cancel, context manager."""

import threading
import time
import traceback

import pytest

import tether
from conftest import T


class UploadError(Exception):
    pass


def failing_upload(delay, text):
    time.sleep(delay)
    raise UploadError(text)


def test_join_returns_the_target_value_and_args_reach_it():
    r = tether.Runner(lambda scope, a, b=0: a + b, 2, b=3, name="adder")
    assert r.join(T) == 5
    assert r.join(T) == 5  # a second join gives the same value
    assert r.poll() is tether.State.SUCCEEDED
    assert r.errors() == []
    r.close()


def test_target_runs_on_a_thread_named_as_asked():
    r = tether.Runner(lambda scope: (threading.current_thread().name, scope.thread_name), name="trainer")
    assert r.join(T) == ("trainer", "trainer")


def test_nested_exception_comes_back_as_itself_with_thread_and_traceback():
    def train(scope):
        scope.spawn("upload-1", failing_upload, 0.01, "disk full")
        while not scope.stop_requested():
            time.sleep(0.001)
        return "not reached"

    r = tether.Runner(train, name="trainer")
    with pytest.raises(UploadError, match="disk full") as info:
        r.join(T)
    err = info.value
    assert type(err) is UploadError
    assert err.tether_thread == "upload-1"
    assert "raised in tether thread 'upload-1'" in err.__notes__
    frames = [f.name for f in traceback.extract_tb(err.__traceback__)]
    assert "failing_upload" in frames  # the original frames, where it was raised
    r.join_all(T)
    assert r.poll() is tether.State.FAILED
    assert [type(e) for e in r.errors()] == [UploadError]
    r.close()


def test_spawn_from_a_nested_thread_through_current_scope():
    def level2():
        raise KeyError("deep")

    def level1():
        tether.current_scope().spawn("level-2", level2)

    r = tether.Runner(lambda scope: scope.spawn("level-1", level1))
    with pytest.raises(KeyError) as info:
        r.join(T)
    assert info.value.tether_thread == "level-2"


def test_every_error_is_kept_in_order_without_stop_on_error():
    def train(scope):
        scope.spawn("a", failing_upload, 0, "first")
        time.sleep(0.05)
        scope.spawn("b", failing_upload, 0, "second")

    r = tether.Runner(train, stop_on_error=False)
    with pytest.raises(UploadError, match="first"):
        r.join(T)
    r.join_all(T)
    assert [str(e) for e in r.errors()] == ["first", "second"]


def test_target_returning_does_not_end_the_scope_while_nested_threads_run():
    gate = threading.Event()
    r = tether.Runner(lambda scope: scope.spawn("worker", gate.wait, T))
    with pytest.raises(tether.Timeout):
        r.join(0.05)
    assert r.poll() is tether.State.RUNNING
    assert r.live_threads >= 1
    gate.set()
    assert r.join(T) is None


def test_cancel_makes_join_raise_cancelled():
    started = threading.Event()

    def loop(scope):
        started.set()
        while not scope.stop_requested():
            time.sleep(0.001)

    r = tether.Runner(loop)
    assert started.wait(T)
    r.cancel()
    with pytest.raises(tether.Cancelled) as info:
        r.join(T)
    assert info.value.code == 5
    assert r.poll() is tether.State.CANCELLED


def test_join_from_inside_the_scope_is_deadlock():
    holder = []
    ready = threading.Event()

    def target(scope):
        ready.wait(T)
        return holder[0].join(1)

    r = tether.Runner(target)
    holder.append(r)
    ready.set()
    with pytest.raises(tether.Deadlock):
        r.join(T)


def test_context_manager_cancels_and_joins_every_thread():
    observed = []

    def loop(scope):
        scope.spawn("helper", lambda: observed.append("helper ran"))
        while not scope.stop_requested():
            time.sleep(0.001)
        observed.append("stopped")

    with tether.Runner(loop) as r:
        time.sleep(0.01)
    assert "stopped" in observed and "helper ran" in observed
    with pytest.raises(ValueError, match="closed"):
        r.poll()


def test_context_manager_raises_a_failure_nobody_observed():
    with pytest.raises(UploadError, match="lost?"):
        with tether.Runner(lambda scope: failing_upload(0, "lost?")) as r:
            r.join_all(T)


def test_scope_used_after_its_callback_is_refused():
    r = tether.Runner(lambda scope: scope)
    scope = r.join(T)
    with pytest.raises(RuntimeError, match="outside the callback"):
        scope.spawn("late", print)
    with pytest.raises(RuntimeError):
        scope.stop_requested()


def test_bad_input_gets_a_clear_error():
    with pytest.raises(tether.InvalidArgument, match="name"):
        tether.Runner(lambda scope: None, name="")
    with pytest.raises(TypeError):
        tether.Runner(lambda scope: None, name=3)

    def bad_spawn(scope):
        scope.spawn("", print)

    with pytest.raises(tether.InvalidArgument):
        tether.Runner(bad_spawn).join(T)
    with pytest.raises(ValueError, match="timeout"):
        tether.Runner(lambda scope: None).join(-1)


def test_thread_create_refused_is_thread_create():
    tether._tether.debug_fail_thread_create(0)
    try:
        with pytest.raises(tether.ThreadCreate):
            tether.Runner(lambda scope: None)
    finally:
        tether._tether.debug_fail_thread_create(2**32 - 1)


def test_join_releases_the_gil():
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    gate = threading.Event()
    r = tether.Runner(lambda scope: gate.wait(T))
    t.start()
    threading.Timer(0.2, gate.set).start()
    r.join(T)
    stop.set()
    t.join(T)
    assert len(ticks) > 20  # the ticker ran while the main thread was in join
