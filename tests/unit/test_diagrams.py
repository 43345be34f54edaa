"""The concept pictures draw what the tables and the measurements say, in the notebook's language,
with names that can be read: utils.diagrams (lessons 00, 01, 04, 10), the LoRA layer (07) and the
memory per device and ring all-reduce (08)."""

from __future__ import annotations

import itertools

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

from utils import diagrams, i18n  # noqa: E402
from utils.models.lora_picture import draw_lora  # noqa: E402
from utils.platform.chips import CHIPS  # noqa: E402
from utils.units import format_seconds  # noqa: E402

GPUS = [
    name for name, inside in diagrams.ARCHITECTURE.items() if isinstance(inside, diagrams.GpuInside)
]


@pytest.fixture(autouse=True)
def english_and_closed():
    i18n.set_language("en")
    yield
    i18n.set_language("en")
    plt.close("all")


def _texts(fig) -> str:
    return "\n".join(t.get_text() for t in fig.findobj(Text))


@pytest.mark.parametrize("gpu", GPUS)
def test_the_chip_picture_shows_the_tables_figures(gpu):
    inside, chip = diagrams.ARCHITECTURE[gpu], CHIPS[gpu]
    tpu = diagrams.ARCHITECTURE["TPU v5e"]
    shown = _texts(diagrams.chip_diagram(gpu, "TPU v5e"))
    assert f"{gpu}: {inside.sms} SMs, {inside.tensor_cores_per_sm} tensor cores" in shown
    assert f"({inside.sms * inside.tensor_cores_per_sm} in all)" in shown
    assert f"{chip.memory_gb:.0f} GB · {chip.bandwidth_gbs:,.0f} GB/s" in shown
    assert f"PCIe Gen{chip.link.generation} x{chip.link.lanes}" in shown
    assert f"{CHIPS['TPU v5e'].memory_gb:.0f} GB · {CHIPS['TPU v5e'].bandwidth_gbs:,.0f}" in shown
    assert f"{tpu.mxus_per_core} MXUs ({tpu.mxu_size}×{tpu.mxu_size})" in shown
    assert inside.source in shown  # the picture names where its figures come from
    # one box per SM, each with its tensor cores inside
    gpu_axes = plt.gcf().axes[0]
    boxes = [p for p in gpu_axes.patches if isinstance(p, Rectangle)]
    assert len(boxes) >= inside.sms * (1 + inside.tensor_cores_per_sm)


def test_the_chip_picture_speaks_german():
    i18n.set_language("de")
    shown = _texts(diagrams.chip_diagram("A100", "TPU v5e"))
    assert "108 SMs, in jedem 4 Tensor Cores (432 insgesamt)" in shown
    assert "1.555 GB/s" in shown and "GPU-Speicher" in shown and "Quellen:" in shown
    assert "registers" not in shown and "in all" not in shown


def _boxes(ax, labels):
    renderer = ax.figure.canvas.get_renderer()
    return [label.get_window_extent(renderer) for label in labels]


def test_names_beside_crowded_points_overlap_neither_each_other_nor_a_point():
    # the shape of lesson 01's roofline: matmuls of growing size close together on log axes
    points = [(0.08, 4e8, "addition"), (0.5, 1.7e9, "matrix × vector"), (2, 1.3e10, "8 adds")]
    points += [(10.7, 1.4e10, "matmul 64"), (21, 1.7e10, "matmul 128"), (43, 1.9e10, "matmul 256")]
    points += [(85, 1.7e10, "matmul 512"), (170, 1.45e10, "matmul 1024"), (16, 6.4e9, "64 adds")]
    fig, ax = plt.subplots(figsize=(11, 6.5))
    for x, y, _ in points:
        ax.loglog([x], [y], "o")
    ax.set(xlim=(1e-2, 1e3), ylim=(1e8, 1e12))
    before = len(ax.texts)
    diagrams.label_points(ax, points)
    labels = ax.texts[before:]
    assert [label.get_text() for label in labels] == [name for _, _, name in points]
    boxes = _boxes(ax, labels)
    for (i, a), (j, b) in itertools.combinations(enumerate(boxes), 2):
        assert not a.overlaps(b), f"{points[i][2]!r} and {points[j][2]!r} overlap"
    # a dot is a marker of about 7 px: a name must keep clear of its middle 6 px
    for (x, y, name), box in itertools.product(points, boxes):
        px, py = ax.transData.transform((x, y))
        assert not box.overlaps(Bbox([[px - 3, py - 3], [px + 3, py + 3]])), f"a name on {name}"


def test_the_timeline_draws_the_measured_durations():
    rows = [("first call", [("trace", 0.0901), ("compile", 0.287), ("run", 0.00674)])]
    rows += [("later", [("", 0.01), ("run", 0.00674)])]
    fig = diagrams.timeline(rows, "t")
    bars = [p for p in fig.axes[0].patches if isinstance(p, Rectangle) and p.get_width() > 0]
    # one bar per named phase, as wide as its measurement (ms), starting where the last ended
    assert [round(b.get_width(), 6) for b in bars] == [90.1, 287.0, 6.74, 6.74]
    assert [round(b.get_x(), 6) for b in bars] == [0, 90.1, 377.1, 10.0]
    shown = _texts(fig)
    for seconds in (0.0901, 0.287, 0.00674):
        assert format_seconds(seconds) in shown


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_lora_picture_counts_from_its_shapes(lang):
    i18n.set_language(lang)
    shown = _texts(draw_lora(576, 192, r=8, alpha=16, layer="k_proj"))
    sep = "," if lang == "en" else "."
    assert "W: 192 × 576" in shown and "A: 8 × 576" in shown and "B: 192 × 8" in shown
    assert f"110{sep}592" in shown  # frozen W
    assert f"6{sep}144" in shown  # trainable: 8 · (576 + 192)
    assert ("frozen" in shown) is (lang == "en") and ("eingefroren" in shown) is (lang == "de")


def _concept_pictures():
    """Every concept picture of the course, drawn as its lesson draws it."""
    from utils.parallel.pictures import draw_memory, draw_ring, per_device

    yield "chip", diagrams.chip_diagram("T4", "TPU v5e")
    rows = [("first call", [("trace", 0.09), ("compile", 0.29), ("run", 0.007)])]
    yield "timeline", diagrams.timeline(rows, "t")
    points = [("matmul 64", 10.7, 1.4e10, True), ("addition", 0.08, 4e8, True)]
    yield "roofline", diagrams.roofline([(1e11, "fp32")], 2e10, points, "t")
    yield "lora", draw_lora(576, 192, r=8, alpha=16, layer="k_proj")
    yield "ring", draw_ring(4)
    yield "memory", draw_memory(per_device("Llama-3-8B", devices=4, batch=8, seq=2048))


# A picture is shown at most 1280 px wide (a projector, a notebook column): at that width a text
# of 9 pt at 100 dpi is about 12 px high, the least a room can read.
LEAST_PX = 9 / 72 * 100 * 0.96


@pytest.mark.parametrize("lang", ["en", "de"])
def test_every_text_of_a_concept_picture_can_be_read_at_1280_px(lang):
    i18n.set_language(lang)
    small = []
    for name, fig in _concept_pictures():
        shown_px = 1280 / (fig.get_figwidth() * 72)  # px per point once the figure is 1280 px
        shown = [t for t in fig.findobj(Text) if t.get_text().strip() and t.get_visible()]
        small += [
            (name, t.get_text()[:30], t.get_fontsize())
            for t in shown
            if t.get_fontsize() * shown_px < LEAST_PX
        ]
        plt.close(fig)
    assert not small, small
