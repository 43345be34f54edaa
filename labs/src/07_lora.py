# ---
# jupyter:
#   course:
#     duration:
#       cpu: 30
#       t4: 30
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
#       de: LoRA-Feintuning
#       en: LoRA fine-tuning
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# Six exercises on lesson 07: a LoRA layer, the count of trainable parameters, putting LoRA into
# the right modules of a model with everything else frozen, the merged weight, whether merging
# saves time on your device, and the largest rank that fits a memory budget. Each check tries your
# code on fresh random inputs (small layers, so it runs in a second on any CPU); a plausible
# mistake gets its own message. Replace each `____` by your code and run the cell; `qN.hint()` and
# `qN.solution()` help.

# %% [markdown] lang="de"
# Sechs Aufgaben zu Lektion 07: eine LoRA-Schicht, die Zahl der trainierbaren Parameter, LoRA in
# die richtigen Module eines Modells einsetzen und alles andere einfrieren, das eingerechnete
# Gewicht, ob das Einrechnen auf deinem Gerät Zeit spart, und der größte Rang, der in ein
# Speicherbudget passt. Jede Prüfung probiert deinen Code mit frischen Zufallseingaben aus (kleine
# Schichten, daher braucht sie auf jeder CPU etwa eine Sekunde); ein typischer Fehler bekommt seine
# eigene Meldung. Ersetze jedes `____` durch deinen Code und führ die Zelle aus; `qN.hint()` und
# `qN.solution()` helfen.

# %%
import torch

from labs.kit import ____  # noqa: F401

print(torch.__version__)

# %% tags=["checks"] jupyter={"source_hidden": true} cellView="form"
# en: @title Checks (run me)
# de: @title Prüfungen (ausführen)
from labs.checks.lab07 import lab, q1, q2, q3, q4, q5, q6

lab.ready()

# %% [markdown] lang="en"
# ## 1. A LoRA layer
#
# Complete `LoRALinear`: it wraps a frozen `nn.Linear` `base` (weight of shape (out, in)) and
# computes `base(x) + (alpha / r) · x Aᵀ Bᵀ`. Give it two trainable parameters, `self.A` of shape
# (r, in), initialised with `nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))`, and `self.B` of
# shape (out, r), so that the layer starts exactly as `base`. `base`'s own parameters must not
# train; A and B must get gradients from the output. `x` may have any number of leading dimensions.

# %% [markdown] lang="de"
# ## 1. Eine LoRA-Schicht
#
# Vervollständige `LoRALinear`: Sie packt ein eingefrorenes `nn.Linear` `base` (Gewicht der Form
# (out, in)) ein und berechnet `base(x) + (alpha / r) · x Aᵀ Bᵀ`. Gib ihr zwei trainierbare Parameter,
# `self.A` der Form (r, in), initialisiert mit `nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))`,
# und `self.B` der Form (out, r), sodass die Schicht genau wie `base` beginnt. Die eigenen Parameter
# von `base` dürfen nicht mittrainiert werden; A und B müssen aus der Ausgabe Gradienten bekommen.
# `x` darf beliebig viele führende Dimensionen haben.


# %%
import math

import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.base, self.r, self.alpha = base, r, alpha
        ### BEGIN SOLUTION
        # STARTER: self.A = ____
        # STARTER: self.B = ____
        for p in base.parameters():
            p.requires_grad_(False)
        self.A = nn.Parameter(torch.empty(r, base.in_features))
        nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = nn.Parameter(torch.zeros(base.out_features, r))
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        # STARTER: return ____
        return self.base(x) + (x @ self.A.T @ self.B.T) * (self.alpha / self.r)
        ### END SOLUTION


q1.check(LoRALinear)

# %%
# q1.hint()
# q1.solution()

# %% [markdown] lang="en"
# ## 2. Count the trainable parameters
#
# Return the number of parameters of `model` that training would change: the elements of every
# parameter with `requires_grad`, each tensor once (a weight shared by two layers is one tensor),
# as a whole number.

