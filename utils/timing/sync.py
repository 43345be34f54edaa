"""Waiting for a backend: accelerators run asynchronously, so a timer must wait for the work.

    from utils.timing.sync import backend_of, synchronizer
    wait = synchronizer(backend_of(result))   # "cuda" -> torch.cuda.synchronize, "jax" -> ...
    wait(result)                              # returns when the work behind `result` is done

Without a sync the clock stops when the work was *queued*, not when it was *done*
(docs/facts.md §3).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

BACKENDS = ("cpu", "cuda", "mps", "jax", "xla")


def backend_of(value: Any) -> str:
    """Where a result lives: "jax", "cuda", "mps", "xla" or "cpu" (numpy, Python numbers)."""
    items = value if isinstance(value, (tuple, list)) else (value,)
    for item in items:
        module = type(item).__module__
        if module.startswith(("jax", "jaxlib")):
            return "jax"
        device = getattr(item, "device", None)
        kind = getattr(device, "type", None)
        if module.startswith("torch") and kind in ("cuda", "mps", "xla"):
            return kind
    return "cpu"


def synchronizer(backend: str) -> Callable[[Any], None]:
    """A function that waits until the work producing `result` has finished."""
    if backend == "cuda":
        import torch

        return lambda result: torch.cuda.synchronize()
    if backend == "mps":
        import torch

        return lambda result: torch.mps.synchronize()
    if backend == "jax":
        import jax

        return lambda result: jax.block_until_ready(result)
    if backend == "xla":
        import torch_xla

        return lambda result: torch_xla.sync(wait=True)
    return lambda result: None  # numpy and torch on the CPU return when the work is done
