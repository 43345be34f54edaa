"""The class table of a room (labs/kit/classtable.py) in both languages, the progress bar, and a room
graded two at a time giving exactly what a serial run gives."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat

from labs.kit.classtable import class_csv, class_summary, write_class_table
from labs.kit.grade import Grade, Progress
from utils import i18n
from utils.course import ROOT


def exercise(number: int, name: str, status: str, key: str, points: int) -> dict:
    return {
        "number": number,
        "name": name,
        "title": {"en": f"Title {name}", "de": f"Titel {name}"},
        "points": points if status == "passed" else 0,
        "max": points,
        "status": status,
        "key": key,
    }


def graded(name: str, answers: list[tuple[str, str]]) -> Grade:
    """A lab of three exercises worth 2 points each; `answers`: (status, key) per exercise."""
    rows = [exercise(n, f"e{n}", s, k, 2) for n, (s, k) in enumerate(answers, 1)]
    score = sum(r["points"] for r in rows)
    return Grade(f"room/{name}.ipynb", "graded", f"lab 00: {score}/6 points", "00", score, 6, rows)


ROOM = [
    graded("anna", [("passed", "ok"), ("passed", "ok"), ("wrong", "gb_not_gib")]),
    graded("ben", [("passed", "ok"), ("wrong", "transposed"), ("wrong", "gb_not_gib")]),
    graded(
        "cleo", [("wrong", "off_by_two"), ("not_attempted", "not_attempted"), ("wrong", "bits")]
    ),
    Grade("room/dan.ipynb", "invalid_notebook", "not graded: damaged JSON"),
    Grade("room/eve.ipynb", "limit", "not graded: limit: memory", "00", 2, 6, [], limit="memory"),
]


def test_summary_counts_passes_and_the_common_mistakes():
    md = class_summary(ROOM, "00")
    assert "3 of 5 notebooks graded." in md
    assert "median 2, lowest 0, highest 4" in md
    assert "| 1. Title e1 | 2 of 3 | `off_by_two` ×1 |" in md
    assert "| 2. Title e2 | 1 of 3 | `transposed` ×1 |" in md  # not_attempted is no mistake
    assert "| 3. Title e3 | 0 of 3 | `gb_not_gib` ×2, `bits` ×1 |" in md  # most common first
    assert "`dan.ipynb`: not graded: damaged JSON" in md and "`eve.ipynb`" in md


def test_summary_and_csv_in_german():
    i18n.set_language("de")
    md = class_summary(ROOM, "00")
    assert md.startswith("# Lab 00: Klassenübersicht")
    assert "3 von 5 Notebooks bewertet." in md
    assert "| 3. Titel e3 | 0 von 3 | `gb_not_gib` ×2, `bits` ×1 |" in md
    assert "Nicht bewertet:" in md
    header = next(csv.reader(io.StringIO(class_csv(ROOM))))
    assert header[:4] == ["Notebook", "Status", "Punkte", "max"]


def test_csv_has_a_row_per_notebook_and_a_column_per_exercise(tmp_path):
    csv_path, md_path = write_class_table(ROOM, "00", tmp_path)
    rows = list(csv.reader(csv_path.open(encoding="utf-8")))
    assert rows[0][4:7] == ["q1 e1", "q2 e2", "q3 e3"]
    assert [r[0] for r in rows[1:]] == [
        "anna.ipynb",
        "ben.ipynb",
        "cleo.ipynb",
        "dan.ipynb",
        "eve.ipynb",
    ]
    assert rows[2][2:7] == ["2", "6", "2 (ok)", "0 (transposed)", "0 (gb_not_gib)"]
    assert rows[4][1:4] == ["invalid_notebook", "", ""]
    assert md_path.read_text(encoding="utf-8") == class_summary(ROOM, "00")


def test_progress_bar_only_on_a_terminal(monkeypatch, capsys):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    bar = Progress(len(ROOM))
    for grade in ROOM:
        bar.step(grade)
    shown = terminal.getvalue()
    assert shown.count("\r") == len(ROOM) and shown.endswith("\n")
    assert "[" + "#" * 30 + "] 5/5 eve.ipynb" in shown
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # a file: no bar
    quiet = Progress(len(ROOM))
    quiet.step(ROOM[0])
    assert sys.stderr.getvalue() == ""


ANSWERS = {
    "right": "def batched_matmul_flops(b, m, k, n):\n    return 2 * b * m * k * n",
    "wrong": "def batched_matmul_flops(b, m, k, n):\n    return b * m * k * n",
    "raises": "def batched_matmul_flops(b, m, k, n):\n    return 1 / 0",
}


def test_two_at_a_time_grades_exactly_as_one_at_a_time(tmp_path):
    """Lab 01 without a setup cell (its checks need no torch); the seed is fixed, so a parallel
    run must give the same JSON as a serial one, seconds aside."""
    room = tmp_path / "room"
    room.mkdir()
    for name, source in ANSWERS.items():
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
        nb.metadata["course"] = {"number": "01", "kind": "lab", "variant": "student"}
        nbformat.write(nb, room / f"{name}.ipynb")
    runs = []
    for jobs in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-m", "labs.kit.grade", "--lab", "01", "--json", "--seed", "11"]
            + ["--jobs", jobs, "--lang", "de", str(room)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )
        grades = json.loads(done.stdout)
        for grade in grades:
            grade.pop("seconds")
        runs.append((grades, (room / "lab01-class.csv").read_text(encoding="utf-8")))
    assert runs[0] == runs[1]
    by_name = {Path(g["notebook"]).stem: g for g in runs[0][0]}
    first = {name: by_name[name]["exercises"][0]["status"] for name in ANSWERS}
    assert first == {"right": "passed", "wrong": "wrong", "raises": "error"}
    assert {e["status"] for e in by_name["right"]["exercises"][1:]} == {"not_attempted"}
    assert "Klassenübersicht" in (room / "lab01-class.md").read_text(encoding="utf-8")
