"""Every lab: its checks module rejects plausible wrong answers, each with the feedback meant for
it, passes right answers on fresh random inputs, shows a solution that passes, and its notebooks
grade as they should: the solution with full marks, the untouched student version with zero.

Each lab keeps its answers in `tests/labs/cases_labNN.py` (a dict CASES of `Case`s, keyed by
(source stem, exercise name)), which this file collects; `test_every_exercise_has_cases` fails
until a new lab's exercises all have cases.  The checks are imported as modules
(`labs.checks.labNN`), as the notebooks import them.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType

import nbformat
import pytest

torch = pytest.importorskip("torch")  # the Python 3.13 check of test-compat has no torch

from labs.kit import ERROR, NOT_ATTEMPTED, PASSED, WRONG, Exercise, ____  # noqa: E402
from labs.kit.grade import grade_notebook  # noqa: E402
from labs.kit.sources import read_cells  # noqa: E402
from tests.labs.labcase import Case  # noqa: E402
from tests.nbval_holes import ENGLISH_NUMBER  # noqa: E402
from utils import i18n  # noqa: E402
from utils.course import LANGUAGES, ROOT, notebooks  # noqa: E402

LABS = sorted(p.stem for p in (ROOT / "labs/src").glob("[0-9][0-9]_*.py"))
SEEDS = range(6)


def load_lab(stem: str) -> ModuleType:
    """The checks module of a lab (`labs.checks.lab01` for `01_timing_matmul`)."""
    return importlib.import_module(f"labs.checks.lab{stem[:2]}")


def exercise(stem: str, name: str) -> Exercise:
    return next(e for e in load_lab(stem).lab.exercises if e.name == name)


def starter(*args):
    return ____  # what the student notebook holds: `# YOUR CODE HERE` + `return ____`


CASES: dict[tuple[str, str], Case] = {}
for _path in sorted(Path(__file__).parent.glob("cases_lab[0-9][0-9].py")):
    CASES.update(importlib.import_module(f"tests.labs.{_path.stem}").CASES)


def exercise_ids() -> list[tuple[str, str]]:
    return [(stem, e.name) for stem in LABS for e in load_lab(stem).lab.exercises]


def test_every_exercise_has_cases():
    assert set(exercise_ids()) == set(CASES)
    for case in CASES.values():
        assert len(case.right) >= 2 and len(case.wrong) >= 2


@pytest.mark.parametrize("stem", LABS)
def test_exercises_are_named_q1_q2_in_order_and_bound_in_one_short_cell(stem):
    module = load_lab(stem)
    labels = [e.label for e in module.lab.exercises]
    for exercise in module.lab.exercises:
        assert getattr(module, exercise.label) is exercise, f"{stem}: {exercise.label}"
    checks = [c for c in read_cells(ROOT / f"labs/src/{stem}.py") if 'tags=["checks"]' in c.header]
    assert len(checks) == 1, "one checks cell, which binds the module"
    source = checks[0].source
    assert len(source.splitlines()) <= 20, "the checks belong in the module, not the notebook"
    names = re.search(rf"from labs\.checks\.lab{stem[:2]} import (\([^)]*\)|[^\n]*)", source)
    assert names, f"the checks cell does not import labs.checks.lab{stem[:2]}"
    bound = {n.strip() for n in names[1].strip("()").split(",") if n.strip()}
    assert bound >= {"lab", *labels}


def german_feedback(ex: Exercise, answer, seed: int, english) -> None:
    """The same wrong answer in German: the same key, a message of its own, German numbers."""
    i18n.set_language("de")
    try:
        german = ex.evaluate(answer, seed=seed)
    finally:
        i18n.set_language("en")
    assert german.key == english.key and german.message and german.message != english.message
    english_number = re.search(ENGLISH_NUMBER, german.message)
    assert not english_number, f"English number in German: {english_number[0]!r}"


EVERY_SEED = range(50)
TIMED = sorted(k for k, case in CASES.items() if case.timing)  # also tested under load
UNTIMED = sorted(k for k, case in CASES.items() if not case.timing)


@pytest.mark.parametrize("stem, name", TIMED)
def test_timed_answers_pass_and_wrong_ones_get_their_feedback_in_both_languages(stem, name):
    """A few seeds: each seed times real work (the under-load test runs them again)."""
    ex = exercise(stem, name)
    for answer in CASES[stem, name].right:
        for seed in (*SEEDS, None):
            result = ex.evaluate(answer, seed=seed)
            assert result.status == PASSED, (seed, result)
    for answer, key in CASES[stem, name].wrong:
        for seed in SEEDS:
            result = ex.evaluate(answer, seed=seed)
            assert (result.status, result.key) == (WRONG, key), (seed, result)
            german_feedback(ex, answer, seed, result)


# The 50 seeds in five items: a slow exercise's seeds can run on both workers of the suite.
CHUNKS = [EVERY_SEED[i : i + 10] for i in range(0, len(EVERY_SEED), 10)]


@pytest.mark.parametrize("seeds", range(len(CHUNKS)), ids=lambda n: f"seeds{n * 10}+")
@pytest.mark.parametrize("stem, name", UNTIMED)
def test_every_seed_rejects_each_wrong_answer_and_passes_each_right_one(stem, name, seeds):
    """The draws reach every boundary on every seed: no answer is right by luck of the draw.
    Right answers also pass on fresh random inputs (no seed); on the first seeds each wrong
    answer gets its feedback in German too."""
    ex = exercise(stem, name)
    fresh = (None,) if seeds == len(CHUNKS) - 1 else ()
    for seed in (*CHUNKS[seeds], *fresh):
        for answer in CASES[stem, name].right:
            result = ex.evaluate(answer, seed=seed)
            assert result.status == PASSED, (seed, answer.__name__, result)
        if seed is None:
            continue
        for answer, key in CASES[stem, name].wrong:
            result = ex.evaluate(answer, seed=seed)
            assert (result.status, result.key) == (WRONG, key), (seed, answer.__name__, result)
            if seed in SEEDS:
                german_feedback(ex, answer, seed, result)


@pytest.mark.parametrize("stem, name", sorted(CASES))
def test_starter_is_not_attempted_and_errors_are_explained(stem, name, capsys):
    ex = exercise(stem, name)
    assert ex.evaluate(starter).status == NOT_ATTEMPTED
    assert ex.evaluate(____).status == NOT_ATTEMPTED
    case = CASES[stem, name]
    ex.check(case.raising)  # prints feedback, never raises
    assert (ex.result.status, ex.result.key) == (ERROR, "raised")
    assert case.raising_line in ex.result.message
    assert "Traceback" not in capsys.readouterr().out


@pytest.mark.parametrize("stem, name", sorted(CASES))
def test_hint_and_solution(stem, name):
    ex = exercise(stem, name)
    english, german = ex.hint_text
    assert english.strip() and german.strip() and english != german
    # The solution shown to a learner is the source's solution block, and it passes its check.
    for lang in ("en", "de"):
        code = ex.solution_code(lang)
        assert "SOLUTION" not in code and "STARTER" not in code and "____" not in code
        namespace: dict = {}
        exec(compile(code, f"<{stem} {ex.label} solution>", "exec"), namespace)
        assert ex.evaluate(namespace[ex.answer]).status == PASSED, code


# --- the built notebooks ------------------------------------------------------------------------

SOLUTIONS = sorted(ROOT.glob("labs/solutions/*/*.ipynb"))
STUDENTS = sorted([*ROOT.glob("labs/en/*.ipynb"), *ROOT.glob("labs/de/*.ipynb")])


# Every built lab notebook and its lab's number, as the course model names them.
BUILT = {
    ROOT / path: lab.number
    for lab in notebooks(kind="lab")
    for lang in LANGUAGES
    for path in lab.outputs(lang).values()
}


def test_every_lab_has_its_four_notebooks():
    assert len(SOLUTIONS) == len(STUDENTS) == 2 * len(LABS) > 0
    assert set(BUILT) == {*SOLUTIONS, *STUDENTS}


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("path", SOLUTIONS, ids=rel)
def test_solution_notebook_scores_full_marks(path):
    grade = grade_notebook(path, timeout=300)
    assert grade.status == "graded", grade.verdict
    assert grade.lab == BUILT[path]
    assert grade.cell_errors == 0
    assert "solution notebook" in grade.verdict  # a trainer sees it if one is handed in
    assert grade.max > 0 and grade.score == grade.max
    assert {e["status"] for e in grade.exercises} == {PASSED}


@pytest.mark.parametrize("path", STUDENTS, ids=rel)
def test_student_notebook_runs_and_scores_zero(path):
    grade = grade_notebook(path, timeout=300)
    assert grade.status == "graded", grade.verdict
    assert grade.cell_errors == 0  # the untouched notebook runs top to bottom without an error
    assert grade.max > 0 and grade.score == 0
    assert {e["status"] for e in grade.exercises} == {NOT_ATTEMPTED}
    # and it gives nothing away: no checks, no solutions
    nb = nbformat.read(path, as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    marker = "# DEIN CODE HIER" if "/de/" in rel(path) else "# YOUR CODE HERE"
    assert sum(marker in c for c in code) == len(grade.exercises)
    assert not any("SOLUTION" in c or "STARTER" in c for c in code)
