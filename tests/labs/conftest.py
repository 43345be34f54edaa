"""Fixtures of the lab tests."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator

import pytest


@pytest.fixture
def busy_cores() -> Iterator[int]:
    """A `yes` process on every core while the test runs: the load of a shared Colab VM or a busy
    CI machine, which a learner's correct timer must pass through."""
    count = os.cpu_count() or 2
    hogs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(count)]
    try:
        time.sleep(0.5)  # all running before the first try
        assert all(hog.poll() is None for hog in hogs)
        yield count
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
