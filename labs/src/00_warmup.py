# ---
# jupyter:
#   course:
#     duration:
#       cpu: 20
#       t4: 20
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
#       de: "Aufw\xE4rmen: Ger\xE4te, FLOPs und Bytes"
#       en: 'Warm-up: devices, FLOPs and bytes'
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# Five short exercises on what every later lesson counts with: the device, the FLOPs of a matrix
# multiplication, the bytes of a tensor, how many FLOPs a matmul does per byte it moves, and a
# first measurement on your own device.
#
# **How a lab works.** Each exercise has a cell with `# YOUR CODE HERE` and a blank `____`.
# Replace the blank by your code and run the cell: its last line, `q1.check(...)`, tries your code
# on fresh random inputs and says *passed*, or what is wrong. Stuck? `q1.hint()` gives a hint,
# `q1.solution()` the answer. The last cell shows your score. Nothing leaves this notebook.
#
# Run the setup cell, then the two cells below it (the second one loads the checks of this lab).

# %% [markdown] lang="de"
# Fünf kurze Aufgaben zu dem, womit jede spätere Lektion rechnet: das Gerät, die FLOPs einer
# Matrixmultiplikation, die Bytes eines Tensors, wie viele FLOPs eine Matrixmultiplikation pro
# bewegtem Byte leistet, und eine erste Messung auf deinem eigenen Gerät.
#
# **So funktioniert ein Lab.** Jede Aufgabe hat eine Zelle mit `# DEIN CODE HIER` und einer Lücke
# `____`. Ersetze die Lücke durch deinen Code und führe die Zelle aus: Ihre letzte Zeile,
# `q1.check(...)`, probiert deinen Code mit frischen Zufallseingaben aus und meldet *bestanden* oder
# was noch nicht stimmt. Kommst du nicht weiter? `q1.hint()` gibt einen Tipp, `q1.solution()` die
# Lösung.
# Die letzte Zelle zeigt deine Punkte. Nichts davon verlässt dieses Notebook.
#
# Führe die Setup-Zelle aus und danach die beiden Zellen darunter (die zweite lädt die Prüfungen
# dieses Labs).

# %%
import torch

# en: ____ is the blank you replace
# de: ____ ist die Lücke, die du ersetzt
from labs.kit import ____  # noqa: F401

print("torch", torch.__version__)

# %% tags=["checks"] jupyter={"source_hidden": true} cellView="form"
# en: @title Checks (run me)
# de: @title Prüfungen (ausführen)
from labs.checks.lab00 import (
    lab,
    q1,
    q2,
    q3,
    q4,
    q5,
)

lab.ready()

# %% [markdown] lang="en"
# ## 1. Pick the device
#
# PyTorch computes where its tensors are: on `"cuda"` (an NVIDIA GPU), `"mps"` (the GPU of a Mac)
# or `"cpu"`. Write `pick_device()` so that it returns the best one *on whatever machine it runs*:
# an NVIDIA GPU if there is one, else a Mac's GPU, else the CPU. Return the name (`"cuda"`) or a
# `torch.device`.
#
# The check compares your answer with what torch reports on this machine, and then lets torch
# pretend to be a machine with an NVIDIA GPU, a Mac, and a machine with neither.

# %% [markdown] lang="de"
# ## 1. Das Gerät wählen
#
# PyTorch rechnet dort, wo seine Tensoren liegen: auf `"cuda"` (einer NVIDIA-GPU), `"mps"` (der GPU
# eines Macs) oder `"cpu"`. Schreib `pick_device()` so, dass es das beste Gerät zurückgibt, *auf
# welcher Maschine es auch läuft*: eine NVIDIA-GPU, wenn es eine gibt, sonst die GPU des Macs, sonst
# die CPU. Gib den Namen (`"cuda"`) oder ein `torch.device` zurück.
#
# Die Prüfung vergleicht deine Antwort mit dem, was torch auf dieser Maschine meldet, und lässt
# torch danach der Reihe nach so tun, als liefe es auf einer Maschine mit NVIDIA-GPU, auf einem Mac
# und auf einer Maschine ohne beides.


