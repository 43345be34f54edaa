"""Build the course website: every lesson in both languages, with executed outputs, offline.

    python -m tools.site                   # execute what is not current, then build build/site/
    python -m tools.site --lessons 00      # one lesson (what tests/build/test_site.py builds)
    python -m tools.site --no-execute      # pages from the executed copies there are (or none)
    make site                              # the same, in the course's environment

Two steps:

1. Execute.  Each built lesson notebook (notebooks/{en,de}/NN_slug.ipynb) runs once, in its own
   folder, with single-threaded BLAS and the Hugging Face hub switched off (as `make test` runs
   them), into build/executed/{lang}/NN_slug.ipynb.  The copy records the hash of the notebook
   it ran; while that notebook is unchanged the copy is reused, so a second `make site` executes
   nothing.  `--force` executes again (after a change in utils/, for instance).  `make slides`
   shows the same outputs.
2. Render.  Sphinx with myst-nb (execution off: step 1 did it) turns the executed copies into
   build/site/{en,de}/NN_slug.html, with an index page per language holding the lesson table,
   and a language switch on every page.  Each language is a Sphinx site of its own, so the
   theme's words and the search are in its language; the start page, build/site/index.html,
   is a third.  Widgets are dropped from the outputs: a static page
   has no kernel, and the text each `explore` prints first is their static fallback.  The setup
   cell shows only its one line of output, and the course's own checks (tag `guard`) not at all.

A notebook that fails to execute keeps its page, without outputs and with a notice at its top;
the build lists it and exits with status 1.  Nothing is fetched from the internet at build time;
the pages need none either (badges are text links), except MathJax for formulas.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat

from tools import slides  # the fingerprint and the widget filter
from tools.build import lesson_rows
from utils.course import LANGUAGES, LEVELS, ROOT, course_map, location
from utils.course import lessons as course_lessons

EXECUTED = ROOT / "build/executed"
STAGING = ROOT / "build/site-src"
OUT = ROOT / "build/site"
THREADS = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "HF_HUB_OFFLINE": "1",
}
WORDS = {
    "en": {
        "title": "GPU & TPU in Practice",
        "intro": "Every lesson with the outputs of one run on a CPU. "
        "To run them yourself, open them in Colab or Kaggle, or run `make lab`.",
        "other": "Deutsch",
        "footer": "GPU & TPU in Practice · built {date} · every output from one run on a CPU",
        "failed": "**This page shows no outputs**: the notebook failed to execute when this "
        "site was built. Open it in Colab or Kaggle to run it.",
        "start": "Jupyter notebooks on GPU and TPU hardware, in English and German.",
        "overview": "Overview",
        "contents": "On this page",
        "search": "Search",
    },
    "de": {
        "title": "GPU & TPU in der Praxis",
        "intro": "Jede Lektion mit den Ausgaben eines Laufs auf einer CPU. "
        "Selbst ausführen: in Colab oder Kaggle öffnen oder `make lab`.",
        "other": "English",
        "footer": "GPU & TPU in der Praxis · gebaut am {date} · alle Ausgaben aus einem Lauf auf "
        "einer CPU",
        "failed": "**Diese Seite zeigt keine Ausgaben**: Das Notebook ließ sich beim Bauen der "
        "Website nicht ausführen. Öffne es in Colab oder Kaggle, um es selbst auszuführen.",
        "start": "Jupyter-Notebooks auf GPU- und TPU-Hardware, auf Englisch und Deutsch.",
        "overview": "Übersicht",
        "contents": "Auf dieser Seite",
        "search": "Suchen",
    },
}

CONF = '''"""Sphinx settings of one site of the course website (written by tools/site.py)."""

extensions = ["myst_nb"]
nb_execution_mode = "off"  # tools/site.py executed every notebook once, into build/executed
nb_output_stderr = "show"
myst_enable_extensions = ["dollarmath"]
# Jupyter Book's look: the lessons on the left, the page's sections on the right, a menu on a
# phone.  Its fonts and icons ship inside the package: nothing is fetched from the internet.
# Each language is a site of its own (Sphinx has one `language` per site): the theme's words,
# the search and its stemming are the page's language.  The sidebar, the section list and the
# footer are the course's own templates, and the previous/next links are off (they would lead
# from the index page to the lessons only).
html_theme = "sphinx_book_theme"
html_theme_options = {
    "article_header_end": ["lang-switch.html", "article-header-buttons.html"],
    "secondary_sidebar_items": ["course-toc.html"],
    "footer_content_items": ["course-footer.html"],
    "use_download_button": False,  # the sources are not copied into the site
    "show_prev_next": False,
    "navbar_persistent": [],  # the search field is the sidebar's
}
html_sidebars = {"**": ["course-title.html", "course-search.html", "course-nav.html"]}
html_show_sphinx = False
html_show_copyright = False  # the footer is the course's own
html_static_path = ["_static"]
html_css_files = ["course.css"]
templates_path = ["_templates"]
html_show_sourcelink = False
html_copy_source = False
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
# Links into the repository (labs, docs) are not pages of the site.
suppress_warnings = ["myst.xref_missing", "myst.header", "misc.highlighting_failure", "toc.not_included"]
'''

# Each site's html_context: W, the words of its language; NAV, its lessons (stem, title); HOME,
# the way from its pages to its language's pages ("" in a language's site, "en/" on the start
# page); OTHER, the other language ("" on the start page).
TEMPLATES = {
    # The same page in the other language's site, in the bar above the article.
    "lang-switch.html": """{%- if OTHER %}
