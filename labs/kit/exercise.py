"""One exercise of a lab: its check, hint and solution, and the result a check gives.

A *test* is a function `test(answer, rng) -> str | None`.  It tries the answer on fresh random
inputs (so a memorised number cannot pass), calls learner code only through `call(...)`, raises
`Wrong(key, message)` for a wrong answer, and may return a note for a right one.
`Exercise.check()` turns whatever happens into feedback in the learner's language and never
raises:

    passed          the answer behaves as asked
    wrong           `Wrong.key` names the mistake (tests assert on it), the message explains it
    not_attempted   the answer is still the blank `____`, or the code reached a `____`
    error           the learner's code raised: the error and the line it came from, no traceback

Exercises are made by `Lab.exercise` (`labs.kit`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from labs.kit.answers import LearnerError, Text, Wrong, explain
from labs.kit.blank import Unfinished, has_blank
from labs.kit.sources import Cell, answer_name, check_cell, solution_code
from utils.i18n import get_language, text

Test = Callable[[Any, random.Random], "str | None"]

# The status of an exercise (machine-readable, in the score's JSON too).
PASSED = "passed"
WRONG = "wrong"
NOT_ATTEMPTED = "not_attempted"
ERROR = "error"
NOT_CHECKED = "not_checked"  # its check() has not run yet

SYMBOLS = {PASSED: "✅", WRONG: "❌", NOT_ATTEMPTED: "✏️", ERROR: "💥", NOT_CHECKED: "·"}
STATUS_NAMES: dict[str, Text] = {
    PASSED: ("passed", "bestanden"),
    WRONG: ("not yet", "noch nicht"),
    NOT_ATTEMPTED: ("not attempted", "nicht bearbeitet"),
    ERROR: ("error", "Fehler"),
    NOT_CHECKED: ("not checked", "nicht geprüft"),
}


def status_line(result: Result) -> str:
    """The mark and the status in words, then the message: "❌ not yet: You double x".  The word
    keeps the line readable where no emoji font is installed (the mark is an empty box there)."""
    if result.status == NOT_ATTEMPTED:  # its message says so: "Not attempted yet: ..."
        return f"{SYMBOLS[result.status]} {result.message}"
    word = text(*STATUS_NAMES[result.status])
    return f"{SYMBOLS[result.status]} {word}: {result.message}"


@dataclass(frozen=True)
class Result:
    status: str  # PASSED, WRONG, NOT_ATTEMPTED or ERROR
    key: str  # which feedback: "ok", "not_attempted", "raised", "check_failed" or a `Wrong.key`
    message: str  # in the learner's language


@dataclass
class Exercise:
    cells: list[Cell]  # of the lab's source: where its check cell and its solution are
    number: int
    name: str
    title: Text
    points: int
    test: Test
    hint_text: Text
    result: Result | None = None  # of the last check(), for display only: the grader re-checks

    @property
    def label(self) -> str:
        return f"q{self.number}"

    @property
    def answer(self) -> str:
        """The name of the learner's answer in the notebook (`q1.check(pick_device)`)."""
        return answer_name(check_cell(self.cells, self.label), self.label)

    def solution_code(self, lang: str | None = None) -> str:
        """The solution block of the lab source, in `lang` (default: the learner's language)."""
        cell = check_cell(self.cells, self.label)
        return solution_code(cell, self.label, lang or get_language())

    def evaluate(self, answer: Any, seed: int | None = None) -> Result:
        """Run the test and turn its outcome into a `Result`; prints nothing, records nothing."""
        if has_blank(answer):
            return self._not_attempted()
        try:
            note = self.test(answer, random.Random(seed))
        except Unfinished:
            return self._not_attempted()
        except Wrong as wrong:
            return Result(WRONG, wrong.key, wrong.message)
        except LearnerError as failure:
            return Result(ERROR, "raised", explain(failure.error))
        except Exception as error:  # a bug in the check itself: say so, and still don't raise
            return Result(
                ERROR,
                "check_failed",
                text(
                    "The check itself failed ({error}). Please tell your trainer.",
                    "Die Prüfung selbst ist fehlgeschlagen ({error}). "
                    "Bitte sag deiner Trainerin oder deinem Trainer Bescheid.",
                    error=f"{type(error).__name__}: {error}",
                ),
            )
        return Result(PASSED, "ok", note or text("Correct!", "Richtig!"))

    def _not_attempted(self) -> Result:
        return Result(
            NOT_ATTEMPTED,
            "not_attempted",
            text(
                "Not attempted yet: replace ____ with your code, then run the cell again.",
                "Noch nicht bearbeitet: Ersetze ____ durch deinen Code und führe die Zelle erneut "
                "aus.",
            ),
        )

    def check(self, answer: Any) -> None:
        """Check the answer on fresh random inputs, record the result and print feedback."""
        self.result = self.evaluate(answer)
        lines = [status_line(self.result)]
        if self.result.status in (WRONG, ERROR):
            lines.append(
                text(
                    "Stuck? {q}.hint() gives a hint, {q}.solution() the answer.",
                    "Hängst du fest? {q}.hint() gibt einen Tipp, {q}.solution() die Lösung.",
                    q=self.label,
                )
            )
        print("\n".join(lines))

    def hint(self) -> None:
        print(text("Hint: ", "Tipp: ") + text(*self.hint_text))

    def solution(self) -> None:
        print(text("Solution:", "Lösung:") + "\n" + self.solution_code())
