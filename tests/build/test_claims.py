"""The claims list (docs/claims.md) and the lessons stay in step, and no lesson points at a lesson
that is not there, or calls one "in preparation" that is.

- every lesson docs/claims.md names exists in notebooks/src with the section it names, or, while it
  has no source, is marked "(in preparation)"; every claim has a verdict in both languages;
- every claim id a lesson or lab cites ("claim C3", "Behauptung C3") is defined in docs/claims.md;
- a lesson or lab mentions a lesson or lab by number ("lesson 05", "Lektion 05", "lab 03") only
  if its source exists, unless the mention says "in preparation" / "in Vorbereitung" right after
  it; a link to a built notebook (NN_slug.ipynb) needs its source too;
- and the other way round: "(in preparation)", "(in Vorbereitung)", "coming soon", "folgt bald"
  only ever follow a lesson or lab named by its number that has no source yet. A marker after a
  lesson that exists is stale, and so is one after a lesson named only by its topic ("the lesson
  on costs (in preparation)"), which no test can tell built from unbuilt: name it by number.
"""

from __future__ import annotations

import re

import pytest

from utils import course
from utils.course import ROOT

CLAIMS = ROOT / "docs" / "claims.md"
SOURCES = [source.path for source in course.notebooks()]
# en/de words for a lesson that is not written yet
MARKER = r"(?:in preparation|in Vorbereitung|coming soon|folgt bald)"
# a marker that belongs to the mention it follows: "lesson 10 (in preparation)",
# "Lektion 10, Kosten (in Vorbereitung)", "Lektion 10 (Kosten, in Vorbereitung)"
IN_PREPARATION = re.compile(
    rf"[^.;:\n]{{0,60}}?\((?:[^()]*, )?{MARKER}\)|\s*\(?{MARKER}", re.IGNORECASE
)
# a marker in parentheses anywhere, whatever it follows
MARKED = re.compile(rf"\((?:[^()]*, )?{MARKER}\)", re.IGNORECASE)
MENTION = re.compile(r"\b(lesson|lektion|lab)s?\s+(\d{2})\b", re.IGNORECASE)
LINK = re.compile(r"\b(\d{2})_[a-z0-9_]+\.ipynb")
CITE = re.compile(r"\b(?:claims?|Behauptung(?:en)?)\s+(C\d+)(?:\s+(?:and|und)\s+(C\d+))?")


def lessons() -> set[str]:
    return {source.number for source in course.notebooks(kind="lesson")}


def labs() -> set[str]:
    return {source.number for source in course.notebooks(kind="lab")}


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
                assert number not in built, (
                    f"{cid}: lesson {number} has a source now; name the section that tests the "
                    "claim instead of (in preparation)"
                )
                continue
            assert number in built, (
                f"{cid}: lesson {number} has no source; mark it (in preparation)"
            )
            assert section, f"{cid}: name the section of lesson {number} that tests the claim"
            [lesson] = course.lessons(numbers=[number])
            source = lesson.path.read_text()
            assert re.search(rf"^# ## {section}\. ", source, re.MULTILINE), (
                f"{cid}: lesson {number} has no section {section}"
            )


def test_every_claim_has_a_verdict():
    for cid, _, _, _, verdict_en, verdict_de in claim_rows():
        for verdict in (verdict_en, verdict_de):
            assert verdict and not re.search(
                r"to be measured|wird gemessen|\bTBD\b|\?\?", verdict, re.IGNORECASE
            ), f"{cid}: no verdict yet ({verdict!r}); say what its lessons find"


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


def flattened(text: str) -> str:
    """The text with a markdown or comment line joined to the one before it, so that a marker
    broken over two lines ("(in\n# Vorbereitung)") reads as one."""
    return re.sub(r"[ \t]*\n#[ \t]?(?!%%)", " ", text)


def stale_markers(text: str) -> list[str]:
    """Markers that call a lesson "in preparation" although it has a source, or that follow no
    lesson named by number (the phrase is returned with the words before it)."""
    built_lessons, built_labs = lessons(), labs()
    text = flattened(text)
    bad = []
    for match in MENTION.finditer(text):
        kind, number = match.group(1).lower(), match.group(2)
        exists = number in (built_labs if kind == "lab" else built_lessons)
        marker = IN_PREPARATION.match(text, match.end())
        # a marker after a later mention belongs to that one ("lab 01, then lesson 10 (...)")
        if exists and marker and not MENTION.search(text, match.end(), marker.end()):
            bad.append(text[match.start() : marker.end()].strip())
    for marker in MARKED.finditer(text):
        # the clause the marker closes: back to the last full stop, colon or semicolon
        start = max(text.rfind(stop, 0, marker.start()) for stop in ".;:\n") + 1
        start = max(start, marker.start() - 120)
        clause = text[start : marker.start()]
        named = list(MENTION.finditer(clause))
        if named:
            kind, number = named[-1].group(1).lower(), named[-1].group(2)
            if number not in (built_labs if kind == "lab" else built_lessons):
                continue
        phrase = (clause + marker.group(0)).strip()
        if phrase not in bad and not any(phrase in b or b in phrase for b in bad):
            bad.append(phrase)
    return bad


def test_the_mention_check_tells_built_from_unbuilt():
    assert unbuilt_mentions("see lesson 01 and lab 00") == []
    assert unbuilt_mentions("Lesson 97 uses both GPUs") == ["Lesson 97"]
    assert unbuilt_mentions("lesson 97 (in preparation) uses both") == []
    assert unbuilt_mentions("Lektion 97 (Kosten, in Vorbereitung)") == []
    assert unbuilt_mentions("open 97_costs.ipynb") == ["97_costs.ipynb"]


def test_the_marker_check_finds_stale_markers():
    assert stale_markers("then lesson 97, Costs (in preparation).") == []
    assert stale_markers("dann Lektion 97 (Kosten, in Vorbereitung).") == []
    assert stale_markers("lab 01, then lesson 97 (coming soon)") == []
    assert stale_markers("then lesson 01, Timing (in preparation).") == [
        "lesson 01, Timing (in preparation)"
    ]
    assert stale_markers("dann Lektion 01, Matrix (in\n# Vorbereitung).") == [
        "Lektion 01, Matrix (in Vorbereitung)"
    ]
    assert stale_markers("Lektion 01 folgt bald") == ["Lektion 01 folgt bald"]
    assert stale_markers("Free offers change: the lesson on costs (in preparation) shows") == [
        "the lesson on costs (in preparation)"
    ]
    assert stale_markers('where.replace("in preparation", "in Vorbereitung")') == []


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_lessons_and_labs_mention_only_built_lessons(path):
    relative = path.relative_to(ROOT).as_posix()
    bad = unbuilt_mentions(path.read_text(encoding="utf-8"))
    assert not bad, f"{relative} mentions lessons without a source: {sorted(set(bad))}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_lessons_and_labs_call_no_built_lesson_in_preparation(path):
    relative = path.relative_to(ROOT).as_posix()
    bad = stale_markers(path.read_text(encoding="utf-8"))
    assert not bad, (
        f"{relative} calls a lesson in preparation that has a source, or does not name it by "
        f"number; refer to it by number and title instead: {bad}"
    )
