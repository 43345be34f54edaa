# ---
# jupyter:
#   course:
#     title:
#       en: "Device placement: where do my tensors live?"
#       de: Wo liegen meine Tensoren?
#     level: 1
#     duration: {t4: 30, cpu: 25}
#     accelerator: GPU
#     profiles: [CPU, Colab T4, Kaggle T4 x2, Colab TPU, Kaggle TPU, NVIDIA, MPS]
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# The glossary page moves its model and its inputs with two lines, `model.to(device)` and
# `inputs.to(device)`. Behind them sit the walls everyone hits on the way to a GPU:
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
# - read GPU memory counters, estimate sizes, survive an out-of-memory error and find the batch size
#   that fits,
# - address two GPUs without hard-coding `cuda:1`, and read `nvidia-smi` from code.
#
# On a machine without a GPU every cell still runs: where a GPU effect cannot happen, the cell runs
# the CPU version of it and says what a T4 shows.

# %% [markdown] lang="de"
# Die Glossarseite verschiebt Modell und Eingaben mit zwei Zeilen, `model.to(device)` und
# `inputs.to(device)`. Dahinter warten die Hürden, an denen jede und jeder auf dem Weg zur GPU
# hängen bleibt: „Expected all tensors to be on the same device“, „invalid device ordinal“ aus Code,
# der für zwei GPUs geschrieben wurde, eine Trainingsschleife, die auf ihre Daten wartet, Zeitmessungen,
# die lügen, weil die GPU asynchron arbeitet, und ein Out-of-Memory-Fehler, der die Sitzung beendet.
# In dieser Lektion führst du jede davon absichtlich herbei, misst sie und behebst sie. Du wirst
#
# - ein Gerät auf die heutige Art wählen und alle Geräte der Maschine auflisten,
# - sehen, was `.to()` für einen Tensor und was es für ein Modell zurückgibt,
# - den Fehler mit gemischten Geräten nachstellen und dir von einem Helfer sagen lassen, welcher
#   Tensor wo liegt,
# - Kopien zwischen Host und Gerät in GB/s messen (auslagerbarer gegen gepinnten Speicher), mit dem
#   theoretischen Wert der Verbindung vergleichen und der Rechenzeit gegenüberstellen,
# - eine asynchrone Zeitmessung auf frischer Tat ertappen,
# - die Speicherzähler der GPU lesen, Größen abschätzen, einen Out-of-Memory-Fehler überstehen und
#   die Batchgröße finden, die passt,
# - zwei GPUs ansprechen, ohne `cuda:1` fest hinzuschreiben, und `nvidia-smi` aus Code lesen.
#
# Auch auf einer Maschine ohne GPU läuft jede Zelle: Wo ein GPU-Effekt nicht auftreten kann, führt
# die Zelle die CPU-Variante davon aus und sagt, was eine T4 zeigt.

# %%
import inspect
import math
import time

import torch

from utils import bench, devices, hardware, num, nvsmi, runtime, tr
from utils.peaks import PEAKS

hw = hardware.detect()
profile = hardware.hardware_profile(runtime.detect_platform(), hw)
MIB, GIB = devices.MIB, devices.GIB
print(profile.label, "|", hw.summary())

# %% [markdown] lang="en"
# ## 1. Choosing a device today
#
# The glossary page chooses its device like this:
#
# ```python
# device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
# ```
#
# It misses a Mac's GPU (`mps`) and Intel GPUs (`xpu`). Since PyTorch 2.6, `torch.accelerator`
# knows every accelerator backend; `utils.devices.pick_device()` asks it first and falls back to
# asking CUDA and MPS directly on older PyTorch versions. Here is the whole helper:

# %% [markdown] lang="de"
# ## 1. Ein Gerät wählen, wie man es heute tut
#
# Die Glossarseite wählt ihr Gerät so:
#
# ```python
# device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
# ```
#
# Damit entgeht ihr die GPU eines Macs (`mps`) und die von Intel (`xpu`). Seit PyTorch 2.6 kennt
# `torch.accelerator` alle Beschleuniger-Backends; `utils.devices.pick_device()` fragt zuerst dort und
# fragt bei älteren PyTorch-Versionen direkt bei CUDA und MPS nach. Hier ist der ganze Helfer:

# %%
print(inspect.getsource(devices.pick_device))

seed_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # the glossary's line
device = devices.pick_device()
print(tr("glossary line:       ", "Zeile der Glossarseite:"), seed_device)
print("devices.pick_device():", device)
print(tr("all devices here:    ", "alle Geräte hier:      "), [str(d) for d in devices.list_devices()])

assert (device.type == "cuda") == bool(hw.gpus) and (device.type == "mps") == hw.mps
assert devices.list_devices()[0].type == "cpu"

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
    (f'x.device ({tr("after", "danach")})', x.device),
    (f'model.to("{other.type}") is model', model.to(other) is model),
    ("model.weight.device", model.weight.device),
]
for expression, value in rows:
    print(f"{expression:<32} {value}")

x.to(other)  # the classic slip: the copy is thrown away ...
assert x.device.type == "cpu"  # ... and x is still on the CPU
x = x.to(other)  # keep what .to() returns
assert x.device.type == model.weight.device.type == other.type
assert model(x).device.type == other.type

# %% [markdown] lang="en"
# The glossary's two lines are right: `model = model.to(device)` (the assignment does no harm) and
# `inputs = inputs.to(device)` (here the assignment is everything). `.to()` also converts dtypes
# (`x.to(torch.float16)`, or `x.to(device, torch.bfloat16)` in one step), and `x.to(other_tensor)`
# takes both device and dtype from `other_tensor`.
#
# ## 3. The mixed-device error, on purpose
#
# A data loader hands out CPU tensors. Forget to move one batch, and the forward pass stops with
# a `RuntimeError`. On a GPU it reads *"Expected all tensors to be on the same device, but found
# at least two devices, cuda:0 and cpu!"*; on `meta` the words differ, the meaning is the same.
# `devices.catch_mixed_devices(name=thing, ...)` runs a block, catches only this error, and says
# which named tensor or model lives where, and which line fixes it:

