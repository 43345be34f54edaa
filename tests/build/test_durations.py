"""Each lesson's stated durations are what a learner needs to read it and run it.

A lesson's header states minutes per profile (`duration: {cpu: …, t4: …}`); the README, the
agenda and every notebook's title cell repeat them.  This test counts what the learner meets on
the main path of the built English notebook and holds the stated minutes to it:

- **reading**: the words of every markdown cell at 150 words a minute;
- **code**: the non-blank lines of every code cell the learner sees, at 30 lines a minute (a
  line of code takes as long as five words of prose: it has to be understood, not only read,
  and many lines are short).  Cells the
  notebook folds (the setup cell, folded helpers, the course's own guard checks) are not on the
  path a learner reads, and are not counted;
- **compute** (CPU only): the CPU time a run of the whole notebook took, from `MEASURED` below.

The main path ends at the optional "Deeper" section (`## Deeper …` in English, `## Vertiefung …`
in German), which a lesson may add at its end for detail: it is not counted, and a learner who
stops before it has finished the lesson.

Measured CPU time, honestly: executing eleven notebooks would make this a test of minutes, so
`MEASURED` holds a committed figure per lesson: the CPU time (user + system, seconds) of the
English notebook under nbval with one thread, with the date it was taken.  CPU time, not wall
time, because the machine that measures is shared and its wall time says more about its load
than about the lesson.  The figure goes stale when a lesson changes its computations; measure
again with

    python -m tests.build.test_durations 01        # prints the row to paste into MEASURED

A lesson without a figure fails here, so a new lesson cannot slip past the check.

The stated CPU minutes must lie between 0.8 and 1.5 times (plus 5 minutes) of reading + code +
compute: a little optimism is allowed, a lesson twice as long as it says is not, and neither is
a lesson padded to twice its length.  The T4 minutes must cover at least 0.8 of reading + code
(the T4's compute time is not measured here: no GPU in the test run).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from utils.course import ROOT, lessons

WORDS_PER_MINUTE = 150
CODE_LINES_PER_MINUTE = 30
AT_LEAST, AT_MOST, SLACK_MINUTES = 0.8, 1.5, 5
DEEPER = ("## Deeper", "## Vertiefung")

# lesson → (CPU seconds of a full run of the English notebook, date measured): the user + system
# time of the nbval run and its kernel (`/usr/bin/time`, which `measure` below repeats), on a
# 2-core AMD EPYC cloud VM (AVX-512).
MEASURED: dict[str, tuple[float, str]] = {
    "00": (8.4, "2026-12-02"),
    "01": (19.3, "2026-12-02"),
    "02": (16.6, "2026-12-02"),
    "03": (58.7, "2026-12-02"),
    "04": (19.6, "2026-12-02"),
    "05": (36.2, "2026-12-02"),
    "06": (54.5, "2026-12-02"),
    # the whole notebook, its Deeper section (QLoRA) included: more than the main path needs;
    # the kernel's CPU time of a run with nbclient, one thread, CI=true
    "07": (261.1, "2026-12-02"),
    "08": (35.5, "2026-12-02"),
    "09": (20.2, "2026-12-02"),
    "10": (71.7, "2026-12-02"),
}


@dataclass(frozen=True)
class MainPath:
    """What a learner meets on a notebook's main path."""

    words: int
    code_lines: int

    @property
    def reading_minutes(self) -> float:
        return self.words / WORDS_PER_MINUTE + self.code_lines / CODE_LINES_PER_MINUTE


def _folded(cell: dict) -> bool:
    meta = cell.get("metadata", {})
    return bool(meta.get("jupyter", {}).get("source_hidden")) or "guard" in meta.get("tags", [])


def main_path(notebook: Path) -> MainPath:
    """Words and visible code lines of a built notebook up to its "Deeper" section."""
    words = code_lines = 0
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            lines = source.splitlines()
            deeper = [i for i, line in enumerate(lines) if line.startswith(DEEPER)]
            if deeper:
                words += len(" ".join(lines[: deeper[0]]).split())
                break
            words += len(source.split())
        elif cell["cell_type"] == "code" and not _folded(cell):
            code_lines += sum(1 for line in source.splitlines() if line.strip())
    return MainPath(words, code_lines)


def _english(lesson) -> Path:
    return ROOT / "notebooks" / "en" / f"{lesson.path.stem}.ipynb"


LESSONS = [lesson for lesson in lessons() if _english(lesson).exists()]
# Lessons whose stated CPU minutes this test finds too low, for their authors to correct (the
# message says what they need).  Strict: a corrected lesson fails here until it leaves the list.
TOO_SHORT: set[str] = set()


def _cpu_cases() -> list:
    return [
        pytest.param(
            lesson,
            id=lesson.number,
            marks=[pytest.mark.xfail(strict=True, reason="states fewer minutes than it needs")]
            if lesson.number in TOO_SHORT
            else [],
        )
        for lesson in LESSONS
    ]


@pytest.mark.parametrize("lesson", _cpu_cases())
def test_stated_cpu_minutes_fit_reading_code_and_compute(lesson):
    assert lesson.number in MEASURED, (
        f"lesson {lesson.number} has no measured CPU time: run "
        f"python -m tests.build.test_durations {lesson.number} and add the row to MEASURED"
    )
    path = main_path(_english(lesson))
    needed = path.reading_minutes + MEASURED[lesson.number][0] / 60
    stated = lesson.duration["cpu"]
    assert AT_LEAST * needed <= stated <= AT_MOST * needed + SLACK_MINUTES, (
        f"lesson {lesson.number} states {stated} min on a CPU; it needs about {needed:.0f} "
        f"({path.words} words, {path.code_lines} code lines, "
        f"{MEASURED[lesson.number][0]:.0f} s of CPU time)"
    )


@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.number for lesson in LESSONS])
def test_stated_t4_minutes_cover_reading_and_code(lesson):
    path = main_path(_english(lesson))
    stated = lesson.duration["t4"]
    assert stated >= AT_LEAST * path.reading_minutes, (
        f"lesson {lesson.number} states {stated} min on a T4; reading its {path.words} words and "
        f"{path.code_lines} code lines alone takes about {path.reading_minutes:.0f}"
    )


def test_main_path_stops_at_the_deeper_section(tmp_path):
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["one two three\n"]},
        {"cell_type": "code", "metadata": {}, "source": ["a = 1\n", "\n", "b = 2\n"]},
        {"cell_type": "code", "metadata": {"tags": ["guard"]}, "source": ["assert a\n"]},
        {"cell_type": "markdown", "metadata": {}, "source": ["four\n## Sum\n## Deeper (x)\ny z"]},
        {"cell_type": "code", "metadata": {}, "source": ["c = 3\n"]},
    ]
    notebook = tmp_path / "n.ipynb"
    notebook.write_text(json.dumps({"cells": cells}))
    assert main_path(notebook) == MainPath(words=6, code_lines=2)


def measure(number: str) -> float:
    """CPU seconds (user + system, all child processes) of the English notebook under nbval."""
    (lesson,) = [lesson for lesson in lessons() if lesson.number == number]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--nbval-lax", "--nbval-current-env"]
        + ["-p", "no:cacheprovider", "-p", "tests.nbval_holes", str(_english(lesson))],
        cwd=ROOT,
        check=True,
        env={
            **__import__("os").environ,
            "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "HF_HUB_OFFLINE": "1",
        },
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


if __name__ == "__main__":
    import datetime

    for number in sys.argv[1:]:
        seconds = measure(number)
        print(f'    "{number}": ({seconds:.1f}, "{datetime.date.today().isoformat()}"),')
