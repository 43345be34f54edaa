# ---
# jupyter:
#   course:
#     duration:
#       cpu: 30
#       t4: 30
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
#       de: Training auf dem Beschleuniger
#       en: Training on an accelerator
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# Five exercises on lesson 05: MFU from a measured throughput, the bottleneck from a profiler
# table, a checkpoint whose resumed run equals the uninterrupted one, the accumulation steps for a
# batch that does not fit, and where a step's time goes on your device. Each check tries your code
# on fresh random inputs; a wrong answer gets its own message.
#
# Replace each `____` by your code and run the cell. `qN.hint()` and `qN.solution()` help; the last
# cell shows your score. Run the setup cell and the two cells below it first.

# %% [markdown] lang="de"
# Fünf Aufgaben zu Lektion 05: die MFU aus einem gemessenen Durchsatz, der Engpass aus einer
# Profiler-Tabelle, ein Checkpoint, dessen fortgesetzter Lauf dem ununterbrochenen gleicht, die
# Akkumulationsschritte für einen Batch, der nicht in den Speicher passt, und wohin die Zeit eines
# Schritts auf deinem Gerät geht. Jede Prüfung testet deinen Code mit neuen Zufallseingaben; jeder
# Fehler bekommt seine eigene Meldung.
#
# Ersetze jedes `____` durch deinen Code und führe die Zelle aus. `qN.hint()` und `qN.solution()`
# helfen; die letzte Zelle zeigt deine Punkte. Führe zuerst die Setup-Zelle und die beiden Zellen
# darunter aus.

# %%
import torch

from labs.kit import ____  # noqa: F401
from utils.i18n import say

say("torch {v}", "torch {v}", v=torch.__version__)

# %% tags=["checks"] jupyter={"source_hidden": true} cellView="form"
# en: @title Checks (run me)
# de: @title Prüfungen (ausführen)
from labs.checks.lab05 import lab, q1, q2, q3, q4, q5

lab.ready()

# %% [markdown] lang="en"
# ## 1. MFU from a measured throughput
#
# A training run of a GPT with `n_params` parameters, `n_layers` layers of width `d_model` and
# context `seq_len` reaches `tokens_per_s` tokens per second. Write `mfu(...)` that returns its
# model FLOPs utilisation as a *fraction* (0.25 for 25 %) of the device's peak `peak_tflops` (in
# TFLOP/s). One trained token costs 6·N FLOPs for the weights plus 12·L·d·T for attention.

# %% [markdown] lang="de"
# ## 1. MFU aus einem gemessenen Durchsatz
#
# Ein Trainingslauf eines GPT mit `n_params` Parametern, `n_layers` Schichten der Breite `d_model`
# und dem Kontext `seq_len` erreicht `tokens_per_s` Tokens pro Sekunde. Schreib `mfu(...)`, das
# seine MFU (Model FLOPs Utilization, die Auslastung der Rechenleistung durch das Modell) als
# *Anteil* (0,25 für 25 %) an der Spitzenleistung `peak_tflops` des Geräts (in TFLOP/s)
# zurückgibt. Ein trainiertes Token kostet 6·N FLOPs für die Gewichte plus 12·L·d·T für die
# Attention.


# %%
def mfu(tokens_per_s, n_params, n_layers, d_model, seq_len, peak_tflops):
    ### BEGIN SOLUTION
    # STARTER: return ____
    flops_per_token = 6 * n_params + 12 * n_layers * d_model * seq_len
    return tokens_per_s * flops_per_token / (peak_tflops * 1e12)
    ### END SOLUTION


q1.check(mfu)

# %%
# q1.hint()
# q1.solution()

# %% [markdown] lang="en"
# ## 2. The bottleneck from a profiler table
#
# A profiled training step gives rows `(name, total_ms, calls)`, as `prof.key_averages()` does:
# the four phases `data`, `forward`, `backward` and `optimizer` (named with `record_function`),
# the whole step `train_step`, and single operations like `aten::mm`. Write `bottleneck(rows)` that
# returns the name of the phase that takes the most time in total (not per call).

# %% [markdown] lang="de"
# ## 2. Der Engpass aus einer Profiler-Tabelle
#
# Ein profilierter Trainingsschritt liefert Zeilen `(name, total_ms, calls)`, wie sie
# `prof.key_averages()` ausgibt: die vier Phasen `data`, `forward`, `backward` und `optimizer` (mit
# `record_function` benannt), den ganzen Schritt `train_step` und einzelne Operationen wie
# `aten::mm`. Schreib `bottleneck(rows)`, das den Namen der Phase zurückgibt, die insgesamt die
# meiste Zeit braucht (nicht pro Aufruf).


# %%
def bottleneck(rows):
    ### BEGIN SOLUTION
    # STARTER: return ____
    phases = {"data", "forward", "backward", "optimizer"}
    totals = {name: ms for name, ms, calls in rows if name in phases}
    return max(totals, key=totals.get)
    ### END SOLUTION


q2.check(bottleneck)

# %%
# q2.hint()
# q2.solution()

# %% [markdown] lang="en"
# ## 3. A checkpoint that resumes the same run
#
# Write `save_checkpoint(path, model, optimizer, scheduler, scaler, step, position)` and
# `load_checkpoint(path, model, optimizer, scheduler, scaler)`, which loads into the given objects
# and returns `(step, position)`. `position` is the data position, e.g. `{"epoch": 1, "batch": 3}`.
# The check trains a small model with dropout and batch normalization, interrupts it, resumes in
# fresh objects and compares with the run that was never interrupted. Remember the random number
# generators (Python, numpy, torch, and CUDA where there is one) and write atomically: a disconnect
# during a save must not destroy the checkpoint saved before.