# %%
import torch


def pick_device():
    ### BEGIN SOLUTION
    # STARTER: return ____
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():  # en: the GPU of a Mac | de: die GPU eines Macs
        return "mps"
    return "cpu"
    ### END SOLUTION


q1.check(pick_device)

# %%
# q1.hint()
# q1.solution()

# %% [markdown] lang="en"
# ## 2. FLOPs of a matrix multiplication
#
# Multiplying an (m×k) matrix A by a (k×n) matrix B gives m·n numbers, each a sum of k products.
# How many floating-point operations (FLOPs) is that? Speed is then FLOPs per second (FLOP/s), the
# unit of every data sheet: a T4 promises 65 TFLOP/s in fp16. (A preview of lesson 01, which
# counts FLOPs properly: one FLOP is one addition or one multiplication of floating-point numbers.)

# %% [markdown] lang="de"
# ## 2. FLOPs einer Matrixmultiplikation
#
# Eine (m×k)-Matrix A mal eine (k×n)-Matrix B ergibt m·n Zahlen, jede eine Summe aus k Produkten.
# Wie viele Gleitkommaoperationen (FLOPs) sind das? Geschwindigkeit ist dann FLOPs pro Sekunde
# (FLOP/s), die Einheit jedes Datenblatts: Eine T4 verspricht 65 TFLOP/s in fp16. (Ein Vorgriff auf
# Lektion 01, die FLOPs genau zählt: Ein FLOP ist eine Addition oder eine Multiplikation von
# Gleitkommazahlen.)


# %%
def matmul_flops(m, k, n):
    ### BEGIN SOLUTION
    # STARTER: return ____
    return 2 * m * k * n
    ### END SOLUTION


q2.check(matmul_flops)

# %%
# q2.hint()
# q2.solution()

# %% [markdown] lang="en"
# ## 3. Memory of a tensor
#
# Before you load a model you want to know whether it fits. Write `tensor_gib(shape, dtype)`: the
# memory of a tensor of that shape in GiB (2³⁰ bytes; `nvidia-smi` prints MiB, 2²⁰ bytes), for
# `torch.float32`, `torch.float16`, `torch.bfloat16` and `torch.int8`. Compute it; don't create the
# tensor (the check asks about tensors of up to 16 GiB).

# %% [markdown] lang="de"
# ## 3. Speicher eines Tensors
#
# Bevor du ein Modell lädst, willst du wissen, ob es passt. Schreib `tensor_gib(shape, dtype)`: den
# Speicher eines Tensors dieser Form in GiB (2³⁰ Byte; `nvidia-smi` zeigt MiB, 2²⁰ Byte),
# für `torch.float32`, `torch.float16`, `torch.bfloat16` und `torch.int8`. Rechne es aus, statt den
# Tensor anzulegen (die Prüfung fragt nach Tensoren mit bis zu 16 GiB).


# %%
import torch


def tensor_gib(shape, dtype):
    ### BEGIN SOLUTION
    # STARTER: return ____
    # en: the number of elements is the product of the sizes, like math.prod(shape)
    # de: die Anzahl der Elemente ist das Produkt der Größen, wie math.prod(shape)
    elements = torch.Size(shape).numel()
    return elements * dtype.itemsize / 2**30
    ### END SOLUTION


q3.check(tensor_gib)

# %%
# q3.hint()
# q3.solution()

# %% [markdown] lang="en"
# ## 4. FLOPs per byte
#
# A GPU can only compute as fast as memory delivers the numbers. The *arithmetic intensity* of a
# matmul is its FLOPs divided by the bytes it moves between memory and the chip: at least reading A
# and B once and writing C once. Write `matmul_intensity(m, k, n, dtype)`. This previews lesson 01,
# section 8: a high intensity means the chip's arithmetic is the limit, a low one means memory is;
# there you draw the roofline that shows where the line between them lies.

