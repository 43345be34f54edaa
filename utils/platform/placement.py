"""Choosing a device and placing tensors on it, and the mixed-device error explained.

    from utils.platform import placement
    device = placement.pick_device()        # cuda, mps, xpu ... or cpu: the best one here
    placement.list_devices()                # every device torch can use on this machine
    device = placement.try_gpu(1)           # cuda:1 if it exists, else a fallback, and why
    placement.where(model)                  # "cuda:0", or "cpu (2×) + cuda:0 (2×)"
    with placement.catch_mixed_devices(model=model, batch=batch):
        model(batch)                        # "model is on cuda:0, batch on cpu: ..."

Messages are in the learner's language (`utils.i18n`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from utils.i18n import text

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
    """The device(s) of a tensor, a module (its parameters and buffers) or a list/dict of
    tensors."""
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
                "Alles, was du genannt hast, liegt auf einem Gerät; der andere Tensor entsteht "
                "also im Code: leg ihn dort an, wo sein Partner liegt, z. B. torch.zeros(..., "
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
