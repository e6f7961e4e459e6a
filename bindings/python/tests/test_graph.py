"""Compiled graphs: the seed's pipeline on two actors' own threads, ordinary calls between steps."""

import threading

import pytest

import tether
from conftest import T

local = threading.local()


class Worker:
    def __init__(self, rank):
        self.rank = rank
        self.logs = []
        local.rank = rank  # thread-affine: graph steps must see it

    def forward(self, x):
        self.logs.append(f"FWD rank-{self.rank}")
        return x + 1 + 0 * local.rank

    def backward(self, g):
        self.logs.append(f"BWD rank-{self.rank}")
        return g * 2 + 0 * local.rank


@pytest.fixture
def workers():
    w0 = tether.Actor(Worker, 0, name="worker-0")
    w1 = tether.Actor(Worker, 1, name="worker-1")
    yield w0, w1
    w0.close()
    w1.close()


def pipeline(w0, w1, capacity=8):
    g = tether.Graph()
    f0 = g.add(w0, Worker.forward, g.input)
    f1 = g.add(w1, Worker.forward, f0)
    b1 = g.add(w1, Worker.backward, f1)
    b0 = g.add(w0, Worker.backward, b1)
    return g, g.compile(b0, channel_capacity=capacity)


def test_seed_pipeline_and_ordinary_calls_keep_answering(workers):
    w0, w1 = workers
    g, c = pipeline(w0, w1)
    with c:
        futures = [c.execute(x) for x in range(3)]
        assert [f.result(T) for f in futures] == [(x + 2) * 4 for x in range(3)]
        assert c.execute(10).result(T) == 48
        # ordinary calls still answer (executions are pipelined: steps of batches interleave)
        assert w0.call(lambda s: sorted(set(s.logs))).result(T) == ["BWD rank-0", "FWD rank-0"]
        assert w0.call(lambda s: len(s.logs)).result(T) == 8
        assert w1.call(lambda s: len(s.logs)).result(T) == 8


def test_many_outputs_come_back_as_a_tuple(workers):
    w0, w1 = workers
    g = tether.Graph()
    a = g.add(w0, lambda s, x: x + 1, g.input)
    b = g.add(w1, lambda s, x, y: (x, y), g.input, a)
    with g.compile([a, b]) as c:
        assert c.execute(1).result(T) == (2, (1, 2))


def test_failing_node_raises_its_own_exception_and_later_executions_go_on(workers):
    w0, w1 = workers
    g = tether.Graph()

    def check(state, x):
        if x < 0:
            raise ValueError(f"negative: {x}")
        return x

    n = g.add(w0, check, g.input)
    m = g.add(w1, lambda s, x: x * 10, n)
    with g.compile(m) as c:
        bad = c.execute(-1)
        good = c.execute(3)
        with pytest.raises(ValueError, match="negative: -1") as info:
            bad.result(T)
        assert info.value.tether_thread == "worker-0"
        assert good.result(T) == 30


def test_a_thread_hosts_one_graph(workers):
    w0, w1 = workers
    g, c = pipeline(w0, w1)
    g2 = tether.Graph()
    g2.add(w0, lambda s, x: x, g2.input)
    with pytest.raises(tether.ThreadBusy, match="worker-0"):
        g2.compile(g2.add(w0, lambda s, x: x, g2.input))
    c.close()


def test_waiting_on_an_execution_from_a_graph_thread_is_deadlock(workers):
    w0, w1 = workers
    g, c = pipeline(w0, w1)
    holder = [c]
    with pytest.raises(tether.Deadlock):
        w0.call(lambda s: holder[0].execute(1).result(T)).result(T)
    c.close()


def test_bad_graphs_are_refused(workers):
    w0, _ = workers
    g = tether.Graph()
    with pytest.raises(tether.InvalidArgument, match="output"):
        g.compile([])
    lonely = g.add(w0, lambda s: None)  # no inputs: not reachable from the input
    with pytest.raises(tether.InvalidArgument):
        g.compile(lonely)
    with pytest.raises(TypeError):
        tether.Graph().add(w0, lambda s, x: x, g.input)  # another graph's node
    with pytest.raises(ValueError):
        g.compile(g.add(w0, lambda s, x: x, g.input), channel_capacity=0)


def test_full_channel_waits_for_room_then_times_out(workers):
    w0, w1 = workers
    gate = threading.Event()
    g = tether.Graph()
    n = g.add(w0, lambda s, x: gate.wait(T), g.input)
    with g.compile(n, channel_capacity=1) as c:
        first = c.execute(0)
        with pytest.raises(tether.Timeout):
            c.execute(1, timeout=0.05)
        threading.Timer(0.05, gate.set).start()
        second = c.execute(2, timeout=T)  # waits for room
        assert first.result(T) is True and second.result(T) is True


def test_close_cancels_executions_not_ended(workers):
    w0, w1 = workers
    gate = threading.Event()
    g = tether.Graph()
    n = g.add(w0, lambda s, x: gate.wait(T), g.input)
    m = g.add(w1, lambda s, x: x, n)
    c = g.compile(m)
    f = c.execute(0)
    c.close()
    gate.set()
    with pytest.raises(tether.Cancelled):
        f.result(T)
    with pytest.raises(ValueError, match="closed"):
        c.execute(1)
