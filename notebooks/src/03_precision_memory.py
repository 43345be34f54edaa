# ---
# jupyter:
#   course:
#     accelerator: GPU
#     duration:
#       cpu: 30
#       t4: 35
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
# Two questions decide what you can run on a GPU: how many bits does each number get, and does
# everything fit in memory? In this lesson you compute both. You will
#
# - read range and precision of fp32, tf32, fp16, bf16 (and a glance at fp8, int8) from PyTorch,
#   and watch each format lose precision or overflow,
# - time a matmul per dtype on your device: tensor cores, emulated bf16, slow fp16 on a CPU,
# - use `torch.autocast` and see why fp16 training needs loss scaling (`GradScaler`),
# - count bytes per parameter for inference, full fine-tuning, LoRA and QLoRA, and
# - predict the memory of a real model (SmolLM2-135M) with `utils.memory.fit` and hold it against a
#   measurement.

# %% [markdown] lang="de"
# Zwei Fragen entscheiden, was du auf einer GPU laufen lassen kannst: Wie viele Bits bekommt jede
# Zahl, und passt alles in den Speicher? In dieser Lektion rechnest du beides aus. Du wirst
#
# - Wertebereich und Genauigkeit von fp32, tf32, fp16 und bf16 (mit einem Blick auf fp8 und int8)
#   bei PyTorch nachschlagen und zusehen, wie jedes Format Genauigkeit verliert oder überläuft,
# - eine Matmul pro Datentyp auf deinem Gerät messen: Tensor Cores, emuliertes bf16, langsames
#   fp16 auf der CPU,
# - `torch.autocast` benutzen und sehen, warum fp16-Training Loss Scaling braucht (`GradScaler`),
# - Bytes pro Parameter für Inferenz, volles Feintuning, LoRA und QLoRA zählen und
# - den Speicher eines echten Modells (SmolLM2-135M) mit `utils.memory.fit` vorhersagen und mit
#   einer Messung vergleichen.

# %%
import os

import matplotlib.pyplot as plt
import torch

from utils.i18n import num, say, text
from utils.memory import fit
from utils.platform import hardware, placement, profiles, runtime
from utils.predict import reveal
from utils.timing import bench
from utils.units import GIB, MIB, format_bytes

hw = hardware.detect()
profile = profiles.hardware_profile(runtime.detect_platform(), hw)
device = placement.pick_device()
print(profile.label, "|", hw.summary())

# %% [markdown] lang="en"
# ## 1. Bits, range and precision
#
# A floating-point number is a sign, an exponent and a mantissa. The exponent's bits decide the
# *range* (the largest and smallest numbers), the mantissa's bits the *precision* (the gap between
# neighbours). `torch.finfo` knows each format; the spacing around 1 and around 1000 is the gap
# to the next representable number.

# %% [markdown] lang="de"
# ## 1. Bits, Wertebereich und Genauigkeit
#
# Eine Gleitkommazahl besteht aus Vorzeichen, Exponent und Mantisse. Die Bits des Exponenten
# bestimmen den *Wertebereich* (die größte und kleinste Zahl), die der Mantisse die *Genauigkeit*
# (den Abstand zwischen benachbarten Zahlen). `torch.finfo` kennt jedes Format; der Abstand bei 1
# und bei 1000 ist die Lücke bis zur nächsten darstellbaren Zahl.

# %%
# en: (sign, exponent, mantissa) bits; tf32 is fp32 with a 10-bit mantissa inside the tensor core
# de: (Vorzeichen, Exponent, Mantisse) in Bits; tf32 ist fp32 mit 10-Bit-Mantisse im Tensor Core
LAYOUT = {
    "float32": (1, 8, 23),
    "tf32": (1, 8, 10),
    "float16": (1, 5, 10),
    "bfloat16": (1, 8, 7),
    "float8_e4m3fn": (1, 4, 3),
}
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float8_e4m3fn]
# en: numbers written out first, then aligned: a German 3,403 · 10³⁸ is longer than 3.403e+38
# de: erst die Zahlen schreiben, dann ausrichten: 3,403 · 10³⁸ ist länger als 3.403e+38
ROW = "{dt:<16}{bits:>5}{max:>14}{tiny:>14}{eps:>14}{gap:>14}"
print(
    ROW.format(
        dt=text("dtype", "Datentyp"),
        bits=text("bits", "Bits"),
        max=text("max", "größte"),
        tiny=text("tiny", "kleinste"),
        eps="eps",
        gap=text("gap@1000", "Lücke@1000"),
    )
)
for dt in DTYPES:
    info = torch.finfo(dt)
    # en: the gap at 1 is eps; at 1000 (between 2^9 and 2^10) it is eps · 2^9
    # de: die Lücke bei 1 ist eps; bei 1000 (zwischen 2^9 und 2^10) ist sie eps · 2^9
    values = dict(max=info.max, tiny=info.tiny, eps=info.eps, gap=info.eps * 2**9)
    digits = dict(max=".4g", tiny=".3g", eps=".3g", gap=".4g")
    cells = {k: num(v, digits[k]) for k, v in values.items()}
    print(ROW.format(dt=str(dt)[6:], bits=info.bits, **cells))
iinfo = torch.iinfo(torch.int8)
print(ROW.format(dt="int8", bits=iinfo.bits, max=iinfo.max, tiny=num(iinfo.min), eps=1, gap="–"))

# %%
fig, ax = plt.subplots(figsize=(9, 2.6))
# en: sign, exponent, mantissa
# de: Vorzeichen, Exponent, Mantisse
colors = ("#d62728", "#1f77b4", "#2ca02c")
for row, parts in enumerate(LAYOUT.values()):
    left = 0
    for color, bits in zip(colors, parts, strict=True):
        ax.barh(row, bits, left=left, color=color, edgecolor="white")
        if bits > 1:
            ax.text(left + bits / 2, row, str(bits), ha="center", va="center", color="white")
        left += bits
ax.set_yticks(range(len(LAYOUT)), list(LAYOUT))
ax.invert_yaxis()
ax.set_xlabel(text("bits", "Bits"))
ax.set_title(
    text("Bit layouts: sign, exponent, mantissa", "Bitaufbau: Vorzeichen, Exponent, Mantisse")
)
ax.legend(
    [plt.Rectangle((0, 0), 1, 1, color=c) for c in colors],
    [text("sign", "Vorzeichen"), text("exponent", "Exponent"), text("mantissa", "Mantisse")],
    loc="lower right",
)
plt.tight_layout()
plt.show()

# %% [markdown] lang="en"
# What the table means in practice: add `1e-4` ten thousand times (the exact sum is 1), start
# fp16 past its largest number 65504, and round a real tensor to bf16.

# %% [markdown] lang="de"
# Was die Tabelle in der Praxis bedeutet: Addiere zehntausendmal `1e-4` (genau wäre die Summe 1),
# schieb fp16 über seine größte Zahl 65504 hinaus und runde einen echten Tensor auf bf16.

# %%
sums = {}
for dt in (torch.float32, torch.float16, torch.bfloat16):
    total = torch.zeros((), dtype=dt)
    step = torch.tensor(1e-4, dtype=dt)
    for _ in range(10_000):
        total = total + step
    sums[str(dt)[6:]] = total.item()
    say(
        "sum of 10,000 × 1e-4 in {dt:<9}: {s:.6f}",
        "Summe von 10.000 × 10⁻⁴ in {dt:<9}: {s:.6f}",
        dt=str(dt)[6:],
        s=total.item(),
    )
big = torch.tensor([65504.0, 65520.0, 70000.0])