# %% [markdown] lang="de"
# ## 3. Ein Checkpoint, der denselben Lauf fortsetzt
#
# Schreib `save_checkpoint(path, model, optimizer, scheduler, scaler, step, position)` und
# `load_checkpoint(path, model, optimizer, scheduler, scaler)`, das in die übergebenen Objekte lädt
# und `(step, position)` zurückgibt. `position` ist die Position in den Daten, z. B.
# `{"epoch": 1, "batch": 3}`. Die Prüfung trainiert ein kleines Modell mit Dropout und
# Batch-Normalisierung, unterbricht es, setzt es in frischen Objekten fort und vergleicht mit dem
# Lauf, der nie unterbrochen wurde. Denk an die Zufallsgeneratoren (Python, numpy, torch und CUDA,
# wo es eine GPU gibt) und schreib atomar: Ein Abbruch während des Speicherns darf den zuvor
# gespeicherten Checkpoint nicht zerstören.

# %%
import os
import random

import numpy as np
import torch


def save_checkpoint(path, model, optimizer, scheduler, scaler, step, position):
    ### BEGIN SOLUTION
    # STARTER: ____
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "scaler": scaler.state_dict(),
        "rng": {
            "python": random.getstate(),
            "numpy": np.random.get_state(),
            "torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
        },
        "step": step,
        "position": position,
    }
    tmp = f"{path}.tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)  # en: atomic rename | de: atomares Umbenennen
    ### END SOLUTION


def load_checkpoint(path, model, optimizer, scheduler, scaler):
    ### BEGIN SOLUTION
    # STARTER: return ____
    state = torch.load(path, weights_only=False)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    scaler.load_state_dict(state["scaler"])
    random.setstate(state["rng"]["python"])
    np.random.set_state(state["rng"]["numpy"])
    torch.set_rng_state(state["rng"]["torch"])
    if state["rng"]["cuda"] is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["rng"]["cuda"])
    return state["step"], state["position"]
    ### END SOLUTION


checkpointing = (save_checkpoint, load_checkpoint)
q3.check(checkpointing)

# %%
# q3.hint()
# q3.solution()

# %% [markdown] lang="en"
# ## 4. Accumulation steps for a target batch
#
# You want an effective batch of `target` examples, but at most `max_micro` fit in memory at once.
# Write `accumulation_steps(target, max_micro)` that returns the smallest number of steps k such
# that `target` splits into k equal micro-batches of at most `max_micro` each.

# %% [markdown] lang="de"
# ## 4. Akkumulationsschritte für einen Ziel-Batch
#
# Du willst einen effektiven Batch aus `target` Beispielen, aber höchstens `max_micro` passen auf
# einmal in den Speicher. Schreib `accumulation_steps(target, max_micro)`, das die kleinste Zahl von
# Schritten k zurückgibt, bei der sich `target` in k gleich große Micro-Batches aus jeweils
# höchstens `max_micro` Beispielen teilen lässt.


# %%
def accumulation_steps(target, max_micro):
    ### BEGIN SOLUTION
    # STARTER: return ____
    k = 1
    while target % k or target // k > max_micro:
        k += 1
    return k
    ### END SOLUTION


q4.check(accumulation_steps)

# %%
# q4.hint()
# q4.solution()

# %% [markdown] lang="en"
# ## 5. Where a step's time goes on your device
#
# `phases` holds two functions of a small training step: `phases["data"]()` prepares a batch on
# the CPU (crop, flip, normalise, copy to the device), `phases["compute"]()` runs forward pass,
# backward pass and optimizer step on this notebook's device and returns when the work is done.
# Write `time_step(phases)`: measure both here and return `(ms, verdict)`, with `ms` a dict of
# milliseconds per call for each phase and `verdict` the name of the phase that limits the step.
# Then judge: on this device, would a faster GPU or more data-loader workers help this step more?

# %% [markdown] lang="de"
# ## 5. Wohin die Zeit eines Schritts auf deinem Gerät geht
#
# `phases` enthält zwei Funktionen eines kleinen Trainingsschritts: `phases["data"]()` bereitet
# einen Batch auf der CPU vor (zuschneiden, spiegeln, normalisieren, aufs Gerät kopieren),
# `phases["compute"]()` rechnet Vorwärtsdurchlauf, Rückwärtsdurchlauf und Optimiererschritt auf
# dem Gerät dieses Notebooks und kehrt zurück, sobald die Arbeit erledigt ist. Schreib
# `time_step(phases)`: Miss beide hier und gib `(ms, verdict)` zurück: `ms` ist ein Dict mit den
# Millisekunden pro Aufruf für jede Phase, `verdict` der Name der Phase, die den Schritt
# begrenzt. Dann beurteile: Würde auf diesem Gerät eine schnellere GPU oder mehr Data-Loader-Worker
# diesem Schritt mehr helfen?


# %%
import statistics
import time


def time_step(phases):
    ### BEGIN SOLUTION
    # STARTER: return ____
    ms = {}
    for name, run in phases.items():
        run()  # en: the first call warms up | de: der erste Aufruf wärmt auf
        times = []
        for _ in range(5):
            start = time.perf_counter()
            run()
            times.append(1e3 * (time.perf_counter() - start))
        ms[name] = statistics.median(times)
    return ms, max(ms, key=ms.get)
    ### END SOLUTION


q5.check(time_step)

# %%
# q5.hint()
# q5.solution()

# %% [markdown] lang="en"
# ## Your score
#
# **Next:** lesson 06, Quantization.

# %% [markdown] lang="de"
# ## Deine Punkte
#
# **Weiter:** Lektion 06, Quantisierung.

# %%
lab.score()