<a class="lang-switch" href="../{{ OTHER }}/{{ pagename }}.html"
   hreflang="{{ OTHER }}">{{ W.other }}</a>
{%- endif %}
""",
    "course-title.html": """
<h1 class="logo"><a href="{{ HOME }}index.html">{{ W.title | e }}</a></h1>
""",
    "course-search.html": """
<form class="bd-search course-search" action="{{ HOME }}search.html" method="get">
  <i class="fa-solid fa-magnifying-glass"></i>
  <input type="search" class="form-control" name="q" placeholder="{{ W.search }}"
         aria-label="{{ W.search }}">
</form>
""",
    "course-nav.html": """
<nav class="bd-links bd-docs-nav course-nav" aria-label="{{ W.overview }}">
<ul class="nav bd-sidenav">
  <li class="toctree-l1{% if OTHER and pagename == 'index' %} current active{% endif %}">
    <a class="reference internal" href="{{ HOME }}index.html">{{ W.overview }}</a></li>
  {%- for stem, title in NAV %}
  <li class="toctree-l1{% if pagename == stem %} current active{% endif %}">
    <a class="reference internal" href="{{ HOME }}{{ stem }}.html">{{ title | e }}</a></li>
  {%- endfor %}
</ul>
</nav>
""",
    "course-toc.html": """
{%- set page_toc = generate_toc_html() %}
{%- if page_toc | length >= 1 %}
<div class="page-toc tocsection onthispage">
  <i class="fa-solid fa-list"></i> {{ W.contents }}</div>
<nav class="page-toc">{{ page_toc }}</nav>
{%- endif %}
""",
    "course-footer.html": """
