"""Every test starts with English messages and leaves the language as it found it."""

import pytest

from utils import i18n


@pytest.fixture(autouse=True)
def english():
    before = i18n.get_language()
    i18n.set_language("en")
    yield
    i18n.set_language(before)
