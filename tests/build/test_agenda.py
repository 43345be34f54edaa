"""The trainer guide's agendas are generated from the sources' durations and kept current."""

from __future__ import annotations

from tools import agenda


def test_guides_are_current():
    assert agenda.main(["--check"]) == 0, "run: python -m tools.agenda"


def test_times_add_up_from_the_headers():
    lessons, labs = agenda.headers("lesson"), agenda.headers("lab")
    [day] = agenda.DAYS["one"]
    rows = agenda.day_table(day, "en", lessons, labs)
    numbers = [n for n in day if n in lessons]
    t4 = sum(
        lessons[n]["duration"]["t4"] + labs.get(n, {"duration": {"t4": 0}})["duration"]["t4"]
        for n in numbers
    )
    assert f"Teaching time: {t4} min on a T4" in rows[-1]
    assert rows[2].startswith("| 09:00 | 09:00 | Lesson 00:")
    assert (
        sum("*Lunch*" in r for r in rows) == 1 and rows[-3].startswith("| ") and "End" in rows[-3]
    )


def test_both_languages_and_both_agendas():
    for lang, guide in agenda.GUIDES.items():
        text = guide.read_text()
        assert agenda.WORDS[lang]["one"] in text and agenda.WORDS[lang]["two"] in text
    assert "Mittagspause" in agenda.GUIDES["de"].read_text()