# %% [markdown] lang="de"
# Die zwei Zeilen der Glossarseite stimmen also: `model = model.to(device)` (die Zuweisung schadet
# nicht) und `inputs = inputs.to(device)` (hier ist die Zuweisung alles). `.to()` wandelt auch
# Datentypen um (`x.to(torch.float16)` oder in einem Schritt `x.to(device, torch.bfloat16)`), und
# `x.to(anderer_tensor)` übernimmt Gerät und Datentyp von `anderer_tensor`.
#
# ## 3. Der Fehler mit gemischten Geräten, absichtlich
#
# Ein DataLoader liefert CPU-Tensoren. Vergisst du, einen Batch zu verschieben, bricht der
# Vorwärtsdurchlauf mit einem `RuntimeError` ab. Auf einer GPU lautet er *„Expected all tensors to
# be on the same device, but found at least two devices, cuda:0 and cpu!“*; auf `meta` sind die
# Worte andere, die Bedeutung dieselbe. `devices.catch_mixed_devices(name=ding, ...)` führt einen
# Block aus, fängt nur diesen Fehler ab und sagt, welcher genannte Tensor oder welches Modell wo liegt
# und welche Zeile es behebt:

# %%
net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
net.to(other)
batch = torch.randn(8, 16)  # straight from the data loader: on the CPU

with devices.catch_mixed_devices(model=net, batch=batch) as caught:
    net(batch)
assert caught and devices.is_mixed_device_error(caught.error)

batch = batch.to(other)  # the fix the helper printed
out = net(batch)
print(tr("after the fix:", "nach der Korrektur:"), out.shape, out.device)
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
    position = torch.arange(h.shape[-1])  # on the CPU, wherever h lives
    return h + position


def add_position_fixed(h):
    position = torch.arange(h.shape[-1], device=h.device, dtype=h.dtype)  # created next to h
    return h + position


with devices.catch_mixed_devices(h=out) as caught:
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
# `devices.measure_copy` times a copy with `utils.bench.measure` (warm, synchronised, median). On a
# CPU-only machine there is no link and nothing to pin (pinning needs an accelerator backend), so
# the cell measures the CPU's version of the same effect: copying into a **fresh** buffer, whose pages
# the operating system has to map one by one on first touch, against copying into a buffer that is
# already mapped and **reused**, as pinned buffers are.

# %% [markdown] lang="de"
# Lege neue Tensoren *passend* zu denen an, auf die sie treffen: `device=x.device, dtype=x.dtype`,
# oder `torch.zeros_like(x)`, `x.new_zeros(form)`. In Lab 02 reparierst du eine solche Funktion.
#
# ## 4. Kopien zwischen Host und Gerät: was das Verschieben kostet
#
# Zwischen dem Speicher der CPU (dem *Host*) und dem Speicher einer GPU liegt eine Verbindung, auf
# den Maschinen dieses Kurses PCI Express (PCIe). Ihre Bandbreite ist winzig gegen den eigenen
# Speicher der GPU: Eine T4 liest ihren Speicher mit 320 GB/s und bekommt Daten über PCIe Gen3 x16
# mit höchstens 15,75 GB/s.
#
# Wie schnell eine Kopie läuft, hängt auch vom Host-Speicher ab:
#
# - **Auslagerbaren** Speicher (pageable, jeder gewöhnliche Tensor) darf das Betriebssystem
#   verschieben oder auslagern, deshalb kann die Kopier-Einheit der GPU ihn nicht direkt lesen. Der
#   Treiber kopiert ihn erst in einen gesperrten Zwischenpuffer und schickt dann diesen (CUDA Runtime
#   API, Abschnitt „API synchronization behavior“): zwei Kopien, und die erste macht die CPU.
# - **Gepinnter** (page-locked) Speicher bleibt, wo er ist; die Kopier-Einheit liest ihn direkt (DMA,
#   Direct Memory Access). `tensor.pin_memory()` oder `DataLoader(..., pin_memory=True)` liefern solchen
#   Speicher; nur dann kann `.to(device, non_blocking=True)` wirklich im Hintergrund laufen.
#
# `devices.measure_copy` misst eine Kopie mit `utils.bench.measure` (aufgewärmt, synchronisiert,
# Median). Auf einer reinen CPU-Maschine gibt es keine Verbindung und nichts zu pinnen (Pinnen
# braucht ein Beschleuniger-Backend), also misst die Zelle die CPU-Fassung desselben Effekts: eine
# Kopie in einen **frischen** Puffer, dessen Seiten das Betriebssystem beim ersten Zugriff eine nach
# der anderen einblenden muss, gegen eine Kopie in einen Puffer, der schon eingeblendet ist und
# **wiederverwendet** wird, wie es gepinnte Puffer werden.

# %%
nbytes = profile.pick(cpu=64 * MIB, cuda=256 * MIB, mps=256 * MIB)
link = devices.gpu_link(device.index or 0) if device.type == "cuda" else None

if device.type == "cpu":
    copies = [
        devices.measure_copy(nbytes, fresh=True, label=tr("CPU copy, fresh buffer", "CPU-Kopie, frischer Puffer")),
        devices.measure_copy(nbytes, label=tr("CPU copy, reused buffer", "CPU-Kopie, Puffer wiederverwendet")),
    ]
