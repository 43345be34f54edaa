# ---
# jupyter:
#   course:
#     accelerator: GPU
#     duration:
#       cpu: 25
#       t4: 30
#     level: 1
#     profiles:
#     - CPU
#     - Colab T4
#     - Kaggle T4 x2
#     - Colab TPU
#     - Kaggle TPU
#     - NVIDIA
#     - MPS
#     title:
#       de: Wo liegen meine Tensoren?
#       en: 'Device placement: where do my tensors live?'
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# A typical glossary page moves its model and its inputs with two lines, `model.to(device)` and
# `inputs.to(device)` (claim C7 in `docs/claims.md`). Behind them sit the walls everyone hits on the way to a GPU:
# "Expected all tensors to be on the same device", "invalid device ordinal" from code written for
# two GPUs, a training loop that waits for its data, timings that lie because the GPU works
# asynchronously, and an out-of-memory error that ends the session. In this lesson you make each
# of them happen on purpose, measure it and fix it. You will
#
# - choose a device the modern way, and list every device of the machine,
# - see what `.to()` returns for a tensor and for a model,
# - reproduce the mixed-device error and let a helper say which tensor lives where,
# - measure host↔device copies in GB/s (pageable vs. pinned memory) against the link's
#   theoretical figure, and compare transfer time with compute time,
# - catch an asynchronous timing in the act,
# - read GPU memory counters, estimate sizes and survive an out-of-memory error;
# - and, in an optional deeper part at the end, find the batch size that fits, address two GPUs
#   without hard-coding `cuda:1`, and read `nvidia-smi` from code.
#
# On a machine without a GPU every cell still runs: where a GPU effect cannot happen, the cell runs
# the CPU version of it and says what a T4 shows.

# %% [markdown] lang="de"
# Eine typische Glossarseite verschiebt Modell und Eingaben mit zwei Zeilen, `model.to(device)` und
# `inputs.to(device)` (Behauptung C7 in `docs/claims.md`). Dahinter warten die Hürden, an denen jede
# und jeder auf dem Weg zur GPU hängen bleibt: „Expected all tensors to be on the same device“,
# „invalid device ordinal“ aus Code, der für zwei GPUs geschrieben wurde, eine Trainingsschleife,
# die auf ihre Daten wartet, Zeitmessungen, die lügen, weil die GPU asynchron arbeitet, und ein
# Out-of-Memory-Fehler, der die Sitzung beendet. In dieser Lektion führst du jede davon absichtlich
# herbei, misst sie und behebst sie. Du wirst
#
# - ein Gerät auf die heutige Art wählen und alle Geräte der Maschine auflisten,
# - sehen, was `.to()` für einen Tensor und was es für ein Modell zurückgibt,
# - den Fehler mit gemischten Geräten nachstellen und dir von einem Helfer sagen lassen, welcher
#   Tensor wo liegt,
# - Kopien zwischen Host und Gerät in GB/s messen (auslagerbarer und gepinnter Speicher im
#   Vergleich), mit dem theoretischen Wert der Verbindung vergleichen und der Rechenzeit
#   gegenüberstellen,
# - eine asynchrone Zeitmessung auf frischer Tat ertappen,
# - die Speicherzähler der GPU lesen, Größen abschätzen und einen Out-of-Memory-Fehler abfangen,
#   ohne dass die Sitzung endet;
# - und in einem freiwilligen Vertiefungsteil am Ende die Batchgröße finden, die passt, zwei GPUs
#   ansprechen, ohne `cuda:1` fest hinzuschreiben, und `nvidia-smi` aus Code lesen.
#
# Auch auf einer Maschine ohne GPU läuft jede Zelle: Wo ein GPU-Effekt nicht auftreten kann, führt
# die Zelle die CPU-Variante davon aus und sagt, was eine T4 zeigt.

# %%
import inspect
import math
import re
import time

import torch

from utils import units
from utils.i18n import get_language, say, text
from utils.memory import usage
from utils.platform import hardware, nvsmi, placement, profiles, runtime
from utils.platform.chips import CHIPS, LINK_SOURCE
from utils.predict import reveal
from utils.sim import memsim
from utils.timing import bench, transfers
from utils.timing.sync import synchronizer

hw = hardware.detect()
profile = profiles.hardware_profile(runtime.detect_platform(), hw)
MIB, GIB = units.MIB, units.GIB
print(profile.label, "|", hw.summary())

# %% [markdown] lang="en"
# ## 1. Choosing a device today
#
# A typical glossary page chooses its device like this (claim C5):
#
# ```python
# device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
# ```
#
# It misses a Mac's GPU (`mps`) and Intel GPUs (`xpu`). Since PyTorch 2.6, `torch.accelerator`
# knows every accelerator backend; `utils.platform.placement.pick_device()` asks it first and falls back to
# asking CUDA and MPS directly on older PyTorch versions. Here is the whole helper:

# %% [markdown] lang="de"
# ## 1. Ein Gerät wählen, wie es heute üblich ist
#
# Eine typische Glossarseite wählt ihr Gerät so (Behauptung C5):
#
# ```python
# device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
# ```
#
# Dabei übersieht sie die GPU eines Macs (`mps`) und die GPUs von Intel (`xpu`). Seit PyTorch 2.6
# kennt `torch.accelerator` alle Beschleuniger-Backends; `utils.platform.placement.pick_device()`
# fragt zuerst dort und fragt bei älteren PyTorch-Versionen direkt bei CUDA und MPS nach. Hier ist
# der ganze Helfer:

# %%
print(inspect.getsource(placement.pick_device))

# en: the glossary's line
# de: die Zeile der Glossarseite
seed_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
device = placement.pick_device()
say("glossary line:           {d}", "Zeile der Glossarseite:  {d}", d=seed_device)
say("placement.pick_device(): {d}", "placement.pick_device(): {d}", d=device)
all_devices = [str(d) for d in placement.list_devices()]
say("all devices here:        {d}", "alle Geräte hier:        {d}", d=all_devices)

# %% tags=["guard"] jupyter={"source_hidden": true}
assert (device.type == "cuda") == bool(hw.gpus) and (device.type == "mps") == hw.mps
assert placement.list_devices()[0].type == "cpu"

# %% [markdown] lang="en"
# `cuda` without a number means "the current GPU", normally `cuda:0`. **TPUs** are not in this
# list: PyTorch reaches them through the separate `torch_xla` package (`torch_xla.device()`), and
# this course uses JAX on TPUs (lesson 04). On a TPU runtime, PyTorch in this lesson computes on
# the CPU.

# %% [markdown] lang="de"
# `cuda` ohne Nummer heißt „die aktuelle GPU“, normalerweise `cuda:0`. **TPUs** stehen nicht in
# dieser Liste: PyTorch erreicht sie über das separate Paket `torch_xla` (`torch_xla.device()`), und
# dieser Kurs nutzt auf TPUs JAX (Lektion 04). Auf einer TPU-Laufzeit rechnet PyTorch in dieser
# Lektion auf der CPU.

# %% [markdown] lang="en"
# ## 2. Moving a model and a batch: what `.to()` returns
#
# `.to(device)` looks the same on a tensor and on a model, but it does two different things:
#
# - a **tensor** is *copied*: `.to()` returns a new tensor on the target device, the original stays
#   where it was (and if it already is on the target, you get the very same tensor back, no copy);
# - a **model** (`nn.Module`) is *moved in place*: its parameters change device, and `.to()`
#   returns the same model object.
#
# So `batch.to(device)` on a line of its own does nothing useful: the copy is thrown away. To see
# it we need a second device. With a GPU that is the GPU; on a CPU-only machine we take `meta`,
# a real PyTorch device that stores shapes and dtypes but no numbers. Moving to it costs nothing,
# computing on it gives shapes only, and it refuses to mix devices exactly like a GPU does.

# %% [markdown] lang="de"
# ## 2. Modell und Batch verschieben: was `.to()` zurückgibt
#
# `.to(device)` sieht bei einem Tensor und bei einem Modell gleich aus, tut aber zwei verschiedene
# Dinge:
#
# - Ein **Tensor** wird *kopiert*: `.to()` gibt einen neuen Tensor auf dem Zielgerät zurück, das
#   Original bleibt, wo es war (liegt es schon auf dem Ziel, bekommst du genau denselben Tensor
#   zurück, ohne Kopie).
# - Ein **Modell** (`nn.Module`) wird *an Ort und Stelle verschoben*: Seine Parameter wechseln das
#   Gerät, und `.to()` gibt dasselbe Modellobjekt zurück.
#
# `batch.to(device)` allein in einer Zeile bewirkt also nichts Nützliches: Die Kopie wird
# weggeworfen. Um das zu sehen, brauchen wir ein zweites Gerät. Mit GPU ist das die GPU; auf einer
# reinen CPU-Maschine nehmen wir `meta`, ein echtes PyTorch-Gerät, das Formen und Datentypen
# speichert, aber keine Zahlen. Dorthin zu verschieben kostet nichts, Rechnen darauf liefert nur
# Formen, und gemischte Geräte lehnt es genau wie eine GPU ab.

# %%
other = device if device.type != "cpu" else torch.device("meta")

x = torch.randn(4, 3)
model = torch.nn.Linear(3, 2)
rows = [
    ('x.to("cpu") is x', x.to("cpu") is x),
    (f'x.to("{other.type}") is x', x.to(other) is x),
    (f'x.to("{other.type}").device', x.to(other).device),
    (text("x.device (after)", "x.device (danach)"), x.device),
    (f'model.to("{other.type}") is model', model.to(other) is model),
    ("model.weight.device", model.weight.device),
]
for expression, value in rows:
    # en: a boolean reads True/False in English, ja/nein in German
    # de: ein Wahrheitswert heißt auf Deutsch ja/nein, auf Englisch True/False
    say("{e:<32} {v}", e=expression, v=value if isinstance(value, bool) else str(value))

# en: the classic slip: the copy is thrown away ...
# de: der klassische Fehler: Die Kopie ist weg ...
x.to(other)
# en: ... and x is still on the CPU
# de: … und x liegt noch auf der CPU
assert x.device.type == "cpu"
x = x.to(other)  # en: keep what .to() returns | de: behalte, was .to() zurückgibt
assert x.device.type == model.weight.device.type == other.type
assert model(x).device.type == other.type

