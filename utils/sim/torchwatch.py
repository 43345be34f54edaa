"""Watching what code asks torch to do: the devices it names, where it sends a tensor, and the
devices of each operation's inputs, so that a mixed-device error is told apart by what the code
did, not by the words of an error message.

    watch = TorchWatch(batch)
    with watch:
        out = forward_on(model, batch, device)
    watch.literal_cuda, watch.moved, watch.failing(), watch.forwards()

`without_watch(error)` takes the watcher's own frames out of an error's traceback, so that its
explanation shows the watched code's line.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import torch
from torch.overrides import TorchFunctionMode


def on_device(device: torch.device, target: torch.device) -> bool:
    """Is `device` the `target` (of the same type, and the same index if the target has one)?"""
    return device.type == target.type and (target.index is None or device.index == target.index)


# The operations that bring a tensor's numbers to the host.
COPY_OUT = {"cpu", "to", "item", "numpy", "tolist", "__float__", "__int__", "__array__"}


@dataclass
class TorchOp:
    name: str
    devices: list[torch.device]  # of its tensor arguments (0-dim CPU scalars left out)
    done: bool = False


def as_device(value: Any) -> torch.device | None:
    """`value` as a device if it names one (a device or a string such as "cuda:0"), else None."""
    if isinstance(value, torch.device):
        return value
    if isinstance(value, str):
        with contextlib.suppress(RuntimeError):
            return torch.device(value)
    return None


class TorchWatch(TorchFunctionMode):
    """Records the torch calls made inside `with watch:`: the devices the code names (and whether
    as a literal string such as "cuda"), where it sends the `watched` tensor, and the devices of
    each operation's tensors, so that a failing operation can be told by its inputs."""

    def __init__(self, watched: torch.Tensor):
        super().__init__()
        self.watched = watched
        self.literal_cuda = False  # the code wrote "cuda" (or .cuda()) itself
        self.moved: list[torch.device] = []  # where the watched tensor was sent
        self.ops: list[TorchOp] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        named = []
        if name == "cuda":
            self.literal_cuda = True
            named.append(torch.device("cuda"))
        elif name == "cpu":
            named.append(torch.device("cpu"))
        candidates = [kwargs.get("device")] + (list(args[1:]) if name == "to" else [])
        for value in candidates:
            if isinstance(value, torch.Tensor) and name == "to":
                named.append(value.device)
            elif (device := as_device(value)) is not None:
                named.append(device)
        for value in [*args, *kwargs.values()]:  # model.to("cuda") passes it to _parse_to
            if isinstance(value, str) and (device := as_device(value)) is not None:
                self.literal_cuda |= device.type == "cuda"
        if args and args[0] is self.watched and name in ("to", "cuda", "cpu"):
            self.moved += [d for d in named if not on_device(self.watched.device, d)]
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        kept = [t.device for t in tensors if not (t.dim() == 0 and t.device.type == "cpu")]
        op = TorchOp(name, kept)
        self.ops.append(op)
        result = func(*args, **kwargs)
        op.done = True
        return result

    def failing(self) -> TorchOp | None:
        """The operation that raised (the last one that did not finish)."""
        return next((op for op in reversed(self.ops) if not op.done), None)

    def forwards(self) -> list[TorchOp]:
        """The finished matmuls of a model's layers (F.linear): where the model computed."""
        return [op for op in self.ops if op.name == "linear" and op.done]


def without_watch(error: BaseException) -> BaseException:
    """`error` with the frames of `TorchWatch` taken out of its traceback (a traceback's links
    can be rewritten), so that an explanation of it points at the watched code."""
    code = TorchWatch.__torch_function__.__code__
    head = error.__traceback__
    while head is not None and head.tb_frame.f_code is code:
        head = head.tb_next
    link = head
    while link is not None and link.tb_next is not None:
        if link.tb_next.tb_frame.f_code is code:
            link.tb_next = link.tb_next.tb_next
        else:
            link = link.tb_next
    error.__traceback__ = head
    return error