else:
    pin = devices.can_pin()
    copies = [devices.measure_copy(nbytes, "cpu", device, label=tr("host→device pageable", "Host→Gerät auslagerbar"))]
    if pin:
        copies.append(devices.measure_copy(nbytes, "cpu", device, pinned=True, label=tr("host→device pinned", "Host→Gerät gepinnt")))
    copies.append(devices.measure_copy(nbytes, device, "cpu", label=tr("device→host pageable", "Gerät→Host auslagerbar")))
    if pin:
        copies.append(devices.measure_copy(nbytes, device, "cpu", pinned=True, label=tr("device→host pinned", "Gerät→Host gepinnt")))

print(tr(f"copying {devices.format_bytes(nbytes)}:", f"Kopie von {devices.format_bytes(nbytes)}:"))
for c in copies:
    share = tr(f"  = {100 * c.gbs / link.gbs:.0f} % of the link", f"  = {num(100 * c.gbs / link.gbs, '.0f')} % der Verbindung") if link else ""
    print(f"  {c.label:<32} {num(c.gbs, '6.1f')} GB/s   ({bench.format_seconds(c.seconds)}){share}")
if link:
    print(tr("link:", "Verbindung:"), link)
print(tr(f"ratio {copies[1].label} / {copies[0].label}: {copies[1].gbs / copies[0].gbs:.1f}×",
         f"Verhältnis {copies[1].label} / {copies[0].label}: {num(copies[1].gbs / copies[0].gbs, '.1f')}×"))
assert all(c.gbs > 0 and c.nbytes == nbytes for c in copies)

# %% [markdown] lang="en"
# What a T4 shows, from its data sheet and published measurements (checked November 2026):

# %% [markdown] lang="de"
# Was eine T4 zeigt, nach Datenblatt und veröffentlichten Messungen (Stand November 2026):

# %%
t4_link = devices.link_for_name("Tesla T4")
low, high = t4_link.typical_pinned_gbs
print(tr(f"T4 link: PCIe Gen{t4_link.generation} x{t4_link.lanes} = {t4_link.gbs:.2f} GB/s per direction, in theory",
         f"T4-Verbindung: PCIe Gen{t4_link.generation} x{t4_link.lanes} = {num(t4_link.gbs, '.2f')} GB/s je Richtung, theoretisch"))
print(tr(f"pinned copies reach about {low:.0f} GB/s ({100 * low / t4_link.gbs:.0f} %); pageable ones clearly less",
         f"gepinnte Kopien erreichen etwa {num(low, '.0f')} GB/s ({num(100 * low / t4_link.gbs, '.0f')} %); auslagerbare deutlich weniger"))
print(tr(f"the T4's own memory: {PEAKS['T4'].bandwidth_gbs} GB/s, {PEAKS['T4'].bandwidth_gbs / t4_link.gbs:.0f}× the link",
         f"der eigene Speicher der T4: {PEAKS['T4'].bandwidth_gbs} GB/s, das {num(PEAKS['T4'].bandwidth_gbs / t4_link.gbs, '.0f')}-Fache der Verbindung"))
assert 15.7 < t4_link.gbs < 15.8
print(tr("source:", "Quelle:"), tr(*devices.LINK_SOURCE))

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
# ### Übertragungszeit gegen Rechenzeit
#
# Ist die Kopie ein Problem? Vergleiche sie mit der Arbeit, die mit den Daten geschieht. Nimm einen
# Batch von der eben kopierten Größe und schick ihn auf dem Gerät durch eine lineare Schicht:

# %%
features = profile.pick(cpu=256, cuda=1024, mps=1024)
samples = nbytes // 4 // features
data = torch.randn(samples, features, device=device)
weight = torch.randn(features, features, device=device) / math.sqrt(features)
flops = 2 * samples * features * features
compute = bench.measure(torch.matmul, data, weight, flops=flops, dtype="float32", name="batch @ weight")
transfer = copies[0]  # the plain way: pageable (on a CPU: a copy into a fresh buffer)

print(tr(f"batch {samples} × {features} float32 = {devices.format_bytes(nbytes)}",
         f"Batch {samples} × {features} float32 = {devices.format_bytes(nbytes)}"))
print(tr(f"  copy    {bench.format_seconds(transfer.seconds)}", f"  Kopie   {bench.format_seconds(transfer.seconds)}"))
print(tr(f"  compute {bench.format_seconds(compute.median)}  ({bench.format_rate(compute.flops_per_second)})",
         f"  Rechnen {bench.format_seconds(compute.median)}  ({bench.format_rate(compute.flops_per_second)})"))
print(tr(f"  the copy takes {transfer.seconds / compute.median:.2f}× the compute time",
         f"  die Kopie dauert das {num(transfer.seconds / compute.median, '.2f')}-Fache der Rechenzeit"))

# The same batch on a T4, from the data sheet (fp32 peak) and the typical pinned link speed:
t4_batch, t4_features = 256 * MIB // 4 // 1024, 1024
t4_copy = devices.transfer_seconds(256 * MIB, low)
t4_compute = 2 * t4_batch * t4_features**2 / (PEAKS["T4"].tflops["float32"] * 1e12)
print(tr(f"T4, {t4_batch} × {t4_features}: copy ≈ {t4_copy * 1e3:.0f} ms at {low:.0f} GB/s, "
         f"compute ≥ {t4_compute * 1e3:.0f} ms at the fp32 peak",
         f"T4, {t4_batch} × {t4_features}: Kopie ≈ {num(t4_copy * 1e3, '.0f')} ms bei {num(low, '.0f')} GB/s, "
         f"Rechnen ≥ {num(t4_compute * 1e3, '.0f')} ms bei der fp32-Spitzenleistung"))
assert compute.median > 0 and t4_copy > t4_compute

