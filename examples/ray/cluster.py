"""The local Ray cluster the scenarios run on: ray.init(num_cpus=2), with this directory on
the workers' PYTHONPATH so the scenario modules' classes and functions are imported by
name in the workers (Ray pickles __main__'s by value, which a threading.local refuses)."""

from __future__ import annotations

import os

import ray

HERE = os.path.dirname(os.path.abspath(__file__))


def start(num_cpus: int = 2) -> None:
    paths = [HERE] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))  # inherited by the workers
    ray.init(num_cpus=num_cpus, include_dashboard=False)


def run_main(main) -> None:
    start()
    try:
        main()
    finally:
        ray.shutdown()
