"""Lesson 08's pictures, computed: what one device holds under each kind of parallelism (from
utils.memory.fit) and a ring all-reduce step by step (from a simulation of the algorithm).

    held = per_device("Llama-3-8B", devices=4, batch=8, seq=2048)   # bytes by part and strategy
    draw_memory(held, capacity=80 * GIB)
    states, sends = ring_allreduce(4)                                 # who holds which sums
    draw_ring(4)

The memory model: mixed-precision AdamW as `fit(mode="full", mixed=True)` computes it, shown at
the start of backward with the gradients counted as held (the worst case of the step).  Device 0
is shown, the fullest one: under pipeline parallelism it holds the embedding.  Data parallelism
and FSDP split the batch; tensor parallelism splits the attention's and the MLP's intermediates
but keeps the inputs of its column-parallel layers and the norms whole on every device (no
sequence parallelism); the pipeline keeps all micro-batches' activations of its stage (GPipe).
"""

from __future__ import annotations

from typing import Any

from utils.i18n import text
from utils.memory.fit import (
    ALL_LINEAR,
    Shape,
    activation_bytes,
    block_activations,
    fit,
    loss_head_bytes,
)
from utils.units import GIB

STRATEGIES = ("single", "ddp", "fsdp", "tp", "pp")
PARTS = ("weights", "gradients", "optimizer", "gathered", "activations")


def strategy_names() -> dict[str, str]:
    """The strategies' names in the notebook's language."""
    return {
        "single": text("one device", "ein Gerät"),
        "ddp": text("data parallel", "datenparallel"),
        "fsdp": "FSDP / ZeRO-3",
        "tp": text("tensor parallel", "Tensorparallel"),
        "pp": text("pipeline", "Pipeline"),
    }


def part_names() -> dict[str, str]:
    return {
        "weights": text("weights (fp32 + bf16 copy)", "Gewichte (fp32 + bf16-Kopie)"),
        "gradients": text("gradients", "Gradienten"),
        "optimizer": text("Adam moments", "Adam-Momente"),
        "gathered": text("one layer gathered (bf16)", "eine Schicht eingesammelt (bf16)"),
        "activations": text("activations", "Aktivierungen"),
    }


def _shape(model: Any) -> Shape:
    from utils.memory.serving import shape_for

    return shape_for(model)


def per_device(
    model: Any, devices: int = 4, batch: int = 8, seq: int = 2048
) -> dict[str, dict[str, float]]:
    """Bytes device 0 holds, by part, for each strategy of STRATEGIES (a model name of
    utils.memory.serving.KNOWN, a Shape, a config or a model); `batch` is the global batch."""
    shape = _shape(model)
    n = shape.n_params
    report = fit(shape, "bfloat16", mode="full", batch=batch, seq=seq, device="cpu", mixed=True)
    per_param = {
        "weights": (report.parts["weights"] + report.parts["weight_copies"]) / n,
        "gradients": report.parts["gradients"] / n,
        "optimizer": report.parts["optimizer"] / n,
    }
    embedding = shape.vocab * shape.hidden * (1 if shape.tied else 2)
    block = (n - embedding) / shape.layers

    def states(params: float) -> dict[str, float]:
        return {part: bytes_ * params for part, bytes_ in per_param.items()}

    def acts(micro_batch: float) -> float:
        return activation_bytes(shape, micro_batch, seq, "full", 2.0)

    held = {"single": {**states(n), "activations": acts(batch)}}
    held["ddp"] = {**states(n), "activations": acts(batch / devices)}
    held["fsdp"] = {**states(n / devices), "gathered": 2.0 * block}
    held["fsdp"]["activations"] = acts(batch / devices)
    # tensor parallel: every device sees every token; the norms and the inputs of q, k, v, gate
    # and up are whole on each device, the rest of a block's intermediates and the vocabulary
    # (the loss head) are split
    parts = block_activations(shape, 2.0, ALL_LINEAR, full=True)
    whole = parts["norms"] + 2 * shape.hidden * 2.0
    split = parts["attention"] + parts["mlp"] + parts["linear inputs"] - 2 * shape.hidden * 2.0
    tokens = batch * seq
    loss = loss_head_bytes(shape, tokens)
    tp_acts = tokens * shape.layers * (whole + split / devices) + loss / devices
    held["tp"] = {**states(n / devices), "activations": tp_acts}
    # pipeline, stage 0: the embedding and its share of the blocks, their activations for the
    # whole batch (every micro-batch in flight), no loss head (that is on the last stage)
    stage_layers = shape.layers / devices
    held["pp"] = {**states(embedding * (1 if shape.tied else 0.5) + block * stage_layers)}
    held["pp"]["activations"] = tokens * stage_layers * sum(parts.values())
    return {name: {p: held[name].get(p, 0.0) for p in PARTS} for name in STRATEGIES}


def draw_memory(
    held: dict[str, dict[str, float]], capacity: float | None = None, capacity_label="", title=""
):
    """Stacked bars: GiB on device 0 by part, one bar per strategy; a line at `capacity`."""
    import matplotlib.pyplot as plt

    names, labels = strategy_names(), part_names()
    fig, ax = plt.subplots(figsize=(10, 5))
    x = range(len(held))
    bottom = [0.0] * len(held)
    for part in PARTS:
        values = [held[s][part] / GIB for s in held]
        if not any(values):
            continue
        ax.bar(x, values, bottom=bottom, label=labels[part], width=0.6)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    for i, total in enumerate(bottom):
        ax.text(i, total, f"{text('{t:,.0f}', '{t:,.0f}', t=total)} GiB", ha="center", va="bottom")
    if capacity:
        ax.axhline(capacity / GIB, color="black", linestyle="--", linewidth=1)
        ax.text(
            len(held) - 0.5,
            capacity / GIB,
            capacity_label,
            ha="right",
            va="bottom",
        )
    ax.set_xticks(list(x), [names[s] for s in held])
    ax.set_ylabel(text("GiB on device 0", "GiB auf Gerät 0"))
    ax.set_title(title)
    ax.legend(loc="upper right", fontsize=9)
    fig.tight_layout()
    return fig


