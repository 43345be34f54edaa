"""Grade submitted lab notebooks: run each one headless and read its score.

    python -m labs.kit.grade anna.ipynb ben.ipynb      # a verdict line and a table per notebook
    python -m labs.kit.grade --lab 00 submissions/     # every .ipynb in a folder, all from lab 00
    python -m labs.kit.grade --json submissions/ > scores.json
    python -m labs.kit.grade --timeout 300 --cell-timeout 60 --lang de anna.ipynb
    python -m labs.kit.grade --seed 1234 anna.ipynb        # the same random inputs as a run before

Run it from the course folder (the one with `utils/`). Each notebook runs in a fresh kernel of
this Python, in a copy of this course (so its setup cell finds the course and nothing is
downloaded). A cell that raises does not stop the run, so later exercises still count.

The score is not read from the notebook.  After the last cell the grader runs a cell of its own
(`SANDBOX_REGRADE_CELL`; `REGRADE_CELL` is the same without a sandbox): it drops the course's
modules from the kernel, imports the lab's checks afresh from a copy written only then and checks
every answer again on new random inputs (`--seed` makes them repeatable), see
`labs.kit.regrade`.  A submission that sets `q1.result`, patches the checks,
redefines `check` or deletes the score cell gets exactly the points its answers earn.

Every file gets exactly one verdict line, and the run goes on with the next file.  `--json` prints
one JSON list instead, one object per notebook in the order given:

    {"notebook": "anna.ipynb", "status": "graded", "verdict": "lab 00: 7/10 points",
     "lab": "00", "score": 7, "max": 10, "cell_errors": 0, "seconds": 6.1, "seed": 1234,
     "limit": null, "notes": [],
     "exercises": [{"number": 1, "name": "device", "title": {"en": ..., "de": ...},
                    "points": 2, "max": 2, "status": "passed", "key": "ok"}, ...]}

`status` is "graded", or why not: "not_found", "not_a_notebook", "invalid_notebook", "not_a_lab",
"wrong_lab", "limit" (which one in `limit`, score so far), "timeout" (score so far, if any),
"kernel_died", "no_score".  Exit status: 0 if every notebook was graded, 1 if any was not, 2 for
a usage error.

Each submission runs in a disposable copy of the course (labs/kit/sandbox.py): its kernel's working
folder, HOME and TMPDIR lie in a temporary folder that is removed afterwards; where Linux permits
it the kernel has no network and sees the course and the Python installation read-only; the
lab's checks of the re-check are written after the submission's cells ran and verified by SHA-256;
and each kernel has limits (`--memory`, `--max-output`, `--max-file`, `--max-processes`).  A
submission that hits one gets the status "limit" (which one, and the score so far).

    python -m labs.kit.grade --lab 00 --jobs 2 submissions/   # two at a time; the same results
    # and, for a folder with --lab: submissions/lab00-class.csv and lab00-class.md
    # (labs/kit/classtable.py)
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from labs.kit.headless import cell_name, execute
from labs.kit.lab import ExerciseScore, Score
from labs.kit.sandbox import CourseSnapshot, GiB, Limits, MiB, Sandbox
from labs.kit.submission import first_line, lab_to_grade, notebooks_in, read_notebook
from utils.course import ROOT
from utils.i18n import LANGUAGES, get_language, set_language, text

COURSE = ROOT
GRADED = "graded"
# The grader's own last cell: the course's modules afresh, every answer checked again.
REGRADE_CELL = """\
import sys as _grader_sys
for _grader_name in [m for m in _grader_sys.modules if m.split(".")[0] in ("utils", "labs")]:
    if _grader_name != "labs.kit.blank":  # the blank in the learner's code must stay the blank
        del _grader_sys.modules[_grader_name]
