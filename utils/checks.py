"""Exercises that check themselves: the API of the labs.

Each lab's checks live in a module, `labs/checks/labNN.py`, one small test per exercise:

    lab = Lab("01")  # reads labs/src/01_*.py: the title, each solution, each answer's name

    @lab.exercise("batched_flops", title=("FLOPs of a batched matmul", "FLOPs einer
                  Batch-Matmul"), points=2, hint=("...", "..."))
    def q1(batched_matmul_flops, rng):
        ...

The notebook binds them in one short cell (`from labs.checks.lab01 import lab, q1, q2`).  The
learner replaces the blank `____` by code and runs `q1.check(batched_matmul_flops)`; `q1.hint()`
and `q1.solution()` help (the solution is the source's solution block); `lab.score()` shows the
points.  The grader does not trust any of this: it imports the checks afresh and checks every
answer again (`regrade`).

A *test* is a function `test(answer, rng) -> str | None`.  It tries the answer on fresh random
inputs (so a memorised number cannot pass), calls learner code only through `call(...)`, raises
`Wrong(key, message)` for a wrong answer, and may return a note for a right one.  `check()` turns
whatever happens into feedback in the learner's language and never raises:

    passed          the answer behaves as asked
    wrong           `Wrong.key` names the mistake (tests assert on it), the message explains it
    not_attempted   the answer is still the blank `____`, or the code reached a `____`
    error           the learner's code raised: the error and the line it came from, no traceback

Nothing here imports torch or jax: arrays are converted by looking at what they are.
"""

from __future__ import annotations

import math
import random
import sysconfig
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .blank import Unfinished, ____, has_blank
from .i18n import get_language, say, text
from .sources import answer_name, check_cell, read_cells, read_header, solution_code

Text = tuple[str, str]  # (English, German)
Test = Callable[[Any, random.Random], "str | None"]

# The status of an exercise (machine-readable, in the score's JSON too).
PASSED = "passed"
WRONG = "wrong"
NOT_ATTEMPTED = "not_attempted"
ERROR = "error"
NOT_CHECKED = "not_checked"  # its check() has not run yet
# The grader finds the score in a display output of this type (see `Lab.score`, `report`).
SCORE_MIMETYPE = "application/vnd.gpu-tpu-course.score+json"

__all__ = [
    "ERROR",
    "NOT_ATTEMPTED",
    "NOT_CHECKED",
    "PASSED",
    "SCORE_MIMETYPE",
    "UNIT_SLIPS",
    "WRONG",
    "Exercise",
    "Lab",
    "LearnerError",
    "Result",
    "Unfinished",
    "Wrong",
    "____",
    "allclose",
    "as_number",
    "call",
    "close",
    "diagnose",
    "explain",
    "factor_slip",
    "format_table",
    "matching",
    "regrade",
    "report",
    "to_numpy",
]


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
_COURSE_CODE = tuple(str(Path(__file__).resolve().parents[1] / d) for d in ("utils", "labs/checks"))

