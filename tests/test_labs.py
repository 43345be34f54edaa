"""Every lab: its checks reject plausible wrong answers, each with the feedback meant for it, pass
right answers on fresh random inputs, and its notebooks grade as they should: the solution with
full marks, the untouched student version with zero, both without a single error.

Lab 00's answers are below; every other lab keeps its own in `tests/cases_labNN.py` (a dict
CASES of `Case`s), which this file collects. `test_every_exercise_has_cases` fails until a new
lab's exercises all have cases.
"""

from __future__ import annotations

import importlib
import math
import re
from pathlib import Path
from typing import Any

import nbformat
import numpy as np
import pytest

torch = pytest.importorskip("torch")  # the Python 3.13 check of test-compat has no torch

from tests.labcase import Case  # noqa: E402
from utils import i18n  # noqa: E402
from utils.checks import ERROR, NOT_ATTEMPTED, PASSED, WRONG, ____  # noqa: E402
from utils.grade import grade_notebook  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LABS = sorted(p.stem for p in (ROOT / "labs/src").glob("[0-9][0-9]_*.py"))
SEEDS = range(6)


def load_lab(stem: str, lang: str = "en") -> dict[str, Any]:
    """The namespace of a lab's checks cells (tag "checks"), run as the notebook runs them."""
    namespace: dict[str, Any] = {"__name__": f"lab_{stem}"}
    nb = nbformat.read(ROOT / "labs/solutions" / lang / f"{stem}.ipynb", as_version=4)
    cells = [c for c in nb.cells if "checks" in c.metadata.get("tags", [])]
    assert cells, f"{stem} has no checks cell"
    for cell in cells:
        exec(compile(cell.source, f"<{stem} checks>", "exec"), namespace)
    return namespace


# --- answers a learner might give ----------------------------------------------------------------


def starter(*args):
    return ____  # what the student notebook holds: `# YOUR CODE HERE` + `return ____`


# Lab 00 · q1. Which feedback a wrong device answer gets depends on the machine the test runs on.
if torch.cuda.is_available():
    MACHINE = "cuda"
elif torch.backends.mps.is_available():
    MACHINE = "mps"
else:
    MACHINE = "cpu"


def on(**keys: str) -> str:
    return keys[MACHINE]


def always(value):
    return lambda: value


def glossary_line():  # the seed's classic line: misses a Mac's GPU
    return "cuda" if torch.cuda.is_available() else "cpu"


def lesson_00_pick_device():  # lesson 00's version: torch.accelerator first
    if hasattr(torch, "accelerator") and torch.accelerator.is_available():
        return torch.accelerator.current_accelerator()
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def with_index():
    return (
        "cuda:0"
        if torch.cuda.is_available()
        else "mps"
        if torch.backends.mps.is_available()
        else "cpu"
    )


def device_raising():
    return {"cuda": "cuda"}["gpu"]


# Lab 00 · q3 and q4 get (shape, dtype) and (m, k, n, dtype).
def elements(shape):
    return math.prod(shape)


def moved(m, k, n):
    return m * k + k * n + m * n


def jax_float32(value):
    jnp = pytest.importorskip("jax.numpy")
    return jnp.float32(value)


