# ---
# jupyter:
#   course:
#     duration:
#       cpu: 40
#       t4: 40
#     level: 2
#     profiles:
#     - CPU
#     - Colab T4
#     - Kaggle T4 x2
#     - Colab TPU
#     - Kaggle TPU
#     - NVIDIA
#     - MPS
#     title:
#       de: Zahlenformate und Speicher
#       en: Precision and memory
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# Eight exercises on lesson 03: bytes per dtype, the largest integer a format holds exactly, a
# loss-scaling step, the memory of full fine-tuning against LoRA, the autocast dtype for a device,
# a 16-bit sum that keeps its small terms, unscaling before clipping (as in lesson 05's training
# step), and whether bfloat16 is faster on your device. Each check tries your code on fresh random
# inputs; a wrong answer gets its own message.
#
# Replace each `____` by your code and run the cell. `qN.hint()` and `qN.solution()` help; the last
# cell shows your score.

# %% [markdown] lang="de"
# Acht Aufgaben zu Lektion 03: Bytes pro Datentyp, die größte Ganzzahl, die ein Format exakt
# darstellt, ein Schritt mit Loss Scaling, der Speicherbedarf von vollem Feintuning im Vergleich
# zu LoRA, der Autocast-Datentyp für ein Gerät, eine 16-Bit-Summe, die ihre kleinen Terme behält,
# Entskalieren vor dem Clipping (wie im Trainingsschritt aus Lektion 05) und ob bfloat16 auf
# deinem Gerät schneller ist. Jede Prüfung testet deinen Code mit neuen Zufallseingaben; jeder
# Fehler bekommt seine eigene Meldung.
#
# Ersetze jedes `____` durch deinen Code und führe die Zelle aus. `qN.hint()` und `qN.solution()`
# helfen; die letzte Zelle zeigt deine Punkte.

# %%
import torch

from labs.kit import ____  # noqa: F401

print(torch.finfo(torch.float16), torch.finfo(torch.bfloat16), sep="\n")

# %% tags=["checks"] jupyter={"source_hidden": true} cellView="form"
# en: @title Checks (run me)
# de: @title Prüfungen (ausführen)
from labs.checks.lab03 import lab, q1, q2, q3, q4, q5, q6, q7, q8

lab.ready()

# %% [markdown] lang="en"
# ## 1. Bytes of a tensor per dtype
#
# Write `tensor_bytes(shape, dtype)` for a shape (a tuple) and a dtype name: "float64", "float32",
# "float16", "bfloat16", "int8" or "int4" (two values per byte). Count whole bytes, as memory
# does: an odd number of int4 values still takes its last byte whole (round up).

# %% [markdown] lang="de"
# ## 1. Bytes eines Tensors pro Datentyp
#
# Schreib `tensor_bytes(shape, dtype)` für eine Form (ein Tupel) und einen Datentypnamen:
# "float64", "float32", "float16", "bfloat16", "int8" oder "int4" (zwei Werte pro Byte). Zähl
# ganze Bytes, wie der Speicher es tut: Auch eine ungerade Zahl von int4-Werten belegt ihr letztes
# Byte ganz (aufrunden).


# %%
import math


def tensor_bytes(shape, dtype):
    ### BEGIN SOLUTION
    # STARTER: return ____
    bits = {"float64": 64, "float32": 32, "float16": 16, "bfloat16": 16, "int8": 8, "int4": 4}
    return math.ceil(math.prod(shape) * bits[dtype] / 8)  # en: whole bytes | de: ganze Bytes
    ### END SOLUTION


q1.check(tensor_bytes)

# %%
# q1.hint()
# q1.solution()

# %% [markdown] lang="en"
# ## 2. The largest exact integer
#
# A float format stores m mantissa bits. Write `largest_exact(m)`: the largest integer N such that
# every integer from 0 to N is exactly representable (fp16: m = 10, bf16: m = 7).

# %% [markdown] lang="de"
# ## 2. Die größte exakte Ganzzahl
#
# Ein Gleitkommaformat speichert m Mantissenbits. Schreib `largest_exact(m)`: die größte Ganzzahl N,
# für die jede Ganzzahl von 0 bis N exakt darstellbar ist (fp16: m = 10, bf16: m = 7).


# %%
def largest_exact(m):
    ### BEGIN SOLUTION
    # STARTER: return ____
    return 2 ** (m + 1)
    ### END SOLUTION


q2.check(largest_exact)

# %%
# q2.hint()
# q2.solution()

# %% [markdown] lang="en"
# ## 3. A loss-scaling step
#
# `grad` is an fp32 gradient whose entries underflow in fp16. Write `rescue_gradient(grad, scale)`
# as GradScaler does it: scale, store in fp16, and return the gradient unscaled in fp32.

