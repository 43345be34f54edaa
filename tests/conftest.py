"""Every test starts with English messages and leaves the language as it found it; every kernel a
test starts (the grader's, the setup cell's) runs the course's kernel checks (tests/nbval_holes.py:
failed magics show as errors, German notebooks must print German numbers)."""

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