# %% [markdown] lang="en"
# The glossary's two lines (claim C7) are right: `model = model.to(device)` (the assignment does no harm) and
# `inputs = inputs.to(device)` (here the assignment is everything). `.to()` also converts dtypes
# (`x.to(torch.float16)`, or `x.to(device, torch.bfloat16)` in one step), and `x.to(other_tensor)`
# takes both device and dtype from `other_tensor`.
#
# ## 3. The mixed-device error, on purpose
#
# A data loader hands out CPU tensors. Forget to move one batch, and the forward pass stops with
# a `RuntimeError`. On a GPU it reads *"Expected all tensors to be on the same device, but found
# at least two devices, cuda:0 and cpu!"*; on `meta` the words differ, the meaning is the same.
# `placement.catch_mixed_devices(name=thing, ...)` runs a block, catches only this error, and says
# which named tensor or model lives where, and which line fixes it:

# %% [markdown] lang="de"
# Die zwei Zeilen der Glossarseite (Behauptung C7) stimmen also: `model = model.to(device)` (die
# Zuweisung schadet nicht) und `inputs = inputs.to(device)` (hier ist die Zuweisung alles). `.to()`
# wandelt auch Datentypen um (`x.to(torch.float16)` oder in einem Schritt
# `x.to(device, torch.bfloat16)`), und `x.to(anderer_tensor)` übernimmt Gerät und Datentyp von
# `anderer_tensor`.
#
# ## 3. Der Fehler mit gemischten Geräten – mit Absicht
#
# Ein DataLoader liefert CPU-Tensoren. Vergisst du, einen Batch zu verschieben, bricht der
# Vorwärtsdurchlauf mit einem `RuntimeError` ab. Auf einer GPU lautet er *„Expected all tensors to
# be on the same device, but found at least two devices, cuda:0 and cpu!“*; auf `meta` sind die
# Worte andere, die Bedeutung dieselbe. `placement.catch_mixed_devices(name=ding, ...)` führt einen
# Block aus, fängt nur diesen Fehler ab und sagt, welcher genannte Tensor oder welches Modell wo
# liegt und welche Zeile es behebt:

# %%
net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
net.to(other)
# en: straight from the data loader: on the CPU
# de: direkt aus dem DataLoader: auf der CPU
batch = torch.randn(8, 16)

with placement.catch_mixed_devices(model=net, batch=batch) as caught:
    net(batch)
assert caught and placement.is_mixed_device_error(caught.error)

# en: the fix the helper printed
# de: die Korrektur, die der Helfer vorschlägt
batch = batch.to(other)
out = net(batch)
say(
    "after the fix: {shape} {on}",
    "nach der Korrektur: {shape} {on}",
    shape=out.shape,
    on=out.device,
)
assert out.device.type == other.type

# %% [markdown] lang="en"
# The same error comes from tensors that are *created* inside a function: `torch.arange`,
# `torch.zeros`, `torch.tensor` all default to the CPU. Every argument can be on the GPU and the
# function still mixes devices:

# %% [markdown] lang="de"
# Derselbe Fehler kommt von Tensoren, die *in* einer Funktion entstehen: `torch.arange`,
# `torch.zeros` und `torch.tensor` legen standardmäßig auf der CPU an. Alle Argumente können auf der
# GPU liegen, und die Funktion mischt trotzdem Geräte:


# %%
def add_position(h):
    # en: on the CPU, wherever h lives
    # de: auf der CPU, wo h auch liegt
    position = torch.arange(h.shape[-1])
    return h + position


def add_position_fixed(h):
    # en: created next to h
    # de: neben h angelegt
    position = torch.arange(h.shape[-1], device=h.device, dtype=h.dtype)
    return h + position


with placement.catch_mixed_devices(h=out) as caught:
    add_position(out)
assert caught
assert add_position_fixed(out).device == out.device

# %% [markdown] lang="en"
# Create new tensors *like* the ones they meet: `device=x.device, dtype=x.dtype`, or
# `torch.zeros_like(x)`, `x.new_zeros(shape)`. Lab 02 has you fix such a function.
#
# ## 4. Host↔device transfers: what moving costs
#
# Between the CPU's memory (the *host*) and a GPU's memory lies a link, on the machines of this
# course PCI Express (PCIe). Its bandwidth is tiny next to the GPU's own memory: a T4 reads its
# memory at 320 GB/s and gets data over PCIe Gen3 x16 at most at 15.75 GB/s.
#
# How fast a copy runs depends on the host memory too:
#
# - **pageable** memory (every ordinary tensor) can be moved around or swapped out by the operating
#   system, so the GPU's copy engine cannot read it directly. The driver first copies it into a
#   page-locked staging buffer, then sends that (CUDA Runtime API documentation, "API
#   synchronization behavior"): two copies, and the first one runs on the CPU.
# - **pinned** (page-locked) memory stays put, so the copy engine reads it directly (DMA, direct
#   memory access). `tensor.pin_memory()` or `DataLoader(..., pin_memory=True)` give you such memory;
#   only then can `.to(device, non_blocking=True)` really run in the background.
#
# `transfers.measure_copy` times a copy with `utils.timing.bench.measure` (warm, synchronised, median). On a
# CPU-only machine there is no link and nothing to pin (pinning needs an accelerator backend), so
# the cell measures a CPU stand-in: copying into a **fresh** buffer, whose pages the operating
# system has to map one by one on first touch, against copying into a buffer that is already mapped
# and **reused**. It shows that preparing memory costs time, nothing more. The real reason pinned
# memory is faster is different: the GPU's copy engine reads it directly by DMA, without the
# staging copy through the CPU that pageable memory needs. Only a GPU can show that.

# %% [markdown] lang="de"
# Lege neue Tensoren *passend* zu denen an, auf die sie treffen: `device=x.device, dtype=x.dtype`,
# oder `torch.zeros_like(x)`, `x.new_zeros(form)`. In Lab 02 reparierst du eine solche Funktion.
#
# ## 4. Kopien zwischen Host und Gerät: was das Verschieben kostet
#
# Zwischen dem Speicher der CPU (dem *Host*) und dem Speicher einer GPU liegt eine Verbindung, auf
# den Maschinen dieses Kurses PCI Express (PCIe). Verglichen mit dem eigenen Speicher der GPU ist
# ihre Bandbreite winzig: Eine T4 liest ihren Speicher mit 320 GB/s und bekommt Daten über PCIe Gen3
# x16 mit höchstens 15,75 GB/s.
#
# Wie schnell eine Kopie läuft, hängt auch vom Host-Speicher ab:
#
# - **Auslagerbaren** Speicher (pageable, jeder gewöhnliche Tensor) darf das Betriebssystem
#   verschieben oder auslagern, deshalb kann die Kopier-Einheit der GPU ihn nicht direkt lesen. Der
#   Treiber kopiert ihn erst in einen gesperrten Zwischenpuffer und schickt dann diesen (CUDA
#   Runtime API, Abschnitt „API synchronization behavior“): zwei Kopien, und die erste macht die
#   CPU.
# - **Gepinnter** (page-locked) Speicher bleibt, wo er ist; die Kopier-Einheit liest ihn direkt
#   (DMA, Direct Memory Access). `tensor.pin_memory()` oder `DataLoader(..., pin_memory=True)`
#   liefern solchen Speicher; nur dann kann `.to(device, non_blocking=True)` wirklich im Hintergrund
#   laufen.
#
# `transfers.measure_copy` misst eine Kopie mit `utils.timing.bench.measure` (aufgewärmt,
# synchronisiert, Median). Auf einer reinen CPU-Maschine gibt es keine Verbindung und nichts zu
# pinnen (Pinnen braucht ein Beschleuniger-Backend), also misst die Zelle die CPU-Fassung desselben
# Effekts: Sie vergleicht als Ersatz eine Kopie in einen **frischen** Puffer, dessen Seiten das
# Betriebssystem beim ersten Zugriff eine nach der anderen einblenden muss, mit einer Kopie in einen
# Puffer, der schon eingeblendet ist und **wiederverwendet** wird. Das zeigt nur, dass das
# Vorbereiten von Speicher Zeit kostet. Der eigentliche Grund, warum gepinnter Speicher schneller
# ist, ist ein anderer: Die Kopier-Einheit der GPU liest ihn direkt per DMA, ohne die Zwischenkopie
# durch die CPU, die auslagerbarer Speicher braucht. Das kann nur eine GPU zeigen.

# %%
nbytes = profile.pick(cpu=64 * MIB, cuda=256 * MIB, mps=256 * MIB)
link = transfers.gpu_link(device.index or 0) if device.type == "cuda" else None

if device.type == "cpu":
    fresh = text("CPU copy, fresh buffer", "CPU-Kopie, frischer Puffer")
    reused = text("CPU copy, reused buffer", "CPU-Kopie, Puffer wiederverwendet")
    copies = [
        transfers.measure_copy(nbytes, fresh=True, label=fresh),
        transfers.measure_copy(nbytes, label=reused),
    ]
else:
    # en: pageable, pinned
    # de: auslagerbar, gepinnt
    kinds = [False, True] if transfers.can_pin() else [False]
    ways = [
        ("cpu", device, text("host→device", "Host→Gerät")),
        (device, "cpu", text("device→host", "Gerät→Host")),
    ]
    copies = []
    for source, target, way in ways:
        for pinned in kinds:
            host = text("pinned", "gepinnt") if pinned else text("pageable", "auslagerbar")
            copies.append(
                transfers.measure_copy(nbytes, source, target, pinned=pinned, label=f"{way} {host}")
            )

say("copying {size}:", "Kopie von {size}:", size=units.format_bytes(nbytes))
for c in copies:
    line = text(
        "  {label:<36} {gbs:6.1f} GB/s   ({t})",
        label=c.label,
        gbs=c.gbs,
        t=units.format_seconds(c.seconds),
    )
    if link:
        line += text(
            "  = {p:.0f}% of the link", "  = {p:.0f} % der Verbindung", p=100 * c.gbs / link.gbs
        )
    print(line)
