"""A room's grades as a table a trainer can show: a CSV (one row per notebook) and a short Markdown
summary (per exercise how many passed, the most common mistake keys), in the grader's language.

    csv_path, md_path = write_class_table(grades, "00", Path("submissions"))
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path
from typing import Any

from utils.i18n import get_language, num, text

# Keys that are not a mistake: what a passed or untouched exercise reports.
NOT_MISTAKES = {"ok", "not_attempted"}


def exercise_columns(grades: list[Any]) -> list[dict[str, Any]]:
    """The exercises of the lab, from the first notebook that has them, in their order."""
    for grade in grades:
        if grade.exercises:
            return [
                {"number": e["number"], "name": e["name"], "title": e["title"], "max": e["max"]}
                for e in grade.exercises
            ]
    return []


def class_csv(grades: list[Any]) -> str:
    columns = exercise_columns(grades)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            text("notebook", "Notebook"),
            text("status", "Status"),
            text("score", "Punkte"),
            text("max", "max"),
            *(f"q{c['number']} {c['name']}" for c in columns),
            text("verdict", "Urteil"),
        ]
    )
    for grade in grades:
        by_number = {e["number"]: e for e in grade.exercises}
        cells = []
        for column in columns:
            e = by_number.get(column["number"])
            cells.append("" if e is None else f"{e['points']} ({e['key']})")
        writer.writerow(
            [
                Path(grade.notebook).name,
                grade.status,
                "" if grade.score is None else grade.score,
                "" if grade.max is None else grade.max,
                *cells,
                grade.verdict,
            ]
        )
    return out.getvalue()


def class_summary(grades: list[Any], lab: str) -> str:
    """Markdown: how many were graded, per exercise how many passed and the common mistakes."""
    language = get_language()
    scored = [g for g in grades if g.exercises]
    columns = exercise_columns(grades)
    lines = [
        text("# Lab {lab}: class table", "# Lab {lab}: Klassenübersicht", lab=lab),
        "",
        text(
            "{graded} of {total} notebooks graded.",
            "{graded} von {total} Notebooks bewertet.",
            graded=sum(g.status == "graded" for g in grades),
            total=len(grades),
        ),
    ]
    if scored:
        scores = sorted(g.score for g in scored)
        lines.append(
            text(
                "Score (of {max}): median {median}, lowest {low}, highest {high}.",
                "Punkte (von {max}): Median {median}, niedrigste {low}, höchste {high}.",
                max=scored[0].max,
                median=scores[len(scores) // 2],
                low=scores[0],
                high=scores[-1],
            )
        )
    lines += [
        "",
        text(
            "| exercise | passed | most common mistakes |",
            "| Aufgabe | bestanden | häufigste Fehler |",
        ),
        "|---|---|---|",
    ]
    for column in columns:
        rows = [e for g in scored for e in g.exercises if e["number"] == column["number"]]
        passed = sum(e["status"] == "passed" for e in rows)
        mistakes = Counter(e["key"] for e in rows if e["key"] not in NOT_MISTAKES)
        common = ", ".join(
            f"`{key}` ×{num(n, language=language)}" for key, n in mistakes.most_common(3)
        )
        title = column["title"]["de" if language == "de" else "en"]
        lines.append(
            text(
                "| {number}. {title} | {passed} of {n} | {common} |",
                "| {number}. {title} | {passed} von {n} | {common} |",
                number=column["number"],
                title=title,
                passed=passed,
                n=len(rows),
                common=common or "–",
            )
        )
    others = [g for g in grades if g.status != "graded"]
    if others:
        lines += ["", text("Not graded:", "Nicht bewertet:")]
        lines += [f"- `{Path(g.notebook).name}`: {g.verdict}" for g in others]
    return "\n".join(lines) + "\n"


def write_class_table(grades: list[Any], lab: str, folder: Path) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = folder / f"lab{lab}-class.csv", folder / f"lab{lab}-class.md"
    csv_path.write_text(class_csv(grades), encoding="utf-8")
    md_path.write_text(class_summary(grades, lab), encoding="utf-8")
    return csv_path, md_path
