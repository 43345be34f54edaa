"""JAX the same way everywhere: on Colab's jax 0.7.2 and the newest release, on a laptop's CPU,
a one-device Colab TPU and Kaggle's eight-device TPU.

    from utils import jaxcompat
    jaxcompat.simulate_cpu_devices(8)     # first, before JAX computes anything
    devices = jaxcompat.mesh_devices(8)   # the TPU's eight devices, else eight simulated CPUs
    jaxcompat.show_layout(x)              # which device holds which block of `x`
    jaxcompat.collectives(compiled)       # the communication in compiled code: {"all-reduce": 1}

Why these exist:
- JAX reads the number of CPU devices once, when it starts its backends (at its first array,
  `jax.devices()` call or computation). Importing jax does not start them, so the course's setup
  cell, which never imports jax, leaves the choice to the lesson. After the start the number is
  fixed for the life of the kernel; `simulate_cpu_devices` then says so and how to restart.
- `jax.debug.visualize_array_sharding` draws with `rich`, which not every runtime has; `layout`
  draws the same picture in plain text.
- Device names changed between versions (`TFRT_CPU_0` in 0.7, `cpu:0` in 0.10): this module
  reads `platform` and `id`, never the printed name.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from typing import Any

from .i18n import text

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")
# An HLO instruction `... = f32[8,16] all-reduce(...)`, or the `-start` half of an async pair.
_COLLECTIVE_OP = re.compile(r"\b(" + "|".join(COLLECTIVES) + r")(?:-start)?\(")

RESTART: tuple[str, str] = (
    "Restart the kernel (Jupyter: Kernel → Restart Kernel; Colab: Runtime → Restart session; "
    "Kaggle: Run → Restart & clear cell outputs), then run the notebook from the top: the setup "
    "cell, then this cell, before anything else uses JAX.",
    "Starte den Kernel neu (Jupyter: Kernel → Restart Kernel; Colab: Laufzeit → Sitzung neu "
    "starten; Kaggle: Run → Restart & clear cell outputs) und führe das Notebook von oben aus: "
    "die Setup-Zelle, dann diese Zelle, bevor irgendetwas anderes JAX benutzt.",
)


def simulate_cpu_devices(count: int = 8) -> int:
    """Ask JAX for `count` CPU devices; return how many CPU devices it has.

    Works only before JAX's backends start: call it right after `import jax`. Calling it again
    is harmless. If JAX already started with another number, nothing changes and a message says
    how to restart. On a GPU or TPU machine the accelerator stays JAX's default; the simulated
    devices are the CPU backend's, `jax.devices("cpu")`."""
    if not (isinstance(count, int) and count >= 1):
        raise ValueError(
            text(
                "count must be a whole number ≥ 1, not {count!r}",
                "count muss eine ganze Zahl ≥ 1 sein, nicht {count!r}",
                count=count,
            )
        )
    import jax

    # The option exists since jax 0.5 (before: XLA_FLAGS=--xla_force_host_platform_device_count=8
    # in the environment before `import jax`). It raises if the backends started with another
    # number; then nothing changes.
    with contextlib.suppress(RuntimeError):
        jax.config.update("jax_num_cpu_devices", count)
    have = len(jax.devices("cpu"))
    if have < count:
        print(
            text(
                "JAX started with {have} CPU device(s) before this cell could ask for {count}: "
                "something in this kernel computed with JAX first. The number is fixed until the "
                "kernel restarts.\n",
                "JAX ist mit {have} CPU-Gerät(en) gestartet, bevor diese Zelle {count} verlangen "
                "konnte: Etwas in diesem Kernel hat zuerst mit JAX gerechnet. Die Zahl bleibt fest, "
                "bis der Kernel neu startet.\n",
                have=have,
                count=count,
            )
            + text(*RESTART)
        )
    return have


def mesh_devices(count: int = 8) -> list[Any]:
    """`count` devices to build a mesh from: the default backend's own if it has that many
    (Kaggle's TPU v5e-8), else the simulated CPU devices (a laptop, CI, Colab's TPU v5e-1)."""
    import jax

    own = jax.devices()
    if len(own) >= count:
        return list(own[:count])
    cpus = jax.devices("cpu")
    if len(cpus) >= count:
        return list(cpus[:count])
    raise RuntimeError(
        text(
            "This lesson needs {count} JAX devices, but this kernel has {own} {platform} and "
            "{cpus} CPU device(s). ",
            "Diese Lektion braucht {count} JAX-Geräte, dieser Kernel hat aber {own} {platform}- "
            "und {cpus} CPU-Gerät(e). ",
            count=count,
            own=len(own),
            platform=own[0].platform.upper(),
            cpus=len(cpus),
        )
        + text(*RESTART)
    )


def device_label(device: Any) -> str:
    """ "CPU 3", "TPU 0": from the device's attributes, the same in every JAX version."""
    return f"{device.platform.upper()} {device.id}"


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
