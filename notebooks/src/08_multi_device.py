# ---
# jupyter:
#   course:
#     accelerator: GPU
#     duration:
#       cpu: 35
#       t4: 40
#     level: 3
#     profiles:
#     - CPU
#     - Colab T4
#     - Kaggle T4 x2
#     - Colab TPU
#     - Kaggle TPU
#     - NVIDIA
#     - MPS
#     title:
#       de: 'Mehr als eine GPU: DDP, FSDP und Sharding'
#       en: 'Beyond one GPU: DDP, FSDP and sharding'
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# One device runs out in two ways: the model does not fit in its memory, or training takes too
# long. This lesson splits the work over several devices, for real, on any machine. You will
#
# - see with lesson 03's calculator what no single GPU holds, and what data, tensor and pipeline
#   parallelism and FSDP/ZeRO each split;
# - compute what the collectives cost: a ring all-reduce sends 2(N−1)/N of the data per device;
# - run **DDP** and **FSDP2** with `torch.distributed` in two processes (gloo on the CPU, NCCL on
#   Kaggle's T4 x2) and check that they train exactly like one process on the whole batch;
# - measure the all-reduce against the compute, and the scaling from 1 to 2 processes;
# - split arrays over **8 devices** in JAX with a mesh, `NamedSharding` and `shard_map`;
# - know what changes with several machines, and when a cluster is worth its price.
#
# Run the setup cell, then the code cell of section 0, **before anything else**.

# %% [markdown] lang="de"
# Ein Gerät reicht auf zwei Arten nicht: Das Modell passt nicht in seinen Speicher, oder das
# Training dauert zu lange. Diese Lektion verteilt die Arbeit wirklich auf mehrere Geräte, und das
# auf jeder Maschine. Du wirst
#
# - mit dem Rechner aus Lektion 03 sehen, was keine einzelne GPU fasst, und was Daten-, Tensor- und
#   Pipeline-Parallelität und FSDP/ZeRO jeweils aufteilen;
# - ausrechnen, was die kollektiven Operationen kosten: Ein Ring-All-Reduce sendet pro Gerät
#   2(N−1)/N der Daten;
# - **DDP** und **FSDP2** mit `torch.distributed` in zwei Prozessen starten (gloo auf der CPU, NCCL
#   auf Kaggles T4 x2) und prüfen, dass sie genau wie ein Prozess mit dem ganzen Batch trainieren;
# - die Zeit des All-Reduce mit der Rechenzeit vergleichen und die Skalierung von 1 auf 2 Prozesse
#   messen;
# - in JAX Arrays mit einem Mesh, `NamedSharding` und `shard_map` auf **8 Geräte** verteilen;
# - wissen, was sich mit mehreren Maschinen ändert und wann sich ein Cluster lohnt.
#
# Führe die Setup-Zelle aus und gleich danach die Code-Zelle von Abschnitt 0, **vor allem anderen**.

# %% [markdown] lang="en"
# ## 0. Eight JAX devices, before JAX starts
#
# Section 4 needs 8 devices. JAX can split the CPU into **simulated devices**, each with its own
# memory; the compiler inserts the same communication it would between real chips, only the speed
# is not real. JAX reads their number once, when its backends start (the first array or
# computation), so `jaxdevices.simulate_cpu_devices(8)` comes first. On Kaggle's TPU v5e-8 the same
# cells use the 8 TPU devices.

# %% [markdown] lang="de"
# ## 0. Acht JAX-Geräte, bevor JAX startet
#
# Abschnitt 4 braucht 8 Geräte. JAX kann die CPU in **simulierte Geräte** aufteilen, jedes mit
# eigenem Speicher; der Compiler fügt dieselbe Kommunikation ein wie zwischen echten Chips, nur das
# Tempo ist nicht echt. JAX liest ihre Anzahl einmal, wenn seine Backends starten (beim ersten Array
# oder der ersten Rechnung); deshalb kommt `jaxdevices.simulate_cpu_devices(8)` zuerst. Auf Kaggles
# TPU v5e-8 nehmen dieselben Zellen die 8 TPU-Geräte.

# %%
import jax

from utils.i18n import say, text
from utils.parallel import jaxdevices

# en: before any JAX array exists
# de: bevor es ein JAX-Array gibt
cpu_count = jaxdevices.simulate_cpu_devices(8)

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import torch

import utils
from utils.memory.fit import BYTES, DEVICE_MEMORY, fit
from utils.parallel import pictures, sharding
from utils.platform import hardware, profiles, runtime
from utils.platform.chips import pcie_gbs
from utils.predict import reveal
from utils.units import GIB

hw = hardware.detect()
profile = profiles.hardware_profile(runtime.detect_platform(), hw)
print("torch", torch.__version__, "| jax", jax.__version__, "|", profile.label, "|", hw.summary())

# %% [markdown] lang="en"
# ## 1. Why more than one device
#
# **Memory.** Lesson 03's calculator (`utils.memory.fit`) adds up what full training with AdamW needs:
# weights, gradients, two optimizer moments, activations. In fp32 that is 16 bytes per parameter
# before any activation: 4 for the weight, 4 for its gradient, 8 for Adam's two moments. Mixed
# precision as `torch.autocast` does it keeps a 16-bit copy of the weights as well: 18 bytes. The
# cell takes the breakdown from the calculator and uses the mixed-precision figure:

# %% [markdown] lang="de"
# ## 1. Warum mehr als ein Gerät
#
# **Speicher.** Der Rechner aus Lektion 03 (`utils.memory.fit`) zählt zusammen, was volles Training
# mit AdamW braucht: Gewichte, Gradienten, die zwei Momente des Optimierers, Aktivierungen. In fp32
# sind das 16 Bytes pro Parameter, noch ohne Aktivierungen: 4 für das Gewicht, 4 für seinen
# Gradienten, 8 für die beiden Momente von Adam. Mixed Precision, wie `torch.autocast` sie umsetzt,
# hält zusätzlich eine 16-Bit-Kopie der Gewichte: 18 Bytes. Die Zelle holt die Aufteilung aus dem
# Rechner und rechnet mit dem Wert für Mixed Precision:

# %%
STATE_PARTS = ("weights", "weight_copies", "gradients", "optimizer")
per = {}
for mixed in (False, True):
    parts = fit(10**6, "bfloat16" if mixed else "float32", mode="full", device="cpu", mixed=mixed)
    # en: bytes per parameter, part by part, before activations
    # de: Bytes pro Parameter, Teil für Teil, vor den Aktivierungen
    per[mixed] = {k: v / 10**6 for k, v in parts.parts.items() if k in STATE_PARTS}
