# ---
# jupyter:
#   course:
#     accelerator: GPU
#     duration:
#       cpu: 30
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
#       de: Wo liegen meine Tensoren? Verschieben, kopieren, einpassen
#       en: 'Device placement: moving, copying, fitting'
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# Six exercises on lesson 02: move a model and a batch, fix a function that mixes devices, measure
# a copy's bandwidth, compute how many samples fit in memory, write a batch-size finder that
# survives running out of memory, and time one large copy against many small ones on your device.
#
# Every check runs on any machine. Without a GPU, the checks use `meta` as the second device (a
# PyTorch device that holds shapes but no numbers, see lesson 02), a simulated copy on a simulated
# clock, and a pretend GPU that runs out of memory on cue.
#
# As in lab 00: replace each `____` with your code and run the cell; `q1.hint()` and `q1.solution()`
# help when you are stuck; the last cell shows your score. Run the setup cell and the two cells
# below it first.

# %% [markdown] lang="de"
# Sechs Aufgaben zu Lektion 02: ein Modell und einen Batch verschieben, eine Funktion reparieren, die
# Geräte mischt, die Bandbreite einer Kopie messen, ausrechnen, wie viele Beispiele in den Speicher
# passen, einen Batchgrößen-Sucher schreiben, der mit vollem Speicher zurechtkommt, und auf deinem
# Gerät eine große Kopie gegen viele kleine stoppen.
#
# Jede Prüfung läuft auf jeder Maschine. Ohne GPU nehmen die Prüfungen `meta` als zweites Gerät (ein
# PyTorch-Gerät, das Formen, aber keine Zahlen speichert, siehe Lektion 02), eine simulierte Kopie auf
# einer simulierten Uhr und eine vorgetäuschte GPU, deren Speicher auf Kommando voll ist.
#
# Wie in Lab 00: Ersetze jede Lücke `____` durch deinen Code und führe die Zelle aus; `q1.hint()` und
# `q1.solution()` helfen, wenn du festhängst; die letzte Zelle zeigt deine Punkte. Führe zuerst die
# Setup-Zelle und die beiden Zellen darunter aus.

# %%
import torch

from labs.kit import ____  # noqa: F401  # en: the blank to fill | de: die Lücke
from utils.i18n import say, text
from utils.platform import placement
from utils.timing import transfers

device = placement.pick_device()
say("torch {v} | device: {d}", "torch {v} | Gerät: {d}", v=torch.__version__, d=str(device))

# %% tags=["checks"] jupyter={"source_hidden": true} cellView="form"
# en: @title Checks (run me)
# de: @title Prüfungen (ausführen)
from labs.checks.lab02 import lab, q1, q2, q3, q4, q5, q6

lab.ready()

# %% [markdown] lang="en"
# ## 1. Move a model and a batch
#
# Write `forward_on(model, batch, device)`: run `model` on `batch` *on `device`* and return the
# output (leave it on that device). The model and the batch arrive on the CPU. The check tries every
# device this machine has, plus `meta`.

# %% [markdown] lang="de"
# ## 1. Modell und Batch verschieben
#
# Schreib `forward_on(model, batch, device)`: Lass `model` *auf `device`* mit `batch` rechnen und
# gib die Ausgabe zurück (lass sie auf diesem Gerät). Modell und Batch kommen auf der CPU an. Die
# Prüfung probiert jedes Gerät dieser Maschine aus, dazu `meta`.


# %%
def forward_on(model, batch, device):
    ### BEGIN SOLUTION
    # STARTER: return ____
    model.to(
        device
    )  # en: a model moves in place | de: ein Modell wird an Ort und Stelle verschoben
    batch = batch.to(
        device
    )  # en: a tensor is copied: keep the copy | de: ein Tensor wird kopiert: behalte die Kopie
    return model(batch)
    ### END SOLUTION


q1.check(forward_on)

# %%
# q1.hint()
# q1.solution()

# %% [markdown] lang="en"
# ## 2. Fix a function that mixes devices
#
# This function works on the CPU and fails as soon as `x` lives on a GPU:
#
# ```python
# def scale_features(x):
#     """Multiply the features (last dimension) of x by weights from 0.5 to 1.5."""
#     weights = torch.linspace(0.5, 1.5, x.shape[-1])
#     return x * weights
# ```
#
# Fix it: it must work wherever `x` lives, and return a new result on `x`'s device in `x`'s dtype
# (leave `x` itself as it is).

