# ---
# jupyter:
#   course:
#     duration:
#       cpu: 35
#       t4: 35
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
#       de: Quantisierung
#       en: Quantization
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# Seven exercises on lesson 06: absmax int8 per channel, zero-point quantization with b bits,
# per-block quantization, the 16 NF4 levels, the bytes of a model in int4 with its block scales,
# the block size that fits a budget of bits per weight, and what int8 weights cost in time on
# your device. Each check tries your code on fresh
# random inputs; a plausible mistake gets its own message. Replace each `____` by your code and
# run the cell; `qN.hint()` and `qN.solution()` help.

# %% [markdown] lang="de"
# Sieben Aufgaben zu Lektion 06: Absmax-int8 pro Kanal, Quantisierung mit Nullpunkt und b Bit,
# Quantisierung pro Block, die 16 NF4-Stufen, der Speicher eines Modells in int4 mit seinen
# Blockskalen, die Blockgröße, die in ein Budget an Bit pro Gewicht passt, und was int8-Gewichte
# auf deinem Gerät an Zeit kosten. Jede Prüfung
# probiert deinen Code mit frischen Zufallseingaben aus; ein typischer Fehler bekommt seine eigene
# Meldung. Ersetze jedes `____` durch deinen Code und führ die Zelle aus; `qN.hint()` und
# `qN.solution()` helfen.

# %%
import torch

from labs.kit import ____  # noqa: F401

print(torch.__version__)

# %% tags=["checks"] jupyter={"source_hidden": true} cellView="form"
# en: @title Checks (run me)
# de: @title Prüfungen (ausführen)
from labs.checks.lab06 import lab, q1, q2, q3, q4, q5, q6, q7

lab.ready()

# %% [markdown] lang="en"
# ## 1. Absmax int8 per channel
#
# `w` has shape (out, in). Return `(q, scale)`: `q` as int8 (torch.int8) with values in
# −127 … 127, in `w`'s shape, and one `scale` per output channel (row), shape (out, 1), so that
# `q * scale` ≈ `w`.

# %% [markdown] lang="de"
# ## 1. Absmax-int8 pro Kanal
#
# `w` hat die Form (out, in). Gib `(q, scale)` zurück: `q` als int8 (torch.int8) mit Werten von
# −127 bis 127, in der Form von `w`, und eine Skala `scale` pro Ausgabekanal (Zeile), Form
# (out, 1), sodass `q * scale` ≈ `w`.


# %%
import torch


def absmax_int8(w):
    ### BEGIN SOLUTION
    # STARTER: return ____
    scale = w.abs().amax(dim=1, keepdim=True) / 127
    q = torch.round(w / scale).clamp(-127, 127).to(torch.int8)
    return q, scale
    ### END SOLUTION


q1.check(absmax_int8)

# %%
# q1.hint()
# q1.solution()

# %% [markdown] lang="en"
# ## 2. Zero-point quantization
#
# Unsigned b-bit levels 0 … 2^b − 1 for a tensor `x` whose values need not be centred on 0.
# Return `(q, scale, zero)` with `scale = (max − min) / (2^b − 1)`, the zero-point `zero` the
# integer nearest to −min / scale (the level where x = 0 lands), and each `q` the level nearest
# to `x / scale + zero`, so that `x ≈ (q − zero) · scale`. `q` may be a float tensor or an
# integer one whose dtype holds every level (torch.uint8 for 8 bits).

# %% [markdown] lang="de"
# ## 2. Quantisierung mit Nullpunkt
#
# Vorzeichenlose b-Bit-Stufen 0 … 2^b − 1 für einen Tensor `x`, dessen Werte nicht um 0 liegen
# müssen. Gib `(q, scale, zero)` zurück, mit `scale = (max − min) / (2^b − 1)`, dem Nullpunkt
# `zero` als der ganzen Zahl, die −min / scale am nächsten liegt (die Stufe, auf der x = 0
# landet), und jedem `q` als der Stufe, die `x / scale + zero` am nächsten liegt, sodass
# `x ≈ (q − zero) · scale`. `q` darf ein Float-Tensor sein oder ein Ganzzahl-Tensor, dessen dtype
# jede Stufe fassen kann (torch.uint8 bei 8 Bit).


# %%
import torch


def zeropoint_quantize(x, bits):
    ### BEGIN SOLUTION
    # STARTER: return ____
    levels = 2**bits - 1
    scale = (x.max() - x.min()) / levels
    zero = torch.round(-x.min() / scale)
    q = torch.clamp(torch.round(x / scale) + zero, 0, levels)
    return q, scale, zero
    ### END SOLUTION


