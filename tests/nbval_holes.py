"""A pytest plugin that closes nbval's three holes (docs/facts.md §7) with public hooks only, so
that a new nbval release cannot break it.  Load it with `-p tests.nbval_holes` next to
`--nbval-lax`.

1. A mistyped `%magic` only prints a UsageError, and nbval passes the cell.  An IPython startup
   file (IPython's own extension point) turns it into an error output, which nbval fails.
2. A cell marked to check its output is compared with nothing if the notebook stores no
   reference.  A "marked cells" item per notebook fails on such a cell.
3. A cell marked `raises-exception` passes nbval whether or not it raised.  The startup file
   logs, per cell, whether it raised; the "marked cells" item, run after the notebook's cells,
   fails a marked cell that raised nothing.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import nbformat
import pytest

CHECK_OUTPUT = ("nbval-check-output", "NBVAL_CHECK_OUTPUT")
RAISES = ("raises-exception", "NBVAL_RAISES_EXCEPTION")

# No bare "B": "SmolLM2-1.7B" is a name, and bytes below a KiB are whole numbers.
_UNITS = r"(?:ms|µs|ns|s|min|h|GiB|MiB|KiB|GB|MB|kB|GB/s|MB/s|TFLOP/s|GFLOP/s|FLOP/s|FLOPs|TOPS|W)"
# A number in English format where German writes it otherwise.
ENGLISH_NUMBER = (
    # 0.130 ms, 13.0 GiB; but not 7.912 FLOPs, which is German for 7,912
    rf"(?<![\w.,])(?![1-9]\d{{0,2}}(?:\.\d{{3}})+ ?{_UNITS})\d+\.\d+ ?{_UNITS}(?![\w/])"
    r"|(?<![\w.,])\d{1,3}(?:,\d{3}){2,}(?![\d,])"  # 27,391,611,780 (not German 0,130)
    r"|(?<![\w.,])\d+(?:[.,]\d+)?%"  # 60% (German puts a space: 60 %)
)

# Runs in every kernel nbval starts (they inherit IPYTHONDIR from this process).  Besides the
# holes above it holds German notebooks to German numbers: a cell whose printed output shows an
# English-formatted number next to a unit (`0.130 ms`, `13.0 GiB`, `60%`) fails.
STARTUP = r"""
import json as _json, os as _os, re as _re, sys as _sys
from IPython import get_ipython as _get_ipython
from IPython.core.error import UsageError as _UsageError

_shell, _ran, _printed = _get_ipython(), {}, []
_ENGLISH = _re.compile(@ENGLISH_NUMBER@)


def _tee(write):
    def tee(text):
        _printed.append(text)
        return write(text)

    return tee


_sys.stdout.write = _tee(_sys.stdout.write)


def _before(info):
    _ran["source"] = info.raw_cell
    _printed.clear()


def _german():
    i18n = _sys.modules.get("utils.i18n")
    return i18n is not None and i18n.get_language() == "de"


def _after(result):
    error = result.error_before_exec or result.error_in_exec
    if isinstance(error, _UsageError):  # printed only: show it as the error it is
        _shell.showtraceback((RuntimeError, RuntimeError(f"UsageError: {error}"), None))
    elif error is None and _german():
        found = _ENGLISH.search("".join(_printed))
        if found:
            message = f"English number format in a German notebook: {found[0]!r}"
            _shell.showtraceback((RuntimeError, RuntimeError(message), None))
    log = _os.environ.get("COURSE_CELL_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as file:
            record = {"source": _ran.get("source", ""), "raised": error is not None}
            file.write(_json.dumps(record) + "\n")


_shell.events.register("pre_run_cell", _before)
_shell.events.register("post_run_cell", _after)
"""


def install_startup() -> Path:
    """An IPYTHONDIR whose startup file holds every kernel started from here to the rules above;
    returns the folder (set as IPYTHONDIR, with COURSE_CELL_LOG inside it)."""
    folder = Path(tempfile.mkdtemp(prefix="course-ipython-"))
    startup = folder / "profile_default" / "startup"
    startup.mkdir(parents=True)
    code = STARTUP.replace("@ENGLISH_NUMBER@", repr(ENGLISH_NUMBER))
    (startup / "50-course-nbval-holes.py").write_text(code, encoding="utf-8")
    os.environ["IPYTHONDIR"] = str(folder)
    os.environ["COURSE_CELL_LOG"] = str(folder / "cells.jsonl")
    return folder


def marked(cell, marks: tuple[str, ...]) -> bool:
    tags = cell.metadata.get("tags", [])
    return any(m in tags for m in marks) or any(f"# {m}" in cell.source for m in marks)


def pytest_configure(config: pytest.Config) -> None:
    install_startup()


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    if file_path.suffix == ".ipynb":
        return MarkedCellsFile.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each notebook's "marked cells" item right after its last cell."""
    ours = [i for i in items if isinstance(i, MarkedCells)]
    for item in ours:
        items.remove(item)
        same = [n for n, other in enumerate(items) if other.path == item.path]
        items.insert(same[-1] + 1 if same else len(items), item)


class MarkedCellsFile(pytest.File):
    def collect(self):
        yield MarkedCells.from_parent(self, name="marked cells")


class MarkedCells(pytest.Item):
    """Cells marked to check output have a reference; cells marked to raise did raise."""

    def runtest(self) -> None:
        log = Path(os.environ.get("COURSE_CELL_LOG", "/nonexistent"))
        runs = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        problems = []
        cells = nbformat.read(self.path, as_version=4).cells
        for number, cell in enumerate(cells, start=1):
            if cell.cell_type != "code":
                continue
            if marked(cell, CHECK_OUTPUT) and (cell.execution_count is None or not cell.outputs):
                problems.append(
                    f"cell {number} is marked to check its output, but the notebook stores no "
                    "reference output for it (run and save the notebook, or remove the mark)"
                )
            if marked(cell, RAISES):
                raised = [r["raised"] for r in runs if r["source"] == cell.source]
                if raised and not raised[-1]:
                    problems.append(f"cell {number} is marked raises-exception but raised nothing")
        if problems:
            raise MarkedCellError("\n".join(problems))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, MarkedCellError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"{self.path.name}: marked cells"


class MarkedCellError(Exception):
    pass