# %% [markdown] lang="de"
# ## 3. Ein Schritt mit Loss Scaling
#
# `grad` ist ein fp32-Gradient, dessen Einträge in fp16 zu 0 würden. Schreib
# `rescue_gradient(grad, scale)` so, wie GradScaler es tut: skalieren, in fp16 speichern und den
# Gradienten entskaliert als fp32 zurückgeben.


# %%
import torch


def rescue_gradient(grad, scale):
    ### BEGIN SOLUTION
    # STARTER: return ____
    # en: what the backward pass stores in fp16
    # de: was der Rückwärtsdurchlauf in fp16 speichert
    stored = (grad * scale).half()
    return stored.float() / scale
    ### END SOLUTION


q3.check(rescue_gradient)

# %%
# q3.hint()
# q3.solution()

# %% [markdown] lang="en"
# ## 4. Full fine-tuning vs. LoRA
#
# Write `finetune_gib(n_params, adapter_params, mode)`: GiB for weights, gradients and AdamW states
# (no activations). mode "full": everything in fp32; mode "lora": a frozen 16-bit base and fp32
# adapters trained with AdamW.

# %% [markdown] lang="de"
# ## 4. Volles Feintuning oder LoRA
#
# Schreib `finetune_gib(n_params, adapter_params, mode)`: GiB für Gewichte, Gradienten und den
# Optimiererzustand von AdamW (ohne Aktivierungen). mode "full": alles in fp32; mode "lora": eine
# eingefrorene 16-Bit-Basis und fp32-Adapter, mit AdamW trainiert.


# %%
def finetune_gib(n_params, adapter_params, mode):
    ### BEGIN SOLUTION
    # STARTER: return ____
    # en: weight, gradient, Adam's m and v | de: Gewicht, Gradient, m und v von Adam
    trained = 4 + 4 + 8
    if mode == "full":
        return trained * n_params / 2**30
    return (2 * n_params + trained * adapter_params) / 2**30
    ### END SOLUTION


q4.check(finetune_gib)

# %%
# q4.hint()
# q4.solution()

# %% [markdown] lang="en"
# ## 5. The autocast dtype for a device
#
# Write `autocast_dtype(device_type, compute_capability)` that returns the dtype for
# `torch.autocast`: `device_type` is "cuda" or "cpu", `compute_capability` a pair such as (7, 5)
# (None on the CPU).

# %% [markdown] lang="de"
# ## 5. Der Autocast-Datentyp für ein Gerät
#
# Schreib `autocast_dtype(device_type, compute_capability)`, das den Datentyp für `torch.autocast`
# zurückgibt: `device_type` ist "cuda" oder "cpu", `compute_capability` ein Paar wie (7, 5) (auf der
# CPU None).


# %%
import torch


def autocast_dtype(device_type, compute_capability):
    ### BEGIN SOLUTION
    # STARTER: return ____
    if device_type == "cpu" or compute_capability >= (8, 0):
        return torch.bfloat16
    return torch.float16
    ### END SOLUTION


q5.check(autocast_dtype)

# %%
# q5.hint()
# q5.solution()

# %% [markdown] lang="en"
# ## 6. Which sum loses precision?
#
# `values` arrive one at a time, as a kernel reads them: an iterator of 0-d tensors in float16 or
# bfloat16: one large number, then thousands of small ones, each below half the gap between the
# large number and its next neighbour. Added one by one in 16 bits, as the 10,000 × 1e-4 of lesson
# 03, every small term rounds away. Write `careful_sum(values)` that keeps them: return the sum as
# a number of the values' dtype, as close to the exact sum as one rounding allows.

# %% [markdown] lang="de"
# ## 6. Welche Summe verliert Genauigkeit?
#
# `values` kommen einzeln an, wie ein Kernel sie liest: ein Iterator über 0-d-Tensoren in float16
# oder bfloat16: eine große Zahl, dann Tausende kleine, jede kleiner als die halbe Lücke zwischen
# der großen Zahl und ihrer nächsten Nachbarzahl. Addierst du sie einzeln in 16 Bit, wie die
# 10.000 × 10⁻⁴ aus Lektion 03, wird jeder kleine Term weggerundet. Schreib `careful_sum(values)`,
# das sie behält: Gib die Summe als Zahl im Datentyp der Werte zurück, so nah an der exakten Summe,
# wie eine einzige Rundung es erlaubt.


# %%
import torch


def careful_sum(values):
    ### BEGIN SOLUTION
    # STARTER: return ____
    # en: a wide accumulator | de: ein breiter Akkumulator
    total = torch.zeros((), dtype=torch.float32)
    for value in values:
        total += value.float()
    return total.to(value.dtype)  # en: round once, at the end | de: einmal runden, am Ende
    ### END SOLUTION