say("fp16 of {x}: {y}", "fp16 von {x}: {y}", x=big.tolist(), y=big.half().tolist())
say("bf16 of {x}: {y}", "bf16 von {x}: {y}", x=big.tolist(), y=big.bfloat16().tolist())
w = torch.randn(1000, generator=torch.Generator().manual_seed(0))
rel = ((w.bfloat16().float() - w).abs() / w.abs()).max().item()
rel16 = ((w.half().float() - w).abs() / w.abs()).max().item()
say(
    "largest relative rounding error on 1,000 random weights: bf16 {b:.2e}, fp16 {h:.2e}",
    "größter relativer Rundungsfehler bei 1.000 Zufallsgewichten: bf16 {bp:.2f} %, fp16 {hp:.3f} %",
    b=rel,
    h=rel16,
    bp=100 * rel,
    hp=100 * rel16,
)

# %% [markdown] lang="en"
# fp16 stops growing: once the sum reaches 0.25 the gap between its neighbours (2⁻¹²) is more
# than twice 1e-4, so every addition rounds back. bf16 stops far earlier, since it keeps only 8
# bits of precision (7 stored + the implicit 1). fp16 turns 70000 into `inf`; bf16 keeps fp32's
# range. bf16's relative error stays below 2⁻⁸ ≈ 0.4 %, fp16's below 2⁻¹¹.

# %% [markdown] lang="de"
# In fp16 wächst die Summe irgendwann nicht mehr: Sobald sie 0,25 erreicht, ist der Abstand zur
# nächsten Zahl (2⁻¹²) mehr als doppelt so groß wie 10⁻⁴, und jede Addition wird wieder abgerundet.
# bf16 bleibt viel früher stehen, denn es hat nur 8 Bit Genauigkeit (7 gespeicherte plus die
# implizite 1). fp16 macht aus 70000 `inf`; bf16 hat den Wertebereich von fp32. Der relative Fehler
# von bf16 bleibt unter 2⁻⁸ ≈ 0,4 %, der von fp16 unter 2⁻¹¹.

# %% tags=["guard"] jupyter={"source_hidden": true}
assert abs(sums["float32"] - 1) < 1e-3 and sums["float16"] < 0.5 and sums["bfloat16"] < 0.1
assert torch.isinf(big.half()[2]) and torch.isfinite(big.bfloat16()).all()
assert rel <= 2**-8 and rel16 <= 2**-11

# %% [markdown] lang="en"
# ## 2. Speed per dtype on your device
#
# Fewer bits mean less memory traffic, and on GPUs with tensor cores far more FLOP/s, but only
# where the hardware does that format. On a T4 (compute capability 7.5) fp16 runs on tensor
# cores, while bf16 is emulated and slower than fp32, although `torch.cuda.is_bf16_supported()`
# says True; so the course decides bf16 by compute capability ≥ 8.0 (`GPU.has_fast_bf16`).
# From Ampere (A100, 8.0) on, fp32 matmuls may run as tf32 once you allow it with
# `torch.set_float32_matmul_precision("high")`. On a CPU, torch's fp16 matmul has no fast kernel,
# bf16 is fast where the CPU has AVX512-BF16 or AMX.

# %% [markdown] lang="de"
# ## 2. Tempo pro Datentyp auf deinem Gerät
#
# Weniger Bits bedeuten weniger Speicherverkehr und auf GPUs mit Tensor Cores weit mehr FLOP/s,
# aber nur, wo die Hardware das Format beherrscht. Auf einer T4 (Compute Capability 7.5) läuft fp16
# auf Tensor Cores, bf16 dagegen wird emuliert und ist langsamer als fp32, obwohl
# `torch.cuda.is_bf16_supported()` `True` meldet; deshalb entscheidet der Kurs über bf16 nach der
# Compute Capability ≥ 8.0 (`GPU.has_fast_bf16`). Ab Ampere (A100, 8.0) dürfen fp32-Matmuls als
# tf32 laufen, wenn du es mit `torch.set_float32_matmul_precision("high")` erlaubst. Auf einer CPU
# hat torch für fp16 keinen schnellen Kernel, bf16 ist schnell, wo die CPU AVX512-BF16 oder AMX hat.

# %%
# en: CPU fp16 is ~80x slower than fp32: keep the CPU size small
# de: fp16 ist auf der CPU rund 80-mal langsamer als fp32, daher dort eine kleine Matrix
n = profile.pick(cpu=256, cuda=4096)
speed = {}
for name in ("float32", "tf32", "float16", "bfloat16"):
    if name == "tf32" and not (device.type == "cuda" and hw.gpus[0].has_fast_bf16):
        continue
    dt = torch.float32 if name == "tf32" else getattr(torch, name)
    torch.set_float32_matmul_precision("high" if name == "tf32" else "highest")
    a = torch.randn(n, n, device=device).to(dt)
    b = torch.randn(n, n, device=device).to(dt)
    m = bench.measure(torch.matmul, a, b, flops=2 * n**3, dtype=name, max_time=2.0, min_time=0.1)
    speed[name] = 2 * n**3 / m.median
    say(
        "{name:<9} n={n}: {t:.3f} ms, {g:.1f} GFLOP/s",
        "{name:<9} n={n}: {t:.3f} ms, {g:.1f} GFLOP/s",
        name=name,
        n=n,
        t=m.median * 1e3,
        g=speed[name] / 1e9,
    )
torch.set_float32_matmul_precision("highest")
ratio = speed["bfloat16"] / speed["float32"]
say(
    "float16 / float32 speed: {r:.2f}×, bfloat16 / float32: {q:.2f}×",
    "Tempo float16 / float32: {r:.2f}×, bfloat16 / float32: {q:.2f}×",
    r=speed["float16"] / speed["float32"],
    q=ratio,
)

# %% [markdown] lang="en"
# Which of these is faster is a property of your hardware *and* of the library's kernels, so the
# lesson does not tell you; it asks the machine. On a CPU, torch's own kernels are compiled for
# several instruction sets and pick one at start (`torch.backends.cpu.get_cpu_capability()`;
# `ATEN_CPU_CAPABILITY=avx2` forces the AVX2 ones), while its bf16 matmul goes to oneDNN, which
# checks the CPU by itself: with AVX512-BF16 or AMX it multiplies bf16 in hardware, without them it
# widens every number to fp32 and rounds back, and bf16 becomes many times *slower* than fp32.

# %% [markdown] lang="de"
# Was davon schneller ist, hängt von deiner Hardware *und* von den Kerneln der Bibliothek ab.
# Deshalb sagt es dir die Lektion nicht vorher, sondern fragt die Maschine. Auf einer CPU sind die
# eigenen Kernel von torch für mehrere Befehlssätze kompiliert, und beim Start wird einer gewählt
# (`torch.backends.cpu.get_cpu_capability()`; `ATEN_CPU_CAPABILITY=avx2` erzwingt die AVX2-Kernel).
# Die bf16-Matmul aber gibt torch an oneDNN weiter, das die CPU selbst prüft: Mit AVX512-BF16 oder
# AMX multipliziert es bf16 in Hardware, ohne sie wandelt es jede Zahl in fp32 um und rundet das
# Ergebnis zurück, und bf16 wird um ein Vielfaches *langsamer* als fp32.

# %%
if ratio > 1.25:
    finding = text("bf16 ran faster than fp32", "bf16 lief schneller als fp32")
elif ratio < 0.8:
    finding = text("bf16 ran slower than fp32", "bf16 lief langsamer als fp32")
else:
    finding = text(
        "bf16 and fp32 ran about equally fast", "bf16 und fp32 liefen etwa gleich schnell"
    )
