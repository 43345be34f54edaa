"""Concept pictures for the lessons, drawn from the course's tables and from measurements.

    from utils import diagrams
    diagrams.chip_diagram("T4", "TPU v5e")          # lesson 00: a GPU and a TPU side by side
    diagrams.label_points(ax, [(x, y, "addition"), ...])   # lesson 01: names beside the points
    diagrams.timeline([("trace", 0.004), ("compile", 0.05), ("run", 0.001)], ...)  # lesson 04

Every size and bandwidth a picture shows comes from a table with its source (`utils.platform.
chips` for peaks, memory and host links; `ARCHITECTURE` below for what sits inside a chip) or
from the caller's measurement; labels come from `text()`, so a German notebook gets German
pictures.  matplotlib is imported only when a picture is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .i18n import text
from .platform.chips import CHIPS
from .units import KIB, MIB, format_seconds


@dataclass(frozen=True)
class GpuInside:
    """What sits inside one NVIDIA GPU: its SMs and the on-chip memory levels."""

    sms: int
    tensor_cores_per_sm: int
    registers_per_sm: int  # bytes (64 Ki 32-bit registers = 256 KiB on all of these)
    l1_per_sm: int  # bytes of L1 cache and shared memory together, per SM
    l2: int  # bytes, shared by all SMs
    memory: str  # GDDR6, HBM2e ...
    source: str


@dataclass(frozen=True)
class TpuInside:
    """What sits inside one TPU chip: its TensorCores, matrix units and chip-to-chip links."""

    tensor_cores: int
    mxus_per_core: int
    mxu_size: int  # an MXU is a mxu_size × mxu_size systolic array of multiply-adders
    ici_gbits: float  # inter-chip interconnect, Gbit/s per chip
    neighbours: int  # ICI links per chip (2D torus: 4)
    memory: str
    source: str


_TURING = "NVIDIA T4 Datasheet; NVIDIA Turing GPU Architecture (2018)"
_AMPERE = "NVIDIA A100 Tensor Core GPU Architecture (2020)"
_HOPPER = "NVIDIA H100 Tensor Core GPU Architecture (2022), SXM5"
ARCHITECTURE: dict[str, GpuInside | TpuInside] = {
    "T4": GpuInside(40, 8, 256 * KIB, 96 * KIB, 4 * MIB, "GDDR6", _TURING),
    "A100": GpuInside(108, 4, 256 * KIB, 192 * KIB, 40 * MIB, "HBM2", _AMPERE),
    "H100": GpuInside(132, 4, 256 * KIB, 256 * KIB, 50 * MIB, "HBM3", _HOPPER),
    "H200": GpuInside(
        132, 4, 256 * KIB, 256 * KIB, 50 * MIB, "HBM3e", _HOPPER + "; NVIDIA H200 Datasheet"
    ),
    "TPU v5e": TpuInside(
        1, 4, 128, 1600, 4, "HBM2e", "Google Cloud TPU, TPU v5e, cloud.google.com/tpu/docs/v5e"
    ),
}


def _plt() -> Any:
    import matplotlib.pyplot as plt

    return plt


def _box(ax, x, y, w, h, color, label="", size=11, **style) -> None:
    from matplotlib.patches import Rectangle

    ax.add_patch(
        Rectangle((x, y), w, h, facecolor=color, edgecolor=style.pop("edge", "black"), lw=0.8)
    )
    if label:
        ax.text(x + w / 2, y + h / 2, label, ha="center", va="center", fontsize=size, **style)


def _size(nbytes: int) -> str:
    return (
        text("{v:,.0f} MiB", v=nbytes / MIB)
        if nbytes >= MIB
        else text("{v:,.0f} KiB", v=nbytes / KIB)
    )


def _gbs(value: float) -> str:
    return text("{v:,.0f} GB/s", v=value) if value >= 100 else text("{v:.1f} GB/s", v=value)


def chip_diagram(gpu: str = "T4", tpu: str = "TPU v5e") -> Any:
    """A GPU and a TPU side by side: where the arithmetic sits and the memory beside it.

    GPU: every SM drawn with its tensor cores inside, then registers, L1/shared memory, L2, the
    GPU's memory and the host link, each with its size (and bandwidth where a data sheet gives
    one).  TPU: its TensorCore(s) with their matrix units (MXUs), HBM, and the inter-chip links
    (ICI) to its neighbours.  Returns the figure."""
    plt = _plt()
    g, t = ARCHITECTURE[gpu], ARCHITECTURE[tpu]
    g_chip, t_chip = CHIPS[gpu], CHIPS[tpu]
    assert isinstance(g, GpuInside) and isinstance(t, TpuInside)
    fig, (ax_g, ax_t) = plt.subplots(1, 2, figsize=(14, 7.4), width_ratios=(1.25, 1))
    for ax in (ax_g, ax_t):
        ax.set(xlim=(0, 10), ylim=(0, 10))
        ax.axis("off")

    # en: the GPU: a grid of SMs, each with its tensor cores (small dark squares) inside
    # de: die GPU: ein Gitter aus SMs, jeder mit seinen Tensor Cores (kleine dunkle Quadrate)
    columns = 10
    rows = -(-g.sms // columns)
    cell_w, cell_h = 9.6 / columns, 3.3 / rows
    for sm in range(g.sms):
        x, y = 0.2 + (sm % columns) * cell_w, 9.3 - (sm // columns + 1) * cell_h
        _box(ax_g, x + 0.03, y + 0.03, cell_w - 0.06, cell_h - 0.06, "#cfe8cf")
        per_row = min(g.tensor_cores_per_sm, 4)
        tc_w = (cell_w - 0.2) / per_row
        for tc in range(g.tensor_cores_per_sm):
            tx = x + 0.1 + (tc % per_row) * tc_w
            ty = y + 0.1 + (tc // per_row) * 0.16
            _box(ax_g, tx + 0.02, ty, tc_w - 0.04, 0.12, "#2e7d32", edge="#2e7d32")
    ax_g.text(
        5,
        9.55,
        text(
            "{gpu}: {sms} SMs, {tc} tensor cores inside each ({total} in all)",
            "{gpu}: {sms} SMs, in jedem {tc} Tensor Cores ({total} insgesamt)",
            gpu=gpu,
            sms=g.sms,
            tc=g.tensor_cores_per_sm,
            total=g.sms * g.tensor_cores_per_sm,
        ),
        ha="center",
        fontsize=13,
        weight="bold",
    )
    # en: the memory hierarchy, fastest and smallest at the top
    # de: die Speicherhierarchie, oben die schnellste und kleinste Ebene
    levels = [
        (
            text("registers", "Register"),
            text(
                "{s} per SM, {t} in all",
                "{s} pro SM, {t} insgesamt",
                s=_size(g.registers_per_sm),
                t=_size(g.registers_per_sm * g.sms),
            ),
            "#e3f2fd",
        ),
        (
            text("L1 / shared memory", "L1 / Shared Memory"),
            text("{s} per SM", "{s} pro SM", s=_size(g.l1_per_sm)),
            "#bbdefb",
        ),
        (
            text("L2 cache", "L2-Cache"),
            text("{s}, shared by all SMs", "{s}, für alle SMs", s=_size(g.l2)),
            "#90caf9",
        ),
        (
            text("GPU memory ({kind})", "GPU-Speicher ({kind})", kind=g.memory),
            f"{g_chip.memory_gb:.0f} GB · {_gbs(g_chip.bandwidth_gbs)}",
            "#64b5f6",
        ),
    ]
    if g_chip.link is not None:
        levels.append(
            (
                text("host link to the CPU", "Verbindung zur CPU"),
                text(
                    "PCIe Gen{g} x{l} · {bw}",
                    g=g_chip.link.generation,
                    l=g_chip.link.lanes,
                    bw=_gbs(g_chip.link.gbs),
                ),
                "#eeeeee",
            )
        )
    height = 5.4 / len(levels)
    for i, (name, figures, color) in enumerate(levels):
        y = 5.6 - (i + 1) * height
        width = 5.0 + 4.6 * i / (len(levels) - 1)  # en: wider = larger | de: breiter = größer
        _box(ax_g, 5 - width / 2, y + 0.06, width, height - 0.12, color)
        ax_g.text(5, y + height * 0.62, name, ha="center", va="center", fontsize=12, weight="bold")
        ax_g.text(5, y + height * 0.3, figures, ha="center", va="center", fontsize=11)
    ax_g.annotate(
        "",
        xy=(0.15, 0.3),
        xytext=(0.15, 5.5),
        arrowprops=dict(arrowstyle="->", color="gray", lw=1.5),
    )
    ax_g.text(
        0.3,
        2.9,
        text("larger, slower", "größer, langsamer"),
        rotation=90,
        va="center",
        color="gray",
        fontsize=11,
    )

    # en: the TPU chip: its TensorCore(s), each with its MXUs drawn as small systolic grids
    # de: der TPU-Chip: seine TensorCore(s), jeder mit seinen MXUs als kleine systolische Gitter
    _box(ax_t, 0.4, 4.3, 9.2, 5.0, "#fdecea")
    ax_t.text(
        5,
        9.55,
        text(
            "{tpu}: {c} TensorCore, {m} MXUs ({s}×{s}) each",
            "{tpu}: {c} TensorCore, je {m} MXUs ({s}×{s})",
            tpu=tpu,
            c=t.tensor_cores,
            m=t.mxus_per_core,
            s=t.mxu_size,
        ),
        ha="center",
        fontsize=13,
        weight="bold",
    )
    mxus = t.tensor_cores * t.mxus_per_core
    grid = 8  # en: a 128×128 array drawn as 8×8 cells | de: ein 128×128-Array als 8×8 Zellen
    span = 8.4 / mxus
    for m in range(mxus):
        x0, y0, side = 0.8 + m * span, 6.0, span - 0.5
        step = side / grid
        for i in range(grid):
            for j in range(grid):
                _box(ax_t, x0 + j * step, y0 + i * step, step * 0.86, step * 0.86, "#f28b82")
        ax_t.text(x0 + side / 2, y0 + side + 0.3, f"MXU {m + 1}", ha="center", fontsize=12)
    _box(ax_t, 0.8, 4.6, 4.0, 0.9, "#f8c6c0", text("vector unit", "Vektoreinheit"))
    _box(ax_t, 5.2, 4.6, 4.0, 0.9, "#f8c6c0", text("scalar unit", "Skalareinheit"))
    _box(
        ax_t,
        0.4,
        2.2,
        9.2,
        1.6,
        "#64b5f6",
        text(
            "HBM ({kind}): {gb:.0f} GB · {bw}",
            "HBM ({kind}): {gb:.0f} GB · {bw}",
            kind=t.memory,
            gb=t_chip.memory_gb,
            bw=_gbs(t_chip.bandwidth_gbs),
        ),
        size=12,
        weight="bold",
    )
    ax_t.annotate(
        "", xy=(5, 3.85), xytext=(5, 4.3), arrowprops=dict(arrowstyle="<->", color="black")
    )
    _box(
        ax_t,
        1.2,
        0.2,
        7.6,
        1.4,
        "#eeeeee",
        text(
            "ICI: {n} links to neighbouring chips\n(2D torus), {gb} per chip",
            "ICI: {n} Verbindungen zu Nachbarchips\n(2D-Torus), {gb} pro Chip",
            n=t.neighbours,
            gb=text("{v:,.0f} Gbit/s", v=t.ici_gbits),
        ),
        size=11,
    )
    for x, y, dx, dy in ((1.2, 0.9, -1.0, 0), (8.8, 0.9, 1.0, 0)):
        ax_t.annotate(
            "", xy=(x + dx, y + dy), xytext=(x, y), arrowprops=dict(arrowstyle="<->", color="gray")
        )
    fig.suptitle(
        text(
            "Where the arithmetic and the memory sit: a GPU and a TPU (not to scale)",
            "Wo gerechnet wird und wo der Speicher liegt: GPU und TPU (nicht maßstäblich)",
        ),
        fontsize=15,
    )
    fig.text(
        0.5,
        0.01,
        text("Sources: {a}; {b}", "Quellen: {a}; {b}", a=g.source, b=t.source),
        ha="center",
        fontsize=10,
        color="gray",
    )
    fig.tight_layout(rect=(0, 0.03, 1, 0.96))
    return fig


def label_points(ax: Any, points: list[tuple[float, float, str]], size: float = 10) -> None:
    """Write each point's name beside it, where it overlaps no other name and no point.

    For each point in turn, the first free place among eight directions at growing distance
    wins; a name that had to move far gets a thin line to its point.  Works on log axes, since
    the search is in screen coordinates."""
    fig = ax.figure
    fig.canvas.draw()  # en: settles the axis limits the search depends on | de: legt die Achsen fest
    renderer = fig.canvas.get_renderer()
    to_screen = ax.transData.transform
    dots = [to_screen((x, y)) for x, y, _ in points]
    taken = []  # en: screen boxes already used | de: schon belegte Bildschirmkästen
    frame = ax.get_window_extent(renderer)
    directions = [(1, 0), (1, 1), (1, -1), (0, 1), (0, -1), (-1, 0), (-1, 1), (-1, -1)]
    for (x, y, name), dot in zip(points, dots, strict=True):
        probe = ax.text(x, y, name, fontsize=size)
        w, h = probe.get_window_extent(renderer).size
        probe.remove()
        label = ax.annotate(name, (x, y), fontsize=size, xytext=(0, 0), textcoords="offset points")
        placed = None
        for distance in (6, 14, 24, 36, 50, 66):
            for dx, dy in directions:
                cx = dot[0] + dx * (distance + w / 2)
                cy = dot[1] + dy * (distance * 0.8 + h / 2)
                box = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
                inside = frame.x0 <= box[0] and box[2] <= frame.x1
                inside = inside and frame.y0 <= box[1] and box[3] <= frame.y1
                free = all(not _overlap(box, other) for other in taken)
                free = free and all(
                    not _overlap(box, (px - 4, py - 4, px + 4, py + 4)) for px, py in dots
                )
                if inside and free:
                    placed = (cx, cy, box, distance)
                    break
            if placed:
                break
        if (
            placed is None
        ):  # en: nowhere free: beside it anyway | de: nirgends frei: trotzdem daneben
            cx, cy = dot[0] + 6 + w / 2, dot[1]
            placed = (cx, cy, (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2), 6)
        cx, cy, box, distance = placed
        taken.append(box)
        # en: offset in points from the point to the label's centre
        # de: Versatz in Punkten vom Punkt zur Mitte der Beschriftung
        scale = 72 / fig.dpi
        label.set_position(((cx - dot[0]) * scale, (cy - dot[1]) * scale))
        label.set_ha("center")
        label.set_va("center")
        if distance > 6:
            ax.annotate(
                "",
                (x, y),
                xytext=((cx - dot[0]) * scale, (cy - dot[1]) * scale),
                textcoords="offset points",
                arrowprops=dict(arrowstyle="-", color="gray", lw=0.6, shrinkA=6, shrinkB=3),
            )


def _overlap(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def timeline(rows: list[tuple[str, list[tuple[str, float]]]], title: str) -> Any:
    """Rows of measured phases as bars on one time axis, each with its name and duration.

    `rows` is `[(row name, [(phase, seconds), ...]), ...]`, drawn top to bottom; a phase named
    "" is a gap; a phase too short to hold its label gets it beside the bar.  Returns the
    figure."""
    plt = _plt()
    colors = ["#5c6bc0", "#ef6c00", "#2e7d32", "#8e24aa", "#00838f"]
    phases = list(dict.fromkeys(phase for _, row in rows for phase, _ in row if phase))
    longest = max(sum(seconds for _, seconds in row) for _, row in rows)
    fig, ax = plt.subplots(figsize=(12, 1.2 + 1.1 * len(rows)))
    for r, (_, row) in enumerate(rows):
        y, start = len(rows) - 1 - r, 0.0
        for phase, seconds in row:
            if (
                not phase
            ):  # en: an unnamed phase is a gap | de: eine Phase ohne Namen ist eine Lücke
                start += seconds
                continue
            color = colors[phases.index(phase) % len(colors)]
            ax.barh(y, seconds * 1e3, left=start * 1e3, height=0.6, color=color, edgecolor="white")
            label = f"{phase}\n{format_seconds(seconds)}"
            if seconds > 0.12 * longest:
                ax.text(
                    (start + seconds / 2) * 1e3,
                    y,
                    label,
                    ha="center",
                    va="center",
                    color="white",
                    fontsize=11,
                    weight="bold",
                )
            else:
                ax.annotate(
                    label,
                    ((start + seconds) * 1e3, y + 0.3),
                    xytext=(8, 10),
                    textcoords="offset points",
                    fontsize=11,
                    color=color,
                    va="bottom",
                    arrowprops=dict(arrowstyle="-", color=color, lw=0.8),
                )
            start += seconds
    ax.set_yticks(range(len(rows)), [name for name, _ in reversed(rows)], fontsize=12)
    ax.set_xlabel("ms", fontsize=12)
    ax.set_xlim(0, longest * 1e3 * 1.08)
    ax.set_ylim(-0.6, len(rows) - 0.1)
    ax.set_title(title, fontsize=13)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


def roofline(
    roofs: list[tuple[float, str]],
    bandwidth: float,
    points: list[tuple[str, float, float, bool]],
    title: str,
) -> Any:
    """A roofline with each point's name beside it (no legend to decode).

    `roofs`: (peak FLOP/s, name) per number format, the first drawn solid; `bandwidth` in
    bytes/s; `points`: (name, FLOPs per byte, measured FLOP/s, drawn in the first roof's
    colour: True for the points of the first number format).  The ridge point
    of the first roof is marked.  Returns the figure."""
    import numpy as np

    plt = _plt()
    fig, ax = plt.subplots(figsize=(11, 6.5))
    intensities = np.logspace(-2, 3, 200)
    for index, (peak, name) in enumerate(roofs):
        style = "k-" if index == 0 else "k--"
        ax.loglog(intensities, np.minimum(peak, bandwidth * intensities), style)
        color = "tab:blue" if index == 0 else "tab:orange"  # en: as its points | de: wie die Punkte
        ax.text(intensities[-1], peak * 1.15, name, ha="right", fontsize=11, color=color)
    ridge = roofs[0][0] / bandwidth
    ax.axvline(ridge, color="gray", linestyle=":")
    ax.text(ridge * 1.1, bandwidth * 0.02, text("ridge point", "Knickpunkt"), color="gray")
    for _, intensity, rate, highlighted in points:
        color = "tab:blue" if highlighted else "tab:orange"
        ax.loglog([intensity], [rate], "o", color=color, markersize=7)
    label_points(ax, [(intensity, rate, name) for name, intensity, rate, _ in points])
    ax.set_xlabel(
        text("arithmetic intensity (FLOPs per byte)", "arithmetische Intensität (FLOPs pro Byte)"),
        fontsize=12,
    )
    ax.set_ylabel("FLOP/s", fontsize=12)
    ax.set_title(title, fontsize=13)
    return fig
