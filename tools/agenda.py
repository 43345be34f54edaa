"""The agendas of the trainer guide (docs/trainer.md, docs/trainer.de.md), from the sources.

    python -m tools.agenda           # rewrite the blocks between <!-- agenda:start/end -->
    python -m tools.agenda --check   # exit 1 if a guide's agenda is not current

Each lesson and lab source states its duration per hardware profile in its header
(`duration: {t4: …, cpu: …}`); the agenda adds them up with a running clock per profile, breaks
between the blocks, and lunch in the first break after noon.  Which lessons go into which day is
set below (DAYS); a lesson without a source yet is left out until it has one, and `--check`
(tests/build/test_agenda.py) then asks for a rebuild.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from utils.course import ROOT, notebooks

GUIDES = {"en": ROOT / "docs/trainer.md", "de": ROOT / "docs/trainer.de.md"}
START, END = "<!-- agenda:start -->", "<!-- agenda:end -->"
PROFILES = ("t4", "cpu")  # the two durations every header gives
DAY_START = 9 * 60  # 09:00
BREAK, LUNCH = 15, 60
# Lessons per day: the foundations first; one day ends after JAX, two days add the rest.
DAYS = {
    "one": [["00", "01", "02", "03", "04"]],
    "two": [["00", "01", "02", "03"], ["04", "05", "06", "07", "08", "09", "10"]],
}
WORDS = {
    "en": {
        "one": "One-day workshop",
        "two": "Two-day workshop",
        "day": "Day {n}",
        "head": "| start (T4) | start (CPU) | what | T4 | CPU |",
        "lesson": "Lesson {n}: {title}",
        "lab": "Lab {n}: {title}",
        "break": "*Break*",
        "lunch": "*Lunch*",
        "end": "**End**",
        "total": "Teaching time: {t4} min on a T4, {cpu} min on a CPU (without breaks).",
    },
    "de": {
        "one": "Eintägiger Workshop",
        "two": "Zweitägiger Workshop",
        "day": "Tag {n}",
        "head": "| Beginn (T4) | Beginn (CPU) | was | T4 | CPU |",
        "lesson": "Lektion {n}: {title}",
        "lab": "Lab {n}: {title}",
        "break": "*Pause*",
        "lunch": "*Mittagspause*",
        "end": "**Ende**",
        "total": "Lehrzeit: {t4} min auf einer T4, {cpu} min auf der CPU (ohne Pausen).",
    },
}


def clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def headers(kind: str, root: Path = ROOT) -> dict[str, dict]:
    """number → the course metadata of each lesson's or each lab's source."""
    return {source.number: source.meta for source in notebooks(root, kind)}


def day_table(numbers: list[str], lang: str, lessons: dict, labs: dict) -> list[str]:
    words = WORDS[lang]
    rows = [words["head"], "|---|---|---|---|---|"]
    now = {p: DAY_START for p in PROFILES}
    total = {p: 0 for p in PROFILES}
    lunched = False
    blocks = [n for n in numbers if n in lessons]
    for i, number in enumerate(blocks):
        items = [("lesson", lessons[number])]
        if number in labs:
            items.append(("lab", labs[number]))
        for kind, meta in items:
            minutes = {p: int(meta["duration"][p]) for p in PROFILES}
            what = words[kind].format(n=number, title=meta["title"][lang])
            rows.append(
                f"| {clock(now['t4'])} | {clock(now['cpu'])} | {what} | "
                f"{minutes['t4']} min | {minutes['cpu']} min |"
            )
            for p in PROFILES:
                now[p] += minutes[p]
                total[p] += minutes[p]
        if i == len(blocks) - 1:
            break
        lunch = not lunched and now["t4"] >= 12 * 60
        lunched = lunched or lunch
        pause = LUNCH if lunch else BREAK
        label = words["lunch"] if lunch else words["break"]
        rows.append(
            f"| {clock(now['t4'])} | {clock(now['cpu'])} | {label} | {pause} min | {pause} min |"
        )
        for p in PROFILES:
            now[p] += pause
    rows.append(f"| {clock(now['t4'])} | {clock(now['cpu'])} | {words['end']} | | |")
    return [*rows, "", words["total"].format(**total)]


def agenda(lang: str, root: Path = ROOT) -> list[str]:
    lessons, labs = headers("lesson", root), headers("lab", root)
    words = WORDS[lang]
    lines = []
    for key, days in DAYS.items():
        lines += [f"### {words[key]}", ""]
        for n, numbers in enumerate(days, 1):
            if len(days) > 1:
                lines += [f"#### {words['day'].format(n=n)}", ""]
            lines += [*day_table(numbers, lang, lessons, labs), ""]
    return lines[:-1]


def with_agenda(text: str, lines: list[str]) -> str:
    before, _, rest = text.partition(START)
    _, found, after = rest.partition(END)
    if not found:
        raise ValueError(f"no {START} ... {END} block")
    return before + START + "\n" + "\n".join(lines) + "\n" + END + after


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.agenda", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--check", action="store_true", help="only report guides not current")
    args = parser.parse_args(argv)
    stale = []
    for lang, guide in GUIDES.items():
        text = guide.read_text()
        new = with_agenda(text, agenda(lang))
        if new != text:
            stale.append(guide)
            if not args.check:
                guide.write_text(new)
                print(f"wrote {guide.relative_to(ROOT)}")
    if args.check:
        for guide in stale:
            print(f"not current: {guide.relative_to(ROOT)}  (run python -m tools.agenda)")
        return 1 if stale else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