# %% [markdown] lang="de"
# ## 2. Eine Funktion reparieren, die Geräte mischt
#
# Diese Funktion läuft auf der CPU und scheitert, sobald `x` auf einer GPU liegt:
#
# ```python
# def scale_features(x):
#     """Multipliziert die Merkmale (letzte Dimension) von x mit Gewichten von 0,5 bis 1,5."""
#     weights = torch.linspace(0.5, 1.5, x.shape[-1])
#     return x * weights
# ```
#
# Repariere sie: Sie muss funktionieren, wo auch immer `x` liegt, und ein neues Ergebnis auf dem Gerät
# von `x` im dtype von `x` zurückgeben (`x` selbst bleibt, wie es ist).


# %%
import torch


def scale_features(x):
    ### BEGIN SOLUTION
    # STARTER: weights = ____  # en: was: torch.linspace(0.5, 1.5, x.shape[-1]) | de: bisher: torch.linspace(0.5, 1.5, x.shape[-1])
    weights = torch.linspace(0.5, 1.5, x.shape[-1], device=x.device, dtype=x.dtype)
    ### END SOLUTION
    return x * weights


q2.check(scale_features)

# %%
# q2.hint()
# q2.solution()

# %% [markdown] lang="en"
# ## 3. Measure a copy's bandwidth
#
# `copy()` starts one copy of `nbytes` bytes (from host to device, say) and returns at once, as a
# `non_blocking` copy to a GPU does; `sync()` waits until every copy started so far is done, like
# `torch.cuda.synchronize()`. Write `copy_gbs(copy, sync, nbytes)`: the bandwidth of one copy in
# GB/s (10⁹ bytes per second). Time it with `measure` from `utils.timing.bench`: `measure(copy, sync=sync)`
# warms up, waits with `sync` before it stops the clock, and its `.median` is the time of one call.
# (Your own timer with `time.perf_counter` works too, if it warms up, waits with `sync()` and divides
# by the number of copies.) The check hands you a simulated copy on a simulated clock whose first
# call is slow, so the answer is exact.

# %% [markdown] lang="de"
# ## 3. Die Bandbreite einer Kopie messen
#
# `copy()` startet eine Kopie von `nbytes` Byte (etwa vom Host zum Gerät) und kehrt sofort zurück,
# wie eine Kopie mit `non_blocking` zu einer GPU; `sync()` wartet, bis alle bisher gestarteten
# Kopien fertig sind, wie `torch.cuda.synchronize()`. Schreib `copy_gbs(copy, sync, nbytes)`: die
# Bandbreite einer Kopie in GB/s (10⁹ Byte pro Sekunde). Miss mit `measure` aus `utils.timing.bench`:
# `measure(copy, sync=sync)` wärmt auf, wartet mit `sync`, bevor es die Uhr anhält, und sein
# `.median` ist die Zeit eines Aufrufs. (Ein eigener Timer mit `time.perf_counter` geht auch, wenn er
# aufwärmt, mit `sync()` wartet und durch die Zahl der Kopien teilt.) Die Prüfung gibt dir eine
# simulierte Kopie auf einer simulierten Uhr, deren erster Aufruf langsam ist; die Antwort ist also
# exakt.


# %%
from utils.timing.bench import measure


def copy_gbs(copy, sync, nbytes):
    ### BEGIN SOLUTION
    # STARTER: return ____
    seconds = measure(
        copy, sync=sync
    ).median  # en: warm, synchronised, one copy | de: aufgewärmt, synchronisiert, eine Kopie
    return nbytes / seconds / 1e9
    ### END SOLUTION


q3.check(copy_gbs)

# %%
# q3.hint()
# q3.solution()

# %% [markdown] lang="en"
# Now decide, with your own function on real copies: does it pay to keep the host buffer pinned and
# reuse it? On a GPU the cell compares pageable with pinned memory; on a CPU it compares a fresh
# buffer with a reused one (lesson 02, section 4).

# %% [markdown] lang="de"
# Entscheide jetzt mit deiner eigenen Funktion an echten Kopien: Lohnt es sich, den Host-Puffer
# gepinnt zu halten und wiederzuverwenden? Auf einer GPU vergleicht die Zelle auslagerbaren mit
# gepinntem Speicher, auf einer CPU einen frischen mit einem wiederverwendeten Puffer (Lektion 02,
# Abschnitt 4).