# %% [markdown] lang="en"
# On a T4 moving the batch takes *longer* than one layer computing on it, even at the GPU's peak.
# A GPU needs many FLOPs per byte that crosses the link to stay busy: at 8.1 TFLOP/s and 12 GB/s that
# is about 675 FLOPs per byte. Hence the rules of thumb: move the model once, keep data on the GPU
# for all the layers, pin and prefetch the input batches, and never move tensors back and forth
# inside a loop (`.item()`, `.cpu()`, `print(tensor)` all copy to the host).
#
# Explore how many FLOPs per byte each GPU needs, and how long a batch takes to cross its link:

# %% [markdown] lang="de"
# Auf einer T4 dauert das Verschieben des Batches *länger* als eine Schicht, die damit rechnet, sogar
# bei Spitzenleistung. Eine GPU braucht viele FLOPs pro Byte, das die Verbindung überquert, um
# ausgelastet zu sein: bei 8,1 TFLOP/s und 12 GB/s etwa 675 FLOPs pro Byte. Daher die Faustregeln:
# das Modell einmal verschieben, die Daten für alle Schichten auf der GPU lassen, die Eingabe-Batches
# pinnen und vorausladen, und Tensoren nie in einer Schleife hin- und herschieben (`.item()`,
# `.cpu()` und `print(tensor)` kopieren alle zum Host).
#
# Probier aus, wie viele FLOPs pro Byte jede GPU braucht und wie lange ein Batch über ihre
# Verbindung braucht:

# %%
from utils.widgets import explore


def link_budget(gpu, batch_mib, dtype):
    chip_link = devices.link_for_name(gpu)
    typical = chip_link.typical_pinned_gbs[0]
    peak = PEAKS[gpu].tflops[dtype]
    seconds = devices.transfer_seconds(batch_mib * MIB, typical)
    print(tr(f"{gpu}: {chip_link}; typical pinned {typical:.0f} GB/s",
             f"{gpu}: {chip_link}; gepinnt typisch {num(typical, '.0f')} GB/s"))
    print(tr(f"  {batch_mib} MiB cross the link in {seconds * 1e3:.1f} ms",
             f"  {batch_mib} MiB überqueren die Verbindung in {num(seconds * 1e3, '.1f')} ms"))
    print(tr(f"  to keep {peak:g} TFLOP/s ({dtype}) busy, the model must do ≥ {peak * 1e12 / (typical * 1e9):,.0f} FLOPs per byte sent",
             f"  um {num(peak, 'g')} TFLOP/s ({dtype}) auszulasten, muss das Modell ≥ {num(peak * 1e12 / (typical * 1e9), ',.0f')} FLOPs pro gesendetem Byte leisten"))


panel = explore(link_budget, {"gpu": "T4", "batch_mib": 256, "dtype": "float32"},
                gpu=["T4", "L4", "A100", "H100"], batch_mib=[16, 64, 256, 1024], dtype=["float32", "float16"])

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
# voraus (Lektion 01 hat es für eine Matrixmultiplikation gezeigt). Eine Stoppuhr um den Aufruf misst
# das Einreihen. Hier noch einmal, auf dem Gerät dieser Lektion: PyTorch auf einer GPU, JAX auf CPU
# oder TPU (JAX arbeitet selbst auf der CPU asynchron).

# %%
n = profile.pick(cpu=768, cuda=4096, mps=2048)
if device.type in ("cuda", "mps"):
    wait = bench.synchronizer(device.type)
    a = torch.randn(n, n, device=device)

    def work(a):
        return a @ a @ a
else:
    import jax
    import jax.numpy as jnp

    wait = jax.block_until_ready
    a = jnp.ones((n, n), dtype=jnp.float32) + jnp.arange(n, dtype=jnp.float32) / n
    work = jax.jit(lambda a: a @ a @ a)

wait(work(a))  # warm up (and compile, for JAX)
start = time.perf_counter()
result = work(a)
queued = time.perf_counter() - start  # wrong: the work may still be running
wait(result)
done = time.perf_counter() - start
right = bench.measure(work, a, name="a @ a @ a")
print(tr(f"without waiting: {bench.format_seconds(queued)}   with waiting: {bench.format_seconds(done)}   "
         f"bench.measure: {bench.format_seconds(right.median)}",
         f"ohne Warten: {bench.format_seconds(queued)}   mit Warten: {bench.format_seconds(done)}   "
         f"bench.measure: {bench.format_seconds(right.median)}"))
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
# zurück, bevor die Daten angekommen sind; genau das lässt den nächsten Batch reisen, während die GPU
# den aktuellen rechnet. Vom Host zum Gerät ist das sicher: Alles, was nach der Kopie eingereiht
# wird, wartet auf sie. Die Gegenrichtung nicht: `gpu_tensor.to("cpu", non_blocking=True)` liefert
# einen CPU-Tensor, dessen Zahlen vielleicht noch nicht da sind, und wer ihn vor
# `torch.cuda.synchronize()` liest, liest Unsinn (PyTorchs `non_blocking`-Tutorial zeigt es). Auf
# einer GPU ertappt die nächste Zelle eine nicht blockierende Kopie auf frischer Tat.