def ring_allreduce(devices: int) -> tuple[list[list[list[frozenset]]], list[list[tuple]]]:
    """Simulate a ring all-reduce of an array in `devices` chunks.  Returns the states (after
    each step: state[device][chunk] = the set of devices whose values that copy sums) and the
    sends of each step ((from, to, chunk)).  Steps 1..N-1 reduce-scatter, N..2N-2 all-gather."""
    n = devices
    state = [[frozenset({d}) for _ in range(n)] for d in range(n)]
    states, sends = [[row[:] for row in state]], []
    for step in range(2 * (n - 1)):
        moves = []
        for d in range(n):
            # device d sends the chunk it has just completed one more of: chunk (d - step) mod n
            chunk = (d - step) % n if step < n - 1 else (d + 1 - (step - n + 1)) % n
            moves.append((d, (d + 1) % n, chunk))
        new = [row[:] for row in state]
        for src, dst, chunk in moves:
            if step < n - 1:  # reduce-scatter: add the neighbour's partial sum
                new[dst][chunk] = state[dst][chunk] | state[src][chunk]
            else:  # all-gather: take the neighbour's finished sum
                new[dst][chunk] = state[src][chunk]
        state = new
        states.append([row[:] for row in state])
        sends.append(moves)
    return states, sends


def draw_ring(devices: int = 4):
    """Every step of a ring all-reduce: the devices on a ring, each holding its chunks; a chunk's
    colour is how many devices' values it sums, the arrows what moves in that step."""
    import math

    import matplotlib.pyplot as plt

    states, sends = ring_allreduce(devices)
    n = devices
    fig, axes = plt.subplots(2, n, figsize=(3.2 * n, 8))
    cmap = plt.get_cmap("Blues")
    centres = [(math.sin(2 * math.pi * d / n), math.cos(2 * math.pi * d / n)) for d in range(n)]
    panels = [*range(len(states))] + [None] * (2 * n - len(states))
    complete = text(
        "all", "alle"
    )  # en: a chunk that sums every device's values | de: die Summe aller
    for ax, index in zip(axes.flat, panels, strict=True):
        ax.set_xlim(-1.8, 1.8)
        ax.set_ylim(-1.85, 1.85)
        ax.set_aspect("equal")
        ax.axis("off")
        if index is None:
            sent = {src: 0 for src in range(n)}
            for step in sends:
                for src, _, _ in step:
                    sent[src] += 1
            ax.text(
                0,
                0,
                text(
                    "each device sent {k} chunks\nof 1/{n} of the array:\n{f:.2f} arrays"
                    " = 2(N−1)/N",
                    "jedes Gerät hat {k} Stücke\nvon je 1/{n} des Arrays gesendet:\n{f:.2f}"
                    " Arrays = 2(N−1)/N",
                    k=sent[0],
                    n=n,
                    f=sent[0] / n,
                ),
                ha="center",
                va="center",
                fontsize=12,
            )
            continue
        state = states[index]
        for d, (cx, cy) in enumerate(centres):
            for c in range(n):
                size = len(state[d][c])
                y = cy + 0.33 - 0.22 * c
                ax.add_patch(
                    plt.Rectangle(
                        (cx - 0.42, y - 0.11),
                        0.84,
                        0.22,
                        color=cmap(0.15 + 0.85 * size / n),
                        ec="white",
                    )
                )
                ax.text(
                    cx,
                    y,
                    complete if size == n else "+".join(str(s) for s in sorted(state[d][c])),
                    ha="center",
                    va="center",
                    fontsize=10,
                    color="white" if size > n / 2 else "black",
                )
            label_y = cy + 0.5 if cy > 0.5 else cy - 0.72  # the top device's label goes above it
            ax.text(cx, label_y, text("device {d}", "Gerät {d}", d=d), ha="center", fontsize=10)
        if index == 0:
            ax.set_title(
                text("start: each device its own array", "Start: jedes Gerät sein Array"),
                fontsize=11,
            )
            continue
        phase = (
            text("reduce-scatter", "Reduce-Scatter")
            if index <= n - 1
            else text("all-gather", "All-Gather")
        )
        ax.set_title(text("step {i}: {p}", "Schritt {i}: {p}", i=index, p=phase), fontsize=11)
        for src, dst, chunk in sends[index - 1]:
            (x0, y0), (x1, y1) = centres[src], centres[dst]
            ax.annotate(
                "",
                (x1 * 0.55, y1 * 0.55),
                (x0 * 0.55, y0 * 0.55),
                arrowprops=dict(arrowstyle="->", color="tab:red", connectionstyle="arc3,rad=-0.3"),
            )
            ax.text(
                (x0 + x1) * 0.3,
                (y0 + y1) * 0.3,
                str(chunk),
                fontsize=12,
                fontweight="bold",
                color="tab:red",
                ha="center",
                va="center",
            )
    fig.suptitle(
        text(
            "Ring all-reduce on {n} devices: {s} steps, each device sends one chunk per step"
            " (red: the number of the chunk it sends)",
            "Ring-All-Reduce auf {n} Geräten: {s} Schritte, jedes Gerät sendet ein Stück pro"
            " Schritt (rot: die Nummer des gesendeten Stücks)",
            n=n,
            s=2 * (n - 1),
        )
    )
    fig.tight_layout()
    return fig
