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
# Five exercises on lesson 07: a LoRA layer, the count of trainable parameters, putting LoRA into
# the right modules of a model with everything else frozen, the merged weight, and the largest
# rank that fits a memory budget. Each check tries your code on fresh random inputs (small layers,
# so it runs in a second on any CPU); a plausible mistake gets its own message. Replace each `____`
# by your code and run the cell; `qN.hint()` and `qN.solution()` help.

# %% [markdown] lang="de"
# Fünf Aufgaben zu Lektion 07: eine LoRA-Schicht, die Zahl der trainierbaren Parameter, LoRA in die
# richtigen Module eines Modells einsetzen und alles andere einfrieren, das eingerechnete Gewicht
# und der größte Rang, der in ein Speicherbudget passt. Jede Prüfung probiert deinen Code mit
# frischen Zufallseingaben aus (kleine Schichten, daher braucht sie auf jeder CPU etwa eine
# Sekunde); ein typischer Fehler bekommt seine eigene Meldung. Ersetze jedes `____` durch deinen
# Code und führ die Zelle aus; `qN.hint()` und `qN.solution()` helfen.

# %%
import torch

from labs.kit import ____  # noqa: F401

print(torch.__version__)

# %% tags=["checks"] jupyter={"source_hidden": true} cellView="form"
# en: @title Checks (run me)
# de: @title Prüfungen (ausführen)
from labs.checks.lab07 import lab, q1, q2, q3, q4, q5

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
# Now decide, with your `LoRALinear` from q1 and your `merge_weight` from q4, on this device: is
# one merged `nn.Linear` faster than base plus adapter, and does it give the same output? The cell
# times both on a 1024 × 1024 layer with rank 16 and 256 tokens.

# %% [markdown] lang="de"
# Entscheide jetzt auf diesem Gerät, mit deinem `LoRALinear` aus q1 und deinem `merge_weight` aus
# q4: Ist ein einzelnes eingerechnetes `nn.Linear` schneller als Basis plus Adapter, und liefert es
# dieselbe Ausgabe? Die Zelle misst beide an einer Schicht von 1024 × 1024 mit Rang 16 und
# 256 Tokens.

# %%
from utils.i18n import say, text
from utils.timing.bench import measure

if all(q.result is not None and q.result.status == "passed" for q in (q1, q4)):
    torch.manual_seed(0)
    base = nn.Linear(1024, 1024)
    adapted = LoRALinear(base, 16, 32)
    merged = nn.Linear(1024, 1024)
    x = torch.randn(256, 1024)
    with torch.no_grad():
        adapted.B.normal_(std=0.02)  # en: as after training: B ≠ 0 | de: wie nach dem Training
        merged.weight.copy_(merge_weight(base.weight, adapted.A, adapted.B, 32, 16))
        merged.bias.copy_(base.bias)
        same = torch.allclose(adapted(x), merged(x), rtol=1e-4, atol=1e-4)
        timed = measure(adapted, x), measure(merged, x)
    t_adapted, t_merged = (m.median for m in timed)
    noise = sum(m.iqr for m in timed)  # en: the two spreads | de: die beiden Streuungen
    say(
        "base + adapter: {a:.3f} ms   merged: {m:.3f} ms   ({r:.2f}×); the outputs {same}",
        "Basis + Adapter: {a:.3f} ms   eingerechnet: {m:.3f} ms   ({r:.2f}×); die Ausgaben {same}",
        a=t_adapted * 1e3,
        m=t_merged * 1e3,
        r=t_adapted / t_merged,
        same=text("agree", "stimmen überein") if same else text("differ", "weichen ab"),
    )
    if t_adapted - t_merged > max(noise, 0.05 * t_merged):
        say(
            "Decision: merge before serving; the adapter's two extra matmuls cost time here.",
            "Entscheidung: Vor dem Einsatz einrechnen; die zwei zusätzlichen Matmuls des "
            "Adapters kosten hier Zeit.",
        )
    else:
        say(
            "Decision: no gain beyond the noise at this size here; merge anyway when one "
            "adapter serves alone, and keep it separate to switch adapters on one base.",
            "Entscheidung: Bei dieser Größe hier kein Gewinn über die Streuung hinaus; rechne "
            "trotzdem ein, wenn ein Adapter allein im Einsatz ist, und halte ihn getrennt, wenn "
            "du auf einer Basis zwischen Adaptern wechselst.",
        )
else:
    say(
        "Solve q1 and q4 first: then this cell times your layer against your merged weight.",
        "Löse zuerst q1 und q4: Dann misst diese Zelle deine Schicht gegen dein eingerechnetes "
        "Gewicht.",
    )

# %% [markdown] lang="en"
# ## 5. The largest rank for a memory budget
#
# `shapes` lists the (in, out) of the target layers of one transformer block (e.g. q and v, where v
# may be narrower than q), `layers` the number of blocks. Training an adapter costs 16 bytes per
# trainable parameter (its fp32 value, its gradient, and Adam's two moments). Return the largest
# rank `r` among 1, 2, 4, …, 256 whose adapters on all target layers of all blocks fit in
# `budget_bytes` (equal counts as fitting), or 0 if not even r = 1 fits. (α then usually follows
# r, e.g. α = 2r.)

# %% [markdown] lang="de"
# ## 5. Der größte Rang für ein Speicherbudget
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


q5.check(largest_rank)

# %%
# q5.hint()
# q5.solution()

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
