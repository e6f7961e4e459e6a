"""The three Ray scenarios of examples/ray/, on a real local cluster (ray.init(num_cpus=2)).

Skipped, with the reason, only when ray cannot be imported (scripts/test.d/50-python.sh
installs it and says whether these ran).
"""

import os
import sys

import pytest

ray = pytest.importorskip("ray", reason="ray is not installed: the Ray scenarios did NOT run")

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "ray")
sys.path.insert(0, os.path.abspath(EXAMPLES))

import cluster  # noqa: E402  (examples/ray)
import compiled_pipeline  # noqa: E402
import thread_affine_actor  # noqa: E402
import upload_errors  # noqa: E402

pytestmark = pytest.mark.ray


@pytest.fixture(scope="module", autouse=True)
def ray_cluster():
    cluster.start(num_cpus=2)
    yield
    ray.shutdown()


def test_thread_affine_state_behind_a_threaded_ray_actor():
    report = thread_affine_actor.run(callers=8, calls=100)
    print(report)
    for label in ("tether, max_concurrency=8", "tether, concurrency_groups"):
        entry = report[label]
        assert (entry["ok"], entry["errors"], entry["rows"]) == (800, 0, 800), entry
        assert entry["threads"] == 1, entry  # every call saw the factory's thread and its local
    plain = report["plain, max_concurrency=8"]
    assert plain["sqlite3_errors"] > 0, plain  # what Ray users get today
    assert "SQLite objects created in a thread can only be used in that same thread" in plain["first_error"]


def test_upload_thread_failure_reaches_ray_get_within_a_second():
    report = upload_errors.run()
    print(report)
    t = report["tether"]
    assert t["raised"] == "CheckpointUploadError"
    assert t["message"] == "checkpoint 1: upload to the bucket failed"
    assert t["thread"] == "upload-1"
    assert t["elapsed_s"] < 1.0
    assert any(n.startswith("training loop observed the stop at step ") and not n.endswith("None")
               for n in t["notes"]), t["notes"]
    assert report["threading"]["returned"] > 0  # the plain version "succeeds"


def test_seed_pipeline_in_ray_actors_while_ordinary_calls_answer():
    report = compiled_pipeline.run(batches=16)
    print({k: v for k, v in report.items() if k != "final_w0_logs"})
    assert report["results"] == [report["expected"]] * 2
    mid_run = [n for _, n, _ in report["answered_during_run"]]
    assert any(0 < n < report["total_log_lines"] for n in mid_run), report["answered_during_run"]
    assert report["final_w0_logs"][0] == "FWD rank-0, batch-0"


