"""Compiled graphs: a pipeline of actor methods whose loops run on the actors' own threads."""

from __future__ import annotations

from . import _exit, _tether
from ._actor import Actor
from ._future import Future


class Node:
    """A node of a Graph (``graph.input`` is the execution's input)."""

    __slots__ = ("graph", "index")

    def __init__(self, graph: "Graph", index: int):
        self.graph = graph
        self.index = index

    def __repr__(self) -> str:
        return "<tether.Node input>" if self.index < 0 else f"<tether.Node {self.index}>"


class Graph:
    """``add(actor, fn, *inputs, group=None)`` adds a node running ``fn(state, *values)`` on
    the actor's default thread (or a single-thread group); ``compile(outputs)`` installs the
    loops. Ordinary calls to the same actors keep running between graph steps."""

    def __init__(self):
        self._kept: dict = {}
        self._h = _tether.GraphHandle(kept=self._kept)
        self.input = Node(self, -1)

    def add(self, actor: Actor, fn, /, *inputs: Node, group: str | None = None) -> Node:
        for node in inputs:
            if not isinstance(node, Node) or node.graph is not self:
                raise TypeError("inputs must be nodes of this graph (or graph.input)")
        index = self._h.add(actor._h, group, fn)
        for node in inputs:
            self._h.edge(node.index, index)
        return Node(self, index)

    def compile(self, outputs, channel_capacity: int = 8) -> "Compiled":
        """outputs: one node (execute's future gives its value) or a sequence (a tuple).
        Raises tether.ThreadBusy when a thread already hosts another compiled graph,
        tether.InvalidArgument for a cycle or a node without inputs."""
        single = isinstance(outputs, Node)
        nodes = (outputs,) if single else tuple(outputs)
        for node in nodes:
            if not isinstance(node, Node) or node.graph is not self or node.index < 0:
                raise TypeError("outputs must be nodes of this graph")
        return Compiled(self._h.compile(tuple(n.index for n in nodes), channel_capacity, single))

    def close(self) -> None:
        self._h.close()


class Compiled:
    """A compiled graph: ``execute(x)`` starts one execution and returns its Future.
    Up to channel_capacity executions are in flight; execute waits for room (GIL
    released) up to ``timeout`` (tether.Timeout after it; timeout=0: tether.QueueFull at
    once; tether.Deadlock from a thread of the graph). ``close()`` tears the loops down; executions not ended are cancelled."""

    def __init__(self, handle):
        self._h = handle
        _exit.track(self)

    def execute(self, value=None, timeout: float | None = None) -> Future:
        return self._h.execute(value, Future, timeout)

    def close(self) -> None:
        self._h.close()

    def _abandon(self) -> None:
        self._h.close()

    def __enter__(self) -> "Compiled":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()
