"""Build the committed notebooks from their one-language-pair sources.

    python -m tools.build           # write notebooks/{en,de}, labs/..., README tables
    python -m tools.build --check   # exit 1 if a committed file differs from what its source builds

A source is a jupytext percent-format file (`notebooks/src/NN_slug.py`, `labs/src/NN_slug.py`).
Cells tagged `lang="en"` or `lang="de"` go to that language only; all other cells (the code
that teaches) go to both.  Each built notebook gets: a title cell with level, durations,
Colab/Kaggle badges and a link to the other language; the setup cell; Colab accelerator
metadata; a kernel spec; a licence line under the title (code MIT, text, pictures and data
CC BY 4.0).  A lab source also yields a student version, in which every
`### BEGIN SOLUTION` ... `### END SOLUTION` block becomes `# YOUR CODE HERE` plus the
block's `# STARTER:` lines.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import jupytext
import nbformat

from labs.kit.sources import resolve_language, solution_version, student_version
from utils.course import (
    LANGUAGES,
    LEVELS,
    OTHER,
    ROOT,
    Location,
    Notebook,
    course_map,
    location,
    notebooks,
)

LEVEL = {"en": "Level", "de": "Stufe"}
COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"
KAGGLE_BADGE = "https://kaggle.com/static/images/open-in-kaggle.svg"
# The badges' alt text, in the notebook's language: it is what a reader sees where the image can't
# load (offline), and the text of the link on the website and in the slides.
OPEN_IN = {
    "en": ("Open In Colab", "Open In Kaggle"),
    "de": ("In Colab öffnen", "In Kaggle öffnen"),
}


# The setup cell starts collapsed: JupyterLab, Colab (a form) and Kaggle each have their own key.
SETUP_METADATA = {
    "cellView": "form",
    "jupyter": {"source_hidden": True},
    "_kg_hide-input": True,
    "tags": ["setup"],
}


# --- one source → built notebooks --------------------------------------------------------------


def setup_cell(lang: str, location: Location, root: Path = ROOT) -> str:
    template = (root / "tools/setup_cell.py").read_text().strip()
    return resolve_language(
        template.replace("@LANGUAGE@", lang)
        .replace("@REPO@", location.repo)
        .replace("@BRANCH@", location.branch),
        lang,
    )


def title_cell(source: Notebook, lang: str, variant: str, location: Location) -> str:
    title = source.title[lang]
    if source.kind == "lab":
        heading = f"# Lab {source.number} · {title}"
        if variant == "solution":
            heading += " — " + ("Lösungen" if lang == "de" else "solutions")
    else:
        heading = f"# {source.number} · {title}"
    path = source.outputs(lang)[variant]
    other_path = source.outputs(OTHER[lang])[variant]
    other_name = "Deutsche Fassung" if lang == "en" else "English version"
    duration = source.duration
    # A TPU lesson says how long it takes on a TPU, not on a T4.
    on_tpu = source.accelerator == "TPU" and "tpu" in duration
    device, minutes = ("TPU", duration["tpu"]) if on_tpu else ("T4", duration["t4"])
    if lang == "de":
        timing = f"ca. {minutes} min auf einer {device} · ca. {duration['cpu']} min auf der CPU"
    else:
        timing = f"about {minutes} min on a {device} · about {duration['cpu']} min on a CPU"
    return "\n".join(
        [
            heading,
            "",
            f"**{LEVEL[lang]} {source.level} · {LEVELS[source.level][lang]}** · {timing}",
            "",
            f"[![{OPEN_IN[lang][0]}]({COLAB_BADGE})]({location.colab(path)}) "
            f"[![{OPEN_IN[lang][1]}]({KAGGLE_BADGE})]({location.kaggle(path)})",
            "",
            f"{other_name}: [{Path(other_path).name}](../{'../' if variant == 'solution' else ''}"
            f"{OTHER[lang]}/{Path(other_path).name}) · [Colab]({location.colab(other_path)})",
            "",
            licence_line(lang, location),
        ]
    )


def licence_line(lang: str, location: Location) -> str:
    """Both licences, linked on GitHub: a notebook opened in Colab has no repository around it."""
    mit = f"[MIT](https://{location.blob('LICENSE')})"
    cc = f"[CC BY 4.0](https://{location.blob('LICENSES/CC-BY-4.0.txt')})"
    words = {"en": ("code", "text, pictures, data"), "de": ("Code", "Text, Bilder, Daten")}[lang]
    return f"<sub>© GPU & TPU in Practice authors · {words[0]}: {mit} · {words[1]}: {cc}</sub>"


def build(source: Notebook, lang: str, variant: str, location: Location, root: Path = ROOT) -> str:
    """The JSON text of one built notebook."""
    text_nb = jupytext.read(source.path)
    cells = [
        nbformat.v4.new_markdown_cell(title_cell(source, lang, variant, location)),
        nbformat.v4.new_code_cell(setup_cell(lang, location, root), metadata=SETUP_METADATA),
    ]
    for cell in text_nb.cells:
        cell_lang = cell.metadata.get("lang")
        if cell_lang not in (None, lang):
            continue
        if cell_lang not in (None, *LANGUAGES):
            raise ValueError(f"{source.path}: unknown lang {cell_lang!r}")
        metadata = {k: v for k, v in cell.metadata.items() if k != "lang"}
        if cell.cell_type == "markdown":
            cells.append(nbformat.v4.new_markdown_cell(cell.source, metadata=metadata))
        else:
            code = cell.source
            if source.kind == "lab":
                code = (
                    student_version(code, lang) if variant == "student" else solution_version(code)
                )
            code = resolve_language(code, lang)
            cells.append(nbformat.v4.new_code_cell(code, metadata=metadata))
    for i, cell in enumerate(cells):
        cell["id"] = f"{lang}-{i:03d}"  # deterministic ids: rebuilding changes nothing
    metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
        "course": {
            "number": source.number,
            "kind": source.kind,
            "variant": variant,
            "language": lang,
            "source": source.path.relative_to(root).as_posix(),
        },
    }
    accelerator = source.accelerator
    if accelerator == "GPU":
        metadata.update(accelerator="GPU", colab={"gpuType": "T4", "provenance": []})
    elif accelerator == "TPU":
        metadata.update(accelerator="TPU", colab={"gpuType": "V5E1", "provenance": []})
    nb = nbformat.v4.new_notebook(cells=cells, metadata=metadata)
    nbformat.validate(nb)
    return nbformat.writes(nb) + "\n"


# --- README tables and the start page --------------------------------------------------------


def lesson_rows(
    lang: str, location: Location, root: Path = ROOT, *, site: bool = False, shown=None
) -> list[str]:
    """A lesson table: every lesson of the course map, with its links where it has a source, the
    others "in preparation".  The README's links lead into the repository, with Colab and Kaggle
    badges; the website's (`site`) to its pages (only the lessons in `shown`, when given), with
    plain Colab and Kaggle links."""
    head = {
        "en": "| # | level | lesson | T4 / CPU | hardware | open | lab |",
        "de": "| # | Stufe | Lektion | T4 / CPU | Hardware | öffnen | Lab |",
    }[lang]
    planned = {"en": "in preparation", "de": "in Vorbereitung"}[lang]
    rows = [head, "|---|---|---|---|---|---|---|"]
    for entry in course_map(root):
        number, level, lab = entry.number, LEVELS[entry.level][lang], entry.lab
        lab_path = lab.outputs(lang)["student"] if lab else ""
        lab_link = (
            f"[Lab {number}]({location.colab(lab_path) if site else lab_path})" if lab else "–"
        )
        lesson = entry.lesson
        if lesson is None or (shown is not None and number not in shown):
            title = entry.title[lang]
            rows.append(f"| {number} | {level} | {title} | – | – | *{planned}* | {lab_link} |")
            continue
        path = lesson.outputs(lang)["lesson"]
        if site:
            page = f"{lesson.stem}.ipynb"
            badges = f"[Colab]({location.colab(path)}) · [Kaggle]({location.kaggle(path)})"
        else:
            page = path
            badges = (
                f"[![Colab]({COLAB_BADGE})]({location.colab(path)}) "
                f"[![Kaggle]({KAGGLE_BADGE})]({location.kaggle(path)})"
            )
        duration = f"{lesson.duration['t4']} / {lesson.duration['cpu']} min"
        rows.append(
            f"| {number} | {level} | [{lesson.title[lang]}]({page}) | {duration} | "
            f"{', '.join(lesson.profiles)} | {badges} | {lab_link} |"
        )
    return rows


def with_table(text: str, rows: list[str]) -> str:
    start, end = "<!-- lessons:start -->", "<!-- lessons:end -->"
    before, _, rest = text.partition(start)
    _, _, after = rest.partition(end)
    if not rest:
        raise ValueError(f"README has no {start} ... {end} markers")
    return before + start + "\n" + "\n".join(rows) + "\n" + end + after


def start_page(location: Location, root: Path = ROOT) -> str:
    """notebooks/start.ipynb: where `make lab` opens; links to every lesson in both languages."""
    text = [
        "# GPU & TPU in Practice · GPU & TPU in der Praxis",
        "",
        "Start with lesson 00. Every lesson opens with a setup cell: run it first. · "
        "Beginne mit Lektion 00. Jede Lektion beginnt mit einer Setup-Zelle: zuerst ausführen.",
        "",
    ]
    for source in notebooks(root):
        variant = "lesson" if source.kind == "lesson" else "student"
        prefix = "Lab " if source.kind == "lab" else ""
        links = [
            f"[{prefix}{source.number} {source.title[lang]}](../{source.outputs(lang)[variant]})"
            for lang in LANGUAGES
        ]
        text.append("- " + " · ".join(links))
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell("\n".join(text))],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    nb.cells[0]["id"] = "start"
    return nbformat.writes(nb) + "\n"


# --- everything --------------------------------------------------------------------------------


def ruff_formatted(notebooks: dict[Path, str]) -> dict[Path, str]:
    """The notebooks with their code cells formatted by `ruff format` (line length 100): keeping
    one language out of two leaves lines of other lengths than the source's.  In lessons an
    import that only served the other language's messages goes too (`text` where every `text`
    call became a plain string); a lab's student version keeps what the learner will need."""
    with tempfile.TemporaryDirectory() as folder:
        names = {path: Path(folder) / f"{i:03d}.ipynb" for i, path in enumerate(notebooks)}
        for path, name in names.items():
            name.write_text(notebooks[path])
        ruff = [sys.executable, "-m", "ruff", "check", "--quiet", "--no-cache", "--fix-only"]
        lessons = [str(names[p]) for p in names if p.parent.parent.name == "notebooks"]
        labs = [str(names[p]) for p in names if str(names[p]) not in lessons]
        # Imports in order with their blank line, no doubled brackets; in lessons no import
        # left over from the other language.
        for files, rules in ((lessons, "F401,I001,UP034"), (labs, "I001,UP034")):
            if files:
                subprocess.run([*ruff, "--isolated", "--select", rules, *files], check=True)
        layout = ["format", "--quiet", "--no-cache", "--line-length", "100"]
        subprocess.run([sys.executable, "-m", "ruff", *layout, folder], check=True)
        return {
            path: nbformat.writes(nbformat.reads(name.read_text(), as_version=4)) + "\n"
            for path, name in names.items()
        }