# %% [markdown] lang="de"
# ## 4. FLOPs pro Byte
#
# Eine GPU rechnet nur so schnell, wie der Speicher die Zahlen liefert. Die *arithmetische
# Intensität* einer Matrixmultiplikation ist die Zahl ihrer FLOPs geteilt durch die Bytes, die sie
# zwischen Speicher und Chip bewegt: Sie muss mindestens A und B einmal lesen und C einmal
# schreiben. Schreib `matmul_intensity(m, k, n, dtype)`. Das ist ein Vorgriff auf Lektion 01,
# Abschnitt 8: Bei hoher Intensität begrenzt das Rechenwerk des Chips, bei niedriger der Speicher;
# dort zeichnest du die Roofline, die zeigt, wo die Grenze zwischen beiden verläuft.


# %%
def matmul_intensity(m, k, n, dtype):
    ### BEGIN SOLUTION
    # STARTER: return ____
    flops = 2 * m * k * n
    # en: read A and B, write C
    # de: A und B lesen, C schreiben
    moved = (m * k + k * n + m * n) * dtype.itemsize
    return flops / moved
    ### END SOLUTION


q4.check(matmul_intensity)

# %%
# q4.hint()
# q4.solution()

# %% [markdown] lang="en"
# ## 5. Two number formats, timed on your device
#
# `matmuls` holds two functions: `matmuls["float32"]()` multiplies a 512×512 matrix by itself in
# float32, `matmuls["float64"]()` the same matrix in float64, both on this notebook's device, and
# each returns when the work is done. Write `time_matmuls(matmuls)`: measure both here and return
# `(ms, verdict)`, with `ms` a dict of milliseconds per call for each format and `verdict` the name
# of the slower one. Before you run it, guess how many times slower float64 will be here; lesson
# 03 shows why formats cost what they cost.

# %% [markdown] lang="de"
# ## 5. Zwei Zahlenformate, auf deinem Gerät gemessen
#
# `matmuls` enthält zwei Funktionen: `matmuls["float32"]()` multipliziert eine 512×512-Matrix mit
# sich selbst in float32, `matmuls["float64"]()` dieselbe Matrix in float64, beide auf dem Gerät
# dieses Notebooks, und jede kehrt zurück, wenn die Arbeit getan ist. Schreib
# `time_matmuls(matmuls)`: Miss beide hier und gib `(ms, verdict)` zurück, `ms` ein Dict mit den
# Millisekunden pro Aufruf für jedes Format und `verdict` der Name des langsameren. Schätz vorher,
# wie viel langsamer float64 hier sein wird; Lektion 03 zeigt, warum Formate kosten, was sie kosten.


# %%
import statistics
import time


def time_matmuls(matmuls):
    ### BEGIN SOLUTION
    # STARTER: return ____
    ms = {}
    for name, run in matmuls.items():
        run()  # en: the first call warms up | de: der erste Aufruf wärmt auf
        times = []
        for _ in range(5):
            start = time.perf_counter()
            run()
            times.append(1e3 * (time.perf_counter() - start))
        ms[name] = statistics.median(times)
    return ms, max(ms, key=ms.get)
    ### END SOLUTION


q5.check(time_matmuls)

# %%
# q5.hint()
# q5.solution()

# %% [markdown] lang="en"
# ## Your score
#
# Run the cell below. A trainer grades the same way: `python -m labs.kit.grade` runs your notebook
# from top to bottom and reads this table (see `labs/README.md`).
#
# **Next:** lesson 01 times a matrix multiplication and turns seconds into FLOP/s with the formula
# of your `matmul_flops`; its roofline builds on the intensity of exercise 4.

# %% [markdown] lang="de"
# ## Deine Punkte
#
# Führe die Zelle unten aus. Trainerinnen und Trainer bewerten genauso: `python -m labs.kit.grade`
# führt dein Notebook von oben nach unten aus und liest diese Tabelle (siehe `labs/README.md`).
#
# **Weiter:** Lektion 01 misst die Zeit einer Matrixmultiplikation und rechnet sie mit der Formel
# aus deinem `matmul_flops` in FLOP/s um; ihre Roofline baut auf der Intensität aus Aufgabe 4 auf.

# %%
lab.score()