if link:
    say("link: {link}", "Verbindung: {link}", link=link)
say(
    "ratio {b} / {a}: {r:.1f}×",
    "Verhältnis {b} / {a}: {r:.1f}×",
    a=copies[0].label,
    b=copies[1].label,
    r=copies[1].gbs / copies[0].gbs,
)

# %% tags=["guard"] jupyter={"source_hidden": true}
assert all(c.gbs > 0 and c.nbytes == nbytes for c in copies)

# %% [markdown] lang="en"
# What a T4 shows, from its data sheet and published measurements (checked November 2026):

# %% [markdown] lang="de"
# Was eine T4 zeigt, nach Datenblatt und veröffentlichten Messungen (Stand: November 2026):

# %%
t4_link = CHIPS["T4"].link
low, high = t4_link.typical_pinned_gbs
t4_memory = CHIPS["T4"].bandwidth_gbs
say(
    "T4 link: PCIe Gen{gen} x{lanes} = {gbs:.2f} GB/s per direction, in theory",
    "T4-Verbindung: PCIe Gen{gen} x{lanes} = theoretisch {gbs:.2f} GB/s je Richtung",
    gen=t4_link.generation,
    lanes=t4_link.lanes,
    gbs=t4_link.gbs,
)
say(
    "pinned copies reach about {low:.0f} GB/s ({p:.0f}%); pageable ones clearly less",
    "gepinnte Kopien erreichen etwa {low:.0f} GB/s ({p:.0f} %), auslagerbare deutlich weniger",
    low=low,
    p=100 * low / t4_link.gbs,
)
say(
    "the T4's own memory: {bw:g} GB/s, {r:.0f}× the link",
    "der eigene Speicher der T4: {bw:g} GB/s, das {r:.0f}-Fache der Verbindung",
    bw=t4_memory,
    r=t4_memory / t4_link.gbs,
)
say("source: {s}", "Quelle: {s}", s=text(*LINK_SOURCE))

# %% tags=["guard"] jupyter={"source_hidden": true}
assert 15.7 < t4_link.gbs < 15.8

# %% [markdown] lang="en"
# ### Where tensors live, and what crosses the link
#
# A picture of the two memories and the link between them, with this section's numbers on it:

# %% [markdown] lang="de"
# ### Wo Tensoren liegen und was über die Verbindung geht
#
# Ein Bild der beiden Speicher und der Verbindung dazwischen, mit den Zahlen dieses Abschnitts:

# %% jupyter={"source_hidden": true} cellView="form"
import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, Rectangle


def draw_two_memories(link, memory_gbs):
    # en: The host, the device and the link between them, with the link's and memory's
    # en: figures.
    # de: Host, Gerät und die Verbindung dazwischen, mit den Werten der Verbindung und des
    # de: Speichers.
    fig, ax = plt.subplots(figsize=(9, 3.6))
    ax.set(xlim=(0, 20), ylim=(0, 8))
    ax.axis("off")
    for x, title, body, color in (
        (
            0.3,
            text("host (CPU)", "Host (CPU)"),
            text("host memory\npageable | pinned", "Arbeitsspeicher\nauslagerbar | gepinnt"),
            "#eef",
        ),
        (
            12.7,
            text("device (GPU)", "Gerät (GPU)"),
            text("GPU memory\nmodel, batch on device", "GPU-Speicher\nModell, Batch auf dem Gerät"),
            "#efe",
        ),
    ):
        ax.add_patch(Rectangle((x, 1), 7, 6, facecolor=color, edgecolor="black"))
        ax.text(x + 3.5, 6.3, title, ha="center", fontsize=11, weight="bold")
        ax.text(x + 3.5, 3.6, body, ha="center", va="center", fontsize=9)
    ax.add_artist(
        FancyArrowPatch(
            (7.3, 4.6), (12.7, 4.6), arrowstyle="->", mutation_scale=15, color="tab:blue"
        )
    )
    ax.add_artist(
        FancyArrowPatch(
            (12.7, 3.2), (7.3, 3.2), arrowstyle="->", mutation_scale=15, color="tab:orange"
        )
    )
    ax.text(
        10,
        5.1,
        text(".to(device): batches, the model once", ".to(device): Batches, das Modell einmal"),
        ha="center",
        fontsize=8,
    )
    ax.text(
        10,
        2.4,
        text(".cpu(), .item(), print(tensor)", ".cpu(), .item(), print(tensor)"),
        ha="center",
        fontsize=8,
    )
    ax.text(
        10,
        0.3,
        text(
            "PCIe Gen{gen} x{lanes}: {gbs:.1f} GB/s in theory · the T4's own memory: {mem:g} GB/s",
            "PCIe Gen{gen} x{lanes}: theoretisch {gbs:.1f} GB/s · "
            "der eigene Speicher der T4: {mem:g} GB/s",
            gen=link.generation,
            lanes=link.lanes,
            gbs=link.gbs,
            mem=memory_gbs,
        ),
        ha="center",
        fontsize=8,
        color="gray",
    )
    ax.set_title(
        text(
            "Two memories and a narrow link (T4 numbers)",
            "Zwei Speicher und eine schmale Verbindung (Zahlen der T4)",
        )
    )
    return fig


# %%
draw_two_memories(t4_link, t4_memory)
plt.show()

# %% [markdown] lang="en"
# ### Bandwidth against transfer size
#
# A copy costs a fixed latency plus bytes ÷ bandwidth, so small copies reach only a fraction of
# the link's bandwidth. Below: copies of growing size measured on this machine (host→device on a
# GPU; on a CPU, a copy between two host buffers), and the T4 modelled with 12 GB/s and an
# assumed 10 µs per copy (as in lesson 01).
#
# On a CPU the copy never leaves the machine's memory system, so the caches of lesson 01
# (section 4) shape it: it rises while the fixed cost fades, and it can fall again once source and
# destination together (2 × the bytes) no longer fit L2 or L3 and come from main memory. The dotted
# red lines mark those sizes for this machine; the cell below the plot names the biggest fall and
# the cache level on each side of it.
#
# **Predict first:** in that T4 model, how many milliseconds does one 64 MiB copy take?

# %% [markdown] lang="de"
# ### Bandbreite nach Kopiergröße
#
# Eine Kopie kostet eine feste Latenz plus Bytes ÷ Bandbreite, deshalb erreichen kleine Kopien nur
# einen Bruchteil der Bandbreite der Verbindung. Unten: Kopien wachsender Größe, gemessen auf dieser
# Maschine (auf einer GPU Host→Gerät; auf einer CPU eine Kopie zwischen zwei Host-Puffern), und die
# T4 als Modell mit 12 GB/s und angenommenen 10 µs pro Kopie (wie in Lektion 01).
#
# Auf einer CPU verlässt die Kopie das Speichersystem der Maschine nie, also prägen sie die Caches
# aus Lektion 01 (Abschnitt 4): Sie wird schneller, solange die festen Kosten verblassen, und kann
# wieder fallen, sobald Quelle und Ziel zusammen (2 × die Bytes) nicht mehr in L2 oder L3 passen
# und aus dem Arbeitsspeicher kommen. Die rot gepunkteten Linien zeigen diese Größen für deine
# Maschine; die Ausgabe unter dem Diagramm nennt den größten Abfall und die Cache-Ebene auf beiden
# Seiten davon.
#
# **Erst vorhersagen:** Wie viele Millisekunden braucht im T4-Modell eine Kopie von 64 MiB?

# %%
my_copy_ms = None  # en: your prediction in ms | de: deine Vorhersage in ms


# %% jupyter={"source_hidden": true} cellView="form"
def plot_bandwidth(sweep_bytes, measured_gbs, modelled_gbs, half_size, caches):
    # en: Measured and modelled GB/s against the copy size; on a CPU the cache sizes marked.
    # de: Gemessene und modellierte GB/s über der Kopiergröße; auf einer CPU die Cachegrößen
    # de: markiert.
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    ax.semilogx(
        sweep_bytes,
        measured_gbs,
        "o-",
        label=text(
            "measured here: {how}",
            "hier gemessen: {how}",
            how=text("host→device", "Host→Gerät")
            if device.type != "cpu"
            else text("host→host copy", "Kopie Host→Host"),
        ),
    )
    ax.semilogx(
        sweep_bytes,
        modelled_gbs,
        "s--",
        label=text("T4 model: 10 µs + bytes ÷ 12 GB/s", "T4-Modell: 10 µs + Bytes ÷ 12 GB/s"),
    )
    ax.axvline(
        half_size,
        color="gray",
        linestyle=":",
        label=text("half the bandwidth (model)", "halbe Bandbreite (Modell)"),
    )
    if device.type == "cpu":
        # en: a host→host copy reads the source and writes the destination: 2 × bytes in the caches
        # de: eine Kopie Host→Host liest die Quelle und schreibt das Ziel: 2 × Bytes in den Caches
        for level, size in caches.sizes().items():
            if size is not None and level != "L1d":
                ax.axvline(size / 2, color="tab:red", linestyle=":", linewidth=1)
                ax.text(size / 2, 0, f" {level}", color="tab:red", fontsize=8, va="bottom")
    ax.set(
        xlabel=text("bytes per copy", "Bytes pro Kopie"),
        ylabel="GB/s",
        title=text("Bandwidth against transfer size", "Bandbreite nach Kopiergröße"),
    )
    ax.legend(fontsize=8)
    plt.tight_layout()


