"""Moving data between host and device, and what it costs: the link, a copy, timed.

    from utils.timing import transfers
    transfers.gpu_link(0)                       # PCIe Gen3 x16: 15.75 GB/s (nvidia-smi)
    transfers.transfer_seconds(256 * MIB, 12)   # seconds at 12 GB/s
    copy = transfers.measure_copy(nbytes, "cpu", "cuda", pinned=transfers.can_pin())
    copy.gbs                                    # GB/s of the median of warm, synchronised blocks

Nothing here asserts a speed: the measuring helpers return numbers for a lesson or a benchmark to
print side by side.  The link figures come from `utils.platform.chips`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from utils.i18n import text
from utils.platform.chips import PCIE_RATES, Link, chip_for


def gpu_link(index: int = 0) -> Link | None:
    """This GPU's host link: asked from nvidia-smi, else from the data sheet of its name."""
    from utils.platform import nvsmi

    if not torch.cuda.is_available():
        return None
    smi = nvsmi.query(fields=("index", "pcie.link.gen.max", "pcie.link.width.max"))
    for row in smi.rows if smi.ok else []:
        try:
            if int(row["index"]) == index:
                generation = int(row["pcie.link.gen.max"])
                lanes = int(row["pcie.link.width.max"])
                if generation in PCIE_RATES:
                    return Link(generation, lanes, "nvidia-smi")
        except ValueError:  # "[N/A]" in a virtual machine
            break
    chip = chip_for(torch.cuda.get_device_name(index))
    return chip.link if chip else None


def transfer_seconds(nbytes: float, gbs: float) -> float:
    """How long moving `nbytes` takes at `gbs` GB/s (10⁹ bytes per second)."""
    return nbytes / (gbs * 1e9)


def can_pin() -> bool:
    """Can this torch page-lock (pin) host memory? Only with an accelerator backend."""
    try:
        return torch.empty(1, pin_memory=True).is_pinned()
    except RuntimeError:
        return False


@dataclass
class Copy:
    """One measured copy: `nbytes` moved in `seconds` (median of warm, synchronised blocks)."""

    label: str
    nbytes: int
    seconds: float
    measurement: Any = field(repr=False, default=None)

    @property
    def gbs(self) -> float:
        return self.nbytes / self.seconds / 1e9


def measure_copy(
    nbytes: int,
    source: str | torch.device = "cpu",
    target: str | torch.device = "cpu",
    *,
    pinned: bool = False,
    non_blocking: bool = False,
    fresh: bool = False,
    min_time: float = 0.2,
    label: str = "",
    clock: Callable[[], float] | None = None,
) -> Copy:
    """Time copying `nbytes` from `source` to `target` with `utils.timing.bench.measure`.

    pinned        the host side lives in page-locked memory (needs an accelerator: `can_pin()`)
    non_blocking  `copy_(..., non_blocking=True)`: asynchronous from pinned memory
    fresh         allocate the destination for every copy, as `x.to(device)` does; otherwise copy
                  into one buffer allocated beforehand (what a data loader's pinned buffers do)
    clock         the clock `measure` reads (default `time.perf_counter`): a test passes a fake
    """
    from utils.timing.bench import measure

    source, target = torch.device(source), torch.device(target)
    if pinned and not can_pin():
        raise RuntimeError(
            text(
                "This torch cannot pin memory: pinning needs an accelerator (CUDA, ...). "
                "Check transfers.can_pin() first.",
                "Dieses torch kann keinen Speicher pinnen: Dafür braucht es einen Beschleuniger "
                "(CUDA, ...). Prüfe vorher transfers.can_pin().",
            )
        )
    count = max(1, nbytes // 4)
    pin_source = pinned and source.type == "cpu"
    pin_target = pinned and target.type == "cpu"
    src = torch.empty(count, device=source, pin_memory=pin_source)
    src.normal_()  # never measure on zeros (docs/facts.md §3)
    if fresh:

        def copy() -> torch.Tensor:
            out = torch.empty(count, device=target, pin_memory=pin_target)
            return out.copy_(src, non_blocking=non_blocking)
    else:
        out = torch.empty(count, device=target, pin_memory=pin_target)

        def copy() -> torch.Tensor:
            return out.copy_(src, non_blocking=non_blocking)

    accelerated = [d.type for d in (source, target) if d.type != "cpu"]
    backend = accelerated[0] if accelerated and accelerated[0] in ("cuda", "mps") else "cpu"
    sync = None
    if source.type == target.type == "cuda" and source.index != target.index:
        gpus = {d.index or 0 for d in (source, target)}  # GPU to GPU: wait for both

        def sync(result: Any) -> None:
            for index in gpus:
                torch.cuda.synchronize(index)

    name = label or f"{source}->{target}"
    m = measure(copy, backend=backend, sync=sync, min_time=min_time, name=name, clock=clock)
    return Copy(name, count * 4, m.median, m)