if device.type == "cpu":
    bf16_flags = sorted({"avx512_bf16", "amx_bf16"} & hw.cpu.flags)
    # en: oneDNN's own limit, if someone set one (it overrides what the CPU can do)
    # de: die Obergrenze von oneDNN, falls jemand sie gesetzt hat (sie geht der CPU vor)
    onednn_limit = os.environ.get("ONEDNN_MAX_CPU_ISA", "")
    in_hardware = bool(bf16_flags) and not onednn_limit.upper().startswith(("AVX2", "AVX_", "SSE"))
    say(
        "torch's own CPU kernels: {aten}; bf16 instructions of this CPU: {flags}; "
        "ONEDNN_MAX_CPU_ISA: {limit}.",
        "Eigene CPU-Kernel von torch: {aten}; bf16-Befehle dieser CPU: {flags}; "
        "ONEDNN_MAX_CPU_ISA: {limit}.",
        aten=torch.backends.cpu.get_cpu_capability(),
        flags=", ".join(bf16_flags) or text("none", "keine"),
        limit=onednn_limit or text("not set", "nicht gesetzt"),
    )
    path = (
        text(
            "in hardware (oneDNN with bf16 instructions)", "in Hardware (oneDNN mit bf16-Befehlen)"
        )
        if in_hardware
        else text(
            "without bf16 instructions (widened to fp32 and rounded back)",
            "ohne bf16-Befehle (nach fp32 gewandelt und zurückgerundet)",
        )
    )
    if (ratio > 1.25) if in_hardware else (ratio < 0.8):
        why = text("That is what this path does.", "Genau das erwartest du auf diesem Weg.")
    else:
        why = text(
            "Unexpected for this path: at n = {n} the machine's load can hide the difference; "
            "run the cell again.",
            "Für diesen Weg unerwartet: Bei n = {n} kann die Last auf der Maschine den "
            "Unterschied verdecken; führ die Zelle noch einmal aus.",
            n=n,
        )
    say(
        "Verdict: {finding} ({q:.2f}×); the bf16 matmul ran {path}. {why}",
        "Urteil: {finding} ({q:.2f}×); die bf16-Matmul lief {path}. {why}",
        finding=finding,
        q=ratio,
        path=path,
        why=why,
    )
elif device.type == "cuda":
    g = hw.gpus[0]
    say(
        "Verdict: {finding} ({q:.2f}×) on {name}: compute capability {cc}, "
        "is_bf16_supported() = {s}, bf16 tensor cores (≥ 8.0) = {f}.",
        "Urteil: {finding} ({q:.2f}×) auf {name}: Compute Capability {version}, "
        "is_bf16_supported() meldet {s}, {tc}.",
        finding=finding,
        q=ratio,
        name=g.name,
        cc=g.compute_capability,
        s=torch.cuda.is_bf16_supported(),
        f=g.has_fast_bf16,
        # en: a version number keeps its point in German too
        # de: eine Versionsnummer behält auch auf Deutsch ihren Punkt
        version=".".join(map(str, g.compute_capability)),
        tc=text("bf16 tensor cores (from 8.0)", "bf16-Tensor-Cores (ab 8.0) vorhanden")
        if g.has_fast_bf16
        else text("no bf16 tensor cores (from 8.0)", "keine bf16-Tensor-Cores (erst ab 8.0)"),
    )
else:
    say("Verdict: {finding} ({q:.2f}×).", "Urteil: {finding} ({q:.2f}×).", finding=finding, q=ratio)

# %% [markdown] lang="en"
# ### What you should see (checked 2026-12)
#
# | profile | fp32 | fp16 | bf16 | tf32 |
# |---|---|---|---|---|
# | CPU (CI: 2 cores of an AMD EPYC Zen 5) | reference | far slower (no fast kernel, ~80× at large sizes) | with AVX512-BF16 or AMX faster (CI machine: about 2–3×); with AVX2 only 50–80× slower | – |
# | Colab T4, Kaggle T4 x2 | 8.1 TFLOP/s peak | tensor cores: 65 TFLOP/s peak, ~24 sustained | emulated: slower than fp32 | not on a T4 |
# | TPU v5e | – | – | the native format, 197 TFLOP/s peak | – |
# | A100 / H100 | 19.5 / 67 | 312 / 989 | 312 / 989 | 156 / 495 |
#
# The CPU row was measured on the course's CI machine and on an AVX2-only EPYC (docs/facts.md
# §3; the verdict above says which kind yours is), the others are data
# sheet peaks (NVIDIA T4, A100, H100 data sheets; Google Cloud TPU documentation; `utils/platform/chips.py`,
# checked 2026-11). This lesson's PyTorch cells compute on the CPU of a TPU runtime; lesson 04
# uses the TPU.

# %% [markdown] lang="de"
# ### Was du sehen solltest (Stand: Dezember 2026)
#
# | Profil | fp32 | fp16 | bf16 | tf32 |
# |---|---|---|---|---|
# | CPU (CI: 2 Kerne einer AMD EPYC Zen 5) | Bezug | weit langsamer (kein schneller Kernel, bei großen Größen ~80×) | mit AVX512-BF16 oder AMX schneller (CI-Maschine: etwa 2- bis 3-mal); nur mit AVX2 50- bis 80-mal langsamer | – |
# | Colab T4, Kaggle T4 x2 | 8,1 TFLOP/s Spitze | Tensor Cores: 65 TFLOP/s Spitze, ~24 im Dauerbetrieb | emuliert: langsamer als fp32 | nicht auf der T4 |
# | TPU v5e | – | – | das native Format, 197 TFLOP/s Spitze | – |
# | A100 / H100 | 19,5 / 67 | 312 / 989 | 312 / 989 | 156 / 495 |
#
# Die CPU-Zeile ist auf der CI-Maschine des Kurses und auf einer EPYC nur mit AVX2 gemessen
# (docs/facts.md §3; das Urteil oben sagt, welche Art deine ist), die anderen sind
# Spitzenwerte aus Datenblättern (NVIDIA-Datenblätter T4, A100, H100; Google-Cloud-TPU-Doku;
# `utils/platform/chips.py`, Stand: November 2026). In einer TPU-Laufzeit rechnen die PyTorch-Zellen
# dieser Lektion auf der CPU; erst Lektion 04 nutzt die TPU.

# %% [markdown] lang="en"
# ## 3. Mixed precision: autocast and loss scaling
#
# `torch.autocast` runs matmuls and convolutions in 16 bits and lifts some other operations to
# fp32. Which ones differs per device: PyTorch's "Autocast Op Reference" (in the page "Automatic
# Mixed Precision package - torch.amp", read 2026-12) lists for CUDA softmax, log-softmax,
# layer_norm, sums and the losses; its CPU list has the losses (`mse_loss`, `nll_loss`, ...) but
# not softmax or layer_norm, which on a CPU stay in bf16. The weights themselves stay fp32 (the
# *master weights*); autocast computes with 16-bit copies. CUDA takes fp16 or bf16, the CPU bf16.
# The cell asks torch what each operation returns, on the CPU and, where there is one, on CUDA.

# %% [markdown] lang="de"
# ## 3. Mixed Precision: autocast und Loss Scaling
#
# `torch.autocast` rechnet Matmuls und Faltungen in 16 Bit und hebt einige andere Operationen auf
# fp32. Welche, hängt vom Gerät ab: Die „Autocast Op Reference“ von PyTorch (auf der Seite
# „Automatic Mixed Precision package - torch.amp“, abgerufen im Dezember 2026) nennt für CUDA
# Softmax, Log-Softmax, layer_norm, Summen und die Verlustfunktionen; ihre CPU-Liste enthält die
# Verlustfunktionen (`mse_loss`, `nll_loss`, …), aber weder Softmax noch layer_norm, die auf der
# CPU in bf16 bleiben. Die Gewichte selbst bleiben fp32 (die *Master-Gewichte*); autocast rechnet
# mit 16-Bit-Kopien. CUDA nimmt fp16 oder bf16, die CPU bf16. Die Zelle fragt torch, was jede
# Operation zurückgibt, auf der CPU und, wo es eine gibt, auf CUDA.

# %%
F = torch.nn.functional
amp_dtype = torch.bfloat16
if device.type == "cuda" and not hw.gpus[0].has_fast_bf16:
    amp_dtype = torch.float16