per_param = {mixed: sum(p.values()) for mixed, p in per.items()}
say(
    "fp32 AdamW: {t:.0f} B per parameter = {w:.0f} weight + {g:.0f} gradient "
    "+ {o:.0f} Adam moments",
    "fp32-AdamW: {t:.0f} B pro Parameter = {w:.0f} Gewicht + {g:.0f} Gradient "
    "+ {o:.0f} Adam-Momente",
    t=per_param[False],
    w=per[False]["weights"],
    g=per[False]["gradients"],
    o=per[False]["optimizer"],
)
say(
    "mixed precision (autocast): {t:.0f} B = the same {f:.0f} + {c:.0f} for the 16-bit weight copy",
    "Mixed Precision (autocast): {t:.0f} B = dieselben {f:.0f} + {c:.0f} für die 16-Bit-Kopie",
    t=per_param[True],
    f=per_param[True] - per[True]["weight_copies"],
    c=per[True]["weight_copies"],
)
# en: fp32 AdamW: weight, gradient, two moments; autocast adds the 16-bit weight copy
# de: fp32-AdamW: Gewicht, Gradient, zwei Momente; autocast legt die 16-Bit-Kopie dazu
assert per_param[False] == 4 * BYTES["float32"]
assert per_param[True] == per_param[False] + BYTES["bfloat16"]

sizes = {1.5: 1_500_000_000, 7: 7_000_000_000, 70: 70_000_000_000}  # en: billions | de: Milliarden
needed, states, activations = {}, {}, {}
for billions, n_params in sizes.items():
    report = fit(n_params, "bfloat16", mode="full", batch=1, seq=1024, device="H100", mixed=True)
    needed[billions] = report.total
    states[billions] = report.per_param(n_params) * n_params
    activations[billions] = report.parts["activations"]
    say(
        "{b:>5.1f}B parameters: full training needs {gib:,.0f} GiB "
        "({s:,.0f} GiB of it at {bpp:.0f} B per parameter); an H100 has {h:.0f} GiB -> {verdict}",
        "{b:>5.1f} Mrd. Parameter: volles Training braucht {gib:,.0f} GiB "
        "(davon {s:,.0f} GiB zu {bpp:.0f} B pro Parameter); eine H100 hat {h:.0f} GiB → {verdict}",
        b=billions,
        gib=report.total / GIB,
        s=states[billions] / GIB,
        bpp=report.per_param(n_params),
        h=DEVICE_MEMORY["H100"] / GIB,
        verdict=text("fits", "passt") if report.fits else text("does not fit", "passt nicht"),
    )
# en: FSDP/ZeRO-3 splits the 18 B per parameter N ways; each GPU keeps its batch's activations
# de: FSDP/ZeRO-3 teilt die 18 B pro Parameter N-fach; jede GPU behält die Aktivierungen ihres
# de: Batches
sharded = {n: states[70] / n + activations[70] for n in (8, 64)}
say(
    "70B with FSDP over 8 GPUs: {g:,.0f} GiB each, still more than {h:.0f} GiB; "
    "over 64: {g64:,.0f} GiB.",
    "70 Mrd. Parameter mit FSDP auf 8 GPUs: je {g:,.0f} GiB, immer noch mehr als {h:.0f} GiB; "
    "auf 64 GPUs: je {g64:,.0f} GiB.",
    g=sharded[8] / GIB,
    h=DEVICE_MEMORY["H100"] / GIB,
    g64=sharded[64] / GIB,
)
assert needed[70] > DEVICE_MEMORY["H100"] and needed[1.5] < DEVICE_MEMORY["H100"]
assert sharded[8] > DEVICE_MEMORY["H100"] > sharded[64]

# %% [markdown] lang="en"
# **Time.** A model that fits may still take weeks on one device; N devices working on N parts of
# the batch could finish in 1/N of the time, if the communication stays small. Four ways to split:
#
# - **data parallelism (DDP)**: every device holds the whole model and trains on its part of the
#   batch; the gradients are averaged with an **all-reduce** after each backward pass;
# - **FSDP / ZeRO-3**: like DDP, but each device keeps only 1/N of the weights, gradients and
#   optimizer states; it **all-gathers** a layer's weights just before using it and
#   **reduce-scatters** the gradients, so each device receives only the sum for its own part;
# - **tensor parallelism**: each matrix is split, every device computes part of each layer's
#   output; an all-reduce (or all-gather) per layer, so it needs a fast link (NVLink, within a node);
# - **pipeline parallelism**: the layers are split into stages on different devices; activations
#   travel from stage to stage, and micro-batches keep the stages busy.

# %% [markdown] lang="de"
# **Zeit.** Ein Modell, das passt, braucht auf einem Gerät vielleicht trotzdem Wochen; N Geräte,
# die an N Teilen des Batches arbeiten, könnten in 1/N der Zeit fertig sein, wenn die Kommunikation
# klein bleibt. Es gibt vier Arten, die Arbeit aufzuteilen:
#
# - **Datenparallelität (DDP)**: Jedes Gerät hält das ganze Modell und trainiert auf seinem Teil des
#   Batches; die Gradienten werden nach jedem Rückwärtsdurchlauf per **All-Reduce** gemittelt;
# - **FSDP / ZeRO-3**: wie DDP, aber jedes Gerät behält nur 1/N der Gewichte, Gradienten und
#   Optimiererzustände; es sammelt die Gewichte einer Schicht per **All-Gather** kurz vor ihrer
#   Verwendung ein und verteilt die Gradienten per **Reduce-Scatter**, sodass jedes Gerät nur die
#   Summe für seinen eigenen Teil bekommt;
# - **Tensorparallelität**: Jede Matrix wird aufgeteilt, jedes Gerät rechnet einen Teil der Ausgabe
#   jeder Schicht; ein All-Reduce (oder All-Gather) pro Schicht, deshalb braucht sie eine schnelle
#   Verbindung (NVLink, innerhalb eines Knotens);
# - **Pipeline-Parallelität**: Die Schichten werden in Stufen auf verschiedene Geräte verteilt;
#   Aktivierungen wandern von Stufe zu Stufe, und Micro-Batches halten die Stufen beschäftigt.

