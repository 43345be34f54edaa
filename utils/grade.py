"""Grade submitted lab notebooks: run each one headless and read its score.

    python -m utils.grade anna.ipynb ben.ipynb          # a verdict line and a table per notebook
    python -m utils.grade --lab 00 submissions/         # every .ipynb in a folder, all from lab 00
    python -m utils.grade --json submissions/ > scores.json
    python -m utils.grade --timeout 300 --cell-timeout 60 --lang de anna.ipynb
    python -m utils.grade --seed 1234 anna.ipynb        # the same random inputs as a run before

Run it from the course folder (the one with `utils/`). Each notebook runs in a fresh kernel of
this Python: from its own folder if that lies inside a course checkout (so its setup cell finds
the course there), else from this course's folder, so nothing is downloaded. A cell that raises
does not stop the run, so later exercises still count.

The score is not read from the notebook.  After the last cell the grader runs a cell of its own
(`REGRADE_CELL`): it drops the course's modules from the kernel, imports the lab's checks afresh
from the course folder and checks every answer again on new random inputs (`--seed` makes them
repeatable), see `utils.checks.regrade`.  A submission that sets `q1.result`, patches the checks,
redefines `check` or deletes the score cell gets exactly the points its answers earn.

Every file gets exactly one verdict line, and the run goes on with the next file.  `--json` prints
one JSON list instead, one object per notebook in the order given:

    {"notebook": "anna.ipynb", "status": "graded", "verdict": "lab 00: 7/10 points",
     "lab": "00", "score": 7, "max": 10, "cell_errors": 0, "seconds": 6.1, "seed": 1234,
     "exercises": [{"number": 1, "name": "device", "title": {"en": ..., "de": ...},
                    "points": 2, "max": 2, "status": "passed", "key": "ok"}, ...]}

`status` is "graded", or why not: "not_found", "not_a_notebook", "invalid_notebook", "not_a_lab",
"wrong_lab", "timeout" (score so far, if any), "kernel_died", "no_score".  Exit status: 0 if every
notebook was graded, 1 if any was not, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .checks import score_table
from .i18n import LANGUAGES, set_language, text
from .kernel import cell_name, execute
from .submission import first_line, lab_to_grade, notebooks_in, read_notebook, working_folder

COURSE = Path(__file__).resolve().parents[1]
GRADED = "graded"
# The grader's own last cell: the course's modules afresh, every answer checked again.
REGRADE_CELL = """\
import sys as _grader_sys
for _grader_name in [m for m in _grader_sys.modules if m.split(".")[0] in ("utils", "labs")]:
    if _grader_name != "utils.blank":  # the blank in the learner's code must stay the blank
        del _grader_sys.modules[_grader_name]