def autocast_dtypes(where, dtype):
    # en: the dtype each operation returns under autocast on `where` ("cpu" or "cuda")
    # de: der Datentyp, den jede Operation unter autocast auf `where` ("cpu" oder "cuda") liefert
    layer = torch.nn.Linear(64, 64).to(where)
    x = torch.randn(8, 64, device=where)
    target = torch.zeros(8, dtype=torch.long, device=where)
    with torch.autocast(device_type=where, dtype=dtype):
        y = layer(x)
        out = {
            "layer.weight": layer.weight,
            "linear": y,
            "softmax": torch.softmax(y, dim=-1),
            "log_softmax": torch.log_softmax(y, dim=-1),
            "layer_norm": F.layer_norm(y, (64,)),
            "sum": y.sum(),
            "mse_loss": F.mse_loss(y, torch.zeros_like(y)),
            "cross_entropy": F.cross_entropy(y, target),
        }
    return {op: str(t.dtype).removeprefix("torch.") for op, t in out.items()}


on_cpu = autocast_dtypes("cpu", torch.bfloat16)
on_cuda = autocast_dtypes("cuda", amp_dtype) if device.type == "cuda" else {}
print(f"{'':<15}{'CPU (bfloat16)':>16}{'CUDA':>16}")
for op, dt in on_cpu.items():
    print(f"{op:<15}{dt:>16}{on_cuda.get(op, '–'):>16}")
lifted = [op for op, dt in on_cpu.items() if dt == "float32" and op != "layer.weight"]
say(
    "On the CPU autocast lifted to fp32: {ops}; everything else ran in bf16.",
    "Auf der CPU hob autocast auf fp32: {ops}; alles andere lief in bf16.",
    ops=", ".join(lifted),
)

# %% [markdown] lang="en"
# fp16's smallest number is about 6e-8 (with subnormals). Gradients of a deep net are often
# smaller and vanish to zero. Loss scaling multiplies the loss by a large factor before backward,
# so the gradients are scaled too and stay representable, then divides them back in fp32. Here
# is the effect on one small gradient:

# %% [markdown] lang="de"
# Die kleinste fp16-Zahl liegt bei etwa 6 · 10⁻⁸ (mit subnormalen Zahlen). Gradienten eines tiefen
# Netzes sind oft noch kleiner und werden dann zu null. Loss Scaling multipliziert den Verlust vor
# dem Rückwärtsdurchlauf mit einem großen Faktor, damit auch die Gradienten skaliert und darstellbar
# bleiben, und teilt sie danach in fp32 wieder durch ihn. So wirkt das auf einen kleinen Gradienten:

# %%
grad = torch.tensor(1e-8)
scale = 2.0**16
plain = grad.half().float().item()
rescued = ((grad * scale).half().float() / scale).item()
say(
    "gradient 1e-8 in fp16: {p}; scaled by 2^16, stored in fp16, unscaled in fp32: {r:.3e}",
    "Gradient 10⁻⁸ in fp16: {p}; mit 2¹⁶ skaliert, in fp16 gespeichert, in fp32 zurück: {r:.3e}",
    p=plain,
    r=rescued,
)

# en: GradScaler does this for you, and skips a step whose gradients overflowed to inf
# de: GradScaler erledigt das für dich und überspringt Schritte mit übergelaufenen Gradienten
use_cuda = device.type == "cuda"
scaler = torch.amp.GradScaler("cuda" if use_cuda else "cpu", init_scale=2.0**16)
p = torch.nn.Parameter(torch.ones(4, device=device))
opt = torch.optim.SGD([p], lr=0.1)
for step, factor in enumerate(
    [1.0, 1e36]
):  # en: the second loss overflows | de: der zweite Verlust läuft über
    opt.zero_grad()
    before = p.detach().clone()
    loss = (p * factor).sum()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)  # en: unscale BEFORE clipping | de: erst zurückskalieren, DANN clippen
    torch.nn.utils.clip_grad_norm_(p, 1.0)
    scaler.step(opt)
    scaler.update()
    say(
        "step {i}: parameters changed: {c}, scale now {s:.0f}",
        "Schritt {i}: Parameter {changed}, Skala jetzt {s:.0f}",
        i=step,
        c=not torch.equal(before, p.detach()),
        changed=text("updated", "aktualisiert")
        if not torch.equal(before, p.detach())
        else text("unchanged (step skipped)", "unverändert (Schritt übersprungen)"),
        s=scaler.get_scale(),
    )

# %% [markdown] lang="en"
# The first step runs; in the second the scaled gradients are `inf`, so `scaler.step` skips the
# update and `scaler.update` halves the scale. Clip only after `scaler.unscale_(optimizer)`:
# otherwise the clipping threshold is compared with gradients 65536 times too large. bf16 has
# fp32's range, so bf16 training needs no scaler.

# %% [markdown] lang="de"
# Der erste Schritt läuft; im zweiten sind die skalierten Gradienten `inf`, also überspringt
# `scaler.step` das Update und `scaler.update` halbiert die Skala. Clippe erst nach
# `scaler.unscale_(optimizer)`: Sonst vergleichst du die Clipping-Schwelle mit Gradienten, die
# 65536-mal zu groß sind. bf16 hat den Wertebereich von fp32, also braucht bf16-Training keinen
# Scaler.

# %% tags=["guard"] jupyter={"source_hidden": true}
assert plain == 0.0 and abs(rescued - 1e-8) / 1e-8 < 0.01 and scaler.get_scale() == 2.0**15
for table, low in ((on_cpu, "bfloat16"), (on_cuda, str(amp_dtype)[6:])):
    assert not table or table["linear"] == low and table["layer.weight"] == "float32"
    assert not table or table["mse_loss"] == table["cross_entropy"] == "float32"

# %% [markdown] lang="en"
# ## 4. Memory: bytes per parameter
#
# Training holds, per parameter: the weight, its gradient, and for Adam two moments (m and v).
# Mixed precision keeps fp32 master weights, fp32 gradients and moments, plus the 16-bit copies.
# LoRA freezes the base (16 bits, no gradients, no optimizer state) and trains small adapters;
# QLoRA stores the frozen base in 4-bit NF4. Then come the **activations** the backward pass
# needs: they grow with batch × sequence × layers × width (and the vocabulary at the head).
# Activation checkpointing keeps only one input per block and recomputes the rest during
# backward: about a third more compute for much less memory. On a GPU the CUDA context adds a few
# hundred MiB. `utils.memory.fit` adds all of that up; here are the rules of thumb, computed.
#
# **Predict first:** how many bytes per parameter does full training with AdamW hold under
# mixed precision, before activations? Write it into `my_amp_bytes`, then run the cells below.

# %% [markdown] lang="de"
# ## 4. Speicher: Bytes pro Parameter
#
# Training hält pro Parameter: das Gewicht, seinen Gradienten und bei Adam zwei Momente (m und v).
# Mixed Precision behält fp32-Master-Gewichte, fp32-Gradienten und -Momente plus die 16-Bit-Kopien.
# LoRA friert das Basismodell ein (16 Bit, keine Gradienten, kein Optimiererzustand) und trainiert
# kleine Adapter; QLoRA speichert die eingefrorene Basis in 4-Bit-NF4. Dazu kommen die
# **Aktivierungen**, die der Rückwärtsdurchlauf braucht: Sie wachsen mit Batch × Sequenz ×
# Schichten × Breite (und am Ausgang mit dem Vokabular). Activation Checkpointing behält pro Block
# nur eine Eingabe und berechnet den Rest im Rückwärtsdurchlauf neu: etwa ein Drittel mehr
# Rechenaufwand für viel weniger Speicher. Auf einer GPU kommt der CUDA-Kontext mit einigen hundert
# MiB dazu. `utils.memory.fit` zählt das alles zusammen; hier die Faustregeln, ausgerechnet.
#
# **Erst schätzen:** Wie viele Bytes pro Parameter hält volles Training mit AdamW in Mixed
# Precision, vor den Aktivierungen? Trag die Zahl in `my_amp_bytes` ein, dann führ die Zellen
# darunter aus.

