"""Every test starts with English messages and leaves the language as it found it; every kernel a
test starts (the grader's, the setup cell's) runs the course's kernel checks (tests/nbval_holes.py:
failed magics show as errors, German notebooks must print German numbers)."""

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.nbval_holes import install_startup
from utils import i18n

# The files whose tests take longest (a minute or more each on two busy cores: fresh processes,
# kernels, every core spun), in the order they start: `make test` runs the suite on two workers,
# and a long test that starts last keeps one worker busy while the other has nothing left.
FIRST = (
    "test_resume.py",
    "test_labs_under_load.py",
    "test_lesson07_resume.py",
    "test_cpu_paths.py",
    "test_site.py",
    "test_build.py",
)


def pytest_configure(config):
    install_startup()


def pytest_collection_modifyitems(items):
    """The longest files first (see FIRST); the order within a file stays as it is."""
    rank = {name: n for n, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(FIRST)))


@pytest.fixture(autouse=True)
def english():
    before = i18n.get_language()
    i18n.set_language("en")
    yield
    i18n.set_language(before)


def made_once(tmp_path_factory, name: str, make: Callable[[Path], None]) -> Path:
    """A folder that `make` fills once per run: the worker that comes first makes it, the other
    waits and reads it (a module-scoped fixture would be made again by every worker that runs
    one of the module's tests).  Tests only read it."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        folder = tmp_path_factory.mktemp(name)
        make(folder)
        return folder
    shared = tmp_path_factory.getbasetemp().parent  # this run's folder, shared by the workers
    folder, done = shared / name, shared / f"{name}.done"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            if folder.exists():
                shutil.rmtree(folder)  # a make that failed before
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def once(tmp_path_factory) -> Callable[[str, Callable[[Path], None]], Path]:
    """`once(name, make)`: see made_once."""
    return lambda name, make: made_once(tmp_path_factory, name, make)