def explain_fall(sweep_bytes, measured_gbs, peak, caches):
    # en: After the best size: the step where the bandwidth fell the most, and the caches
    # en: there.
    # de: Nach der besten Größe: die Stufe, an der die Bandbreite am stärksten fiel, und die
    # de: Caches dort.
    fall_at = min(
        range(peak + 1, len(sweep_bytes)),
        key=lambda i: measured_gbs[i] / measured_gbs[i - 1],
    )
    before, after = sweep_bytes[fall_at - 1], sweep_bytes[fall_at]
    level_before, level_after = caches.level_for(2 * before), caches.level_for(2 * after)
    say(
        "  the biggest fall after it: {a} → {b}, to {p:.0f}%; source + destination grew from "
        "{wa} ({la}) to {wb} ({lb})",
        "  der größte Abfall danach: {a} → {b}, auf {p:.0f} %; Quelle + Ziel wuchsen von {wa} "
        "({la}) auf {wb} ({lb})",
        a=units.format_bytes(before),
        b=units.format_bytes(after),
        p=100 * measured_gbs[fall_at] / measured_gbs[fall_at - 1],
        wa=units.format_bytes(2 * before),
        wb=units.format_bytes(2 * after),
        la=hardware.cache_level_name(level_before),
        lb=hardware.cache_level_name(level_after),
    )
    if hardware.UNKNOWN in (level_before, level_after):
        say(
            "  → this machine's cache sizes are unknown: the run cannot tell whether it is a cache",
            "  → die Cache-Größen dieser Maschine sind unbekannt: Ob es ein Cache ist, kann der "
            "Lauf nicht sagen",
        )
    elif level_before != level_after:
        say(
            "  → the copy left {la} at this step: the next level is slower, and the fall fits "
            "a cache cliff",
            "  → die Kopie hat an dieser Stelle {la} verlassen: Die nächste Ebene ist langsamer, "
            "der Abfall passt zu einer Cache-Stufe",
            la=hardware.cache_level_name(level_before),
        )
    else:
        say(
            "  → the copy stayed in {la}: not a cache boundary; another process on the core fits "
            "better (run the cell again)",
            "  → die Kopie blieb in {la}: keine Cache-Grenze; ein anderer Prozess auf dem Kern "
            "passt besser (führe die Zelle noch einmal aus)",
            la=hardware.cache_level_name(level_before),
        )


# %%
sweep_bytes = [4 * 1024 * 4**i for i in range(0, 8)]  # en: 4 KiB … 64 MiB | de: 4 KiB … 64 MiB
target = device if device.type != "cpu" else "cpu"
measured_gbs = [transfers.measure_copy(b, "cpu", target, min_time=0.03).gbs for b in sweep_bytes]
copy_latency, t4_gbs = 10e-6, 12.0
modelled_gbs = [b / (copy_latency + b / (t4_gbs * 1e9)) / 1e9 for b in sweep_bytes]
half_size = copy_latency * t4_gbs * 1e9
reveal(my_copy_ms, 1e3 * (copy_latency + sweep_bytes[-1] / (t4_gbs * 1e9)), unit="ms")
caches = hardware.cpu_caches()
plot_bandwidth(sweep_bytes, measured_gbs, modelled_gbs, half_size, caches)
plt.show()
say(
    "model: a copy reaches half of the 12 GB/s only from {size}; at 4 KiB it gets {gbs:.2f} GB/s",
    "Modell: Eine Kopie erreicht die Hälfte der 12 GB/s erst ab {size}; "
    "bei 4 KiB schafft sie {gbs:.2f} GB/s",
    size=units.format_bytes(half_size),
    gbs=modelled_gbs[0],
)
say(
    "measured here: {small:.2f} GB/s at {a}, {large:.1f} GB/s at {b}",
    "hier gemessen: {small:.2f} GB/s bei {a}, {large:.1f} GB/s bei {b}",
    small=measured_gbs[0],
    a=units.format_bytes(sweep_bytes[0]),
    large=measured_gbs[-1],
    b=units.format_bytes(sweep_bytes[-1]),
)
peak = max(range(len(sweep_bytes)), key=measured_gbs.__getitem__)
say(
    "  the best: {gbs:.1f} GB/s at {size}",
    "  am besten: {gbs:.1f} GB/s bei {size}",
    gbs=measured_gbs[peak],
    size=units.format_bytes(sweep_bytes[peak]),
)
if device.type == "cpu" and peak < len(sweep_bytes) - 1:
    explain_fall(sweep_bytes, measured_gbs, peak, caches)

# %% [markdown] lang="en"
# `make gpu-check` (or `python benchmarks/bench_transfer.py`) measures all of it on your GPU, side by
# side. PyTorch's tutorial on `pin_memory()` and `non_blocking` (Vincent Moens, 2024) adds a
# warning: `tensor.pin_memory().to(device)` can be *slower* than a plain `tensor.to(device)`,
# because pinning is itself a copy. Pinning pays off when the pinned buffer is reused, as a
# `DataLoader(pin_memory=True)` does in a background thread.
#
# ### Transfer time against compute time
#
# Is the copy a problem? Compare it with the work done on the data. Take a batch of the size just
# copied and push it through one linear layer on the device:

# %% [markdown] lang="de"
# `make gpu-check` (oder `python benchmarks/bench_transfer.py`) misst das alles auf deiner GPU,
# nebeneinander. PyTorchs Tutorial zu `pin_memory()` und `non_blocking` (Vincent Moens, 2024) warnt
# außerdem: `tensor.pin_memory().to(device)` kann *langsamer* sein als ein schlichtes
# `tensor.to(device)`, denn Pinnen ist selbst eine Kopie. Es lohnt sich, wenn der gepinnte Puffer
# wiederverwendet wird, wie es ein `DataLoader(pin_memory=True)` in einem Hintergrund-Thread tut.
#
# ### Übertragungszeit im Vergleich zur Rechenzeit
#
# Ist die Kopie ein Problem? Vergleiche sie mit der Arbeit, die mit den Daten geschieht. Nimm einen
# Batch von der eben kopierten Größe und schick ihn auf dem Gerät durch eine lineare Schicht:

# %%
features = profile.pick(cpu=256, cuda=1024, mps=1024)
samples = nbytes // 4 // features
data = torch.randn(samples, features, device=device)
weight = torch.randn(features, features, device=device) / math.sqrt(features)
flops = 2 * samples * features * features
compute = bench.measure(
    torch.matmul, data, weight, flops=flops, dtype="float32", name="batch @ weight"
)
# en: the plain way: pageable memory (on a CPU: a copy into a fresh buffer)
# de: der übliche Weg: auslagerbarer Speicher (auf einer CPU: eine Kopie in einen frischen Puffer)
transfer = copies[0]

say(
    "batch {s} × {f} float32 = {size}",
    "Batch {s} × {f} float32 = {size}",
    s=samples,
    f=features,
    size=units.format_bytes(nbytes),
)
say("  copy    {t}", "  Kopie   {t}", t=units.format_seconds(transfer.seconds))
say(
    "  compute {t}  ({rate})",
    "  Rechnen {t}  ({rate})",
    t=units.format_seconds(compute.median),
    rate=units.format_rate(compute.flops_per_second),
)
say(
    "  the copy takes {r:.2f}× the compute time",
    "  die Kopie dauert das {r:.2f}-Fache der Rechenzeit",
    r=transfer.seconds / compute.median,
)

# en: The same batch on a T4, from the data sheet (fp32 peak) and the typical pinned link speed:
# de: Derselbe Batch auf einer T4, nach Datenblatt (fp32-Spitze) und typischer gepinnter Rate:
t4_batch, t4_features = 256 * MIB // 4 // 1024, 1024
t4_copy = transfers.transfer_seconds(256 * MIB, low)
t4_compute = 2 * t4_batch * t4_features**2 / (CHIPS["T4"].tflops["float32"] * 1e12)
say(
    "T4, {b} × {f}: copy ≈ {c:.0f} ms at {low:.0f} GB/s, compute ≥ {m:.0f} ms at the fp32 peak",
    "T4, {b} × {f}: Kopie ≈ {c:.0f} ms bei {low:.0f} GB/s, Rechnen ≥ {m:.0f} ms bei fp32-Spitze",
    b=t4_batch,
    f=t4_features,
    c=t4_copy * 1e3,
    low=low,
    m=t4_compute * 1e3,
)
# en: the copy takes longer than the layer
# de: die Kopie dauert länger als die Schicht
assert t4_copy > t4_compute

# %% [markdown] lang="en"
# On a T4 moving the batch takes *longer* than one layer computing on it, even at the GPU's peak.
# A GPU needs many FLOPs per byte that crosses the link to stay busy: at 8.1 TFLOP/s and 12 GB/s that
# is about 675 FLOPs per byte. Hence the rules of thumb: move the model once, keep data on the GPU
# for all the layers, pin and prefetch the input batches, and never move tensors back and forth
# inside a loop (`.item()`, `.cpu()`, `print(tensor)` all copy to the host).

# %% [markdown] lang="de"
# Auf einer T4 dauert das Verschieben des Batches *länger* als eine Schicht, die damit rechnet,
# sogar bei Spitzenleistung. Eine GPU braucht viele FLOPs pro Byte, das die Verbindung überquert, um
# ausgelastet zu sein: bei 8,1 TFLOP/s und 12 GB/s etwa 675 FLOPs pro Byte. Daher die Faustregeln:
# das Modell einmal verschieben, die Daten für alle Schichten auf der GPU lassen, die
# Eingabe-Batches pinnen und vorausladen, und Tensoren nie in einer Schleife hin- und herschieben
# (`.item()`, `.cpu()` und `print(tensor)` kopieren alle zum Host).

# %% [markdown] lang="en"
# ## 5. Asynchronous execution: a timing that lies
#
# A GPU call only *queues* the work and returns at once; the CPU runs ahead (lesson 01 showed it
# for a matmul). A stopwatch around the call measures the queueing. Here it is once more, on the
# device this lesson uses: PyTorch on a GPU, JAX on a CPU or TPU (JAX dispatches asynchronously
# even on a CPU).

# %% [markdown] lang="de"
# ## 5. Asynchrone Ausführung: eine Zeitmessung, die lügt
#
# Ein GPU-Aufruf stellt die Arbeit nur in eine Warteschlange und kehrt sofort zurück; die CPU eilt
# voraus (Lektion 01 hat es für eine Matrixmultiplikation gezeigt). Eine Stoppuhr um den Aufruf
# misst das Einreihen. Hier noch einmal, auf dem Gerät dieser Lektion: PyTorch auf einer GPU, JAX
# auf CPU oder TPU (JAX arbeitet selbst auf der CPU asynchron).

# %%
n = profile.pick(cpu=768, cuda=4096, mps=2048)
if device.type in ("cuda", "mps"):
    wait = synchronizer(device.type)
    a = torch.randn(n, n, device=device)

    def work(a):
        return a @ a @ a