# %% [markdown] lang="de"
# ## 2. Trainierbare Parameter zählen
#
# Gib die Zahl der Parameter von `model` zurück, die das Training ändern würde: die Elemente jedes
# Parameters mit `requires_grad`, jeden Tensor nur einmal (ein Gewicht, das zwei Schichten teilen,
# ist ein Tensor), als ganze Zahl.


# %%
def count_trainable(model):
    ### BEGIN SOLUTION
    # STARTER: return ____
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
    ### END SOLUTION


q2.check(count_trainable)

# %%
# q2.hint()
# q2.solution()

# %% [markdown] lang="en"
# ## 3. LoRA into the right modules
#
# Write `add_lora(model, targets, r, alpha)`: freeze **every** parameter of `model`, then replace
# each `nn.Linear` whose own name (the last part of its path, e.g. `q_proj` in
# `layers.0.attn.q_proj`) is in the set `targets` by `LoRA(linear, r, alpha)` (given below), in
# place (in the model you are given, not in a copy), at any depth. Return the model. Only the
# adapters may be trainable afterwards.

# %% [markdown] lang="de"
# ## 3. LoRA in die richtigen Module
#
# Schreib `add_lora(model, targets, r, alpha)`: Friere **jeden** Parameter von `model` ein und
# ersetze dann jedes `nn.Linear`, dessen eigener Name (der letzte Teil seines Pfads, z. B. `q_proj`
# in `layers.0.attn.q_proj`) in der Menge `targets` liegt, durch `LoRA(linear, r, alpha)` (unten
# vorgegeben), an Ort und Stelle (im übergebenen Modell, nicht in einer Kopie), in jeder
# Verschachtelungstiefe. Gib das Modell zurück. Danach dürfen nur die Adapter trainierbar sein.


# %%
import torch
from torch import nn


class LoRA(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.base, self.scale = base, alpha / r
        base.weight.requires_grad_(False)
        self.A = nn.Parameter(torch.empty(r, base.in_features))
        nn.init.kaiming_uniform_(self.A, a=5**0.5)
        self.B = nn.Parameter(torch.zeros(base.out_features, r))

    def forward(self, x):
        return self.base(x) + (x @ self.A.T @ self.B.T) * self.scale


def add_lora(model, targets, r, alpha):
    ### BEGIN SOLUTION
    # STARTER: return ____
    for p in model.parameters():
        p.requires_grad_(False)
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.Linear) and name in targets:
                setattr(parent, name, LoRA(child, r, alpha))
    return model
    ### END SOLUTION


q3.check(add_lora)

# %%
# q3.hint()
# q3.solution()

# %% [markdown] lang="en"
# ## 4. The merged weight
#
# After training, LoRA folds the adapter into the frozen weight so that inference costs nothing
# extra. Return the merged weight `W'` for `W` (out, in), `A` (r, in), `B` (out, r) and the
# scale's `alpha` and `r`, as a tensor of `W`'s shape and dtype. Don't change `W` in place.

# %% [markdown] lang="de"
# ## 4. Das eingerechnete Gewicht
#
# Nach dem Training rechnet LoRA den Adapter in das eingefrorene Gewicht ein, damit die Inferenz
# nichts zusätzlich kostet. Gib für `W` (out, in), `A` (r, in), `B` (out, r) und die Skala aus
# `alpha` und `r` das eingerechnete Gewicht `W'` zurück, als Tensor mit Form und dtype von `W`.
# Ändere `W` nicht an Ort und Stelle.


# %%
def merge_weight(W, A, B, alpha, r):
    ### BEGIN SOLUTION
    # STARTER: return ____
    return W + (alpha / r) * (B @ A)
    ### END SOLUTION


q4.check(merge_weight)

# %%
# q4.hint()
# q4.solution()