# %%
my_amp_bytes = None  # en: your prediction, bytes per parameter | de: deine Vorhersage, Bytes/Param.

# %%
seven_b = 7_000_000_000
rules = {
    "fp32 AdamW": fit.fit(seven_b, "float32", "full"),
    "bf16 AMP AdamW": fit.fit(seven_b, "bfloat16", "full", mixed=True),
    "LoRA r=16": fit.fit(seven_b, "bfloat16", "lora"),
    "QLoRA r=16": fit.fit(seven_b, "bfloat16", "qlora"),
    text("bf16 inference", "bf16-Inferenz"): fit.fit(seven_b, "bfloat16", "inference"),
}
for name, r in rules.items():
    say(
        "{name:<15} {b:5.2f} B/param → {total} for 7 B parameters (+ activations)",
        "{name:<15} {b:5.2f} B/Param. → {total} für 7 Mrd. Parameter (+ Aktivierungen)",
        name=name,
        b=r.per_param(seven_b),
        total=format_bytes(r.per_param(seven_b) * seven_b),
    )
    # en: the parts per parameter (without activations and the step's temporaries)
    # de: die Teile pro Parameter (ohne Aktivierungen und Zwischenwerte des Schritts)
    held = [k for k in r.parts if k not in ("activations", "context", "step_temporaries")]
    pieces = [
        text(
            "{b:.2f} {part}",
            "{b:.2f} {part}",
            b=r.parts[k] / seven_b,
            part=text(*fit.PART_NAMES[k]),
        )
        for k in held
    ]
    print("    = " + " + ".join(pieces))
reveal(
    my_amp_bytes,
    rules["bf16 AMP AdamW"].per_param(seven_b),
    unit=text("bytes per parameter", "Bytes pro Parameter"),
)

# %% tags=["guard"] jupyter={"source_hidden": true}
assert (
    rules["fp32 AdamW"].per_param(seven_b) == 16
    and rules["bf16 AMP AdamW"].per_param(seven_b) == 18
)
assert (
    2 < rules["LoRA r=16"].per_param(seven_b) < 2.3
    and 0.5 < rules["QLoRA r=16"].per_param(seven_b) < 0.8
)

# %% [markdown] lang="en"
# Two numbers for full fine-tuning with AdamW, and which is which:
#
# - **16 bytes per parameter in fp32**: 4 for the weight, 4 for its gradient, 8 for Adam's two
#   moments m and v.
# - **18 bytes per parameter with mixed precision as `torch.autocast` does it**: the same 16 in
#   fp32 (master weights, gradients, moments), plus the 16-bit copy of each weight that autocast
#   makes for the matmuls (2).
#
# You will also read "16 bytes" for mixed precision: that is the layout of ZeRO and DeepSpeed
# (Rajbhandari et al. 2019, arXiv:1910.02054), which keeps 16-bit weights *and 16-bit gradients*
# next to fp32 master weights and moments: 2 + 2 + 4 + 4 + 4. Autocast keeps the gradients in fp32,
# hence 18. Pure bf16 training (no fp32 copy at all) needs 8, with the rounding problems of
# section 1. LoRA needs the frozen base's bytes (2 in 16 bits, 4 on an fp32 base) plus 16 per
# adapter parameter; QLoRA about half a byte per base parameter (docs/facts.md §5).

# %% [markdown] lang="de"
# Zwei Zahlen für volles Feintuning mit AdamW, und welche wofür gilt:
#
# - **16 Bytes pro Parameter in fp32**: 4 für das Gewicht, 4 für seinen Gradienten, 8 für die
#   zwei Momente m und v von Adam.
# - **18 Bytes pro Parameter mit Mixed Precision, wie `torch.autocast` sie macht**: dieselben 16
#   in fp32 (Master-Gewichte, Gradienten, Momente) plus die 16-Bit-Kopie jedes Gewichts, die
#   autocast für die Matmuls anlegt (2).
#
# Manchmal liest du auch „16 Bytes“ für Mixed Precision: Das ist die Aufteilung von ZeRO und
# DeepSpeed (Rajbhandari u. a. 2019, arXiv:1910.02054), die 16-Bit-Gewichte *und 16-Bit-Gradienten*
# neben fp32-Master-Gewichten und -Momenten hält: 2 + 2 + 4 + 4 + 4. Autocast hält die Gradienten in
# fp32, daher 18. Reines bf16-Training (ganz ohne fp32-Kopie) braucht 8, mit den Rundungsproblemen
# aus Abschnitt 1. LoRA braucht die Bytes der eingefrorenen Basis (2 in 16 Bit, 4 bei einer
# fp32-Basis) plus 16 pro Adapterparameter; QLoRA etwa ein halbes Byte pro Basisparameter
# (docs/facts.md §5).

# %% [markdown] lang="en"
# ## 5. Predicted vs. measured: the real model
#
# Now the packaged SmolLM2-135M (the 4-bit GGUF release, de-quantized to fp32 offline). The
# calculator predicts the peak; `peakmem.measure_peak` measures it in a clean child process, so
# nothing the notebook holds counts. On the CPU the peak is the rise of the resident memory's
# high-water mark over the child's starting point, on CUDA `torch.cuda.max_memory_allocated()`. A
# training step is two AdamW steps (the second with the moments already there). Its peak is the larger of two moments: the start
# of backward (all activations, no gradients) and the optimizer step (all gradients plus the
# step's temporaries). How large those are depends on the device: on CUDA torch's AdamW updates
# all parameters at once (*foreach*) and computes √v for all of them, one more copy of the
# parameters; on the CPU it goes tensor by tensor, so only the largest tensor (the embedding)
# needs temporaries, and since SmolLM2 ties its embedding to the output head, the two gradients
# of that tensor are summed into one more.
#
# **Predict first:** the first row runs inference in fp32 on 135 M parameters, batch 1 × 128
# tokens. How many MiB is its peak? Write it into `my_peak_mib`.

# %% [markdown] lang="de"
# ## 5. Vorhersage und Messung: das echte Modell
#
# Jetzt das mitgelieferte SmolLM2-135M (die 4-Bit-GGUF-Fassung, offline zu fp32 entpackt). Der
# Rechner sagt die Spitze voraus; `peakmem.measure_peak` misst sie in einem frischen Kindprozess,
# damit nichts mitgezählt wird, was das Notebook im Speicher hält. Auf der CPU ist die Spitze der
# Anstieg des Höchststands des belegten Arbeitsspeichers über den Ausgangswert des Kindprozesses,
# auf CUDA `torch.cuda.max_memory_allocated()`. Ein Trainingsschritt besteht aus zwei
# AdamW-Schritten (beim zweiten gibt es die Momente schon).
# Die Spitze liegt an einem von zwei Zeitpunkten, je nachdem, wo mehr Speicher belegt ist: zu
# Beginn des Rückwärtsdurchlaufs (alle Aktivierungen, noch keine Gradienten) oder im
# Optimiererschritt (alle Gradienten plus die Zwischenwerte des Schritts). Wie groß diese
# Zwischenwerte sind, hängt vom Gerät ab: Auf CUDA aktualisiert AdamW von torch alle Parameter auf
# einmal (*foreach*) und berechnet √v für alle, also eine weitere Kopie der Parameter; auf der CPU
# geht es Tensor für Tensor, sodass nur der größte Tensor (das Embedding) Zwischenwerte braucht.
# Weil SmolLM2 sein Embedding mit dem Ausgabekopf teilt, werden die zwei Gradienten dieses Tensors
# zudem in einem weiteren Tensor summiert.
#
# **Erst schätzen:** Die erste Zeile ist Inferenz in fp32 mit 135 Mio. Parametern, Batch 1 × 128
# Tokens. Wie viele MiB ist ihre Spitze? Trag die Zahl in `my_peak_mib` ein.

