"""Every test starts with English messages and leaves the language as it found it; every kernel a
test starts (the grader's, the setup cell's) runs the course's kernel checks (tests/nbval_holes.py:
failed magics show as errors, German notebooks must print German numbers)."""

import pytest

from tests.nbval_holes import install_startup
from utils import i18n


def pytest_configure(config):
    install_startup()


@pytest.fixture(autouse=True)
def english():
    before = i18n.get_language()
    i18n.set_language("en")
    yield
    i18n.set_language(before)
