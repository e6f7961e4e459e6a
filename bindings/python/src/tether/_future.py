"""tether.Future: a concurrent.futures.Future over a tether future, awaitable from asyncio."""

from __future__ import annotations

import concurrent.futures
from concurrent.futures._base import CANCELLED, CANCELLED_AND_NOTIFIED, FINISHED

from . import _errors

_Base = concurrent.futures.Future
_CANCELLED = (CANCELLED, CANCELLED_AND_NOTIFIED)


class Future(_Base):
    """The outcome of an actor call or a graph execution.

    It is a concurrent.futures.Future (wait(), as_completed(), add_done_callback() work; done
    callbacks run on the tether thread that completed the work, as ThreadPoolExecutor runs
    them on its worker), and ``await future`` works in asyncio.

    ``result()`` and ``exception()`` wait inside the library with the GIL released, so a
    wait that could only be satisfied by the calling thread itself (an actor method waiting
    on a call queued behind it to the same actor) raises tether.Deadlock instead of
    hanging, and Ctrl-C interrupts a wait on the main thread.
    """

    _h = None  # the FutureHandle, set by the extension

    # Called by the extension, under the GIL, exactly once.
    def _tether_settle(self, kind: int, payload):
        if kind == 0:
            _Base.set_result(self, payload)
        elif kind == 1:
            _Base.set_exception(self, payload)
        else:
            self._tether_cancel_error = payload
            _Base.cancel(self)

    def _wait(self, timeout):
        # _state is read without the condition: once FINISHED or CANCELLED it never
        # changes, and the fields it guards are set before it (concurrent.futures' own
        # invariant); anything else goes through the base class under the lock.
        if self._state != FINISHED and self._state not in _CANCELLED and not self._h.wait(timeout):
            raise _errors.Timeout(f"the future did not complete within {timeout} s")

    def result(self, timeout: float | None = None):
        self._wait(timeout)
        if self._state == FINISHED and self._exception is None:
            return self._result  # the common case, without three trips through the lock
        if self._state in _CANCELLED:
            raise self._cancelled_error()
        return _Base.result(self, None)  # settled, or being settled right now

    def exception(self, timeout: float | None = None):
        self._wait(timeout)
        if _Base.cancelled(self):
            raise self._cancelled_error()
        return _Base.exception(self, None)

    def cancel(self) -> bool:
        """Pending work never runs (True); running work is asked to stop (False, as
        concurrent.futures says for running work), and may still end cancelled."""
        if not _Base.done(self):
            self._h.cancel()
        return _Base.cancelled(self)

    def running(self) -> bool:
        return not _Base.done(self) and self._h.poll() == 1

    def _cancelled_error(self) -> BaseException:
        err = getattr(self, "_tether_cancel_error", None)
        return err if isinstance(err, BaseException) else _errors.Cancelled("the work was cancelled")

    def __await__(self):
        import asyncio

        return asyncio.wrap_future(self).__await__()

    def set_result(self, result):  # the library settles it; a user must not
        raise _errors.WrongState("a tether.Future is settled by its work")

    def set_exception(self, exception):
        raise _errors.WrongState("a tether.Future is settled by its work")

    def set_running_or_notify_cancel(self):
        raise _errors.WrongState("a tether.Future is settled by its work")
