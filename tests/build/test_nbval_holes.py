"""The nbval holes (docs/facts.md §7) are closed by tests/nbval_holes.py: shown on small notebooks."""

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from utils.course import ROOT


def run_nbval(tmp_path: Path, cells: list, strict: bool = True) -> subprocess.CompletedProcess:
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--nbval-lax",
        "--nbval-current-env",
        str(path),
    ]
    if strict:
        command[4:4] = ["-p", "tests.nbval_holes"]
    env = {k: v for k, v in os.environ.items() if k not in ("IPYTHONDIR", "COURSE_CELL_LOG")}
    env["PYTHONPATH"] = str(ROOT)  # the probe imports utils from its temporary folder
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)


def code(source: str, **metadata):
    return nbformat.v4.new_code_cell(source, metadata=metadata)


def test_mistyped_magic_passes_plain_nbval_but_fails_here(tmp_path):
    cells = [code("x = 1"), code("%nosuchmagic\nprint('never')")]
    assert run_nbval(tmp_path, cells, strict=False).returncode == 0  # the hole
    result = run_nbval(tmp_path, cells)
    assert result.returncode == 1, result.stdout
    assert "UsageError" in result.stdout and "1 failed, 2 passed" in result.stdout


def test_working_magics_and_code_pass(tmp_path):
    result = run_nbval(tmp_path, [code("%time x = sum(range(10))"), code("assert x == 45")])
    assert result.returncode == 0, result.stdout


def test_a_raising_cell_still_fails(tmp_path):
    result = run_nbval(tmp_path, [code("raise ValueError('boom')")])
    assert result.returncode == 1 and "ValueError" in result.stdout


def test_check_output_cell_without_reference_fails(tmp_path):
    cell = code("print(42)", tags=["nbval-check-output"])
    assert run_nbval(tmp_path, [cell], strict=False).returncode == 0  # the hole: nothing compared
    result = run_nbval(tmp_path, [cell])
    assert result.returncode == 1 and "no reference" in result.stdout


def test_check_output_cell_with_reference_is_compared(tmp_path):
    cell = code("print(42)", tags=["nbval-check-output"])
    cell.execution_count = 1
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="41\n")]
    result = run_nbval(tmp_path, [cell])
    assert result.returncode == 1 and "outputs differ" in result.stdout


@pytest.mark.parametrize("source, ok", [("raise KeyError('x')", True), ("y = 1", False)])
def test_raises_exception_requires_an_exception(tmp_path, source, ok):
    result = run_nbval(tmp_path, [code(source, tags=["raises-exception"])])
    assert (result.returncode == 0) == ok, result.stdout


def test_the_plugin_uses_no_nbval_internals():
    """Only pytest's and IPython's public hooks: nothing of nbval is imported or patched."""
    source = (ROOT / "tests/nbval_holes.py").read_text()
    assert "import nbval" not in source and "from nbval" not in source


GERMAN = "from utils.i18n import set_language\nset_language('de')"


@pytest.mark.parametrize(
    "printed, ok",
    [
        ("print('Median 0,130 ms, 13,0 GiB, 60 %')", True),
        ("print('Median 0.130 ms')", False),
        ("print('13.0 GiB')", False),
        ("print('60% der Spitzenleistung')", False),
        ("print('27,391,611,780 FLOPs')", False),
        ("print('passt:', True)", False),
        ("from utils.i18n import say\nsay('passt: {ok}', ok=True)", True),  # "passt: ja"
        ("print('Bereich', [65504.0, float('inf')])", False),
        ("from utils.i18n import say\nsay('Bereich {r}', r=[65504.0, float('inf')])", True),
        ("print('Fehler 1.2e-03')", False),
        ("import sys\nsys.stderr.write(' 60%|######    | 6/10')", False),  # a progress bar
        ("import warnings\nwarnings.warn('x is 0.5')", True),  # a library's English warning
        ("[0.5, 0.25]", False),  # the value a cell displays
    ],
)
def test_german_notebooks_show_german_numbers(tmp_path, printed, ok):
    result = run_nbval(tmp_path, [code(GERMAN), code(printed)])
    assert (result.returncode == 0) == ok, result.stdout
    if not ok:
        assert "English output in a German notebook" in result.stdout


def test_the_failure_names_the_cell_the_text_and_the_helper(tmp_path):
    result = run_nbval(tmp_path, [code(GERMAN), code("ok = True\nprint('passt:', ok)")])
    assert result.returncode == 1, result.stdout
    assert "the cell that begins 'ok = True'" in result.stdout
    assert "'True' printed" in result.stdout and "ja/nein" in result.stdout


def test_english_notebooks_keep_english_numbers(tmp_path):
    cells = [code("print('Median 0.130 ms, 60%', True, [0.5])"), code(PLOT + "plt.show()")]
    result = run_nbval(tmp_path, cells)
    assert result.returncode == 0, result.stdout


PLOT = "import matplotlib.pyplot as plt\nplt.plot([0, 0.5, 1.5], [0.1, 0.2, 0.3])\n"


@pytest.mark.parametrize("show", ["plt.show()", "pass", "plt.gcf()"])
def test_german_figures_need_german_tick_labels(tmp_path, show):
    """Shown by the cell, left open for the inline backend, or displayed as the cell's value."""
    english = run_nbval(tmp_path, [code(GERMAN), code(PLOT + show)])
    assert english.returncode == 1, english.stdout
    assert "in a figure" in english.stdout and "utils.start('de')" in english.stdout
    localized = GERMAN + "\nfrom utils import plots\nplots.localize('de')"
    german = run_nbval(tmp_path, [code(localized), code(PLOT + show)])
    assert german.returncode == 0, german.stdout


def test_german_figures_need_german_labels(tmp_path):
    localized = GERMAN + "\nfrom utils import plots\nplots.localize('de')"
    cells = [code(localized), code(PLOT + "plt.title('Median 0.130 ms')\nplt.show()")]
    result = run_nbval(tmp_path, cells)
    assert result.returncode == 1 and "'0.130 ms' in a figure" in result.stdout, result.stdout


WIDGETS = (
    "import ipywidgets\n"
    "def f(card='T4', n=1):\n    pass\n"
    "panel = ipywidgets.interactive(f, card=['T4', 'L4'], n=[1, 2])\n"
)


@pytest.mark.parametrize(
    "label, ok",
    [("", False), ("panel.children[0].description = 'Karte'\n", True)],
)
def test_german_controls_need_words_not_parameter_names(tmp_path, label, ok):
    pytest.importorskip("ipywidgets")
    fix = label + "panel.children[1].description = 'Anzahl'\n" if ok else ""
    result = run_nbval(tmp_path, [code(GERMAN), code(WIDGETS + fix + "display(panel)")])
    assert (result.returncode == 0) == ok, result.stdout
    if not ok:
        assert "'card' labels a control" in result.stdout
