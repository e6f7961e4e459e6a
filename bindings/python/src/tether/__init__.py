"""tether — threads you can trust: errors never lost, state never moved.

Runner runs a target and every thread it spawns as one scope whose first error is never
lost; Actor keeps state on one pinned thread for its whole life; Graph/Compiled run a
pipeline of actor methods on the actors' own threads. See the package README.
"""

from . import _errors, _exit, _tether
from ._actor import Actor, ActorState, Stats
from ._errors import (ActorDead, Cancelled, CppException, Deadlock, Forked, Internal, InvalidArgument,
                      InvalidHandle, NoMemory, NotFound, Panic, QueueFull, Shutdown, TaskFailed, TetherError,
                      ThreadBusy, ThreadCreate, Timeout, UnknownCppException, WrongState)
from ._future import Future
from ._graph import Compiled, Graph, Node
from ._runner import Runner, Scope, State, current_scope

_tether.set_hooks(_errors.make_error, _exit.name_thread)

__version__ = _tether.version()[1]

__all__ = [
    "Actor", "ActorDead", "ActorState", "Cancelled", "Compiled", "CppException", "Deadlock", "Forked",
    "Future", "Graph", "Internal", "InvalidArgument", "InvalidHandle", "NoMemory", "Node", "NotFound",
    "Panic", "QueueFull", "Runner", "Scope", "Shutdown", "State", "Stats", "TaskFailed", "TetherError",
    "ThreadBusy", "ThreadCreate", "Timeout", "UnknownCppException", "WrongState", "current_scope",
]
