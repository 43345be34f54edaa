"""Comparing an answer with the truth: numbers and arrays from numpy, torch and JAX alike, the
tolerances, the known mistakes an answer matches, and the classic unit and factor slips.

    as_number(got)                           # a Python number, or Wrong("not_a_number", ...)
    as_number(got, what, returned=True)      # also "no_return" (None), "trailing_comma" ((x,))
    close(got, want), allclose(got, want)    # equal up to float rounding, for any framework
    matching(got, {"ms": want * 1e3})        # ["ms"]: the mistakes this answer equals
    factor_slip(got, want)                   # "gb_not_gib", "bits", ... (UNIT_SLIPS) or None
    diagnose(failures, message)              # raise Wrong for the mistake every input shows

Nothing here imports torch or jax: arrays are converted by looking at what they are.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
from typing import Any

from labs.kit.answers import Text, Wrong
from utils.i18n import num, text


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


def as_number(
    value: Any, what: Text = ("the result", "das Ergebnis"), *, returned: bool = False
) -> int | float:
    """A Python number from an int, float, or a numpy/torch/JAX scalar (a 0-d array).  With
    `returned=True` the value is what the learner's function returned, and the two slips of a
    `return` line have keys of their own: None is "no_return" (no `return ...` at all), a tuple
    of one number "trailing_comma" (`return x,`)."""
    if returned and value is None:
        raise Wrong(
            "no_return",
            text(
                "Your function returns None: does it end in `return ...`?",
                "Deine Funktion gibt None zurück: Endet sie mit `return ...`?",
            ),
        )
    if returned and isinstance(value, tuple) and len(value) == 1:
        raise Wrong(
            "trailing_comma",
            text(
                "Your function returns a tuple, {shown}: a comma after the value (`return x,`) "
                "makes one. Return the number itself.",
                "Deine Funktion gibt ein Tupel zurück, {shown}: Ein Komma nach dem Wert "
                "(`return x,`) macht eins daraus. Gib die Zahl selbst zurück.",
                shown=_shown(value),
            ),
        )
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


def as_tuple(value: Any, whats: tuple[Text, ...], key: str = "not_a_tuple") -> tuple[Any, ...]:
    """Numbers from a tuple, a list or an array of exactly len(whats) items, each by `as_number`
    (`whats` names them, e.g. (("the TFLOP/s", "die TFLOP/s"), ("the percentage", "der
    Prozentwert"))).  Anything else is `Wrong(key)`, whose message names the items asked for."""
    items = None
    if isinstance(value, tuple | list):
        items = list(value)
    elif hasattr(value, "shape") and not isinstance(value, str):
        try:
            array = to_numpy(value)
        except Exception:
            array = None
        if array is not None and array.dtype.kind in "iuf":
            items = list(array.reshape(-1))
    if items is None or len(items) != len(whats):
        names = ", ".join(w[0] for w in whats), ", ".join(w[1] for w in whats)
        raise Wrong(
            key,
            text(
                "Return {n} numbers ({names}), not {shown}.",
                "Gib {n} Zahlen zurück ({names}), nicht {shown}.",
                n=len(whats),
                names=text(*names),
                shown=_shown(value),
            ),
        )
    return tuple(as_number(item, what) for item, what in zip(items, whats, strict=True))


def _shown(value: Any) -> str:
    """A wrong answer as the message shows it: a number (also inside a list or tuple) in the
    learner's language, else its repr."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return num(value, ".6g")
    if type(value) in (list, tuple):
        return textwrap.shorten(text("{v:.6g}", "{v:.6g}", v=value), 60, placeholder=" ...")
    return textwrap.shorten(repr(value), 60, placeholder=" ...")


def as_pair(value: Any, first: Text, second: Text, key: str = "not_a_pair") -> tuple[Any, Any]:
    """Two numbers, as `as_tuple` reads them."""
    return as_tuple(value, (first, second), key)  # type: ignore[return-value]


def _not_a_number(value: Any, what: Text) -> Wrong:
    shape = getattr(value, "shape", None)
    kind = type(value).__name__
    if shape is not None:
        kind += text(" of shape {s}", " der Form {s}", s=tuple(shape))
    shown = _shown(value)
    return Wrong(
        "not_a_number",
        text(
            "{what} should be one number (int, float, or a numpy/torch/JAX scalar), "
            "but it is {shown} ({kind}). Return the number itself, e.g. float(x) or x.item().",
            "{what} sollte eine Zahl sein (int, float oder ein numpy-/torch-/JAX-Skalar), "
            "ist aber {shown} ({kind}). Gib die Zahl selbst zurück, z. B. float(x) oder "
            "x.item().",
            what=text(what[0][0].upper() + what[0][1:], what[1][0].upper() + what[1][1:]),
            shown=shown,
            kind=kind,
        ),
    )


def close(got: float, want: float, rel_tol: float = 1e-6, abs_tol: float = 0.0) -> bool:
    """Equal up to a relative tolerance: the default forgives float rounding, not a wrong
    formula."""
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