CASES: dict[tuple[str, str], Case] = {
    ("00_warmup", "device"): Case(
        right=[lesson_00_pick_device, with_index, lambda: torch.device(with_index())],
        wrong=[
            (always("cuda"), on(cpu="no_cuda", mps="no_cuda", cuda="no_fallback")),
            (
                always("cpu"),
                on(cpu="ignores_cuda", mps="missed_accelerator", cuda="missed_accelerator"),
            ),
            (glossary_line, on(cpu="ignores_mps", mps="missed_accelerator", cuda="ignores_mps")),
            (always("mps"), on(cpu="no_mps", mps="no_fallback", cuda="no_mps")),
            (always("gpu"), "unknown_device"),
            (always(0), "not_a_device"),
        ],
        raising=device_raising,
        raising_line='return {"cuda": "cuda"}["gpu"]',
    ),
    ("00_warmup", "flops"): Case(
        right=[
            lambda m, k, n: 2 * m * k * n,
            lambda m, k, n: float(2 * m * k * n),
            lambda m, k, n: np.int64(2) * m * k * n,
            lambda m, k, n: torch.tensor(2 * m * k * n),
            lambda m, k, n: jax_float32(2 * m * k * n),
        ],
        wrong=[
            (lambda m, k, n: m * k * n, "mkn"),
            (lambda m, k, n: m * n * (2 * k - 1), "exact_count"),
            (lambda m, k, n: m * n, "outputs_only"),
            (lambda m, k, n: 2 * n**3, "square"),
            (lambda m, k, n: m + k + n, "wrong"),
        ],
        raising=lambda m, k, n: 2 * m * k * n / (m - m),
        raising_line="raising=lambda m, k, n: 2 * m * k * n / (m - m)",
    ),
    ("00_warmup", "memory"): Case(
        right=[
            lambda shape, dtype: elements(shape) * dtype.itemsize / 2**30,
            lambda shape, dtype: np.prod(shape, dtype=np.float64) * dtype.itemsize / 1024**3,
            lambda shape, dtype: (
                torch.tensor([], dtype=dtype).element_size() * elements(shape) / 2**30
            ),
            lambda shape, dtype: torch.tensor(elements(shape) * dtype.itemsize / 2**30),
        ],
        wrong=[
            (lambda shape, dtype: elements(shape) * dtype.itemsize / 1e9, "gb"),
            (lambda shape, dtype: elements(shape) * dtype.itemsize * 8 / 2**30, "bits"),
            (lambda shape, dtype: elements(shape) * 4 / 2**30, "ignores_dtype"),
            (lambda shape, dtype: sum(shape) * dtype.itemsize / 2**30, "sum_not_product"),
            (lambda shape, dtype: round(elements(shape) * dtype.itemsize / 2**30, 2), "rounded"),
            (lambda shape, dtype: elements(shape) * dtype.itemsize / 2**20, "unit"),
        ],
        # torch.finfo knows only float dtypes: fails for int8, which every check tries.
        raising=lambda shape, dtype: elements(shape) * torch.finfo(dtype).bits / 8 / 2**30,
        raising_line="torch.finfo(dtype).bits",
    ),
    ("00_warmup", "intensity"): Case(
        right=[
            lambda m, k, n, dtype: 2 * m * k * n / (moved(m, k, n) * dtype.itemsize),
            lambda m, k, n, dtype: (
                np.float32(2 * m * k * n) / np.float32(moved(m, k, n) * dtype.itemsize)
            ),
            lambda m, k, n, dtype: (
                torch.tensor(2.0 * m * k * n) / (moved(m, k, n) * dtype.itemsize)
            ),
        ],
        wrong=[
            (
                lambda m, k, n, dtype: 2 * m * k * n / ((m * k + k * n) * dtype.itemsize),
                "no_output",
            ),
            (
                lambda m, k, n, dtype: m * k * n / (moved(m, k, n) * dtype.itemsize),
                "flops_convention",
            ),
            (lambda m, k, n, dtype: moved(m, k, n) * dtype.itemsize / (2 * m * k * n), "inverted"),
            (lambda m, k, n, dtype: 2 * m * k * n / (moved(m, k, n) * 4), "ignores_dtype"),
            (lambda m, k, n, dtype: 2 * m * k * n / (moved(m, k, n) * dtype.itemsize * 8), "bits"),
            (lambda m, k, n, dtype: 2 * n / (3 * dtype.itemsize), "square"),
        ],
        # A tensor has .element_size(), a dtype has not.
        raising=lambda m, k, n, dtype: 2 * m * k * n / (moved(m, k, n) * dtype.element_size()),
        raising_line="dtype.element_size()",
    ),
}


for _path in sorted(Path(__file__).parent.glob("cases_lab[0-9][0-9].py")):
    CASES.update(importlib.import_module(f"tests.{_path.stem}").CASES)


