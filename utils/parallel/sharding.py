"""Sharded JAX arrays made visible (lesson 08): which device holds which block, and which
collectives a compiled program contains.

    from utils.parallel import sharding
    sharding.show_layout(x)              # which device holds which block of `x`
    sharding.collectives(compiled)       # the communication in compiled code: {"all-reduce": 1}

`jax.debug.visualize_array_sharding` draws with `rich`, which not every runtime has; `layout`
draws the same picture in plain text. Devices are named by `platform` and `id`, never by the
printed name (`TFRT_CPU_0` in jax 0.7, `cpu:0` in 0.10).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from utils.i18n import text

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")
# An HLO instruction `... = f32[8,16] all-reduce(...)`, or the `-start` half of an async pair.
_COLLECTIVE_OP = re.compile(r"\b(" + "|".join(COLLECTIVES) + r")(?:-start)?\(")


# --- the layout picture --------------------------------------------------------------------


def _span(index: Any, size: int) -> tuple[int, int]:
    start, stop, _ = index.indices(size)
    return start, stop


def layout(x: Any) -> str:
    """A text picture of a 1-D or 2-D array: one box per block, naming the devices that hold it.

    A block held by several devices (replicated over a mesh axis) lists them all."""
    shape = tuple(x.shape)
    if len(shape) not in (1, 2):
        raise ValueError(
            text(
                "layout draws 1-D and 2-D arrays; this one has shape {shape}. Reshape it first.",
                "layout zeichnet 1-D- und 2-D-Arrays; dieses hat die Form {shape}. Forme es "
                "vorher um.",
                shape=shape,
            )
        )
    blocks: dict[tuple[tuple[int, int], tuple[int, int]], list[Any]] = {}
    for device, index in x.sharding.devices_indices_map(shape).items():
        spans = [_span(i, n) for i, n in zip(index, shape, strict=True)]
        block = (spans[0], spans[1]) if len(shape) == 2 else ((0, 1), spans[0])
        blocks.setdefault(block, []).append(device)
    row_spans = sorted({rows for rows, _ in blocks})
    col_spans = sorted({cols for _, cols in blocks})

    def holders(devices: list[Any]) -> str:
        ids = ",".join(str(d.id) for d in sorted(devices, key=lambda d: d.id))
        return f"{devices[0].platform.upper()} {ids}"

    cells = [[holders(blocks[r, c]) for c in col_spans] for r in row_spans]
    col_heads = [f"{a}:{b}" for a, b in col_spans]
    row_heads = [f"{a}:{b}" for a, b in row_spans] if len(shape) == 2 else [""]
    width = max(len(t) for t in [*col_heads, *(c for row in cells for c in row)]) + 2
    margin = max(len(t) for t in row_heads) + 1
    rule = " " * margin + "+" + "+".join("-" * width for _ in col_spans) + "+"
    block = x.sharding.shard_shape(shape)
    lines = [
        text(
            "shape {shape}, one block {block}:",
            "Form {shape}, ein Block {block}:",
            shape=shape,
            block=block,
        ),
        " " * margin + " " + " ".join(head.center(width) for head in col_heads),
        rule,
    ]
    for head, row in zip(row_heads, cells, strict=True):
        lines.append(head.rjust(margin - 1) + " |" + "|".join(c.center(width) for c in row) + "|")
        lines.append(rule)
    return "\n".join(lines)


def show_layout(x: Any) -> None:
    """JAX's own coloured picture where `rich` is installed, else the text picture."""
    try:
        import rich  # noqa: F401  -- jax.debug.visualize_array_sharding draws with it
    except ImportError:
        print(layout(x))
        return
    import jax

    jax.debug.visualize_array_sharding(x)


# --- communication in compiled code ----------------------------------------------------------


def collectives(compiled: Any) -> dict[str, int]:
    """How often each collective (all-reduce, all-gather, ...) appears in compiled code.

    `compiled` is what `jax.jit(f).lower(*args).compile()` returns, or its `.as_text()`."""
    hlo = compiled if isinstance(compiled, str) else compiled.as_text()
    return dict(Counter(m[1] for m in _COLLECTIVE_OP.finditer(hlo)))