_TIPS: dict[str, Text] = {
    "NameError": (
        "A name is not defined: a typo, or a cell above that has not run yet?",
        "Ein Name ist nicht definiert: ein Tippfehler, oder wurde eine Zelle darüber noch nicht ausgeführt?",
    ),
    "TypeError": (
        "A value has a type this operation does not accept: print the values of that line and their type().",
        "Ein Wert hat einen Typ, den diese Operation nicht annimmt: gib die Werte der Zeile und ihren type() aus.",
    ),
    "AttributeError": (
        "That object has no such attribute: check the spelling, or print type() of the object.",
        "Dieses Objekt hat kein solches Attribut: prüfe die Schreibweise oder gib type() des Objekts aus.",
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
    "Behalte die Parameter der Funktion so, wie die Aufgabe sie vorgibt: die Prüfung ruft sie so auf.",
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


# --- numbers and arrays from numpy, torch and JAX alike -----------------------------------------


def to_numpy(value: Any) -> Any:
    """A numpy array from a numpy, torch (any device, bf16, with grad) or JAX array, or a list."""
    import numpy as np

    if type(value).__module__.split(".")[0] == "torch":  # without importing torch ourselves
        value = value.detach().cpu()
        if value.dtype.is_floating_point and value.dtype.itemsize < 4:
            value = value.float()  # numpy has no bfloat16; float32 holds every fp16/bf16 value
        return value.numpy()
    array = np.asarray(value)  # numpy, JAX (via __array__), lists, scalars
    if array.dtype.kind == "V" or type(array.dtype).__module__.startswith("ml_dtypes"):
        array = array.astype(np.float32)  # JAX's bfloat16 (ml_dtypes) → float32
    return array


def as_number(value: Any, what: Text = ("the result", "das Ergebnis")) -> int | float:
    """A Python number from an int, float, or a numpy/torch/JAX scalar (a 0-d array)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        raise _not_a_number(value, what)
    if isinstance(value, int | float):
        return value
    try:
        array = to_numpy(value)
    except Exception:
        raise _not_a_number(value, what) from None
    if array.ndim != 0 or array.dtype.kind not in "iuf":  # one number, not [x] or (x,)
        raise _not_a_number(value, what)
    return array.reshape(()).item()


def _not_a_number(value: Any, what: Text) -> Wrong:
    shape = getattr(value, "shape", None)
    kind = type(value).__name__ + (f" of shape {tuple(shape)}" if shape is not None else "")
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    return Wrong(
        "not_a_number",
        text(
            "{what} should be one number (int, float, or a numpy/torch/JAX scalar), "
            "but it is {shown} ({kind}).",
            "{what} sollte eine Zahl sein (int, float oder ein numpy-/torch-/JAX-Skalar), "
            "ist aber {shown} ({kind}).",
            what=text(what[0][0].upper() + what[0][1:], what[1][0].upper() + what[1][1:]),
            shown=shown,
            kind=kind,
        ),
    )


def close(got: float, want: float, rel_tol: float = 1e-6, abs_tol: float = 0.0) -> bool:
    """Equal up to a relative tolerance: the default forgives float rounding, not a wrong formula."""
    try:
        return math.isclose(float(got), float(want), rel_tol=rel_tol, abs_tol=abs_tol)
    except OverflowError:  # an int too large for a float is not close to anything we ask for
        return False


def _same(got: Any, value: Any) -> bool:
    if isinstance(value, tuple):
        return (
            isinstance(got, tuple | list) and len(got) == len(value) and all(map(_same, got, value))
        )
    if isinstance(value, str) or isinstance(got, str):
        return got == value
    return close(got, value)


def matching(got: Any, mistakes: dict[str, Any]) -> list[str]:
    """The mistakes whose value the learner's answer equals, in the order given.  A value is a
    number, a string, a tuple of these, or a list of alternatives."""
    return [
        key
        for key, values in mistakes.items()
        if any(_same(got, v) for v in (values if isinstance(values, list) else [values]))
    ]


# The classic slips of a unit or a factor: the answer times this factor is what the slip gives.
UNIT_SLIPS: dict[str, float] = {
    "milliseconds": 1e3,  # seconds asked for, milliseconds given
    "microseconds": 1e6,
    "seconds_not_ms": 1e-3,  # milliseconds asked for, seconds given
    "gb_not_gib": 2**30 / 1e9,  # GiB asked for, GB (10⁹ bytes) given
    "gib_not_gb": 1e9 / 2**30,
    "bits": 8,  # bytes asked for, bits given
    "sparse_peak": 0.5,  # % of peak against the 2× "with sparsity" figure of a data sheet
}


def factor_slip(
    got: Any, want: float, slips: dict[str, float] = UNIT_SLIPS, rel_tol: float = 1e-3
) -> str | None:
    """The name of the slip that turns `want` into `got` (see `UNIT_SLIPS`), or None."""
    try:
        value = float(got)
    except (TypeError, ValueError):
        return None
    return next((key for key, f in slips.items() if close(value, want * f, rel_tol)), None)


def diagnose(failures: list[tuple[list[str], dict[str, Any]]], message: Callable[..., str]) -> None:
    """Raise `Wrong` for the first mistake that explains *every* failing input, else "wrong".

    `failures` holds (`matching(...)` for that input, the input as a dict) per failing input; one
    input can fit two mistakes, all inputs rarely do.  A key "name:detail" reports as "name".
    `message(key, **input)` writes the feedback."""
    keys, first = failures[0]
    common = [key for key in keys if all(key in other for other, _ in failures)]
    key = common[0].split(":")[0] if common else "wrong"
    raise Wrong(key, message(key, **first))


# Tolerances by the less precise of the two dtypes: float16/bfloat16 keep only 3 digits.
_TOLERANCE = {8: (1e-10, 1e-12), 4: (1e-5, 1e-6), 2: (2e-2, 1e-3)}


def allclose(got: Any, want: Any, rtol: float | None = None, atol: float | None = None) -> bool:
    """Same shape and close values, for numpy, torch and JAX arrays alike."""
    import numpy as np

    precision = min(_itemsize(got), _itemsize(want))
    default_rtol, default_atol = _TOLERANCE.get(precision, _TOLERANCE[4])
    a, b = to_numpy(got), to_numpy(want)
    if a.shape != b.shape:
        return False
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    return bool(np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol))


def _itemsize(value: Any) -> int:
    dtype = getattr(value, "dtype", None)
    size = getattr(dtype, "itemsize", None)
    return size if isinstance(size, int) and size in _TOLERANCE else 8


# --- one exercise -------------------------------------------------------------------------------

_SYMBOLS = {PASSED: "✅", WRONG: "❌", NOT_ATTEMPTED: "✏️", ERROR: "💥", NOT_CHECKED: "·"}
_STATUS_NAMES: dict[str, Text] = {
    PASSED: ("passed", "bestanden"),
    WRONG: ("not yet", "noch nicht"),
    NOT_ATTEMPTED: ("not attempted", "nicht bearbeitet"),
    ERROR: ("error", "Fehler"),
    NOT_CHECKED: ("not checked", "nicht geprüft"),
}


@dataclass(frozen=True)
class Result:
    status: str  # PASSED, WRONG, NOT_ATTEMPTED or ERROR
    key: str  # which feedback: "ok", "not_attempted", "raised", "check_failed" or a `Wrong.key`
    message: str  # in the learner's language


@dataclass
class Exercise:
    lab: Lab
    number: int
    name: str
    title: Text
    points: int
    test: Test
    hint_text: Text
    result: Result | None = None  # of the last check(), for display only: the grader re-checks

    @property
    def label(self) -> str:
        return f"q{self.number}"

    @property
    def earned(self) -> int:
        return self.points if self.result is not None and self.result.status == PASSED else 0

    @property
    def answer(self) -> str:
        """The name of the learner's answer in the notebook (`q1.check(pick_device)`)."""
        return answer_name(check_cell(self.lab.cells, self.label), self.label)

    def solution_code(self, lang: str | None = None) -> str:
        """The solution block of the lab source, in `lang` (default: the learner's language)."""
        cell = check_cell(self.lab.cells, self.label)
        return solution_code(cell, self.label, lang or get_language())

    def evaluate(self, answer: Any, seed: int | None = None) -> Result:
        """Run the test and turn its outcome into a `Result`; prints nothing, records nothing."""
        if has_blank(answer):
            return self._not_attempted()
        try:
            note = self.test(answer, random.Random(seed))
        except Unfinished:
            return self._not_attempted()
        except Wrong as wrong:
            return Result(WRONG, wrong.key, wrong.message)
        except LearnerError as failure:
            return Result(ERROR, "raised", explain(failure.error))
        except Exception as error:  # a bug in the check itself: say so, and still don't raise
            return Result(
                ERROR,
                "check_failed",
                text(
                    "The check itself failed ({error}). Please tell your trainer.",
                    "Die Prüfung selbst ist fehlgeschlagen ({error}). "
                    "Bitte sag deiner Trainerin oder deinem Trainer Bescheid.",
                    error=f"{type(error).__name__}: {error}",
                ),
            )
        return Result(PASSED, "ok", note or text("Correct!", "Richtig!"))

    def _not_attempted(self) -> Result:
        return Result(
            NOT_ATTEMPTED,
            "not_attempted",
            text(
                "Not attempted yet: replace ____ with your code, then run the cell again.",
                "Noch nicht bearbeitet: Ersetze ____ durch deinen Code und führe die Zelle erneut aus.",
            ),
        )

    def check(self, answer: Any) -> None:
        """Check the answer on fresh random inputs, record the result and print feedback."""
        self.result = self.evaluate(answer)
        lines = [f"{_SYMBOLS[self.result.status]} {self.result.message}"]
        if self.result.status in (WRONG, ERROR):
            lines.append(
                text(
                    "Stuck? {q}.hint() gives a hint, {q}.solution() the answer.",
                    "Hängst du fest? {q}.hint() gibt einen Tipp, {q}.solution() die Lösung.",
                    q=self.label,
                )
            )
        print("\n".join(lines))

    def hint(self) -> None:
        print(text("Hint: ", "Tipp: ") + text(*self.hint_text))

    def solution(self) -> None:
        print(text("Solution:", "Lösung:") + "\n" + self.solution_code())


# --- a lab and its score ------------------------------------------------------------------------

_labs: dict[str, Lab] = {}  # every lab made in this kernel, by number: what `report` shows
COURSE = Path(__file__).resolve().parents[1]


class Lab:
    """The exercises of one lab, defined in `labs/checks/labNN.py`.  Its source
    (`labs/src/NN_*.py`) gives the title, the solution of each exercise and its answer's name."""

    def __init__(self, number: str, course: Path = COURSE):
        sources = sorted((course / "labs" / "src").glob(f"{number}_*.py"))
        if len(sources) != 1:
            raise ValueError(f"expected one source labs/src/{number}_*.py, found {len(sources)}")
        self.number = number
        self.source = sources[0]
        header = read_header(self.source)
        self.title: Text = (header["title"]["en"], header["title"]["de"])
        self.cells = read_cells(self.source)
        self.exercises: list[Exercise] = []
        _labs[number] = self  # importing the checks afresh starts a fresh scoreboard

    def exercise(
        self, name: str, *, title: Text, points: int, hint: Text
    ) -> Callable[[Test], Exercise]:
        """Decorate a test to make it exercise number len+1 (q1, q2, ... in this order)."""
        if any(e.name == name for e in self.exercises):
            raise ValueError(f"Lab {self.number} has an exercise {name!r} already")

        def add(test: Test) -> Exercise:
            number = len(self.exercises) + 1
            exercise = Exercise(self, number, name, title, points, test, hint)
            self.exercises.append(exercise)
            return exercise

        return add

    def summary(self) -> dict[str, Any]:
        """The score, machine-readable: titles in both languages, statuses as the constants above."""
        exercises = [
            {
                "number": e.number,
                "name": e.name,
                "title": {"en": e.title[0], "de": e.title[1]},
                "points": e.earned,
                "max": e.points,
                "status": e.result.status if e.result else NOT_CHECKED,
                "key": e.result.key if e.result else NOT_CHECKED,
            }
            for e in self.exercises
        ]
        return {
            "lab": self.number,
            "title": {"en": self.title[0], "de": self.title[1]},
            "score": sum(e["points"] for e in exercises),
            "max": sum(e["max"] for e in exercises),
            "exercises": exercises,
        }

    def table(self) -> str:
        return format_table(self.summary())

    def score(self) -> None:
        """Show the score table (what the checks in this notebook said so far)."""
        _show(self.table(), {"labs": [self.summary()]})

    def ready(self) -> None:
        """The one line the checks cell prints."""
        say(
            "Lab {lab}: {n} exercises ready.",
            "Lab {lab}: {n} Aufgaben bereit.",
            lab=self.number,
            n=len(self.exercises),
        )


def format_table(summary: dict[str, Any]) -> str:
    """A `Lab.summary()` as a plain-text table in the learner's language."""
    rows = [
        (
            str(e["number"]),
            text(e["title"]["en"], e["title"]["de"]),
            f"{e['points']} / {e['max']}",
            f"{_SYMBOLS[e['status']]} {text(*_STATUS_NAMES[e['status']])}",
        )
        for e in summary["exercises"]
    ]
    rows.append(("", text("total", "Summe"), f"{summary['score']} / {summary['max']}", ""))
    head = ("#", text("exercise", "Aufgabe"), text("points", "Punkte"), text("status", "Status"))
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    title = text(summary["title"]["en"], summary["title"]["de"])
    lines = [f"Lab {summary['lab']} · {title}"]
    for row in [head, *rows]:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


def report() -> None:
    """Show the scores of every lab made in this kernel."""
    _show(
        "\n\n".join(lab.table() for lab in _labs.values()),
        {"labs": [lab.summary() for lab in _labs.values()]},
    )


def regrade(namespace: dict[str, Any], number: str, seed: int) -> None:
    """What the grader runs after a submission: every exercise checked again on the answers in
    `namespace`, with new random inputs, by checks imported afresh (`utils.grade` removes the
    course's modules from `sys.modules` first), then the score shown.  Whatever the submission
    did to `qN.result`, to `check` or to the checks module it imported counts for nothing here;
    and the score is put together from values taken before any answer runs, so an answer can't
    rewrite it while it is checked."""
    import importlib

    show, table = _show, format_table  # taken now: an answer that patches them changes nothing
    _labs.clear()
    lab = importlib.import_module(f"labs.checks.lab{number}").lab
    plan = [(e, e.number, e.name, e.title, e.points, e.answer) for e in lab.exercises]
    rows = []
    for exercise, n, name, title, points, answer in plan:
        result = exercise.evaluate(namespace.get(answer, ____), seed=seed + n)
        status, key = str(result.status), str(result.key)
        earned = points if status == PASSED else 0
        rows.append(
            {"number": n, "name": name, "title": {"en": title[0], "de": title[1]},
             "points": earned, "max": points, "status": status, "key": key}
        )  # fmt: skip
    summary = {
        "lab": number,
        "title": {"en": lab.title[0], "de": lab.title[1]},
        "score": sum(r["points"] for r in rows),
        "max": sum(r["max"] for r in rows),
        "exercises": rows,
    }
    show(table(summary), {"labs": [summary]})


def _show(table: str, data: dict[str, Any]) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        get_ipython = None
    if get_ipython is None or get_ipython() is None:  # plain Python: text only
        print(table)
        return
    display({"text/plain": table, SCORE_MIMETYPE: data}, raw=True)
