"""Submitted lab notebooks, before they run: which files, is each a notebook, which lab?

Where they run is `labs.kit.sandbox`: a copy of the course in a temporary folder.

Where the grader must stop, a function answers with a refusal: `(status, why)`, the status
machine-readable ("not_found", "not_a_notebook", "invalid_notebook", "not_a_lab", "wrong_lab"),
the reason in the grader's language.  `labs.kit.grade` turns it into the notebook's verdict line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from utils.i18n import text

Refusal = tuple[str, str]  # (status, why)


def notebooks_in(paths: list[str]) -> list[Path]:
    """The paths given, with each folder replaced by the notebooks in it."""
    found: list[Path] = []
    for name in paths:
        path = Path(name)
        inside = sorted(path.glob("*.ipynb")) if path.is_dir() else []
        found.extend(inside or [path])  # an empty folder still gets its verdict ("no such file")
    return found


def first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return (lines[0] if lines else type(error).__name__)[:160]


def read_notebook(path: Path) -> tuple[Any, Refusal | None]:
    """The notebook, or None and why it is not one."""
    import nbformat

    if path.is_dir():
        return None, (
            "not_found",
            text("a folder without .ipynb files", "ein Ordner ohne .ipynb-Dateien"),
        )
    if not path.is_file():
        return None, ("not_found", text("no such file", "Datei nicht gefunden"))
    if path.suffix != ".ipynb":
        return None, (
            "not_a_notebook",
            text(
                "not a notebook (a .ipynb file is expected, this is {kind})",
                "kein Notebook (erwartet wird eine .ipynb-Datei, das hier ist {kind})",
                kind=path.suffix or text("a file without suffix", "eine Datei ohne Endung"),
            ),
        )
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
    except (json.JSONDecodeError, nbformat.reader.NotJSONError) as error:
        error = error.__cause__ or error  # json's message says where: "line 3 column 5"
        return None, (
            "invalid_notebook",
            text(
                "the file is not valid notebook JSON (damaged?): {error}",
                "die Datei ist kein gültiges Notebook-JSON (beschädigt?): {error}",
                error=first_line(error),
            ),
        )
    except Exception as error:  # valid JSON, but not a notebook nbformat accepts
        return None, (
            "invalid_notebook",
            text(
                "not a valid notebook: {error}",
                "kein gültiges Notebook: {error}",
                error=first_line(error),
            ),
        )
    return nb, None


def bound_lab(nb: Any) -> str | None:
    """The lab whose checks the notebook imports (`from labs.checks.lab00 import ...`), for a
    notebook that lost its metadata."""
    for cell in nb.cells:
        if cell.cell_type == "code" and (
            match := re.search(r"labs\.checks\.lab(\d\d)", cell.source)
        ):
            return match[1]
    return None


def lab_to_grade(nb: Any, lab: str | None) -> tuple[str | None, Refusal | None]:
    """The lab to grade the notebook as: the one asked for (`lab`), else the one it says it is."""
    meta = nb.metadata.get("course") or {}
    number = str(meta["number"]) if "number" in meta else bound_lab(nb)
    if meta.get("kind") == "lesson":
        return None, (
            "not_a_lab",
            text(
                "lesson {number} is a lesson, not a lab",
                "Lektion {number} ist eine Lektion, kein Lab",
                number=number,
            ),
        )
    if lab is not None and number is not None and number != lab:
        return None, (
            "wrong_lab",
            text(
                "this notebook is from lab {number}, not lab {lab}",
                "dieses Notebook ist aus Lab {number}, nicht aus Lab {lab}",
                number=number,
                lab=lab,
            ),
        )
    if (lab or number) is None:
        return None, (
            "not_a_lab",
            text(
                "the notebook does not say which lab it is: pass --lab NN",
                "das Notebook sagt nicht, zu welchem Lab es gehört: Gib --lab NN an",
            ),
        )
    return lab or number, None
