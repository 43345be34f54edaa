"""A pretend device memory, for practising out-of-memory on a machine without a GPU.

    budget = MemoryBudget(15 * GIB, name="T4 (simulated)")
    with budget.hold(nbytes):   # raises torch.OutOfMemoryError, worded like CUDA's, when full
        ...

`utils.memory.usage.is_oom` recognises its error as it does CUDA's, so `find_batch_size` works
on it.  `capped_step(cap, tried, raised)` is a training step on a pretend GPU that holds `cap`
samples: for a batch-size finder to search.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from utils.i18n import text
from utils.units import format_bytes


@dataclass
class MemoryBudget:
    """A pretend device memory of `capacity` bytes, for practising out-of-memory on a CPU.

    `with budget.hold(nbytes): ...` raises torch.OutOfMemoryError, worded like CUDA's, when the
    bytes held would pass the capacity; leaving the block gives the bytes back.
    """

    capacity: int
    name: str = "simulated GPU"
    used: int = 0
    peak: int = 0

    @contextmanager
    def hold(self, nbytes: int) -> Iterator[None]:
        if self.used + nbytes > self.capacity:
            # Worded like CUDA's own message (English in every language), as is_oom expects.
            raise torch.OutOfMemoryError(
                text(
                    "CUDA out of memory (simulated). Tried to allocate {need}. {name} has a total "
                    "capacity of {capacity} of which {free} is free.",
                    need=format_bytes(nbytes),
                    name=self.name,
                    capacity=format_bytes(self.capacity),
                    free=format_bytes(self.capacity - self.used),
                )
            )
        self.used += nbytes
        self.peak = max(self.peak, self.used)
        try:
            yield
        finally:
            self.used -= nbytes


def capped_step(cap: int, tried: list[int], raised: list[BaseException]):
    """A training step `step(batch_size)` on a pretend GPU that holds `cap` samples: past that it
    raises torch.OutOfMemoryError.  It notes every size tried and every error it raised."""

    def step(batch_size):
        tried.append(batch_size)
        if batch_size > cap:
            error = torch.OutOfMemoryError(
                f"CUDA out of memory. Tried to allocate {batch_size * 2} MiB "
                f"(the check's pretend GPU holds {cap} samples)."
            )
            raised.append(error)
            raise error
        return 0.0

    return step
