"""Build a reveal.js slide deck per lesson and language, that opens without internet.

    python -m tools.slides                  # every lesson → build/slides/{en,de}/NN.slides.html
    python -m tools.slides --lessons 00 01  # only these
    make slides                             # the same, in the course's environment

The lesson sources carry no slide tags: this tool sets them at build time, from the headings
of the built notebook (notebooks/{en,de}/NN_slug.ipynb):

- the title cell (`# NN · title`) and every markdown cell that starts with `## ` begin a slide,
- a `### ` heading cell and every code cell begin a sub-slide (below the slide, arrow down),
- any other markdown cell continues the slide before it,
- the setup cell (tag `setup`) and the course's own checks (tag `guard`) are skipped.

Where `make site` has executed a lesson (build/executed/{lang}/NN_slug.ipynb, still current for
its notebook), the deck shows those outputs; otherwise it shows the code alone.  Widgets are
dropped from the outputs: a deck has no kernel, and the text each `explore` prints first is the
static fallback.  Badges that point at images on the internet become plain links.

reveal.js comes from the `sphinx-revealjs` package (pip, dependency group `site`), which ships
it; it is copied next to the decks (build/slides/reveal.js/), and the deck loads it with a plain
<script> tag instead of require.js from a CDN.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

import nbformat

from utils.course import LANGUAGES, ROOT
from utils.course import lessons as lesson_sources

OUT = ROOT / "build/slides"
EXECUTED = ROOT / "build/executed"
TEMPLATE_DIR = Path(__file__).resolve().parent / "slides_template"
SKIPPED_TAGS = {"setup", "guard", "checks"}
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# [![Open In Colab](https://…svg)](https://…) → [Open In Colab](https://…): no image from the net.
MAX_CODE_LINES = 18  # what a 1280 × 800 slide shows with its output below
MAX_TEXT_LINES = 18  # lines of text a 1280 × 800 slide shows
REMOTE_BADGE = re.compile(r"\[!\[([^\]]*)\]\(https?://[^)]*\)\]\(([^)]*)\)")


# --- which notebook, with which outputs ------------------------------------------------------


def fingerprint(nb_path: Path) -> str:
    """What an executed copy must have been executed from: the built notebook's bytes."""
    return hashlib.sha256(nb_path.read_bytes()).hexdigest()


def executed_copy(nb_path: Path, executed: Path = EXECUTED) -> Path | None:
    """build/executed/{lang}/NAME.ipynb if it was executed from this very notebook."""
    lang = nb_path.parent.name
    copy = executed / lang / nb_path.name
    if not copy.is_file():
        return None
    meta = json.loads(copy.read_text()).get("metadata", {}).get("course", {})
    return copy if meta.get("executed_from") == fingerprint(nb_path) else None


def lessons(root: Path = ROOT, numbers: list[str] | None = None) -> list[str]:
    """The stems (NN_slug) of the lessons with a source; with numbers, only those."""
    return [lesson.stem for lesson in lesson_sources(root, numbers)]


def static_outputs(outputs: list) -> list:
    """The outputs without live widgets (their text fallback was printed before them)."""
    return [o for o in outputs if WIDGET_MIME not in o.get("data", {})]


# --- slide structure ---------------------------------------------------------------------------


def slide_type(cell) -> str:
    """reveal.js role of one cell: slide, subslide, - (continue), skip."""
    if SKIPPED_TAGS & set(cell.metadata.get("tags", [])):
        return "skip"
    if cell.cell_type == "code":
        return "subslide"
    first = cell.source.lstrip().split("\n", 1)[0]
    if first.startswith(("# ", "## ")):
        return "slide"
    if first.startswith("### "):
        return "subslide"
    return "-"