# %%
# en: two rows of panels: what each of 4 devices STORES (weights, gradients, optimizer states of
# en: each layer) and what it COMPUTES (which examples of the batch, in which layers).
# en: Colour = device; grey = every device (a full copy, or all devices on every example).
# de: zwei Reihen: was jedes der 4 Geräte SPEICHERT (Gewichte, Gradienten, Optimiererzustände
# de: jeder Schicht) und was es RECHNET (welche Beispiele des Batches, in welchen Schichten).
# de: Farbe = Gerät; grau = jedes Gerät (eine volle Kopie oder alle Geräte an jedem Beispiel).
layers, columns, devices_n = 4, 8, 4
EVERY = -1  # en: held or computed by every device | de: von jedem Gerät gehalten oder gerechnet
slices = np.tile(np.arange(columns) * devices_n // columns, (layers, 1))  # 1/N of each row
by_layer = np.tile((np.arange(layers) * devices_n // layers)[:, None], (1, columns))
everyone = np.full((layers, columns), EVERY)
strategies = {  # en: name: (stored, computed) | de: Name: (gespeichert, gerechnet)
    text("data parallel (DDP)", "datenparallel (DDP)"): (everyone, slices),
    "FSDP / ZeRO-3": (slices, slices),
    text("tensor parallel", "Tensorparallel"): (slices, everyone),
    text("pipeline", "Pipeline"): (by_layer, by_layer),
}
notes = {  # en: what moves between the devices | de: was zwischen den Geräten wandert
    text("data parallel (DDP)", "datenparallel (DDP)"): text(
        "all-reduce of the gradients", "All-Reduce der Gradienten"
    ),
    "FSDP / ZeRO-3": text(
        "per layer: all-gather its weights,\ncompute, free; reduce-scatter gradients",
        "pro Schicht: Gewichte per All-Gather holen,\nrechnen, freigeben; "
        "Reduce-Scatter der Gradienten",
    ),
    text("tensor parallel", "Tensorparallel"): text(
        "each device: its slice of every matrix,\nall-reduce per layer",
        "jedes Gerät: sein Teil jeder Matrix,\nein All-Reduce pro Schicht",
    ),
    text("pipeline", "Pipeline"): text(
        "activations from stage to stage", "Aktivierungen von Stufe zu Stufe"
    ),
}
colours = plt.get_cmap("tab10")
palette = [colours(i) for i in range(devices_n)] + [
    (0.82, 0.82, 0.82, 1.0)
]  # en: last: grey | de: zuletzt: grau
fig, axes = plt.subplots(2, 4, figsize=(13, 5.6))
for col, (name, grids) in enumerate(strategies.items()):
    for row, grid in enumerate(grids):
        ax = axes[row, col]
        ax.imshow(np.take(palette, np.where(grid == EVERY, devices_n, grid), axis=0))
        ax.set_xticks(np.arange(columns) - 0.5, minor=True)
        ax.set_yticks(np.arange(layers) - 0.5, minor=True)
        ax.grid(which="minor", color="white", linewidth=1.5)
        ax.tick_params(which="both", length=0)
        ax.set_xticks([]), ax.set_yticks([])
        ax.set_ylabel(text("layer", "Schicht"), fontsize=8)
        if row == 0:
            ax.set_title(name, fontsize=11)
            ax.set_xlabel(
                text(
                    "each layer's parameters, gradients,\nAdam moments",
                    "Parameter, Gradienten, Adam-Momente\njeder Schicht",
                ),
                fontsize=8,
            )
        else:
            ax.set_xlabel(text("batch (examples)", "Batch (Beispiele)"), fontsize=8)
            ax.text(
                0.5, -0.42, notes[name], transform=ax.transAxes, ha="center", va="top", fontsize=8
            )
axes[0, 0].annotate(
    text("stores", "speichert"),
    (-0.3, 0.5),
    xycoords="axes fraction",
    rotation=90,
    va="center",
    fontsize=11,
    weight="bold",
)
axes[1, 0].annotate(
    text("computes", "rechnet"),
    (-0.3, 0.5),
    xycoords="axes fraction",
    rotation=90,
    va="center",
    fontsize=11,
    weight="bold",
)
handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in palette]
legend = [text("device {i}", "Gerät {i}", i=i) for i in range(devices_n)]
fig.legend(
    handles,
    [*legend, text("every device", "jedes Gerät")],
    loc="lower center",
    ncol=devices_n + 1,
    fontsize=9,
    frameon=False,
)
fig.suptitle(
    text(
        "What each kind of parallelism splits, on 4 devices (colour = device)",
        "Was jede Art von Parallelität aufteilt, auf 4 Geräten (Farbe = Gerät)",
    )
)
fig.tight_layout(rect=(0.02, 0.06, 1, 1))
plt.show()

# en: what each device stores of each layer; FSDP stores like tensor parallelism, computes like DDP
# de: was jedes Gerät von jeder Schicht speichert; FSDP speichert wie Tensorparallelität und rechnet
# de: wie DDP
for name, (stored, _) in strategies.items():
    share = [np.mean((stored == d) | (stored == EVERY)) for d in range(devices_n)]
    say(
        "{name:22} each device stores {p:.0f}% of the model's states",
        "{name:22} Jedes Gerät speichert {p:.0f} % der Zustände des Modells.",
        name=name,
        p=100 * share[0],
    )
    assert np.allclose(share, share[0])
panels = [np.stack(grids) for grids in strategies.values()]
assert all(not np.array_equal(a, b) for i, a in enumerate(panels) for b in panels[i + 1 :])
fsdp = strategies["FSDP / ZeRO-3"]
assert all(sorted(np.unique(row)) == list(range(devices_n)) for row in fsdp[0])
assert np.array_equal(fsdp[1], next(iter(strategies.values()))[1])

# %% [markdown] lang="en"
# The same four ways in bytes: what device 0 holds when 4 devices train Llama-3-8B with AdamW in
# mixed precision (a batch of 8 sequences of 2,048 tokens), computed part by part with lesson
# 03's fit calculator (`utils/parallel/pictures.py` says what each strategy splits).

# %% [markdown] lang="de"
# Dieselben vier Arten in Bytes: was Gerät 0 hält, wenn 4 Geräte Llama-3-8B mit AdamW in Mixed
# Precision trainieren (ein Batch aus 8 Folgen zu 2.048 Tokens), Teil für Teil mit dem Rechner aus
# Lektion 03 berechnet (`utils/parallel/pictures.py` sagt, was jede Strategie aufteilt).

# %%
held = pictures.per_device("Llama-3-8B", devices=4, batch=8, seq=2048)
h100 = DEVICE_MEMORY["H100"]
pictures.draw_memory(
    held,
    h100,
    text("one H100: {g:.0f} GiB", "eine H100: {g:.0f} GiB", g=h100 / GIB),
    text(
        "Llama-3-8B, AdamW, mixed precision, 4 devices",
        "Llama-3-8B, AdamW, Mixed Precision, 4 Geräte",
    ),
)
plt.show()
totals = {name: sum(parts.values()) for name, parts in held.items()}
# en: FSDP and the pipeline split the states alike but keep different things whole
# de: FSDP und die Pipeline teilen die Zustände gleich, behalten aber Verschiedenes ganz
assert held["fsdp"] != held["pp"] and totals["ddp"] < totals["single"]

# %% [markdown] lang="en"
# Data parallelism only splits the activations; the three others also split the 16 bytes per
# parameter. FSDP and the pipeline end up close, for different reasons: FSDP briefly holds one
# gathered layer, the pipeline's first stage holds the embedding; tensor parallelism keeps the
# inputs of its split layers whole on every device, so its activations shrink least.

# %% [markdown] lang="de"
# Datenparallelität teilt nur die Aktivierungen; die drei anderen teilen auch die 16 Bytes pro
# Parameter. FSDP und die Pipeline landen nah beieinander, aus verschiedenen Gründen: FSDP hält kurz
# eine eingesammelte Schicht, die erste Stufe der Pipeline hält das Embedding; Tensorparallelität
# behält die Eingaben ihrer geteilten Schichten auf jedem Gerät ganz, deshalb schrumpfen ihre
# Aktivierungen am wenigsten.

# %% [markdown] lang="en"
# Read the picture by columns. **DDP** stores everything on every device (grey) and splits the
# batch. **FSDP** computes like DDP, on its quarter of the batch through every layer, but stores
# like tensor parallelism: each device keeps a quarter of every layer's parameters, gradients and
# Adam moments, and before a layer runs, the devices all-gather its full weights, use them and
# free them again. That is why FSDP needs no change to the model and sends more than DDP (an
# all-gather per layer in forward and backward, a reduce-scatter instead of the all-reduce; the
# next cell computes how much more).
# **Tensor parallelism** also stores a slice of every matrix, but every device works on every
# example, computing its slice of each layer's output. **Pipelines** give each device whole layers.
#
# **What the collectives cost.** In a **ring all-reduce** each of the N devices sends its array in
# N chunks around a ring: N−1 steps of reduce-scatter (each device ends with the sum of one chunk),
# then N−1 steps of all-gather (everybody gets every summed chunk). Each step sends one chunk of
# size/N, so each device sends **2(N−1)/N of the array**, nearly 2× for large N, independent of N.
# The time is that divided by the link's bandwidth.
#
# **Predict first:** 8 devices average a 7B model's bf16 gradients (14 GB) with a ring
# all-reduce. How many GB does each device send, and how many seconds does that take over the
# PCIe link of two T4s (about 16 GB/s one way)?

# %% [markdown] lang="de"
# Lies das Bild spaltenweise. **DDP** speichert alles auf jedem Gerät (grau) und teilt den Batch.
# **FSDP** rechnet wie DDP, auf seinem Viertel des Batches durch alle Schichten, speichert aber wie
# Tensorparallelität: Jedes Gerät behält ein Viertel der Parameter, Gradienten und Adam-Momente
# jeder Schicht; bevor eine Schicht drankommt, sammeln die Geräte ihre vollen Gewichte per
# All-Gather ein, benutzen sie und geben sie wieder frei. Darum kommt FSDP ohne Änderung am Modell
# aus und sendet mehr als DDP (ein All-Gather pro Schicht im Vorwärts- und Rückwärtsdurchlauf, ein
# Reduce-Scatter statt des All-Reduce; wie viel mehr, rechnet die nächste Zelle aus).
# **Tensorparallelität** speichert ebenfalls einen Teil jeder Matrix, aber jedes Gerät arbeitet an
# jedem Beispiel und rechnet seinen Teil der Ausgabe jeder Schicht. **Pipelines** geben jedem Gerät
# ganze Schichten.
#
# **Was die kollektiven Operationen kosten.** Bei einem **Ring-All-Reduce** schickt jedes der N
# Geräte sein Array in N Stücken im Kreis herum: N−1 Schritte Reduce-Scatter (jedes Gerät hat danach
# die Summe eines Stücks), dann N−1 Schritte All-Gather (alle bekommen jedes summierte Stück). Jeder
# Schritt sendet ein Stück, ein N-tel des Arrays; also sendet jedes Gerät **2(N−1)/N des Arrays**,
# für großes N fast das Doppelte, nahezu unabhängig von N. Die Zeit ist das geteilt durch die
# Bandbreite der Verbindung.
#
# **Erst vorhersagen:** 8 Geräte mitteln die bf16-Gradienten eines 7B-Modells (14 GB) per
# Ring-All-Reduce. Wie viele GB sendet jedes Gerät, und wie viele Sekunden dauert das über die
# PCIe-Verbindung zweier T4 (etwa 16 GB/s in eine Richtung)?


# %%
my_gb_sent = None  # en: GB each device sends | de: GB, die jedes Gerät sendet
my_seconds = None  # en: seconds over PCIe | de: Sekunden über PCIe


# %%
def ring_allreduce_bytes(n_bytes, devices):
    return 2 * (devices - 1) / devices * n_bytes


# en: GB/s in one direction. T4: PCIe Gen3 x16 (utils.platform.chips); NVLink: NVIDIA data sheets
# en: (A100: NVLink 3, 600 GB/s both directions; H100 SXM: NVLink 4, 900 GB/s), as of 2026-11.
# de: GB/s in eine Richtung. T4: PCIe Gen3 x16 (utils.platform.chips); NVLink: NVIDIA-Datenblätter
# de: (A100: NVLink 3, 600 GB/s in beide Richtungen; H100 SXM: NVLink 4, 900 GB/s),
# de: Stand: November 2026.
links = {
    "2× T4, PCIe Gen3 x16": pcie_gbs(3, 16),
    "A100, NVLink 3": 600 / 2,
    "H100 SXM, NVLink 4": 900 / 2,
}
gradient_bytes = (
    7_000_000_000 * 2
)  # en: a 7B model's bf16 gradients | de: bf16-Gradienten eines 7B-Modells
for n in (2, 4, 8):
    sent = ring_allreduce_bytes(gradient_bytes, n)
    say(
        "N = {n}: each device sends {f:.2f} × {total:.0f} GB = {gb:.1f} GB per step",
        "N = {n}: Jedes Gerät sendet {f:.2f} × {total:.0f} GB = {gb:.1f} GB pro Schritt",
        n=n,
        total=gradient_bytes / 1e9,
        f=sent / gradient_bytes,
        gb=sent / 1e9,
    )
for link, gbs in links.items():
    say(
        "{link:22}: {gbs:6.1f} GB/s -> {s:.2f} s per all-reduce of the 7B gradients on 8 devices",
        "{link:22}: {gbs:6.1f} GB/s → {s:.2f} s pro All-Reduce der 7B-Gradienten auf 8 Geräten",
        link=link,
        gbs=gbs,
        s=ring_allreduce_bytes(gradient_bytes, 8) / (gbs * 1e9),
    )
assert ring_allreduce_bytes(100, 1) == 0 and ring_allreduce_bytes(100, 2) == 100
pcie = links["2× T4, PCIe Gen3 x16"]
reveal(my_gb_sent, ring_allreduce_bytes(gradient_bytes, 8) / 1e9, unit="GB")
reveal(my_seconds, ring_allreduce_bytes(gradient_bytes, 8) / (pcie * 1e9), unit="s")

# en: the algorithm, simulated: which partial sums each device holds after each step
# de: der Algorithmus, simuliert: welche Teilsummen jedes Gerät nach jedem Schritt hält
pictures.draw_ring(4)
plt.show()
ring_states, ring_sends = pictures.ring_allreduce(4)
chunks_sent = sum(1 for step in ring_sends for src, _, _ in step if src == 0)
assert chunks_sent / 4 == ring_allreduce_bytes(1, 4)
assert all(len(chunk) == 4 for row in ring_states[-1] for chunk in row)

# en: FSDP: all-gather the 16-bit weights in forward and again in backward, reduce-scatter the
# en: gradients; each of the three sends (N-1)/N of the array (ZeRO, arXiv:1910.02054, §7)
# de: FSDP holt die 16-Bit-Gewichte im Vorwärts- und noch einmal im Rückwärtsdurchlauf per
# de: All-Gather und verteilt die Gradienten per Reduce-Scatter; jede der drei Operationen sendet
# de: (N−1)/N des Arrays (ZeRO, arXiv:1910.02054, §7)
fsdp_sent = 3 * (8 - 1) / 8 * gradient_bytes
ddp_sent = ring_allreduce_bytes(gradient_bytes, 8)
say(
    "FSDP on 8 devices: {f:.1f} GB per device and step, {r:.1f}× DDP's {d:.1f} GB",
    "FSDP auf 8 Geräten: {f:.1f} GB pro Gerät und Schritt, "
    "das {r:.1f}-Fache der {d:.1f} GB von DDP",
    f=fsdp_sent / 1e9,
    r=fsdp_sent / ddp_sent,
    d=ddp_sent / 1e9,
)
assert fsdp_sent > ddp_sent

# %% [markdown] lang="en"
# ## 2. DDP and FSDP2 with torch.distributed, for real
#
# `torch.distributed` runs **one process per device**. The processes find each other through
# environment variables and talk through a backend: **gloo** on CPUs, **NCCL** on NVIDIA GPUs. In a
# notebook, `torch.multiprocessing.spawn` fails: it pickles the function it starts, and a function
# defined in the notebook cannot be pickled into a new process (Lightning issues #7550, #10511). The
# way that works in Jupyter, on Colab and on Kaggle is a **script** started by `torchrun`. The
# course's script is `utils/parallel/ddp_demo.py` (open it): it trains a small MLP with DDP, then with FSDP2,
# and compares both with one process that trains on the whole batch. The cell runs it with
# `python -m torch.distributed.run --standalone --nproc_per_node=2` (that is `torchrun`) and reads
# the JSON it writes:

# %% [markdown] lang="de"
# ## 2. DDP und FSDP2 mit torch.distributed, in echten Prozessen
#
# `torch.distributed` startet **einen Prozess pro Gerät**. Die Prozesse finden sich über
# Umgebungsvariablen und sprechen über ein Backend miteinander: **gloo** auf CPUs, **NCCL** auf
# NVIDIA-GPUs. In einem Notebook scheitert `torch.multiprocessing.spawn`: Es serialisiert die
# Funktion, die es startet, mit `pickle`, und eine im Notebook definierte Funktion lässt sich so
# nicht an einen neuen Prozess übergeben (Lightning-Issues #7550, #10511). Was in Jupyter, auf Colab
# und auf Kaggle funktioniert, ist ein **Skript**, das `torchrun` startet. Das Skript des Kurses ist
# `utils/parallel/ddp_demo.py` (öffne es): Es trainiert ein kleines MLP mit DDP, dann mit FSDP2, und
# vergleicht beide mit einem Prozess, der auf dem ganzen Batch trainiert. Die Zelle startet es mit
# `python -m torch.distributed.run --standalone --nproc_per_node=2` (das ist `torchrun`) und liest
# das JSON, das es schreibt:

# %%
SCRIPT = Path(utils.__file__).parent / "parallel" / "ddp_demo.py"
# en: NCCL where two NVIDIA GPUs are (Kaggle's T4 x2), else gloo on the CPU
# de: NCCL, wo zwei NVIDIA-GPUs sind (Kaggles T4 x2), sonst gloo auf der CPU
backend = "nccl" if torch.cuda.device_count() >= 2 else "gloo"


def torchrun(processes: int, *options: str) -> dict:
    out = Path(tempfile.mkdtemp()) / "result.json"
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={processes}",
        str(SCRIPT),
        "--out",
        str(out),
        "--backend",
        backend,
        *options,
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run(command, check=True, timeout=300, env=env, capture_output=True, text=True)
    return json.loads(out.read_text())


two = torchrun(2, "--checks")
say(
    "DDP ({b}, {w} processes, {rows} rows each): largest |DDP − one process| = {d:.1e} "
    "(the weights moved by {m:.2f})",
    "DDP ({b}, {w} Prozesse, je {rows} Zeilen): größte |DDP − ein Prozess| = {d:.1e} "
    "(die Gewichte haben sich um {m:.2f} bewegt)",
    b=two["backend"],
    w=two["world_size"],
    rows=two["ddp_rows_per_rank"],
    d=two["ddp_max_diff"],
    m=two["ddp_moved"],
)
say(
    "FSDP2: each rank holds {local} of {total} parameters; largest |FSDP − one process| = {d:.1e}",
    "FSDP2: Jeder Rang hält {local} von {total} Parametern; größte |FSDP − ein Prozess| = {d:.1e}",
    local=two["fsdp_local_params"],
    total=two["fsdp_total_params"],
    d=two["fsdp_max_diff"],
)
# en: DDP = one process on the whole batch, up to float rounding
# de: DDP = ein Prozess auf dem ganzen Batch, bis auf Rundung
assert two["world_size"] == 2 and two["ddp_max_diff"] < 1e-5 < two["ddp_moved"]
# en: each rank holds half of the parameters, and training gives the same weights
# de: jeder Rang hält die Hälfte der Parameter, und das Training ergibt dieselben Gewichte
assert two["fsdp_local_params"] == [two["fsdp_total_params"] // 2] * 2
assert two["fsdp_max_diff"] < 1e-5

# %% [markdown] lang="en"
# Why are they equal? Each rank's loss is the **mean** over its 32 rows; DDP's all-reduce sums the
# two gradients and divides by 2, which is the mean over all 64 rows: the full-batch gradient. Same
# seed, same start, same steps. (Lab 08 has you write this step rank by rank.)
#
# **Communication vs. compute.** The same script times an all-reduce of 16 MiB and one training step
# of a 512-wide MLP (2.1 MB of gradients), with and without the gradient all-reduce (DDP's
# `no_sync()`), for 1 and for 2 processes. Scaling efficiency = throughput of 2 processes /
# (2 × throughput of 1):

# %% [markdown] lang="de"
# Warum sind sie gleich? Der Verlust jedes Rangs ist der **Mittelwert** über seine 32 Zeilen; das
# All-Reduce von DDP summiert die beiden Gradienten und teilt durch 2, das ist der Mittelwert über
# alle 64 Zeilen: der Gradient des ganzen Batches. Gleicher Seed, gleicher Start, gleiche Schritte.
# (In Lab 08 schreibst du diesen Schritt Rang für Rang.)
#
# **Kommunikation gegen Rechnung.** Dasselbe Skript misst ein All-Reduce von 16 MiB und einen
# Trainingsschritt eines MLP mit Breite 512 (2,1 MB Gradienten), mit und ohne das All-Reduce der
# Gradienten (`no_sync()` von DDP), für 1 und für 2 Prozesse. Skalierungseffizienz = Durchsatz von
# 2 Prozessen / (2 × Durchsatz von 1):

# %%
one = torchrun(1)
efficiency = two["samples_per_s"] / (2 * one["samples_per_s"])
say(
    "all-reduce of {mib:.0f} MiB over {b}: {ms:.1f} ms -> bus bandwidth {gbs:.2f} GB/s",
    "All-Reduce von {mib:.0f} MiB über {b}: {ms:.1f} ms → Busbandbreite {gbs:.2f} GB/s",
    mib=two["allreduce_bytes"] / 2**20,
    b=two["backend"],
    ms=two["allreduce_s"] * 1e3,
    gbs=two["allreduce_bus_gbs"],
)
for result in (one, two):
    say(
        "{w} process(es): step {s:.1f} ms, of it compute {c:.1f} ms, "
        "all-reduce not hidden {a:.1f} ms; {sps:,.0f} examples/s",
        "{w} Prozess(e): Schritt {s:.1f} ms, davon Rechnung {c:.1f} ms, "
        "nicht verdecktes All-Reduce {a:.1f} ms; {sps:,.0f} Beispiele/s",
        w=result["world_size"],
        s=result["step_s"] * 1e3,
        c=result["compute_s"] * 1e3,
        a=max(0.0, result["step_s"] - result["compute_s"]) * 1e3,
        sps=result["samples_per_s"],
    )
say(
    "scaling efficiency 1 -> 2 processes: {e:.0f}% on {cores} CPU core(s)",
    "Skalierungseffizienz 1 → 2 Prozesse: {e:.0f} % auf {cores} CPU-Kern(en)",
    e=100 * efficiency,
    cores=os.cpu_count(),
)

# %% [markdown] lang="en"
# Read these numbers honestly. On a 2-core CI machine the two processes share the cores with the
# notebook and each other, and gloo copies through the host's memory: the efficiency lands far below
# 100 % (the cell above prints it: two processes are barely faster than one, or slower).
# That says nothing about GPUs. There the all-reduce of DDP overlaps the backward pass (it starts
# bucket by bucket while later layers still compute), and the link decides: section 1 computed
# how long one 7B all-reduce takes over the T4s' PCIe and over H100 NVLink. Kaggle's T4 x2 has no
# NVLink, its GPUs exchange over PCIe; expect `backend nccl`, a bus bandwidth of a few GB/s (at
# most the PCIe figure above, not measured here: no multi-GPU machine in the course's CI) and an
# efficiency well above the CPU's for this compute-heavy MLP.

# %% [markdown] lang="de"
# Überschätze diese Zahlen nicht. Auf einer CI-Maschine mit 2 Kernen teilen sich die
# beiden Prozesse die Kerne mit dem Notebook und miteinander, und gloo kopiert über den
# Arbeitsspeicher des Hosts: Die Effizienz landet weit unter 100 % (die Zelle oben gibt sie aus:
# Zwei Prozesse sind kaum schneller als einer oder sogar langsamer). Über GPUs sagt das nichts. Dort
# überlappt das All-Reduce von DDP mit dem Rückwärtsdurchlauf (es beginnt Bucket für Bucket, während
# spätere Schichten noch rechnen), und die Verbindung entscheidet: Abschnitt 1 hat ausgerechnet, wie
# lange ein 7B-All-Reduce über PCIe der T4s und über NVLink der H100 dauert. Kaggles T4 x2 hat kein
# NVLink, die beiden GPUs tauschen ihre Daten über PCIe aus; erwarte `backend nccl`, eine
# Busbandbreite von einigen GB/s (höchstens den PCIe-Wert oben; hier nicht gemessen, weil die CI des
# Kurses keine Maschine mit mehreren GPUs hat) und für dieses rechenlastige MLP eine deutlich höhere
# Effizienz als auf der CPU.

# %% [markdown] lang="en"
# ## 3. JAX: meshes and sharding
#
# JAX splits arrays instead of starting processes. A **mesh** arranges devices in a grid with named
# axes; a **`PartitionSpec`** (`P`) says, for each dimension of an array, which mesh axis splits it
# (`None`: not split); a **`NamedSharding`** joins the two. `jit` then compiles one program per
# device with the communication between them (SPMD). Always pass the **axis types** to
# `jax.make_mesh` (`Auto`: the compiler chooses how intermediates are split; `Explicit`: the split is
# part of each array's type): the default changed in JAX 0.9, and Colab runs 0.7.2.

# %% [markdown] lang="de"
# ## 3. JAX: Meshes und Sharding
#
# JAX teilt Arrays auf, statt Prozesse zu starten. Ein **Mesh** ordnet Geräte in einem Gitter mit
# benannten Achsen an; eine **`PartitionSpec`** (`P`) sagt für jede Dimension eines Arrays, welche
# Mesh-Achse sie aufteilt (`None`: nicht aufgeteilt); ein **`NamedSharding`** verbindet beides.
# `jit` kompiliert dann ein Programm pro Gerät samt der Kommunikation dazwischen (SPMD). Gib
# `jax.make_mesh` immer die **Achsentypen** mit (`Auto`: Der Compiler wählt, wie Zwischenergebnisse
# aufgeteilt werden; `Explicit`: Die Aufteilung gehört zum Typ jedes Arrays): Der Standard hat sich
# in JAX 0.9 geändert, und Colab verwendet 0.7.2.

# %%
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

devices = jaxdevices.mesh_devices(8)
mesh = jax.make_mesh(
    (4, 2), ("data", "model"), axis_types=(AxisType.Explicit, AxisType.Explicit), devices=devices
)
TOL = {"rtol": 1e-4, "atol": 1e-4} if devices[0].platform == "cpu" else {"rtol": 2e-2, "atol": 2e-2}
M = jnp.arange(16 * 8, dtype=jnp.float32).reshape(16, 8)
M_sharded = jax.device_put(M, NamedSharding(mesh, P("data", "model")))
sharding.show_layout(M_sharded)
say("type: {t}", "Typ: {t}", t=jax.typeof(M_sharded))
shards = M_sharded.addressable_shards
assert len(shards) == 8 and {s.data.shape for s in shards} == {(4, 4)}
assert np.array_equal(np.asarray(M_sharded), M)

# %% [markdown] lang="en"
# ### A sharded matmul, and the collectives XLA inserts
#
# C = A·B on a line of 8 devices: (1) rows of A split, B whole: no communication; (2) the inner
# dimension split in both: each device holds a partial sum of all of C, added by an **all-reduce**;
# (3) rows of A and columns of B split: each device needs all of B, an **all-gather**.
# `sharding.collectives` counts the collectives in the compiled program:

# %% [markdown] lang="de"
# ### Eine verteilte Matmul und die kollektiven Operationen, die XLA einfügt
#
# C = A·B auf einer Reihe von 8 Geräten: (1) Zeilen von A aufgeteilt, B ganz: keine Kommunikation;
# (2) die innere Dimension in beiden aufgeteilt: Jedes Gerät hält eine Teilsumme des ganzen C, die
# ein **All-Reduce** addiert; (3) Zeilen von A und Spalten von B aufgeteilt: Jedes Gerät braucht das
# ganze B, also ein **All-Gather**. `sharding.collectives` zählt die kollektiven Operationen im
# kompilierten Programm:

# %%
line = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,), devices=devices)
m, k, n_out = 512, 256, 128
A = jax.random.normal(jax.random.key(7), (m, k))
B = jax.random.normal(jax.random.key(8), (k, n_out))
C_single = jnp.matmul(jax.device_put(A, devices[0]), jax.device_put(B, devices[0]))
cases = {
    text("1 rows of A", "1 Zeilen von A"): (P("x", None), P(None, None)),
    text("2 inner dimension k", "2 innere Dimension k"): (P(None, "x"), P("x", None)),
    text("3 rows of A, cols of B", "3 Zeilen von A, Spalten von B"): (P("x", None), P(None, "x")),
}
found = {}
for name, (spec_a, spec_b) in cases.items():
    a_placed = jax.device_put(A, NamedSharding(line, spec_a))
    b_placed = jax.device_put(B, NamedSharding(line, spec_b))
    compiled_mm = jax.jit(jnp.matmul).lower(a_placed, b_placed).compile()
    found[name] = sharding.collectives(compiled_mm)
    say(
        "{name:30} communication: {found}",
        "{name:30} Kommunikation: {found}",
        name=name,
        found=found[name] or text("none", "keine"),
    )
    assert np.allclose(compiled_mm(a_placed, b_placed), C_single, **TOL)
rows_case, inner, gather = found.values()
assert rows_case == {} and {"all-reduce", "reduce-scatter"} & set(inner) and gather

# %% [markdown] lang="en"
# ### A data-parallel step, equal to the one-device step
#
# Data parallelism in JAX is a placement: the batch split over the devices, the parameters
# replicated, and `jit` compiles the ordinary step with the all-reduce of the gradients. Then the
# same by hand with `shard_map`, which gives each device's view: each device computes the loss
# of its rows, `jax.lax.psum` adds them, and `jax.grad` of the whole thing gives the gradient:

# %% [markdown] lang="de"
# ### Ein datenparalleler Schritt, gleich dem Schritt auf einem Gerät
#
# Datenparallelität ist in JAX eine Platzierung: der Batch über die Geräte verteilt, die Parameter
# repliziert, und `jit` kompiliert den gewöhnlichen Schritt samt dem All-Reduce der Gradienten.
# Danach dasselbe von Hand mit `shard_map`, das die Sicht eines Geräts liefert: Jedes Gerät rechnet
# den Verlust seiner Zeilen, `jax.lax.psum` addiert sie, und `jax.grad` des Ganzen liefert den
# Gradienten:


# %%
def loss_fn(params, x, y):
    return jnp.mean((jnp.tanh(x @ params["w1"]) @ params["w2"] - y) ** 2)


keys = jax.random.split(jax.random.key(9), 4)
params = {
    "w1": jax.random.normal(keys[0], (16, 32)) / 4,
    "w2": jax.random.normal(keys[1], (32, 4)) / 6,
}
x_train = jax.random.normal(keys[2], (256, 16))
y_train = jax.random.normal(keys[3], (256, 4))
data_mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,), devices=devices)
replicated, split_batch = NamedSharding(data_mesh, P()), NamedSharding(data_mesh, P("data"))
grad_fn = jax.grad(loss_fn)
parallel = jax.jit(grad_fn, in_shardings=(replicated, split_batch, split_batch))
grads_parallel = parallel(params, x_train, y_train)
grads_single = jax.jit(grad_fn)(
    *[jax.device_put(t, devices[0]) for t in (params, x_train, y_train)]
)
comm = sharding.collectives(parallel.lower(params, x_train, y_train).compile())


