"""The course itself: its checkout, its languages, where it lives on GitHub, and its lessons and
labs with their titles, levels and durations.

Two places hold these facts, and this module is the one that reads them:

- `course.toml`: the GitHub location (`[github]`, rewritten by a fork's retarget) and the course
  map (`[[lesson]]`: every lesson with its number, level and titles, written or not yet);
- the sources' headers (`notebooks/src/NN_slug.py`, `labs/src/NN_slug.py`): a written lesson's
  or lab's own title, level, durations, profiles and accelerator, which have the final say.

Each file is read once and kept until it changes (a retarget rewrites course.toml, a test edits
a copy of a source).  Importing the module is cheap, standard library only: the lab kit imports
it; the sources' headers are parsed with PyYAML, imported when first needed.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]  # the checkout: utils/, labs/, notebooks/, course.toml
LANGUAGES = ("en", "de")
OTHER = {"en": "de", "de": "en"}
LEVELS = {
    1: {"en": "Foundations", "de": "Grundlagen"},
    2: {"en": "Intermediate", "de": "Fortgeschritten"},
    3: {"en": "Advanced", "de": "Experte"},
}
SOURCES = {"lesson": "notebooks/src", "lab": "labs/src"}  # kind → folder of its sources
PATTERN = "[0-9][0-9]_*.py"  # NN_slug.py


# --- course.toml ---------------------------------------------------------------------------------


def _stamp(path: Path) -> tuple[int, int]:
    """What tells a changed file from the one read before."""
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


@functools.cache
def _read_toml(path: Path, stamp: tuple[int, int]) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def config(root: Path = ROOT) -> dict[str, Any]:
    """course.toml, parsed (once per version of the file).  Shared: read it, don't change it."""
    path = Path(root) / "course.toml"
    return _read_toml(path, _stamp(path))


@dataclass(frozen=True)
class Location:
    """Where the course lives on GitHub: every badge and every setup cell's clone URL."""

    repo: str  # owner/name
    branch: str

    def blob(self, path: str) -> str:
        return f"github.com/{self.repo}/blob/{self.branch}/{path}"

    def colab(self, path: str) -> str:
        github = self.blob(path).replace("github.com", "github", 1)
        return f"https://colab.research.google.com/{github}"

    def kaggle(self, path: str) -> str:
        return f"https://kaggle.com/kernels/welcome?src=https://{self.blob(path)}"


def location(root: Path = ROOT) -> Location:
    github = config(root)["github"]
    return Location(github["repo"], github["branch"])


# --- the sources -------------------------------------------------------------------------------


@functools.cache
def _read_header(path: Path, stamp: tuple[int, int]) -> dict[str, Any]:
    """The `course:` metadata of a jupytext percent source's YAML header."""
    import yaml

    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0] != "# ---":
        raise ValueError(f"{path}: no header (the first line is not `# ---`)")
    try:
        end = lines.index("# ---", 1)
    except ValueError:
        raise ValueError(f"{path}: the header has no closing `# ---`") from None
    header = yaml.safe_load(
        "\n".join(line[2:] if line.startswith("# ") else line[1:] for line in lines[1:end])
    )
    try:
        return header["jupyter"]["course"]
    except (KeyError, TypeError):
        raise ValueError(f"{path}: the header has no `jupyter: course:` metadata") from None


@dataclass(frozen=True)
class Notebook:
    """One source, a lesson or a lab, with what its header says."""

    path: Path  # notebooks/src/NN_slug.py or labs/src/NN_slug.py
    kind: str  # "lesson" or "lab"
    meta: dict[str, Any] = field(hash=False, compare=False, repr=False)  # the header's `course:`

    @property
    def stem(self) -> str:  # NN_slug
        return self.path.stem

    @property
    def number(self) -> str:  # NN
        return self.stem.split("_", 1)[0]

    @property
    def slug(self) -> str:
        return self.stem.split("_", 1)[1]

    @property
    def name(self) -> str:
        """The built notebooks' file name, without `.ipynb`: a lesson's is its source's (NN_slug),
        a lab's starts with `lab` (labNN_slug), so that a lesson and its lab open side by side
        in two tabs, a file browser or a Colab title can be told apart."""
        return f"lab{self.stem}" if self.kind == "lab" else self.stem

    @property
    def title(self) -> dict[str, str]:  # language → title
        return self.meta["title"]

    @property
    def level(self) -> int:
        return self.meta["level"]

    @property
    def duration(self) -> dict[str, int]:  # profile (t4, cpu, maybe tpu) → minutes
        return self.meta["duration"]

    @property
    def profiles(self) -> list[str]:
        return self.meta.get("profiles", [])

    @property
    def accelerator(self) -> str | None:  # GPU, TPU or none
        return self.meta.get("accelerator")

    @classmethod
    def read(cls, path: Path, kind: str) -> Notebook:
        """The source at path (its header read once per version of the file)."""
        return cls(path, kind, _read_header(path, _stamp(path)))

    def outputs(self, lang: str) -> dict[str, str]:
        """variant → built notebook, relative to the root ("lesson", or "student"/"solution")."""
        if self.kind == "lesson":
            return {"lesson": f"notebooks/{lang}/{self.name}.ipynb"}
        return {
            "student": f"labs/{lang}/{self.name}.ipynb",
            "solution": f"labs/solutions/{lang}/{self.name}.ipynb",
        }


def notebooks(root: Path = ROOT, kind: str | None = None) -> list[Notebook]:
    """Every source, lessons first, each kind by number; or only the lessons or only the labs."""
    if kind not in (None, *SOURCES):
        raise ValueError(f"kind is one of {sorted(SOURCES)}, not {kind!r}")
    found = []
    for each, folder in SOURCES.items():
        if kind in (None, each):
            for path in sorted((Path(root) / folder).glob(PATTERN)):
                found.append(Notebook.read(path, each))
    return found


def lessons(root: Path = ROOT, numbers: list[str] | None = None) -> list[Notebook]:
    """The lessons that have a source; with numbers, only those (each must have one)."""
    found = notebooks(root, "lesson")
    if numbers:
        unknown = set(numbers) - {n.number for n in found}
        if unknown:
            raise SystemExit(f"no lesson source for {sorted(unknown)}")
        found = [n for n in found if n.number in numbers]
    return found


# --- the course map --------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One lesson of the course map, with its lesson and lab where their sources exist."""

    number: str
    level: int
    title: dict[str, str]  # language → title (the lesson's own where it has a source)
    lesson: Notebook | None
    lab: Notebook | None


def course_map(root: Path = ROOT) -> list[Entry]:
    """Every lesson of course.toml's map, in its order.  A lesson source that the map lacks is an
    error: the README and the website list the map."""
    sources = notebooks(root)
    written = {n.number: n for n in sources if n.kind == "lesson"}
    labs = {n.number: n for n in sources if n.kind == "lab"}
    planned = config(root).get("lesson", [])
    missing = set(written) - {e["number"] for e in planned}
    if missing:
        raise ValueError(f"lessons {sorted(missing)} are not in the course map of course.toml")
    entries = []
    for item in planned:
        number, lesson = item["number"], written.get(item["number"])
        title = lesson.title if lesson else {lang: item[lang] for lang in LANGUAGES}
        level = lesson.level if lesson else item["level"]
        entries.append(Entry(number, level, title, lesson, labs.get(number)))
    return entries
