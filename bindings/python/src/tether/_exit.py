"""Interpreter exit with live runners and actors: neither a hang nor a crash.

At exit (an atexit hook, while the interpreter is intact) every live runner is cancelled,
every live actor stopped with cancel and every compiled graph torn down; then the
extension closes the door to Python (no library thread takes the GIL afterwards, which
Python 3.11 would answer with pthread_exit, aborting through the library), waits for the
threads still running Python callbacks, and after a grace period interrupts them with
SystemExit. A callback stuck in C code past the bound is reported and the process ends
with os._exit: the one way to leave that neither hangs nor crashes.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import weakref

from . import _tether

GRACE_S = 0.5  # before threads still in Python callbacks get SystemExit
BOUND_S = 5.0  # before giving up on them

_live: "weakref.WeakSet" = weakref.WeakSet()


def track(obj) -> None:
    """obj._abandon() is called at exit while obj lives."""
    _live.add(obj)


def name_thread(name: str | None) -> None:
    """Called by the extension on a library thread: first callback (name) and exit (None)."""
    if name is None:
        threading._active.pop(threading.get_ident(), None)  # its _DummyThread
        return
    threading.current_thread().name = name


def _at_exit() -> None:
    for obj in list(_live):
        try:
            obj._abandon()
        except Exception:  # exit goes on whatever one object says
            pass
    still_inside = _tether.shutdown(GRACE_S, BOUND_S)
    if still_inside:
        sys.stderr.write(f"tether: {still_inside} thread(s) still in Python callbacks {BOUND_S} s after exit "
                         "began; leaving without finalizing the interpreter\n")
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(70)


atexit.register(_at_exit)
os.register_at_fork(after_in_child=_tether.after_fork_child)