def local_loss(params, x, y):
    # en: this device's 32 rows; psum adds the 8 partial means, / 8 gives the mean loss
    # de: die 32 Zeilen dieses Geräts; psum addiert die 8 Teilmittel, / 8 ergibt den mittleren
    # de: Verlust
    return jax.lax.psum(loss_fn(params, x, y), "data") / 8


global_loss = jax.shard_map(
    local_loss, mesh=data_mesh, in_specs=(P(), P("data"), P("data")), out_specs=P()
)
# en: grad of the whole program: JAX differentiates through the psum
# de: grad des ganzen Programms: JAX leitet durch das psum hindurch ab
by_hand = jax.jit(jax.grad(global_loss))
grads_by_hand = by_hand(params, x_train, y_train)
for name in params:
    say(
        "{name}: |jit − one device| = {a:.1e}, |shard_map − one device| = {b:.1e}",
        "{name}: |jit − ein Gerät| = {a:.1e}, |shard_map − ein Gerät| = {b:.1e}",
        name=name,
        a=float(np.abs(np.asarray(grads_parallel[name]) - np.asarray(grads_single[name])).max()),
        b=float(np.abs(np.asarray(grads_by_hand[name]) - np.asarray(grads_single[name])).max()),
    )
    assert np.allclose(grads_parallel[name], grads_single[name], **TOL)
    assert np.allclose(grads_by_hand[name], grads_single[name], **TOL)
