"""A LoRA layer as a picture: the frozen W, the trainable A and B with their shapes, and the merge.

    from utils.models.lora_picture import draw_lora
    draw_lora(in_features=576, out_features=576, r=8, alpha=16)

The matrices are drawn to scale where they can be (W is out × in, A is r × in, B is out × r), with
a minimum thickness so that a rank of 8 against a width of 576 is still visible; the numbers of
weights beside them come from the shapes, in the notebook's language.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, Rectangle

from utils.i18n import num, text

FROZEN, TRAINED = "#b8bec6", "#e07b39"
THIN = 0.22  # the least thickness a rank gets on the page, in units of the drawing


def _box(ax, x, y, width, height, colour, name=""):
    ax.add_patch(Rectangle((x, y), width, height, facecolor=colour, edgecolor="black", lw=1.2))
    if name:
        ax.text(x + width / 2, y + height / 2, name, ha="center", va="center", fontsize=18)


def _arrow(ax, start, end):
    ax.add_patch(
        FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=16, lw=1.4, color="black")
    )


def draw_lora(in_features: int, out_features: int, r: int, alpha: float, layer: str = ""):
    """Draw y = W x + (alpha / r) · B A x for one layer of the given shape; returns the figure."""
    side = 2.2  # the larger side of W on the page
    scale = side / max(in_features, out_features)
    w_in, w_out = in_features * scale, out_features * scale
    thick = max(THIN, r * scale)
    fig, ax = plt.subplots(figsize=(10.5, 6.4))
    ax.set(xlim=(0, 10.5), ylim=(-1.5, 5.3), aspect="equal")
    ax.axis("off")
    left, mid = 1.4, 2.3  # where the matrices start; the height of x, the sum and y
    fmt = {"fontsize": 12}

    ax.text(0.4, mid, "x", fontsize=22, ha="center", va="center", fontstyle="italic")
    # the frozen path: W, out × in
    w_y = 2.75
    _box(ax, left, w_y, w_in, w_out, FROZEN, "W")
    ax.text(
        left + w_in + 0.15, w_y + w_out - 0.1, f"W: {out_features} × {in_features}", va="top", **fmt
    )
    ax.text(
        left + w_in + 0.15,
        w_y + w_out - 0.55,
        text(
            "frozen: {n} weights",
            "eingefroren: {n} Gewichte",
            n=num(in_features * out_features, ","),
        ),
        va="top",
        **fmt,
    )
    # the trained path: A (r × in), then B (out × r), which starts at zero
    a_y = 0.6
    _box(ax, left, a_y, w_in, thick, TRAINED)
    ax.text(left, a_y - 0.15, f"A: {r} × {in_features}", va="top", **fmt)
    ax.text(
        left,
        a_y - 0.6,
        text("trained: {n}", "trainiert: {n}", n=num(r * in_features, ",")),
        va="top",
        **fmt,
    )
    b_x, b_y = left + w_in + 0.9, a_y + thick / 2 - w_out / 2
    _box(ax, b_x, b_y, thick, w_out, TRAINED)
    ax.text(
        b_x + thick + 0.15,
        b_y + 0.05,
        f"B: {out_features} × {r}\n"
        + text(
            "trained: {n},\nstarts at 0",
            "trainiert: {n},\nbeginnt bei 0",
            n=num(out_features * r, ","),
        ),
        va="bottom",
        **fmt,
    )
    _arrow(ax, (0.65, mid + 0.15), (left - 0.05, w_y + w_out / 2))
    _arrow(ax, (0.65, mid - 0.15), (left - 0.05, a_y + thick / 2))
    _arrow(ax, (left + w_in, a_y + thick / 2), (b_x - 0.05, a_y + thick / 2))

    # the sum; the LoRA path is scaled by alpha / r on its way
    plus = (7.6, mid)
    ax.text(
        *plus,
        "+",
        fontsize=24,
        ha="center",
        va="center",
        bbox=dict(boxstyle="circle", facecolor="white"),
    )
    _arrow(ax, (left + w_in + 3.0, w_y + w_out / 2), (plus[0] - 0.3, plus[1] + 0.2))
    ax.plot([left + w_in + 0.05, left + w_in + 3.0], [w_y + w_out / 2] * 2, color="black", lw=1.4)
    _arrow(ax, (b_x + thick + 0.05, a_y + thick / 2), (plus[0] - 0.3, plus[1] - 0.2))
    ax.text(6.2, 1.0, f"· α/r = {num(alpha / r, 'g')}", ha="left", va="center", fontsize=13)
    _arrow(ax, (plus[0] + 0.4, plus[1]), (plus[0] + 1.2, plus[1]))
    ax.text(plus[0] + 1.35, plus[1], "y", fontsize=22, ha="left", va="center", fontstyle="italic")

    trained = r * (in_features + out_features)
    total = trained + in_features * out_features
    ax.text(
        5.25,
        -0.85,
        text(
            "trainable: r · (in + out) = {t} of {a} numbers ({p} %)",
            "trainierbar: r · (in + out) = {t} von {a} Zahlen ({p} %)",
            t=num(trained, ","),
            a=num(total, ","),
            p=num(100 * trained / total, ".1f"),
        ),
        ha="center",
        **fmt,
    )
    ax.text(
        5.25,
        -1.35,
        text(
            "merged for inference: W′ = W + (α/r) · B · A, again {o} × {i}, no extra cost",
            "zum Anwenden eingerechnet: W′ = W + (α/r) · B · A, wieder {o} × {i}, ohne Mehrkosten",
            o=out_features,
            i=in_features,
        ),
        ha="center",
        **fmt,
    )
    title = text(
        "A LoRA layer, r = {r}, α = {a}",
        "Eine LoRA-Schicht, r = {r}, α = {a}",
        r=r,
        a=num(alpha, "g"),
    )
    ax.set_title(f"{title}{': ' + layer if layer else ''}", fontsize=14)
    return fig
