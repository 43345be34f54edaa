"""`make site`: the static course website, built for ONE small lesson (00) in both languages to
prove the pipeline (execute once, render with Sphinx + myst-nb, offline).  The full site, every
lesson executed, is `make site` and no part of `make test`."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tools import site as site_tool
from utils import course
from utils.course import LANGUAGES, ROOT

pytest.importorskip("sphinx")
pytest.importorskip("myst_nb")

LESSON = "00_what_hardware"
REMOTE_SCRIPT = re.compile(r'<script[^>]+src="(https?:)?//[^"]*"', re.I)
REMOTE_LINK = re.compile(r'<link[^>]+href="(https?:)?//[^"]*"', re.I)  # stylesheets, fonts


@pytest.fixture(scope="module")
def site(once) -> Path:
    def make(work: Path) -> None:
        command = [sys.executable, "-m", "tools.site", "--lessons", "00"]
        command += ["--out", str(work / "site"), "--executed", str(work / "executed")]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    return once("site", make) / "site"


def test_a_second_run_executes_nothing(site, capsys):
    """The executed copies are current: the step that executes finds them and runs no kernel."""
    executed = site.parent / "executed"
    failed = site_tool.execute_all([LESSON], LANGUAGES, executed, force=False, timeout=60)
    said = capsys.readouterr().out
    assert failed == [] and "executing" not in said, said
    for lang in LANGUAGES:
        assert f"current: executed/{lang}/{LESSON}.ipynb" in said


def page(site: Path, lang: str, name: str = LESSON) -> str:
    return (site / lang / f"{name}.html").read_text()


def test_pages_in_both_languages_with_executed_outputs(site):
    english, german = page(site, "en"), page(site, "de")
    assert "What hardware do I have?" in english and "Welche Hardware habe ich?" in german
    # The setup cell's one line of output, without its code; the pre-flight's lines.
    assert "Platform: local" in english and "Plattform: lokal" in german
    assert "COURSE_REPO" not in english + german
    assert re.search(r"OK +Python", english) and re.search(r"OK +Python", german)


def test_language_switch_on_every_page(site):
    assert f'href="../de/{LESSON}.html"' in page(site, "en")
    assert f'href="../en/{LESSON}.html"' in page(site, "de")
    assert 'href="../de/index.html"' in page(site, "en", "index")
    assert 'hreflang="de">Deutsch</a>' in page(site, "en")
    assert 'hreflang="en">English</a>' in page(site, "de")


def test_lesson_table_on_the_index_pages(site):
    english, german = page(site, "en", "index"), page(site, "de", "index")
    assert f'href="{LESSON}.html"' in english and f'href="{LESSON}.html"' in german
    assert "in preparation" in english and "in Vorbereitung" in german  # lessons 01-09 here
    top = (site / "index.html").read_text()
    assert 'href="en/index.html"' in top and 'href="de/index.html"' in top
    # the start page: one table of the whole course map, both languages, levels and durations
    assert f'href="en/{LESSON}.html"' in top and f'href="de/{LESSON}.html"' in top
    assert "Foundations" in top and "Grundlagen" in top
    assert top.count("<tr") == len(course.course_map()) + 1
    lesson = course.lessons(numbers=["00"])[0]
    assert f"{lesson.duration['t4']} / {lesson.duration['cpu']} min" in top


def test_footer_and_sidebar_in_the_page_language(site):
    english, german = page(site, "en"), page(site, "de")
    assert "©." not in english + german and "Powered by" not in english + german
    assert "GPU &amp; TPU in der Praxis" in german.split('class="footer"')[1]
    assert "GPU &amp; TPU in Practice" in english.split('class="footer"')[1]
    logo = german.split('class="logo"')[1].split("</h1>")[0]
    assert "in der Praxis" in logo and "in Practice" not in logo
    # The lessons of the page's language only, and the theme's words in it.
    nav = german.split("course-nav")[1].split("</nav>")[0]
    assert "Welche Hardware habe ich?" in nav and "What hardware" not in nav
    assert 'placeholder="Suchen"' in german and 'placeholder="Search"' in english
    assert "Auf dieser Seite" in german and "On this page" in english
    assert '<html lang="de"' in german and '<html lang="en"' in english


def test_each_language_is_a_site_of_its_own(site):
    """The theme's own words, the search page and its stemming in the page's language."""
    german, english = page(site, "de"), page(site, "en")
    assert 'title="Vollbildmodus"' in german and 'title="Fullscreen mode"' in english
    for lang in LANGUAGES:
        options = (site / lang / "_static/documentation_options.js").read_text()
        assert f"LANGUAGE: '{lang}'" in options
    assert '<html lang="de"' in (site / "de/search.html").read_text()
    assert 'action="search.html"' in german  # its own language's search


def test_long_output_lines_wrap(site):
    css = (site / "de/_static/course.css").read_text()
    assert "pre-wrap" in css


def test_pages_load_no_script_from_the_internet(site):
    for lang in LANGUAGES:
        for name in (LESSON, "index"):
            html = page(site, lang, name)
            assert not REMOTE_SCRIPT.search(html), REMOTE_SCRIPT.search(html).group(0)
            assert not REMOTE_LINK.search(html), REMOTE_LINK.search(html).group(0)
            assert "widget-view+json" not in html
            assert not re.search(r'<img[^>]+src="(https?:)?//', html)  # badges: text links


def test_a_page_without_outputs_carries_a_notice(tmp_path):
    """A notebook that failed (no current executed copy) keeps its page, with the notice on top;
    main() lists it and returns 1 (seen in the build: `FAILED: … did not execute`)."""
    for lang in LANGUAGES:
        nb = site_tool.page_notebook(ROOT / "notebooks" / lang / f"{LESSON}.ipynb", tmp_path)
        assert "course-failed" in nb.cells[1].source
        assert site_tool.WORDS[lang]["failed"] in nb.cells[1].source
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(not c.outputs for c in code)


def test_a_failing_notebook_fails_the_build(tmp_path, monkeypatch, capsys):
    def fails(stems, langs, executed, force, timeout):
        return [f"notebooks/{lang}/{stems[0]}.ipynb" for lang in langs]

    monkeypatch.setattr(site_tool, "execute_all", fails)
    monkeypatch.setattr(site_tool, "render", lambda staging, out: None)
    argv = ["--lessons", "00", "--out", str(tmp_path / "site"), "--executed", str(tmp_path)]
    assert site_tool.main(argv) == 1
    out = capsys.readouterr().out
    assert "FAILED: 2 notebook(s)" in out and f"notebooks/de/{LESSON}.ipynb" in out


def test_a_notebook_that_raises_is_named_with_its_error(tmp_path, monkeypatch, capsys):
    """A real kernel runs a notebook whose cell raises: the step that executes reports it with the
    error's last line, writes no executed copy, and goes on with the next language."""
    cell = nbformat.v4.new_code_cell("raise ValueError('the data file is missing')")
    for lang in LANGUAGES:
        nb = nbformat.v4.new_notebook(cells=[cell])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
        (tmp_path / "notebooks" / lang).mkdir(parents=True)
        nbformat.write(nb, tmp_path / "notebooks" / lang / "99_broken.ipynb")
    monkeypatch.setattr(site_tool, "ROOT", tmp_path)
    executed = tmp_path / "executed"
    failed = site_tool.execute_all(["99_broken"], LANGUAGES, executed, force=False, timeout=120)
    assert [f.split(" ")[0] for f in failed] == [
        f"notebooks/{lang}/99_broken.ipynb" for lang in LANGUAGES
    ]
    assert all("ValueError" in f and "the data file is missing" in f for f in failed), failed
    assert not list(executed.glob("*/*.ipynb"))
    assert capsys.readouterr().out.count("FAILED: ") == len(LANGUAGES)