say("communication of the jit step: {c}", "Kommunikation des jit-Schritts: {c}", c=comm)
assert comm

# %% [markdown] lang="en"
# `jax.pmap`, which older tutorials use, is in maintenance mode since JAX 0.8.0 (October 2025) and is
# itself built on `jit` and `shard_map` (JAX changelog); new code uses meshes as above.
#
# ## 4. More than one machine, and when it pays
#
# Several machines ("nodes") change the start, not the program: `torchrun --nnodes=2
# --nproc_per_node=8 --rdzv-endpoint=HOST:PORT train.py` on each node (the same script as here), or
# `jax.distributed.initialize()` at the top of a JAX program, after which `jax.devices()` lists the
# devices of every host. A scheduler such as **SLURM** (`srun`) or Kubernetes starts the copies and
# sets the addresses. Between nodes the link is the network (InfiniBand or Ethernet, tens of GB/s at
# best), slower than NVLink inside a node: tensor parallelism stays inside a node, data parallelism
# and FSDP cross nodes.
#
# A cluster is worth its price when the job does not fit on one device (section 1) or when N devices
# finish it N times sooner at the same cost per device-hour, which holds only while the efficiency
# stays high. At 50 % efficiency two devices cost as much as one for twice as long. Lesson 09
# (costs and alternatives) puts prices on these hours.

