"""A pretend accelerator that behaves like CUDA or JAX: calls only *queue* work.

It makes the asynchronous-timing trap visible (and testable) on a machine without a GPU:

    device = SimulatedAccelerator(seconds_per_call=0.002, compile_seconds=0.05)
    out = device.matmul()      # returns at once, like a CUDA kernel launch
    device.synchronize()       # waits until all queued work is done, like torch.cuda.synchronize()

The first call also "compiles" (like jax.jit or cuBLAS picking a kernel), so timing the first
call is wrong too.  Queued work runs "on the device" while the host goes on, and finishes in
order, as on a GPU.

On its own the device waits in real time (`time.sleep`, no CPU used).  A lab check gives it a
`VirtualClock` instead and runs the learner's timer inside `virtual_time(clock)`: there the clocks
a timer reads (`time.perf_counter`, `time.time`, `time.monotonic`, their `_ns` forms) and
`time.sleep` read and advance simulated time only, so a verdict depends on what the timer does
(sync or not, warm-up or not, divide by the count or not), never on how busy the machine is.
`NotedClock(clock, events)` is the same time, with every read and sleep noted in `events`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from utils.sim.clocks import REAL, REAL_SLEEP, swapped_clocks


@dataclass
class VirtualClock:
    """Simulated seconds: they pass only when something calls `advance`."""

    now: float = 1000.0  # not 0, so that a timer that forgets to subtract its start shows

    def advance(self, seconds: float) -> None:
        self.now += max(0.0, seconds)

    def read(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.advance(seconds)


class NotedClock(VirtualClock):
    """A view of `clock` that keeps the same time and notes every read ("read") and every sleep
    ("sleep") in `events`: what a timer did, in order, among the events of the code it timed."""

    def __init__(self, clock: VirtualClock, events: list[str]):
        self.clock, self.events = clock, events

    @property
    def now(self) -> float:  # type: ignore[override]
        return self.clock.now

    def read(self) -> float:
        self.events.append("read")
        return self.clock.read()

    def advance(self, seconds: float) -> None:
        self.events.append("sleep")
        self.clock.advance(seconds)


@contextlib.contextmanager
def virtual_time(clock: VirtualClock, *functions: Any) -> Iterator[VirtualClock]:
    """Make the `time` module's clocks and `sleep` use `clock` while the block runs.

    Pass the learner's functions: names in their globals that are the real clocks (a
    `from time import perf_counter`) are swapped too, and put back afterwards."""
    fakes: dict[str, Any] = {
        "perf_counter": clock.read,
        "time": clock.read,
        "monotonic": clock.read,
        "perf_counter_ns": lambda: int(clock.read() * 1e9),
        "time_ns": lambda: int(clock.read() * 1e9),
        "monotonic_ns": lambda: int(clock.read() * 1e9),
        "sleep": clock.sleep,
    }
    with swapped_clocks(fakes, *functions):
        yield clock


@dataclass
class SimulatedAccelerator:
    seconds_per_call: float = 0.002
    compile_seconds: float = 0.05
    launch_seconds: float = 0.00001  # what the host pays per call: microseconds
    clock: VirtualClock | None = None  # None: real time
    calls: int = field(default=0, repr=False)
    syncs: int = field(default=0, repr=False)
    _done_at: float = field(default=0.0, repr=False)  # when the queued work will have finished
    _compiled: bool = field(default=False, repr=False)

    def _now(self) -> float:
        return self.clock.read() if self.clock is not None else REAL["perf_counter"]()

    def _wait(self, seconds: float) -> None:
        if self.clock is not None:
            self.clock.advance(seconds)
        elif seconds > 0:
            REAL_SLEEP(seconds)

    def matmul(self, *args: Any) -> SimulatedAccelerator:
        """Queue one call and return immediately (the result is only a handle)."""
        self._wait(self.launch_seconds)
        work = self.seconds_per_call
        if not self._compiled:
            work += self.compile_seconds
            self._compiled = True
        self._done_at = max(self._done_at, self._now()) + work
        self.calls += 1
        return self

    def synchronize(self, result: Any = None) -> None:
        """Wait until everything queued has run."""
        self.syncs += 1
        self._wait(self._done_at - self._now())

    @property
    def pending_seconds(self) -> float:
        return max(0.0, self._done_at - self._now())