# %%
if q3.result is not None and q3.result.status == "passed":
    nbytes = 64 * 2**20
    source = torch.randn(nbytes // 4)
    if device.type == "cuda" and transfers.can_pin():
        target = torch.empty(nbytes // 4, device=device)
        pinned = source.pin_memory()

        def sync(*_):
            torch.cuda.synchronize()

        plain = copy_gbs(lambda: target.copy_(source), sync, nbytes)
        better = copy_gbs(lambda: target.copy_(pinned, non_blocking=True), sync, nbytes)
        names = (text("pageable", "auslagerbar"), text("pinned", "gepinnt"))
        advice = text("in a DataLoader: pin_memory=True", "im DataLoader: pin_memory=True")
    else:
        target = torch.empty_like(source)

        def sync(*_):
            pass  # en: a copy on the CPU is done when it returns | de: eine Kopie auf der CPU ist fertig, wenn sie zurückkehrt

        plain = copy_gbs(lambda: torch.empty_like(source).copy_(source), sync, nbytes)
        better = copy_gbs(lambda: target.copy_(source), sync, nbytes)
        names = (
            text("fresh buffer", "frischer Puffer"),
            text("reused buffer", "wiederverwendeter Puffer"),
        )
        advice = text(
            "allocate buffers once and reuse them (on a GPU: pinned)",
            "Puffer einmal anlegen und wiederverwenden (auf einer GPU: gepinnt)",
        )
    say(
        "{a}: {p:.1f} GB/s   {b}: {q:.1f} GB/s   ({r:.1f}×)",
        "{a}: {p:.1f} GB/s   {b}: {q:.1f} GB/s   ({r:.1f}×)",
        a=names[0],
        b=names[1],
        p=plain,
        q=better,
        r=better / plain,
    )
    if better > 1.2 * plain:
        say("Decision: {b}, {advice}.", "Entscheidung: {b}, {advice}.", b=names[1], advice=advice)
    else:
        say(
            "Decision: no clear gain here; measure again with the real batch size.",
            "Entscheidung: hier kein klarer Gewinn; miss noch einmal mit der echten Batchgröße.",
        )
else:
    say(
        "Solve q3 first: then this cell measures real copies with your copy_gbs.",
        "Löse zuerst q3: Dann misst diese Zelle echte Kopien mit deinem copy_gbs.",
    )

# %% [markdown] lang="en"
# ## 4. How many samples fit?
#
# A GPU has `budget_gib` GiB for you. The model's weights take `model_bytes` bytes; every sample of
# a batch needs a tensor of shape `sample_shape` in `dtype` (its activations). Write
# `samples_that_fit(budget_gib, model_bytes, sample_shape, dtype)`: the largest whole number of
# samples that fits next to the model (0 if none does). Compute it; don't allocate anything.

# %% [markdown] lang="de"
# ## 4. Wie viele Beispiele passen?
#
# Eine GPU hat `budget_gib` GiB für dich. Die Gewichte des Modells belegen `model_bytes` Byte; jedes
# Beispiel eines Batches braucht einen Tensor der Form `sample_shape` im Typ `dtype` (seine
# Aktivierungen). Schreib `samples_that_fit(budget_gib, model_bytes, sample_shape, dtype)`: die
# größte ganze Zahl von Beispielen, die neben das Modell passt (0, wenn keines passt). Rechne es aus;
# leg keinen Speicher an.


# %%
import math


def samples_that_fit(budget_gib, model_bytes, sample_shape, dtype):
    ### BEGIN SOLUTION
    # STARTER: return ____
    free = budget_gib * 2**30 - model_bytes
    per_sample = math.prod(sample_shape) * dtype.itemsize
    return max(0, free // per_sample)
    ### END SOLUTION


q4.check(samples_that_fit)

# %%
# q4.hint()
# q4.solution()

# %% [markdown] lang="en"
# ## 5. A batch-size finder that survives out-of-memory
#
# `step(batch_size)` runs one training step and raises `torch.OutOfMemoryError` when the batch does
# not fit. Write `find_batch_size(step, limit)`: try 1, 2, 4, 8, … up to `limit`, and return the
# largest size that ran (0 if not even 1 did). When a size runs out of memory, stop: larger ones will
# not fit either. Catch **only** out-of-memory errors; any other error is a bug that must reach you.
# The check's `step` pretends to be a GPU that runs out of memory past a random batch size.

# %% [markdown] lang="de"
# ## 5. Ein Batchgrößen-Sucher, der mit vollem Speicher zurechtkommt
#
# `step(batch_size)` führt einen Trainingsschritt aus und wirft `torch.OutOfMemoryError`, wenn der
# Batch nicht passt. Schreib `find_batch_size(step, limit)`: Probier 1, 2, 4, 8, … bis `limit` und gib
# die größte Größe zurück, die lief (0, wenn nicht einmal 1 lief). Geht einer Größe der Speicher aus,
# hör auf: Größere passen auch nicht. Fang **nur** Out-of-Memory-Fehler ab; jeder andere Fehler ist
# ein Bug, der bei dir ankommen muss. Das `step` der Prüfung tut so, als wäre es eine GPU, der ab einer
# zufälligen Batchgröße der Speicher ausgeht.


# %%
import torch


def find_batch_size(step, limit):
    ### BEGIN SOLUTION
    # STARTER: return ____
    best, size = 0, 1
    while size <= limit:
        try:
            step(size)
        except torch.OutOfMemoryError:
            break
        best, size = size, size * 2
    return best
    ### END SOLUTION


q5.check(find_batch_size)

# %%
# q5.hint()
# q5.solution()

# %% [markdown] lang="en"
# ## 6. One copy or many? Measure it here
#
# Every transfer pays a fixed cost before its first byte moves (lesson 02). `copies` holds two
# functions that move the same bytes on this notebook's device: `copies["one_copy"]()` copies one
# large tensor, `copies["many_copies"]()` the same bytes as 1,000 small tensors, one copy each. On a
# GPU they copy from the host to the GPU, on a CPU from one buffer into another. Both return when
# the copies are done. Write `copy_time(copies)`: measure both here and return `(ms, verdict)`, with
# `ms` a dict of milliseconds per call and `verdict` the name of the faster one by your numbers:
# `"one_copy"` says batch small tensors before you move them, `"many_copies"` that the number of
# copies costs nothing measurable on this device.

# %% [markdown] lang="de"
# ## 6. Eine Kopie oder viele? Miss es hier
#
# Jede Übertragung bezahlt feste Kosten, bevor ihr erstes Byte unterwegs ist (Lektion 02). `copies`
# enthält zwei Funktionen, die auf dem Gerät dieses Notebooks dieselben Bytes bewegen:
# `copies["one_copy"]()` kopiert einen großen Tensor, `copies["many_copies"]()` dieselben Bytes als
# 1.000 kleine Tensoren, jeden mit einer eigenen Kopie. Auf einer GPU kopieren sie vom Host zur GPU,
# auf einer CPU von einem Puffer in einen anderen. Beide kehren erst zurück, wenn die Kopien fertig
# sind. Schreib `copy_time(copies)`: Miss beide hier und gib `(ms, verdict)` zurück, `ms` ein Dict
# mit den Millisekunden pro Aufruf und `verdict` den Namen der Variante, die nach deinen Zahlen
# schneller ist: `"one_copy"` heißt „kleine Tensoren vor dem Verschieben bündeln“, `"many_copies"`
# „die Zahl der Kopien kostet auf diesem Gerät nichts Messbares“.


# %%
import statistics
import time


def copy_time(copies):
    ### BEGIN SOLUTION
    # STARTER: return ____
    ms = {}
    for name, run in copies.items():
        run()  # en: the first call warms up | de: der erste Aufruf wärmt auf
        times = []
        for _ in range(5):
            start = time.perf_counter()
            run()
            times.append(1e3 * (time.perf_counter() - start))
        ms[name] = statistics.median(times)
    return ms, min(ms, key=ms.get)
    ### END SOLUTION


q6.check(copy_time)

# %%
# q6.hint()
# q6.solution()

# %% [markdown] lang="en"
# ## Your score
#
# Run the cell below. A trainer grades the same way (`python -m labs.kit.grade`, see `labs/README.md`).
#
# **Next:** lesson 03, where the number format decides how many bytes each of these samples takes.

# %% [markdown] lang="de"
# ## Deine Punkte
#
# Führe die Zelle unten aus. Trainerinnen und Trainer bewerten genauso (`python -m labs.kit.grade`,
# siehe `labs/README.md`).
#
# **Weiter:** Lektion 03, in der das Zahlenformat entscheidet, wie viele Bytes jedes dieser Beispiele
# braucht.

# %%
lab.score()