# %% [markdown] lang="de"
# `jax.pmap`, das ältere Tutorials verwenden, ist seit JAX 0.8.0 (Oktober 2025) im Wartungsmodus und
# selbst auf `jit` und `shard_map` aufgebaut (JAX-Changelog); neuer Code nimmt Meshes wie oben.
#
# ## 4. Mehr als eine Maschine, und wann sich das lohnt
#
# Mehrere Maschinen („Knoten“) ändern den Start, nicht das Programm: `torchrun --nnodes=2
# --nproc_per_node=8 --rdzv-endpoint=HOST:PORT train.py` auf jedem Knoten (dasselbe Skript wie hier)
# oder `jax.distributed.initialize()` am Anfang eines JAX-Programms; danach listet `jax.devices()`
# die Geräte aller Hosts. Ein Scheduler wie **SLURM** (`srun`) oder Kubernetes startet die Kopien
# und setzt die Adressen. Zwischen Knoten ist die Verbindung das Netzwerk (InfiniBand oder Ethernet,
# bestenfalls einige zehn GB/s), langsamer als NVLink innerhalb eines Knotens: Tensorparallelität
# bleibt im Knoten, Datenparallelität und FSDP gehen über Knoten hinweg.
#
# Ein Cluster ist seinen Preis wert, wenn der Job nicht auf ein Gerät passt (Abschnitt 1) oder wenn N
# Geräte ihn N-mal so schnell zum gleichen Preis pro Gerätestunde erledigen; das gilt nur, solange
# die Effizienz hoch bleibt. Bei 50 % Effizienz kosten zwei Geräte so viel wie eines für die
# doppelte Zeit. Lektion 09 (Kosten und Alternativen) setzt Preise für diese Stunden ein.

