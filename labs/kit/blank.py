"""The blank `____` a learner replaces by code.

Returning it, or computing with it, means "not attempted yet".  It lives in a module of its own
because the grader imports the checks afresh after a submission ran (`labs.kit.regrade`): the
blank in the learner's functions must still be *the* blank then.
"""

from __future__ import annotations

from typing import Any

__all__ = ["____", "Unfinished", "has_blank"]


class Unfinished(Exception):
    """The code reached the blank `____`: the exercise is not attempted yet."""


class _Blank:
    """`____`: returning it, or computing with it, means "not attempted yet"."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "____"

    def _unfinished(self, *args: Any, **kwargs: Any) -> Any:
        raise Unfinished("____")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # protocol probes (IPython, numpy) must see a plain object
            raise AttributeError(name)
        raise Unfinished("____")


# `2 * ____`, `____ + x`, `float(____)`, `____[0]`, `if ____:` ... all say "not attempted".
_OPERATORS = (
    *("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul"),
    *("radd", "rsub", "rmul", "rtruediv", "rfloordiv", "rmod", "rpow", "rmatmul"),
    *("and", "or", "xor", "lshift", "rshift", "rand", "ror", "rxor", "rlshift", "rrshift"),
    *("neg", "pos", "abs", "invert", "int", "float", "complex", "index", "bool", "round"),
    *("lt", "le", "gt", "ge", "len", "iter", "getitem", "contains", "call"),
)
for _name in _OPERATORS:
    setattr(_Blank, f"__{_name}__", _Blank._unfinished)

____ = _Blank()


def has_blank(value: Any) -> bool:
    if value is ____:
        return True
    if isinstance(value, tuple | list):
        return any(item is ____ for item in value)
    if isinstance(value, dict):
        return any(item is ____ for item in value.values())
    return False
