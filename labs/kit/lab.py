"""Exercises that check themselves: the API of the labs.

Each lab's checks live in a module, `labs/checks/labNN.py`, one small test per exercise:

    lab = Lab("01")  # reads labs/src/01_*.py: the titles, each solution, each answer's name

    @lab.exercise("batched_flops", points=2, hint=("...", "..."))
    def q1(batched_matmul_flops, rng):
        ...

An exercise's title is its heading in the source, `## 1. FLOPs of a batched matmul` in the
English cells and `## 1. FLOPs einer Batch-Matmul` in the German ones (`title=` may still name it,
and then the source need not).  The notebook binds them in one short cell (`from labs.checks.lab01 import lab, q1, q2`).  The
learner replaces the blank `____` by code and runs `q1.check(batched_matmul_flops)`; `q1.hint()`
and `q1.solution()` help (the solution is the source's solution block); `lab.score()` shows the
points.  The grader does not trust any of this: it imports the checks afresh and checks every
answer again (`regrade`).

What a test does and what a check says is in `labs.kit.exercise`.  A checks module imports
everything from here: the helpers for answers (`labs.kit.answers`: Wrong, call, explain; and
`labs.kit.compare`: as_number, close, allclose, matching, diagnose, factor_slip ...) are here too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labs.kit.answers import Text
from labs.kit.blank import ____
from labs.kit.exercise import (
    NOT_CHECKED,
    PASSED,
    STATUS_NAMES,
    SYMBOLS,
    Exercise,
    Result,
    Test,
)
from labs.kit.sources import exercise_titles, read_cells, read_header
from utils.course import ROOT
from utils.i18n import say, text

# The grader finds the score in a display output of this type (see `Lab.score`, `regrade`).
SCORE_MIMETYPE = "application/vnd.gpu-tpu-course.score+json"


# --- a lab and its score ------------------------------------------------------------------------

COURSE = ROOT


class Lab:
    """The exercises of one lab, defined in `labs/checks/labNN.py`.  Its source
    (`labs/src/NN_*.py`) gives the lab's title and each exercise's title (its `## N. Title`
    heading in both languages), solution and answer's name."""

    def __init__(self, number: str, course: Path = COURSE):
        sources = sorted((course / "labs" / "src").glob(f"{number}_*.py"))
        if len(sources) != 1:
            raise ValueError(f"expected one source labs/src/{number}_*.py, found {len(sources)}")
        self.number = number
        self.source = sources[0]
        header = read_header(self.source)
        self.title: Text = (header["title"]["en"], header["title"]["de"])
        self.cells = read_cells(self.source)
        self.headings = exercise_titles(self.cells)
        self.exercises: list[Exercise] = []

    def exercise(
        self, name: str, *, points: int, hint: Text, title: Text | None = None
    ) -> Callable[[Test], Exercise]:
        """Decorate a test to make it exercise number len+1 (q1, q2, ... in this order).  Its
        title is its heading in the source unless `title` (en, de) is given."""
        if any(e.name == name for e in self.exercises):
            raise ValueError(f"Lab {self.number} has an exercise {name!r} already")

        def add(test: Test) -> Exercise:
            number = len(self.exercises) + 1
            named = title if title is not None else self.heading(number)
            exercise = Exercise(self.cells, number, name, named, points, test, hint)
            self.exercises.append(exercise)
            return exercise

        return add

    def heading(self, number: int) -> Text:
        """Exercise `number`'s title (en, de): its `## N. Title` heading in each language."""
        found = self.headings.get(number, {})
        missing = [lang for lang in ("en", "de") if lang not in found]
        if missing:
            raise ValueError(
                f"{self.source.name} has no heading '## {number}. ...' in {', '.join(missing)}"
            )
        return (found["en"], found["de"])

    def summary(self) -> Score:
        """The score so far: what the last check of each exercise in this notebook said."""
        return Score(
            self.number,
            self.title,
            tuple(
                ExerciseScore.of(e.number, e.name, e.title, e.points, e.result)
                for e in self.exercises
            ),
        )

    def score(self) -> None:
        """Show the score table (what the checks in this notebook said so far)."""
        summary = self.summary()
        _show(summary.table(), {"labs": [summary.as_dict()]})

    def ready(self) -> None:
        """The one line the checks cell prints."""
        say(
            "Lab {lab}: {n} exercises ready.",
            "Lab {lab}: {n} Aufgaben bereit.",
            lab=self.number,
            n=len(self.exercises),
        )