# %% [markdown] lang="en"
# ### What you should see
#
# | profile | DDP / FSDP2 | efficiency 1 → 2 | JAX mesh |
# |---|---|---|---|
# | CPU (laptop, CI) | gloo, 2 processes, differences ≈ 1e-7 | far below 100 % on 2 busy cores (15–50 % measured here, 2026-11) | 8 simulated CPU devices |
# | Colab T4 | gloo on the CPU (one GPU) | as CPU | 8 simulated CPU devices |
# | Kaggle T4 x2 | NCCL on the 2 GPUs, differences ≈ 1e-7 | not measured here; PCIe Gen3 link | 8 simulated CPU devices |
# | Colab TPU v5e-1 | gloo on the CPU | as CPU | 8 simulated CPU devices |
# | Kaggle TPU v5e-8 | gloo on the CPU | as CPU | the 8 TPU devices |
#
# ## Check yourself
#
# <details><summary>1. 8 GPUs all-reduce 2 GB of gradients in a ring. How much does each send?</summary>
#
# 2·7/8 · 2 GB = 3.5 GB, whatever the number of GPUs, almost: the ring keeps the cost per device
# near 2× the array.
# </details>
#
# <details><summary>2. A 70B model does not fit on one H100 for training. DDP on 8 H100s?</summary>
#
# No: DDP keeps a full copy on each device. FSDP/ZeRO-3 splits weights, gradients and optimizer
# states 8 ways; even that (section 1) needs more devices, or tensor and pipeline parallelism too.
# </details>
#
# <details><summary>3. Each DDP rank sums its loss over its rows instead of averaging. What changes?</summary>
#
# The gradients are N times the per-example ones summed: the step is as if the learning rate were
# batch-size times larger. The mean on each rank, averaged by the all-reduce, equals the full-batch
# mean.
# </details>
#
# ## Summary
#
# - Several devices for memory (FSDP, tensor, pipeline) or for time (data parallelism).
# - Full training with AdamW holds 16 bytes per parameter in fp32 (4 weight, 4 gradient, 8 Adam)
#   and 18 with autocast's 16-bit weight copy; DDP keeps all of them on every device, FSDP 1/N.
# - A ring all-reduce sends 2(N−1)/N of the array per device; the link's bandwidth sets the time.
# - DDP = full-batch training, exactly, with the same seed on every rank; FSDP2 holds 1/N of the
#   parameters per rank and gives the same result. Start them from a notebook with torchrun.
# - JAX: mesh + `PartitionSpec` + `NamedSharding`; the layout decides the collectives; `shard_map`
#   for the per-device view.
#
# **Glossary:** data/tensor/pipeline parallelism, FSDP, ZeRO, rank, world size, process group,
# gloo, NCCL, all-reduce, all-gather, reduce-scatter, bus bandwidth, scaling efficiency, mesh,
# PartitionSpec, NamedSharding, shard_map, node, SLURM.
#
# **Next:** lab 08 (ring bytes, a DDP step rank by rank, shard shapes, a data-parallel gradient),
# then lesson 09: costs and alternatives.