# %%
if device.type == "cuda" and devices.can_pin():
    host = torch.randn(nbytes // 4).pin_memory()
    torch.cuda.synchronize()
    start = time.perf_counter()
    on_gpu = host.to(device, non_blocking=True)
    returned = time.perf_counter() - start
    torch.cuda.synchronize()
    arrived = time.perf_counter() - start
    print(tr(f"non_blocking copy of {devices.format_bytes(nbytes)}: returned after {bench.format_seconds(returned)}, "
             f"arrived after {bench.format_seconds(arrived)}",
             f"nicht blockierende Kopie von {devices.format_bytes(nbytes)}: zurück nach {bench.format_seconds(returned)}, "
             f"angekommen nach {bench.format_seconds(arrived)}"))
    assert torch.equal(on_gpu.cpu(), host)
else:
    print(tr("No CUDA GPU here: on a T4 the call returns after some microseconds, the data arrives "
             f"about {num(devices.transfer_seconds(nbytes, low) * 1e3, '.0f')} ms later ({devices.format_bytes(nbytes)} at ≈{low:.0f} GB/s).",
             "Keine CUDA-GPU hier: Auf einer T4 kehrt der Aufruf nach einigen Mikrosekunden zurück, die Daten "
             f"kommen etwa {num(devices.transfer_seconds(nbytes, low) * 1e3, '.0f')} ms später an ({devices.format_bytes(nbytes)} bei ≈{num(low, '.0f')} GB/s)."))

# %% [markdown] lang="en"
# ## 6. GPU memory
#
# ### Estimating sizes before you allocate
#
# A tensor needs `elements × bytes per element`. Estimate before you allocate; a model you can even
# build on the `meta` device, which takes no memory and no time, and count its bytes there:

# %% [markdown] lang="de"
# ## 6. GPU-Speicher
#
# ### Größen abschätzen, bevor du Speicher anlegst
#
# Ein Tensor braucht `Elemente × Bytes pro Element`. Schätze, bevor du Speicher anlegst; ein Modell
# kannst du sogar auf dem Gerät `meta` bauen, das weder Speicher noch Zeit kostet, und dort seine Bytes
# zählen:

# %%
for shape, dtype in [((8192, 8192), torch.float32), ((8192, 8192), torch.float16), ((64, 3, 224, 224), torch.uint8)]:
    print(f"{str(shape):<20} {str(dtype):<15} {devices.format_bytes(devices.tensor_bytes(shape, dtype)):>10}")

t = torch.empty(1000, 3, dtype=torch.bfloat16)
assert t.nbytes == t.numel() * t.element_size() == devices.tensor_bytes(t.shape, t.dtype) == 6000

start = time.perf_counter()
with torch.device("meta"):  # every tensor made in this block lives on meta: shapes only
    big = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096) for _ in range(32)])
built = time.perf_counter() - start
parameters = sum(p.numel() for p in big.parameters())
print(tr(f"a model of {parameters / 1e6:.0f} M parameters, built on meta in {bench.format_seconds(built)}: "
         f"{devices.format_bytes(devices.module_bytes(big))} in float32",
         f"ein Modell mit {num(parameters / 1e6, '.0f')} Mio. Parametern, auf meta gebaut in {bench.format_seconds(built)}: "
         f"{devices.format_bytes(devices.module_bytes(big))} in float32"))
assert devices.module_bytes(big) == parameters * 4 and devices.where(big) == "meta"

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
# ### Belegt gegen reserviert
#
# PyTorch gibt freigegebenen GPU-Speicher nicht an den Treiber zurück. Sein *Caching-Allocator*
# behält ihn und verwendet ihn für die nächsten Tensoren wieder, denn den Treiber zu fragen ist
# langsam. Zwei Zähler erzählen die Geschichte: `torch.cuda.memory_allocated()` (Bytes in lebenden
# Tensoren) und `torch.cuda.memory_reserved()` (Bytes, die PyTorch hält, lebend oder zwischengespeichert).
# `nvidia-smi` sieht *reserviert* plus den CUDA-Kontext, den eigenen Anteil des Treibers, den
# `empty_cache()` nie freigibt.
#
# `torch.cuda.empty_cache()` gibt die zwischengespeicherten, unbenutzten Blöcke an den Treiber zurück.
# Es gibt **keinen** Speicher von Tensoren frei, die du noch hältst, und verschafft PyTorch selbst
# keinen zusätzlichen Platz: PyTorch hätte den Cache ohnehin wiederverwendet. Es hilft anderen
# Prozessen, und es sorgt dafür, dass `nvidia-smi` die Wahrheit sagt (PyTorch-Dokumentation, „CUDA
# semantics: memory management“).

# %%
size = profile.pick(cpu=256 * MIB, cuda=1 * GIB, mps=1 * GIB)
if device.type == "cuda":
    torch.cuda.synchronize()
    devices.free_memory()
    steps = [(tr("start", "Start"), devices.memory_stats(device))]
    block = torch.empty(size, dtype=torch.uint8, device=device)
    steps.append((tr(f"x = {devices.format_bytes(size)} tensor", f"x = Tensor mit {devices.format_bytes(size)}"), devices.memory_stats(device)))
    del block
    steps.append(("del x", devices.memory_stats(device)))
    torch.cuda.empty_cache()
    steps.append(("empty_cache()", devices.memory_stats(device)))
    print(f"{'':<28} {tr('allocated', 'belegt'):>12} {tr('reserved', 'reserviert'):>12}")
    for label, s in steps:
        print(f"{label:<28} {devices.format_bytes(s.allocated):>12} {devices.format_bytes(s.reserved):>12}")
    assert steps[1][1].allocated - steps[0][1].allocated >= size
    assert steps[2][1].allocated == steps[0][1].allocated and steps[2][1].reserved >= steps[1][1].reserved - 1
    assert steps[3][1].reserved <= steps[2][1].reserved
