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
# A number in English format next to a unit, for checks of single messages (the lab feedback).
ENGLISH_NUMBER = (
    # 0.130 ms, 13.0 GiB; but not 7.912 FLOPs, which is German for 7,912
    rf"(?<![\w.,])(?![1-9]\d{{0,2}}(?:\.\d{{3}})+ ?{_UNITS})\d+\.\d+ ?{_UNITS}(?![\w/])"
    r"|(?<![\w.,])\d{1,3}(?:,\d{3}){2,}(?![\d,])"  # 27,391,611,780 (not German 0,130)
    r"|(?<![\w.,])\d+(?:[.,]\d+)?%"  # 60% (German puts a space: 60 %)
)

# Runs in every kernel nbval starts (they inherit IPYTHONDIR from this process).  Besides the
# holes above it holds German notebooks to German output: after each cell, what it printed (stdout,
# stderr but for warnings, the value it displays) passes `utils.i18n.english_in_german` (no `0.130
# ms`, `60%`, `1.2e-03`, `27,391,611,780`, `True`, `[65504.0, inf]`), and every figure still open
# when the cell ends or that it shows passes `utils.plots.english_numbers` (tick labels, titles,
# legends), and no control it shows is labelled with its parameter's name (`card`).  The message names the cell, the text and the utils.i18n helper that writes it right.
STARTUP = r"""
import json as _json, os as _os, re as _re, sys as _sys
from IPython import get_ipython as _get_ipython
from IPython.core.error import UsageError as _UsageError

_shell, _ran, _printed, _drawn, _seen, _labels = _get_ipython(), {}, [], [], set(), []
_WARNING = _re.compile(r"\w+Warning: ")
_ADVICE = (
    (_re.compile(r"^(?:True|False)$"), "say in words what is true, or pass the value to "
     "utils.i18n.text()/say(), which writes ja/nein"),
    (_re.compile(r"^[\[(]"), "pass the list to utils.i18n.text('{values}', values=...), "
     "which writes its numbers the German way ([65504,0, inf])"),
    (_re.compile(r"\d[eE][+\-]?\d"), "utils.i18n.num(x, '.2e') writes 1,2 · 10⁻³, "
     "and words(n) writes a large number as 461 Mio."),
    (_re.compile(r"%$"), "utils.i18n.text('{p:.0%}', p=...) writes 60 %"),
    (_re.compile(r""), "utils.i18n.text()/say()/num() write numbers the German way "
     "(0,130 ms, 27.391.611.780); verbatim(x) keeps a version or a name as it is"),
)
_WIDGET_ADVICE = (
    "that is the parameter's name; give the learner words, e.g. "
    "utils.widgets.explore(..., labels={'card': text('own card', 'eigene Karte')})"
)
_FIGURE_ADVICE = (
    "tick labels are German once utils.start('de') ran before the plot; labels, titles and "
    "legends the code writes come from utils.i18n.text()/num()"
)


def _tee(write, stream):
    def tee(text):
        if not (stream == "stderr" and _WARNING.search(str(text))):
            _printed.append(str(text))
        return write(text)

    return tee


_sys.stdout.write = _tee(_sys.stdout.write, "stdout")
_sys.stderr.write = _tee(_sys.stderr.write, "stderr")


def _before(info):
    _ran["source"] = info.raw_cell
    _printed.clear()
    _drawn.clear()
    _seen.clear()
    _labels.clear()


def _german():
    i18n = _sys.modules.get("utils.i18n")
    return i18n is not None and i18n.get_language() == "de"


def _check_figure(figure, shown=False):
    # A figure shown again (a display handle's update) is checked again: it may have new ticks.
    if (id(figure) in _seen and not shown) or not _german():
        return
    _seen.add(id(figure))
    from utils.plots import english_numbers

    try:
        _drawn.extend(english_numbers(figure))
    except Exception as error:  # a figure that cannot draw fails the cell by itself
        _drawn.append(f"(a figure that could not be drawn: {error})")


def _figures():
    # Figures still open when the cell ends, checked before the inline backend shows and closes
    # them (post_execute hooks run in the order they were registered; this one is first).
    helpers = _sys.modules.get("matplotlib._pylab_helpers")
    if helpers is not None:
        for manager in helpers.Gcf.get_all_fig_managers():
            _check_figure(manager.canvas.figure)


def _check_widget(widget):
    # A control labelled with its parameter's name ("card", "api_model") and numbers in labels.
    if not _german():
        return
    from utils.i18n import english_in_german

    stack = [widget]
    while stack:
        one = stack.pop()
        stack.extend(getattr(one, "children", ()) or ())
        label = getattr(one, "description", "") or ""
        if label and label == getattr(one, "_kwarg", None):
            _labels.append(f"  {label!r} labels a control: {_WIDGET_ADVICE}")
        texts = [label, *[str(o) for o in (getattr(one, "_options_labels", None) or ())]]
        for found in english_in_german("\n".join(texts)):
            _labels.append(f"  {found!r} in a control: {_ADVICE[-1][1]}")


def _format(format):
    # Figures the cell showed itself (plt.show(), display(fig)) are closed before post_execute:
    # they are checked on their way to the display; so are the controls a cell displays.
    def checked(obj, *args, **kwargs):
        module = type(obj).__module__
        if module.startswith("matplotlib.figure"):
            _check_figure(obj, shown=True)
        elif module.startswith("ipywidgets"):
            _check_widget(obj)
        return format(obj, *args, **kwargs)

    return checked


_shell.display_formatter.format = _format(_shell.display_formatter.format)


def _advice(found):
    return next(advice for pattern, advice in _ADVICE if pattern.search(found))


def _shown(result):
    if result.result is None:
        return ""
    try:
        return _shell.display_formatter.format(result.result)[0].get("text/plain", "")
    except Exception:
        return ""


def _german_problems(result):
    from utils.i18n import english_in_german

    problems = [
        f"  {found!r} printed: {_advice(found)}"
        for found in dict.fromkeys(english_in_german("".join(_printed) + "\n" + _shown(result)))
    ]
    problems += [f"  {found!r} in a figure: {_FIGURE_ADVICE}" for found in dict.fromkeys(_drawn)]
    problems += list(dict.fromkeys(_labels))
    if not problems:
        return None
    first = next((line for line in _ran.get("source", "").splitlines() if line.strip()), "")
    return (
        f"English output in a German notebook, in the cell that begins {first[:70]!r}:\n"
        + "\n".join(problems)
    )


def _after(result):
    error = result.error_before_exec or result.error_in_exec
    if isinstance(error, _UsageError):  # printed only: show it as the error it is
        _shell.showtraceback((RuntimeError, RuntimeError(f"UsageError: {error}"), None))
    elif error is None and _german():
        message = _german_problems(result)
        if message:
            _shell.showtraceback((RuntimeError, RuntimeError(message), None))
    log = _os.environ.get("COURSE_CELL_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as file:
            record = {"source": _ran.get("source", ""), "raised": error is not None}
            file.write(_json.dumps(record) + "\n")


_shell.events.register("pre_run_cell", _before)
_shell.events.register("post_execute", _figures)
_shell.events.register("post_run_cell", _after)
"""


def install_startup() -> Path:
    """An IPYTHONDIR whose startup file holds every kernel started from here to the rules above;
    returns the folder (set as IPYTHONDIR, with COURSE_CELL_LOG inside it)."""
    folder = Path(tempfile.mkdtemp(prefix="course-ipython-"))
    startup = folder / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "50-course-nbval-holes.py").write_text(STARTUP, encoding="utf-8")
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