# %%
my_peak_mib = None  # en: your prediction in MiB | de: deine Vorhersage in MiB

# %%
from transformers import AutoConfig

from utils.memory import peakmem
from utils.models.loading import smollm2_location

QKVO = ("q_proj", "k_proj", "v_proj", "o_proj")

where, source = smollm2_location()
config = AutoConfig.from_pretrained(where)
print(source)
on = "cuda" if device.type == "cuda" else "cpu"
# en: the calculator's modes, as each language names them
# de: die Modi des Rechners, wie jede Sprache sie nennt
MODE_NAMES = {
    "inference": ("inference", "Inferenz"),
    "full": ("full", "voll"),
    "lora": ("lora", "LoRA"),
    "qlora": ("qlora", "QLoRA"),
}
# en: LoRA as lesson 07 trains it: r = 8 on q, k, v, o; on an fp32 base (lesson 07 on a CPU) and
# en: on a 16-bit base under autocast (lesson 07 on a GPU; fp16 on a T4)
# de: LoRA, wie Lektion 07 es trainiert: r = 8 auf q, k, v, o; auf einer fp32-Basis (Lektion 07 auf
# de: der CPU) und auf einer 16-Bit-Basis unter autocast (Lektion 07 auf einer GPU; fp16 auf der T4)
low = "float16" if on == "cuda" and not hw.gpus[0].has_fast_bf16 else "bfloat16"
runs = [
    ("inference", "float32", 1, 128),
    ("inference", "bfloat16", 4, 128),
    ("full", "float32", 1, 32),
    ("full", "bfloat16", 1, 32),
    ("lora", "float32", 4, 128),
    ("lora", low, 4, 128, {"mixed": True, "amp_dtype": low}),
]
# en: one helper process imports transformers once and forks a clean child per run (Linux)
# de: ein Hilfsprozess importiert transformers einmal, pro Lauf startet ein frischer Kindprozess
measured = peakmem.measure_peak(runs, device=on)
errors = []
reports = {}
for (mode, dt, batch, seq, *options), peak in zip(runs, measured, strict=True):
    mixed = bool(options and options[0].get("mixed"))
    # en: device="cpu": no CUDA context (max_memory_allocated does not see it either)
    # de: device="cpu": ohne CUDA-Kontext (max_memory_allocated sieht ihn auch nicht)
    predicted = fit.fit(
        config, dt, mode, batch, seq, "cpu", mixed=mixed, rank=8, targets=QKVO, foreach=on == "cuda"
    )
    reports[mode, dt] = predicted
    errors.append(100 * (predicted.total - peak) / peak)
    say(
        "{mode:<9} {dt:<8} {amp:<8} batch {b} × {s}: predicted {p}, measured {m}, error {e:+.1f}%",
        "{modus:<9} {dt:<8} {amp:<8} Batch {b} × {s}: vorhergesagt {p}, gemessen {m}, "
        "Fehler {e:+.1f} %",
        mode=mode,
        modus=text(*MODE_NAMES[mode]),
        dt=dt,
        amp="autocast" if mixed else "",
        b=batch,
        s=seq,
        p=format_bytes(predicted.total),
        m=format_bytes(peak),
        e=errors[-1],
    )
print(fit.fit(config, "float32", "full", 1, 32, device="cpu", foreach=on == "cuda"))
reveal(my_peak_mib, measured[0], show=format_bytes, guess_in=MIB)

# %% [markdown] lang="en"
# The error shown is what the calculator misses: the allocator's slack, the small tensors of the
# attention mask and the positions. (On Linux the measurement sets glibc's `MALLOC_MMAP_THRESHOLD_`,
# so memory freed during a step goes back to the system and the peak counts tensors, as
# `max_memory_allocated` does on CUDA; with glibc's default the heap keeps freed blocks and the
# same LoRA step looked up to half as large again.) The prediction must stay within 15 % of the
# measurement (the hidden cell below asserts it for every row). On the course's CPU the LoRA row
# under autocast missed most, by about the same amount at twice the tokens (docs/facts.md §5):
# not an activation, but something of fixed size the 16-bit kernels hold, which the calculator
# does not model.
#
# LoRA is where a rule of thumb alone goes wrong. "2 bytes per parameter plus adapters" is the
# frozen base in 16 bits; on an fp32 base (lesson 07 on a CPU) it is 4. And the activations are no
# smaller than in full fine-tuning: the base is frozen, but backward still has to pass the
# gradient through every block down to the first adapter, so the norms, attention and MLP keep
# what they need for that. Only the inputs of frozen linear layers can go, since no weight
# gradient needs them. On top sits the loss: transformers computes it in fp32 over the whole
# vocabulary (49,152 tokens for SmolLM2), and backward briefly holds two more tensors of that
# size. Here is what one block keeps per token, and the LoRA prediction by part:

# %% [markdown] lang="de"
# Der angezeigte Fehler ist das, was der Rechner nicht erfasst: der Spielraum des Allocators und
# die kleinen Tensoren für Attention-Maske und Positionen. (Unter Linux setzt die Messung
# `MALLOC_MMAP_THRESHOLD_` von glibc, damit Speicher, der während eines Schritts frei wird, ans
# System zurückgeht und die Spitze nur Tensoren erfasst, wie `max_memory_allocated` auf CUDA; mit
# der Voreinstellung von glibc behält der Heap freie Blöcke, und derselbe LoRA-Schritt wirkte bis
# zu anderthalbmal so groß.) Die Vorhersage muss innerhalb von 15 % der Messung bleiben (die
# versteckte Zelle unten prüft das für jede Zeile). Auf der CPU des Kurses lag die LoRA-Zeile unter
# autocast am weitesten daneben, und zwar bei doppelt so vielen Tokens um etwa denselben Betrag
# (docs/facts.md §5): Das ist keine Aktivierung, sondern etwas fester Größe, das die 16-Bit-Kernel
# belegen und das der Rechner nicht abbildet.
#
# Gerade bei LoRA führt eine Faustregel allein in die Irre. „2 Bytes pro Parameter plus Adapter“ ist
# die eingefrorene Basis in 16 Bit; auf einer fp32-Basis (Lektion 07 auf der CPU) sind es 4. Und die
# Aktivierungen sind nicht kleiner als beim vollen Feintuning: Die Basis ist zwar eingefroren, aber
# der Rückwärtsdurchlauf muss den Gradienten durch jeden Block bis zum ersten Adapter durchreichen,
# also behalten Normen, Attention und MLP alles, was sie dafür brauchen. Wegfallen können nur die
# Eingaben eingefrorener linearer Schichten, denn kein Gewichtsgradient braucht sie. Hinzu kommt der
# Verlust: transformers berechnet ihn in fp32 über das ganze Vokabular (49.152 Tokens bei SmolLM2),
# und der Rückwärtsdurchlauf hält kurz zwei weitere Tensoren dieser Größe. Hier siehst du, was ein
# Block pro Token behält, und die LoRA-Vorhersage nach Teilen:

# %%
shape = fit.shape_of(config)
full_block = fit.block_activations(shape, 4.0, fit.ALL_LINEAR, full=True)
lora_block = fit.block_activations(shape, 4.0, QKVO)
print(f"{'':<32}{text('full, fp32', 'voll, fp32'):>14}{text('LoRA, fp32', 'LoRA, fp32'):>14}")
for part in full_block:
    say(
        "{part:<32}{f:>12,.0f} B{l:>12,.0f} B",
        "{part:<32}{f:>12,.0f} B{l:>12,.0f} B",
        part=text(*fit.BLOCK_PARTS[part]),
        f=full_block[part],
        l=lora_block[part],
    )