else:
    import jax
    import jax.numpy as jnp

    wait = jax.block_until_ready
    a = jnp.ones((n, n), dtype=jnp.float32) + jnp.arange(n, dtype=jnp.float32) / n
    work = jax.jit(lambda a: a @ a @ a)

wait(work(a))  # en: warm up (for JAX: compile, too) | de: aufwärmen (bei JAX auch kompilieren)
start = time.perf_counter()
result = work(a)
# en: wrong: the work may still be running
# de: falsch: Die Arbeit läuft womöglich noch
queued = time.perf_counter() - start
wait(result)
done = time.perf_counter() - start
right = bench.measure(work, a, name="a @ a @ a")
say(
    "without waiting: {queued}   with waiting: {done}   bench.measure: {right}",
    "ohne Warten: {queued}   mit Warten: {done}   bench.measure: {right}",
    queued=units.format_seconds(queued),
    done=units.format_seconds(done),
    right=units.format_seconds(right.median),
)
assert queued <= done

# %% [markdown] lang="en"
# Copies take part in this too. A copy from **pinned** memory with `non_blocking=True` returns before
# the data has arrived, which is what lets the next batch travel while the GPU computes the current
# one. From host to device that is safe: everything queued after the copy waits for it. The other
# direction is not: `gpu_tensor.to("cpu", non_blocking=True)` gives you a CPU tensor whose numbers
# may not be there yet, and reading it before `torch.cuda.synchronize()` reads garbage (PyTorch's
# `non_blocking` tutorial shows it). On a GPU the next cell catches a non-blocking copy in the act.

# %% [markdown] lang="de"
# Auch Kopien machen dabei mit. Eine Kopie aus **gepinntem** Speicher mit `non_blocking=True` kehrt
# zurück, bevor die Daten angekommen sind; so ist der nächste Batch schon unterwegs, während die GPU
# noch den aktuellen verarbeitet. Vom Host zum Gerät ist das sicher: Alles, was nach der Kopie
# eingereiht wird, wartet auf sie. Die Gegenrichtung nicht:
# `gpu_tensor.to("cpu", non_blocking=True)` liefert einen CPU-Tensor, dessen Zahlen vielleicht noch
# nicht da sind; liest du ihn vor `torch.cuda.synchronize()`, bekommst du Unsinn (PyTorchs
# `non_blocking`-Tutorial zeigt es). Auf einer GPU ertappt die nächste Zelle eine nicht blockierende
# Kopie auf frischer Tat.

# %%
if device.type == "cuda" and transfers.can_pin():
    host = torch.randn(nbytes // 4).pin_memory()
    torch.cuda.synchronize()
    start = time.perf_counter()
    on_gpu = host.to(device, non_blocking=True)
    returned = time.perf_counter() - start
    torch.cuda.synchronize()
    arrived = time.perf_counter() - start
    say(
        "non_blocking copy of {size}: returned after {returned}, arrived after {arrived}",
        "nicht blockierende Kopie von {size}: zurück nach {returned}, angekommen nach {arrived}",
        size=units.format_bytes(nbytes),
        returned=units.format_seconds(returned),
        arrived=units.format_seconds(arrived),
    )
    assert torch.equal(on_gpu.cpu(), host)
else:
    say(
        "No CUDA GPU here: on a T4 the call returns after a few microseconds, and the data arrives "
        "about {ms:.0f} ms later ({size} at ≈{gbs:.0f} GB/s).",
        "Keine CUDA-GPU hier: Auf einer T4 kehrt der Aufruf nach wenigen Mikrosekunden zurück, "
        "die Daten kommen etwa {ms:.0f} ms später an ({size} bei ≈{gbs:.0f} GB/s).",
        ms=transfers.transfer_seconds(nbytes, low) * 1e3,
        size=units.format_bytes(nbytes),
        gbs=low,
    )

# %% [markdown] lang="en"
# ## 6. GPU memory
#
# ### Estimating sizes before you allocate
#
# A tensor needs `elements × bytes per element`. Estimate before you allocate; a model you can even
# build on the `meta` device, which takes no memory and no time, and count its bytes there.
#
# **Predict first:** 32 linear layers of 4096 × 4096 (with their biases) in float32: how many MiB?

# %% [markdown] lang="de"
# ## 6. GPU-Speicher
#
# ### Größen abschätzen, bevor du Speicher anlegst
#
# Ein Tensor braucht `Elemente × Bytes pro Element`. Schätze, bevor du Speicher anlegst; ein Modell
# kannst du sogar auf dem Gerät `meta` bauen, das weder Speicher noch Zeit kostet, und dort seine
# Bytes zählen.
#
# **Erst vorhersagen:** 32 lineare Schichten mit 4096 × 4096 (samt Bias) in float32: wie viele MiB?

# %%
my_model_mib = None  # en: your prediction in MiB | de: deine Vorhersage in MiB

# %%
shapes = [
    ((8192, 8192), torch.float32),
    ((8192, 8192), torch.float16),
    ((64, 3, 224, 224), torch.uint8),
]
for shape, dtype in shapes:
    size = units.format_bytes(usage.tensor_bytes(shape, dtype))
    print(f"{str(shape):<20} {str(dtype):<15} {size:>10}")

t = torch.empty(1000, 3, dtype=torch.bfloat16)
assert t.nbytes == t.numel() * t.element_size() == usage.tensor_bytes(t.shape, t.dtype) == 6000

start = time.perf_counter()
# en: every tensor made in this block lives on meta: shapes only
# de: jeder Tensor, der in diesem Block entsteht, liegt auf meta: nur Formen
with torch.device("meta"):
    big = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096) for _ in range(32)])
built = time.perf_counter() - start
parameters = sum(p.numel() for p in big.parameters())
say(
    "a model of {m:.0f} M parameters, built on meta in {t}: {size} in float32",
    "ein Modell mit {m:.0f} Mio. Parametern, auf meta gebaut in {t}: {size} in float32",
    m=parameters / 1e6,
    t=units.format_seconds(built),
    size=units.format_bytes(usage.module_bytes(big)),
)
reveal(my_model_mib, usage.module_bytes(big), unit="B", show=units.format_bytes, guess_in=2**20)
assert usage.module_bytes(big) == parameters * 4 and placement.where(big) == "meta"

# %% [markdown] lang="en"
# ### Allocated vs. reserved
#
# PyTorch does not hand freed GPU memory back to the driver. Its *caching allocator* keeps it and
# reuses it for the next tensors, because asking the driver is slow. Two counters tell the story:
# `torch.cuda.memory_allocated()` (bytes in live tensors) and `torch.cuda.memory_reserved()`
# (bytes PyTorch holds, live or cached). `nvidia-smi` sees *reserved* plus the CUDA context, the
# driver's own share, which `empty_cache()` never frees.
#
# `torch.cuda.empty_cache()` returns the cached, unused blocks to the driver. It does **not** free
# memory of tensors you still hold, and it gives PyTorch itself no extra room: PyTorch would have
# reused the cache anyway. It helps other processes, and it makes `nvidia-smi` tell the truth
# (PyTorch documentation, "CUDA semantics: memory management").

# %% [markdown] lang="de"
# ### Belegt und reserviert
#
# PyTorch gibt freigegebenen GPU-Speicher nicht an den Treiber zurück. Sein *Caching-Allocator*
# behält ihn und verwendet ihn für die nächsten Tensoren wieder, denn den Treiber zu fragen ist
# langsam. Zwei Zähler zeigen, was passiert: `torch.cuda.memory_allocated()` (Bytes in lebenden
# Tensoren) und `torch.cuda.memory_reserved()` (Bytes, die PyTorch hält, in lebenden Tensoren oder
# im Cache). `nvidia-smi` sieht *reserviert* plus den CUDA-Kontext, den eigenen Anteil des Treibers,
# den `empty_cache()` nie freigibt.
#
# `torch.cuda.empty_cache()` gibt die zwischengespeicherten, unbenutzten Blöcke an den Treiber
# zurück. Es gibt **keinen** Speicher von Tensoren frei, die du noch hältst, und verschafft PyTorch
# selbst keinen zusätzlichen Platz: PyTorch hätte den Cache ohnehin wiederverwendet. Es hilft
# anderen Prozessen, und es sorgt dafür, dass `nvidia-smi` zeigt, was wirklich belegt ist
# (PyTorch-Dokumentation, „CUDA semantics: memory management“).

# %%
size = profile.pick(cpu=256 * MIB, cuda=1 * GIB, mps=1 * GIB)
allocated, reserved = text("allocated", "belegt"), text("reserved", "reserviert")
if device.type == "cuda":
    torch.cuda.synchronize()
    usage.free_memory()
    steps = [(text("start", "Start"), usage.memory_stats(device))]
    block = torch.empty(size, dtype=torch.uint8, device=device)
    tensor = text("x = tensor of {size}", "x = Tensor mit {size}", size=units.format_bytes(size))
    steps.append((tensor, usage.memory_stats(device)))
    del block
    steps.append(("del x", usage.memory_stats(device)))
    torch.cuda.empty_cache()
    steps.append(("empty_cache()", usage.memory_stats(device)))
    print(f"{'':<28} {allocated:>12} {reserved:>12}")
    for label, s in steps:
        used, held = units.format_bytes(s.allocated), units.format_bytes(s.reserved)
        print(f"{label:<28} {used:>12} {held:>12}")
    assert steps[1][1].allocated - steps[0][1].allocated >= size
    assert steps[2][1].allocated == steps[0][1].allocated
    assert steps[2][1].reserved >= steps[1][1].reserved - 1
    assert steps[3][1].reserved <= steps[2][1].reserved