# %% [markdown] lang="de"
# ### Was du sehen solltest
#
# | Profil | DDP / FSDP2 | Effizienz 1 → 2 | JAX-Mesh |
# |---|---|---|---|
# | CPU (Laptop, CI) | gloo, 2 Prozesse, Abweichungen ≈ 10⁻⁷ | weit unter 100 % auf 2 belegten Kernen (hier 15–50 % gemessen, Stand: November 2026) | 8 simulierte CPU-Geräte |
# | Colab T4 | gloo auf der CPU (eine GPU) | wie CPU | 8 simulierte CPU-Geräte |
# | Kaggle T4 x2 | NCCL auf den 2 GPUs, Abweichungen ≈ 10⁻⁷ | hier nicht gemessen; PCIe-Gen3-Verbindung | 8 simulierte CPU-Geräte |
# | Colab TPU v5e-1 | gloo auf der CPU | wie CPU | 8 simulierte CPU-Geräte |
# | Kaggle TPU v5e-8 | gloo auf der CPU | wie CPU | die 8 TPU-Geräte |
#
# ## Prüf dich selbst
#
# <details><summary>1. 8 GPUs addieren 2 GB Gradienten per Ring-All-Reduce. Wie viel sendet jede?</summary>
#
# 2 · 7/8 · 2 GB = 3,5 GB, und das fast unabhängig von der Zahl der GPUs: Der Ring hält die Kosten
# pro Gerät nahe beim Doppelten des Arrays.
# </details>
#
# <details><summary>2. Ein 70B-Modell passt zum Training nicht auf eine H100. DDP auf 8 H100?</summary>
#
# Nein: DDP hält auf jedem Gerät eine volle Kopie. FSDP/ZeRO-3 teilt Gewichte, Gradienten und
# Optimiererzustände in 8 Teile; selbst dann reicht es nicht (Abschnitt 1): Du brauchst mehr Geräte
# oder zusätzlich Tensor- und Pipeline-Parallelität.
# </details>
#
# <details><summary>3. Jeder DDP-Rang summiert seinen Verlust über seine Zeilen, statt zu mitteln. Was ändert sich?</summary>
#
# Die Gradienten werden zur Summe über die Beispiele statt zu ihrem Mittel: Der Schritt wirkt, als
# wäre die Lernrate mit der Batchgröße multipliziert. Richtig ist der Mittelwert auf jedem Rang; vom
# All-Reduce gemittelt, ergibt er genau den Mittelwert über den ganzen Batch.
# </details>
#
# ## Zusammenfassung
#
# - Mehrere Geräte für Speicher (FSDP, Tensor, Pipeline) oder für Zeit (Datenparallelität).
# - Volles Training mit AdamW hält in fp32 16 Bytes pro Parameter (4 Gewicht, 4 Gradient, 8 Adam),
#   mit der 16-Bit-Kopie von autocast 18; DDP hält alle auf jedem Gerät, FSDP nur 1/N davon.
# - Ein Ring-All-Reduce sendet pro Gerät 2(N−1)/N des Arrays; die Bandbreite der Verbindung
#   bestimmt die Zeit.
# - DDP = Training mit dem ganzen Batch, exakt, mit demselben Seed auf jedem Rang; FSDP2 hält 1/N
#   der Parameter pro Rang und liefert dasselbe Ergebnis. Aus einem Notebook startest du sie mit
#   torchrun.
# - JAX: Mesh + `PartitionSpec` + `NamedSharding`; die Aufteilung bestimmt die kollektiven
#   Operationen; `shard_map` für die Sicht eines Geräts.
#
# **Glossar:** Daten-/Tensor-/Pipeline-Parallelität, FSDP, ZeRO, Rang, World Size, Prozessgruppe,
# gloo, NCCL, All-Reduce, All-Gather, Reduce-Scatter, Busbandbreite, Skalierungseffizienz, Mesh,
# PartitionSpec, NamedSharding, shard_map, Knoten, SLURM.
#
# **Weiter:** Lab 08 (Ring-Bytes, ein DDP-Schritt Rang für Rang, Shard-Formen, ein datenparalleler
# Gradient), dann Lektion 09: Kosten und Alternativen.

# %% tags=["guard"] jupyter={"source_hidden": true}
assert cpu_count == 8 or devices[0].platform == "tpu"
# en: only what holds under any load: on shared cores it can even look superlinear
# de: nur, was unter jeder Last gilt: auf geteilten Kernen wirkt es mitunter sogar überlinear
assert math.isfinite(efficiency) and efficiency > 0 and one["world_size"] == 1
