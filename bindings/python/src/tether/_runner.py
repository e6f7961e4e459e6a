"""tether.Runner: a target on a thread, and every thread it spawns, as one scope."""

from __future__ import annotations

import enum

from . import _errors, _exit, _tether

Scope = _tether.Scope
# Scope (the C type): see its docstring; handed to a target, and tether.current_scope().


class State(enum.IntEnum):
    PENDING = 0
    RUNNING = 1
    SUCCEEDED = 2
    FAILED = 3
    CANCELLED = 4


_UNSET = object()


class Runner:
    """Runs ``target(scope, *args, **kwargs)`` on a new thread named ``name``.

    Threads started with ``scope.spawn`` belong to the same scope: the first error of any
    of them fails the runner at once (and, with stop_on_error, asks the others to stop).
    ``join()`` returns the target's value or raises that first error — a Python exception
    comes back as itself, with its traceback and a note naming its thread.

    As a context manager, exit cancels, waits for every thread, and raises a failure that
    nobody observed (errors are never lost).
    """

    def __init__(self, target, /, *args, name: str | None = None, stop_on_error: bool = True, **kwargs):
        self.name = name if name is not None else "tether-run"
        self._kept: dict = {}
        self._h = _tether.start_runner(target, args, kwargs, name, stop_on_error, self._kept)
        self._value = _UNSET
        self._observed = False
        _exit.track(self)

    def join(self, timeout: float | None = None):
        """The target's value, or raises the first error. Returns at the first error even
        while other threads still run; raises tether.Timeout when it has not ended in time,
        tether.Deadlock from a thread of the scope itself."""
        if not self._h.join(timeout):
            raise _errors.Timeout(f"runner {self.name!r} has not ended within {timeout} s")
        return self._outcome()

    def join_all(self, timeout: float | None = None) -> None:
        """Waits until every thread of the scope has ended (it does not raise the outcome)."""
        if not self._h.join_all(timeout):
            raise _errors.Timeout(f"runner {self.name!r}: threads still running after {timeout} s")

    def _outcome(self):
        self._observed = True
        state = self._h.poll()
        if state == State.SUCCEEDED:
            if self._value is _UNSET:
                self._value = self._h.take_result()
            return self._value
        raise self._h.error()

    def poll(self) -> State:
        state = State(self._h.poll())
        if state >= State.SUCCEEDED:
            self._observed = True
        return state

    def done(self) -> bool:
        return self.poll() >= State.SUCCEEDED

    def errors(self) -> list:
        """Every error of the scope, in order (complete once every thread has ended)."""
        self._observed = True
        return self._h.errors()

    def cancel(self) -> None:
        """Asks every thread to stop (cooperative: scope.stop_requested())."""
        self._h.cancel()

    @property
    def live_threads(self) -> int:
        return self._h.live_threads()

    def close(self) -> None:
        """Cancels, waits for every thread (GIL released), frees. Idempotent."""
        self._h.close()

    def _abandon(self) -> None:
        self._h.cancel()

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        state = self._h.poll()
        self._h.cancel()
        self._h.join_all(None)
        unobserved_failure = (exc_type is None and not self._observed and
                              (state == State.FAILED or self._h.poll() == State.FAILED))
        try:
            if unobserved_failure:
                self._outcome()
        finally:
            self.close()

    def __repr__(self) -> str:
        try:
            state = State(self._h.poll()).name
        except Exception:
            state = "CLOSED"
        return f"<tether.Runner {self.name!r} {state}>"


def current_scope():
    """The Scope of the tether callback running on this thread, or None."""
    return _tether.current_scope()
