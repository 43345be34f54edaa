"""Every test starts with English messages and leaves the language as it found it; every kernel a
test starts (the grader's, the setup cell's) runs the course's kernel checks (tests/nbval_holes.py:
failed magics show as errors, German notebooks must print German numbers)."""

import fcntl
import gc
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.nbval_holes import install_startup
from utils import i18n

# The files whose tests take longest (minutes each on two busy cores: fresh processes, kernels,
# model loads, every core spun), longest first.  `make test` runs the suite on two workers with
# --dist worksteal, which hands the first half of the collection to one worker and the second half
# to the other, and steals from the end of a queue: a long file must start a half, or it ends one
# worker's run alone while the other has nothing left.  So they are dealt to the two halves in turn.
LONGEST = (
    "test_resume.py",
    "test_kaggle_dataset.py",
    "test_labs_under_load.py",
    "test_lesson07_resume.py",
    "test_cpu_paths.py",
    "test_site.py",
    "test_build.py",
)


def pytest_configure(config):
    install_startup()
    # A lesson's training run keeps its checkpoints beside the notebook and resumes from them; a
    # test run starts from none, in a folder of its own (kernels and subprocesses inherit it).
    os.environ.setdefault("COURSE_CHECKPOINTS", tempfile.mkdtemp(prefix="course-checkpoints-"))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    """What collection imported (torch, JAX, transformers: some 700,000 objects) lives as long as
    the run: frozen, a full garbage collection walks only what the tests make. The course's
    free_memory() collects after each out-of-memory error, a collection over everything takes
    about a second (`pytest tests -k 02_device_placement-finder-seeds0`: 44 s, frozen 13 s)."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected: the halves as xdist sees them
def pytest_collection_modifyitems(items):
    """Each half of the collection starts with its share of the longest files (see LONGEST); the
    order within a file stays as it is."""
    rank = {name: n for n, name in enumerate(LONGEST)}
    long = [item for item in items if item.path.name in rank]
    rest = [item for item in items if item.path.name not in rank]
    long.sort(key=lambda item: rank[item.path.name])  # stable: a file's order stays
    first = [item for item in long if rank[item.path.name] % 2 == 0]
    second = [item for item in long if rank[item.path.name] % 2 == 1]
    cut = max(0, min(len(rest), len(items) // 2 - len(first)))
    items[:] = first + rest[:cut] + second + rest[cut:]


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