else:
    print(tr("No CUDA GPU here. On a T4, with a 1 GiB tensor, the two counters read:",
             "Keine CUDA-GPU hier. Auf einer T4, mit einem Tensor von 1 GiB, zeigen die zwei Zähler:"))
    for label, allocated, reserved in [(tr("x = 1 GiB tensor", "x = Tensor mit 1 GiB"), "1.00 GiB", "1.00 GiB"),
                                       ("del x", "0 B", "1.00 GiB"), ("empty_cache()", "0 B", "0 B")]:
        print(f"  {label:<24} {tr('allocated', 'belegt')} {allocated:>9}   {tr('reserved', 'reserviert')} {reserved:>9}")
    # The CPU's own version: the operating system hands out memory page by page, on first touch.
    rss = [devices.process_rss()]
    block = torch.empty(size, dtype=torch.uint8)  # asked for ...
    rss.append(devices.process_rss())
    block.fill_(1)  # ... and touched
    rss.append(devices.process_rss())
    del block
    rss.append(devices.process_rss())
    if None not in rss:
        grown = [r - rss[0] for r in rss[1:]]
        print(tr(f"On this CPU, the process's resident memory (RSS) for a tensor of {devices.format_bytes(size)}:",
                 f"Auf dieser CPU: belegter Arbeitsspeicher (RSS) des Prozesses für einen Tensor mit {devices.format_bytes(size)}:"))
        for label, delta in zip([tr("torch.empty", "torch.empty"), tr("after writing to it", "nach dem Beschreiben"), "del"], grown, strict=True):
            print(f"  {label:<22} {'+' if delta >= 0 else ''}{devices.format_bytes(delta)}")
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
# ### Ein Out-of-Memory-Fehler, abgefangen und überstanden
#
# Verlange mehr Speicher, als das Gerät hat. Der Fehler ist eine Ausnahme wie jede andere: Fang sie
# ab, lass los, was du gehalten hast, leere den Cache und mach weiter. Auf einer GPU verlangt die
# Zelle das Doppelte des GPU-Speichers, auf einer CPU ein Pebibyte (2⁵⁰ Byte), das keine Maschine hat.

# %%
if device.type == "cuda":
    request, where_to = 2 * torch.cuda.get_device_properties(device).total_memory, device
else:
    request, where_to = 2**50, torch.device("cpu")

oom = None
try:
    too_big = torch.empty(request, dtype=torch.uint8, device=where_to)
except RuntimeError as error:  # torch.OutOfMemoryError is a RuntimeError
    if not devices.is_oom(error):
        raise
    oom = error
assert oom is not None, "the request should not have fitted"
print(tr(f"asked for {devices.format_bytes(request)}:", f"{devices.format_bytes(request)} verlangt:"),
      type(oom).__name__, "-", str(oom).strip().splitlines()[0][:160])
oom = None  # the error keeps the frames of the failed call alive: drop it ...
devices.free_memory()  # ... then collect garbage and empty the cache
check = torch.ones(1000, device=where_to).sum().item()
print(tr(f"and the session goes on: torch.ones(1000).sum() = {check:.0f}",
         f"und die Sitzung läuft weiter: torch.ones(1000).sum() = {check:.0f}"))
assert check == 1000

# %% [markdown] lang="en"
# ### Finding the batch size that fits
#
# Memory grows with the batch size, so the usual way to find the largest batch is to try:
# `devices.find_batch_size(step)` doubles the batch size until `step` runs out of memory, then
# bisects between the last size that fit and the first that did not. It catches **only**
# out-of-memory errors: a shape bug is still a bug and stops the search. The step here is
# memory-heavy on purpose: each sample takes 2 MiB of activations (like a long sequence in a
# transformer layer), computed twice. On a GPU it runs for real; a CPU must not run out of memory
# (the operating system would end the whole session), so there `devices.MemoryBudget` plays a T4's
# 15 GiB and raises the same `torch.OutOfMemoryError`.

# %% [markdown] lang="de"
# ### Die Batchgröße finden, die passt
#
# Der Speicherbedarf wächst mit der Batchgröße, deshalb findet man die größte Batchgröße üblicherweise
# durch Ausprobieren: `devices.find_batch_size(step)` verdoppelt die Batchgröße, bis `step` keinen
# Speicher mehr bekommt, und halbiert dann das Intervall zwischen der letzten Größe, die passte, und
# der ersten, die nicht passte. Es fängt **nur** Out-of-Memory-Fehler ab: Ein Fehler in den Formen
# bleibt ein Fehler und beendet die Suche. Der Schritt hier braucht absichtlich viel Speicher: Jedes
# Beispiel belegt 2 MiB an Aktivierungen (wie eine lange Sequenz in einer Transformer-Schicht),
# zweimal berechnet. Auf einer GPU läuft er wirklich; einer CPU darf der Speicher nicht ausgehen (das
# Betriebssystem würde die ganze Sitzung beenden), also spielt dort `devices.MemoryBudget` die 15 GiB
# einer T4 und wirft denselben `torch.OutOfMemoryError`.

# %%
per_sample = 2 * MIB  # bytes of one sample's activations
width = per_sample // 4  # float32 numbers per sample

if device.type == "cuda":
    capacity = torch.cuda.get_device_properties(device).total_memory

    def step(batch_size):
        h = torch.randn(batch_size, width, device=device)
        return (h * 2).sum().item()  # a second tensor of the same size, then one number back
else:
    capacity = 15 * GIB  # a T4's usable memory
    budget = devices.MemoryBudget(capacity, name="T4 (simulated)")

    def step(batch_size):
        with budget.hold(2 * batch_size * per_sample):  # h and h * 2, as on the GPU
            h = torch.randn(min(batch_size, 4), 8)  # a token computation: the memory is pretend
            return (h * 2).sum().item()

limit = 2 ** math.ceil(math.log2(4 * capacity / per_sample))  # far past what can fit
start = time.perf_counter()
search = devices.find_batch_size(step, limit=limit, refine=True)
print(search.table())
estimate = capacity // (2 * per_sample)
print(tr(f"largest batch: {search.batch_size} (estimate from the sizes: {estimate}), found in "
         f"{len(search.tries)} tries, {time.perf_counter() - start:.1f} s",
         f"größte Batchgröße: {search.batch_size} (Schätzung aus den Größen: {estimate}), gefunden in "
         f"{len(search.tries)} Versuchen, {num(time.perf_counter() - start, '.1f')} s"))
