"""A pretend accelerator that behaves like CUDA or JAX: calls only *queue* work.

It makes the asynchronous-timing trap visible (and testable) on a machine without a GPU:

    device = SimulatedAccelerator(seconds_per_call=0.002, compile_seconds=0.05)
    out = device.matmul()      # returns at once, like a CUDA kernel launch
    device.synchronize()       # waits until all queued work is done, like torch.cuda.synchronize()

The first call also "compiles" (like jax.jit or cuBLAS picking a kernel), so timing the first
call is wrong too.  The work is simulated with sleep, so it costs no CPU.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class SimulatedAccelerator:
    seconds_per_call: float = 0.002
    compile_seconds: float = 0.05
    launch_seconds: float = 0.00001  # what the host pays per call: microseconds
    _queued: float = field(default=0.0, repr=False)
    _compiled: bool = field(default=False, repr=False)
    calls: int = field(default=0, repr=False)

    def matmul(self, *args) -> SimulatedAccelerator:
        """Queue one call and return immediately (the result is only a handle)."""
        time.sleep(self.launch_seconds)
        if not self._compiled:
            self._queued += self.compile_seconds
            self._compiled = True
        self._queued += self.seconds_per_call
        self.calls += 1
        return self

    def synchronize(self, result=None) -> None:
        """Wait until everything queued has run."""
        time.sleep(self._queued)
        self._queued = 0.0

    @property
    def pending_seconds(self) -> float:
        return self._queued