__import__("labs.kit").kit.regrade(globals(), {lab!r}, {seed})"""
# In a sandbox: the same, from the checks written after the submission ran (`{fresh}`), and every
# course module the re-check loads must be one of those files, byte for byte (SHA-256).
VERIFY = """\
for _grader_name, _grader_module in list(_grader_sys.modules.items()):
    if _grader_name.split(".")[0] in ("utils", "labs") and _grader_name != "labs.kit.blank":
        _grader_path = getattr(_grader_module, "__file__", None) or "/"
        _grader_file = _grader_os.path.relpath(_grader_path, _grader_fresh)
        with open(_grader_os.path.join(_grader_fresh, _grader_file), "rb") as _grader_f:
            _grader_sum = _grader_hash.sha256(_grader_f.read()).hexdigest()
        if _grader_sum != _grader_digests.get(_grader_file):
            raise RuntimeError("the checks changed during grading: " + _grader_name)"""
SANDBOX_REGRADE_CELL = (
    """\
import sys as _grader_sys, os as _grader_os, hashlib as _grader_hash, importlib as _grader_imp
_grader_fresh, _grader_digests = {fresh!r}, {digests}
for _grader_name in [m for m in _grader_sys.modules if m.split(".")[0] in ("utils", "labs")]:
    if _grader_name != "labs.kit.blank":  # the blank in the learner's code must stay the blank
        del _grader_sys.modules[_grader_name]
_grader_sys.path.insert(0, _grader_fresh)
_grader_imp.invalidate_caches()
_grader_imp.import_module("labs.checks.lab{lab}")
"""
    + VERIFY
    + """