assert 0 < search.batch_size <= estimate
assert any(not ok for _, ok in search.tries)  # it did run out of memory, and recovered
devices.free_memory()

# %% [markdown] lang="en"
# On a real GPU the answer is a little below the estimate: the CUDA context, cuBLAS workspaces and
# fragmentation take their share. Train with some headroom below what the search finds: the
# optimizer's state appears only at the first `optimizer.step()`, and a longer sequence later needs
# more. Lab 02 has you compute the estimate and write the finder yourself.
#
# ## 7. Two GPUs: `cuda:0`, `cuda:1`
#
# Kaggle's "GPU T4 x2" gives you two devices, `cuda:0` and `cuda:1`. Code written there (and some
# textbooks) hard-codes `cuda:1`; on Colab's single T4 that fails with *"CUDA error: invalid device
# ordinal"*, and on a machine without CUDA with another error. Ask how many there are instead:

# %% [markdown] lang="de"
# Auf einer echten GPU liegt das Ergebnis etwas unter der Schätzung: CUDA-Kontext, cuBLAS-Arbeitsspeicher
# und Fragmentierung nehmen sich ihren Teil. Trainiere mit etwas Abstand unter dem, was die Suche
# findet: Der Zustand des Optimierers entsteht erst beim ersten `optimizer.step()`, und eine längere
# Sequenz braucht später mehr. In Lab 02 berechnest du die Schätzung und schreibst den Sucher selbst.
#
# ## 7. Zwei GPUs: `cuda:0`, `cuda:1`
#
# Kaggles „GPU T4 x2“ gibt dir zwei Geräte, `cuda:0` und `cuda:1`. Code, der dort geschrieben wurde
# (und manches Lehrbuch), schreibt `cuda:1` fest hin; auf Colabs einzelner T4 scheitert das mit
# *„CUDA error: invalid device ordinal“*, auf einer Maschine ohne CUDA mit einem anderen Fehler. Frag
# stattdessen, wie viele es gibt:

# %%
gpus = [d for d in devices.list_devices() if d.type == "cuda"]
print(tr(f"CUDA GPUs here: {len(gpus)}", f"CUDA-GPUs hier: {len(gpus)}"), [str(d) for d in gpus])

try:
    torch.ones(1, device="cuda:1")
    hard_coded = "ran"
except (RuntimeError, AssertionError) as error:  # a CPU-only torch raises AssertionError
    hard_coded = f"{type(error).__name__}: {str(error).strip().splitlines()[0]}"
print(tr('torch.ones(1, device="cuda:1") ->', 'torch.ones(1, device="cuda:1") ->'), hard_coded)
assert (hard_coded == "ran") == (len(gpus) >= 2)

second = devices.try_gpu(1)  # cuda:1 where it exists, else a fallback and a note
print(tr("devices.try_gpu(1) ->", "devices.try_gpu(1) ->"), second)

if len(gpus) >= 2:
    on_0 = torch.randn(2048, 2048, device=gpus[0])
    on_1 = torch.randn(2048, 2048, device=gpus[1])
    with devices.catch_mixed_devices(on_0=on_0, on_1=on_1) as caught:
        on_0 @ on_1
    assert caught  # two GPUs are two devices, too
    product = on_0 @ on_1.to(on_0.device)
    hop = devices.measure_copy(nbytes, gpus[0], gpus[1], label="cuda:0 -> cuda:1")
    print(tr(f"copy cuda:0 → cuda:1: {hop.gbs:.1f} GB/s", f"Kopie cuda:0 → cuda:1: {num(hop.gbs, '.1f')} GB/s"))

# %% [markdown] lang="en"
# Two more tools for several GPUs: the environment variable `CUDA_VISIBLE_DEVICES=1` (set before
# `import torch`) shows a process only the second GPU, which then is its `cuda:0`; and
# `torch.cuda.set_device(i)` changes what plain `cuda` means. Lesson 08 uses both GPUs at once.
#
# ## 8. `nvidia-smi` from code
#
# `nvidia-smi --query-gpu=...,... --format=csv` prints one CSV line per GPU with exactly the fields
# you ask for (`nvidia-smi --help-query-gpu` lists them). `utils.nvsmi.query` runs it without ever
# raising and parses the lines:

# %% [markdown] lang="de"
# Zwei weitere Werkzeuge für mehrere GPUs: Die Umgebungsvariable `CUDA_VISIBLE_DEVICES=1` (vor
# `import torch` gesetzt) zeigt einem Prozess nur die zweite GPU, die dann sein `cuda:0` ist; und
# `torch.cuda.set_device(i)` ändert, was ein schlichtes `cuda` meint. Lektion 08 nutzt beide GPUs
# gleichzeitig.
#
# ## 8. `nvidia-smi` aus Code
#
# `nvidia-smi --query-gpu=...,... --format=csv` gibt pro GPU eine CSV-Zeile mit genau den Feldern aus,
# nach denen du fragst (`nvidia-smi --help-query-gpu` listet sie auf). `utils.nvsmi.query` führt es
# aus, ohne je eine Ausnahme zu werfen, und zerlegt die Zeilen:

# %%
fields = ("index", "name", "memory.used", "memory.total", "utilization.gpu", "pcie.link.gen.max", "pcie.link.width.max")
smi = nvsmi.query(fields=fields)
if smi.ok:
    print(nvsmi.format_table(smi.rows))
    assert len(smi.rows) >= len(gpus)
