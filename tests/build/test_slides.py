"""`make slides`: a reveal.js deck per lesson and language, its structure set from the headings at
build time (the sources carry no slide tags), opening without internet."""

from __future__ import annotations

import importlib.util
import re

import nbformat
import pytest

pytest.importorskip("nbconvert")
# ships reveal.js (dependency group `site`); looked up, not imported: slow to import, and only the
# worker that builds the decks needs it
if importlib.util.find_spec("sphinx_revealjs") is None:
    pytest.skip("sphinx-revealjs is not installed", allow_module_level=True)

from tools import slides
from utils import course
from utils.course import LANGUAGES, ROOT

LESSON = "00_what_hardware"
REMOTE_ASSET = re.compile(r'<(script|link|img)[^>]+(src|href)="(https?:)?//', re.I)


def md(source, **meta):
    return nbformat.v4.new_markdown_cell(source, metadata=meta)


def test_slide_types_follow_the_headings():
    assert slides.slide_type(md("# 00 · Title\n\nbadges")) == "slide"
    assert slides.slide_type(md("## 2. CPU, GPU, TPU\n\ntext")) == "slide"
    assert slides.slide_type(md("### A detail")) == "subslide"
    assert slides.slide_type(md("More text under the heading.")) == "-"
    assert slides.slide_type(nbformat.v4.new_code_cell("x = 1")) == "subslide"
    for tag in ("setup", "guard"):
        cell = nbformat.v4.new_code_cell("assert x", metadata={"tags": [tag]})
        assert slides.slide_type(cell) == "skip"


def test_sources_carry_no_slide_tags():
    for lesson in course.lessons():
        assert "slideshow" not in lesson.path.read_text(), lesson.path


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    """Lesson 00 in both languages; the English one from an 'executed' copy with two outputs."""
    out = tmp_path_factory.mktemp("slides")
    executed = tmp_path_factory.mktemp("executed")
    nb_path = ROOT / "notebooks/en" / f"{LESSON}.ipynb"
    nb = nbformat.read(nb_path, as_version=4)
    code = next(
        c for c in nb.cells if c.cell_type == "code" and "setup" not in c.metadata.get("tags", [])
    )
    code.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="MEASURED-OUTPUT 42\n"),
        nbformat.v4.new_output(
            "display_data",
            data={slides.WIDGET_MIME: {"model_id": "x"}, "text/plain": "WIDGET-REPR"},
        ),
    ]
    nb.metadata.setdefault("course", {})["executed_from"] = slides.fingerprint(nb_path)
    (executed / "en").mkdir()
    nbformat.write(nb, executed / "en" / f"{LESSON}.ipynb")
    slides.copy_reveal(out)
    built = {lang: slides.build_deck(LESSON, lang, out, executed=executed) for lang in LANGUAGES}
    return out, built


def test_decks_exist_where_the_makefile_says(decks):
    out, built = decks
    assert built == {lang: out / lang / "00.slides.html" for lang in LANGUAGES}


def test_deck_opens_offline(decks):
    out, built = decks
    for deck in built.values():
        html = deck.read_text()
        assert not REMOTE_ASSET.search(html), REMOTE_ASSET.search(html).group(0)
        assert "require.js" not in html and "unpkg.com" not in html
        for asset in re.findall(r'(?:src|href)="(\.\./reveal\.js/[^"]+)"', html):
            assert (deck.parent / asset).resolve().is_file(), asset
        assert '<script src="../reveal.js/dist/reveal.js">' in html


def test_one_slide_per_heading_and_no_setup_or_guard(decks):
    _, built = decks
    for lang, deck in built.items():
        nb = nbformat.read(ROOT / f"notebooks/{lang}/{LESSON}.ipynb", as_version=4)
        headings = [c for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("## ")]
        html = deck.read_text()
        # nbconvert nests: <section> per slide around a <section> per sub-slide.
        top = len(re.findall(r"<section>\s*<section>", html))
        assert top == len(headings) + 1  # the title slide, then one per `## ` heading
        assert "COURSE_REPO" not in html  # the setup cell
        assert headings[0].source.split("\n")[0][3:] in html


def test_outputs_of_the_executed_copy_without_widgets(decks):
    _, built = decks
    english, german = (built[lang].read_text() for lang in ("en", "de"))
    assert "MEASURED-OUTPUT 42" in english and "WIDGET-REPR" not in english
    assert "MEASURED-OUTPUT" not in german  # no executed copy: code only
    assert "Welche Hardware habe ich?" in german and 'lang="de"' in german


def test_a_deck_without_outputs_says_so(decks):
    _, built = decks
    assert slides.NO_OUTPUTS["de"].strip("*")[:40] in built["de"].read_text()
    assert slides.NO_OUTPUTS["en"].strip("*")[:40] not in built["en"].read_text()


def test_long_code_is_split_to_fit_a_slide():
    lines = [f"x{i} = {i}" for i in range(50)]
    source = "\n\n".join("\n".join(lines[i : i + 5]) for i in range(0, 50, 5))
    parts = slides.split_code(source)
    assert len(parts) > 1 and "\n".join(parts).split() == source.split()
    assert all(len(p.split("\n")) <= slides.MAX_CODE_LINES + 4 for p in parts)
    # a cut falls on a blank line between top-level statements, not inside a function
    body = "def f():\n" + "\n".join(f"    y{i} = {i}\n" for i in range(8))
    cut = slides.split_code(body + "\n\n" + "\n".join(lines[:20]))
    assert cut[0].startswith("def f():") and "    y7 = 7" in cut[0]
    assert not any(p.startswith(" ") for p in cut)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(source)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="DONE\n")]
    nb.cells = [md("# 00 · T"), cell]
    shown = slides.as_slides(nb).cells[1:]
    assert len(shown) == len(parts) and [c.source for c in shown] == parts
    assert [bool(c.outputs) for c in shown] == [False] * (len(parts) - 1) + [True]


def test_long_text_goes_on_in_a_sub_slide():
    nb = nbformat.v4.new_notebook()
    words = " ".join(["word"] * 60)
    nb.cells = [md("## 1. A section"), *[md(words) for _ in range(12)]]
    kinds = [c.metadata["slideshow"]["slide_type"] for c in slides.as_slides(nb).cells]
    assert kinds[0] == "slide" and "subslide" in kinds
    # no slide or sub-slide holds more text than fits
    height = 0
    for cell, kind in zip(slides.as_slides(nb).cells, kinds, strict=True):
        height = slides.text_lines(cell.source) + (height if kind == "-" else 0)
        assert height <= slides.MAX_TEXT_LINES
