"""Round trip and fire-and-forget through tether.Actor, against the two things a Python
programmer would use instead: concurrent.futures.ThreadPoolExecutor(max_workers=1) and a
queue.Queue + threading.Thread worker.

Three placements: the caller and the worker thread on different CPUs, on the same CPU, and
unpinned (os.sched_setaffinity for the caller and the baselines' workers, the actor's cpu
option for tether). Each figure is the median of 5 runs, in microseconds per operation.

Run: python bindings/python/bench/bench.py [--quick]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import queue
import statistics
import threading
import time

import tether

RUNS = 5


def noop(*_):
    return None


# ---- workers under test: each has call(fn) -> result and tell(fn), and close() ----

class TetherWorker:
    name = "tether.Actor"
    idle_spin_ns = None  # None: the binding's default

    def __init__(self, cpu):
        spin = {} if self.idle_spin_ns is None else {"idle_spin_ns": self.idle_spin_ns}
        self.actor = tether.Actor(dict, name="bench", cpu=cpu, **spin)

    def round_trips(self, n):
        call = self.actor.call
        for _ in range(n):
            call(noop).result()

    def fire_and_forget(self, n):
        tell = self.actor.tell
        for _ in range(n):
            tell(noop)
        self.actor.call(noop).result()

    def close(self):
        self.actor.close()


def pin_self(cpu):
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})  # 0: the calling thread


class PoolWorker:
    name = "ThreadPoolExecutor(1)"

    def __init__(self, cpu):
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        self.pool.submit(pin_self, cpu).result()

    def round_trips(self, n):
        submit = self.pool.submit
        for _ in range(n):
            submit(noop).result()

    def fire_and_forget(self, n):
        submit = self.pool.submit
        for _ in range(n):
            submit(noop)
        submit(noop).result()

    def close(self):
        self.pool.shutdown(wait=True)


class QueueWorker:
    name = "queue.Queue + Thread"

    def __init__(self, cpu):
        self.requests = queue.Queue()
        self.thread = threading.Thread(target=self._serve, args=(cpu,), daemon=True)
        self.thread.start()

    def _serve(self, cpu):
        pin_self(cpu)
        while True:
            item = self.requests.get()
            if item is None:
                return
            fn, reply = item
            value = fn()
            if reply is not None:
                reply.put(value)

    def round_trips(self, n):
        reply = queue.Queue()
        put, get = self.requests.put, reply.get
        for _ in range(n):
            put((noop, reply))
            get()

    def fire_and_forget(self, n):
        put = self.requests.put
        for _ in range(n):
            put((noop, None))
        reply = queue.Queue()
        put((noop, reply))
        reply.get()

    def close(self):
        self.requests.put(None)
        self.thread.join(10)


PLACEMENTS = {"different CPUs": (0, 1), "same CPU": (0, 0), "unpinned": (None, None)}


def measure(placement, op, n, worker_classes):
    """Median us per op for each worker class. The repetitions are interleaved (one run of
    each worker in turn, five times) so that the load of a shared machine falls on all."""
    caller_cpu, worker_cpu = PLACEMENTS[placement]
    everything = os.sched_getaffinity(0)
    workers = [cls(worker_cpu) for cls in worker_classes]  # before the caller pins itself:
    pin_self(caller_cpu)                                     # threads inherit its mask
    try:
        samples = [[] for _ in workers]
        for w in workers:
            getattr(w, op)(n // 10)  # warm up
        for _ in range(RUNS):
            for w, out in zip(workers, samples):
                start = time.perf_counter()
                getattr(w, op)(n)
                out.append((time.perf_counter() - start) / n * 1e6)
        return [statistics.median(s) for s in samples]
    finally:
        os.sched_setaffinity(0, everything)
        for w in workers:
            w.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer operations per run")
    parser.add_argument("--idle-spin-ns", type=int, default=None, help="the tether actor's idle spin")
    args = parser.parse_args()
    TetherWorker.idle_spin_ns = args.idle_spin_ns
    sizes = {"round_trips": 2000, "fire_and_forget": 20000}
    if args.quick:
        sizes = {k: v // 10 for k, v in sizes.items()}
    placements = list(PLACEMENTS) if len(os.sched_getaffinity(0)) >= 2 else ["unpinned"]
    workers = (TetherWorker, PoolWorker, QueueWorker)
    spin = "the library's default (20 us, adaptive)" if args.idle_spin_ns is None else args.idle_spin_ns
    print(f"tether {tether.__version__}, {os.cpu_count()} CPUs, actor idle_spin_ns={spin}; "
          f"us per operation, median of {RUNS}; load average {os.getloadavg()[0]:.1f}")
    print("| placement | operation | tether.Actor | ThreadPoolExecutor(1) | Queue + Thread "
          "| tether / pool | tether / queue |")
    print("|---|---|---|---|---|---|---|")
    for placement in placements:
        for op, n in sizes.items():
            t, p, q = measure(placement, op, n, workers)
            print(f"| {placement} | {op.replace('_', ' ')} | {t:.2f} | {p:.2f} | {q:.2f} "
                  f"| {t / p:.2f}x | {t / q:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
