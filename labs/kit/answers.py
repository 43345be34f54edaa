"""Calling the learner's code, and what a check raises: a wrong answer, or the learner's error
explained in the learner's language.

    result = call(answer, 3, 4)       # the learner's error becomes LearnerError, ____ Unfinished
    raise Wrong("milliseconds", text("...", "..."))   # a wrong answer: a key and a message
    explain(error)                    # the error, the learner's line, a tip: no traceback

`call` and `explain` live in one file: `explain` tells an error raised by the call itself (wrong
parameters) from one raised inside the learner's function by the file it came from.
"""

from __future__ import annotations

import sysconfig
import traceback
from pathlib import Path
from typing import Any

from labs.kit.blank import Unfinished, has_blank
from utils.course import ROOT
from utils.i18n import text

Text = tuple[str, str]  # (English, German)


# --- what a test raises -------------------------------------------------------------------------


class Wrong(Exception):
    """A wrong answer. `key` names the mistake (tests assert on it); `message` explains it."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key
        self.message = message


class LearnerError(Exception):
    """The learner's code raised `error`; `call` wraps it so the check can explain it."""

    def __init__(self, error: Exception):
        super().__init__(f"{type(error).__name__}: {error}")
        self.error = error


def call(function: Any, *args: Any, **kwargs: Any) -> Any:
    """Call learner code: its errors become `LearnerError`, a returned `____` `Unfinished`."""
    if has_blank(function):
        raise Unfinished("____")
    if not callable(function):
        raise Wrong(
            "not_callable",
            text(
                "Pass the function itself (without parentheses), not {kind}.",
                "Übergib die Funktion selbst (ohne Klammern), nicht {kind}.",
                kind=type(function).__name__,
            ),
        )
    try:
        result = function(*args, **kwargs)
    except Unfinished:
        raise
    except Exception as error:  # the learner's code failed: explained by `explain`, not here
        raise LearnerError(error) from error
    if has_blank(result):
        raise Unfinished("____")
    return result


# --- explaining an error from the learner's code ------------------------------------------------

_LIBRARY_PATHS = tuple(
    str(Path(p).resolve())
    for key in ("stdlib", "purelib", "platlib")
    if (p := sysconfig.get_path(key))
)
_THIS_FILE = str(Path(__file__).resolve())
# The course's own code (utils, the checks modules) is never "your line".
_COURSE_CODE = tuple(str(ROOT / d) for d in ("utils", "labs/checks", "labs/kit"))

_TIPS: dict[str, Text] = {
    "NameError": (
        "A name is not defined: a typo, or a cell above that has not run yet?",
        "Ein Name ist nicht definiert: ein Tippfehler, oder wurde eine Zelle darüber noch nicht "
        "ausgeführt?",
    ),
    "TypeError": (
        "A value has a type this operation does not accept: print the values of that line and "
        "their type().",
        "Ein Wert hat einen Typ, den diese Operation nicht annimmt: gib die Werte der Zeile und "
        "ihren type() aus.",
    ),
    "AttributeError": (
        "That object has no such attribute: check the spelling, or print type() of the object.",
        "Dieses Objekt hat kein solches Attribut: prüfe die Schreibweise oder gib type() des "
        "Objekts aus.",
    ),
    "ZeroDivisionError": (
        "Something in that line can be 0: which value?",
        "Etwas in dieser Zeile kann 0 sein: welcher Wert?",
    ),
    "RecursionError": (
        "Your function calls itself without end.",
        "Deine Funktion ruft sich endlos selbst auf.",
    ),
    "MemoryError": (
        "Out of memory: compute the answer from the numbers, don't build the data.",
        "Speicher voll: berechne die Antwort aus den Zahlen, statt die Daten anzulegen.",
    ),
}

_SIGNATURE_TIP: Text = (
    "Keep the parameters of the function as the exercise gives them: the check calls it that way.",
    "Behalte die Parameter der Funktion so, wie die Aufgabe sie vorgibt: die Prüfung ruft sie so "
    "auf.",
)


def _learner_frame(error: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame of the traceback that is the learner's: not the course, not a library."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename != _THIS_FILE]
    own = [
        f for f in frames if not f.filename.startswith(("<frozen", *_LIBRARY_PATHS, *_COURSE_CODE))
    ]
    return (own or frames or [None])[-1]


def explain(error: BaseException) -> str:
    """The error, the line of the learner's code it came from, and a tip: no traceback.

    The tip is chosen by the type of the error and where it happened, never by words in its text."""
    name = type(error).__name__
    said = str(error).strip().splitlines()
    lines = [
        text(
            "Your code raised an error, so the check could not finish:",
            "Dein Code hat einen Fehler ausgelöst, die Prüfung konnte nicht zu Ende laufen:",
        ),
        f"    {name}: {said[0] if said else ''}".rstrip(),
    ]
    frame = _learner_frame(error)
    if frame is not None and frame.line:
        lines.append(
            text("    in line {n}:  ", "    in Zeile {n}:  ", n=frame.lineno) + frame.line.strip()
        )
    tip = _TIPS.get("MemoryError" if name == "OutOfMemoryError" else name)  # torch's OOM
    if name == "TypeError" and _raised_by_the_call(error):
        tip = _SIGNATURE_TIP  # the function could not even be entered: wrong parameters
    if tip is not None:
        lines.append(text("Tip: ", "Tipp: ") + text(*tip))
    return "\n".join(lines)


def _raised_by_the_call(error: BaseException) -> bool:
    """True if `error` came from calling the learner's function, not from inside it."""
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and frames[-1].filename == _THIS_FILE