__import__("utils.checks").checks.regrade(globals(), {lab!r}, {seed})"""


@dataclass
class Grade:
    notebook: str
    status: str
    verdict: str  # one line, in the grader's language
    lab: str | None = None
    score: int | None = None
    max: int | None = None
    exercises: list[dict[str, Any]] = field(default_factory=list)
    cell_errors: int = 0  # cells that raised (the run went on)
    seconds: float = 0.0
    seed: int | None = None  # of the grader's random inputs: the same seed gives the same score

    @property
    def graded(self) -> bool:
        return self.status == GRADED


def grade_notebook(
    path: str | Path,
    *,
    lab: str | None = None,
    timeout: float = 600,
    cell_timeout: float = 300,
    course: Path = COURSE,
    seed: int | None = None,
) -> Grade:
    """Grade one submission; never raises for a bad one (the `Grade` says what is wrong)."""
    path = Path(path)
    started = time.monotonic()
    nb, refused = read_notebook(path)
    if refused is not None:
        status, why = refused
        return Grade(str(path), status, text("not graded: {why}", "nicht bewertet: {why}", why=why))

    def verdict(status: str, message: str, **more: Any) -> Grade:
        if status != GRADED:
            message = text("not graded: {why}", "nicht bewertet: {why}", why=message)
        seconds = round(time.monotonic() - started, 1)
        return Grade(str(path), status, message, seconds=seconds, **more)

    expected, refused = lab_to_grade(nb, lab)
    if refused is not None:
        return verdict(*refused)
    meta = nb.metadata.get("course") or {}
    seed = secrets.randbelow(2**31) if seed is None else seed
    regrade = REGRADE_CELL.format(lab=expected, seed=seed)
    try:
        run = execute(nb, working_folder(path, course), timeout, cell_timeout, regrade)
    except Exception as error:  # the kernel did not even start
        return verdict(
            "kernel_died",
            text(
                "the kernel could not start: {error}",
                "der Kernel ließ sich nicht starten: {error}",
                error=first_line(error),
            ),
        )

    reports = [r for r in run.reports if expected is None or r.get("lab") == expected]
    if run.reports and not reports:
        found = ", ".join(sorted({str(r.get("lab")) for r in run.reports}))
        return verdict(
            "wrong_lab",
            text(
                "the notebook reports exercises of lab {found}, not lab {expected}",
                "das Notebook meldet Aufgaben aus Lab {found}, nicht aus Lab {expected}",
                found=found,
                expected=expected,
            ),
        )
    summary = reports[-1] if reports else None
    scored: dict[str, Any] = {"cell_errors": run.cell_errors, "seed": seed}
    if summary is not None:
        scored.update(
            lab=summary["lab"],
            score=summary["score"],
            max=summary["max"],
            exercises=summary["exercises"],
        )
    if run.died_at is not None:
        return verdict(
            "kernel_died",
            text(
                "the kernel died in {cell} (out of memory?)",
                "der Kernel ist in {cell} abgestürzt (Speicher voll?)",
                cell=cell_name(nb, run.died_at),
            ),
            **scored,
        )
    if run.stopped_at is not None:
        so_far = (
            text("{score}/{max}", score=summary["score"], max=summary["max"]) if summary else "–"
        )
        return verdict(
            "timeout",
            text(
                "{cell} still ran at the time limit ({timeout:g} s per notebook, {cell_timeout:g} s "
                "per cell): an endless loop? Score so far {so_far}",
                "{cell} lief beim Zeitlimit noch ({timeout:g} s pro Notebook, {cell_timeout:g} s "
                "pro Zelle): eine Endlosschleife? Punkte bis dahin {so_far}",
                cell=cell_name(nb, run.stopped_at),
                timeout=timeout,
                cell_timeout=cell_timeout,
                so_far=so_far,
            ),
            **scored,
        )
    if summary is None:
        return verdict(
            "no_score",
            text(
                "the notebook reported no score (did its setup and checks cells run?)",
                "das Notebook meldet keine Punkte (liefen seine Setup- und Prüfzellen?)",
            ),
            **scored,
        )
    notes = []
    if run.cell_errors:
        notes.append(
            text(
                "{count} cell(s) raised an error",
                "{count} Zelle(n) mit Fehler",
                count=run.cell_errors,
            )
        )
    if meta.get("variant") == "solution":
        notes.append(text("this is the solution notebook", "das ist das Lösungs-Notebook"))
    return verdict(
        GRADED,
        text(
            "lab {lab}: {score}/{max} points{tail}",
            "Lab {lab}: {score}/{max} Punkte{tail}",
            lab=summary["lab"],
            score=summary["score"],
            max=summary["max"],
            tail=" ({})".format("; ".join(notes)) if notes else "",
        ),
        **scored,
    )


# --- the command line ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m utils.grade",
        description="Grade lab notebooks: run each one, read its score.",
    )
    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="notebooks, or folders of notebooks"
    )
    parser.add_argument("--lab", help="the lab every notebook must be from, e.g. 00")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per notebook (600)")
    parser.add_argument("--cell-timeout", type=float, default=300, help="seconds per cell (300)")
    parser.add_argument("--json", action="store_true", help="print one JSON list instead of tables")
    parser.add_argument("--lang", choices=LANGUAGES, help="language of the messages (en, de)")
    parser.add_argument(
        "--seed", type=int, help="seed of the random inputs (default: new ones; the JSON shows it)"
    )
    args = parser.parse_args(argv)
    if args.lang:
        set_language(args.lang)
    lab = args.lab.zfill(2) if args.lab else None

    grades = []
    for path in notebooks_in(args.paths):
        grade = grade_notebook(
            path, lab=lab, timeout=args.timeout, cell_timeout=args.cell_timeout, seed=args.seed
        )
        grades.append(grade)
        if not args.json:
            print(f"{grade.notebook}: {grade.verdict}", flush=True)
            if grade.exercises:
                summary = {
                    "lab": grade.lab,
                    "title": {"en": "", "de": ""},
                    "score": grade.score,
                    "max": grade.max,
                    "exercises": grade.exercises,
                }
                table = score_table(summary).splitlines()[1:]  # without the title line
                print("\n".join("    " + line for line in table), flush=True)
    if args.json:
        print(json.dumps([asdict(g) for g in grades], ensure_ascii=False, indent=1))
    return 0 if all(g.graded for g in grades) else 1


if __name__ == "__main__":
    sys.exit(main())
