"""Scenario 1 (Ray issue #46336): thread-affine state behind a threaded Ray actor.

A Ray actor with max_concurrency=8 (and one with concurrency_groups) runs its methods on
a pool of threads, none of them necessarily the one __init__ ran on. State that is bound
to a thread — a sqlite3 connection opened with check_same_thread=True, a threading.local
set up in __init__ — breaks there. Delegating to a tether.Actor created in __init__ keeps
that state on one pinned thread: 8 concurrent callers x 100 calls all succeed and all see
the same thread. Beside it, the same Ray actor without tether.

Run: python examples/ray/thread_affine_actor.py
"""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor

import ray

import tether

CALL_TIMEOUT_S = 30.0


class Ledger:
    """Thread-affine state: built on one thread, usable only there."""

    def __init__(self):
        self.conn = sqlite3.connect(":memory:")  # check_same_thread=True, the default
        self.conn.execute("create table entries (caller integer, n integer)")
        self.local = threading.local()
        self.local.owner = threading.get_ident()

    def record(self, caller: int, n: int) -> int:
        self.conn.execute("insert into entries values (?, ?)", (caller, n))
        return self.local.owner  # AttributeError on any thread but the one of __init__

    def count(self) -> int:
        return self.conn.execute("select count(*) from entries").fetchone()[0]


@ray.remote(max_concurrency=8)
class PlainLedger:
    """The Ray actor as people write it today: the state lives in the actor itself."""

    def __init__(self):
        self.ledger = Ledger()

    def record(self, caller: int, n: int) -> int:
        return self.ledger.record(caller, n)


@ray.remote(max_concurrency=8)
class TetherLedger:
    """The same actor, its state behind a tether.Actor built in __init__."""

    def __init__(self):
        self.actor = tether.Actor(Ledger, name="ledger")

    def record(self, caller: int, n: int) -> int:
        return self.actor.call(Ledger.record, caller, n).result(CALL_TIMEOUT_S)

    def count(self) -> int:
        return self.actor.call(Ledger.count).result(CALL_TIMEOUT_S)

    def thread_id(self) -> int:
        return self.actor.stats.os_thread_id


@ray.remote(concurrency_groups={"writes": 4, "reads": 4})
class TetherGroupsLedger:
    """With Ray concurrency groups: writes and reads on separate Ray thread pools, the
    state still on its one tether thread."""

    def __init__(self):
        self.actor = tether.Actor(Ledger, name="ledger")

    @ray.method(concurrency_group="writes")
    def record(self, caller: int, n: int) -> int:
        return self.actor.call(Ledger.record, caller, n).result(CALL_TIMEOUT_S)

    @ray.method(concurrency_group="reads")
    def count(self) -> int:
        return self.actor.call(Ledger.count).result(CALL_TIMEOUT_S)


def hammer(handle, callers: int, calls: int) -> tuple[list, list]:
    """callers threads each make `calls` Ray calls; returns (values, errors)."""

    def one_caller(caller: int):
        values, errors = [], []
        for n in range(calls):
            try:
                values.append(ray.get(handle.record.remote(caller, n), timeout=CALL_TIMEOUT_S))
            except Exception as e:  # counted and shown by the caller
                errors.append(e)
        return values, errors

    with ThreadPoolExecutor(max_workers=callers) as pool:
        outcomes = list(pool.map(one_caller, range(callers)))
    return [v for vs, _ in outcomes for v in vs], [e for _, es in outcomes for e in es]


def run(callers: int = 8, calls: int = 100) -> dict:
    report = {}
    for label, cls in (("tether, max_concurrency=8", TetherLedger),
                       ("tether, concurrency_groups", TetherGroupsLedger),
                       ("plain, max_concurrency=8", PlainLedger)):
        handle = cls.remote()
        values, errors = hammer(handle, callers, calls)
        entry = {"ok": len(values), "errors": len(errors), "threads": len(set(values)),
                 "error_types": sorted({type(e).__name__ for e in errors}),
                 "first_error": str(errors[0]).strip().splitlines()[-1] if errors else ""}
        if cls is not PlainLedger:
            entry["rows"] = ray.get(handle.count.remote(), timeout=CALL_TIMEOUT_S)
        entry["sqlite3_errors"] = sum(isinstance(e, sqlite3.ProgrammingError) for e in errors)
        report[label] = entry
        ray.kill(handle)
    return report


def main() -> None:
    for label, entry in run().items():
        print(f"{label}: {entry['ok']} calls ok, {entry['errors']} failed, "
              f"values from {entry['threads']} thread(s)"
              + (f", {entry['rows']} rows" if "rows" in entry else "")
              + (f"; {entry['sqlite3_errors']} sqlite3.ProgrammingError, e.g. {entry['first_error']}"
                 if entry["errors"] else ""))


if __name__ == "__main__":
    import cluster
    import thread_affine_actor  # by name, so Ray workers import it rather than unpickle __main__

    cluster.run_main(thread_affine_actor.main)
