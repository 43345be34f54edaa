"""Every citation in the repository can be followed by someone who has only the repository.

A fork, a learner on Colab, a trainer with a printout: none of them has the team's notes or the
machine a file was written on.  So every tracked text file (sources, docs, data, built notebooks)
is scanned for

- references to documents the repository lacks: the team's notes ("REFERENCE §12", "course
  notes", "../shared"), a `docs/NAME.md §N` whose file or section does not exist (in prose and in
  the messages code prints), a Markdown link or a `path/in/backticks` in prose to a repository
  path that does not exist;
- absolute paths of a machine: /work/, /home/NAME/, /root/, /Users/, C:\\ anywhere, and /tmp/
  in prose (Markdown, comments, data, notebook text).  Code may still write a temporary file
  (`tempfile` is better), because that path is the learner's own, not the author's.

The rules live in `problems(path, text)`; the tests below plant each kind of reference and show
that it is caught, so the scan of the real files cannot pass by accident.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
from pathlib import Path

import pytest

from utils.course import ROOT

TEXT_SUFFIXES = {".py", ".md", ".csv", ".json", ".jsonl", ".toml", ".txt", ".yml", ".yaml"}
TEXT_SUFFIXES |= {".ipynb", ".cfg", ".j2", ".html"}
TEXT_NAMES = {"Makefile", ".gitignore", "run"}
# This file plants every forbidden reference on purpose (tests below).
SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()

# The team's notes and the folder they live in: never part of a clone.
NOTES = re.compile(r"\bREFERENCE\b|course notes|Kursnotizen|\.\./shared\b", re.IGNORECASE)
NOTES_CASE = re.compile(
    r"\bREFERENCE\b"
)  # the word itself only in capitals (a "reference" is fine)
# Absolute paths of one machine.  /tmp/ is judged separately (prose only).
MACHINE_PATH = re.compile(
    r"(?<![\w.~-])(/work/|/home/[A-Za-z0-9_.-]+/|/root/|/Users/[A-Za-z0-9_.-]+|[A-Z]:\\\\?[A-Za-z])"
)
TMP_PATH = re.compile(r"(?<![\w.~-])/tmp/")
# docs/facts.md §4.1, facts.md §5 and §10, design.md §2, §3
SECTION_REF = re.compile(
    r"(?:docs/)?(?P<doc>[A-Za-z_.-]+\.md)\)?,?\s*§\s*(?P<first>\d+(?:\.\d+)*)"
    r"(?P<more>(?:\s*(?:,|and|und|or|oder|/)\s*§\s*\d+(?:\.\d+)*)*)"
)
MORE_SECTIONS = re.compile(r"§\s*(\d+(?:\.\d+)*)")
# [text](target) and ![alt](target); a target with a scheme, an anchor only, or a template
# placeholder ({...}, $...) is not a repository path.
LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?(?P<target>[^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
# `utils/memory/fit.py` in prose: a file a reader is told to open.  NN, slug, name: a pattern, not a file.
CODE_PATH = re.compile(
    r"`((?:utils|data|docs|tools|tests|benchmarks|labs|notebooks|LICENSES)/[\w./-]+)`"
)
PLACEHOLDER = re.compile(r"NN|slug|_name\b|\*")
NOT_A_PATH = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|#|//)|[{}$@%]", re.IGNORECASE)


def tracked_text_files() -> list[Path]:
    """The text files git tracks; outside a git checkout (a downloaded archive) the course's
    folders and root files."""
    try:
        done = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True)
        names = done.stdout.split("\0") if done.returncode == 0 else []
    except FileNotFoundError:  # no git installed
        names = []
    if not any(names):
        folders = ("notebooks", "labs", "utils", "tools", "tests", "docs", "data", "benchmarks")
        found = [p for f in folders for p in (ROOT / f).rglob("*") if p.is_file()]
        found += [p for p in ROOT.iterdir() if p.is_file()]
        names = [p.relative_to(ROOT).as_posix() for p in found if "__pycache__" not in p.parts]
    return [
        ROOT / n
        for n in names
        if n
        and n != SELF
        and (Path(n).suffix in TEXT_SUFFIXES or Path(n).name in TEXT_NAMES)
        and (ROOT / n).is_file()
    ]


@functools.cache
def sections(doc: str) -> set[str] | None:
    """The section numbers of a document in docs/ (or the root): '## 4. …' gives '4',
    '### 4.1 …' gives '4.1'.  None when the document does not exist."""
    for folder in (ROOT / "docs", ROOT):
        path = folder / doc
        if path.is_file():
            found = re.findall(r"^#{1,4}\s+(\d+(?:\.\d+)*)\.?\s", path.read_text(), re.MULTILINE)
            return set(found)
    return None


def parts(path: Path, text: str) -> list[tuple[str, str]]:
    """(kind, text) pieces of a file: 'prose' or 'code'.  A notebook's Markdown cells are prose,
    its code cells code; in a .py file comment lines are prose; other text files are prose."""
    if path.suffix == ".ipynb":
        cells = json.loads(text)["cells"]
        return [
            ("prose" if c["cell_type"] == "markdown" else "code", "".join(c["source"]))
            for c in cells
        ]
    if path.suffix == ".py":
        code, prose = [], []
        for line in text.splitlines():
            stripped = line.lstrip()
            (prose if stripped.startswith("#") else code).append(line)
            if "#" in stripped and not stripped.startswith("#"):
                prose.append(stripped[stripped.index("#") :])  # a trailing comment
        return [("prose", "\n".join(prose)), ("code", "\n".join(code))]
    return [("prose", text)]


def link_base(path: Path) -> Path:
    """Where a relative link in `path` points from: a notebook source's links are written for
    the built notebook (notebooks/src -> notebooks/en, labs/src -> labs/en)."""
    rel = path.relative_to(ROOT)
    if rel.parts[:2] in (("notebooks", "src"), ("labs", "src")):
        return ROOT / rel.parts[0] / "en"
    return path.parent


def problems(path: Path, text: str) -> list[str]:
    """What a reader of `path` could not follow, one line each."""
    found = []
    for kind, piece in parts(path, text):
        for match in NOTES.finditer(piece):
            word = match.group(0)
            if word.lower() == "reference" and not NOTES_CASE.fullmatch(word):
                continue
            found.append(f"team notes cited: {_context(piece, match)}")
        for match in MACHINE_PATH.finditer(piece):
            found.append(f"absolute path of a machine: {_context(piece, match)}")
        if kind == "prose":
            for match in TMP_PATH.finditer(piece):
                found.append(f"/tmp path in prose or data: {_context(piece, match)}")
        for match in SECTION_REF.finditer(piece):
            known = sections(match["doc"])
            if known is None:
                if match.group(0).startswith("docs/"):
                    found.append(f"missing document: {_context(piece, match)}")
                continue
            numbers = [match["first"], *MORE_SECTIONS.findall(match["more"] or "")]
            for number in numbers:
                if number not in known:
                    found.append(
                        f"no section §{number} in {match['doc']}: {_context(piece, match)}"
                    )
        for match in CODE_PATH.finditer(piece if kind == "prose" else ""):
            named = match.group(1).rstrip("/")
            if not PLACEHOLDER.search(named) and not (ROOT / named).exists():
                found.append(f"names a missing file: {_context(piece, match)}")
        # Links in code build pages elsewhere (the site, slides); prose links are read here.
        for match in LINK.finditer(piece if kind == "prose" else ""):
            target = match["target"].split("#")[0]
            if not target or NOT_A_PATH.search(match["target"]):
                continue
            if not (link_base(path) / target).resolve().exists():
                found.append(f"link to a missing path: {_context(piece, match)}")
    return found


def _context(text: str, match: re.Match) -> str:
    start, end = max(0, match.start() - 30), min(len(text), match.end() + 30)
    return repr(text[start:end])


# --- the rules, each shown to catch what it is for ----------------------------------------------

HERE = ROOT / "docs" / "example.md"  # a file that need not exist: only its folder counts
PLANTED = {
    "team notes": "Sources: NVIDIA datasheet; REFERENCE §12 for the prices.",
    "team notes, German": "Quellen: Kursnotizen, Abschnitt 4.",
    "course notes": "see the course notes for the measurement",
    "shared folder": "the glossary in ../shared/seed/glossary.txt",
    "path of another machine": "RunPod table (March 2026); /work/shared/REFERENCE.md",
    "home folder": "measured with the file /home/alex/prices.csv",
    "macOS home": "data in /Users/alex/Downloads",
    "Windows path": r"read from C:\Users\alex\prices.csv",
    "root's home": "the model cached in /root/.cache/huggingface",
    "/tmp in prose": "the table was written to /tmp/prices.csv",
    "missing section": "the rule of thumb (docs/facts.md §99)",
    "missing second section": "docs/facts.md §4 and §99",
    "missing document": "as docs/handbook.md §2 says",
    "missing link": "open [the lab](../labs/en/99_nothing.ipynb)",
    "missing file named": "the kernel keeps the count (`utils/jaxcompat.py`)",
}


@pytest.mark.parametrize("text", PLANTED.values(), ids=PLANTED.keys())
def test_each_rule_catches_its_case(text):
    assert problems(HERE, text), text


def test_what_is_allowed_passes():
    fine = (
        "Cross-reference the results (docs/facts.md §4.1 and §12); open [the README](../README.md)"
        " or [Colab](https://colab.research.google.com/); checkpoints go to /kaggle/working or"
        " /content/drive; Linux resets the peak in /proc/self/clear_refs; open `utils/memory/fit.py`;"
        " a lesson is `notebooks/src/NN_slug.py`."
    )
    assert problems(HERE, fine) == []


def test_tmp_is_allowed_in_code_but_not_in_comments():
    source = ROOT / "notebooks" / "src" / "99_example.py"
    assert problems(source, 'out = "/tmp/result.json"\n') == []
    assert problems(source, "# the result lands in /tmp/result.json\n")
    assert problems(source, 'out = "/tmp/result.json"  # en: in /tmp/ | de: in /tmp/\n')


def test_a_notebook_is_read_by_its_cells():
    notebook = ROOT / "notebooks" / "en" / "99_example.ipynb"
    cells = [
        {"cell_type": "code", "source": ["path = '/tmp/x.json'"]},
        {"cell_type": "markdown", "source": ["Prices: course notes §12"]},
    ]
    (problem,) = problems(notebook, json.dumps({"cells": cells}))
    assert "team notes" in problem


def test_a_source_links_as_its_built_notebook():
    source = ROOT / "notebooks" / "src" / "99_example.py"
    assert problems(source, "# [lab 09](../../labs/en/lab09_costs.ipynb)\n") == []
    assert problems(source, "# [lab 09](../../labs/en/09_costs.ipynb)\n")  # the lesson's name
    assert problems(source, "# [lab 99](../../labs/en/99_missing.ipynb)\n")


# --- the repository ------------------------------------------------------------------------------


def test_the_scan_reads_every_kind_of_file():
    suffixes = {p.suffix for p in tracked_text_files()}
    assert {".py", ".md", ".csv", ".ipynb", ".jsonl", ".toml"} <= suffixes


@pytest.mark.parametrize("path", tracked_text_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_dangling_reference_and_no_foreign_path(path):
    found = problems(path, path.read_text(encoding="utf-8"))
    assert not found, "\n".join(found)


# --- the licences ---------------------------------------------------------------------------------

BUILT = sorted(
    p
    for p in (*ROOT.glob("notebooks/[a-z][a-z]/*.ipynb"), *ROOT.glob("labs/**/*.ipynb"))
    if ".ipynb_checkpoints" not in p.parts
)


def licence_links(title: str) -> set[str]:
    """The repository paths a title cell's licence line links to on GitHub."""
    return set(re.findall(r"\]\(https://github\.com/[^/]+/[^/]+/blob/[^/]+/([^)]+)\)", title))


def test_licence_files_exist_and_both_readmes_name_them():
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    assert "Attribution 4.0 International" in (ROOT / "LICENSES/CC-BY-4.0.txt").read_text()
    for readme in ("README.md", "README.de.md"):
        text = (ROOT / readme).read_text()
        assert "(LICENSE)" in text and "(LICENSES/CC-BY-4.0.txt)" in text, readme


@pytest.mark.parametrize("path", BUILT, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_built_notebook_names_both_licences(path):
    title = json.loads(path.read_text())["cells"][0]["source"]
    title = "".join(title) if isinstance(title, list) else title
    links = licence_links(title)
    assert {"LICENSE", "LICENSES/CC-BY-4.0.txt"} <= links, f"{path.name}: no licence line"
    assert all((ROOT / link).is_file() for link in links), links


def test_the_licence_check_fails_without_the_line():
    assert not {"LICENSE"} <= licence_links("# 09 · Costs\n\n[![Open In Colab](x)](y)")
