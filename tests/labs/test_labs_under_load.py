"""The timing exercises give the same verdicts when every core is busy: the simulated device runs
on a virtual clock, and what real work is timed is judged with bounds calibrated on the spot.
(On a shared Colab VM or a busy CI machine a learner's correct timer must still pass.)"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from labs.kit import PASSED, WRONG  # noqa: E402
from tests.labs import test_labs as labs  # noqa: E402 -- its helpers; its tests are not collected here

TIMED = sorted(
    key
    for key, case in labs.CASES.items()
    if (case.timing or case.under_load) and case.rounds_under_load
)
ROUNDS = 3


def test_some_exercises_are_timed():
    assert TIMED, "no Case has timing=True: which exercises time the learner's code?"


@pytest.mark.parametrize("stem, name", TIMED)
def test_timing_verdicts_hold_with_every_core_busy(stem, name, busy_cores):
    ex = labs.exercise(stem, name)
    case = labs.CASES[stem, name]
    for _ in range(min(ROUNDS, case.rounds_under_load)):
        for seed in labs.SEEDS:
            for answer in case.right:
                result = ex.evaluate(answer, seed=seed)
                assert result.status == PASSED, (seed, answer.__name__, result)
            for answer, key in case.wrong:
                result = ex.evaluate(answer, seed=seed)
                assert (result.status, result.key) == (WRONG, key), (seed, answer.__name__, result)