q2.check(zeropoint_quantize)

# %%
# q2.hint()
# q2.solution()

# %% [markdown] lang="en"
# ## 3. Per-block quantization
#
# Flatten `w`, cut it into blocks of `block` consecutive values, and quantize each block with its
# own absmax scale to `bits` bits (levels −(2^(b−1) − 1) … 2^(b−1) − 1). When `block` does not
# divide the number of values, the last block is shorter and gets its own scale from the values it
# holds. Return the dequantized tensor in `w`'s shape.

# %% [markdown] lang="de"
# ## 3. Quantisierung pro Block
#
# Mach `w` flach, schneide es in Blöcke aus je `block` aufeinanderfolgenden Werten und quantisiere
# jeden Block mit seiner eigenen Absmax-Skala auf `bits` Bit (Stufen −(2^(b−1) − 1) …
# 2^(b−1) − 1). Teilt `block` die Zahl der Werte nicht, ist der letzte Block kürzer und bekommt
# seine eigene Skala aus den Werten, die er enthält. Gib den entquantisierten Tensor in der Form
# von `w` zurück.


# %%
import torch


def blockwise_roundtrip(w, block, bits):
    ### BEGIN SOLUTION
    # STARTER: return ____
    qmax = 2 ** (bits - 1) - 1
    flat = w.flatten()
    # en: zeros fill the last block: they change no absmax
    # de: Nullen füllen den letzten Block auf: Sie ändern kein Absmax
    padded = torch.nn.functional.pad(flat, (0, -flat.numel() % block))
    blocks = padded.reshape(-1, block)
    scale = blocks.abs().amax(dim=1, keepdim=True) / qmax
    q = torch.round(blocks / scale).clamp(-qmax, qmax) * scale
    return q.flatten()[: flat.numel()].reshape(w.shape)
    ### END SOLUTION


q3.check(blockwise_roundtrip)

# %%
# q3.hint()
# q3.solution()

# %% [markdown] lang="en"
# ## 4. The NF4 levels
#
# Compute the 16 NF4 levels (sorted, in [−1, 1]): 8 positive ones at the standard normal's
# quantiles of `torch.linspace(offset, 0.5, 9)[:-1]`, 7 negative ones at minus the quantiles of
# `torch.linspace(offset, 0.5, 8)[:-1]`, an exact 0, all divided by the largest absolute value.
# `offset = 0.9677083`.

# %% [markdown] lang="de"
# ## 4. Die NF4-Stufen
#
# Berechne die 16 NF4-Stufen (sortiert, in [−1, 1]): 8 positive an den Quantilen der
# Standardnormalverteilung von `torch.linspace(offset, 0.5, 9)[:-1]`, 7 negative an den negativen
# Quantilen von `torch.linspace(offset, 0.5, 8)[:-1]`, eine exakte 0, alle geteilt durch den
# größten Betrag. `offset = 0.9677083`.


# %%
import torch


def nf4_levels(offset=0.9677083):
    ### BEGIN SOLUTION
    # STARTER: return ____
    normal = torch.distributions.Normal(0.0, 1.0)
    positive = normal.icdf(torch.linspace(offset, 0.5, 9, dtype=torch.float64)[:-1])
    negative = -normal.icdf(torch.linspace(offset, 0.5, 8, dtype=torch.float64)[:-1])
    levels = torch.cat([negative, torch.zeros(1, dtype=torch.float64), positive]).sort().values
    return levels / levels.abs().max()
    ### END SOLUTION


q4.check(nf4_levels)

# %%
# q4.hint()
# q4.solution()

# %% [markdown] lang="en"
# ## 5. Bytes of a model in int4
#
# A model has `n_params` weights, quantized to int4 in blocks of `block` weights, with one scale of
# `scale_bytes` bytes per block (the last block may be partial). Return the bytes it takes, in
# whole bytes: two codes share a byte, and an odd count leaves half a byte that still takes a
# whole one.

# %% [markdown] lang="de"
# ## 5. Bytes eines Modells in int4
#
# Ein Modell hat `n_params` Gewichte, in int4 quantisiert in Blöcken aus je `block` Gewichten, mit
# einer Skala von `scale_bytes` Byte pro Block (der letzte Block darf unvollständig sein). Gib
# zurück, wie viele Byte es belegt, in ganzen Byte: Zwei Codes teilen sich ein Byte, und bei
# einer ungeraden Zahl bleibt ein halbes Byte übrig, das trotzdem ein ganzes belegt.


