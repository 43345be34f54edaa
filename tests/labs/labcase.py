"""What a lab test feeds an exercise: right answers, wrong ones with the feedback each must get."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Case:
    right: list  # different correct answers, in different frameworks
    wrong: list  # (answer, the key of the feedback it must get)
    raising: Any  # an answer that raises on the way
    raising_line: str  # the learner's line the explanation must show
    timing: bool = False  # the check times the answer: its verdicts are also tested under load
    # The check times real work fast enough for every seed of the sweep (labs.kit.measured):
    # tested like an untimed exercise, and under load as well.
    under_load: bool = False
    # Rounds of tests/labs/test_labs_under_load.py: fewer where each check times real work
    # (seconds a round), none where a test of its own runs it under load alone.
    rounds_under_load: int = 3
