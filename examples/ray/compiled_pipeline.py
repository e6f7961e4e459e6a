"""Scenario 3 (Ray issue #46336's follow-up, PR #50032): a compiled graph whose loop runs on
the actors' own threads while ordinary calls keep answering.

The seed's pipeline — forward on worker 0, forward and backward on worker 1, backward on
worker 0 — as a tether compiled graph. A tether graph lives in one process and Ray actors
are processes, so each of two Ray actors hosts the pipeline over two tether workers (each
with thread-local state set up in its constructor, which every graph step checks). While
the Ray actors execute batches through their graphs, ordinary Ray calls to the same actors
— which themselves call the tether workers whose threads host the graph loops — keep
answering, with the logs of a run still in progress.

Run: python examples/ray/compiled_pipeline.py
"""

from __future__ import annotations

import threading
import time

import ray

import tether

STEP_S = 0.005  # the work of one forward or backward step
CALL_TIMEOUT_S = 30.0
_local = threading.local()


class Worker:
    def __init__(self, rank: int):
        self.rank = rank
        self.logs: list[str] = []
        _local.rank = rank  # thread-affine: lost if a step ran on another thread

    def forward(self, x: int) -> int:
        assert _local.rank == self.rank, "forward ran off the worker's thread"
        self.logs.append(f"FWD rank-{self.rank}, batch-{x}")
        time.sleep(STEP_S)
        return x + 1

    def backward(self, g: int) -> int:
        assert _local.rank == self.rank, "backward ran off the worker's thread"
        self.logs.append(f"BWD rank-{self.rank}, grad-{g}")
        time.sleep(STEP_S)
        return g * 2


@ray.remote(max_concurrency=4)
class PipelineHost:
    def __init__(self, replica: int):
        self.w0 = tether.Actor(Worker, 0, name=f"r{replica}-worker-0")
        self.w1 = tether.Actor(Worker, 1, name=f"r{replica}-worker-1")
        g = tether.Graph()
        f0 = g.add(self.w0, Worker.forward, g.input)
        f1 = g.add(self.w1, Worker.forward, f0)
        b1 = g.add(self.w1, Worker.backward, f1)
        b0 = g.add(self.w0, Worker.backward, b1)
        self.pipeline = g.compile(b0, channel_capacity=4)

    def run(self, batches: list[int]) -> list[int]:
        futures = [self.pipeline.execute(b, timeout=CALL_TIMEOUT_S) for b in batches]
        return [f.result(CALL_TIMEOUT_S) for f in futures]

    def get_logs(self) -> tuple[list[str], list[str]]:
        """An ordinary call, served on the same tether threads that host the graph loop."""
        return (self.w0.call(lambda w: list(w.logs)).result(CALL_TIMEOUT_S),
                self.w1.call(lambda w: list(w.logs)).result(CALL_TIMEOUT_S))


def run(batches: int = 16) -> dict:
    hosts = [PipelineHost.remote(r) for r in range(2)]
    ray.get([h.get_logs.remote() for h in hosts], timeout=60)  # both constructed
    runs = [h.run.remote(list(range(batches))) for h in hosts]
    answered_during_run = []  # (replica, log lines seen) of get_logs answered mid-run
    while True:
        ready, _ = ray.wait(runs, num_returns=len(runs), timeout=0)
        if len(ready) == len(runs):
            break
        for replica, h in enumerate(hosts):
            started = time.monotonic()
            w0_logs, w1_logs = ray.get(h.get_logs.remote(), timeout=CALL_TIMEOUT_S)
            still_running = not ray.wait([runs[replica]], timeout=0)[0]
            if still_running:
                answered_during_run.append((replica, len(w0_logs) + len(w1_logs), time.monotonic() - started))
    results = ray.get(runs, timeout=CALL_TIMEOUT_S)
    final_logs = ray.get(hosts[0].get_logs.remote(), timeout=CALL_TIMEOUT_S)
    for h in hosts:
        ray.kill(h)
    return {"results": results, "expected": [(x + 2) * 4 for x in range(batches)],
            "answered_during_run": answered_during_run, "final_w0_logs": final_logs[0],
            "total_log_lines": 4 * batches}


def main() -> None:
    report = run()
    ok = all(r == report["expected"] for r in report["results"])
    print(f"both replicas' pipelines returned the expected gradients: {ok} (first: {report['results'][0][:4]}...)")
    mid = report["answered_during_run"]
    print(f"{len(mid)} ordinary get_logs calls answered while the graphs ran; log lines seen mid-run: "
          f"{sorted({n for _, n, _ in mid})[:8]} of {report['total_log_lines']}; slowest answer "
          f"{max((t for _, _, t in mid), default=0) * 1000:.1f} ms")
    print(f"worker 0 of replica 0 logged: {report['final_w0_logs'][:4]} ...")


if __name__ == "__main__":
    import cluster
    import compiled_pipeline  # by name, so Ray workers import it rather than unpickle __main__

    cluster.run_main(compiled_pipeline.main)
