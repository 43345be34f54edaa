"""The one-source build: generated notebooks are current, bilingual, badged, and a fork can re-target them."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from labs.kit import sources
from labs.kit.sources import read_cells
from tools import build, retarget
from utils import course
from utils.course import ROOT


def built_notebooks(root: Path = ROOT) -> list[Path]:
    """The notebooks the build writes, listed without building them (a build takes seconds)."""
    return sorted(
        root / path
        for notebook in course.notebooks(root)
        for lang in course.LANGUAGES
        for path in notebook.outputs(lang).values()
    )


BUILT = built_notebooks()


def copy_course(tmp_path: Path) -> Path:
    """A copy of the sources, tools and committed outputs, to change without touching the repo."""
    dest = tmp_path / "course"
    by_name = shutil.ignore_patterns(
        ".venv*", ".git", "__pycache__", ".pytest_cache", ".ruff_cache", "checkpoints"
    )

    def ignore(folder: str, names: list[str]) -> set[str]:
        # The generated build/ folder (Kaggle wheels, the site: hundreds of MB) is no input of
        # the build; tests/build, the build's tests, is copied like any other folder.
        top = {"build", "results"} if Path(folder) == ROOT else set()
        return by_name(folder, names) | (top & set(names))

    shutil.copytree(ROOT, dest, ignore=ignore)
    return dest


def test_committed_files_are_current():
    assert build.stale_files() == [], "run `make notebooks` and commit the result"


def test_a_changed_source_and_a_built_notebook_without_source_are_stale(tmp_path):
    root = copy_course(tmp_path)
    source = root / "notebooks/src/00_what_hardware.py"
    source.write_text(
        source.read_text().replace("# ## 5. `nvidia-smi`", "# ## 5. `nvidia-smi` (edited)", 1)
    )
    shutil.copy(root / "notebooks/en/00_what_hardware.ipynb", root / "notebooks/en/99_orphan.ipynb")
    done = subprocess.run(
        [sys.executable, "-m", "tools.build", "--check"], cwd=root, capture_output=True, text=True
    )
    stale = set(re.findall(r"^not current: (\S+)", done.stdout, re.MULTILINE))
    expected = {"notebooks/en/00_what_hardware.ipynb", "notebooks/en/99_orphan.ipynb"}
    assert done.returncode == 1 and stale == expected, done.stdout


SETUP_CELLS = {
    lang: nbformat.read(ROOT / f"notebooks/{lang}/00_what_hardware.ipynb", as_version=4)
    .cells[1]
    .source
    for lang in course.LANGUAGES
}


@pytest.mark.parametrize("path", BUILT, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_built_notebook_anatomy(path):
    nb = nbformat.read(path, as_version=4)
    meta = nb.metadata
    lang = meta["course"]["language"]
    assert path.relative_to(ROOT).parts[-2] == lang
    assert meta["kernelspec"]["name"] == "python3"
    if meta.get("accelerator") == "GPU":
        assert meta["colab"]["gpuType"] == "T4"
    # Title cell: heading, level, badges for this very file, link to the other language.
    title = nb.cells[0].source
    rel = path.relative_to(ROOT).as_posix()
    location = course.location()
    assert title.startswith("# ")
    assert f"]({location.colab(rel)})" in title and f"]({location.kaggle(rel)})" in title
    colab, kaggle = build.OPEN_IN[lang]  # the badges' alt text: the link's text offline
    assert f"[![{colab}](" in title and f"[![{kaggle}](" in title
    other = "de" if lang == "en" else "en"
    assert f"{other}/{path.name})" in title
    # Setup cell: first code cell, the same in every notebook of this language.
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert code_cells[0] is nb.cells[1]
    assert code_cells[0].source == SETUP_CELLS[lang]
    assert f'COURSE_LANGUAGE = "{lang}"' in code_cells[0].source
    # Only this language's cells; no build metadata left behind.
    assert all("lang" not in c.metadata for c in nb.cells)
    # Committed without outputs (nbval runs them; outputs would go stale).
    assert all(c.outputs == [] and c.execution_count is None for c in code_cells)


def other_language_templates(source: Path, lang: str) -> set[str]:
    """The literal of the other language in each `say`/`text` call of a source's code cells."""
    other = 1 if lang == "en" else 0
    found = set()
    for cell in read_cells(source):
        if cell.kind != "code":
            continue
        code = sources._parsable(cell.source)
        for call in sources.message_calls(ast.parse(code)):
            mine, theirs = (ast.get_source_segment(code, a) for a in call.args[:2])
            if mine != theirs:
                found.add(ast.get_source_segment(code, call.args[other]))
    return found