def exercise_ids() -> list[tuple[str, str]]:
    return [(stem, e.name) for stem in LABS for e in load_lab(stem)["lab"].exercises]


def test_every_exercise_has_cases():
    assert set(exercise_ids()) == set(CASES)
    for case in CASES.values():
        assert len(case.right) >= 2 and len(case.wrong) >= 2


def test_exercises_are_named_q1_q2_in_order():
    for stem in LABS:
        namespace = load_lab(stem)
        for exercise in namespace["lab"].exercises:
            assert namespace[exercise.label] is exercise, (
                f"{stem}: {exercise.label} is not {exercise.name}"
            )


def exercise(stem: str, name: str):
    return next(e for e in load_lab(stem)["lab"].exercises if e.name == name)


@pytest.mark.parametrize("stem, name", sorted(CASES))
def test_right_answers_pass_on_fresh_random_inputs(stem, name):
    ex = exercise(stem, name)
    for answer in CASES[stem, name].right:
        for seed in (*SEEDS, None):
            result = ex.evaluate(answer, seed=seed)
            assert result.status == PASSED, (seed, result)


@pytest.mark.parametrize("stem, name", sorted(CASES))
def test_wrong_answers_get_their_feedback_in_both_languages(stem, name):
    ex = exercise(stem, name)
    for answer, key in CASES[stem, name].wrong:
        for seed in SEEDS:
            result = ex.evaluate(answer, seed=seed)
            assert (result.status, result.key) == (WRONG, key), (seed, result)
            i18n.set_language("de")
            german = ex.evaluate(answer, seed=seed)
            i18n.set_language("en")
            assert german.key == key and german.message and german.message != result.message


@pytest.mark.parametrize("stem, name", sorted(CASES))
def test_starter_is_not_attempted_and_errors_are_explained(stem, name, capsys):
    ex = exercise(stem, name)
    assert ex.evaluate(starter).status == NOT_ATTEMPTED
    case = CASES[stem, name]
    ex.check(case.raising)  # prints feedback, never raises
    assert (ex.result.status, ex.result.key) == (ERROR, "raised")
    assert case.raising_line in ex.result.message
    assert "Traceback" not in capsys.readouterr().out


@pytest.mark.parametrize("stem, name", sorted(CASES))
def test_hint_and_solution_texts(stem, name):
    ex = exercise(stem, name)
    for english, german in (ex.hint_text, ex.solution_text):
        assert english.strip() and german.strip()
    assert ex.hint_text[0] != ex.hint_text[1]
    # The solution shown to a learner passes its own check, in both languages.
    for text in ex.solution_text:
        namespace = {"torch": torch, "math": math}
        exec(text, namespace)
        function = namespace[re.search(r"def (\w+)\(", text)[1]]
        assert ex.evaluate(function).status == PASSED, text


# --- the built notebooks ------------------------------------------------------------------------

SOLUTIONS = sorted(ROOT.glob("labs/solutions/*/*.ipynb"))
STUDENTS = sorted([*ROOT.glob("labs/en/*.ipynb"), *ROOT.glob("labs/de/*.ipynb")])


def test_every_lab_has_its_four_notebooks():
    assert len(SOLUTIONS) == len(STUDENTS) == 2 * len(LABS) > 0


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("path", SOLUTIONS, ids=rel)
def test_solution_notebook_scores_full_marks(path):
    grade = grade_notebook(path, timeout=300)
    assert grade.status == "graded", grade.verdict
    assert grade.lab == path.stem[:2]
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
    # and it gives nothing away outside the (hidden) checks cell
    nb = nbformat.read(path, as_version=4)
    code = [
        c.source
        for c in nb.cells
        if c.cell_type == "code" and "checks" not in c.metadata.get("tags", [])
    ]
    assert sum("# YOUR CODE HERE" in c for c in code) == len(grade.exercises)
    assert not any("SOLUTION" in c or "STARTER" in c for c in code)
