"""The trainer's grading CLI (labs/kit/grade.py): every file gets one verdict line, bad submissions
don't stop the run, and the score is read from the kernel, not from what the notebook printed."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from labs.kit.grade import grade_notebook, main
from labs.kit.submission import notebooks_in
from utils.course import ROOT, notebooks


def built_lab(number: str, variant: str) -> Path:
    """Where the course model puts lab `number`'s English student or solution notebook."""
    (lab,) = [n for n in notebooks(kind="lab") if n.number == number]
    return ROOT / lab.outputs("en")[variant]


STUDENT = built_lab("00", "student")
SOLUTION = built_lab("00", "solution")
LESSON = ROOT / "notebooks/en/00_what_hardware.ipynb"

# A lab 01 submission with one right answer (2 points) and nothing else: lab 01's checks need
# neither torch nor a setup cell (the grader runs from the course folder).
TINY_LAB = "def batched_matmul_flops(b, m, k, n):\n    return 2 * b * m * k * n"


def notebook(*sources: str, number: str | None = "00") -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    if number is not None:
        nb.metadata["course"] = {"number": number, "kind": "lab", "variant": "student"}
    return nb


def write(path: Path, nb: nbformat.NotebookNode) -> Path:
    nbformat.write(nb, path)
    return path


@pytest.fixture
def bad(tmp_path) -> dict[str, Path]:
    """One submission of each kind that cannot be graded, and a good one."""
    (tmp_path / "notes.txt").write_text("my answer: 2mkn\n")
    text = STUDENT.read_text()
    (tmp_path / "broken.ipynb").write_text(text[: len(text) // 2])  # cut off in the middle
    other_lab = nbformat.read(STUDENT, as_version=4)
    other_lab.metadata["course"]["number"] = "01"
    return {
        "notes": tmp_path / "notes.txt",
        "broken": tmp_path / "broken.ipynb",
        "other_lab": write(tmp_path / "lab01.ipynb", other_lab),
        "loop": write(
            tmp_path / "loop.ipynb",
            notebook("import time\nprint('start')", "while True:\n    time.sleep(0.1)"),
        ),
        "dies": write(tmp_path / "dies.ipynb", notebook("import os\nos._exit(1)")),
        "tiny": write(tmp_path / "tiny.ipynb", notebook(TINY_LAB, number="01")),
    }


def grade_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "labs.kit.grade", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


def test_json_bad_submissions_and_the_run_goes_on(bad):
    pytest.importorskip("torch")  # lab 00's checks, graded for the "tiny" notebook
    files = [bad[k] for k in ("notes", "broken", "other_lab", "loop", "dies", "tiny")]
    # One at a time, and a cell limit far above a torch import on a busy machine: only the
    # endless loop (asleep, so that it takes no core from the rest of the suite) reaches it.
    done = grade_cli("--json", "--jobs", "1", "--cell-timeout", "40", *files)
    assert done.returncode == 1, done.stderr
    grades = json.loads(done.stdout)
    assert [g["notebook"] for g in grades] == [str(f) for f in files]
    statuses = [g["status"] for g in grades]
    assert statuses == [
        "not_a_notebook",
        "invalid_notebook",
        "graded",  # lab 01, as its metadata says (its answers are lab 00's: 0 points)
        "timeout",
        "kernel_died",
        "graded",
    ]
    for grade in grades:
        assert grade["verdict"] and "\n" not in grade["verdict"]
    assert grades[2]["lab"] == "01" and grades[2]["score"] == 0
    assert "line" in grades[1]["verdict"]  # where the JSON breaks
    assert "while True" in grades[3]["verdict"]  # which cell ran too long
    # After the time limit the kernel is interrupted and still re-checked: the score so far (this
    # notebook answers nothing), whatever the machine's load (no stale output poll decides it).
    assert grades[3]["score"] == 0 and "0/" in grades[3]["verdict"]
    tiny = grades[-1]
    assert (tiny["lab"], tiny["score"]) == ("01", 2) and tiny["max"] > 2
    assert [e["status"] for e in tiny["exercises"]][:2] == ["passed", "not_attempted"]
    assert isinstance(tiny["seed"], int)


def test_text_mode_one_line_per_bad_file_in_german(bad, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    files = [
        bad["notes"],
        tmp_path / "missing.ipynb",
        bad["broken"],
        bad["other_lab"],
        LESSON,
        empty,
    ]
    done = grade_cli("--lang", "de", "--lab", "0", *files)  # "0" means lab 00
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert len(lines) == len(files)
    for line, path in zip(lines, files, strict=True):
        assert line.startswith(f"{path}: nicht bewertet: "), line
    assert "Lektion" in lines[4] and "Lab 01" in lines[3]


def test_good_run_exits_zero_and_prints_the_table(bad, capsys):
    assert main([str(bad["tiny"])]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{bad['tiny']}: lab 01: 2/")
    assert any("batched" in line and "passed" in line for line in out[1:])


def test_usage_error_exits_two():
    with pytest.raises(SystemExit) as exit_:
        main([])
    assert exit_.value.code == 2


def test_folders_expand_to_their_notebooks(tmp_path):
    for name in ("b.ipynb", "a.ipynb", "c.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "empty").mkdir()
    got = notebooks_in([str(tmp_path), str(tmp_path / "empty")])
    assert got == [tmp_path / "a.ipynb", tmp_path / "b.ipynb", tmp_path / "empty"]


# Lab 00's checks import torch: without it (test-compat's Python 3.13 run) those notebooks can't score.
needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="lab 00 needs torch"
)


@needs_torch
def test_lab_found_from_its_import_when_metadata_is_gone(tmp_path):
    nb = nbformat.read(SOLUTION, as_version=4)
    del nb.metadata["course"]  # some tools drop unknown metadata
    path = write(tmp_path / "stripped.ipynb", nb)
    other = grade_notebook(path, lab="01", timeout=300)
    assert other.status == "wrong_lab" and "lab 00" in other.verdict
    same = grade_notebook(path, timeout=300)
    full = sum(e.points for e in importlib.import_module("labs.checks.lab00").lab.exercises)
    assert (same.status, same.lab, same.score, same.max) == ("graded", "00", full, full)


# --- a submission can't change its score: the grader checks every answer again ----------------

LAB01 = built_lab("01", "student")
LAB01_SOLVED = built_lab("01", "solution")
LESSON01 = ROOT / "notebooks/en/01_timing_matmul.ipynb"
TAMPERING = {
    "results": """\
from labs.kit import Result
for q in (q1, q2, q3, q4, q5):
    q.result = Result("passed", "ok", "")
lab.score()""",
    "patched_checks": """\
import labs.kit
from labs.kit import Result
labs.kit.Exercise.evaluate = lambda self, answer, seed=None: Result("passed", "ok", "")
labs.kit.Exercise.earned = property(lambda self: self.points)
for q in (q1, q2, q3, q4, q5):
    q.check(None)""",
    "redefined_check": """\
from labs.kit import Result
def check(self, answer):
    self.result = Result("passed", "ok", "")
type(q1).check = check
for q in (q1, q2, q3, q4, q5):
    q.check(None)
lab.score()""",
    "fake_module": """\
import sys, types
fake = types.ModuleType("labs.checks.lab01")
fake.lab = lab
sys.modules["labs.checks.lab01"] = fake
for q in (q1, q2, q3, q4, q5):
    q.points = 0""",
}


def one_answer_and(tampering: str) -> nbformat.NotebookNode:
    """The student notebook of lab 01 with q1 solved, then `tampering` as its last cell."""
    nb = nbformat.read(LAB01, as_version=4)
    solved = nbformat.read(LAB01_SOLVED, as_version=4)
    q1 = next(c for c in solved.cells if c.cell_type == "code" and "q1.check(" in c.source)
    index = next(i for i, c in enumerate(nb.cells) if "q1.check(" in c.source)
    nb.cells[index].source = q1.source
    nb.cells.append(nbformat.v4.new_code_cell(tampering))
    return nb


def test_the_file_name_does_not_decide_which_lab_is_graded(tmp_path):
    """A learner's file keeps the name it was saved under: a download, a copy named like the
    lesson (`01_timing_matmul.ipynb`) or no course name at all.  The notebook says which lab it
    is; the lesson itself under that name gets a clear refusal, not a score."""
    lesson_named = tmp_path / "01_timing_matmul.ipynb"
    assert lesson_named.name == LESSON01.name and LAB01.name != LESSON01.name
    grade = grade_notebook(write(lesson_named, one_answer_and("")), seed=7)
    assert (grade.status, grade.lab, grade.score) == ("graded", "01", 2), grade.verdict
    (tmp_path / "lesson").mkdir()
    lesson = grade_notebook(write(tmp_path / "lesson" / LESSON01.name, nbformat.read(LESSON01, 4)))
    assert lesson.status == "not_a_lab" and "lesson 01" in lesson.verdict


@pytest.mark.parametrize("how", sorted(TAMPERING))
def test_a_tampered_submission_scores_what_its_answers_earn(tmp_path, how):
    honest = grade_notebook(write(tmp_path / "honest.ipynb", one_answer_and("")), seed=7)
    assert (honest.status, honest.score) == ("graded", 2), honest.verdict
    tampered = grade_notebook(
        write(tmp_path / f"{how}.ipynb", one_answer_and(TAMPERING[how])), seed=7
    )
    assert tampered.status == "graded", tampered.verdict
    assert tampered.cell_errors == 0  # the tampering itself ran
    assert (tampered.score, tampered.max) == (honest.score, honest.max)
    assert tampered.exercises == honest.exercises


@needs_torch
def test_errors_dont_stop_grading_and_a_deleted_score_cell_changes_nothing(tmp_path):
    nb = nbformat.read(STUDENT, as_version=4)
    q1 = next(c for c in nb.cells if c.cell_type == "code" and "q1.check(pick_device)" in c.source)
    q1.source = "raise ValueError('oops')"
    assert "lab.score()" in nb.cells[-1].source
    del nb.cells[-1]
    grade = grade_notebook(write(tmp_path / "edited.ipynb", nb), timeout=300)
    assert grade.status == "graded", grade.verdict
    assert grade.cell_errors == 1 and "1 cell(s) raised an error" in grade.verdict
    statuses = {e["name"]: e["status"] for e in grade.exercises}
    assert statuses == {
        "device": "not_attempted",  # its cell failed, so there is no pick_device to check
        "flops": "not_attempted",
        "memory": "not_attempted",
        "intensity": "not_attempted",
        "time_matmuls": "not_attempted",
    }
    assert grade.score == 0


PATCHING_ANSWER = """\
def time_per_call(fn, sync, repeats=20):
    # An "answer" that, while it is checked, tries to rewrite the score of the re-check.
    import sys

    checks = sys.modules["labs.kit.lab"]
    real_show = checks._show

    def full_marks(table, data):
        for lab in data["labs"]:
            for e in lab["exercises"]:
                e["points"], e["status"] = e["max"], "passed"
            lab["score"] = lab["max"]
        real_show(table, data)

    checks._show = full_marks
    checks.Score.table = lambda score, heading=True: "all passed"
    real_as_dict = checks.Score.as_dict

    def all_passed(score):
        data = real_as_dict(score)
        for e in data["exercises"]:
            e["points"], e["status"] = e["max"], "passed"
        data["score"] = data["max"]
        return data

    checks.Score.as_dict = all_passed
    return 0.0
"""


def test_an_answer_that_patches_the_checks_while_checked_changes_nothing(tmp_path):
    grade = grade_notebook(write(tmp_path / "patch.ipynb", one_answer_and(PATCHING_ANSWER)), seed=3)
    assert grade.status == "graded", grade.verdict
    assert grade.score == 2  # q1 only
    statuses = [e["status"] for e in grade.exercises]
    assert statuses[:2] == ["passed", "wrong"] and "passed" not in statuses[2:]


def test_kernels_of_the_tests_hold_german_notebooks_to_german_numbers(tmp_path):
    """conftest.py gives every kernel a test starts the course's kernel checks: a German cell that
    prints an English-formatted number counts as a cell that raised."""
    german = "from utils.i18n import set_language\nset_language('de')"
    nb = notebook(german, "print('Median 0.130 ms')", "print('Median 0,130 ms')", number="01")
    grade = grade_notebook(write(tmp_path / "formats.ipynb", nb))
    assert grade.status == "graded" and grade.cell_errors == 1, grade.verdict


def test_sizes_on_the_command_line():
    from labs.kit.grade import _size

    assert _size("3G") == _size("3GiB") == 3 * 2**30
    assert _size("512m") == 512 * 2**20 and _size("1024") == 1024
    assert _size("0") is None  # no limit
    with pytest.raises(ValueError):
        _size("lots")