def text_lines(source: str, width: int = 95) -> int:
    """About how many lines a markdown cell takes on a 1280 px slide (a heading counts two)."""
    rows = source.strip().split("\n")
    return sum(max(1, -(-len(row) // width)) + row.startswith("#") for row in rows)


def split_code(source: str, most: int = MAX_CODE_LINES) -> list[str]:
    """Long code in parts of at most about `most` lines, cut at blank lines between top-level
    statements where there are some, so that each part fits a slide."""
    lines = source.split("\n")
    if len(lines) <= most:
        return [source]
    parts, part = [], []
    for i, line in enumerate(lines):
        following = lines[i + 1] if i + 1 < len(lines) else ""
        part.append(line)
        at_top = not following.startswith((" ", "\t", ")", "]", "}"))
        if (not line.strip() and at_top and len(part) >= most // 2) or len(part) >= most + 4:
            parts.append("\n".join(part).strip("\n"))
            part = []
    if part:
        parts.append("\n".join(part).strip("\n"))
    return [p for p in parts if p]


def as_slides(nb):
    """A copy of the notebook with slide tags, skipped cells and widgets removed, and long code
    split over sub-slides (its outputs after the last part)."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    cells, height = [], 0
    for cell in nb.cells:
        kind = slide_type(cell)
        if kind == "skip" or cell.cell_type == "raw":
            continue
        if cell.cell_type == "markdown":
            lines = text_lines(cell.source)
            if kind == "-" and height + lines > MAX_TEXT_LINES:
                kind = "subslide"  # the text goes on below, not off the slide's bottom
            height = lines if kind != "-" else height + lines
        cell.metadata["slideshow"] = {"slide_type": kind}
        cell.metadata.pop("jupyter", None)  # a hidden source would hide the slide's code
        if cell.cell_type == "markdown":
            cell.source = REMOTE_BADGE.sub(r"[\1](\2)", cell.source)
            cells.append(cell)
            continue
        cell.outputs = static_outputs(cell.get("outputs", []))
        *first, last = split_code(cell.source)
        for part in first:
            piece = nbformat.v4.new_code_cell(part, metadata={"slideshow": {"slide_type": kind}})
            piece.execution_count = cell.get("execution_count")
            cells.append(piece)
        cell.source = last
        cells.append(cell)
    nb.cells = cells
    nb.metadata.pop("widgets", None)
    return nb


# --- reveal.js and the export ------------------------------------------------------------------


def reveal_source() -> Path:
    """reveal.js as the sphinx-revealjs package ships it (dist/ and plugin/)."""
    try:
        import sphinx_revealjs
    except ImportError as err:
        raise SystemExit(
            "reveal.js comes from the package sphinx-revealjs: "
            "install the course's `site` group (make slides)"
        ) from err
    folder = Path(sphinx_revealjs.__file__).parent / "_static/revealjs"
    if not (folder / "dist/reveal.js").is_file():
        raise SystemExit(f"sphinx-revealjs ships no reveal.js at {folder}")
    return folder


def copy_reveal(out: Path) -> Path:
    target = out / "reveal.js"
    source = reveal_source()
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source / "dist", target / "dist")
    shutil.copytree(source / "plugin/notes", target / "plugin/notes")
    if (source / "LICENSE").is_file():
        shutil.copy(source / "LICENSE", target / "LICENSE")
    return target


def exporter(lang: str = "en"):
    from nbconvert import SlidesExporter

    return SlidesExporter(
        template_name="course_reveal",
        extra_template_basedirs=[str(TEMPLATE_DIR)],
        reveal_url_prefix="../reveal.js",
        reveal_theme="white",
        reveal_scroll=True,
        language_code=lang,
    )


def build_deck(stem: str, lang: str, out: Path, root: Path = ROOT, executed=EXECUTED) -> Path:
    nb_path = root / "notebooks" / lang / f"{stem}.ipynb"
    copy = executed_copy(nb_path, executed)
    nb = as_slides(nbformat.read(copy or nb_path, as_version=4))
    if copy is None and len(nb.cells) > 1:  # said on the title slide, not hidden
        nb.cells[0].source += "\n\n" + NO_OUTPUTS[lang]
    nb.metadata["title"] = nb.cells[0].source.split("\n", 1)[0].lstrip("# ").strip()
    html, _ = exporter(lang).from_notebook_node(nb)
    target = out / lang / f"{stem[:2]}.slides.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(html)
    return target


def lesson_parser(prog: str, doc: str) -> argparse.ArgumentParser:
    """The options `make slides` and `make site` share: which lessons, which languages."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n")[0])
    parser.add_argument("--lessons", nargs="*", metavar="NN", help="only these lessons (00 01 …)")
    parser.add_argument("--lang", choices=LANGUAGES, action="append", help="only this language")
    return parser


NO_OUTPUTS = {
    "en": "*This deck shows code without outputs: no current executed copy of the lesson "
    "(`make site` executes it, or it failed there).*",
    "de": "*Diese Folien zeigen Code ohne Ausgaben: Es gibt keine aktuelle ausgeführte Kopie "
    "der Lektion (`make site` führt sie aus, oder sie ist dort fehlgeschlagen).*",
}


def main(argv: list[str] | None = None) -> int:
    parser = lesson_parser("python -m tools.slides", __doc__)
    parser.add_argument("--out", type=Path, default=OUT, help="folder (default build/slides)")
    args = parser.parse_args(argv)
    copy_reveal(args.out)
    without = []
    for stem in lessons(ROOT, args.lessons):
        for lang in args.lang or LANGUAGES:
            target = build_deck(stem, lang, args.out)
            print(f"wrote {target}")
            if not executed_copy(ROOT / "notebooks" / lang / f"{stem}.ipynb"):
                without.append(str(target))
    if without:
        print(f"WITHOUT OUTPUTS ({len(without)} deck(s); `make site` executes the lessons):")
        print("\n".join(f"  {path}" for path in without))
    return 0


if __name__ == "__main__":
    sys.exit(main())
