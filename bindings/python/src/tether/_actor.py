"""tether.Actor: state built on, and used only from, one pinned thread."""

from __future__ import annotations

import enum
from typing import NamedTuple

from . import _errors, _exit, _tether
from ._future import Future


class ActorState(enum.IntEnum):
    ALIVE = 1
    DEAD = 2
    STOPPED = 3


class Stats(NamedTuple):
    queued: int
    completed: int
    failed: int
    cancelled: int
    rejected: int
    errors_dropped: int
    os_thread_id: int


_MODES = {"drain": 0, "cancel": 1}


class Actor:
    """``factory(*args, **kwargs)`` runs ON the actor's own thread and returns its state;
    every method then runs on that same thread (or on a concurrency group's threads), in
    order, as ``fn(state, *args, **kwargs)``. thread-local state set up by the factory
    (a sqlite3 connection, a threading.local, a CUDA context) is there for every call.

    ``groups={"io": 2}`` adds named groups on threads of their own (call_in/tell_in);
    ``cpu=N`` pins the default thread to CPU N; ``mailbox_capacity`` bounds the queue
    (tether.QueueFull beyond it). The state's __del__ runs on the actor's thread at stop.

    ``idle_spin_ns``: how long the idle thread spins before it parks; None (the default)
    takes the C API's: 20 us, skipped while the thread waiting on it shares its CPU, and
    adapted to how often spinning pays. 0 parks at once (fewest CPU cycles; round trips
    from another CPU then pay a wake-up each: see the README's benchmark).
    """

    def __init__(self, factory, /, *args, name: str | None = None, groups: dict | None = None,
                 cpu: int | None = None, mailbox_capacity: int = 0, idle_spin_ns: int | None = None,
                 **kwargs):
        if idle_spin_ns is not None and idle_spin_ns < 0:
            raise ValueError("idle_spin_ns must be >= 0 (or None: the library's default)")
        self.name = name if name is not None else "tether-actor"
        self._kept: dict = {}
        self._h = _tether.create_actor(factory, args, kwargs, name, groups, -1 if cpu is None else cpu,
                                       mailbox_capacity, self._kept, -1 if idle_spin_ns is None else idle_spin_ns)
        _exit.track(self)

    def call(self, fn, /, *args, **kwargs) -> Future:
        """Queues fn(state, *args, **kwargs) on the default thread; never blocks."""
        return self._h.call(None, fn, args, kwargs, Future)

    def call_in(self, group: str, fn, /, *args, **kwargs) -> Future:
        """Like call, on the threads of concurrency group ``group``."""
        return self._h.call(group, fn, args, kwargs, Future)

    def tell(self, fn, /, *args, **kwargs) -> None:
        """Fire and forget: a failure is counted in stats and kept in errors()."""
        self._h.tell(None, fn, args, kwargs)

    def tell_in(self, group: str, fn, /, *args, **kwargs) -> None:
        self._h.tell(group, fn, args, kwargs)

    def stop(self, mode: str = "drain", timeout: float | None = None) -> None:
        """From now on calls raise tether.Shutdown. "drain" runs what is queued, "cancel"
        cancels it; then the state is dropped on the actor's thread. Waits (GIL released)
        until that has happened: tether.Timeout after ``timeout`` (the stop goes on),
        tether.Deadlock from the actor's own threads."""
        if mode not in _MODES:
            raise ValueError(f"mode must be 'drain' or 'cancel', not {mode!r}")
        if not self._h.stop(_MODES[mode], timeout):
            raise _errors.Timeout(f"actor {self.name!r} has not stopped within {timeout} s")

    @property
    def state(self) -> ActorState:
        return ActorState(self._h.state()[0])

    @property
    def cause(self) -> BaseException | None:
        """A DEAD actor's constructor error (the factory's own exception), else None."""
        return self._h.state()[1]

    @property
    def stats(self) -> Stats:
        return Stats(*self._h.stats())

    def errors(self) -> list:
        """The kept errors of fire-and-forget calls (the first 64)."""
        return self._h.errors()

    def close(self) -> None:
        """stop("drain") waited to the end, then the actor's threads joined. Idempotent."""
        self._h.close()

    def _abandon(self) -> None:
        self._h.stop(_MODES["cancel"], 0)

    def __enter__(self) -> "Actor":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()

    def __repr__(self) -> str:
        try:
            state = self.state.name
        except Exception:
            state = "CLOSED"
        return f"<tether.Actor {self.name!r} {state}>"
