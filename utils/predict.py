"""Predict, then measure: the learner writes a number before a cell measures it, and the course
says how close it was.

    my_ridge_point = None                 # the learner's guess, written before running on
    ...                                   # the cell that measures or computes the answer
    reveal(my_ridge_point, ridge, unit="FLOP/B")

`reveal` never fails a notebook: without a guess (`None`, as every notebook ships) it shows the
answer and asks for a guess next time; a guess that is no number gets a message saying what to
write.  The verdict is judged on a log scale, as estimates are: a factor of 2 off is as far
above as below.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass

from .i18n import num, say, text, words

# Within 25 % is a good estimate, within a factor of 2 the right idea with a slip, beyond that a
# different model of the hardware: the three verdicts a worked problem gives.
CLOSE = 1.25
SAME_IDEA = 2.0


@dataclass(frozen=True)
class Verdict:
    """How a prediction compares with the answer; `factor` is >= 1 (how many times off)."""

    guess: float | None
    answer: float
    factor: float | None

    @property
    def close(self) -> bool:
        return self.factor is not None and self.factor <= CLOSE

    def _ipython_display_(self) -> None:
        """`reveal` has printed the verdict: a cell ending in reveal(...) shows it once, not again
        as the cell's value (`Verdict(guess=None, answer=72.0, ...)`, English in any language)."""


def _as_guess(guess: object) -> float | None:
    if guess is None:
        return None
    if isinstance(guess, bool) or not isinstance(guess, numbers.Real | str):
        raise TypeError(type(guess).__name__)
    value = float(str(guess).replace(",", ".")) if isinstance(guess, str) else float(guess)
    if not math.isfinite(value):
        raise ValueError(guess)
    return value


def reveal(
    guess: object,
    answer: float,
    *,
    unit: str = "",
    show: Callable[[float], str] | None = None,
    guess_in: float = 1,
) -> Verdict:
    """Print the answer beside the learner's guess, with how far off it was; return the verdict.

    `show` writes a value for the reader (for example `utils.units.format_bytes`); by default a
    number with three significant digits, followed by `unit`.  `guess_in` is the size of the unit
    the learner writes the guess in, when it differs from the answer's (`guess_in=MIB` for a guess
    in MiB against an answer in bytes)."""
    if not isinstance(answer, numbers.Real) or not math.isfinite(float(answer)):
        raise ValueError(f"reveal() needs the measured answer as a finite number, got {answer!r}")
    answer = float(answer)

    def written(value: float) -> str:
        return show(value) if show else f"{words(value)}{' ' + unit if unit else ''}"

    try:
        value = _as_guess(guess)
        value = None if value is None else value * guess_in
    except (TypeError, ValueError):
        say(
            "Your prediction {guess!r} is not a number: write it as a plain number such as 12 or"
            " 2e6 (in {unit}). The answer: {answer}.",
            "Deine Vorhersage {guess!r} ist keine Zahl: schreib sie als einfache Zahl wie 12 oder"
            " 2e6 (in {unit}). Die Antwort: {answer}.",
            guess=str(guess),
            unit=unit or text("the answer's unit", "der Einheit der Antwort"),
            answer=written(answer),
        )
        return Verdict(None, answer, None)
    if value is None:
        say(
            "The answer: {answer}. Next time write your prediction first: a guess you commit to"
            " teaches more than a result you read.",
            "Die Antwort: {answer}. Schreib beim nächsten Mal zuerst deine Vorhersage hin: eine"
            " Schätzung, auf die du dich festlegst, lehrt mehr als ein Ergebnis, das du nur liest.",
            answer=written(answer),
        )
        return Verdict(None, answer, None)
    if value <= 0 or answer <= 0:
        say(
            "You predicted {guess}, the answer is {answer}: sizes, times and rates are above zero.",
            "Du hast {guess} vorhergesagt, die Antwort ist {answer}: Größen, Zeiten und Raten sind"
            " größer als null.",
            guess=written(value),
            answer=written(answer),
        )
        return Verdict(value, answer, None)
    factor = max(value / answer, answer / value)
    spot_on = round(factor, 2) == 1  # within 0.5 %: "1.00 times" says nothing
    direction = "high" if value > answer else "low"
    if factor <= CLOSE:
        en, de = "well judged", "gut geschätzt"
    elif factor <= SAME_IDEA:
        en, de = (
            "the right idea; look for the factor you missed",
            "die richtige Idee; such den Faktor, der fehlt",
        )
    else:
        en, de = (
            "a different picture of the hardware: read the cells above again",
            "ein anderes Bild der Hardware: lies die Zellen darüber noch einmal",
        )
    say(
        "You predicted {guess}, the answer is {answer}: "
        + ("spot on" if spot_on else "{factor} times too " + direction)
        + f" ({en}).",
        "Du hast {guess} vorhergesagt, die Antwort ist {answer}: "
        + (
            "genau getroffen"
            if spot_on
            else "{factor}-mal zu " + ("hoch" if direction == "high" else "niedrig")
        )
        + f" ({de}).",
        guess=written(value),
        answer=written(answer),
        factor=num(factor, ".2f") if factor < 10 else num(factor, ",.0f"),
    )
    return Verdict(value, answer, factor)
