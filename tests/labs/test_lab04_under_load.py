"""Lab 04 q1 judges a timer by the work its stretch held, so its verdicts must not change when
every core is busy: every right timer (taken in turn) passes every try, and each wrong timer
whose verdict weighs work (the closest of them, two runs timed as one) is rejected every time,
with its own feedback. The other wrong timers are told by the order of their clock reads, which
load can't change; tests/labs/test_labs.py runs them all.

Busy means one `yes` process per core beside the test, started and killed here; the test needs
the machine to itself (make test runs it after the parallel run), so that the load is the one it
starts. The tries are kept to what fits in a few minutes on two busy cores."""

from __future__ import annotations

import pytest

pytest.importorskip("jax")
pytest.importorskip("torch")

import tests.labs.cases_lab04 as cases  # noqa: E402
from labs.kit import PASSED, WRONG  # noqa: E402
from tests.labs import test_labs as labs  # noqa: E402 -- its helpers; its tests are not collected here

SOLUTION_TRIES = 200
WRONG_TRIES = 4
# The wrong timers whose verdict weighs amounts of work (the rest are told by the order of the
# clock reads, which load can't change).
WEIGHED = [
    (cases.no_sync, "no_sync"),
    (cases.first_call, "compile_includes_run"),
    (cases.ten_runs_undivided, "run_too_long"),
    (cases.warm_up_timed_too, "run_too_long"),
    (cases.divided_by_too_many, "runs_miscounted"),
]


def test_the_weighed_wrong_answers_are_cases_of_the_lab():
    wrong = cases.CASES[cases.LAB, "compile_and_run"].wrong
    assert all(pair in wrong for pair in WEIGHED)


@pytest.mark.alone
def test_compile_and_run_verdicts_hold_with_every_core_busy(busy_cores):
    ex = labs.exercise(cases.LAB, "compile_and_run")
    right = cases.CASES[cases.LAB, "compile_and_run"].right
    rejected = []
    for seed in range(SOLUTION_TRIES):
        answer = right[seed % len(right)]
        result = ex.evaluate(answer, seed=seed)
        if result.status != PASSED:
            rejected.append((seed, answer.__name__, result))
    assert not rejected, f"right answers rejected in {len(rejected)} of {SOLUTION_TRIES} tries"
    for answer, key in WEIGHED:
        for seed in range(WRONG_TRIES):
            result = ex.evaluate(answer, seed=seed)
            assert (result.status, result.key) == (WRONG, key), (seed, answer.__name__, result)
