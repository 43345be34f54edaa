"""A pretend host-to-device link on a virtual clock, for timing a copy's bandwidth on any machine:
what a timer measures depends only on what it does (sync or not, warm-up or not), never on how busy
the machine is.

    clock = CountingClock()
    link = CopyLink(clock, seconds=nbytes / 20e9 + 1e-5, cold=2e-3, launch=5e-6)
    copy, sync = link.handles()        # plain functions, to hand to a learner's timer
    with virtual_time(clock, timer):   # utils.sim.asyncsim
        timer(copy, sync)
    link.copies, link.syncs, clock.reads
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from utils.sim.asyncsim import VirtualClock


@dataclass
class CountingClock(VirtualClock):
    """A virtual clock that counts how often it was read."""

    reads: int = 0

    def read(self) -> float:
        self.reads += 1
        return self.now


@dataclass
class CopyLink:
    """A pretend host-to-device link: `copy()` queues one copy and returns after `launch`
    seconds (as a non_blocking copy to a GPU does); the copies run one after another, each
    taking `seconds` (latency + bytes / bandwidth), the first `cold` seconds more (allocation,
    pinning, driver start-up); `sync()` waits until all are done."""

    clock: CountingClock
    seconds: float
    cold: float
    launch: float
    copies: int = 0
    syncs: int = 0
    _done_at: float = field(default=0.0, repr=False)

    def copy(self) -> None:
        work = self.seconds + (self.cold if self.copies == 0 else 0.0)
        self._done_at = max(self._done_at, self.clock.now) + work
        self.copies += 1
        self.clock.advance(self.launch)

    def sync(self) -> None:
        self.syncs += 1
        self.clock.advance(self._done_at - self.clock.now)

    def handles(self) -> tuple[Callable[[], None], Callable[..., None]]:
        """`copy()` and `sync()` as plain functions: nothing of the link is an attribute of them
        (`sync` takes an argument and ignores it, as a timer may call `sync(result)`)."""

        def copy() -> None:
            self.copy()

        def sync(*_: Any) -> None:
            self.sync()

        return copy, sync