else:
    print(smi.error)
    # What the same query prints on a Colab T4 (an illustration, not a measurement), parsed:
    example = nvsmi.parse_csv("0, Tesla T4, 0, 15360, 0, 3, 16", fields)
    print(tr("On a Colab T4 the same query gives, parsed:", "Auf einer Colab-T4 liefert dieselbe Abfrage, zerlegt:"))
    print(nvsmi.format_table(example))
    assert example[0]["memory.total"] == "15360"
stats = devices.memory_stats(device)
print(tr("Without nvidia-smi, ask PyTorch:", "Ohne nvidia-smi frag PyTorch:"), stats)

# %% [markdown] lang="en"
# Where `nvidia-smi` is missing: on a CPU-only machine there is nothing to ask; on a Mac ask
# PyTorch (`torch.mps.current_allocated_memory()`, shown by `devices.memory_stats()`); on a TPU ask
# JAX (`jax.devices()[0].memory_stats()`); on a GPU machine where the tool is missing but CUDA
# works, `torch.cuda.mem_get_info()` gives free and total memory.
#
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
# `devices.try_gpu(1)`), or let each process see its own GPU as `cuda:0` via `CUDA_VISIBLE_DEVICES`.
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
# <details><summary>5. The batch-size finder said 512, yet training crashes with out-of-memory at step 1. Why?</summary>
#
# The step you tried was not the whole training step: `optimizer.step()` creates its state (two
# numbers per parameter for Adam) at the first call, and backward needs the activations kept from
# the forward pass. Search with the real training step, and keep some headroom.
# </details>
#
# ## Summary
#
# - `devices.pick_device()` finds any accelerator; list devices, never assume `cuda:1`.
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
# Wo `nvidia-smi` fehlt: Auf einer reinen CPU-Maschine gibt es nichts zu fragen; auf einem Mac frag
# PyTorch (`torch.mps.current_allocated_memory()`, angezeigt von `devices.memory_stats()`); auf einer
# TPU frag JAX (`jax.devices()[0].memory_stats()`); auf einer GPU-Maschine, auf der das Werkzeug fehlt,
# CUDA aber funktioniert, liefert `torch.cuda.mem_get_info()` freien und gesamten Speicher.
#
# ## Teste dich selbst
#
# <details><summary>1. <code>batch.to(device)</code> allein in einer Zeile, danach <code>model(batch)</code>: Was passiert, und warum?</summary>
#
# Die Kopie auf dem Gerät wird weggeworfen; `batch` ist immer noch der CPU-Tensor, also bricht der
# Vorwärtsdurchlauf mit dem Fehler wegen gemischter Geräte ab. Schreib `batch = batch.to(device)`. Ein
# Modell ist anders: `model.to(device)` verschiebt das Modell selbst.
# </details>
#
# <details><summary>2. Ein Notebook von Kaggles T4 x2 scheitert auf Colab mit „invalid device ordinal“. Was ist falsch, und wie behebst du es?</summary>
#
# Es schreibt `cuda:1` fest hin, und Colab hat eine GPU. Frag `torch.cuda.device_count()` (oder nimm
# `devices.try_gpu(1)`), oder lass jeden Prozess über `CUDA_VISIBLE_DEVICES` seine eigene GPU als
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
# Nein: Das ist der CUDA-Kontext, der eigene Speicher des Treibers für diesen Prozess; er bleibt, bis
# der Prozess endet. Was Tensoren belegen, sagt `torch.cuda.memory_allocated()`.
# </details>
#
# <details><summary>5. Der Batchgrößen-Sucher sagte 512, trotzdem bricht das Training schon in Schritt 1 mit Out-of-Memory ab. Warum?</summary>
#
# Der ausprobierte Schritt war nicht der ganze Trainingsschritt: `optimizer.step()` legt seinen
# Zustand (bei Adam zwei Zahlen pro Parameter) erst beim ersten Aufruf an, und der Rückwärtsdurchlauf
# braucht die Aktivierungen, die der Vorwärtsdurchlauf aufbewahrt. Suche mit dem echten
# Trainingsschritt und lass etwas Abstand.
# </details>
#
# ## Zusammenfassung
#
# - `devices.pick_device()` findet jeden Beschleuniger; liste die Geräte auf, nimm nie einfach
#   `cuda:1` an.
# - `.to()` eines Tensors gibt eine Kopie zurück (behalte sie); `.to()` eines Modells verschiebt das
#   Modell. Lege neue Tensoren mit `device=x.device, dtype=x.dtype` an.
# - Die Verbindung zwischen Host und Gerät ist das engste Rohr: PCIe Gen3 x16 bei einer T4,
#   theoretisch 15,75 GB/s, gepinnt etwa 12 GB/s. Pinne wiederverwendete Puffer, verschiebe Daten
#   einmal und lass sie auf dem Gerät.
# - GPU-Aufrufe und nicht blockierende Kopien kehren zurück, bevor die Arbeit getan ist:
#   synchronisiere, bevor du eine Uhr oder einen zurückkopierten Tensor liest.
# - Belegt ≤ reserviert ≤ was `nvidia-smi` zeigt. Ein Out-of-Memory-Fehler lässt sich abfangen;
#   suche die Batchgröße mit dem echten Schritt und lass Abstand.
#
# **Glossar:** Gerät (Device), Host, Gerätenummer (Device Ordinal), auslagerbarer Speicher, gepinnter
# Speicher, DMA, PCIe, asynchrone Ausführung, Synchronisation, Caching-Allocator, belegter /
# reservierter Speicher, CUDA-Kontext, Out of Memory (OOM), meta-Gerät.
#
# **Weiter:** Lab 02 (Code reparieren, der Geräte mischt, eine Kopie messen, die Batchgröße finden)
# und Lektion 03, in der das Zahlenformat entscheidet, wie viel passt und wie schnell es läuft.
