"""The claims list (docs/claims.md) and the lessons stay in step, and no lesson points at a lesson
that is not there.

- every lesson docs/claims.md names exists in notebooks/src (with the section it names), or is
  marked "(in preparation)";
- every claim id a lesson or lab cites ("claim C3", "Behauptung C3") is defined in docs/claims.md;
- a lesson or lab mentions a lesson or lab by number ("lesson 05", "Lektion 05", "lab 03") only
  if its source exists, unless the mention says "in preparation" / "in Vorbereitung" right after
  it; a link to a built notebook (NN_slug.ipynb) needs its source too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CLAIMS = ROOT / "docs" / "claims.md"
SOURCES = sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py")) + sorted(
    (ROOT / "labs" / "src").glob("[0-9][0-9]_*.py")
)
# Files other helpers are writing or reworking right now (lesson 04 and labs 02 and 04 reworked,
# lessons 03, 05, 06 and 09 new): their unbuilt mentions are reported as xfail, not failed, until
# that work lands. Remove a file from this set once it is done.
NOT_YET_CHECKED = {
    "notebooks/src/03_precision_memory.py",
    "notebooks/src/04_jax_tpu.py",
    "notebooks/src/05_training.py",
    "notebooks/src/06_quantization.py",
    "notebooks/src/09_costs.py",
    "labs/src/02_device_placement.py",
    "labs/src/04_jax_tpu.py",
}

IN_PREPARATION = re.compile(
    r"[^.;:\n]{0,60}?\((?:[^()]*, )?(?:in preparation|in Vorbereitung)\)"
    r"|\s*\(?(?:in preparation|in Vorbereitung)"
)
MENTION = re.compile(r"\b(lesson|lektion|lab)s?\s+(\d{2})\b", re.IGNORECASE)
LINK = re.compile(r"\b(\d{2})_[a-z0-9_]+\.ipynb")
CITE = re.compile(r"\b(?:claims?|Behauptung(?:en)?)\s+(C\d+)(?:\s+(?:and|und)\s+(C\d+))?")


def lessons() -> set[str]:
    return {p.name[:2] for p in (ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py")}


def labs() -> set[str]:
    return {p.name[:2] for p in (ROOT / "labs" / "src").glob("[0-9][0-9]_*.py")}


def claim_rows() -> list[list[str]]:
    rows = []
    for line in CLAIMS.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and re.fullmatch(r"C\d+", cells[0]):
            rows.append(cells)
    return rows


def test_claim_ids_are_numbered_in_order():
    ids = [row[0] for row in claim_rows()]
    assert ids == [f"C{i}" for i in range(1, len(ids) + 1)] and len(ids) >= 10


def test_every_lesson_named_in_the_claims_exists_or_is_in_preparation():
    built = lessons()
    for cid, _, _, where, _, _ in claim_rows():
        for entry in where.split(";"):
            found = re.fullmatch(r"lesson (\d{2})(?: §(\d+))?( \(in preparation\))?", entry.strip())
            assert found, f"{cid}: cannot read {entry!r}"
            number, section, preparing = found.groups()
            if preparing:
                continue
            assert number in built, (
                f"{cid}: lesson {number} has no source; mark it (in preparation)"
            )
            if section:
                source = next((ROOT / "notebooks" / "src").glob(f"{number}_*.py")).read_text()
                assert re.search(rf"^# ## {section}\. ", source, re.MULTILINE), (
                    f"{cid}: lesson {number} has no section {section}"
                )


def test_every_claim_a_lesson_cites_exists():
    known = {row[0] for row in claim_rows()}
    for path in SOURCES:
        for match in CITE.finditer(path.read_text(encoding="utf-8")):
            for cid in filter(None, match.groups()):
                assert cid in known, (
                    f"{path.name} cites {cid}, which docs/claims.md does not define"
                )


def unbuilt_mentions(text: str) -> list[str]:
    built_lessons, built_labs = lessons(), labs()
    bad = []
    for match in MENTION.finditer(text):
        kind, number = match.group(1).lower(), match.group(2)
        exists = number in (built_labs if kind == "lab" else built_lessons)
        if not exists and not IN_PREPARATION.match(text, match.end()):
            bad.append(match.group(0))
    for match in LINK.finditer(text):
        if match.group(1) not in built_lessons | built_labs:
            bad.append(match.group(0))
    return bad


def test_the_mention_check_tells_built_from_unbuilt():
    assert unbuilt_mentions("see lesson 01 and lab 00") == []
    assert unbuilt_mentions("Lesson 97 uses both GPUs") == ["Lesson 97"]
    assert unbuilt_mentions("lesson 97 (in preparation) uses both") == []
    assert unbuilt_mentions("Lektion 97 (Kosten, in Vorbereitung)") == []
    assert unbuilt_mentions("open 97_costs.ipynb") == ["97_costs.ipynb"]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_lessons_and_labs_mention_only_built_lessons(path):
    relative = path.relative_to(ROOT).as_posix()
    bad = unbuilt_mentions(path.read_text(encoding="utf-8"))
    if relative in NOT_YET_CHECKED and bad:
        pytest.xfail(f"{relative} is being reworked; it mentions {sorted(set(bad))}")
    assert not bad, f"{relative} mentions lessons without a source: {sorted(set(bad))}"
