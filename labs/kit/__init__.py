"""The lab kit: exercises that check themselves, and the grader (torch-free).

A lab's checks (`labs/checks/labNN.py`) import everything from here:

    from labs.kit import Lab, Wrong, call, as_number, close

The modules: `lab` (Lab, its Score, the re-grading), `exercise` (one exercise and its result),
`answers` (calling learner code, Wrong, errors explained), `compare` (answers against the truth),
`blank` (the `____`), `sources` (the notebook sources), and the grader: `submission`,
`sandbox`, `headless` (a notebook run in a fresh kernel), `grade`, `classtable`.
"""

from __future__ import annotations

from labs.kit.answers import LearnerError, Wrong, call, explain
from labs.kit.blank import Unfinished, ____
from labs.kit.compare import (
    UNIT_SLIPS,
    allclose,
    as_number,
    as_pair,
    as_tuple,
    close,
    diagnose,
    factor_slip,
    matching,
    to_numpy,
)
from labs.kit.exercise import (
    ERROR,
    NOT_ATTEMPTED,
    NOT_CHECKED,
    PASSED,
    WRONG,
    Exercise,
    Result,
)
from labs.kit.lab import SCORE_MIMETYPE, ExerciseScore, Lab, Score, regrade
from labs.kit.mistakes import Mistake, Mistakes

__all__ = [
    "ERROR",
    "NOT_ATTEMPTED",
    "NOT_CHECKED",
    "PASSED",
    "SCORE_MIMETYPE",
    "UNIT_SLIPS",
    "WRONG",
    "Exercise",
    "ExerciseScore",
    "Lab",
    "LearnerError",
    "Mistake",
    "Mistakes",
    "Result",
    "Score",
    "Unfinished",
    "Wrong",
    "____",
    "allclose",
    "as_number",
    "as_pair",
    "as_tuple",
    "call",
    "close",
    "diagnose",
    "explain",
    "factor_slip",
    "matching",
    "regrade",
    "to_numpy",
]