<div class="footer">{{ W.footer | e }}</div>
""",
}

CSS = """.lang-switch { font-weight: bold; padding: 0.2em 0.6em; margin-right: 0.5em;
  border: 1px solid #bbb; border-radius: 4px; }
.header-article-items__end { display: flex; align-items: center; }
h1.logo { font-size: 1.3em; margin: 0.5em 0 0.8em; }
form.course-search { display: flex; align-items: center; gap: 0.5em; margin-bottom: 1em; }
/* A long German word in a title breaks instead of running off a phone's screen. */
article h1 { overflow-wrap: anywhere; hyphens: auto; }
@media (max-width: 600px) { article h1 { font-size: 2rem; } }
article table { font-size: 0.9em; }
/* Long output lines wrap instead of being cut off at the page's edge. */
div.cell_output pre, div.output pre { white-space: pre-wrap; overflow-wrap: anywhere; }
div.course-failed { border: 2px solid #c00; background: #fee; padding: 0.6em 1em;
  margin-bottom: 1em; }
"""


# --- step 1: execute -----------------------------------------------------------------------------


def lesson_stems(numbers: list[str] | None = None) -> list[str]:
    return slides.lessons(ROOT, numbers)


def execute(nb_path: Path, target: Path, timeout: int) -> float:
    """Run one notebook in its folder, as `make test` does, and keep the outputs in target."""
    from nbclient import NotebookClient

    nb = nbformat.read(nb_path, as_version=4)
    saved = {k: os.environ.get(k) for k in THREADS}
    os.environ.update(THREADS)
    start = time.perf_counter()
    try:
        NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(nb_path.parent)}},
        ).execute()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    nb.metadata.setdefault("course", {})["executed_from"] = slides.fingerprint(nb_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)
    return time.perf_counter() - start


def execute_all(stems, langs, executed: Path, force: bool, timeout: int) -> list[str]:
    """Execute what is not current; a notebook that fails is reported and shown without
    outputs (its old copy, no longer current, is not used), and the others go on."""
    from nbclient.exceptions import CellExecutionError, DeadKernelError

    failed = []
    for stem in stems:
        for lang in langs:
            nb_path = ROOT / "notebooks" / lang / f"{stem}.ipynb"
            if not force and slides.executed_copy(nb_path, executed):
                print(f"current: {executed.name}/{lang}/{stem}.ipynb")
                continue
            print(f"executing notebooks/{lang}/{stem}.ipynb ...", flush=True)
            try:
                seconds = execute(nb_path, executed / lang / f"{stem}.ipynb", timeout)
            except (CellExecutionError, DeadKernelError, TimeoutError) as err:
                said = re.sub(r"\x1b\[[0-9;]*m", "", str(err))
                last = [line for line in said.splitlines() if line.strip(" -")][-1:]
                why = f"{type(err).__name__} {' '.join(last)[:300]}".strip()
                print(f"  FAILED: {why}", flush=True)
                failed.append(f"notebooks/{lang}/{stem}.ipynb ({why})")
                continue
            print(f"  done in {seconds:.0f} s", flush=True)
    return failed


# --- step 2: render --------------------------------------------------------------------------


def page_notebook(nb_path: Path, executed: Path):
    """The notebook a page shows: its executed copy if current, with what a page can't show out.
    Without one (the notebook failed, or was not executed), a notice at the top says so."""
    copy = slides.executed_copy(nb_path, executed)
    nb = nbformat.read(copy or nb_path, as_version=4)
    if copy is None:
        notice = f'<div class="course-failed">\n\n{WORDS[nb_path.parent.name]["failed"]}\n\n</div>'
        nb.cells.insert(1, nbformat.v4.new_markdown_cell(notice))
    for cell in nb.cells:
        if cell.cell_type == "markdown":  # badges as text links: no image from the internet
            cell.source = slides.REMOTE_BADGE.sub(r"[\1](\2)", cell.source)
        tags = cell.metadata.setdefault("tags", [])
        if "setup" in tags:  # its printed lines only
            tags.append("remove-input")
            cell.outputs = [o for o in cell.get("outputs", []) if o.output_type == "stream"]
        if "guard" in tags:
            tags.append("remove-cell")
        if cell.cell_type == "code":
            cell.outputs = slides.static_outputs(cell.get("outputs", []))
    nb.metadata.pop("widgets", None)
    return nb


def lesson_table(lang: str, stems: list[str]) -> list[str]:
    """The lesson table of a language's index page: pages that exist, the rest as planned."""
    return lesson_rows(lang, location(ROOT), ROOT, site=True, shown={s[:2] for s in stems})


def start_page(stems: list[str], langs) -> list[str]:
    """The root page: the course in both languages and one table of every lesson of the map,
    with its level, durations, hardware profiles and its page in each language.  A site of its
    own: its links lead into the language sites as plain links."""
    shown = {s[:2] for s in stems}
    title = " · ".join(WORDS[lang]["title"] for lang in LANGUAGES)
    lines = [f"# {title}", ""]
    for lang in LANGUAGES:
        lines += [f"{WORDS[lang]['start']} {WORDS[lang]['intro']}", ""]
    lines += [
        "| # | level · Stufe | English | Deutsch | T4 / CPU | hardware |",
        "|---|---|---|---|---|---|",
    ]
    planned = "*in preparation · in Vorbereitung*"
    for entry in course_map(ROOT):
        level = " · ".join(dict.fromkeys(LEVELS[entry.level][lang] for lang in LANGUAGES))
        lesson = entry.lesson
        if lesson is None or entry.number not in shown:
            titles = [f"{entry.title[lang]}" for lang in LANGUAGES]
            lines.append(
                f"| {entry.number} | {level} | {titles[0]} | {titles[1]} | {planned} | – |"
            )
            continue
        pages = [
            f'<a href="{lang}/{lesson.stem}.html">{html.escape(lesson.title[lang])}</a>'
            if lang in langs
            else lesson.title[lang]
            for lang in LANGUAGES
        ]
        duration = f"{lesson.duration['t4']} / {lesson.duration['cpu']} min"
        lines.append(
            f"| {entry.number} | {level} | {pages[0]} | {pages[1]} | {duration} | "
            f"{', '.join(lesson.profiles)} |"
        )
    for lang in langs:
        title = html.escape(WORDS[lang]["title"])
        lines += ["", f'- <a href="{lang}/index.html">{title}</a>']
    return [*lines, ""]


def site_context(lang: str, stems: list[str], home: str, other: str) -> dict:
    """What a site's templates read (see TEMPLATES): its words, lessons and links."""
    now = time.localtime()
    date = (
        time.strftime("%Y-%m-%d", now)
        if lang == "en"
        else (f"{now.tm_mday}.{now.tm_mon}.{now.tm_year}")
    )
    words = {**WORDS[lang], "footer": WORDS[lang]["footer"].format(date=date)}
    titles = {lesson.stem: lesson.title[lang] for lesson in course_lessons(ROOT)}
    nav = [(stem, f"{stem[:2]} · {titles[stem]}") for stem in stems]
    return {"W": words, "NAV": nav, "HOME": home, "OTHER": other}


def write_project(folder: Path, lang: str, title: str, context: dict, pages: list[str]) -> None:
    """A Sphinx project of one site: conf.py in its language, the templates, the style and the
    index page; the caller adds the notebooks."""
    (folder / "_templates").mkdir(parents=True)
    (folder / "_static").mkdir()
    settings = dict(project=title, html_title=title, language=lang, html_context=context)
    (folder / "conf.py").write_text(
        CONF + "".join(f"{name} = {value!r}\n" for name, value in settings.items())
    )
    for name, template in TEMPLATES.items():
        (folder / "_templates" / name).write_text(template)
    (folder / "_static/course.css").write_text(CSS)
    (folder / "index.md").write_text("\n".join(pages))


def stage(stems: list[str], langs, executed: Path, staging: Path) -> None:
    """The Sphinx projects: one per language (its index page and its notebooks) and the start
    page, each with its conf.py, templates and style."""
    if staging.exists():
        shutil.rmtree(staging)
    home = "en" if "en" in langs else langs[0]
    start_context = site_context(home, stems if home in langs else [], f"{home}/", "")
    title = " · ".join(WORDS[lang]["title"] for lang in LANGUAGES)
    write_project(staging / "start", "en", title, start_context, start_page(stems, langs))
    for lang in langs:
        folder = staging / lang
        other = next((o for o in langs if o != lang), "")
        words = WORDS[lang]
        index = [
            f"# {words['title']}",
            "",
            words["intro"],
            "",
            *lesson_table(lang, stems),
            "",
            "```{toctree}",
            ":hidden:",
            ":maxdepth: 1",
            "",
            *stems,
            "```",
            "",
        ]
        context = site_context(lang, stems, "", other)
        write_project(folder, lang, words["title"], context, index)
        for stem in stems:
            nb = page_notebook(ROOT / "notebooks" / lang / f"{stem}.ipynb", executed)
            nbformat.write(nb, folder / f"{stem}.ipynb")


def render(staging: Path, out: Path) -> None:
    """Each project of `stage` into its place: the start page into out, a language into out/en
    or out/de."""
    if out.exists():
        shutil.rmtree(out)
    for project in sorted(p for p in staging.iterdir() if (p / "conf.py").exists()):
        target = out if project.name == "start" else out / project.name
        command = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-j", "1"]
        subprocess.run([*command, str(project), str(target)], check=True, cwd=ROOT)


def main(argv: list[str] | None = None) -> int:
    parser = slides.lesson_parser("python -m tools.site", __doc__)
    parser.add_argument("--out", type=Path, default=OUT, help="the site (default build/site)")
    parser.add_argument(
        "--executed", type=Path, default=EXECUTED, help="executed copies (build/executed)"
    )
    parser.add_argument("--no-execute", action="store_true", help="render what was executed")
    parser.add_argument("--force", action="store_true", help="execute even current copies")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per cell (1800)")
    args = parser.parse_args(argv)
    stems = lesson_stems(args.lessons)
    langs = tuple(args.lang or LANGUAGES)
    failed = []
    if not args.no_execute:
        failed = execute_all(stems, langs, args.executed, args.force, args.timeout)
    staging = args.out.parent / (args.out.name + "-src")
    stage(stems, langs, args.executed, staging)
    render(staging, args.out)
    print(f"wrote {args.out / 'index.html'}")
    if failed:
        print(f"FAILED: {len(failed)} notebook(s) did not execute; their pages carry a notice:")
    for path in failed:
        print(f"  {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
