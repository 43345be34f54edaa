"""Where tensors live, and what moving them costs: the helpers of lesson 02.

    from utils import devices
    device = devices.pick_device()          # cuda, mps, xpu ... or cpu: the best one here
    devices.list_devices()                  # every device torch can use on this machine
    device = devices.try_gpu(1)             # cuda:1 if it exists, else a fallback, and why
    with devices.catch_mixed_devices(model=model, batch=batch):
        model(batch)                        # "model is on cuda:0, batch on cpu: ..."
    devices.tensor_bytes((4096, 4096), torch.float16)
    devices.find_batch_size(step, limit=4096)   # doubles until out of memory, and recovers

Messages are in the learner's language (`utils.i18n`). Nothing here asserts a speed: the
measuring helpers return numbers for a lesson or a benchmark to print side by side.
"""

from __future__ import annotations

import gc
import math
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch

from .i18n import text

GIB = 2**30
MIB = 2**20

# --- choosing a device ---------------------------------------------------------------------------


def pick_device() -> torch.device:
    """The best device PyTorch can use here: any accelerator (CUDA, MPS, XPU, ...), else the CPU.

    `torch.accelerator` (PyTorch 2.6+) knows every accelerator backend; older versions are asked
    about CUDA and MPS directly. TPUs are not among them: PyTorch reaches those through torch_xla.
    """
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and accelerator.is_available():
        return accelerator.current_accelerator()
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def list_devices() -> list[torch.device]:
    """Every device torch can compute on here, the CPU first: cpu, cuda:0, cuda:1, ..."""
    found = [torch.device("cpu")]
    kind = pick_device().type
    if kind == "cpu":
        return found
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and accelerator.is_available():
        count = accelerator.device_count()
    elif kind == "cuda":
        count = torch.cuda.device_count()
    else:
        count = 1  # MPS: one GPU per Mac
    return found + [torch.device(kind, i) for i in range(count)]


def try_gpu(index: int = 0, quiet: bool = False) -> torch.device:
    """GPU number `index` if this machine has it, else the best device there is, and a note why.

    Code written for Kaggle's two T4s asks for `cuda:1`; on Colab's single T4 that fails with
    "invalid device ordinal". This asks first instead of failing.
    """
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise ValueError(
            text(
                "A GPU index is a whole number from 0 up, not {index!r}.",
                "Eine GPU-Nummer ist eine ganze Zahl ab 0, nicht {index!r}.",
                index=index,
            )
        )
    gpus = [d for d in list_devices() if d.type != "cpu" and d.index is not None]
    if index < len(gpus):
        return gpus[index]
    fallback = gpus[0] if gpus else torch.device("cpu")
    if not quiet:
        have = ", ".join(str(d) for d in gpus) or text("none", "keine")
        print(
            text(
                "There is no GPU number {index} here (GPUs: {have}); using {fallback} instead.",
                "Hier gibt es keine GPU Nummer {index} (GPUs: {have}); stattdessen wird "
                "{fallback} verwendet.",
                index=index,
                have=have,
                fallback=fallback,
            )
        )
    return fallback


# --- where things live, and the mixed-device error -----------------------------------------------


def where(thing: Any) -> str:
    """The device(s) of a tensor, a module (its parameters and buffers) or a list/dict of tensors."""
    if isinstance(thing, torch.Tensor):
        return str(thing.device)
    if isinstance(thing, torch.nn.Module):
        tensors = [*thing.parameters(), *thing.buffers()]
        if not tensors:
            return text("no parameters", "keine Parameter")
        return _describe([str(t.device) for t in tensors])
    if isinstance(thing, dict):
        thing = list(thing.values())
    if isinstance(thing, (list, tuple)):
        inner = [where(item) for item in thing if isinstance(item, (torch.Tensor, torch.nn.Module))]
        if inner:
            return _describe(inner)
    return text("not a tensor ({kind})", "kein Tensor ({kind})", kind=type(thing).__name__)


def _describe(places: list[str]) -> str:
    unique = sorted(set(places), key=places.index)
    if len(unique) == 1:
        return unique[0]
    counts = {p: places.count(p) for p in unique}
    return " + ".join(text("{place} ({count}×)", place=p, count=counts[p]) for p in unique)


# The messages PyTorch gives when one operation gets tensors on two devices (CUDA, MPS, meta,
# older versions, recurrent layers, indexing). All of them mean the same thing.
MIXED_DEVICE_PATTERNS = (
    r"expected all tensors to be on the same device",
    r"found at least two devices",
    r"is not on the expected device",
    r"not at the same device",
    r"must be on the same device",
    r"expected object of device type",
    r"input type .* and weight type .* should be the same",
    r"indices should be either on cpu or on the same device",
    r"placeholder storage has not been allocated on mps device",
)