else:
    say(
        "No CUDA GPU here. On a T4, with a 1 GiB tensor, the two counters read:",
        "Keine CUDA-GPU hier. Auf einer T4 zeigen die zwei Zähler mit einem Tensor von 1 GiB:",
    )
    gib = units.format_bytes(GIB)
    t4_steps = [
        (text("x = 1 GiB tensor", "x = Tensor mit 1 GiB"), gib, gib),
        ("del x", "0 B", gib),
        ("empty_cache()", "0 B", "0 B"),
    ]
    for label, used, held in t4_steps:
        print(f"  {label:<24} {allocated} {used:>9}   {reserved} {held:>9}")
    # en: The CPU's own version: the operating system hands out memory page by page, on first touch.
    # de: Die CPU-Fassung: Das Betriebssystem vergibt Speicher Seite für Seite, beim ersten Zugriff.
    rss = [usage.process_rss()]
    block = torch.empty(size, dtype=torch.uint8)  # en: asked for ... | de: angefordert …
    rss.append(usage.process_rss())
    block.fill_(1)  # en: ... and touched | de: … und beschrieben
    rss.append(usage.process_rss())
    del block
    rss.append(usage.process_rss())
    if None not in rss:
        grown = [r - rss[0] for r in rss[1:]]
        say(
            "On this CPU, the process's resident memory (RSS) for a tensor of {size}:",
            "Auf dieser CPU: Arbeitsspeicher des Prozesses (RSS) für einen Tensor mit {size}:",
            size=units.format_bytes(size),
        )
        written = text("after writing to it", "nach dem Beschreiben")
        for label, delta in zip(["torch.empty", written, "del"], grown, strict=True):
            print(f"  {label:<22} {'+' if delta >= 0 else ''}{units.format_bytes(delta)}")
        assert grown[1] > 0.5 * size > grown[0]

# %% [markdown] lang="en"
# On a CPU, `torch.empty` of 256 MiB costs almost nothing until you write to it: the operating
# system, too, hands out memory lazily and caches it. Measure what *tensors* hold, not what a
# monitor shows.
#
# ### An out-of-memory error, caught and survived
#
# Ask for more memory than the device has. The error is an exception like any other: catch it,
# let go of what you held, empty the cache, and carry on. On a GPU the cell asks for twice the GPU's
# memory; on a CPU it asks for a pebibyte (2⁵⁰ bytes), which no machine has.

# %% [markdown] lang="de"
# Auf einer CPU kostet `torch.empty` mit 256 MiB fast nichts, bis du hineinschreibst: Auch das
# Betriebssystem vergibt Speicher erst bei Bedarf und hält ihn vor. Miss, was *Tensoren* belegen,
# nicht, was eine Anzeige meldet.
#
# ### Einen Out-of-Memory-Fehler abfangen und weiterarbeiten
#
# Verlange mehr Speicher, als das Gerät hat. Der Fehler ist eine Ausnahme wie jede andere: Fang sie
# ab, lass los, was du gehalten hast, leere den Cache und mach weiter. Auf einer GPU verlangt die
# Zelle das Doppelte des GPU-Speichers, auf einer CPU ein Pebibyte (2⁵⁰ Byte), das keine Maschine
# hat.

# %%
if device.type == "cuda":
    request, where_to = 2 * torch.cuda.get_device_properties(device).total_memory, device
else:
    request, where_to = 2**50, torch.device("cpu")

oom = None
try:
    too_big = torch.empty(request, dtype=torch.uint8, device=where_to)
# en: torch.OutOfMemoryError is a RuntimeError
# de: torch.OutOfMemoryError ist ein RuntimeError
except RuntimeError as error:
    if not usage.is_oom(error):
        raise
    oom = error
assert oom is not None