def render_all(root: Path = ROOT) -> dict[Path, str]:
    """Every generated file and the text it must have."""
    where = location(root)
    files: dict[Path, str] = {}
    for source in notebooks(root):
        for lang in LANGUAGES:
            for variant, path in source.outputs(lang).items():
                files[root / path] = build(source, lang, variant, where, root)
    files = ruff_formatted(files)
    files[root / "notebooks/start.ipynb"] = start_page(where, root)
    for readme, lang in (("README.md", "en"), ("README.de.md", "de")):
        files[root / readme] = with_table(
            (root / readme).read_text(), lesson_rows(lang, where, root)
        )
    return files


def stale_files(root: Path = ROOT) -> list[Path]:
    """Generated files that differ from their sources, and built notebooks without a source."""
    files = render_all(root)
    stale = [p for p, text in files.items() if not p.exists() or p.read_text() != text]
    built = {
        *root.glob("notebooks/[a-z][a-z]/*.ipynb"),
        *root.glob("labs/[a-z][a-z]/*.ipynb"),
        *root.glob("labs/solutions/*/*.ipynb"),
    }
    return stale + sorted(built - set(files))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="only report files that are not current"
    )
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files()
        for path in stale:
            print(f"not current: {path.relative_to(ROOT)}  (run `make notebooks`)")
        return 1 if stale else 0
    for path, text in render_all().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
