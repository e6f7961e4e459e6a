"""One exception class per tether status code, all under TetherError.

A Python exception raised by user code on a tether thread does not become one of these:
it comes back as itself (same type, message and traceback), with a note and a
``tether_thread`` attribute naming the thread it was raised on.
"""

from __future__ import annotations

import concurrent.futures


class TetherError(Exception):
    """A tether status: ``code`` (int), ``status`` ("TETHER_E_TIMEOUT"), ``thread_name``
    (where the error was raised, "" for a refused call), ``user_code`` and ``type_name``
    (the C++ exception type, for errors from C++ code)."""

    code = -1
    status = ""

    def __init__(self, message: str = "", *, thread_name: str = "", user_code: int = 0, type_name: str = ""):
        super().__init__(message)
        self.thread_name = thread_name
        self.user_code = user_code
        self.type_name = type_name

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


def _status(code: int, name: str, doc: str, *bases: type) -> type:
    cls = type(name, (TetherError, *bases), {"__doc__": doc, "code": code, "__module__": "tether"})
    return cls


InvalidArgument = _status(1, "InvalidArgument", "A bad argument (also a ValueError).", ValueError)
InvalidHandle = _status(2, "InvalidHandle", "The object was closed or released.")
WrongState = _status(3, "WrongState", "The object is not in a state that allows this call.")
Timeout = _status(4, "Timeout", "The timeout passed first (also a TimeoutError).", TimeoutError)
Cancelled = _status(5, "Cancelled", "Cancelled before or while it ran (also a CancelledError).",
                    concurrent.futures.CancelledError)
Deadlock = _status(6, "Deadlock", "The wait would wait on the calling thread itself.")
ThreadBusy = _status(7, "ThreadBusy", "The thread already hosts another compiled graph's loop.")
ActorDead = _status(8, "ActorDead", "The actor's constructor failed; __cause__ is its error.")
QueueFull = _status(9, "QueueFull", "The bounded mailbox or channel is full.")
Shutdown = _status(10, "Shutdown", "The actor or executor is stopping or stopped.")
NoMemory = _status(11, "NoMemory", "Out of memory (also a MemoryError).", MemoryError)
ThreadCreate = _status(12, "ThreadCreate", "The operating system refused to create a thread.")
TaskFailed = _status(13, "TaskFailed", "User code reported failure with a code.")
CppException = _status(14, "CppException", "User C++ code threw a std::exception.")
UnknownCppException = _status(15, "UnknownCppException", "User C++ code threw something else.")
Panic = _status(16, "Panic", "A binding's user code failed (a Python exception that could not be kept).")
NotFound = _status(17, "NotFound", "No such concurrency group or thread name (also a LookupError).", LookupError)
Internal = _status(18, "Internal", "Internal error in the tether library.")
Forked = _status(19, "Forked", "A tether object was used in a child process after fork().")

BY_CODE = {cls.code: cls for cls in (
    InvalidArgument, InvalidHandle, WrongState, Timeout, Cancelled, Deadlock, ThreadBusy, ActorDead,
    QueueFull, Shutdown, NoMemory, ThreadCreate, TaskFailed, CppException, UnknownCppException, Panic,
    NotFound, Internal, Forked)}


def make_error(code: int, message: str, thread_name: str, user_code: int, type_name: str,
               cause: BaseException | None) -> TetherError:
    """Called by the extension for every status and tether_error it turns into Python."""
    cls = BY_CODE.get(code, TetherError)
    exc = cls(message, thread_name=thread_name, user_code=user_code, type_name=type_name)
    if cls is TetherError:
        exc.code = code
    if cause is not None:
        exc.__cause__ = cause
    return exc
