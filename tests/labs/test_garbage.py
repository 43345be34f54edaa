"""No lab check crashes or passes on an answer of the wrong kind: a numpy array, nothing (a
missing `return`), a string, a tuple or a dict.  Each gets a verdict that names the slip (WRONG)
or explains the learner's error (ERROR, "raised"); never "the check itself failed"."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("torch")  # the checks of labs 03-10 import it

from labs.kit import ERROR, PASSED  # noqa: E402
from tests.labs.test_labs import CASES, exercise  # noqa: E402

GARBAGE = {
    "numpy array": np.array([1.0, 2.0, 3.0]),
    "no return": None,
    "string": "42",
    "tuple": (1,),
    "dict": {"answer": 1},
}


def returning(value):
    def answer(*args, **kwargs):
        return value

    answer.__name__ = "answer"
    return answer


@pytest.mark.parametrize("stem, name", sorted(CASES))
def test_answers_of_the_wrong_kind_get_a_verdict(stem, name):
    ex = exercise(stem, name)
    for kind, value in GARBAGE.items():
        result = ex.evaluate(returning(value), seed=0)
        assert result.status != PASSED, (kind, result)
        assert (result.status, result.key) != (ERROR, "check_failed"), (kind, result)
        assert result.message.strip(), (kind, result)
