"""Shared by the Python suite: every wait in a test is bounded by T seconds."""

import os
import subprocess
import sys

import pytest

T = 10.0  # the bound on every wait; a test that needs it has failed


def run_script(code: str, timeout: float = 30.0, **kwargs) -> subprocess.CompletedProcess:
    """Runs code in a fresh interpreter (for exit and signal behaviour)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONFAULTHANDLER": "1"}, **kwargs)


@pytest.fixture
def script():
    return run_script
