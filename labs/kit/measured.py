"""A measurement on the learner's device that a check can verify, and the judgement drawn from it.

The work to time is handed to the learner as callables that the check times as well, so the
learner's numbers are compared with what really happened on this device, never with a number the
check expects; the judgement must follow from the learner's own (verified) numbers.

    timed = Timed({"float32": run_fp32, "bfloat16": run_bf16}, sync=torch.cuda.synchronize)
    ms, verdict = timed.parts(call(faster_dtype, timed.callables))
    timed.verify(ms)                  # ms per call, each within the span of the calls timed here
    timed.judge(ms, verdict, min)     # the name `min` (or `max`) picks from those numbers

Torch-free: a device's sync (torch.cuda.synchronize) is passed in.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from labs.kit.answers import Wrong
from labs.kit.compare import as_number
from labs.kit.mistakes import Mistake, Mistakes
from utils.i18n import text

SLACK_MS = 0.3  # a learner's timer also sees the call around the work: microseconds


def _readable(x: float) -> float | int:
    """Three significant digits, written without an exponent (68,000 rather than 6.8e+04)."""
    rounded = float(f"{x:.3g}")
    return round(rounded) if abs(rounded) >= 100 else rounded


def _in_span(ms: float, low: float, high: float, wall: float = 0.0) -> bool:
    """A time per call lies between the fastest and the slowest call (a sum of 3 does not), or
    up to the wall time per call: a loop's clock also runs between the calls, for milliseconds
    when another process has the core."""
    return 0.95 * low <= ms <= max(high, wall) + SLACK_MS


def _called(name: str, n: int) -> str:
    if n == 0:
        return text("You never called {name}", "Du hast {name} nie aufgerufen", name=name)
    if n == 1:
        return text("You called {name} once", "Du hast {name} einmal aufgerufen", name=name)
    return text("You called {name} {n} times", "Du hast {name} {n}-mal aufgerufen", name=name, n=n)


MEASURED = (
    Mistakes(
        Mistake(
            "type",
            "Return a pair (ms, verdict): ms a dict with a time per call for each of {names}, "
            "verdict one of those names; not {kind}.",
            "Gib ein Paar (ms, verdict) zurück: ms ein Dict mit einer Zeit pro Aufruf für jeden "
            "von {names}, verdict einer dieser Namen; nicht {kind}.",
        ),
        Mistake(
            "too_few",
            "{called}: time at least {least} calls{each}, a single call is mostly noise.",
            "{called}: Miss mindestens {least} Aufrufe{each}, ein einzelner Aufruf ist vor allem "
            "Rauschen.",
        ),
    )
    + Mistakes(
        Mistake(
            "seconds",
            "That is in seconds: the times are asked in milliseconds.",
            "Das sind Sekunden: Gefragt sind Millisekunden.",
            when=lambda got, low, high, **_: _in_span(got * 1e3, low, high),
        ),
        Mistake(
            "microseconds",
            "That is in microseconds: the times are asked in milliseconds.",
            "Das sind Mikrosekunden: Gefragt sind Millisekunden.",
            when=lambda got, low, high, **_: _in_span(got / 1e3, low, high),
        ),
        Mistake(
            "total",
            "That is the time of all {n} calls together: report the time of one call.",
            "Das ist die Zeit aller {n} Aufrufe zusammen: Gib die Zeit eines Aufrufs an.",
            # At most all the time from the first call's start to the last one's end: the
            # learner's clock also runs between the calls, longer when the machine is busy.
            when=lambda got, high, total, span, **_: (
                high + SLACK_MS < got <= max(1.1 * total, span) + SLACK_MS
            ),
        ),
        Mistake(
            "not_measured",
            "Time the calls themselves here, on this device, and report milliseconds per call.",
            "Miss die Aufrufe selbst, hier auf diesem Gerät, und gib Millisekunden pro Aufruf an.",
        ),
        head=(
            "Your time for {name} is {got_ms:,} ms, but its {n} calls took {low_ms:,} to "
            "{high_ms:,} ms each here.",
            "Deine Zeit für {name} ist {got_ms:,} ms, aber seine {n} Aufrufe dauerten hier je "
            "{low_ms:,} bis {high_ms:,} ms.",
        ),
    )
    + Mistakes(
        Mistake(
            "verdict",
            "Your own numbers ({shown}) point to {want!r}, your verdict is {said}.",
            "Deine eigenen Zahlen ({shown}) sprechen für {want!r}, dein Urteil ist {said}.",
        ),
    )
)


class Timed:
    """Callables for a learner to time; each call is timed here too (until `sync` returns)."""

    def __init__(
        self,
        work: dict[str, Callable[[], Any]],
        sync: Callable[[], Any] | None = None,
        least: int = 3,
    ):
        self.seconds: dict[str, list[float]] = {name: [] for name in work}
        self.spans: dict[str, list[float]] = {}  # name: [first call's start, last call's end]
        self.least = least
        for fn in work.values():  # en: warmed up here: no call is slow for being the first
            fn()  # de: hier aufgewärmt: kein Aufruf ist langsam, weil er der erste ist
            if sync is not None:
                sync()
        self.callables = {name: self._timed(name, fn, sync) for name, fn in work.items()}

    def _timed(self, name: str, fn: Callable[[], Any], sync: Callable[[], Any] | None):
        def run() -> None:
            start = time.perf_counter()
            fn()
            if sync is not None:
                sync()
            end = time.perf_counter()
            self.seconds[name].append(end - start)
            self.spans.setdefault(name, [start, end])[1] = end

        return run

    def parts(self, result: Any) -> tuple[Any, Any]:
        """(ms, verdict) from the learner's answer, or Wrong "type"."""
        if not isinstance(result, tuple | list) or len(result) != 2:
            raise self._type(result)
        return result[0], result[1]

    def _type(self, value: Any) -> Wrong:
        kind = type(value).__name__
        if isinstance(value, dict):
            keys = ", ".join(map(repr, value)) or "–"
            kind = text(
                "a dict with the keys {keys}", "ein Dict mit den Schlüsseln {keys}", keys=keys
            )
        return MEASURED.wrong("type", names=", ".join(map(repr, self.seconds)), kind=kind)

    def verify(self, reported: Any) -> dict[str, float]:
        """The learner's milliseconds per call, each within the span of the calls timed here."""
        if not isinstance(reported, dict) or set(reported) != set(self.seconds):
            raise self._type(reported)
        ms = {}
        for name, seconds in self.seconds.items():
            got = as_number(reported[name], (f"ms[{name!r}]", f"ms[{name!r}]"))
            if len(seconds) < self.least:
                raise MEASURED.wrong(
                    "too_few",
                    called=_called(name, len(seconds)),
                    least=self.least,
                    each=text(" of each", " von jedem") if len(self.seconds) > 1 else "",
                )
            low, high, total = 1e3 * min(seconds), 1e3 * max(seconds), 1e3 * sum(seconds)
            span = 1e3 * (self.spans[name][1] - self.spans[name][0])
            if not _in_span(got, low, high, wall=span / max(len(seconds) - 1, 1)):
                case = dict(name=name, low=low, high=high, total=total, span=span, n=len(seconds))
                case.update(got_ms=_readable(got), low_ms=_readable(low), high_ms=_readable(high))
                raise MEASURED.wrong_for(got, case, otherwise="not_measured")
            ms[name] = got
        return ms

    def judge(self, ms: dict[str, float], verdict: Any, pick: Callable = min) -> None:
        """The verdict must be the name that `pick` (min or max) chooses by the learner's ms."""
        want = pick(ms, key=ms.get)
        if verdict != want:
            shown = ", ".join(
                text("{name}: {ms:.3g} ms", "{name}: {ms:.3g} ms", name=n, ms=v)
                for n, v in ms.items()
            )
            said = repr(verdict) if isinstance(verdict, str) else verdict
            if isinstance(verdict, float):
                said = text("{t:,}", "{t:,}", t=_readable(verdict))
            raise MEASURED.wrong("verdict", shown=shown, want=want, said=said)
