"""The clocks a learner's timer reads, swapped while a check runs it.

`swapped_clocks(fakes, *functions)` points `time.perf_counter`, `time.time`, `time.monotonic`,
their `_ns` forms and `time.sleep` at stand-ins, and with them every other name that holds the
real ones: timeit's default timer (also the default argument of `timeit.timeit`, `timeit.repeat`
and `timeit.Timer`) and names in the learner's globals (`from time import perf_counter`).

`logged_clocks(*functions)` keeps the real clocks but notes each read: which clock, what it
returned, and when, on one timeline (`perf_counter`).  `stretches(reads, seconds)` then finds the
pairs of reads a learner's number was computed from, so a check can tell which stretch of time
the number measured (did it hold the compile? a run? ten runs?), whatever the machine's load.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
import timeit
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

CLOCKS = ("perf_counter", "time", "monotonic", "perf_counter_ns", "time_ns", "monotonic_ns")
REAL: dict[str, Callable[[], Any]] = {name: getattr(time, name) for name in CLOCKS}
REAL_SLEEP = time.sleep
_TIMELINE = REAL["perf_counter"]
# Library code reads clocks too (JAX times its own compiles): those reads are not the learner's.
_NOT_LEARNER = ("jax", "jaxlib", "numpy", "torch")


@contextlib.contextmanager
def swapped_clocks(fakes: dict[str, Any], *functions: Any) -> Iterator[None]:
    """While the block runs, every name holding a real clock (or `time.sleep`) holds its fake.

    `fakes` maps names of `CLOCKS` (and "sleep") to stand-ins; clocks without one stay real.
    Pass the learner's functions: their globals are searched too."""
    real = {**REAL, "sleep": REAL_SLEEP}
    by_identity = {id(real[name]): fake for name, fake in fakes.items()}  # reals live: ids unique
    swapped: list[tuple[Callable[[Any], None], Any]] = []
    for namespace in [vars(time), vars(timeit), *(_globals(f) for f in functions)]:
        for name, value in list(namespace.items()):
            if id(value) in by_identity:
                swapped.append((lambda v, ns=namespace, n=name: ns.__setitem__(n, v), value))
                namespace[name] = by_identity[id(value)]
    # timeit's functions took `default_timer` as a default argument when they were defined.
    for function in (timeit.timeit, timeit.repeat, timeit.Timer.__init__):
        defaults = function.__defaults__ or ()
        if any(id(d) in by_identity for d in defaults):
            swapped.append((lambda v, f=function: setattr(f, "__defaults__", v), defaults))
            function.__defaults__ = tuple(by_identity.get(id(d), d) for d in defaults)
    try:
        yield
    finally:
        for restore, value in reversed(swapped):
            restore(value)


def _globals(function: Any) -> dict[str, Any]:
    function = getattr(function, "__func__", function)  # a bound method
    return getattr(function, "__globals__", {})


@dataclass(frozen=True)
class Read:
    clock: str  # "perf_counter", "time_ns", …
    value: float | int  # what it returned
    at: float  # when, on the perf_counter timeline
    work: float  # the work clock then (see `logged_clocks`)


@dataclass(frozen=True)
class Stretch:
    """A learner's number explained: the stretches between reads it is the sum of, times `unit`
    (1 for seconds, 1e3 for milliseconds, 1e6 for microseconds), divided by `count`."""

    parts: tuple[tuple[float, float], ...]  # (start, end) on the perf_counter timeline
    work: float  # the work clock's advance over the parts
    unit: float
    count: int

    @property
    def start(self) -> float:
        return self.parts[0][0]

    @property
    def end(self) -> float:
        return self.parts[-1][1]


@contextlib.contextmanager
def logged_clocks(*functions: Any, work: Callable[[], float] = time.process_time):
    """The real clocks, each read by the learner's code noted in the list the block gets, with
    the time on one timeline and the reading of `work`, a clock of the work done (CPU time by
    default: what other programs on the machine can't stretch). Only reads on the thread that
    enters the block count: a notebook's kernel reads clocks on threads of its own meanwhile."""
    reads: list[Read] = []
    thread = threading.get_ident()

    def logging(name: str) -> Callable[[], Any]:
        clock = REAL[name]

        def read() -> Any:
            value = clock()
            at, done = _TIMELINE(), work()
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if threading.get_ident() == thread and caller.partition(".")[0] not in _NOT_LEARNER:
                reads.append(Read(name, value, at, done))
            return value

        return read

    with swapped_clocks({name: logging(name) for name in CLOCKS}, *functions):
        yield reads


UNITS = (1.0, 1e3, 1e6)


def stretches(reads: list[Read], seconds: float, most_runs: int = 1000) -> list[Stretch]:
    """Every way `seconds` comes from reads of one clock, in seconds, milliseconds or
    microseconds, divided by a whole count up to `most_runs`: as the difference of two reads, as a
    sum of every other gap between successive reads (a loop that times each run on its own and
    adds them up), or as the sum of two such gaps (the median of an even number of timings).
    Simplest first: seconds, a count of 1, one part."""
    if not seconds > 0:
        return []
    found = []
    for clock in {r.clock for r in reads}:
        own = [r for r in reads if r.clock == clock][:400]  # beyond that: a number unexplained
        scale = 1e-9 if clock.endswith("_ns") else 1.0
        for j, late in enumerate(own):
            for early in own[:j]:
                span = (late.value - early.value) * scale
                found += _explained(seconds, span, [(early, late)], most_runs)
        for first in range(len(own) - 3):  # sums of gaps first→first+1, first+2→first+3, …
            span, pairs = 0.0, []
            for i in range(first, len(own) - 1, 2):
                pairs.append((own[i], own[i + 1]))
                span += (own[i + 1].value - own[i].value) * scale
                if len(pairs) > 1:
                    found += _explained(seconds, span, pairs, most_runs)
        gaps = list(zip(own, own[1:], strict=False))
        for i, one in enumerate(gaps):  # two gaps apart: the median of an even number of runs
            for other in gaps[i + 2 :]:
                span = sum((b.value - a.value) * scale for a, b in (one, other))
                found += _explained(seconds, span, [one, other], most_runs)
    return sorted(found, key=lambda s: (s.unit, s.count, len(s.parts), s.end - s.start))


def _explained(seconds: float, span: float, pairs, most_runs: int) -> list[Stretch]:
    found = []
    for unit in UNITS:
        count = round(span * unit / seconds) if span > 0 else 0
        if 1 <= count <= most_runs and _same(span * unit / count, seconds):
            parts = tuple((a.at, b.at) for a, b in pairs)
            work = sum(b.work - a.work for a, b in pairs)
            found.append(Stretch(parts, work, unit, count))
    return found


def _same(a: float, b: float) -> bool:
    """Equal up to float rounding: a number computed from these reads, not one near it."""
    return abs(a - b) <= 1e-9 * abs(b) + 1e-15