# %%
import math


def int4_bytes(n_params, block, scale_bytes):
    ### BEGIN SOLUTION
    # STARTER: return ____
    return math.ceil(n_params / 2) + math.ceil(n_params / block) * scale_bytes
    ### END SOLUTION


q5.check(int4_bytes)

# %%
# q5.hint()
# q5.solution()

# %% [markdown] lang="en"
# ## 6. Choose the block size
#
# Smaller blocks quantize more precisely (lesson 06, section 3), but each block stores a scale.
# `w` (a torch tensor or a numpy array, float16 or float32) is to be quantized to 4 bits per
# weight in blocks of `b` consecutive weights: each block holds `b` codes of 4 bits and one absmax
# scale in `w`'s own dtype (`w.itemsize` is the size of one element in bytes, in torch and numpy
# alike). The number of weights is a multiple of every block size. Return the smallest block from
# `candidates` (in no particular order) whose bits per weight fit into `budget`; exactly on the
# budget fits. Return `None` if no block fits.

# %% [markdown] lang="de"
# ## 6. Die Blockgröße wählen
#
# Kleinere Blöcke quantisieren genauer (Lektion 06, Abschnitt 3), aber jeder Block speichert eine
# Skala. `w` (ein torch-Tensor oder ein numpy-Array, float16 oder float32) soll auf 4 Bit pro
# Gewicht quantisiert werden, in Blöcken aus `b` aufeinanderfolgenden Gewichten: Jeder Block hält
# `b` Codes zu 4 Bit und eine Absmax-Skala im dtype von `w` (`w.itemsize` ist die Größe eines
# Elements in Byte, bei torch wie bei numpy). Die Zahl der Gewichte ist ein Vielfaches jeder
# Blockgröße. Gib den kleinsten Block aus `candidates` (in beliebiger Reihenfolge) zurück, dessen
# Bit pro Gewicht in `budget` passen; genau auf dem Budget passt auch. Passt kein Block, gib `None`
# zurück.


# %%
def choose_block(w, candidates, budget):
    ### BEGIN SOLUTION
    # STARTER: return ____
    scale_bits = 8 * w.itemsize
    fitting = [b for b in candidates if 4 + scale_bits / b <= budget]
    return min(fitting) if fitting else None
    ### END SOLUTION


q6.check(choose_block)

# %%
# q6.hint()
# q6.solution()

# %% [markdown] lang="en"
# ## 7. What int8 weights cost in time here
#
# `runs` holds two functions of the same linear layer on this notebook's device:
# `runs["float32"]()` multiplies with float32 weights, `runs["int8"]()` with int8 weights and a
# scale per row that it turns back into float32 first, as a layer without a fused int8 kernel
# does. Both return when the work is done. Write `int8_time(runs)`: measure both here and return
# `(ms, verdict)`, with `ms` a dict of milliseconds per call and `verdict` the name of the faster
# one. Then judge: on this device, does int8 save you memory, time, or both?

# %% [markdown] lang="de"
# ## 7. Was int8-Gewichte hier an Zeit kosten
#
# `runs` enthält zwei Funktionen derselben linearen Schicht auf dem Gerät dieses Notebooks:
# `runs["float32"]()` multipliziert mit float32-Gewichten, `runs["int8"]()` mit int8-Gewichten und
# einer Skala pro Zeile, die es zuerst nach float32 zurückwandelt, wie eine Schicht ohne
# fusionierten int8-Kernel. Beide kehren erst zurück, wenn die Arbeit erledigt ist. Schreib
# `int8_time(runs)`: Miss beide hier und gib `(ms, verdict)` zurück, `ms` ein Dict mit den
# Millisekunden pro Aufruf und `verdict` den Namen der schnelleren. Dann urteile: Spart dir int8
# auf diesem Gerät Speicher, Zeit oder beides?


# %%
import statistics
import time


def int8_time(runs):
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


q7.check(int8_time)

# %%
# q7.hint()
# q7.solution()

# %% [markdown] lang="en"
# ## Your score
#
# **Next:** lesson 07, LoRA fine-tuning.

# %% [markdown] lang="de"
# ## Deine Punkte
#
# **Weiter:** Lektion 07, LoRA-Feintuning.

# %%
lab.score()
