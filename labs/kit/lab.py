"""Exercises that check themselves: the API of the labs.

Each lab's checks live in a module, `labs/checks/labNN.py`, one small test per exercise:

    lab = Lab("01")  # reads labs/src/01_*.py: the title, each solution, each answer's name

    @lab.exercise("batched_flops", title=("FLOPs of a batched matmul", "FLOPs einer
                  Batch-Matmul"), points=2, hint=("...", "..."))
    def q1(batched_matmul_flops, rng):
        ...

The notebook binds them in one short cell (`from labs.checks.lab01 import lab, q1, q2`).  The
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
from pathlib import Path
from typing import Any

from labs.kit.answers import Text
from labs.kit.blank import ____
from labs.kit.exercise import NOT_CHECKED, PASSED, STATUS_NAMES, SYMBOLS, Exercise, Test
from labs.kit.sources import read_cells, read_header
from utils.course import ROOT
from utils.i18n import say, text

# The grader finds the score in a display output of this type (see `Lab.score`, `regrade`).
SCORE_MIMETYPE = "application/vnd.gpu-tpu-course.score+json"


# --- a lab and its score ------------------------------------------------------------------------

COURSE = ROOT


class Lab:
    """The exercises of one lab, defined in `labs/checks/labNN.py`.  Its source
    (`labs/src/NN_*.py`) gives the title, the solution of each exercise and its answer's name."""

    def __init__(self, number: str, course: Path = COURSE):
        sources = sorted((course / "labs" / "src").glob(f"{number}_*.py"))
        if len(sources) != 1:
            raise ValueError(f"expected one source labs/src/{number}_*.py, found {len(sources)}")
        self.number = number
        self.source = sources[0]
        header = read_header(self.source)
        self.title: Text = (header["title"]["en"], header["title"]["de"])
        self.cells = read_cells(self.source)
        self.exercises: list[Exercise] = []

    def exercise(
        self, name: str, *, title: Text, points: int, hint: Text
    ) -> Callable[[Test], Exercise]:
        """Decorate a test to make it exercise number len+1 (q1, q2, ... in this order)."""
        if any(e.name == name for e in self.exercises):
            raise ValueError(f"Lab {self.number} has an exercise {name!r} already")

        def add(test: Test) -> Exercise:
            number = len(self.exercises) + 1
            exercise = Exercise(self, number, name, title, points, test, hint)
            self.exercises.append(exercise)
            return exercise

        return add

    def summary(self) -> dict[str, Any]:
        """The score, machine-readable: titles in both languages, statuses as the constants above."""
        exercises = [
            {
                "number": e.number,
                "name": e.name,
                "title": {"en": e.title[0], "de": e.title[1]},
                "points": e.earned,
                "max": e.points,
                "status": e.result.status if e.result else NOT_CHECKED,
                "key": e.result.key if e.result else NOT_CHECKED,
            }
            for e in self.exercises
        ]
        return {
            "lab": self.number,
            "title": {"en": self.title[0], "de": self.title[1]},
            "score": sum(e["points"] for e in exercises),
            "max": sum(e["max"] for e in exercises),
            "exercises": exercises,
        }

    def table(self) -> str:
        return score_table(self.summary())

    def score(self) -> None:
        """Show the score table (what the checks in this notebook said so far)."""
        _show(self.table(), {"labs": [self.summary()]})

    def ready(self) -> None:
        """The one line the checks cell prints."""
        say(
            "Lab {lab}: {n} exercises ready.",
            "Lab {lab}: {n} Aufgaben bereit.",
            lab=self.number,
            n=len(self.exercises),
        )


def score_table(summary: dict[str, Any]) -> str:
    """A `Lab.summary()` as a plain-text table in the learner's language."""
    rows = [
        (
            str(e["number"]),
            text(e["title"]["en"], e["title"]["de"]),
            f"{e['points']} / {e['max']}",
            f"{SYMBOLS[e['status']]} {text(*STATUS_NAMES[e['status']])}",
        )
        for e in summary["exercises"]
    ]
    rows.append(("", text("total", "Summe"), f"{summary['score']} / {summary['max']}", ""))
    head = ("#", text("exercise", "Aufgabe"), text("points", "Punkte"), text("status", "Status"))
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    title = text(summary["title"]["en"], summary["title"]["de"])
    lines = [f"Lab {summary['lab']} · {title}"]
    for row in [head, *rows]:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


def regrade(namespace: dict[str, Any], number: str, seed: int) -> None:
    """What the grader runs after a submission: every exercise checked again on the answers in
    `namespace`, with new random inputs, by checks imported afresh (`labs.kit.grade` removes the
    course's modules from `sys.modules` first), then the score shown.  Whatever the submission
    did to `qN.result`, to `check` or to the checks module it imported counts for nothing here;
    and the score is put together from values taken before any answer runs, so an answer can't
    rewrite it while it is checked."""
    import importlib

    show, table = _show, score_table  # taken now: an answer that patches them changes nothing
    lab = importlib.import_module(f"labs.checks.lab{number}").lab
    plan = [(e, e.number, e.name, e.title, e.points, e.answer) for e in lab.exercises]
    rows = []
    for exercise, n, name, title, points, answer in plan:
        result = exercise.evaluate(namespace.get(answer, ____), seed=seed + n)
        status, key = str(result.status), str(result.key)
        earned = points if status == PASSED else 0
        rows.append(
            {"number": n, "name": name, "title": {"en": title[0], "de": title[1]},
             "points": earned, "max": points, "status": status, "key": key}
        )  # fmt: skip
    summary = {
        "lab": number,
        "title": {"en": lab.title[0], "de": lab.title[1]},
        "score": sum(r["points"] for r in rows),
        "max": sum(r["max"] for r in rows),
        "exercises": rows,
    }
    show(table(summary), {"labs": [summary]})


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
