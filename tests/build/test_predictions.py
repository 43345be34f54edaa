"""Predict, then measure: every lesson from 01 on asks the learner for at least two numbers before
a cell measures or computes them, and shows how close each prediction was.

A question is a code cell of its own that holds the learner's guess, shipped empty
(`my_ridge_point = None`), and a later cell that passes that name to `utils.predict.reveal`
as the prediction.  Both stand on the main path of the built notebook (before its optional
"Deeper" section), in each language, with a markdown cell before the guess that asks the
question.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tests.build.test_durations import DEEPER
from utils.course import ROOT, lessons

AT_LEAST = 2
LESSONS = [lesson for lesson in lessons() if lesson.number != "00"]


def _tree(source: str) -> ast.Module | None:
    # IPython's magics and shell lines are no Python; they never hold a guess or a reveal
    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _guesses(tree: ast.Module) -> list[str]:
    """Names the cell sets to None at its top level: the learner's empty guesses."""
    return [
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and node.value.value is None
        for target in node.targets
        if isinstance(target, ast.Name) and target.id.startswith("my_")
    ]


def _revealed(tree: ast.Module) -> list[str]:
    """Names passed as the prediction to reveal(...) anywhere in the cell."""
    return [
        node.args[0].id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "reveal"
        and node.args
        and isinstance(node.args[0], ast.Name)
    ]


def questions(notebook: Path) -> list[str]:
    """The guesses of a built notebook's main path that a later cell reveals, in order, each
    asked in a markdown cell before it."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    guessed: dict[str, int] = {}  # name → index of the cell that holds the empty guess
    asked: list[str] = []
    for index, cell in enumerate(cells):
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            if any(line.startswith(DEEPER) for line in source.splitlines()):
                break
            continue
        tree = _tree(source) if cell["cell_type"] == "code" else None
        if tree is None:
            continue
        for name in _revealed(tree):
            if name in guessed and guessed[name] < index and name not in asked:
                asked.append(name)
        for name in _guesses(tree):
            if index and cells[index - 1]["cell_type"] == "markdown":
                guessed.setdefault(name, index)
    return asked


def _built(lesson, lang: str) -> Path:
    return ROOT / "notebooks" / lang / f"{lesson.path.stem}.ipynb"


@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.number for lesson in LESSONS])
def test_every_lesson_asks_for_two_predictions_before_it_measures(lesson, lang):
    asked = questions(_built(lesson, lang))
    assert len(asked) >= AT_LEAST, (
        f"lesson {lesson.number} ({lang}) asks for {len(asked)} prediction(s) on its main path "
        f"({asked}); it needs {AT_LEAST}: a markdown question, a cell `my_… = None`, a later "
        "cell ending in reveal(my_…, answer)"
    )


def _notebook(tmp_path: Path, cells: list[tuple[str, str]]) -> Path:
    path = tmp_path / "n.ipynb"
    path.write_text(
        json.dumps({"cells": [{"cell_type": k, "metadata": {}, "source": s} for k, s in cells]})
    )
    return path


def test_what_counts_as_a_question(tmp_path):
    ask = ("markdown", "**Predict first.** How many?")
    cells = [
        ask,
        ("code", "my_a = None  # your guess"),
        ("code", "%time x = 1\nreveal(my_a, 2.0, unit='x')"),
        ("code", "my_b = None"),  # no question asked before it
        ("code", "reveal(my_b, 1.0)"),
        ask,
        ("code", "my_c = None\nreveal(my_c, 3.0)"),  # revealed in the cell of the guess
        ask,
        ("code", "my_d = None"),
        ("markdown", "## Deeper: more\ntext"),
        ("code", "reveal(my_d, 4.0)"),  # past the main path
    ]
    assert questions(_notebook(tmp_path, cells)) == ["my_a"]