lora_fp32 = reports["lora", "float32"]
print(lora_fp32)
say(
    "The loss over the vocabulary alone: {head} of the {act} of activations.",
    "Allein die Verlustberechnung über das Vokabular: {head} der {act} Aktivierungen.",
    head=format_bytes(fit.loss_head_bytes(shape, runs[4][2] * runs[4][3])),
    act=format_bytes(lora_fp32.parts["activations"]),
)

# %% [markdown] lang="en"
# Remember the ranking: for this small model, at short sequences the optimizer state is the
# largest part of full training, at long ones the activations; for LoRA the base and the
# activations, never the adapters.

# %% [markdown] lang="de"
# Merk dir die Reihenfolge: Bei diesem kleinen Modell ist bei kurzen Sequenzen der
# Optimiererzustand der größte Teil des vollen Trainings, bei langen die Aktivierungen; bei LoRA
# sind es die Basis und die Aktivierungen, nie die Adapter.

# %% tags=["guard"] jupyter={"source_hidden": true}
# en: upper bounds only without fork and /proc (macOS): loading counts there
# de: ohne fork und /proc (macOS) nur Obergrenzen: Dort wird das Laden mitgezählt
assert not (on == "cuda" or peakmem.exact_peaks()) or all(abs(e) <= 15 for e in errors), errors

# %% [markdown] lang="en"
# ## 6. Does it fit? Explore
#
# Choose a model size, a dtype, a mode, batch and sequence: the bars show memory by part against
# the device's memory (a T4's 15 GiB unless a GPU is here). The sizes other than 135M use the
# shape of their SmolLM2 or Llama-like relative as a rough guess (`fit.shape_of`).

# %% [markdown] lang="de"
# ## 6. Passt es? Probier es aus
#
# Wähle Modellgröße, Datentyp, Modus, Batch und Sequenzlänge: Die Balken zeigen den Speicher nach
# Teilen, verglichen mit dem Speicher des Geräts (den 15 GiB einer T4, wenn hier keine GPU ist).
# Für andere Größen als 135M dient die Form des verwandten SmolLM2- oder Llama-ähnlichen Modells
# als grobe Schätzung (`fit.shape_of`).

# %%
from utils.widgets import explore

capacity = "cuda" if device.type == "cuda" else "T4"
SIZES = {"135M": config, "1.7B": 1_700_000_000, "7B": 7_000_000_000, "13B": 13_000_000_000}


def show_fit(size, dtype, mode, batch, seq):
    r = fit.fit(
        SIZES[size],
        dtype,
        mode,
        batch,
        seq,
        device=capacity,
        mixed=mode == "full" and dtype != "float32",
    )
    print(r)
    fig, ax = plt.subplots(figsize=(8, 2.2))
    left = 0.0
    for part, nbytes in r.parts.items():
        if part == "gradients" and r.phases.get("backward", 0) >= r.phases.get("step", 0):
            continue  # en: not held at the peak | de: zur Spitze nicht gehalten
        if part in ("activations",) and r.phases.get("step", 0) > r.phases.get("backward", 0):
            continue
        ax.barh(0, nbytes / GIB, left=left, label=text(*fit.PART_NAMES.get(part, (part, part))))
        left += nbytes / GIB
    ax.axvline(
        r.capacity / GIB,
        color="black",
        linestyle="--",
        label=text("device memory", "Gerätespeicher"),
    )
    ax.set_xlabel("GiB")
    ax.set_yticks([])
    ax.set_title(
        text(
            "{size}, {mode}, {dtype}: peak memory by part",
            "{size}, {modus}, {dtype}: Spitzenspeicher nach Teilen",
            size=size,
            mode=mode,
            modus=text(*MODE_NAMES[mode]),
            dtype=dtype,
        )
    )
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1, 1))
    plt.tight_layout()
    plt.show()


explore(
    show_fit,
    dict(size="7B", dtype="bfloat16", mode="qlora", batch=1, seq=512),
    button_label=text("Compute", "Berechnen"),
    labels=dict(
        size=text("model size", "Modellgröße"),
        dtype=text("data type", "Datentyp"),
        mode=text("run mode", "Modus"),
        batch=text("batch size", "Batchgröße"),
        seq=text("sequence length", "Sequenzlänge"),
    ),
    size=list(SIZES),
    dtype=["float32", "float16", "bfloat16"],
    mode={text(*MODE_NAMES[m]): m for m in fit.MODES},
    batch=[1, 4, 16],
    seq=[128, 512, 2048],
)

# %% [markdown] lang="en"
# ### What you should see (checked 2026-12)
#
# - **CPU** (CI): the prediction for SmolLM2-135M within 15 % of the measured peak (above);
#   memory is the machine's RAM, so "fits" is decided by the T4 the widget assumes.
# - **Colab T4** (15 GiB usable of 16 GB; 15360 MiB visible, googlecolab/backend-info) and
#   **Kaggle T4 x2** (two separate 15 GiB GPUs, not one 30 GiB): full fp32 fine-tuning of a 7 B
#   model does not fit (112 GB of states), QLoRA of 7 B does at short sequences; measured peaks
#   come from `torch.cuda.max_memory_allocated()`, `nvidia-smi` shows about 0.3–0.5 GiB more (the
#   CUDA context).
# - **TPU v5e** (16 GB HBM per chip, Google Cloud TPU documentation): the same arithmetic per chip
#   in bf16; PyTorch here runs on the host CPU.
# - **A100 40 GB / H100 80 GB** (NVIDIA data sheets): bf16 with AMP, 18 B/param: about 2 B
#   respectively 4 B parameters of full fine-tuning before activations.
#
# Sources for the bytes per parameter: Hugging Face "Model training anatomy", EleutherAI
# "Transformer Math 101", the QLoRA paper (arXiv:2305.14314) — docs/facts.md §5.

# %% [markdown] lang="de"
# ### Was du sehen solltest (Stand: Dezember 2026)
#
# - **CPU** (CI): die Vorhersage für SmolLM2-135M innerhalb von 15 % der gemessenen Spitze (oben);
#   der Speicher ist hier der Arbeitsspeicher, deshalb entscheidet die T4, die das Widget annimmt,
#   ob etwas „passt“.
# - **Colab T4** (15 GiB nutzbar von 16 GB; 15360 MiB sichtbar, googlecolab/backend-info) und
#   **Kaggle T4 x2** (zwei getrennte GPUs mit je 15 GiB, nicht eine mit 30 GiB): Volles
#   fp32-Feintuning eines 7-Mrd.-Modells passt nicht (112 GB Zustand), QLoRA von 7 Mrd. passt bei
#   kurzen Sequenzen; gemessene Spitzen liefert `torch.cuda.max_memory_allocated()`, `nvidia-smi`
#   zeigt etwa 0,3–0,5 GiB mehr (den CUDA-Kontext).
# - **TPU v5e** (16 GB HBM pro Chip, Google-Cloud-TPU-Doku): dieselbe Rechnung pro Chip in bf16;
#   PyTorch läuft hier auf der CPU des Hosts.
# - **A100 40 GB / H100 80 GB** (NVIDIA-Datenblätter): bf16 mit AMP, 18 B/Param.: etwa 2 bzw. 4 Mrd.
#   Parameter volles Feintuning vor den Aktivierungen.
#
# Quellen für die Bytes pro Parameter: Hugging Face „Model training anatomy“, EleutherAI
# „Transformer Math 101“, das QLoRA-Paper (arXiv:2305.14314) – docs/facts.md §5.

