"""The mistakes an exercise knows, as a table: each declared once, with its key, what it gives and
its message in both languages.

    SLIPS = Mistakes(
        Mistake("mkn", "You count m·k·n multiply-adds: a matmul does two FLOPs per pair.",
                "Du zählst m·k·n Multiplikationen und Additionen: ...",
                gives=lambda m, k, n: m * k * n),
        Mistake("milliseconds", "Your time is {got} s, a thousand times {want} s: milliseconds?",
                "...", gives=lambda seconds: seconds * 1e3),
        Mistake("no_return", "Your function returns None ...", "..."),  # raised by name
    )

    raise SLIPS.wrong("no_return")                  # a mistake found by the check's own logic
    SLIPS.diagnose(failures)                        # the mistake that explains every failure

A mistake with `gives` is found by value: `gives(**case)` is what that slip returns for the input
`case` (a dict of the check's arguments).  One with `when` is a predicate `when(got, **case)`.
`explaining(got, case)` lists the mistakes that fit one failing input, in table order, and
`wrong_for(got, case, otherwise)` is the first one's Wrong (or `otherwise`'s);
`diagnose` raises the first one that fits every failing input, else the table's "wrong" (or a
plain "That is not it yet" when the table has none).  `Mistakes(..., head=(en, de))` opens every
message with the same sentence, the one that names the failing input (a table with a head and one
without add up: `Mistakes(...) + Mistakes(..., head=...)`).  Messages are `str.format`
templates: the case's fields, `got` and whatever the check passes to `wrong(key, **values)` fill
them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from labs.kit.answers import Wrong
from labs.kit.compare import close
from utils.i18n import text


@dataclass(frozen=True)
class Mistake:
    key: str
    en: str
    de: str
    gives: Callable[..., Any] | None = None  # the answer this slip returns for a case
    when: Callable[..., bool] | None = None  # or: does the answer `got` show this slip?
    rel_tol: float = 1e-6

    def message(self, **values: Any) -> str:
        return text(self.en, self.de, **values)

    def fits(self, got: Any, case: dict[str, Any]) -> bool:
        if self.when is not None:
            return bool(self.when(got, **case))
        if self.gives is None:
            return False
        try:
            slip = self.gives(**case)
        except (ArithmeticError, TypeError, ValueError):
            return False
        return _same(got, slip, self.rel_tol)


def _same(got: Any, want: Any, rel_tol: float) -> bool:
    if isinstance(want, list):  # alternatives: any of them
        return any(_same(got, w, rel_tol) for w in want)
    if isinstance(want, tuple):
        return (
            isinstance(got, tuple | list)
            and len(got) == len(want)
            and all(_same(g, w, rel_tol) for g, w in zip(got, want, strict=True))
        )
    if isinstance(want, str) or isinstance(got, str) or isinstance(want, bool):
        return got == want
    try:
        return close(got, want, rel_tol)
    except (TypeError, ValueError):
        return False


def _after(head: str, message: str) -> str:
    """`message` after the sentence `head`, a space between unless `head` ends in one."""
    gap = "" if not head or head[-1].isspace() else " "
    return f"{head}{gap}{message}".rstrip()


class Mistakes:
    """An exercise's table of mistakes, by key, in the order a diagnosis prefers them."""

    def __init__(self, *mistakes: Mistake, head: tuple[str, str] | None = None):
        """`head` (en, de), if given, opens every message: the sentence that says which input
        failed ("For m=3, k=5, n=7 the answer is {want}; yours {got}."), a space after it
        unless it ends in one ("For m={m}: ")."""
        self.by_key: dict[str, Mistake] = {}
        for mistake in mistakes:
            if head is not None:
                en, de = _after(head[0], mistake.en), _after(head[1], mistake.de)
                mistake = replace(mistake, en=en, de=de)
            if mistake.key in self.by_key:
                raise ValueError(f"two mistakes with the key {mistake.key!r}")
            self.by_key[mistake.key] = mistake

    def __contains__(self, key: str) -> bool:
        return key in self.by_key

    def __iter__(self):
        return iter(self.by_key.values())

    def __add__(self, other: Mistakes) -> Mistakes:
        return Mistakes(*self, *other)

    def wrong(self, key: str, **values: Any) -> Wrong:
        """The `Wrong` to raise for mistake `key`, its message filled with `values`."""
        return Wrong(key, self.by_key[key].message(**values))

    def explaining(self, got: Any, case: dict[str, Any]) -> list[str]:
        """The keys of the mistakes that turn `case` into the answer `got`, in table order."""
        return [m.key for m in self if m.fits(got, case)]

    def wrong_for(self, got: Any, case: dict[str, Any], otherwise: str = "wrong") -> Wrong:
        """The `Wrong` of the first mistake that turns `case` into `got`, else of `otherwise`;
        its message filled with the case and `got`."""
        found = self.explaining(got, case)
        return self.wrong(found[0] if found else otherwise, **{"got": got, **case})

    def diagnose(self, failures: Iterable[tuple[Any, dict[str, Any]]], **values: Any) -> None:
        """Raise the mistake that explains every failing (answer, case); else the general one.
        The message is filled with the first failure's case, its answer as `got`, and `values`."""
        failures = list(failures)
        if not failures:
            return
        got, first = failures[0]
        common = [m for m in self if all(m.fits(g, c) for g, c in failures) and m.key != "wrong"]
        fill = {**first, "got": got, **values}
        if common:
            raise Wrong(common[0].key, common[0].message(**fill))
        if "wrong" in self:
            raise self.wrong("wrong", **fill)
        raise Wrong(
            "wrong",
            text("That is not it yet.", "Das stimmt noch nicht."),
        )
