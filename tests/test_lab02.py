"""Lab 02, beyond what tests/test_labs.py checks for every lab (its answers are in
tests/cases_lab02.py): the two wrong answers the issue names, and the pretend clock of q3."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("torch")

from tests import cases_lab02 as cases  # noqa: E402
from tests import test_labs as labs  # noqa: E402 -- its helpers; its tests are not collected here
from utils.bench import measure  # noqa: E402
from utils.checks import PASSED, WRONG  # noqa: E402


def test_every_exercise_of_lab_02_has_cases():
    names = {e.name for e in labs.load_lab(cases.LAB)["lab"].exercises}
    assert {name for lab, name in cases.CASES if lab == cases.LAB} == names
    assert all((cases.LAB, name) in labs.CASES for name in names)  # collected by test_labs


@pytest.mark.parametrize(
    "name, answer, key",
    [
        ("finder", cases.finder_uncaught, "oom_not_caught"),  # a finder that does not catch OOM
        ("forward", cases.forward_only_model, "only_model"),  # a fix that only moves the model
        ("forward", cases.forward_not_assigned, "not_assigned"),  # batch.to(device), unkept
    ],
)
def test_the_wrong_answers_the_issue_names(name, answer, key):
    assert (answer, key) in cases.CASES[cases.LAB, name].wrong
    ex = labs.exercise(cases.LAB, name)
    for seed in range(10):
        result = ex.evaluate(answer, seed=seed)
        assert (result.status, result.key) == (WRONG, key), (seed, result)


def test_forward_check_is_not_fooled_by_dtype_casts_on_meta():
    # On the meta device PyTorch itself calls batch.to(dtype): that is not the learner moving it.
    ex = labs.exercise(cases.LAB, "forward")
    assert ex.evaluate(cases.forward_only_model, seed=0).key == "only_model"
    assert ex.evaluate(cases.forward_solution, seed=0).status == PASSED


def test_bandwidth_check_puts_the_real_clock_back():
    ex = labs.exercise(cases.LAB, "bandwidth")
    before = measure.__globals__["time"]
    assert ex.evaluate(lambda copy, nbytes: nbytes / measure(copy).median / 1e9).status == PASSED
    assert ex.evaluate(lambda copy, nbytes: 1 / 0).key == "raised"
    assert measure.__globals__["time"] is before is time
    assert measure(lambda: None, min_time=0.01).median < 1  # real seconds again
