"""tether.Future: concurrent.futures compatible, awaitable, Deadlock instead of a hang."""

import asyncio
import concurrent.futures
import threading

import pytest

import tether
from conftest import T


@pytest.fixture
def actor():
    with tether.Actor(dict, name="fut") as a:
        yield a


def test_is_a_concurrent_future_usable_by_wait_and_as_completed(actor):
    fs = [actor.call(lambda s, i: i * i, i) for i in range(10)]
    assert all(isinstance(f, concurrent.futures.Future) for f in fs)
    done, not_done = concurrent.futures.wait(fs, timeout=T)
    assert not not_done
    assert sorted(f.result() for f in concurrent.futures.as_completed(fs, timeout=T)) == [i * i for i in range(10)]


def test_done_callbacks_run_once_with_the_settled_future(actor):
    seen = []
    ran = threading.Event()
    f = actor.call(lambda s: "v")

    def cb(fut):
        seen.append(fut.result(0))
        ran.set()

    f.add_done_callback(cb)
    assert ran.wait(T)
    f.add_done_callback(lambda fut: seen.append("late"))  # already done: runs at once
    assert seen == ["v", "late"]


def test_awaitable_from_asyncio(actor):
    async def main():
        a = await actor.call(lambda s: 1)
        b, c = await asyncio.gather(actor.call(lambda s: 2), actor.call(lambda s: 3))
        with pytest.raises(KeyError):
            await actor.call(lambda s: s["missing"])
        return a + b + c

    assert asyncio.run(asyncio.wait_for(main(), T)) == 6


def test_result_timeout_is_tether_timeout_and_a_timeout_error(actor):
    gate = threading.Event()
    f = actor.call(lambda s: gate.wait(T))
    with pytest.raises(TimeoutError):
        f.result(0.05)
    with pytest.raises(tether.Timeout):
        f.exception(0)
    assert f.running()
    gate.set()
    assert f.result(T) is True


def test_cancel_pending_never_runs_it(actor):
    gate = threading.Event()
    ran = []
    blocker = actor.call(lambda s: gate.wait(T))
    pending = actor.call(lambda s: ran.append(1))
    assert pending.cancel() is True
    assert pending.cancelled()
    with pytest.raises(concurrent.futures.CancelledError):
        pending.result(T)
    gate.set()
    blocker.result(T)
    actor.call(lambda s: None).result(T)
    assert ran == []


def test_waiting_on_own_actor_from_its_thread_is_deadlock(actor):
    def waits_on_itself(state):
        return actor.call(lambda s: "behind me").result(T)

    with pytest.raises(tether.Deadlock):
        actor.call(waits_on_itself).result(T)


def test_waiting_on_another_group_from_the_actor_thread_works():
    with tether.Actor(dict, groups={"io": 1}) as a:
        holder = [a]
        assert a.call(lambda s: holder[0].call_in("io", lambda s: "io answers").result(T)).result(T) == "io answers"


def test_users_cannot_settle_it(actor):
    f = actor.call(lambda s: None)
    with pytest.raises(tether.WrongState):
        f.set_result(1)
    f.result(T)
