"""Scenario 2 (Ray PR #55756): an upload thread fails inside a Ray task.

A training function starts a checkpoint-upload thread that raises after 50 ms. Run under
tether.Runner, the failure ends the scope at once: the training loop sees
scope.stop_requested(), and ray.get raises the upload's own exception (type, message, the
thread's name) within a second. Beside it, the same function with a plain threading.Thread
upload: the exception is printed by threading.excepthook and the task "succeeds".

Run: python examples/ray/upload_errors.py
"""

from __future__ import annotations

import threading
import time

import ray

import tether

TRAIN_FOR_S = 3.0  # a training run the failure must cut short
UPLOAD_FAILS_AFTER_S = 0.05


class CheckpointUploadError(Exception):
    pass


def upload_checkpoint(step: int) -> None:
    time.sleep(UPLOAD_FAILS_AFTER_S)
    raise CheckpointUploadError(f"checkpoint {step}: upload to the bucket failed")


@ray.remote
def train_with_tether() -> int:
    seen = {}

    def train(scope) -> int:
        scope.spawn("upload-1", upload_checkpoint, 1)
        steps, deadline = 0, time.monotonic() + TRAIN_FOR_S
        while time.monotonic() < deadline:
            if scope.stop_requested():
                seen["stopped_at_step"] = steps
                break
            time.sleep(0.001)  # one training step
            steps += 1
        return steps

    runner = tether.Runner(train, name="train")
    try:
        return runner.join(timeout=TRAIN_FOR_S + 5)
    except CheckpointUploadError as e:
        runner.join_all(timeout=5)  # the loop has noticed the stop and returned
        e.add_note(f"training loop observed the stop at step {seen.get('stopped_at_step')}")
        raise
    finally:
        runner.close()


@ray.remote
def train_with_threads() -> int:
    upload = threading.Thread(target=upload_checkpoint, args=(1,), name="upload-1")
    upload.start()
    steps, deadline = 0, time.monotonic() + 0.3  # short: it never learns of the failure
    while time.monotonic() < deadline:
        time.sleep(0.001)
        steps += 1
    upload.join(5)
    return steps


@ray.remote
def warm_up() -> str:
    return tether.__version__  # a worker with tether imported, so the timing is the failure's


def run() -> dict:
    ray.get([warm_up.remote() for _ in range(2)], timeout=60)
    report = {}
    start = time.monotonic()
    try:
        ray.get(train_with_tether.remote(), timeout=TRAIN_FOR_S + 10)
        report["tether"] = {"raised": None}
    except CheckpointUploadError as e:
        cause = getattr(e, "cause", e)
        report["tether"] = {"raised": type(cause).__name__, "message": str(cause.args[0]),
                            "thread": getattr(cause, "tether_thread", None),
                            "notes": list(getattr(cause, "__notes__", [])),
                            "elapsed_s": time.monotonic() - start}
    steps = ray.get(train_with_threads.remote(), timeout=30)
    report["threading"] = {"returned": steps}
    return report


def main() -> None:
    report = run()
    t = report["tether"]
    print(f"tether.Runner: ray.get raised {t['raised']}({t['message']!r}) from thread {t['thread']!r} "
          f"after {t['elapsed_s']:.3f} s; notes: {t['notes']}")
    print(f"threading.Thread: ray.get returned {report['threading']['returned']} steps: the task 'succeeded' "
          "(the upload error went to the worker's stderr only)")


if __name__ == "__main__":
    import cluster
    import upload_errors  # by name, so Ray workers import it rather than unpickle __main__

    cluster.run_main(upload_errors.main)
