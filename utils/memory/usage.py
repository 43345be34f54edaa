"""Memory: what tensors and models take, what a device holds, and out-of-memory handled.

    from utils.memory import usage
    usage.tensor_bytes((4096, 4096), torch.float16)   # 32 MiB, computed, nothing allocated
    usage.memory_stats("cuda")                        # allocated, reserved, free, total
    usage.find_batch_size(step, limit=4096)           # doubles until out of memory, and recovers

Messages are in the learner's language (`utils.i18n`).  To practise out-of-memory on a CPU, a
pretend device memory is in `utils.sim.memsim`.
"""

from __future__ import annotations

import gc
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from utils.i18n import text
from utils.platform.placement import pick_device
from utils.units import format_bytes


def tensor_bytes(shape: tuple[int, ...] | torch.Size, dtype: torch.dtype) -> int:
    """Bytes a tensor of this shape and dtype holds: elements × bytes per element."""
    return math.prod(shape) * dtype.itemsize


def module_bytes(module: torch.nn.Module) -> int:
    """Bytes of a model's parameters and buffers (also for a model built on the meta device)."""
    return sum(t.numel() * t.element_size() for t in (*module.parameters(), *module.buffers()))


@dataclass(frozen=True)
class MemoryStats:
    """PyTorch's memory counters for one device, in bytes (None where the device has none)."""

    device: str
    allocated: int | None  # held by live tensors
    reserved: int | None  # held by PyTorch's caching allocator (≥ allocated)
    free: int | None  # free on the device, as the driver sees it
    total: int | None

    def __str__(self) -> str:
        if self.allocated is None:
            return text(
                "{device}: PyTorch keeps no memory counters for this device",
                "{device}: PyTorch führt für dieses Gerät keine Speicherzähler",
                device=self.device,
            )
        line = text(
            "{device}: allocated {allocated}, reserved {reserved}",
            "{device}: belegt {allocated}, reserviert {reserved}",
            device=self.device,
            allocated=format_bytes(self.allocated),
            reserved=format_bytes(self.reserved),
        )
        if self.free is not None and self.total is not None:
            line += text(
                ", free {free} of {total}",
                ", frei {free} von {total}",
                free=format_bytes(self.free),
                total=format_bytes(self.total),
            )
        return line


def memory_stats(device: str | torch.device | None = None) -> MemoryStats:
    """The counters of `device` (default: `pick_device()`); all None on the CPU."""
    device = torch.device(device) if device is not None else pick_device()
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        free, total = torch.cuda.mem_get_info(index)
        return MemoryStats(
            f"cuda:{index}",
            torch.cuda.memory_allocated(index),
            torch.cuda.memory_reserved(index),
            free,
            total,
        )
    if device.type == "mps":
        return MemoryStats(
            "mps",
            torch.mps.current_allocated_memory(),
            torch.mps.driver_allocated_memory(),
            None,
            None,
        )
    return MemoryStats(str(device), None, None, None, None)


def process_rss() -> int | None:
    """Bytes of RAM this process holds right now (Linux; None elsewhere)."""
    try:
        with open(f"/proc/{os.getpid()}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


# Out-of-memory errors: torch.OutOfMemoryError (CUDA, torch ≥ 2.5 also MPS), older torch's
# RuntimeError "CUDA out of memory", MPS's "MPS backend out of memory", the CPU allocator's
# "can't allocate memory", XLA's RESOURCE_EXHAUSTED.
OOM_PATTERNS = (
    r"out of memory",
    r"can't allocate memory",
    r"resource_exhausted",
)


def is_oom(error: BaseException) -> bool:
    """Is this an out-of-memory error (on any device), and not some other bug?"""
    if isinstance(error, (torch.OutOfMemoryError, MemoryError)):
        return True
    said = str(error).lower()
    return isinstance(error, RuntimeError) and any(re.search(p, said) for p in OOM_PATTERNS)


def free_memory() -> None:
    """Give cached memory back after an out-of-memory error: collect garbage, empty the caches."""
    gc.collect()
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()
    mps = getattr(torch, "mps", None)
    if (
        mps is not None
        and getattr(torch.backends, "mps", None)
        and torch.backends.mps.is_available()
    ):
        mps.empty_cache()


@dataclass
class BatchSearch:
    """What `find_batch_size` found: the largest batch size that ran, and every try."""

    batch_size: int
    tries: list[tuple[int, bool]]  # (batch size, ran without running out of memory)

    def table(self) -> str:
        ok, oom = text("fits", "passt"), text("out of memory", "Speicher voll (OOM)")
        return "\n".join(
            text("  {size:>8}  {verdict}", size=size, verdict=ok if fits else oom)
            for size, fits in self.tries
        )


def find_batch_size(
    step: Callable[[int], Any],
    *,
    start: int = 1,
    limit: int = 2**16,
    refine: bool = False,
) -> BatchSearch:
    """The largest batch size for which `step(batch_size)` runs without running out of memory.

    Doubles from `start` until `step` runs out of memory or `limit` is reached; with `refine`,
    then bisects between the last size that fit and the first that did not. Only out-of-memory
    errors are caught (`is_oom`): any other error is a bug and stops the search. After each
    out-of-memory error the caches are emptied, so the next try starts clean. Returns batch
    size 0 if even `start` does not fit.
    """
    if not (isinstance(start, int) and isinstance(limit, int) and 1 <= start <= limit):
        raise ValueError(
            text(
                "Need whole numbers 1 ≤ start ≤ limit, got start={start!r}, limit={limit!r}.",
                "Es braucht ganze Zahlen 1 ≤ start ≤ limit, nicht start={start!r}, "
                "limit={limit!r}.",
                start=start,
                limit=limit,
            )
        )
    tries: list[tuple[int, bool]] = []

    def fits(size: int) -> bool:
        try:
            step(size)
            ok = True
        except Exception as error:
            if not is_oom(error):
                raise  # a bug, not a size problem: trying other sizes would hide it
            ok = False
        # Outside the except block: the error (and the tensors its traceback holds) is gone.
        if not ok:
            free_memory()
        tries.append((size, ok))
        return ok

    good, bad, size = 0, None, start
    while size <= limit:
        if not fits(size):
            bad = size
            break
        good, size = size, size * 2
    if refine and good and bad is not None:
        while bad - good > 1:
            middle = (good + bad) // 2
            if fits(middle):
                good = middle
            else:
                bad = middle
    return BatchSearch(good, tries)