def is_mixed_device_error(error: BaseException) -> bool:
    """Did PyTorch refuse because the inputs of one operation live on different devices?"""
    said = str(error).lower()
    return isinstance(error, RuntimeError) and any(
        re.search(p, said) for p in MIXED_DEVICE_PATTERNS
    )


def explain_mixed_devices(error: BaseException, **named: Any) -> str:
    """Which of the named tensors/modules lives where, and the line that fixes it."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    places = {name: where(thing) for name, thing in named.items()}
    width = max((len(name) for name in places), default=0)
    lines = [
        text(
            "PyTorch cannot compute with tensors on different devices:",
            "PyTorch kann nicht mit Tensoren auf verschiedenen Geräten rechnen:",
        ),
        f"    {first}",
    ]
    lines += [f"    {name.ljust(width)}  {place}" for name, place in places.items()]
    target = _target_device(named)
    movers = [
        name
        for name, thing in named.items()
        if isinstance(thing, (torch.Tensor, torch.nn.Module)) and places[name] != str(target)
    ]
    if target is None or not movers:
        lines.append(
            text(
                "Everything you named lives on one device, so the other tensor is made inside the "
                "code: create it where its partner lives, e.g. torch.zeros(..., device=x.device).",
                "Alles, was du genannt hast, liegt auf einem Gerät; der andere Tensor entsteht also "
                "im Code: leg ihn dort an, wo sein Partner liegt, z. B. torch.zeros(..., "
                "device=x.device).",
            )
        )
        return "\n".join(lines)
    fixes = []
    for name in movers:
        if isinstance(named[name], torch.nn.Module):
            fixes.append(f"{name}.to({_literal(target)})")
        else:
            fixes.append(f"{name} = {name}.to({_literal(target)})")
    lines.append(
        text(
            "Move everything to one device first, e.g. {target}:  {fixes}",
            "Bring zuerst alles auf ein Gerät, z. B. {target}:  {fixes}",
            target=target,
            fixes=";  ".join(fixes),
        )
    )
    lines.append(
        text(
            "(A tensor's .to() returns a copy: keep it. A model's .to() moves the model itself.)",
            "(.to() eines Tensors gibt eine Kopie zurück: behalte sie. .to() eines Modells "
            "verschiebt das Modell selbst.)",
        )
    )
    return "\n".join(lines)


def _literal(device: torch.device) -> str:
    return f'"{device}"'


def _target_device(named: dict[str, Any]) -> torch.device | None:
    """Where to move things: the accelerator (or meta) device among them, else the CPU."""
    places: list[torch.device] = []
    for thing in named.values():
        if isinstance(thing, torch.nn.Module):
            places += [t.device for t in (*thing.parameters(), *thing.buffers())]
        elif isinstance(thing, torch.Tensor):
            places.append(thing.device)
    elsewhere = [d for d in places if d.type != "cpu"]
    return (elsewhere or places or [None])[0]


@dataclass
class Caught:
    """What `catch_mixed_devices` caught: the error and its explanation (None if all went well)."""

    error: BaseException | None = None
    message: str | None = None

    def __bool__(self) -> bool:
        return self.error is not None


@contextmanager
def catch_mixed_devices(quiet: bool = False, **named: Any) -> Iterator[Caught]:
    """Run a block; if it mixes devices, explain which named thing lives where, and go on.

    Only the mixed-device error is caught: any other error still stops the cell.
    """
    caught = Caught()
    try:
        yield caught
    except RuntimeError as error:
        if not is_mixed_device_error(error):
            raise
        caught.error = error
        caught.message = explain_mixed_devices(error, **named)
        if not quiet:
            print(caught.message)


# --- host <-> device transfers ------------------------------------------------------------------

# PCI Express per lane and direction: transfer rate (GT/s) × line-code efficiency / 8 bits.
# Source: PCI-SIG base specifications 1.0-6.0 (Gen 6 counts its FLIT efficiency 242/256);
# checked 2026-11.
PCIE_RATES = {
    1: (2.5, 8 / 10),
    2: (5.0, 8 / 10),
    3: (8.0, 128 / 130),
    4: (16.0, 128 / 130),
    5: (32.0, 128 / 130),
    6: (64.0, 242 / 256),
}
# The host link of common GPUs (generation, lanes). Source: NVIDIA data sheets, checked 2026-11.
GPU_LINKS = {
    "T4": (3, 16),
    "P100": (3, 16),
    "L4": (4, 16),
    "A100": (4, 16),
    "H100": (5, 16),
    "H200": (5, 16),
}
# What pinned host->device copies reach in practice: a rule of thumb collected for this course
# from published bandwidth tests (2026-11); pageable memory is clearly slower.
PCIE_PINNED_TYPICAL = {3: (12.0, 12.0), 4: (25.0, 25.0), 5: (35.0, 53.0)}
LINK_SOURCE = (
    "PCI-SIG specifications; NVIDIA data sheets (checked 2026-11)",
    "PCI-SIG-Spezifikationen; NVIDIA-Datenblätter (Stand 2026-11)",
)


def pcie_gbs(generation: int, lanes: int = 16) -> float:
    """Theoretical PCIe bandwidth, GB/s in one direction (Gen 3 x16: 15.75 GB/s)."""
    if generation not in PCIE_RATES:
        raise ValueError(
            text(
                "PCIe generation {generation!r} is unknown: use one of {known}.",
                "PCIe-Generation {generation!r} ist unbekannt: Nimm eine aus {known}.",
                generation=generation,
                known=sorted(PCIE_RATES),
            )
        )
    rate, efficiency = PCIE_RATES[generation]
    return rate * efficiency / 8 * lanes


@dataclass(frozen=True)
class Link:
    """The link between host memory and a GPU."""

    generation: int
    lanes: int
    source: str  # "nvidia-smi" or the data sheet

    @property
    def gbs(self) -> float:
        return pcie_gbs(self.generation, self.lanes)

    @property
    def typical_pinned_gbs(self) -> tuple[float, float] | None:
        return PCIE_PINNED_TYPICAL.get(self.generation)

    def __str__(self) -> str:
        return text(
            "PCIe Gen{generation} x{lanes}: {gbs:.2f} GB/s ({source})",
            generation=self.generation,
            lanes=self.lanes,
            gbs=self.gbs,
            source=self.source,
        )


def link_for_name(gpu_name: str) -> Link | None:
    """The data-sheet link of a GPU by its name ("Tesla T4" -> PCIe Gen3 x16), or None."""
    for chip, (generation, lanes) in GPU_LINKS.items():
        if re.search(rf"\b{chip}\b", gpu_name):
            return Link(
                generation, lanes, text("data sheet {chip}", "Datenblatt {chip}", chip=chip)
            )
    return None


def gpu_link(index: int = 0) -> Link | None:
    """This GPU's host link: asked from nvidia-smi, else from the data sheet of its name."""
    from . import nvsmi

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
    return link_for_name(torch.cuda.get_device_name(index))


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
) -> Copy:
    """Time copying `nbytes` from `source` to `target` with `utils.bench.measure`.

    pinned        the host side lives in page-locked memory (needs an accelerator: `can_pin()`)
    non_blocking  `copy_(..., non_blocking=True)`: asynchronous from pinned memory
    fresh         allocate the destination for every copy, as `x.to(device)` does; otherwise copy
                  into one buffer allocated beforehand (what a data loader's pinned buffers do)
    """
    from .bench import measure

    source, target = torch.device(source), torch.device(target)
    if pinned and not can_pin():
        raise RuntimeError(
            text(
                "This torch cannot pin memory: pinning needs an accelerator (CUDA, ...). "
                "Check devices.can_pin() first.",
                "Dieses torch kann keinen Speicher pinnen: Dafür braucht es einen Beschleuniger "
                "(CUDA, ...). Prüfe vorher devices.can_pin().",
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
    m = measure(copy, backend=backend, sync=sync, min_time=min_time, name=name)
    return Copy(name, count * 4, m.median, m)


# --- memory: sizes, counters, out of memory ------------------------------------------------------


def tensor_bytes(shape: tuple[int, ...] | torch.Size, dtype: torch.dtype) -> int:
    """Bytes a tensor of this shape and dtype holds: elements × bytes per element."""
    return math.prod(shape) * dtype.itemsize


def module_bytes(module: torch.nn.Module) -> int:
    """Bytes of a model's parameters and buffers (also for a model built on the meta device)."""
    return sum(t.numel() * t.element_size() for t in (*module.parameters(), *module.buffers()))


def format_bytes(nbytes: float) -> str:
    """1536 -> '1.50 KiB': powers of 1024, as PyTorch and nvidia-smi count."""
    for unit, scale in (("PiB", 2**50), ("TiB", 2**40), ("GiB", GIB), ("MiB", MIB), ("KiB", 2**10)):
        if abs(nbytes) >= scale:
            return text("{v:.2f} {unit}", v=nbytes / scale, unit=unit)
    return text("{v:.0f} B", v=nbytes)


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
                "Es braucht ganze Zahlen 1 ≤ start ≤ limit, nicht start={start!r}, limit={limit!r}.",
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