q6.check(careful_sum)

# %%
# q6.hint()
# q6.solution()

# %% [markdown] lang="en"
# ## 7. Clip after unscaling
#
# With fp16 and a GradScaler, backward leaves every gradient multiplied by the loss scale. Write
# `unscale_and_clip(grads, scale, max_norm)` for one step, as `scaler.unscale_(optimizer)`
# followed by `torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)` does it (lesson 05's
# training step): `grads` is a list of fp32 tensors, still scaled, and `scale` a power of two.
# Return `(grads, skip)`: the unscaled gradients, clipped to a global L2 norm of at most
# `max_norm`, and `skip=True` if a gradient holds inf or nan (then `scaler.step` skips the update
# and the gradients don't matter).

# %% [markdown] lang="de"
# ## 7. Erst entskalieren, dann clippen
#
# Mit fp16 und einem GradScaler sind nach dem Rückwärtsdurchlauf alle Gradienten mit der Loss-Skala
# multipliziert. Schreib `unscale_and_clip(grads, scale, max_norm)` für einen Schritt, so wie
# `scaler.unscale_(optimizer)` und danach
# `torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)` es tun (der Trainingsschritt aus
# Lektion 05): `grads` ist eine Liste von fp32-Tensoren, noch skaliert, und `scale` eine
# Zweierpotenz. Gib `(grads, skip)` zurück: die entskalierten Gradienten, auf eine globale L2-Norm
# von höchstens `max_norm` begrenzt, und `skip=True`, wenn ein Gradient inf oder nan enthält (dann
# lässt `scaler.step` das Update aus, und die Gradienten sind egal).


# %%
import torch


def unscale_and_clip(grads, scale, max_norm):
    ### BEGIN SOLUTION
    # STARTER: return ____
    grads = [g / scale for g in grads]  # en: unscale first | de: zuerst entskalieren
    norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    if not torch.isfinite(norm):
        return grads, True  # en: inf or nan: skip this step | de: inf oder nan: Schritt auslassen
    coef = max_norm / (norm + 1e-6)  # en: as clip_grad_norm_ | de: wie clip_grad_norm_
    if coef < 1:
        grads = [g * coef for g in grads]
    return grads, False
    ### END SOLUTION


q7.check(unscale_and_clip)

# %%
# q7.hint()
# q7.solution()

# %% [markdown] lang="en"
# ## 8. Is bfloat16 faster here?
#
# `runs` holds two functions: `runs["float32"]()` and `runs["bfloat16"]()` run the same matmul in
# that dtype on this notebook's device and return when the work is done. Write
# `faster_dtype(runs)`: measure both here and return `(ms, verdict)`, with `ms` a dict of
# milliseconds per call for each dtype and `verdict` the name of the faster one. Then judge: does
# your measurement agree with the rule of exercise 5 for this device, and if not, why might it
# differ (a CPU without bf16 instructions, a small matrix)?

# %% [markdown] lang="de"
# ## 8. Ist bfloat16 hier schneller?
#
# `runs` enthält zwei Funktionen: `runs["float32"]()` und `runs["bfloat16"]()` rechnen dieselbe
# Matmul in diesem Datentyp auf dem Gerät dieses Notebooks und kehren zurück, sobald die Arbeit
# erledigt ist. Schreib `faster_dtype(runs)`: Miss beide hier und gib `(ms, verdict)` zurück: `ms`
# ist ein Dict mit den Millisekunden pro Aufruf für jeden Datentyp, `verdict` der Name des
# schnelleren. Dann beurteile: Stimmt deine Messung mit der Regel aus Aufgabe 5 für dieses Gerät
# überein, und wenn nicht, woran könnte es liegen (eine CPU ohne bf16-Befehle, eine kleine Matrix)?


# %%
import statistics
import time


def faster_dtype(runs):
    ### BEGIN SOLUTION
    # STARTER: return ____
    ms = {}
    for name, run in runs.items():
        run()  # en: the first call warms up | de: der erste Aufruf wärmt auf
        times = []
        for _ in range(5):
            start = time.perf_counter()
            run()
            times.append(1e3 * (time.perf_counter() - start))
        ms[name] = statistics.median(times)
    return ms, min(ms, key=ms.get)
    ### END SOLUTION


q8.check(faster_dtype)

# %%
# q8.hint()
# q8.solution()

# %% [markdown] lang="en"
# ## Your score
#
# **Next:** lesson 04, JAX on TPU.

# %% [markdown] lang="de"
# ## Deine Punkte
#
# **Weiter:** Lektion 04, JAX und TPU.

# %%
lab.score()
