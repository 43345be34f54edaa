"""Rules every committed notebook follows, so that nbval's pass means something
(docs/facts.md §7)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell

from utils.course import ROOT

NOTEBOOKS = sorted(
    p
    for p in (*ROOT.glob("notebooks/**/*.ipynb"), *ROOT.glob("labs/**/*.ipynb"))
    if ".ipynb_checkpoints" not in p.parts
)
CHECK_OUTPUT = ("nbval-check-output", "NBVAL_CHECK_OUTPUT")
RAISES = ("raises-exception", "NBVAL_RAISES_EXCEPTION")


def code_cells(path: Path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def marked(cell, marks) -> bool:
    tags = cell.metadata.get("tags", [])
    return any(m in tags for m in marks) or any(f"# {m}" in cell.source for m in marks)


@pytest.fixture(scope="module")
def magics() -> dict[str, set[str]]:
    names = InteractiveShell.instance().magics_manager.lsmagic()
    return {"line": set(names["line"]), "cell": set(names["cell"])}


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 2


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_notebook_rules(path, magics):
    for cell in code_cells(path):
        lines = cell.source.splitlines()
        # `!cmd` never fails a cell: use subprocess.run(..., check=True) where the result matters.
        assert not any(re.match(r"\s*!", line) for line in lines), (
            f"shell escape in {path.name}:\n{cell.source}"
        )
        # A mistyped magic is only a printed UsageError: every magic must exist.
        for line in lines:
            if m := re.match(r"\s*%%(\w+)", line):
                assert m[1] in magics["cell"], f"unknown cell magic %%{m[1]} in {path.name}"
            elif m := re.match(r"\s*%(\w+)", line):
                assert m[1] in magics["line"], f"unknown line magic %{m[1]} in {path.name}"
        # An output check needs a stored reference; nbval compares nothing without one.
        if marked(cell, CHECK_OUTPUT):
            assert cell.execution_count is not None and cell.outputs, (
                f"check-output cell without reference in {path.name}"
            )
        # raises-exception only allows an exception: catch it in code and assert instead.
        assert not marked(cell, RAISES), (
            f"raises-exception cell in {path.name}: catch and assert instead"
        )