@dataclass(frozen=True)
class ExerciseScore:
    """One row of a score: an exercise's points and the status of its last check."""

    number: int
    name: str
    title: Text
    points: int  # earned: all of `max` when it passed, else 0
    max: int
    status: str  # PASSED, WRONG, NOT_ATTEMPTED, ERROR or NOT_CHECKED
    key: str  # which feedback (`Result.key`), NOT_CHECKED before the first check

    @classmethod
    def of(cls, number: int, name: str, title: Text, points: int, result: Result | None):
        """The row of an exercise worth `points` whose last check gave `result` (None: none yet)."""
        if result is None:
            return cls(number, name, title, 0, points, NOT_CHECKED, NOT_CHECKED)
        status = str(result.status)
        earned = points if status == PASSED else 0
        return cls(number, name, title, earned, points, status, str(result.key))

    def as_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "name": self.name,
            "title": {"en": self.title[0], "de": self.title[1]},
            "points": self.points,
            "max": self.max,
            "status": self.status,
            "key": self.key,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExerciseScore:
        title = (data["title"]["en"], data["title"]["de"])
        fields = ("points", "max", "status", "key")
        return cls(data["number"], data["name"], title, *(data[f] for f in fields))


@dataclass(frozen=True)
class Score:
    """The points of one lab: what the notebook shows (`Lab.score`), what the grader's re-check
    reports (`regrade`) and what its JSON holds, in one form.  `as_dict()` is the JSON:

        {"lab": "00", "title": {"en": ..., "de": ...}, "score": 7, "max": 10,
         "exercises": [{"number": 1, "name": "device", "title": {"en": ..., "de": ...},
                        "points": 2, "max": 2, "status": "passed", "key": "ok"}, ...]}
    """

    lab: str
    title: Text
    exercises: tuple[ExerciseScore, ...]

    @property
    def score(self) -> int:
        return sum(e.points for e in self.exercises)

    @property
    def max(self) -> int:
        return sum(e.max for e in self.exercises)

    def as_dict(self) -> dict[str, Any]:
        return {
            "lab": self.lab,
            "title": {"en": self.title[0], "de": self.title[1]},
            "score": self.score,
            "max": self.max,
            "exercises": [e.as_dict() for e in self.exercises],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Score:
        """A score read back from its JSON (the grader reads the re-check's display output)."""
        title = (data["title"]["en"], data["title"]["de"])
        return cls(data["lab"], title, tuple(map(ExerciseScore.from_dict, data["exercises"])))

    def table(self, heading: bool = True) -> str:
        """A plain-text table in the learner's language, under a line with the lab's title."""
        rows = [
            (
                str(e.number),
                text(*e.title),
                f"{e.points} / {e.max}",
                f"{SYMBOLS[e.status]} {text(*STATUS_NAMES[e.status])}",
            )
            for e in self.exercises
        ]
        rows.append(("", text("total", "Summe"), f"{self.score} / {self.max}", ""))
        head = (
            "#",
            text("exercise", "Aufgabe"),
            text("points", "Punkte"),
            text("status", "Status"),
        )
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
        lines = [f"Lab {self.lab} · {text(*self.title)}"] if heading else []
        for row in [head, *rows]:
            cells = zip(row, widths, strict=True)
            lines.append("  ".join(cell.ljust(w) for cell, w in cells).rstrip())
        return "\n".join(lines)


def regrade(namespace: dict[str, Any], number: str, seed: int) -> None:
    """What the grader runs after a submission: every exercise checked again on the answers in
    `namespace`, with new random inputs, by checks imported afresh (`labs.kit.grade` removes the
    course's modules from `sys.modules` first), then the score shown.  Whatever the submission
    did to `qN.result`, to `check` or to the checks module it imported counts for nothing here;
    and the score is put together from values taken before any answer runs, so an answer can't
    rewrite it while it is checked."""
    import importlib

    # Taken now, before any answer runs: an answer that patches them while it is checked
    # changes nothing.
    show, row, as_dict, table = _show, ExerciseScore.of, Score.as_dict, Score.table
    lab = importlib.import_module(f"labs.checks.lab{number}").lab
    plan = [(e, e.number, e.name, e.title, e.points, e.answer) for e in lab.exercises]
    rows = []
    for exercise, n, name, title, points, answer in plan:
        result = exercise.evaluate(namespace.get(answer, ____), seed=seed + n)
        rows.append(row(n, name, title, points, result))
    score = Score(number, lab.title, tuple(rows))
    show(table(score), {"labs": [as_dict(score)]})


def _show(table: str, data: dict[str, Any]) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        get_ipython = None
    if get_ipython is None or get_ipython() is None:  # plain Python: text only
        print(table)
        return
    display({"text/plain": table, SCORE_MIMETYPE: data}, raw=True)
