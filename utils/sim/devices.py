"""A machine that torch believes it is: code that picks a device is tried, on this one machine, as
it would run on an NVIDIA GPU, on a Mac or on a CPU alone.

    with pretend_accelerator("mps"):
        pick_device()   # torch.cuda.is_available() is False, torch.backends.mps's is True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch


@contextlib.contextmanager
def pretend_accelerator(kind: str) -> Iterator[None]:
    """Let torch believe this machine has `kind` ("cuda", "mps" or "cpu": none) for the block:
    `torch.cuda`, `torch.backends.mps` and `torch.accelerator` (where there is one) say so."""
    found = kind != "cpu"
    patches = [
        (torch.cuda, "is_available", lambda: kind == "cuda"),
        (torch.cuda, "device_count", lambda: int(kind == "cuda")),
    ]
    if getattr(torch.backends, "mps", None):
        patches.append((torch.backends.mps, "is_available", lambda: kind == "mps"))
    if hasattr(torch, "accelerator"):
        patches += [
            (torch.accelerator, "is_available", lambda: found),
            (torch.accelerator, "device_count", lambda: int(found)),
            (
                torch.accelerator,
                "current_accelerator",
                lambda *args, **kwargs: torch.device(kind) if found else None,
            ),
        ]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    try:
        for owner, name, fake in patches:
            setattr(owner, name, fake)
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