# %% [markdown] lang="en"
# ## 5. Merge before serving? Measure it here
#
# After training you can serve the layer as it trained, base plus adapter, or merge the adapter
# into the weight first (q4). `runs` holds two functions of the same trained layer (1024 × 1024,
# rank 16, B ≠ 0) on 256 tokens on this notebook's device, without gradients as when serving:
# `runs["adapter"]()` computes base plus adapter, `runs["merged"]()` one `nn.Linear` with the
# merged weight. Both return when the work is done. Write `merge_time(runs)`: measure both here
# and return `(ms, verdict)`, with `ms` a dict of milliseconds per call and `verdict` the name of
# the faster one by your numbers: `"merged"` says merge before serving, `"adapter"` that keeping
# the adapter separate costs no time on this device.

# %% [markdown] lang="de"
# ## 5. Vor dem Einsatz einrechnen? Miss es hier
#
# Nach dem Training kannst du die Schicht so einsetzen, wie sie trainiert wurde, als Basis plus
# Adapter, oder den Adapter zuerst in das Gewicht einrechnen (q4). `runs` enthält zwei Funktionen
# derselben trainierten Schicht (1024 × 1024, Rang 16, B ≠ 0) auf 256 Tokens auf dem Gerät dieses
# Notebooks, ohne Gradienten wie im Einsatz: `runs["adapter"]()` rechnet Basis plus Adapter,
# `runs["merged"]()` ein einzelnes `nn.Linear` mit dem eingerechneten Gewicht. Beide kehren erst
# zurück, wenn die Arbeit erledigt ist. Schreib `merge_time(runs)`: Miss beide hier und gib
# `(ms, verdict)` zurück, `ms` ein Dict mit den Millisekunden pro Aufruf und `verdict` den Namen
# der Variante, die nach deinen Zahlen schneller ist: `"merged"` heißt „vor dem Einsatz
# einrechnen“, `"adapter"` „ein getrennter Adapter kostet auf diesem Gerät keine Zeit“.


# %%
import statistics
import time


def merge_time(runs):
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


q5.check(merge_time)

# %%
# q5.hint()
# q5.solution()

# %% [markdown] lang="en"
# ## 6. The largest rank for a memory budget
#
# `shapes` lists the (in, out) of the target layers of one transformer block (e.g. q and v, where v
# may be narrower than q), `layers` the number of blocks. Training an adapter costs 16 bytes per
# trainable parameter (its fp32 value, its gradient, and Adam's two moments). Return the largest
# rank `r` among 1, 2, 4, …, 256 whose adapters on all target layers of all blocks fit in
# `budget_bytes` (equal counts as fitting), or 0 if not even r = 1 fits. (α then usually follows
# r, e.g. α = 2r.)

# %% [markdown] lang="de"
# ## 6. Der größte Rang für ein Speicherbudget
#
# `shapes` listet (in, out) der Zielschichten eines Transformer-Blocks (z. B. q und v, wobei v
# schmaler als q sein kann), `layers` die Zahl der Blöcke. Einen Adapter zu trainieren kostet
# 16 Byte pro trainierbarem Parameter (sein fp32-Wert, sein Gradient und die zwei Momente von
# Adam). Gib den größten Rang `r` aus 1, 2, 4, …, 256 zurück, dessen Adapter auf allen Zielschichten
# aller Blöcke in `budget_bytes` passen (genau gleich viel passt auch), oder 0, wenn nicht
# einmal r = 1 passt. (α folgt dann meist r, z. B. α = 2r.)


# %%
def largest_rank(shapes, layers, budget_bytes):
    ### BEGIN SOLUTION
    # STARTER: return ____
    best = 0
    for r in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        if 16 * layers * sum(r * (a + b) for a, b in shapes) <= budget_bytes:
            best = r
    return best
    ### END SOLUTION


q6.check(largest_rank)

# %%
# q6.hint()
# q6.solution()

# %% [markdown] lang="en"
# ## Your score
#
# **Next:** lesson 08, Beyond one GPU: DDP, FSDP and sharding.

# %% [markdown] lang="de"
# ## Deine Punkte
#
# **Weiter:** Lektion 08, Mehr als eine GPU: DDP, FSDP und Sharding.

# %%
lab.score()