def first_sentence(message, limit=240):
    # en: the first line, cut at a word (never mid-word), with … where something was left out
    # de: die erste Zeile, an einem Wortende gekürzt (nie mitten im Wort), mit …, wo etwas fehlt
    line = message.strip().splitlines()[0]
    if len(line) <= limit:
        return line
    return line[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " …"


say(
    "asked for {size}: {kind} - {message}",
    "{size} verlangt: {kind} – {message}",
    size=units.format_bytes(request),
    kind=type(oom).__name__,
    message=first_sentence(str(oom)),
)
# en: the error keeps the frames of the failed call alive: drop it, collect garbage, empty the cache
# de: Der Fehler hält die Frames des gescheiterten Aufrufs am Leben: weg damit, aufräumen, Cache leeren
oom = None
usage.free_memory()
check = torch.ones(1000, device=where_to).sum().item()
say(
    "and the session goes on: torch.ones(1000).sum() = {check:.0f}",
    "und die Sitzung läuft weiter: torch.ones(1000).sum() = {check:.0f}",
    check=check,
)
assert check == 1000

# %% [markdown] lang="en"
# ## Check yourself
#
# <details><summary>1. <code>batch.to(device)</code> on a line of its own, then <code>model(batch)</code>: what happens, and why?</summary>
#
# The copy on the device is thrown away; `batch` is still the CPU tensor, so the forward pass stops
# with the mixed-device error. Write `batch = batch.to(device)`. A model is different: `model.to(device)`
# moves the model itself.
# </details>
#
# <details><summary>2. A notebook from Kaggle's T4 x2 fails on Colab with "invalid device ordinal". What is wrong, and what is the fix?</summary>
#
# It hard-codes `cuda:1`, and Colab has one GPU. Ask `torch.cuda.device_count()` (or use
# `placement.try_gpu(1)`), or let each process see its own GPU as `cuda:0` via `CUDA_VISIBLE_DEVICES`.
# </details>
#
# <details><summary>3. Pinned memory makes copies faster. Why not pin every tensor?</summary>
#
# Pinning is itself a copy, and page-locked memory is taken away from the operating system (it
# cannot be swapped). It pays off for buffers that are reused, such as a data loader's batches.
# </details>
#
# <details><summary>4. After <code>del x; torch.cuda.empty_cache()</code>, <code>nvidia-smi</code> still shows a few hundred MiB used. A leak?</summary>
#
# No: that is the CUDA context, the driver's own memory for this process; it stays until the
# process ends. Check `torch.cuda.memory_allocated()` for what tensors hold.
# </details>
#
# ## Summary
#
# - `placement.pick_device()` finds any accelerator; list devices, never assume `cuda:1`.
# - A tensor's `.to()` returns a copy (keep it); a model's `.to()` moves the model. Create new tensors
#   with `device=x.device, dtype=x.dtype`.
# - The host↔device link is the narrowest pipe: PCIe Gen3 x16 on a T4, 15.75 GB/s in theory, about
#   12 GB/s pinned. Pin reused buffers, move data once, keep it on the device.
# - GPU calls and non-blocking copies return before the work is done: synchronise before you read a
#   clock or a copied-back tensor.
# - Allocated ≤ reserved ≤ what `nvidia-smi` shows. An out-of-memory error can be caught; search the
#   batch size with the real step and keep headroom.
#
# **Glossary:** device, host, device ordinal, pageable memory, pinned (page-locked) memory, DMA, PCIe,
# asynchronous execution, synchronisation, caching allocator, allocated / reserved memory, CUDA
# context, out of memory (OOM), meta device.
#
# **Next:** lab 02 (fix code that mixes devices, measure a copy, find the batch size) and lesson 03,
# where the number format decides how much fits and how fast it runs.

# %% [markdown] lang="de"
# ## Prüf dich selbst
#
# <details><summary>1. <code>batch.to(device)</code> allein in einer Zeile, danach <code>model(batch)</code>: Was passiert, und warum?</summary>
#
# Die Kopie auf dem Gerät wird weggeworfen; `batch` ist immer noch der CPU-Tensor, also bricht der
# Vorwärtsdurchlauf mit dem Fehler wegen gemischter Geräte ab. Schreib `batch = batch.to(device)`.
# Ein Modell ist anders: `model.to(device)` verschiebt das Modell selbst.
# </details>
#
# <details><summary>2. Ein Notebook von Kaggles T4 x2 scheitert auf Colab mit „invalid device ordinal“. Was ist falsch, und wie behebst du es?</summary>
#
# Es schreibt `cuda:1` fest hin, und Colab hat eine GPU. Frag `torch.cuda.device_count()` (oder nimm
# `placement.try_gpu(1)`), oder lass jeden Prozess über `CUDA_VISIBLE_DEVICES` seine eigene GPU als
# `cuda:0` sehen.
# </details>
#
# <details><summary>3. Gepinnter Speicher macht Kopien schneller. Warum nicht jeden Tensor pinnen?</summary>
#
# Pinnen ist selbst eine Kopie, und gesperrter Speicher wird dem Betriebssystem entzogen (er kann
# nicht ausgelagert werden). Es lohnt sich für Puffer, die wiederverwendet werden, etwa die Batches
# eines DataLoaders.
# </details>
#
# <details><summary>4. Nach <code>del x; torch.cuda.empty_cache()</code> zeigt <code>nvidia-smi</code> immer noch einige Hundert MiB belegt. Ein Leck?</summary>
#
# Nein: Das ist der CUDA-Kontext, der eigene Speicher des Treibers für diesen Prozess; er bleibt,
# bis der Prozess endet. Was Tensoren belegen, sagt `torch.cuda.memory_allocated()`.
# </details>
#
# ## Zusammenfassung
#
# - `placement.pick_device()` findet jeden Beschleuniger; liste die Geräte auf, nimm nie einfach
#   `cuda:1` an.
# - `.to()` eines Tensors gibt eine Kopie zurück (behalte sie); `.to()` eines Modells verschiebt das
#   Modell. Lege neue Tensoren mit `device=x.device, dtype=x.dtype` an.
# - Die Verbindung zwischen Host und Gerät ist der Engpass: PCIe Gen3 x16 bei einer T4,
#   theoretisch 15,75 GB/s, gepinnt etwa 12 GB/s. Pinne wiederverwendete Puffer, verschiebe Daten
#   einmal und lass sie auf dem Gerät.
# - GPU-Aufrufe und nicht blockierende Kopien kehren zurück, bevor die Arbeit getan ist:
#   synchronisiere, bevor du eine Uhr oder einen zurückkopierten Tensor liest.
# - Belegt ≤ reserviert ≤ was `nvidia-smi` zeigt. Ein Out-of-Memory-Fehler lässt sich abfangen;
#   suche die Batchgröße mit dem echten Schritt und lass Abstand.
#
# **Glossar:** Gerät (Device), Host, Gerätenummer (Device Ordinal), auslagerbarer Speicher,
# gepinnter Speicher, DMA, PCIe, asynchrone Ausführung, Synchronisation, Caching-Allocator, belegter
# / reservierter Speicher, CUDA-Kontext, Out of Memory (OOM), meta-Gerät.
#
# **Weiter:** Lab 02 (Code reparieren, der Geräte mischt, eine Kopie messen, die Batchgröße finden)
# und Lektion 03, in der das Zahlenformat entscheidet, wie viel passt und wie schnell es läuft.

# %% [markdown] lang="en"
# ## Deeper (optional)
#
# The main path ended with the summary above. What follows goes further: the profiler's view
# of a copy, a calculator for the links of other GPUs, finding the batch size that fits, two GPUs
# without hard-coding `cuda:1`, and `nvidia-smi` from code.

# %% [markdown] lang="de"
# ## Vertiefung (optional)
#
# Der Hauptweg endete mit der Zusammenfassung oben. Was folgt, geht weiter: eine Kopie mit den
# Augen des Profilers, ein Rechner für die Verbindungen anderer GPUs, die Batchgröße finden, die
# passt, zwei GPUs ansprechen, ohne `cuda:1` fest hinzuschreiben, und `nvidia-smi` aus Code.

# %% [markdown] lang="en"
# ### The profiler's view of a copy
#
# `torch.profiler` (lesson 01, section 9) shows what a `.to()` does inside: on a GPU an
# `aten::to` → `aten::_to_copy` → `aten::copy_` chain and a `Memcpy HtoD` row on the device, from
# pageable memory also the staging copy's time on the CPU. On a CPU the same chain shows, with the
# allocation of the fresh buffer (`aten::empty_strided`):

# %% [markdown] lang="de"
# ### Eine Kopie mit den Augen des Profilers
#
# `torch.profiler` (Lektion 01, Abschnitt 9) zeigt, was ein `.to()` innen tut: auf einer GPU eine
# Kette `aten::to` → `aten::_to_copy` → `aten::copy_` und eine Zeile `Memcpy HtoD` auf dem Gerät,
# bei auslagerbarem Speicher auch die Zeit der Zwischenkopie auf der CPU. Auf einer CPU zeigt sich
# dieselbe Kette, mit dem Anlegen des frischen Puffers (`aten::empty_strided`):

# %%
from torch.profiler import ProfilerActivity
from torch.profiler import profile as profile_run

activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
host_batch = torch.randn(nbytes // 4 // 16)
# en: on a CPU, .to(dtype) makes the copy that .to(device) would make on a GPU
# de: auf einer CPU macht .to(dtype) die Kopie, die .to(device) auf einer GPU machen würde
move = (lambda t: t.to(device)) if device.type != "cpu" else (lambda t: t.to(torch.float64))
move(host_batch)
with profile_run(activities=activities) as prof:
    for _ in range(3):
        moved = move(host_batch)
    if device.type == "cuda":
        torch.cuda.synchronize()
profile_table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=6)
if get_language() == "de":
    # en: torch prints 1.78%; the German notebook writes 1,78 %
    # de: torch schreibt 1.78%; das deutsche Notebook schreibt 1,78 %
    profile_table = re.sub(r"(\d)\.(\d)", r"\1,\2", profile_table).replace("%", " %")
print(profile_table)
copy_events = {e.key: e for e in prof.key_averages()}
say(
    "aten::copy_ ran {k} times, {t} per copy of {size}: {gbs:.1f} GB/s as the profiler sees it",
    "aten::copy_ lief {k}-mal, {t} pro Kopie von {size}: {gbs:.1f} GB/s aus Sicht des Profilers",
    k=copy_events["aten::copy_"].count,
    t=units.format_seconds(
        copy_events["aten::copy_"].cpu_time_total * 1e-6 / copy_events["aten::copy_"].count
    ),
    size=units.format_bytes(host_batch.nbytes),
    gbs=host_batch.nbytes
    / (copy_events["aten::copy_"].cpu_time_total * 1e-6 / copy_events["aten::copy_"].count)
    / 1e9,
)

# %% tags=["guard"] jupyter={"source_hidden": true}
assert modelled_gbs == sorted(modelled_gbs) and modelled_gbs[0] < 0.5 * t4_gbs < modelled_gbs[-1]
assert copy_events["aten::copy_"].count == 3

# %% [markdown] lang="en"
# ### A calculator for the link of other GPUs
#
# Explore how many FLOPs per byte each GPU needs, and how long a batch takes to cross its link:

# %% [markdown] lang="de"
# ### Ein Rechner für die Verbindung anderer GPUs
#
# Probier aus, wie viele FLOPs pro Byte jede GPU braucht und wie lange ein Batch über ihre
# Verbindung braucht:

# %%
from utils.widgets import explore


def link_budget(gpu, batch_mib, dtype):
    chip_link = CHIPS[gpu].link
    typical = chip_link.typical_pinned_gbs[0]
    peak = CHIPS[gpu].tflops[dtype]
    seconds = transfers.transfer_seconds(batch_mib * MIB, typical)
    say(
        "{gpu}: {link}; typical pinned {gbs:.0f} GB/s",
        "{gpu}: {link}; gepinnt typisch {gbs:.0f} GB/s",
        gpu=gpu,
        link=chip_link,
        gbs=typical,
    )
    say(
        "  {mib} MiB cross the link in {ms:.1f} ms",
        "  {mib} MiB brauchen über die Verbindung {ms:.1f} ms",
        mib=batch_mib,
        ms=seconds * 1e3,
    )
    say(
        "  to keep {peak:g} TFLOP/s ({dtype}) busy: ≥ {need:,.0f} FLOPs per byte sent",
        "  um {peak:g} TFLOP/s ({dtype}) auszulasten: ≥ {need:,.0f} FLOPs pro gesendetem Byte",
        peak=peak,
        dtype=dtype,
        need=peak * 1e12 / (typical * 1e9),
    )


panel = explore(
    link_budget,
    {"gpu": "T4", "batch_mib": 256, "dtype": "float32"},
    # en: a calculator, not a measurement
    # de: ein Rechner, keine Messung
    button_label=text("Compute", "Berechnen"),
    labels=dict(
        gpu="GPU",
        batch_mib=text("batch (MiB)", "Batch (MiB)"),
        dtype=text("data type", "Datentyp"),
    ),
    gpu=["T4", "L4", "A100", "H100"],
    batch_mib=[16, 64, 256, 1024],
    dtype=["float32", "float16"],
)

# %% [markdown] lang="en"
# ### Finding the batch size that fits
#
# Memory grows with the batch size, so the usual way to find the largest batch is to try:
# `usage.find_batch_size(step)` doubles the batch size until `step` runs out of memory, then
# bisects between the last size that fit and the first that did not. It catches **only**
# out-of-memory errors: a shape bug is still a bug and stops the search. The step here is
# memory-heavy on purpose: each sample takes 2 MiB of activations (like a long sequence in a
# transformer layer), computed twice. On a GPU it runs for real; a CPU must not run out of memory
# (the operating system would end the whole session), so there `memsim.MemoryBudget` plays a T4's
# 15 GiB and raises the same `torch.OutOfMemoryError`.

# %% [markdown] lang="de"
# ### Die Batchgröße finden, die passt
#
# Der Speicherbedarf wächst mit der Batchgröße, deshalb findest du die größte Batchgröße am besten
# durch Ausprobieren: `usage.find_batch_size(step)` verdoppelt die Batchgröße, bis `step` keinen
# Speicher mehr bekommt, und halbiert dann das Intervall zwischen der letzten Größe, die passte, und
# der ersten, die nicht passte. Es fängt **nur** Out-of-Memory-Fehler ab: Ein Fehler in den Formen
# bleibt ein Fehler und beendet die Suche. Der Schritt hier braucht absichtlich viel Speicher: Jedes
# Beispiel belegt 2 MiB an Aktivierungen (wie eine lange Sequenz in einer Transformer-Schicht),
# zweimal berechnet. Auf einer GPU läuft er wirklich; einer CPU darf der Speicher nicht ausgehen
# (das Betriebssystem würde die ganze Sitzung beenden), also spielt dort `memsim.MemoryBudget` die
# 15 GiB einer T4 und wirft denselben `torch.OutOfMemoryError`.

# %%
# en: bytes of one sample's activations
# de: Bytes der Aktivierungen eines Beispiels
per_sample = 2 * MIB
width = per_sample // 4  # en: float32 numbers per sample | de: float32-Zahlen pro Beispiel

if device.type == "cuda":
    capacity = torch.cuda.get_device_properties(device).total_memory

    def step(batch_size):
        h = torch.randn(batch_size, width, device=device)
        # en: a second tensor of the same size, then one number back
        # de: ein zweiter Tensor derselben Größe, dann eine Zahl zurück
        return (h * 2).sum().item()
else:
    capacity = 15 * GIB  # en: a T4's usable memory | de: der nutzbare Speicher einer T4
    budget = memsim.MemoryBudget(capacity, name=text("T4 (simulated)", "T4 (simuliert)"))

    def step(batch_size):
        # en: h and h * 2, as on the GPU
        # de: h und h * 2, wie auf der GPU
        with budget.hold(2 * batch_size * per_sample):
            # en: a token computation: the memory is only pretend
            # de: nur eine kleine Ersatzrechnung: Der Speicher ist gespielt
            h = torch.randn(min(batch_size, 4), 8)
            return (h * 2).sum().item()


# en: far past what can fit
# de: weit mehr, als passt
limit = 2 ** math.ceil(math.log2(4 * capacity / per_sample))
start = time.perf_counter()
search = usage.find_batch_size(step, limit=limit, refine=True)
seconds = time.perf_counter() - start
print(search.table())
estimate = capacity // (2 * per_sample)
say(
    "largest batch: {found} (estimate from the sizes: {estimate}), "
    "found in {tries} tries, {s:.1f} s",
    "größte Batchgröße: {found} (aus den Größen geschätzt: {estimate}), "
    "gefunden in {tries} Versuchen, {s:.1f} s",
    found=search.batch_size,
    estimate=estimate,
    tries=len(search.tries),
    s=seconds,
)
assert 0 < search.batch_size <= estimate
# en: it did run out of memory, and recovered
# de: Der Speicher ging aus, und es ging weiter
assert any(not ok for _, ok in search.tries)
usage.free_memory()

# %% [markdown] lang="en"
# On a real GPU the answer is a little below the estimate: the CUDA context, cuBLAS workspaces and
# fragmentation take their share. Train with some headroom below what the search finds: the
# optimizer's state appears only at the first `optimizer.step()`, and a longer sequence later needs
# more. Lab 02 has you compute the estimate and write the finder yourself.

# %% [markdown] lang="de"
# Auf einer echten GPU liegt das Ergebnis etwas unter der Schätzung: CUDA-Kontext, cuBLAS-Workspaces
# und Fragmentierung nehmen sich ihren Teil. Trainiere mit etwas Abstand unter dem, was die Suche
# findet: Der Zustand des Optimierers entsteht erst beim ersten `optimizer.step()`, und eine längere
# Sequenz braucht später mehr. In Lab 02 berechnest du die Schätzung und schreibst die Suche selbst.

# %% [markdown] lang="en"
# <details><summary>Check yourself: The batch-size finder said 512, yet training crashes with out-of-memory at step 1. Why?</summary>
#
# The step you tried was not the whole training step: `optimizer.step()` creates its state (two
# numbers per parameter for Adam) at the first call, and backward needs the activations kept from
# the forward pass. Search with the real training step, and keep some headroom.
# </details>

# %% [markdown] lang="de"
# <details><summary>Prüf dich selbst: Die Batchgrößen-Suche ergab 512, trotzdem bricht das Training schon in Schritt 1 mit Out-of-Memory ab. Warum?</summary>
#
# Der ausprobierte Schritt war nicht der ganze Trainingsschritt: `optimizer.step()` legt seinen
# Zustand (bei Adam zwei Zahlen pro Parameter) erst beim ersten Aufruf an, und der
# Rückwärtsdurchlauf braucht die Aktivierungen, die der Vorwärtsdurchlauf aufbewahrt. Suche mit dem
# echten Trainingsschritt und lass etwas Abstand.
# </details>

# %% [markdown] lang="en"
# ### Two GPUs: `cuda:0`, `cuda:1`
#
# Kaggle's "GPU T4 x2" gives you two devices, `cuda:0` and `cuda:1`. Code written there (and some
# textbooks) hard-codes `cuda:1`; on Colab's single T4 that fails with *"CUDA error: invalid device
# ordinal"*, and on a machine without CUDA with another error. Ask how many there are instead:

# %% [markdown] lang="de"
# ### Zwei GPUs: `cuda:0`, `cuda:1`
#
# Kaggles „GPU T4 x2“ gibt dir zwei Geräte, `cuda:0` und `cuda:1`. Code, der dort geschrieben wurde
# (und manches Lehrbuch), schreibt `cuda:1` fest hin; auf Colabs einzelner T4 scheitert das mit
# *„CUDA error: invalid device ordinal“*, auf einer Maschine ohne CUDA mit einem anderen Fehler.
# Frag stattdessen, wie viele es gibt:

# %%
gpus = [d for d in placement.list_devices() if d.type == "cuda"]
say(
    "CUDA GPUs here: {n} {names}",
    "CUDA-GPUs hier: {n} {names}",
    n=len(gpus),
    names=[str(d) for d in gpus],
)

try:
    torch.ones(1, device="cuda:1")
    ran, outcome = True, text("ran", "lief")
# en: a CPU-only torch raises AssertionError
# de: ein torch ohne CUDA wirft AssertionError
except (RuntimeError, AssertionError) as error:
    ran, outcome = False, f"{type(error).__name__}: {str(error).strip().splitlines()[0]}"
print('torch.ones(1, device="cuda:1") →', outcome)

# en: cuda:1 where it exists, else a fallback and a note
# de: cuda:1, wo es existiert, sonst Ersatz und Hinweis
second = placement.try_gpu(1)
print("placement.try_gpu(1) →", second)

if len(gpus) >= 2:
    on_0 = torch.randn(2048, 2048, device=gpus[0])
    on_1 = torch.randn(2048, 2048, device=gpus[1])
    with placement.catch_mixed_devices(on_0=on_0, on_1=on_1) as caught:
        on_0 @ on_1
    assert caught  # en: two GPUs are two devices, too | de: auch zwei GPUs sind zwei Geräte
    product = on_0 @ on_1.to(on_0.device)
    hop = transfers.measure_copy(nbytes, gpus[0], gpus[1], label="cuda:0 → cuda:1")
    say(
        "copy cuda:0 → cuda:1: {gbs:.1f} GB/s", "Kopie cuda:0 → cuda:1: {gbs:.1f} GB/s", gbs=hop.gbs
    )

# %% tags=["guard"] jupyter={"source_hidden": true}
assert ran == (len(gpus) >= 2)

# %% [markdown] lang="en"
# Two more tools for several GPUs: the environment variable `CUDA_VISIBLE_DEVICES=1` (set before
# `import torch`) shows a process only the second GPU, which then is its `cuda:0`; and
# `torch.cuda.set_device(i)` changes what plain `cuda` means. Lesson 08 (Beyond one GPU: DDP, FSDP
# and sharding) uses both GPUs at once.
#
# ### `nvidia-smi` from code
#
# `nvidia-smi --query-gpu=...,... --format=csv` prints one CSV line per GPU with exactly the fields
# you ask for (`nvidia-smi --help-query-gpu` lists them). `utils.platform.nvsmi.query` runs it without ever
# raising and parses the lines:

# %% [markdown] lang="de"
# Zwei weitere Werkzeuge für mehrere GPUs: Die Umgebungsvariable `CUDA_VISIBLE_DEVICES=1` (vor
# `import torch` gesetzt) zeigt einem Prozess nur die zweite GPU, die dann sein `cuda:0` ist; und
# `torch.cuda.set_device(i)` ändert, was ein schlichtes `cuda` meint. Lektion 08 (Mehr als eine
# GPU: DDP, FSDP und Sharding) nutzt beide GPUs gleichzeitig.
#
# ### `nvidia-smi` aus Code
#
# `nvidia-smi --query-gpu=...,... --format=csv` gibt pro GPU eine CSV-Zeile mit genau den Feldern
# aus, nach denen du fragst (`nvidia-smi --help-query-gpu` listet sie auf).
# `utils.platform.nvsmi.query` führt es aus, ohne je eine Ausnahme zu werfen, und zerlegt die
# Zeilen:

# %%
fields = (
    "index",
    "name",
    "memory.used",
    "memory.total",
    "utilization.gpu",
    "pcie.link.gen.max",
    "pcie.link.width.max",
)
smi = nvsmi.query(fields=fields)
if smi.ok:
    print(nvsmi.table(smi.rows))
else:
    print(smi.error)
    # en: What the same query prints on a Colab T4 (an illustration, not a measurement), parsed:
    # de: Was dieselbe Abfrage auf einer Colab-T4 ausgibt (ein Beispiel, keine Messung), zerlegt:
    example = nvsmi.parse_csv("0, Tesla T4, 0, 15360, 0, 3, 16", fields)
    say(
        "On a Colab T4 the same query gives, parsed:",
        "Auf einer Colab-T4 liefert dieselbe Abfrage, zerlegt:",
    )
    print(nvsmi.table(example))
stats = usage.memory_stats(device)
say("Without nvidia-smi, ask PyTorch: {s}", "Ohne nvidia-smi fragst du PyTorch: {s}", s=stats)

# %% tags=["guard"] jupyter={"source_hidden": true}
assert len(smi.rows) >= len(gpus) if smi.ok else example[0]["memory.total"] == "15360"

# %% [markdown] lang="en"
# Where `nvidia-smi` is missing: on a CPU-only machine there is nothing to ask; on a Mac ask
# PyTorch (`torch.mps.current_allocated_memory()`, shown by `usage.memory_stats()`); on a TPU ask
# JAX (`jax.devices()[0].memory_stats()`); on a GPU machine where the tool is missing but CUDA
# works, `torch.cuda.mem_get_info()` gives free and total memory.

# %% [markdown] lang="de"
# Wo `nvidia-smi` fehlt: Auf einer reinen CPU-Maschine gibt es nichts zu fragen; auf einem Mac frag
# PyTorch (`torch.mps.current_allocated_memory()`, angezeigt von `usage.memory_stats()`); auf einer
# TPU frag JAX (`jax.devices()[0].memory_stats()`); auf einer GPU-Maschine, auf der das Werkzeug
# fehlt, CUDA aber funktioniert, liefert `torch.cuda.mem_get_info()` freien und gesamten Speicher.

# %% [markdown] lang="en"
# **Class results (optional).** To add this run's figures to your group's comparison, set
# `SAVE_RESULTS = True` below and run the cell (or start Jupyter with `COURSE_RESULTS=folder`). It
# writes a small anonymous file to `results/` for your trainer to collect: the hardware, the
# library versions and the copy bandwidths and the copy time against the compute time; no names,
# no paths. Nothing is sent anywhere.

# %% [markdown] lang="de"
# **Ergebnisse der Gruppe (freiwillig).** Um die Zahlen dieses Laufs zum Vergleich deiner Gruppe
# beizusteuern, setz unten `SAVE_RESULTS = True` und führe die Zelle aus (oder starte Jupyter mit
# `COURSE_RESULTS=Ordner`). Sie schreibt eine kleine anonyme Datei nach `results/`, die deine
# Trainerin oder dein Trainer einsammelt: Hardware, Bibliotheksversionen und die
# Kopier-Bandbreiten und die Kopierzeit im Verhältnis zur Rechenzeit; keine Namen, keine Pfade. Es
# wird nichts verschickt.

# %%
# en: True saves this run's figures to results/, anonymously (see above)
# de: True speichert die Zahlen dieses Laufs anonym nach results/ (siehe oben)
SAVE_RESULTS = False
from utils.workshop.results import record

figures = {
    "copy_best_gbs": max(c.gbs for c in copies),
    "copy_4kib_gbs": measured_gbs[0],
    "copy_64mib_gbs": measured_gbs[-1],
    "copy_over_compute": transfer.seconds / compute.median,
}
record("02", figures, save=SAVE_RESULTS, hw=hw)