# %% [markdown] lang="en"
# ## Check yourself
#
# <details><summary>1. Why does bf16 need no loss scaling, and fp16 does?</summary>
#
# bf16 has fp32's 8 exponent bits, so small gradients stay representable; fp16's 5 exponent bits
# flush them to zero below about 6e-8.
# </details>
#
# <details><summary>2. A T4 says <code>torch.cuda.is_bf16_supported()</code> is True. Should you train in bf16 there?</summary>
#
# No: the T4 (compute capability 7.5) emulates bf16, slower than fp32. Use fp16 with a GradScaler.
# </details>
#
# <details><summary>3. Where do the 16 bytes per parameter of fp32 AdamW come from?</summary>
#
# 4 for the weight, 4 for its gradient, 8 for Adam's two moments. Activations come on top.
# </details>
#
# <details><summary>4. You clip gradients at 1.0 in fp16 training, right after <code>scaler.scale(loss).backward()</code>. What goes wrong?</summary>
#
# The gradients are still multiplied by the scale, so clipping cuts them far too hard. Call
# `scaler.unscale_(optimizer)` first.
# </details>
#
# ## Summary
#
# - Exponent bits give range, mantissa bits precision: fp16 overflows past 65504, bf16 has fp32's
#   range with 8 bits of precision.
# - Speed per dtype depends on the hardware: fp16 on a T4, bf16 from compute capability 8.0 and on
#   TPUs, tf32 when allowed on Ampere and newer; on a CPU measure.
# - Autocast keeps the master weights in fp32 and runs matmuls in 16 bits; which other operations
#   it lifts to fp32 depends on the device: on CUDA softmax, norms and losses, on the CPU only the
#   losses (softmax and layer_norm stay bf16). fp16 needs a GradScaler (unscale before clipping),
#   bf16 does not.
# - Whether bf16 is faster than fp32 on a CPU depends on its instructions: faster with
#   AVX512-BF16 or AMX, many times slower with AVX2 only; the verdict in section 2 says which.
# - Training memory: weights + gradients + optimizer states + activations (+ CUDA context):
#   16 B/param for fp32 AdamW (4 + 4 + 8), 18 B with autocast's mixed precision (+ 2 for the
#   16-bit copy), the base's 2 B (4 in fp32) + adapters for LoRA, about 0.5 B + adapters for
#   QLoRA. LoRA's activations are nearly those of full training, plus the fp32 loss.
#
# **Glossary:** mantissa, exponent, machine epsilon, subnormal, tensor core, tf32, autocast, master
# weights, loss scaling, optimizer state, activations, activation checkpointing, LoRA, QLoRA, NF4.
#
# **Next:** lab 03 (bytes per dtype, exact integers, loss scaling, LoRA memory, the autocast dtype,
# a 16-bit sum that keeps its small terms, clipping after unscaling), then lesson 04, JAX on TPU,
# where bf16 is the native format.

# %% [markdown] lang="de"
# ## Prüf dich selbst
#
# <details><summary>1. Warum braucht bf16 kein Loss Scaling, fp16 aber schon?</summary>
#
# bf16 hat die 8 Exponentenbits von fp32, kleine Gradienten bleiben also darstellbar; die 5
# Exponentenbits von fp16 machen sie unter etwa 6 · 10⁻⁸ zu null.
# </details>
#
# <details><summary>2. Eine T4 meldet <code>torch.cuda.is_bf16_supported()</code> = <code>True</code>. Solltest du dort in bf16 trainieren?</summary>
#
# Nein: Die T4 (Compute Capability 7.5) emuliert bf16 und ist damit langsamer als mit fp32. Nimm
# fp16 mit GradScaler.
# </details>
#
# <details><summary>3. Woher kommen die 16 Bytes pro Parameter bei fp32-AdamW?</summary>
#
# 4 für das Gewicht, 4 für seinen Gradienten, 8 für die zwei Momente von Adam. Die Aktivierungen
# kommen dazu.
# </details>
#
# <details><summary>4. Du clippst Gradienten beim fp16-Training auf 1,0, direkt nach <code>scaler.scale(loss).backward()</code>. Was geht schief?</summary>
#
# Die Gradienten sind noch mit der Skala multipliziert, das Clipping kürzt sie also viel zu stark.
# Ruf vorher `scaler.unscale_(optimizer)` auf.
# </details>
#
# ## Zusammenfassung
#
# - Die Exponentenbits bestimmen den Wertebereich, die Mantissenbits die Genauigkeit: fp16 läuft
#   oberhalb von 65504 über, bf16 hat den Wertebereich von fp32 bei 8 Bit Genauigkeit.
# - Das Tempo pro Datentyp hängt von der Hardware ab: fp16 auf der T4, bf16 ab Compute
#   Capability 8.0 und auf TPUs, tf32 ab Ampere, wenn du es erlaubst; auf der CPU hilft nur
#   Messen.
# - Autocast lässt die Master-Gewichte in fp32 und rechnet Matmuls in 16 Bit; welche anderen
#   Operationen es auf fp32 hebt, hängt vom Gerät ab: auf CUDA Softmax, Normen und
#   Verlustfunktionen, auf der CPU nur die Verlustfunktionen (Softmax und layer_norm bleiben bf16).
#   fp16 braucht einen GradScaler (vor dem Clipping zurückskalieren), bf16 nicht.
# - Ob bf16 auf einer CPU schneller ist als fp32, hängt von ihren Befehlen ab: schneller mit
#   AVX512-BF16 oder AMX, um ein Vielfaches langsamer nur mit AVX2; das Urteil in Abschnitt 2 sagt,
#   was bei dir gilt.
# - Trainingsspeicher: Gewichte + Gradienten + Optimiererzustand + Aktivierungen (+ CUDA-Kontext):
#   16 B/Param. für fp32-AdamW (4 + 4 + 8), 18 B mit der Mixed Precision von autocast (+ 2 für die
#   16-Bit-Kopie), die 2 B der Basis (4 in fp32) + Adapter für LoRA, etwa 0,5 B + Adapter für
#   QLoRA. Die Aktivierungen von LoRA sind fast die des vollen Trainings, plus der Verlust in fp32.
#
# **Glossar:** Mantisse, Exponent, Maschinengenauigkeit, subnormale Zahl, Tensor Core, tf32,
# Autocast, Master-Gewichte, Loss Scaling, Optimiererzustand, Aktivierungen, Activation
# Checkpointing, LoRA, QLoRA, NF4.
#
# **Weiter:** Lab 03 (Bytes pro Datentyp, exakte Ganzzahlen, Loss Scaling, LoRA-Speicher, der
# Autocast-Datentyp, eine 16-Bit-Summe, die ihre kleinen Summanden behält, Clippen nach dem
# Zurückskalieren), dann Lektion 04, JAX und TPU, wo bf16 das native Format ist.

# %% [markdown] lang="en"
# **Class results (optional).** To add this run's figures to your group's comparison, set
# `SAVE_RESULTS = True` below and run the cell (or start Jupyter with `COURSE_RESULTS=folder`). It
# writes a small anonymous file to `results/` for your trainer to collect: the hardware, the
# library versions and the matmul GFLOP/s of each number format; no names, no paths. Nothing is
# sent anywhere.

# %% [markdown] lang="de"
# **Ergebnisse der Gruppe (freiwillig).** Um die Zahlen dieses Laufs zum Vergleich deiner Gruppe
# beizusteuern, setz unten `SAVE_RESULTS = True` und führe die Zelle aus (oder starte Jupyter mit
# `COURSE_RESULTS=Ordner`). Sie schreibt eine kleine anonyme Datei nach `results/`, die deine
# Trainerin oder dein Trainer einsammelt: Hardware, Bibliotheksversionen und die Matmul-GFLOP/s
# jedes Zahlenformats; keine Namen, keine Pfade. Es wird nichts verschickt.

# %%
# en: True saves this run's figures to results/, anonymously (see above)
# de: True speichert die Zahlen dieses Laufs anonym nach results/ (siehe oben)
SAVE_RESULTS = False
from utils.workshop.results import record

figures = {f"{name}_gflops": rate / 1e9 for name, rate in speed.items()}
figures["matmul_n"] = n
record("03", figures, save=SAVE_RESULTS, hw=hw)
