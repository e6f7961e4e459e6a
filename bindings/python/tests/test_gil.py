"""The GIL and the interpreter: Ctrl-C during join, exit with live objects, no leaks."""

import gc
import signal
import sys
import textwrap
import threading
import tracemalloc

import pytest

import tether
from conftest import T

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux signals and threads")


def test_ctrl_c_during_join_raises_keyboard_interrupt_promptly(script):
    code = textwrap.dedent("""
        import os, signal, threading, time, tether
        def forever(scope):
            while not scope.stop_requested():
                time.sleep(0.001)
        r = tether.Runner(forever, name="forever")
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        t0 = time.monotonic()
        try:
            r.join()          # no timeout: only Ctrl-C ends it
        except KeyboardInterrupt:
            print("interrupted after %.3f s" % (time.monotonic() - t0 - 0.3))
        r.close()
        print("closed")
    """)
    out = script(code)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split()
    assert lines[0] == "interrupted" and float(lines[2]) < 0.5, out.stdout
    assert "closed" in out.stdout


def test_ctrl_c_during_future_result_raises_keyboard_interrupt(script):
    code = textwrap.dedent("""
        import os, signal, threading, tether
        gate = threading.Event()
        a = tether.Actor(dict)
        f = a.call(lambda s: gate.wait(30))
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
        try:
            f.result()
        except KeyboardInterrupt:
            print("interrupted")
        gate.set()
        a.close()
    """)
    out = script(code)
    assert out.returncode == 0 and "interrupted" in out.stdout, out.stderr


def test_interpreter_exit_with_live_runners_and_actors_neither_hangs_nor_crashes(script):
    code = textwrap.dedent("""
        import threading, time, tether
        def polite(scope):
            while not scope.stop_requested():
                time.sleep(0.001)
        def rude(scope):                      # never looks at stop: gets SystemExit at exit
            x = 0
            while True:
                x += 1
        r1 = tether.Runner(polite, name="polite")
        r2 = tether.Runner(rude, name="rude")
        a = tether.Actor(dict, name="busy", groups={"io": 2})
        for i in range(1000):
            a.tell(lambda s, i: s.update(i=i), i)
        f = a.call_in("io", lambda s: time.sleep(0.2))
        g = tether.Graph()
        c = g.compile(g.add(a, lambda s, x: x, g.input))
        futures = [c.execute(i) for i in range(4)]
        keep = (r1, r2, a, c, f, futures)
        print("exiting")
    """)
    out = script(code, timeout=30)
    assert out.returncode == 0, (out.returncode, out.stderr)
    assert "exiting" in out.stdout
    assert "Fatal" not in out.stderr and "Segmentation" not in out.stderr


def test_exit_while_objects_are_collected_late(script):
    code = textwrap.dedent("""
        import tether
        class Cycle:
            def __init__(self):
                self.me = self
                self.actor = tether.Actor(dict)
                self.actor.call(lambda s: None).result(5)
        Cycle()          # collected at exit, after tether's exit hook
    """)
    out = script(code, timeout=30)
    assert out.returncode == 0, out.stderr


def test_fork_child_uses_tether_and_exits_promptly(script):
    code = textwrap.dedent("""
        import os, sys, threading, time, tether
        gate = threading.Event()
        a = tether.Actor(dict, name="parent")
        inside = threading.Event()
        f = a.call(lambda s: (inside.set(), gate.wait(20)))  # a library thread in a callback
        inside.wait(5)
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:
            try:
                a.call(lambda s: None)
            except tether.Forked:
                print("parent's actor in the child: Forked", flush=True)
            with tether.Actor(dict) as b:
                print("child's own actor:", b.call(lambda s: 41 + 1).result(5), flush=True)
            sys.exit(0)  # atexit: tether's exit hook must not wait for the parent's threads
        _, status = os.waitpid(pid, 0)
        print("child exit", os.waitstatus_to_exitcode(status), "after %.1f s" % (time.monotonic() - t0))
        gate.set()
        f.result(5)
        a.close()
    """)
    out = script(code, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "parent's actor in the child: Forked" in out.stdout
    assert "child's own actor: 42" in out.stdout
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("child exit")][0]
    assert line.split()[2] == "0" and float(line.split()[4]) < 4.0, out.stdout


def _measure(fn, n):
    """(bytes, gc objects) more after fn(n) than before, in a steady state."""
    gc.collect()
    objects_before = len(gc.get_objects())
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    fn(n)
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    del before, after
    gc.collect()
    return grown, len(gc.get_objects()) - objects_before


@pytest.mark.parametrize("kind", ["call", "tell", "failing call", "execute", "runner"])
def test_no_reference_leaks_around_10000_operations(kind):
    a = tether.Actor(dict, name="leak")
    g = tether.Graph()
    c = g.compile(g.add(a, lambda s, x: [x], g.input))

    def calls(n):
        for i in range(n):
            a.call(lambda s, x: {"x": x}, [i]).result(T)

    def tells(n):
        for i in range(n):
            a.tell(lambda s, x: None, [i])
        a.call(lambda s: None).result(T)

    def failing(n):
        for i in range(n):
            assert isinstance(a.call(lambda s, x: 1 / 0, [i]).exception(T), ZeroDivisionError)

    def executes(n):
        for i in range(n):
            c.execute([i]).result(T)

    def runners(n):
        for i in range(n // 20):
            tether.Runner(lambda scope, x: x, [i]).join(T)

    fn = {"call": calls, "tell": tells, "failing call": failing, "execute": executes, "runner": runners}[kind]
    fn(2000)  # warm up caches and free lists
    grown, objects = _measure(fn, 10000)
    c.close()
    a.close()
    assert objects < 100, f"{objects} objects more after 10,000 {kind}s"
    assert grown < 64 * 1024, f"{grown} bytes more after 10,000 {kind}s"


def test_library_threads_keep_one_python_thread_state():
    # threading.local survives between calls on the actor thread (not one state per call)
    local = threading.local()
    with tether.Actor(lambda: setattr(local, "v", 7) or {}) as a:
        assert [a.call(lambda s: local.v).result(T) for _ in range(3)] == [7, 7, 7]


def test_sigint_handler_still_main_thread_only():
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