__import__("labs.kit").kit.regrade(globals(), {lab!r}, {seed})
"""
    + VERIFY
)
LIMIT = "limit"


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
    limit: str | None = None  # the limit hit: memory, output, file_size, processes
    notes: list[str] = field(default_factory=list)  # what was not limited, what was put back

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
    limits: Limits | None = None,
    snapshot: CourseSnapshot | None = None,
) -> Grade:
    """Grade one submission; never raises for a bad one (the `Grade` says what is wrong).

    It runs in a `Sandbox` with `limits` (default `Limits()`), a copy of `snapshot` (default: the
    course as it is now); afterwards the course's files are compared with the snapshot and put
    back if the submission changed them."""
    path = Path(path)
    started = time.monotonic()
    nb, refused = read_notebook(path)
    if refused is not None:
        status, why = refused
        return Grade(str(path), status, text("not graded: {why}", "nicht bewertet: {why}", why=why))
    expected, refused = lab_to_grade(nb, lab)
    if refused is not None:
        status, why = refused
        return Grade(str(path), status, text("not graded: {why}", "nicht bewertet: {why}", why=why))
    snapshot = snapshot or CourseSnapshot.read(course)
    with Sandbox(snapshot, limits or Limits()) as box:
        grade = _grade_in(path, nb, expected, box, timeout, cell_timeout, seed, started)
    restored = snapshot.guard()
    if restored:
        grade.notes.append(
            text(
                "it changed {count} file(s) of the course or of Python's site folders, put back: "
                "{first}",
                "es hat {count} Datei(en) des Kurses oder der site-Ordner von Python geändert, "
                "zurückgesetzt: {first}",
                count=len(restored),
                first=restored[0],
            )
        )
        if grade.graded and grade.verdict.endswith(")"):  # into the notes already there
            grade.verdict = f"{grade.verdict[:-1]}; {grade.notes[-1]})"
        else:
            grade.verdict += f" ({grade.notes[-1]})"
    return grade


def _grade_in(
    path: Path,
    nb: Any,
    expected: str,
    box: Sandbox,
    timeout: float,
    cell_timeout: float,
    seed: int | None,
    started: float,
) -> Grade:
    def verdict(status: str, message: str, **more: Any) -> Grade:
        if status != GRADED:
            message = text("not graded: {why}", "nicht bewertet: {why}", why=message)
        seconds = round(time.monotonic() - started, 1)
        return Grade(str(path), status, message, seconds=seconds, **more)

    meta = nb.metadata.get("course") or {}
    seed = secrets.randbelow(2**31) if seed is None else seed

    def regrade() -> str:  # called after the submission's cells ran
        fresh = box.fresh_checks()
        digests = repr(box.snapshot.python_digests())
        return SANDBOX_REGRADE_CELL.format(
            lab=expected, seed=seed, fresh=str(fresh), digests=digests
        )

    try:
        cwd = box.place(path)
        run = execute(nb, cwd, timeout, cell_timeout, regrade, sandbox=box)
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
    summary = Score.from_dict(reports[-1]) if reports else None
    scored: dict[str, Any] = {"cell_errors": run.cell_errors, "seed": seed, "notes": box.notes}
    if summary is not None:
        scored.update(
            lab=summary.lab,
            score=summary.score,
            max=summary.max,
            exercises=[e.as_dict() for e in summary.exercises],
        )
    so_far = text("{score}/{max}", score=summary.score, max=summary.max) if summary else "–"
    if box.processes_hit_limit():
        run.limits.setdefault("processes", run.died_at or run.stopped_at or len(nb.cells) - 1)
    if run.limits:
        which, index = min(run.limits.items(), key=lambda item: item[1])
        return verdict(
            LIMIT,
            text(
                "limit: {limit} in {cell}; score so far {so_far}",
                "Limit: {limit} in {cell}; Punkte bis dahin {so_far}",
                limit=box.limits.describe(which),
                cell=cell_name(nb, min(index, len(nb.cells) - 1)),
                so_far=so_far,
            ),
            limit=which,
            **scored,
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
        return verdict(
            "timeout",
            text(
                "{cell} still ran at the time limit ({timeout:g} s per notebook, "
                "{cell_timeout:g} s per cell): an endless loop? Score so far {so_far}",
                "{cell} lief beim Zeitlimit noch ({timeout:g} s pro Notebook, {cell_timeout:g} s "
                "pro Zelle): eine Endlosschleife? Punkte bis dahin {so_far}",
                cell=cell_name(nb, run.stopped_at),
                timeout=timeout,
                cell_timeout=cell_timeout,
                so_far=so_far,
            ),
            **scored,
        )
    if summary is None and run.regrade_error:
        return verdict(
            "no_score",
            text(
                "the grader's re-check failed: {error}",
                "die Nachprüfung des Graders schlug fehl: {error}",
                error=run.regrade_error[:200],
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
    notes.extend(box.notes)
    return verdict(
        GRADED,
        text(
            "lab {lab}: {score}/{max} points{tail}",
            "Lab {lab}: {score}/{max} Punkte{tail}",
            lab=summary.lab,
            score=summary.score,
            max=summary.max,
            tail=" ({})".format("; ".join(notes)) if notes else "",
        ),
        **scored,
    )


# --- the command line ---------------------------------------------------------------------------


def _size(value: str) -> int | None:
    """'2G', '512M', '0' (no limit) → bytes."""
    units = {"K": 2**10, "M": MiB, "G": GiB}
    value = value.strip().upper().removesuffix("B").removesuffix("I")
    number = float(value[:-1]) * units[value[-1]] if value[-1:] in units else float(value)
    return int(number) or None


def default_jobs() -> int:
    """2 where two cores are free, else 1: on a busy machine a second kernel only waits."""
    cores = os.cpu_count() or 1
    busy = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return 2 if cores >= 2 and busy <= cores - 1 else 1


_worker: dict[str, Any] = {}


def _start_worker(language: str, snapshot: CourseSnapshot, options: dict[str, Any]) -> None:
    set_language(language)
    _worker.update(snapshot=snapshot, options=options)


def _grade_in_worker(path: Path, seed: int | None) -> Grade:
    return grade_notebook(path, seed=seed, snapshot=_worker["snapshot"], **_worker["options"])


class Progress:
    """A one-line bar on stderr when it is a terminal: `[#####.....] 3/10 anna.ipynb`."""

    def __init__(self, total: int) -> None:
        self.total, self.done = total, 0
        self.shown = sys.stderr.isatty() and total > 1

    def step(self, grade: Grade) -> None:
        self.done += 1
        if self.shown:
            filled = round(30 * self.done / self.total)
            name = Path(grade.notebook).name[:40]
            bar = "#" * filled + "." * (30 - filled)
            end = "\n" if self.done == self.total else ""
            print(
                f"\r[{bar}] {self.done}/{self.total} {name:<40}",
                end=end,
                file=sys.stderr,
                flush=True,
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m labs.kit.grade",
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
    parser.add_argument(
        "--jobs", type=int, help="notebooks graded at once (default: 2 if two cores are idle)"
    )
    default = Limits()
    parser.add_argument(
        "--memory", type=_size, default=default.memory, help="per kernel (8G; 0: none)"
    )
    parser.add_argument("--max-output", type=_size, default=default.output, help="(20M)")
    parser.add_argument("--max-file", type=_size, default=default.file_size, help="(1G)")
    parser.add_argument(
        "--max-processes", type=int, default=default.processes, help="per kernel (512; 0: none)"
    )
    parser.add_argument("--network", action="store_true", help="leave the kernels' network on")
    parser.add_argument(
        "--table",
        type=Path,
        help="folder for the class table (default: the folder graded, with --lab)",
    )
    parser.add_argument("--no-table", action="store_true", help="write no class table")
    args = parser.parse_args(argv)
    if args.lang:
        set_language(args.lang)
    lab = args.lab.zfill(2) if args.lab else None
    limits = Limits(
        memory=args.memory,
        output=args.max_output,
        file_size=args.max_file,
        processes=args.max_processes or None,
        network=args.network,
    )
    files = notebooks_in(args.paths)
    # One seed per notebook, drawn here: a parallel run grades exactly as a serial one would.
    seeds = [args.seed if args.seed is not None else secrets.randbelow(2**31) for _ in files]
    snapshot = CourseSnapshot.read(COURSE)  # the course as it is now; put back after each file
    options = {
        "lab": lab,
        "timeout": args.timeout,
        "cell_timeout": args.cell_timeout,
        "limits": limits,
    }
    jobs = args.jobs or default_jobs()
    jobs = max(1, min(jobs, len(files)))
    progress = Progress(len(files))
    grades: list[Grade] = []

    def report(grade: Grade) -> None:
        grades.append(grade)
        progress.step(grade)
        if args.json:
            return
        print(f"{grade.notebook}: {grade.verdict}", flush=True)
        if grade.exercises:
            exercises = tuple(map(ExerciseScore.from_dict, grade.exercises))
            table = Score(grade.lab or "", ("", ""), exercises).table(heading=False)
            print("\n".join("    " + line for line in table.splitlines()), flush=True)

    if jobs == 1:
        for path, seed in zip(files, seeds, strict=True):
            report(grade_notebook(path, seed=seed, snapshot=snapshot, **options))
    else:
        # Kernels are separate processes anyway; the workers only wait for them.  Started fresh
        # (spawn), never forked: a forked worker inherits the parent's zmq contexts, and
        # collecting one in the child blocks forever in Context.term (seen under pytest -n 2).
        with ProcessPoolExecutor(
            jobs,
            mp_context=get_context("spawn"),
            initializer=_start_worker,
            initargs=(get_language(), snapshot, options),
        ) as pool:
            futures = [
                pool.submit(_grade_in_worker, p, s) for p, s in zip(files, seeds, strict=True)
            ]
            for future in futures:  # in the order given, as each is done
                report(future.result())

    if args.json:
        print(json.dumps([asdict(g) for g in grades], ensure_ascii=False, indent=1))
    folders = [Path(p) for p in args.paths if Path(p).is_dir()]
    table_folder = args.table or (folders[0] if folders else None)
    if lab and table_folder is not None and not args.no_table:
        from labs.kit.classtable import write_class_table

        written = write_class_table(grades, lab, table_folder)
        print(
            text(
                "class table: {csv} and {md}",
                "Klassenübersicht: {csv} und {md}",
                csv=str(written[0]),
                md=str(written[1]),
            ),
            file=sys.stderr,
        )
    return 0 if all(g.graded for g in grades) else 1


if __name__ == "__main__":
    sys.exit(main())
