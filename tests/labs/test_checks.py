"""The lab API (labs/kit/lab.py): blanks, explained errors, numbers from every framework, scores."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # the Python 3.13 check of test-compat has no torch

from labs.kit import (  # noqa: E402
    ERROR,
    NOT_ATTEMPTED,
    NOT_CHECKED,
    PASSED,
    WRONG,
    Lab,
    Score,
    Wrong,
    ____,
    allclose,
    as_number,
    call,
    close,
    to_numpy,
)
from labs.kit.sources import exercise_titles, read_cells  # noqa: E402
from utils import i18n  # noqa: E402
from utils.course import ROOT  # noqa: E402


def square_test(answer, rng):
    """A tiny exercise: `answer(x)` must return x squared, tried on random x."""
    for _ in range(5):
        x = rng.randint(-1000, 1000)
        got = as_number(call(answer, x))
        if close(got, 2 * x) and x != 0:
            raise Wrong("doubled", "You double x; square it.")
        if not close(got, x * x):
            raise Wrong("wrong", f"For x={x} you return {got}, expected {x * x}.")
    return "Squared!"


LAB_SOURCE = """\
# ---
# jupyter:
#   course:
#     title:
#       en: Test lab
#       de: Testlab
# ---

# %%
def square(x):
    ### BEGIN SOLUTION
    # STARTER: return ____
    return x**2  # en: squared | de: quadriert
    ### END SOLUTION


q1.check(square)
"""


def new_lab(number: str) -> Lab:
    """A lab of a course folder of its own: one source, labs/src/NN_test.py."""
    course = Path(tempfile.mkdtemp())
    (course / "labs/src").mkdir(parents=True)
    (course / f"labs/src/{number}_test.py").write_text(LAB_SOURCE)
    return Lab(number, course=course)


def make_lab(number: str = "99") -> tuple[Lab, object]:
    lab = new_lab(number)
    q1 = lab.exercise("square", title=("Square", "Quadrat"), points=3, hint=("x*x", "x*x"))(
        square_test
    )
    return lab, q1


HEADINGS = """
# %% [markdown] lang="en"
# ## 1. Square a number