@pytest.mark.parametrize("path", BUILT, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_code_cells_speak_one_language_and_stay_readable(path):
    nb = nbformat.read(path, as_version=4)
    lang = nb.metadata["course"]["language"]
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert not re.search(r"\btr\(", code), "a bilingual tr(...) call is left"
    assert not re.search(r"#\s*(en|de):", code), "a language comment marker is left"
    too_long = [line for line in code.splitlines() if len(line) > 100]
    assert not too_long, too_long[:3]
    source = ROOT / nb.metadata["course"]["source"]
    leaked = [t for t in other_language_templates(source, lang) if t in code]
    assert not leaked, leaked[:3]


def message_pairs(source: Path) -> set[tuple[str, str]]:
    """The (English, German) templates of the `say`/`text` calls in a source, as `ast.dump`s."""
    return {
        (ast.dump(call.args[0]), ast.dump(call.args[1]))
        for cell in read_cells(source)
        if cell.kind == "code"
        for call in sources.message_calls(ast.parse(sources._parsable(cell.source)))
    }


def parsed(code: str) -> ast.Module:
    """A built code cell as a tree; comments are no code, magics are kept as calls."""
    return ast.parse(
        re.sub(r"^(\s*)([%!].*)$", lambda m: f"{m[1]}__magic__({m[2]!r})", code, flags=re.M)
    )


def same_code(en: ast.AST, de: ast.AST, pairs: set[tuple[str, str]]) -> bool:
    """The same tree, except where the English notebook has a template and the German one the
    German template of the same message. A message call (`say`, `text`, `print`) whose English
    template shows unchanged in the German notebook is not the same code."""
    english = {template for template, _ in pairs}

    def same(a: object, b: object) -> bool:
        if isinstance(a, ast.AST) and isinstance(b, ast.AST):
            if (ast.dump(a), ast.dump(b)) in pairs:
                return True
            if (
                isinstance(a, ast.Call)
                and isinstance(a.func, ast.Name)
                and a.func.id in ("say", "text", "print")
                and a.args
                and ast.dump(a.args[0]) in english
                and isinstance(b, ast.Call)
                and b.args
                and (ast.dump(a.args[0]), ast.dump(b.args[0])) not in pairs
            ):
                return False
            return type(a) is type(b) and all(same(getattr(a, f), getattr(b, f)) for f in a._fields)
        if isinstance(a, list) and isinstance(b, list):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
        return type(a) is type(b) and a == b

    return same(en, de)


def test_same_code_sees_what_differs():
    pairs = {(ast.dump(ast.Constant("Took {t} s")), ast.dump(ast.Constant("Dauerte {t} s")))}
    en = parsed('t = 2 * n  # twice\nsay("Took {t} s", t=t)\nd["Took {t} s"] = 1')
    assert same_code(
        en, parsed('t = 2 * n  # doppelt\nsay("Dauerte {t} s", t=t)\nd["Took {t} s"] = 1'), pairs
    )
    for de in (
        't = 3 * n\nsay("Dauerte {t} s", t=t)',  # other code
        't = 2 * n\nsay("Dauerte {t} s", t=n)',  # other values
        't = 2 * n\nsay("Took {t} s", t=t)',  # the English template in the German notebook
        't = 2 * n\nsay("Dauerte {t} s", t=t)\n!nvidia-smi',  # a shell line more
    ):
        assert not same_code(parsed('t = 2 * n\nsay("Took {t} s", t=t)'), parsed(de), pairs), de


def test_languages_share_the_teaching_code():
    """Both languages' code cells are the same code: only templates and comments differ."""
    for en in (p for p in BUILT if "/en/" in p.as_posix()):
        de = Path(en.as_posix().replace("/en/", "/de/"))
        notebooks = {"en": nbformat.read(en, as_version=4), "de": nbformat.read(de, as_version=4)}
        pairs = message_pairs(ROOT / notebooks["en"].metadata["course"]["source"])
        code = {
            lang: [c.source for c in nb.cells[2:] if c.cell_type == "code"]
            for lang, nb in notebooks.items()
        }
        assert len(code["en"]) == len(code["de"]), en.name
        for i, (en_code, de_code) in enumerate(zip(code["en"], code["de"], strict=True)):
            where = f"{en.relative_to(ROOT)}, code cell {i + 1}"
            assert same_code(parsed(en_code), parsed(de_code), pairs), f"{where}:\n{de_code}"


def test_language_cells_are_filtered(tmp_path):
    root = copy_course(tmp_path)
    (root / "notebooks/src/50_probe.py").write_text(
        "# ---\n# jupyter:\n#   course:\n#     title: {en: Probe, de: Probe}\n#     level: 2\n"
        "#     duration: {t4: 1, cpu: 1}\n#     profiles: [CPU]\n# ---\n\n"
        '# %% [markdown] lang="en"\n# Hello\n\n# %% [markdown] lang="de"\n# Hallo\n\n'
        '# %%\nx = 1\n\n# %% lang="de"\nprint("nur deutsch")\n'
    )
    location = course.location(root)
    source = course.Notebook.read(root / "notebooks/src/50_probe.py", "lesson")
    en = nbformat.reads(build.build(source, "en", "lesson", location, root), as_version=4)
    de = nbformat.reads(build.build(source, "de", "lesson", location, root), as_version=4)
    assert [c.source for c in en.cells[2:]] == ["Hello", "x = 1"]
    assert [c.source for c in de.cells[2:]] == ["Hallo", "x = 1", 'print("nur deutsch")']
    assert "Stufe 2 · Fortgeschritten" in de.cells[0].source and "accelerator" not in de.metadata
    # Building twice gives the same bytes (deterministic cell ids).
    assert build.build(source, "en", "lesson", location, root) == build.build(
        source, "en", "lesson", location, root
    )


SOLUTION_SOURCE = '''def flops(m, k, n):
    """FLOPs of an (m x k) @ (k x n) matmul."""
    ### BEGIN SOLUTION
    return 2 * m * k * n
    # STARTER: return ____
    ### END SOLUTION

### BEGIN SOLUTION
device = "cpu"
# STARTER: device = ____
### END SOLUTION
q1.check()'''


def test_student_and_solution_versions():
    student = build.student_version(SOLUTION_SOURCE)
    assert "2 * m * k * n" not in student and 'device = "cpu"' not in student
    assert "    # YOUR CODE HERE\n    return ____\n" in student
    assert "# YOUR CODE HERE\ndevice = ____\n" in student
    assert "BEGIN SOLUTION" not in student and "STARTER" not in student
    solution = build.solution_version(SOLUTION_SOURCE)
    assert "    return 2 * m * k * n\n" in solution and 'device = "cpu"\n' in solution
    assert "SOLUTION" not in solution and "STARTER" not in solution and "____" not in solution
    assert solution.endswith("q1.check()")


def test_starter_outside_a_solution_block_is_an_error():
    with pytest.raises(ValueError, match="outside"):
        build.student_version("x = 1\n# STARTER: x = ____\n")


def test_retarget_rewrites_every_badge_and_clone_url(tmp_path):
    root = copy_course(tmp_path)
    old = course.location(root).repo
    done = subprocess.run(
        [sys.executable, "-m", "tools.retarget", "acme/gpu-course", "workshop-2026"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert build.stale_files(root) == []
    readmes = [root / "README.md", root / "README.de.md"]
    for path in [*built_notebooks(root), root / "notebooks/start.ipynb", *readmes]:
        text = path.read_text()
        assert old not in text, path
    en = nbformat.read(root / "notebooks/en/00_what_hardware.ipynb", as_version=4)
    assert 'COURSE_REPO, COURSE_BRANCH = "acme/gpu-course", "workshop-2026"' in en.cells[1].source
    assert (
        "github/acme/gpu-course/blob/workshop-2026/notebooks/en/00_what_hardware.ipynb"
        in en.cells[0].source
    )
    readme = (root / "README.md").read_text()
    assert (
        len(
            re.findall(
                r"colab\.research\.google\.com/github/acme/gpu-course/blob/workshop-2026/", readme
            )
        )
        >= 1
    )


@pytest.mark.parametrize(
    "repo, branch", [("not-a-repo", "main"), ("acme/gpu", "-rf"), ("a/b; rm -rf /", "main")]
)
def test_retarget_rejects_bad_locations(tmp_path, repo, branch):
    # retarget() checks both names before it writes course.toml and runs the build.
    shutil.copy(ROOT / "course.toml", tmp_path / "course.toml")
    with pytest.raises(SystemExit, match="REPO|BRANCH"):
        retarget.retarget(repo, branch, tmp_path)
    assert (tmp_path / "course.toml").read_text() == (ROOT / "course.toml").read_text()


def test_readme_lists_the_whole_course_map_in_both_languages():
    course_map = course.config()["lesson"]
    written = {entry.number for entry in course.course_map() if entry.lesson}
    assert [e["number"] for e in course_map] == [f"{i:02d}" for i in range(11)]
    for readme, lang in (("README.md", "en"), ("README.de.md", "de")):
        table = (
            (ROOT / readme)
            .read_text()
            .split("<!-- lessons:start -->")[1]
            .split("<!-- lessons:end -->")[0]
        )
        rows = [line for line in table.splitlines() if line.startswith(("| 0", "| 1"))]
        assert [r.split("|")[1].strip() for r in rows] == [e["number"] for e in course_map]
        for entry, row in zip(course_map, rows, strict=True):
            assert ("colab-badge.svg" in row) == (entry["number"] in written), row
            if entry["number"] not in written:
                assert entry[lang] in row


def test_the_course_model_reads_each_header_as_jupytext_does():
    import jupytext

    found = course.notebooks()
    assert {n.kind for n in found} == {"lesson", "lab"}
    for source in found:
        assert source.meta == jupytext.read(source.path).metadata["course"], source.path
        assert source.path.parent == ROOT / course.SOURCES[source.kind]


def test_the_course_model_reads_a_changed_file_again(tmp_path):
    root = tmp_path / "course"
    (root / "notebooks/src").mkdir(parents=True)
    (root / "labs/src").mkdir(parents=True)
    toml = (ROOT / "course.toml").read_text()
    (root / "course.toml").write_text(toml)
    before = course.location(root)
    (root / "course.toml").write_text(toml.replace(f'"{before.repo}"', '"acme/a-longer-name"'))
    assert course.location(root).repo == "acme/a-longer-name"
    header = (
        "# ---\n# jupyter:\n#   course:\n#     title: {en: %s, de: %s}\n#     level: 1\n# ---\n"
    )
    lesson = root / "notebooks/src/00_probe.py"
    lesson.write_text(header % ("One", "Eins"))
    assert [n.title["de"] for n in course.lessons(root)] == ["Eins"]
    lesson.write_text(header % ("Second", "Zweite"))
    assert [n.title["de"] for n in course.lessons(root)] == ["Zweite"]


def test_a_lesson_missing_from_the_course_map_is_refused(tmp_path):
    root = tmp_path / "course"  # what the course model reads: the map and the sources
    for folder in ("notebooks/src", "labs/src"):
        shutil.copytree(ROOT / folder, root / folder)
    shutil.copy(ROOT / "course.toml", root / "course.toml")
    shutil.copy(root / "notebooks/src/00_what_hardware.py", root / "notebooks/src/50_probe.py")
    with pytest.raises(ValueError, match=r"\['50'\] are not in the course map"):
        course.course_map(root)


def test_the_course_model_imports_nothing_heavy():
    code = (
        "import sys, utils.course; print(sorted({'yaml', 'jupytext', 'torch'} & set(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
