"""What JAX did while some code ran: when a function was traced and when each compile ended, every
moment on the wall clock and on a clock of the work done, so that a timer's numbers can be traced
back to what happened between its clock reads.

    recorder = CompileRecorder(work_clock())
    def f(x):
        start = recorder.now(); ...; recorder.traces.append((start, recorder.now()))
    with recorder.recording():
        timer(f, x)
    recorder.compiles()   # (trace start, compile end) of each trace
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import jax

from utils.sim.clocks import REAL

WALL = REAL["perf_counter"]  # the real clock, whatever a learner's code swaps in


def work_clock() -> Callable[[], float]:
    """A clock of the work done, which load can't stretch: on the CPU the process's CPU time
    (other programs take turns with it, they add none), on an accelerator the wall clock (the
    device isn't shared; the host's load doesn't slow it)."""
    return time.process_time if jax.default_backend() == "cpu" else WALL


@dataclass(frozen=True)
class Moment:
    at: float  # the wall clock (perf_counter)
    work: float  # the work clock


class CompileRecorder:
    """What happened while `recording()`: the traces the watched function notes itself (a pair
    of moments each, appended to `traces`) and when JAX finished compiling (JAX's own
    monitoring event)."""

    def __init__(self, work: Callable[[], float]):
        self.work, self.active = work, False
        self.traces: list[tuple[Moment, Moment]] = []
        self.compiled: list[Moment] = []

    def now(self) -> Moment:
        return Moment(WALL(), self.work())

    def compiles(self) -> list[tuple[Moment, Moment]]:
        """(trace start, compile end) of each trace: the least that tracing and compiling took."""
        spans = []
        for start, traced in self.traces:
            done = [c for c in self.compiled if c.at >= start.at]
            spans.append((start, done[0] if done else traced))
        return spans

    @contextlib.contextmanager
    def recording(self) -> Iterator[CompileRecorder]:
        """JAX's compile events come to this recorder while the block runs."""
        _listen()
        _LISTENING["recorder"], self.active = self, True
        try:
            yield self
        finally:
            self.active = False


_LISTENING: dict[str, Any] = {"recorder": None, "registered": False}


def _on_event(event: str, duration: float, **kwargs: Any) -> None:
    recorder = _LISTENING["recorder"]
    if recorder is not None and recorder.active and event.endswith("backend_compile_duration"):
        recorder.compiled.append(recorder.now())


def _listen() -> None:
    """Register the listener once: JAX keeps every listener for the life of the process."""
    if not _LISTENING["registered"]:
        jax.monitoring.register_event_duration_secs_listener(_on_event)
        _LISTENING["registered"] = True