# %% [markdown] lang="de"
# Text davor.
#
# ## 1. Eine Zahl quadrieren
"""


def test_an_exercise_is_titled_by_its_heading_in_each_language():
    lab = new_lab("94")
    lab.cells += read_cells_of(HEADINGS)
    lab.headings = exercise_titles(lab.cells)
    q1 = lab.exercise("square", points=1, hint=("h", "h"))(square_test)
    assert q1.title == ("Square a number", "Eine Zahl quadrieren")
    with pytest.raises(ValueError, match="no heading '## 2. ...' in en, de"):
        lab.exercise("more", points=1, hint=("h", "h"))(square_test)


def test_a_heading_missing_in_one_language_is_refused():
    lab = new_lab("93")
    lab.cells += read_cells_of(HEADINGS.split('# %% [markdown] lang="de"')[0])
    lab.headings = exercise_titles(lab.cells)
    with pytest.raises(ValueError, match="in de"):
        lab.exercise("square", points=1, hint=("h", "h"))(square_test)


def read_cells_of(source: str) -> list:
    path = Path(tempfile.mkdtemp()) / "cells.py"
    path.write_text(source)
    return read_cells(path)


LABS = sorted(p.stem for p in (ROOT / "labs/src").glob("[0-9][0-9]_*.py"))


@pytest.mark.parametrize("stem", LABS)
def test_every_exercise_is_titled_by_the_source_in_both_languages(stem):
    """The title in the score table is the heading the learner reads above the exercise."""
    import importlib

    lab = importlib.import_module(f"labs.checks.lab{stem[:2]}").lab
    cells = read_cells(ROOT / f"labs/src/{stem}.py")
    for exercise in lab.exercises:
        for lang, title in zip(("en", "de"), exercise.title, strict=True):
            heading = f"# ## {exercise.number}. {title}"
            assert any(
                c.kind == "markdown" and c.lang == lang and heading in c.source.split("\n")
                for c in cells
            ), f"{stem} ({lang}) has no heading {heading!r}"


# --- the blank ----------------------------------------------------------------------------------


def starter(x):
    return ____


@pytest.mark.parametrize(
    "answer",
    [
        ____,  # the blank itself, passed instead of a function
        starter,  # the untouched starter: `return ____`
        lambda x: 2 * ____,  # half done: computing with the blank
        lambda x: ____ + x,
        lambda x: float(____),
        lambda x: np.float64(x) * ____,
        lambda x: torch.tensor(float(x)) * ____,
        lambda x: ____.shape,
        lambda x: (x, ____),
    ],
    ids=["blank", "starter", "2*blank", "blank+x", "float", "numpy", "torch", "attribute", "tuple"],
)
def test_blank_means_not_attempted(answer):
    _, q1 = make_lab()
    result = q1.evaluate(answer)
    assert (result.status, result.key) == (NOT_ATTEMPTED, "not_attempted")
    assert "____" in result.message


def test_blank_does_not_break_protocol_probes():
    # IPython and numpy probe private attributes; those must stay ordinary AttributeErrors.
    assert not hasattr(____, "_repr_html_")
    assert repr(____) == "____"


# --- check() never raises ------------------------------------------------------------------------


def divides_by_zero(x):
    return x / (x - x)


def test_raising_answer_is_explained_with_its_line(capsys):
    _, q1 = make_lab()
    q1.check(divides_by_zero)  # must not raise
    assert q1.result.status == ERROR and q1.result.key == "raised"
    message = q1.result.message
    assert "ZeroDivisionError" in message
    assert "return x / (x - x)" in message  # the learner's own line, not the check's
    assert "Traceback" not in message
    out = capsys.readouterr().out
    assert "💥" in out and "q1.hint()" in out and "return x / (x - x)" in out


def inverts_a_singular_matrix(x):
    return np.linalg.inv(np.zeros((2, 2)))[0, 0]


def test_error_inside_a_library_points_at_the_learners_line():
    _, q1 = make_lab()
    result = q1.evaluate(inverts_a_singular_matrix)
    assert result.key == "raised" and "LinAlgError" in result.message
    assert "np.linalg.inv(np.zeros((2, 2)))" in result.message


def test_wrong_signature_gets_the_signature_tip():
    _, q1 = make_lab()
    result = q1.evaluate(lambda: 1)  # takes no argument; the check passes one
    assert result.key == "raised" and "parameters" in result.message


def test_a_bug_in_the_check_is_reported_not_raised(capsys):
    lab = new_lab("98")
    broken = lab.exercise("bug", title=("b", "b"), points=1, hint=("h", "h"))(lambda a, rng: 1 / 0)
    broken.check(lambda: 1)
    assert (broken.result.status, broken.result.key) == (ERROR, "check_failed")
    assert "trainer" in capsys.readouterr().out


def test_not_callable_and_not_a_number():
    _, q1 = make_lab()
    assert q1.evaluate(42).key == "not_callable"
    assert q1.evaluate(lambda x: "81").key == "not_a_number"
    assert q1.evaluate(lambda x: [x * x, x]).key == "not_a_number"


def test_wrong_answer_gets_its_key_and_the_right_one_passes_on_many_inputs(capsys):
    _, q1 = make_lab()
    for seed in range(10):
        assert q1.evaluate(lambda x: 2 * x, seed=seed).key == "doubled"
        assert q1.evaluate(lambda x: x**3, seed=seed).key == "wrong"
        assert q1.evaluate(lambda x: x * x, seed=seed).status == PASSED
    q1.check(lambda x: 2 * x)
    out = capsys.readouterr().out
    assert out.startswith("❌ not yet: You double x") and "q1.solution()" in out


def test_feedback_in_german(capsys):
    _, q1 = make_lab()
    i18n.set_language("de")
    q1.check(starter)
    assert "Noch nicht bearbeitet" in capsys.readouterr().out
    q1.check(divides_by_zero)
    assert "Dein Code hat einen Fehler ausgelöst" in q1.result.message
    assert "in Zeile" in q1.result.message
    q1.hint()
    q1.solution()
    out = capsys.readouterr().out
    assert "Tipp: x*x" in out and "Lösung:\ndef square(x):\n    return x**2  # quadriert" in out
    assert q1.answer == "square" and "q1.check" not in out


# --- numbers and arrays from every framework ---------------------------------------------------


@pytest.mark.parametrize(
    "value, expected",
    [
        (3, 3),
        (2.5, 2.5),
        (np.int64(7), 7),
        (np.array(1.5), 1.5),
        (torch.tensor(4), 4),
        (torch.tensor(0.5, dtype=torch.bfloat16, requires_grad=True), 0.5),
    ],
)
def test_as_number_from_numpy_and_torch(value, expected):
    assert as_number(value) == expected


def test_as_number_from_jax():
    jnp = pytest.importorskip("jax.numpy")
    assert as_number(jnp.float32(1.5)) == 1.5
    assert as_number(jnp.ones((), dtype=jnp.bfloat16)) == 1.0


@pytest.mark.parametrize(
    "value",
    ["3", True, None, [1, 2], [1.5], (1.5,), np.ones(3), np.array([1.5]), torch.ones(1), object()],
)
def test_as_number_rejects_what_is_not_one_number(value):
    with pytest.raises(Wrong) as caught:
        as_number(value)
    assert caught.value.key == "not_a_number"
    assert "one number" in caught.value.message  # says what is expected


def test_to_numpy_from_every_framework():
    data = [[1.0, 2.0], [3.0, 4.0]]
    jnp = pytest.importorskip("jax.numpy")
    for array in (
        np.array(data),
        torch.tensor(data, requires_grad=True),
        torch.tensor(data, dtype=torch.bfloat16),
        jnp.array(data),
        jnp.array(data, dtype=jnp.bfloat16),
        data,
    ):
        converted = to_numpy(array)
        assert isinstance(converted, np.ndarray) and converted.dtype.kind == "f"
        np.testing.assert_array_equal(converted, np.array(data))


@pytest.mark.skipif(
    not (torch.cuda.is_available() or torch.backends.mps.is_available()), reason="no CUDA/MPS here"
)
def test_to_numpy_and_as_number_from_an_accelerator():
    device = "cuda" if torch.cuda.is_available() else "mps"
    x = torch.arange(4, dtype=torch.float16, device=device)
    np.testing.assert_array_equal(to_numpy(x), [0, 1, 2, 3])
    assert as_number(x.sum()) == 6
    assert allclose(x, np.arange(4))


def test_close_and_allclose_tolerances():
    assert close(1.0, 1.0 + 1e-9) and not close(1.0, 1.001)
    assert not close(10**400, 1.0)  # too large for a float: not close, no OverflowError
    assert not close(float("nan"), 1.0)
    want = np.linspace(1, 2, 50)
    # float16 keeps ~3 digits: a 0.1 % error is fine for it, not for float32.
    assert allclose(torch.tensor(want * 1.001, dtype=torch.float16), want)
    assert not allclose(torch.tensor(want * 1.001, dtype=torch.float32), want)
    assert allclose(np.float32(want), want)
    assert not allclose(want[:-1], want)  # another shape is never close
    assert not allclose(want + 1, want)


def test_import_is_cheap():
    code = (
        "import sys, labs.kit; "
        "assert not {'torch', 'jax', 'numpy'} & set(sys.modules), sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


# --- the score ----------------------------------------------------------------------------------


def test_score_counts_the_last_check_of_each_exercise(capsys):
    lab, q1 = make_lab("97")
    q2 = lab.exercise("free", title=("Free", "Gratis"), points=2, hint=("h", "h"))(
        lambda a, r: None
    )
    lab.exercise("never", title=("Never", "Nie"), points=5, hint=("h", "h"))(lambda a, r: None)
    assert lab.summary().score == 0
    q1.check(lambda x: x * x)
    q2.check(1)
    q1.check(lambda x: 2 * x)  # passed, then broken again: the last check counts
    summary = lab.summary().as_dict()
    assert json.loads(json.dumps(summary)) == summary  # machine-readable as it is
    assert Score.from_dict(summary) == lab.summary()  # and read back as it was
    assert (summary["lab"], summary["score"], summary["max"]) == ("97", 2, 10)
    statuses = [(e["name"], e["points"], e["status"], e["key"]) for e in summary["exercises"]]
    assert statuses == [
        ("square", 0, WRONG, "doubled"),
        ("free", 2, PASSED, "ok"),
        ("never", 0, NOT_CHECKED, NOT_CHECKED),
    ]
    capsys.readouterr()
    lab.score()  # outside IPython: the table as text
    table = capsys.readouterr().out
    assert "Lab 97 · Test lab" in table and "2 / 10" in table and "not checked" in table


def test_table_in_german_and_duplicate_names():
    lab, q1 = make_lab("96")
    i18n.set_language("de")
    q1.check(lambda x: x * x)
    table = lab.summary().table()
    assert "Aufgabe" in table and "Quadrat" in table and "bestanden" in table and "3 / 3" in table
    with pytest.raises(ValueError):
        lab.exercise("square", title=("x", "x"), points=1, hint=("h", "h"))


def test_answers_are_tried_on_fresh_inputs():
    # Without a seed every check draws new inputs: a memorised value cannot keep passing.
    seen = set()
    lab = new_lab("95")
    q1 = lab.exercise("x", title=("x", "x"), points=1, hint=("", ""))(
        lambda a, rng: seen.add(rng.random())
    )
    for _ in range(5):
        q1.evaluate(lambda: 0)
    assert len(seen) == 5


# --- tips by the type of an error, never by its words ------------------------------------------


def raises(error: Exception):
    def answer(x):
        raise error

    return answer


def test_tips_follow_the_type_of_the_error_not_its_words():
    _, q1 = make_lab()
    sharding = q1.evaluate(raises(ValueError("memory kind 'device' of the sharding differs")))
    assert sharding.key == "raised" and "Out of memory" not in sharding.message
    oom = q1.evaluate(raises(MemoryError()))
    assert "Out of memory" in oom.message
    torch_oom = q1.evaluate(raises(torch.OutOfMemoryError("CUDA out of memory")))
    assert "Out of memory" in torch_oom.message
    # A TypeError about arguments *inside* the learner's function is not a signature problem.
    inner = q1.evaluate(raises(TypeError("f() missing 1 required positional argument: 'y'")))
    assert "parameters of the function" not in inner.message
    assert "parameters of the function" in q1.evaluate(lambda: 1).message
