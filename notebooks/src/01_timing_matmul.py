# ---
# jupyter:
#   course:
#     accelerator: GPU
#     duration:
#       cpu: 25
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
#       de: 'CPU gegen GPU: Matrixmultiplikation messen'
#       en: 'CPU vs. GPU: timing a matrix multiplication'
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# The glossary page this course grew from says GPUs and TPUs speed up AI work "often by a factor
# of 10 to 1000" over CPUs, because models are mostly matrix multiplications. In this lesson you
# test that claim on your own hardware, and you learn to measure *correctly*, which most
# tutorials don't. You will
#
# - count the floating-point operations (FLOPs) of a matrix multiplication,
# - fall into the four classic timing traps on purpose, and see each one,
# - measure the right way, sweep sizes and plot time and FLOP/s,
# - find the size from which an accelerator wins, with and without copying the data to it,
# - hold the measured speed-up against "10 to 1000 times", and compare with the hardware's peak,
# - draw a first roofline: why a matmul can use the hardware and an addition cannot.

# %% [markdown] lang="de"
# Die Glossarseite, aus der dieser Kurs entstanden ist, sagt: GPUs und TPUs beschleunigen KI-Arbeit
# „oft um den Faktor 10 bis 1000“ gegenüber CPUs, weil Modelle vor allem aus
# Matrixmultiplikationen bestehen. In dieser Lektion prüfst du diese Aussage auf deiner eigenen
# Hardware, und du lernst, *richtig* zu messen, was die meisten Tutorials nicht tun. Du wirst
#
# - die Gleitkommaoperationen (FLOPs) einer Matrixmultiplikation zählen,
# - absichtlich in die vier klassischen Messfallen tappen und jede davon sehen,
# - richtig messen, Größen durchlaufen und Zeit und FLOP/s zeichnen,
# - die Größe finden, ab der ein Beschleuniger gewinnt, mit und ohne Kopieren der Daten dorthin,
# - den gemessenen Faktor mit „10 bis 1000“ und mit der Spitzenleistung der Hardware vergleichen,
# - eine erste Roofline zeichnen: warum eine Matrixmultiplikation die Hardware auslasten kann und
#   eine Addition nicht.

# %%
import time

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import torch

from utils import bench, hardware, profiles, runtime, units
from utils.chips import CHIPS
from utils.i18n import say, text

hw = hardware.detect()
profile = profiles.hardware_profile(runtime.detect_platform(), hw)
# en: The device torch computes on; this lesson uses a TPU through JAX.
# de: Das Gerät, auf dem torch rechnet; eine TPU nutzt diese Lektion über JAX.
accelerator = torch.device(hw.accelerator) if hw.accelerator in ("cuda", "mps") else None
fast_dtype = hw.gpus[0].fast_dtype if hw.gpus else "bfloat16"
rng = np.random.default_rng(0)
print(profile.label, "|", hw.summary())

# %% [markdown] lang="en"
# ## 1. Counting FLOPs
#
# Multiplying an (m×k) matrix by a (k×n) matrix gives m·n outputs. Each output is a dot product
# of length k: k multiplications and k additions (adding to a running sum that starts at zero).
# So a matmul costs **2·m·k·n FLOPs**. Data sheets count the same way: one fused multiply-add
# (FMA) is two FLOPs. Let us count them literally, with a loop, for a tiny case:

# %% [markdown] lang="de"
# ## 1. FLOPs zählen
#
# Eine (m×k)-Matrix mal eine (k×n)-Matrix ergibt m·n Ergebnisse. Jedes Ergebnis ist ein
# Skalarprodukt der Länge k: k Multiplikationen und k Additionen (zu einer laufenden Summe, die bei
# null beginnt). Eine Matrixmultiplikation kostet also **2·m·k·n FLOPs**. Datenblätter zählen
# genauso: ein fusioniertes Multiplizieren-Addieren (FMA) sind zwei FLOPs. Zählen wir sie wörtlich
# mit einer Schleife, für einen winzigen Fall:


# %%
def matmul_flops(m: int, k: int, n: int) -> int:
    return 2 * m * k * n


def matmul_counting(a, b):
    # en: The textbook triple loop, counting every multiplication and addition it does.
    # de: Die Dreifachschleife aus dem Lehrbuch; sie zählt jede Multiplikation und Addition.
    (m, k), n = a.shape, b.shape[1]
    out, multiplications, additions = np.zeros((m, n)), 0, 0
    for i in range(m):
        for j in range(n):
            total = 0.0
            for p in range(k):
                product = a[i, p] * b[p, j]
                total = total + product
                multiplications, additions = multiplications + 1, additions + 1
            out[i, j] = total
    return out, multiplications + additions


a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
out, counted = matmul_counting(a, b)
assert np.allclose(out, a @ b) and counted == matmul_flops(3, 4, 5)
say("counted {counted} FLOPs = 2·3·4·5", "{counted} FLOPs gezählt = 2·3·4·5", counted=counted)
say(
    "one 4096×4096 matmul: {g:,.0f} GFLOP",
    "eine 4096×4096-Matmul: {g:,.0f} GFLOP",
    g=matmul_flops(4096, 4096, 4096) / 1e9,
)

# %% [markdown] lang="en"
# FLOP/s (FLOPs per second) is then simply FLOPs divided by the measured time. The hard part is
# the *time*.
#
# ## 2. Four ways to get the time wrong
#
# ### Trap 1: not waiting for the result
#
# GPUs, TPUs and JAX (even on a CPU) work **asynchronously**: a call puts the work in a queue and
# returns at once. A stopwatch around the call measures how long it took to *queue* the work.
# `block_until_ready()` (JAX) or `torch.cuda.synchronize()` (PyTorch) waits until it is *done*.

# %% [markdown] lang="de"
# FLOP/s (FLOPs pro Sekunde) sind dann einfach die FLOPs geteilt durch die gemessene Zeit. Das
# Schwierige ist die *Zeit*.
#
# ## 2. Vier Arten, die Zeit falsch zu messen
#
# ### Falle 1: nicht auf das Ergebnis warten
#
# GPUs, TPUs und JAX (sogar auf der CPU) arbeiten **asynchron**: Ein Aufruf stellt die Arbeit in eine
# Warteschlange und kehrt sofort zurück. Eine Stoppuhr um den Aufruf misst, wie lange das *Einreihen*
# gedauert hat. `block_until_ready()` (JAX) bzw. `torch.cuda.synchronize()` (PyTorch) wartet, bis die
# Arbeit *fertig* ist.

# %%
n = profile.pick(cpu=1024, cuda=4096, tpu=4096, mps=2048)
x = jnp.asarray(rng.standard_normal((n, n), dtype=np.float32))
jax_matmul = jax.jit(lambda a, b: a @ b)
# en: compile first, so that below only the waiting differs
# de: erst kompilieren, damit sich unten nur das Warten unterscheidet
jax_matmul(x, x).block_until_ready()

start = time.perf_counter()
y = jax_matmul(x, x)
queued = (
    time.perf_counter() - start
)  # en: the trap: the work is still running | de: die Falle: Es rechnet noch
y.block_until_ready()
done = time.perf_counter() - start
say(
    "JAX, n={n}: without waiting {q:.2f} ms, with block_until_ready {d:.2f} ms ({f:,.0f}× as long)",
    "JAX, n={n}: ohne Warten {q:.2f} ms, mit block_until_ready {d:.2f} ms ({f:,.0f}-mal so lang)",
    n=n,
    q=queued * 1e3,
    d=done * 1e3,
    f=done / queued,
)

if accelerator is not None and accelerator.type == "cuda":
    g = torch.randn(n, n, device=accelerator)
    torch.cuda.synchronize()
    start = time.perf_counter()
    h = g @ g
    queued = time.perf_counter() - start
    torch.cuda.synchronize()
    done = time.perf_counter() - start
    say(
        "CUDA: without synchronize {q:.2f} ms, with it {d:.2f} ms",
        "CUDA: ohne synchronize {q:.2f} ms, mit {d:.2f} ms",
        q=queued * 1e3,
        d=done * 1e3,
    )

# %% [markdown] lang="en"
# ### Trap 2: timing the first call
#
# The first call pays for things later calls don't: JAX compiles the function with XLA, cuBLAS
# picks a kernel and allocates a workspace, memory is mapped for the first time. `bench.measure`
# times that *cold* call separately. A freshly jitted function shows it best:

# %% [markdown] lang="de"
# ### Falle 2: den ersten Aufruf messen
#
# Der erste Aufruf bezahlt für Dinge, die spätere nicht mehr brauchen: JAX kompiliert die Funktion
# mit XLA, cuBLAS wählt einen Kernel und legt seinen Workspace an, Speicher wird zum ersten Mal
# eingeblendet. `bench.measure` misst diesen *kalten* Aufruf getrennt. Am deutlichsten zeigt es
# eine frisch mit `jit` kompilierte Funktion:

# %%
fresh = jax.jit(lambda a, b: a @ b + 1.0)
first = bench.measure(fresh, x, x, min_time=0.1)
say(
    "first call {cold}, typical call {typical}: the first call is {f:,.0f}× slower",
    "erster Aufruf {cold}, typischer Aufruf {typical}: Der erste ist {f:,.0f}-mal langsamer",
    cold=units.format_seconds(first.cold),
    typical=units.format_seconds(first.median),
    f=first.cold / first.median,
)

# %% [markdown] lang="en"
# ### Trap 3: timing all-zero inputs
#
# `torch.zeros` is the quickest way to make a test matrix, and the wrong one. On a CPU the time
# of a matmul hardly depends on the values. On a GPU it does: transistors that don't switch use
# less power, so the chip keeps a higher clock. Horace He showed this in 2024 ("Strangely, matrix
# multiplications on GPUs run faster when given predictable data"); an H200 measured 12 % faster
# bf16 matmuls on zeros than on random numbers. Always time random data. Here is this machine:

# %% [markdown] lang="de"
# ### Falle 3: Nullen messen
#
# `torch.zeros` ist der schnellste Weg zu einer Testmatrix, und der falsche. Auf einer CPU hängt die
# Zeit einer Matrixmultiplikation kaum von den Werten ab. Auf einer GPU schon: Transistoren, die nicht
# schalten, brauchen weniger Strom, also hält der Chip einen höheren Takt. Horace He hat das 2024
# gezeigt („Strangely, matrix multiplications on GPUs run faster when given predictable data“); eine
# H200 war bei bf16-Matrixmultiplikationen mit Nullen 12 % schneller als mit Zufallszahlen. Miss
# immer mit Zufallsdaten. So sieht es auf dieser Maschine aus:

# %%
device = accelerator or torch.device("cpu")
size = profile.pick(cpu=512, cuda=4096, mps=2048)
zeros = torch.zeros(size, size, device=device)
randoms = torch.randn(size, size, device=device)
on_zeros = bench.measure(torch.matmul, zeros, zeros, min_time=0.1)
on_randoms = bench.measure(torch.matmul, randoms, randoms, min_time=0.1)
say(
    "{device}: zeros {zeros}, random {randoms} (random / zeros = {ratio:.2f})",
    "{device}: Nullen {zeros}, Zufallszahlen {randoms} (Zufall / Nullen = {ratio:.2f})",
    device=device,
    zeros=units.format_seconds(on_zeros.median),
    randoms=units.format_seconds(on_randoms.median),
    ratio=on_randoms.median / on_zeros.median,
)

# %% [markdown] lang="en"
# ### Trap 4: not knowing how many threads ran
#
# A CPU matmul uses as many threads as the library is told to use. The same code on the same
# machine can differ by the number of cores, and test suites often pin it to one thread
# (`OMP_NUM_THREADS=1`). Report the threads with every CPU figure; `bench.measure` does.

# %% [markdown] lang="de"
# ### Falle 4: nicht wissen, wie viele Threads liefen
#
# Eine Matrixmultiplikation auf der CPU nutzt so viele Threads, wie die Bibliothek nutzen darf.
# Derselbe Code auf derselben Maschine kann sich deshalb um den Faktor der Kernzahl unterscheiden,
# und Testumgebungen legen oft einen einzigen Thread fest (`OMP_NUM_THREADS=1`). Gib bei jeder CPU-Zahl die Threads an; `bench.measure`
# tut das.

# %%
cpu_a = torch.randn(size, size)
threads_before = torch.get_num_threads()
by_threads = {}
for threads in sorted({1, hw.cpu.cores}):
    torch.set_num_threads(threads)
    by_threads[threads] = bench.measure(torch.matmul, cpu_a, cpu_a, min_time=0.1)
torch.set_num_threads(threads_before)
for threads, m in by_threads.items():
    say(
        "{threads} thread(s): {t}",
        "{threads} Thread(s): {t}",
        threads=threads,
        t=units.format_seconds(m.median),
    )

# %% [markdown] lang="en"
# With more than one core, more threads are usually faster, unless something else is using the
# cores at the same time (another notebook, a test run): then the extra threads wait for each
# other, and the result can even turn around.
#
# ## 3. The right way
#
# `utils.bench.measure(fn, *args)` avoids all four traps: it times the cold call separately, warms
# up while finding a block of calls that lasts at least 20 ms (so the timer's own cost of about
# 40 ns disappears), synchronises every block for the backend the result lives on, repeats until
# it has at least 0.2 s of blocks, and reports the median, the interquartile range (IQR) and the
# thread settings. With the FLOPs it also gives FLOP/s and the share of the device's peak.
# Open `utils/bench.py`: it is short, and reading it is part of this lesson.

# %% [markdown] lang="de"
# Bei mehr als einem Kern sind mehr Threads meist schneller, es sei denn, etwas anderes nutzt die
# Kerne gleichzeitig (ein anderes Notebook, ein Testlauf): Dann warten die zusätzlichen Threads
# aufeinander, und das Ergebnis kann sich sogar umdrehen.
#
# ## 3. So misst du richtig
#
# `utils.bench.measure(fn, *args)` vermeidet alle vier Fallen: Es misst den kalten Aufruf getrennt,
# wärmt auf, während es einen Block von Aufrufen sucht, der mindestens 20 ms dauert (so fallen die
# etwa 40 ns nicht mehr ins Gewicht, die der Timer selbst kostet), synchronisiert jeden Block für das Backend, auf dem
# das Ergebnis liegt, wiederholt, bis es mindestens 0,2 s an Blöcken hat, und meldet Median,
# Interquartilsabstand (IQR) und Thread-Einstellungen. Mit den FLOPs liefert es auch FLOP/s und den
# Anteil an der Spitzenleistung des Geräts. Öffne `utils/bench.py`: Es ist kurz, und es
# zu lesen gehört zu dieser Lektion.

# %%
a32 = rng.standard_normal((size, size), dtype=np.float32)
right = bench.measure(
    np.matmul, a32, a32, flops=matmul_flops(size, size, size), dtype="float32", name="numpy"
)
print(right)

# %% [markdown] lang="en"
# ## 4. Sweeping sizes
#
# One size tells little. We time square matmuls from tiny to large: numpy and PyTorch on the CPU
# in float32, PyTorch on the CPU in bfloat16 where the CPU has bf16 instructions, and the
# accelerator in float32 and in its fast format (fp16 on a T4, bf16 on newer GPUs and TPUs).
# Half-precision float16 on a CPU is left out on purpose: without hardware for it, a CPU runs it
# dozens of times slower than float32.

# %% [markdown] lang="de"
# ## 4. Größen durchlaufen
#
# Eine Größe sagt wenig. Wir messen quadratische Matrixmultiplikationen von winzig bis groß: numpy
# und PyTorch auf der CPU in float32, PyTorch auf der CPU in bfloat16, wo die CPU bf16-Befehle hat,
# und den Beschleuniger in float32 und in seinem schnellen Format (fp16 auf einer T4, bf16 auf neueren
# GPUs und TPUs). float16 auf der CPU fehlt absichtlich: Ohne Hardware dafür rechnet eine CPU es um
# ein Vielfaches langsamer als float32.

# %%
cpu_sizes = (
    [64, 128, 256, 512, 1024] if profile.device == "cpu" else [64, 128, 256, 512, 1024, 2048]
)
big_sizes = profile.pick(cpu=[], cuda=[4096, 8192], tpu=[4096, 8192], mps=[4096])
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def time_torch(n, dtype, device):
    a = torch.randn(n, n, device=device, dtype=DTYPES[dtype])
    return bench.measure(
        torch.matmul, a, a, flops=matmul_flops(n, n, n), dtype=dtype, min_time=0.05
    )


def time_numpy(n):
    a = rng.standard_normal((n, n), dtype=np.float32)
    return bench.measure(
        np.matmul, a, a, flops=matmul_flops(n, n, n), dtype="float32", min_time=0.05
    )


def time_jax(n, dtype):
    a = jnp.asarray(rng.standard_normal((n, n), dtype=np.float32), dtype=dtype)
    return bench.measure(jax_matmul, a, a, flops=matmul_flops(n, n, n), dtype=dtype, min_time=0.05)


sweep = {"numpy float32 (CPU)": {n: time_numpy(n) for n in cpu_sizes}}
sweep["torch float32 (CPU)"] = {n: time_torch(n, "float32", "cpu") for n in cpu_sizes}
if hw.cpu.has_fast_bf16:
    sweep["torch bfloat16 (CPU)"] = {n: time_torch(n, "bfloat16", "cpu") for n in cpu_sizes}
if accelerator is not None:
    for dtype in ("float32", fast_dtype if accelerator.type == "cuda" else "float16"):
        sweep[f"torch {dtype} ({accelerator.type})"] = {
            n: time_torch(n, dtype, accelerator) for n in cpu_sizes + big_sizes
        }
if hw.tpu:
    for dtype in ("float32", "bfloat16"):
        sweep[f"jax {dtype} (TPU)"] = {n: time_jax(n, dtype) for n in cpu_sizes + big_sizes}

for label, results in sweep.items():
    best_n = max(results, key=lambda n: results[n].flops_per_second)
    say(
        "{label:24s} best {rate} (n={n})",
        "{label:24s} am besten {rate} (n={n})",
        label=label,
        rate=units.format_rate(results[best_n].flops_per_second),
        n=best_n,
    )

# %%
fig, (ax_time, ax_rate) = plt.subplots(1, 2, figsize=(11, 4))
for label, results in sweep.items():
    ns = sorted(results)
    ax_time.loglog(ns, [results[n].median for n in ns], "o-", label=label)
    ax_rate.loglog(ns, [results[n].flops_per_second for n in ns], "o-", label=label)
ax_time.set(
    xlabel="n",
    ylabel=text("seconds per matmul", "Sekunden pro Matmul"),
    title=text("time", "Zeit"),
)
ax_rate.set(xlabel="n", ylabel="FLOP/s", title=text("throughput", "Durchsatz"))
ax_rate.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown] lang="en"
# Read the right-hand plot from left to right. At small sizes the throughput is low: each call
# has a fixed cost (Python, dispatch, a kernel launch) that the little work cannot hide; time is
# almost flat in n, the **overhead-bound** regime. As n grows, the time grows like n³ and the
# FLOP/s level off near what the hardware can do: the **compute-bound** regime.
#
# ## 5. When does the accelerator win?
#
# An accelerator has a higher plateau but also a higher fixed cost, and the data has to get there:
# two n×n inputs in, one result back, over PCIe. We look for the smallest size from which the
# accelerator is faster at every larger size, once counting only the matmul and once with the
# copies.

# %% [markdown] lang="de"
# Lies das rechte Diagramm von links nach rechts. Bei kleinen Größen ist der Durchsatz niedrig: Jeder
# Aufruf hat feste Kosten (Python, Dispatch, ein Kernel-Start), die die wenige Arbeit nicht verdecken
# kann; die Zeit ändert sich mit n kaum. Das ist der **overheadgebundene** Bereich. Wächst n, wächst
# die Zeit mit n³, und die FLOP/s pendeln sich nahe dem ein, was die Hardware schafft: der
# **rechengebundene** Bereich.
#
# ## 5. Ab wann gewinnt der Beschleuniger?
#
# Ein Beschleuniger hat ein höheres Plateau, aber auch höhere feste Kosten, und die Daten müssen
# erst dorthin: zwei n×n-Eingaben hin, ein Ergebnis zurück, über PCIe. Wir suchen die kleinste Größe,
# ab der der Beschleuniger auch bei jeder größeren schneller ist: einmal nur für die
# Matrixmultiplikation gerechnet und einmal mit den Kopien.


# %%
def crossover(sizes, cpu_seconds, accelerator_seconds):
    # en: The smallest size from which the accelerator is faster at this and every larger size.
    # de: Die kleinste Größe, ab der der Beschleuniger bei ihr und jeder größeren schneller ist.
    wins = [acc < cpu for cpu, acc in zip(cpu_seconds, accelerator_seconds, strict=True)]
    for i, size in enumerate(sizes):
        if all(wins[i:]):
            return size
    return None


# en: a lucky win at size 2 does not count
# de: ein Zufallssieg bei Größe 2 zählt nicht
assert crossover([1, 2, 3, 4], [1, 1, 1, 1], [2, 0.5, 2, 0.5]) == 4
assert crossover([1, 2], [1, 1], [2, 2]) is None

best_cpu = {
    n: min(series[n].median for label, series in sweep.items() if "CPU" in label) for n in cpu_sizes
}
cpu_times = [best_cpu[n] for n in cpu_sizes]
# en: float32 first, then the fast dtype
# de: erst float32, dann der schnelle Datentyp
accelerated = [label for label in sweep if "(CPU)" not in label]

if accelerated:
    fp32 = sweep[accelerated[0]]
    only_matmul = crossover(cpu_sizes, cpu_times, [fp32[n].median for n in cpu_sizes])
    say(
        "{label} wins from n = {n} (matmul only)",
        "{label} gewinnt ab n = {n} (nur die Matmul)",
        label=accelerated[0],
        n=only_matmul,
    )
if accelerator is not None:

    def with_copies(a_host, b_host):
        return (a_host.to(accelerator) @ b_host.to(accelerator)).cpu()

    copied = [
        bench.measure(with_copies, h, h, min_time=0.05, backend=accelerator.type).median
        for h in (torch.randn(n, n) for n in cpu_sizes)
    ]
    say(
        "... and from n = {n} with the copies to the device and back",
        "... und ab n = {n} mit den Kopien zum Gerät und zurück",
        n=crossover(cpu_sizes, cpu_times, copied),
    )
if not accelerated:
    say(
        "No accelerator here: the cell below models a T4 instead, from its data sheet.",
        "Hier gibt es keinen Beschleuniger: Die Zelle unten modelliert eine T4 nach Datenblatt.",
    )

# %% [markdown] lang="en"
# Without an accelerator we can still reason about one with a **model** (not a measurement):
# a call costs a fixed launch overhead plus FLOPs divided by the rate the GPU sustains; copies
# cost bytes divided by the PCIe bandwidth. The assumptions are printed with the result; run this
# notebook on a T4 to replace them by measurements.

# %% [markdown] lang="de"
# Ohne Beschleuniger können wir trotzdem über einen nachdenken, mit einem **Modell** (keiner
# Messung): Ein Aufruf kostet einen festen Start-Overhead plus FLOPs geteilt durch die Rate, die die
# GPU dauerhaft schafft; Kopien kosten Bytes geteilt durch die PCIe-Bandbreite. Die Annahmen stehen
# beim Ergebnis;
# führe dieses Notebook auf einer T4 aus, um sie durch Messungen zu ersetzen.

# %%
T4 = CHIPS["T4"]
model = {
    # en: a kernel launch plus PyTorch's dispatch: about 10 µs
    # de: ein Kernel-Start plus das Dispatching von PyTorch: etwa 10 µs
    "launch_seconds": 10e-6,
    # en: a large fp32 matmul reaches roughly this share of the peak
    # de: eine große fp32-Matmul erreicht ungefähr diesen Anteil an der Spitzenleistung
    "fp32_share_of_peak": 0.6,
    # en: PCIe 3.0 x16 with pinned memory, in practice
    # de: PCIe 3.0 x16 mit gepinntem Speicher, in der Praxis
    "pcie_bytes_per_second": 12e9,
}


def t4_model_seconds(n, with_copies=False):
    compute = matmul_flops(n, n, n) / (T4.for_dtype("float32") * 1e12 * model["fp32_share_of_peak"])
    copies = 3 * n * n * 4 / model["pcie_bytes_per_second"] if with_copies else 0.0
    return model["launch_seconds"] + compute + copies


modelled = crossover(cpu_sizes, cpu_times, [t4_model_seconds(n) for n in cpu_sizes])
modelled_copies = crossover(cpu_sizes, cpu_times, [t4_model_seconds(n, True) for n in cpu_sizes])
say(
    "Model of a T4 from NVIDIA's T4 data sheet, assuming a launch overhead of {launch:.0f} µs, "
    "{share:.0f}% of the fp32 peak and {pcie:.0f} GB/s over PCIe:",
    "Modell einer T4 laut NVIDIA-Datenblatt zur T4, mit {launch:.0f} µs Start-Overhead, "
    "{share:.0f} % der fp32-Spitzenleistung und {pcie:.0f} GB/s über PCIe:",
    launch=model["launch_seconds"] * 1e6,
    share=model["fp32_share_of_peak"] * 100,
    pcie=model["pcie_bytes_per_second"] / 1e9,
)
say(
    "  against this CPU it would win from n = {n} (matmul only), from n = {n_copies} with copies",
    "  gegen diese CPU gewänne sie ab n = {n} (nur die Matmul), ab n = {n_copies} mit Kopien",
    n=modelled,
    n_copies=modelled_copies,
)

# %% [markdown] lang="en"
# ## 6. "10 to 1000 times faster"?
#
# The speed-up is a ratio, and both halves matter. Here are three honest ratios from this run.

# %% [markdown] lang="de"
# ## 6. „10- bis 1000-mal schneller“?
#
# Der Beschleunigungsfaktor ist ein Verhältnis, und beide Hälften zählen. Hier drei ehrliche
# Verhältnisse aus diesem Lauf.

# %%
# en: (a) Against naive code: the textbook loop from section 1 in pure Python vs. numpy.
# de: (a) Gegen naiven Code: die Lehrbuchschleife aus Abschnitt 1 in reinem Python gegen numpy.
tiny = 48
loop_a = rng.standard_normal((tiny, tiny))
python_loop = bench.measure(matmul_counting, loop_a, loop_a, min_time=0.05, min_blocks=3)
numpy_tiny = bench.measure(np.matmul, loop_a, loop_a, min_time=0.05)
say(
    "(a) numpy vs. a Python loop, n={n}: {f:,.0f}× faster, on the same CPU",
    "(a) numpy gegen eine Python-Schleife, n={n}: {f:,.0f}-mal schneller, auf derselben CPU",
    n=tiny,
    f=python_loop.median / numpy_tiny.median,
)

# en: (b) and (c): the accelerator (fast dtype) vs. the best CPU figure, at the largest and
# en: the smallest size both ran.
# de: (b) und (c): der Beschleuniger (schneller Datentyp) gegen die beste CPU-Zahl, bei der
# de: größten und der kleinsten Größe, die beide gerechnet haben.
large, small = max(cpu_sizes), min(cpu_sizes)
if accelerated:
    fast = sweep[accelerated[-1]]
    speedups = {n: best_cpu[n] / fast[n].median for n in (small, large)}
    source = text("measured, {label}", "gemessen, {label}", label=accelerated[-1])
else:
    speedups = {n: best_cpu[n] / t4_model_seconds(n) for n in (small, large)}
    source = text("T4 model", "T4-Modell")
say(
    "(b) accelerator vs. best CPU at n={n}: {f:,.1f}× ({source})",
    "(b) Beschleuniger gegen beste CPU bei n={n}: {f:,.1f}-mal so schnell ({source})",
    n=large,
    f=speedups[large],
    source=source,
)
say(
    "(c) at n={n}: {f:,.2f}× ({source})",
    "(c) bei n={n}: {f:,.2f}-mal so schnell ({source})",
    n=small,
    f=speedups[small],
    source=source,
)

# %% [markdown] lang="en"
# What makes the factor **10**: float32 on a mid-range GPU against a multi-core CPU with a good
# BLAS. What makes it **1000**: half precision on tensor cores against one CPU thread, or, as in
# (a), any library against a Python loop: a large part of famous speed-ups is the baseline's
# fault. What makes it **below 1**: small sizes, where the launch overhead and the copies cost more
# than the work. The claim is true for large models on modern GPUs, and it depends on size, dtype
# and what is counted.
#
# ## 7. How close to the peak?
#
# The data sheet gives the peak; the measurement gives what you get. For this CPU the peak is
# estimated from cores × clock × FLOPs per cycle (and printed as an estimate). It counts every
# core: with fewer threads than cores you can reach only that share of it.

# %% [markdown] lang="de"
# Was den Faktor **10** ergibt: float32 auf einer Mittelklasse-GPU gegen eine Mehrkern-CPU mit gutem
# BLAS. Was **1000** ergibt: halbe Genauigkeit auf Tensor Cores gegen einen einzelnen CPU-Thread, oder,
# wie in (a), jede Bibliothek gegen eine Python-Schleife: Ein guter Teil berühmter Beschleunigungen
# geht auf das Konto der Vergleichsbasis. Was **unter 1** ergibt: kleine Größen, bei denen
# Start-Overhead und Kopien mehr kosten als die Arbeit. Die Aussage stimmt für große Modelle auf
# modernen GPUs, und sie hängt von Größe, Datentyp und davon ab, was man mitzählt.
#
# ## 7. Wie nah an der Spitzenleistung?
#
# Das Datenblatt nennt die Spitzenleistung, die Messung zeigt, was du bekommst. Für diese CPU wird
# sie aus Kerne × Takt × FLOPs pro Takt geschätzt (und als Schätzung gekennzeichnet). Sie zählt alle Kerne:
# Mit weniger Threads als Kernen erreichst du höchstens diesen Anteil davon.

# %%
for label, results in sweep.items():
    best = max(results.values(), key=lambda m: m.flops_per_second)
    if best.percent_of_peak is None:
        share = text("unknown", "unbekannt")
    else:
        share = text("{p:.0f}%", "{p:.0f} %", p=best.percent_of_peak)
    if best.peak is None:
        chip = "–"
    elif best.peak.estimate:
        chip = text("{chip} (estimate)", "{chip} (Schätzung)", chip=best.peak.name)
    else:
        chip = best.peak.name
    rate = units.format_rate(best.flops_per_second)
    print(f"{label:24s} {rate:>14s}  {share:>9s}  {chip}")

# %% [markdown] lang="en"
# ## 8. A first roofline
#
# A matmul of n×n matrices does 2n³ FLOPs on 3n² numbers: the larger n, the more work per byte
# moved. An elementwise addition does one FLOP per element and moves three numbers (two in, one
# out): 1 FLOP per 12 bytes in float32, whatever the size. This ratio, FLOPs per byte, is the
# **arithmetic intensity**. A device can do at most `peak` FLOP/s, and at most `bandwidth ×
# intensity` FLOP/s if every byte must come from memory; the lower of the two is its **roofline**.
# Above the *ridge point* (peak ÷ bandwidth) an operation is compute-bound, below it memory-bound.

# %% [markdown] lang="de"
# ## 8. Eine erste Roofline
#
# Eine Matrixmultiplikation von n×n-Matrizen rechnet 2n³ FLOPs auf 3n² Zahlen: Je größer n, desto mehr
# Arbeit pro bewegtem Byte. Eine elementweise Addition rechnet einen FLOP pro Element und bewegt drei
# Zahlen (zwei lesen, eine schreiben): 1 FLOP pro 12 Byte in float32, egal wie groß. Dieses Verhältnis,
# FLOPs pro Byte, heißt **arithmetische Intensität**. Ein Gerät schafft höchstens `Spitze` FLOP/s, und
# höchstens `Bandbreite × Intensität` FLOP/s, wenn jedes Byte aus dem Speicher kommen muss; das
# Kleinere von beiden ist seine **Roofline**. Oberhalb des *Knickpunkts* (Spitze ÷ Bandbreite) ist
# eine Operation rechengebunden, darunter speichergebunden.

# %%
elements = profile.pick(cpu=4_000_000, cuda=64_000_000, mps=32_000_000)
u = torch.randn(elements, device=device)
v = torch.randn(elements, device=device)
add = bench.measure(torch.add, u, v, flops=elements, dtype="float32", min_time=0.1)
# en: the bytes per second that the addition achieved
# de: die Bytes pro Sekunde, die die Addition geschafft hat
bandwidth = 12 * elements / add.median
add_intensity = elements / (12 * elements)

mm_sizes = cpu_sizes if accelerator is None else cpu_sizes + big_sizes
mm_label = f"torch float32 ({device.type})" if accelerator is not None else "torch float32 (CPU)"
mm_results = sweep[mm_label]
mm_points = [
    (2 * n**3 / (3 * 4 * n * n), mm_results[n].flops_per_second)
    for n in mm_sizes
    if n in mm_results
]
# en: the best rate we reached stands in for the peak
# de: die beste erreichte Rate steht für die Spitzenleistung
peak_flops = max(rate for _, rate in mm_points)
ridge = peak_flops / bandwidth

fig, ax = plt.subplots(figsize=(6, 4))
intensities = np.logspace(-2, 3, 100)
roof = np.minimum(peak_flops, bandwidth * intensities)
ax.loglog(intensities, roof, "k-", label=text("roofline", "Roofline"))
ax.loglog([add_intensity], [add.flops_per_second], "rs", label=text("addition", "Addition"))
ax.loglog(*zip(*mm_points, strict=True), "bo-", label=text("matmul float32", "Matmul float32"))
ax.axvline(ridge, color="gray", linestyle=":", label=text("ridge point", "Knickpunkt"))
ax.set(
    xlabel=text("FLOPs per byte", "FLOPs pro Byte"),
    ylabel="FLOP/s",
    title=f"Roofline ({device.type})",
)
ax.legend()
plt.show()

say(
    "measured bandwidth {bw:,.1f} GB/s, best matmul {rate}, ridge point {ridge:,.1f} FLOP/byte",
    "gemessene Bandbreite {bw:,.1f} GB/s, beste Matmul {rate}, Knickpunkt {ridge:,.1f} FLOP/Byte",
    bw=bandwidth / 1e9,
    rate=units.format_rate(peak_flops),
    ridge=ridge,
)
say(
    "addition: {i:.3f} FLOP/byte, {rate}: memory-bound ({p:.1f}% of the matmul's rate)",
    "Addition: {i:.3f} FLOP/Byte, {rate}: speichergebunden ({p:.1f} % der Matmul-Rate)",
    i=add_intensity,
    rate=units.format_rate(add.flops_per_second),
    p=100 * add.flops_per_second / peak_flops,
)

# %% [markdown] lang="en"
# This is why the glossary's claim is about matrix multiplications: only operations with high
# arithmetic intensity can use the FLOP/s an accelerator offers. Lesson 03 returns to this with
# precision, lesson 05 with whole training steps.
#
# ## 9. Explore
#
# Pick a size, a dtype and a device and click *Measure*. (On a static page or in a test run you
# see only the result for the defaults.)

# %% [markdown] lang="de"
# Deshalb spricht die Glossarseite von Matrixmultiplikationen: Nur Operationen mit hoher
# arithmetischer Intensität können die FLOP/s eines Beschleunigers nutzen. Lektion 03 kommt darauf mit
# Zahlenformaten zurück, Lektion 05 mit ganzen Trainingsschritten.
#
# ## 9. Selbst ausprobieren
#
# Wähle Größe, Datentyp und Gerät und klicke auf *Messen*. (Auf einer statischen Seite oder in einem
# Testlauf siehst du nur das Ergebnis für die Voreinstellung.)

# %%
from utils.widgets import explore

devices = ["cpu"] + ([accelerator.type] if accelerator is not None else [])


def measure_one(n, dtype, device):
    if device == "cpu" and dtype == "float16":
        say(
            "float16 on a CPU is very slow: pick bfloat16 or float32.",
            "float16 ist auf der CPU sehr langsam: Nimm bfloat16 oder float32.",
        )
        return
    print(time_torch(n, dtype, device))


panel = explore(
    measure_one,
    {"n": 256, "dtype": "float32", "device": "cpu"},
    n=[64, 256, 1024, 2048, 4096, 8192],
    dtype=list(DTYPES),
    device=devices,
)

# %% [markdown] lang="en"
# ### What you should see
#
# | profile | float32 | fast dtype | notes |
# |---|---|---|---|
# | CPU, 2 cores (this course's CI machines) | numpy ≈ 0.25, torch ≈ 0.21 TFLOP/s | torch bf16 ≈ 0.95 TFLOP/s (AVX512-BF16) | two threads; with one, about half; the BLAS kernel matters |
# | Colab T4 | peak 8.1 TFLOP/s | fp16: peak 65, sustained ≈ 24 TFLOP/s (70 W cap) | bf16 is emulated: slower than fp32 |
# | Kaggle T4 x2 | per GPU as above | as above | this lesson uses one GPU |
# | Colab TPU v5e-1 | runs as bf16 passes | bf16: peak 197 TFLOP/s | large, static shapes pay off (lesson 04) |
# | H200 | tf32 peak 495 | bf16 ≈ 770–800 of 989 TFLOP/s at n = 8192 (≈ 80 %) | |
#
# *Peaks: NVIDIA and Google Cloud data sheets (checked November 2026). Measured figures: the CPU
# rows on a 2-core AMD EPYC (Zen 5) with `OPENBLAS_CORETYPE=Haswell`, the T4 and H200 rows as
# reported for those chips in 2026. Your figures will differ; the shape of the curves will not.*
#
# ## Check yourself
#
# <details><summary>1. A colleague times <code>y = model(x)</code> on a GPU with <code>time.time()</code> and gets 0.1 ms for a large model. What went wrong?</summary>
#
# The call only queued the work. Synchronise (`torch.cuda.synchronize()`) before stopping the
# clock, or use a timer that does.
# </details>
#
# <details><summary>2. Why can an elementwise addition never reach the FLOP/s of a matmul?</summary>
#
# It does 1 FLOP per 12 bytes moved; its speed is limited by memory bandwidth, far below the ridge
# point of any modern chip.
# </details>
#
# <details><summary>3. Your GPU is slower than the CPU for n = 64. Is the GPU broken?</summary>
#
# No: at that size the fixed cost per call (launch, dispatch, copies) is larger than the work.
# </details>
#
# ## Summary
#
# - A matmul costs 2·m·k·n FLOPs; FLOP/s = FLOPs / time.
# - Time correctly: wait for the result, leave out the first call, use random data, report the
#   threads; take the median of blocks and look at the spread.
# - Small problems are overhead-bound, large matmuls compute-bound, elementwise ops memory-bound.
# - "10 to 1000 times" depends on the size, the dtype, the baseline and whether copies are counted.
#
# **Glossary:** FLOP, FLOP/s, FMA, asynchronous execution, warm-up, median, IQR, peak, arithmetic
# intensity, roofline, ridge point.
#
# **Next:** lab 01, then lesson 02: where do tensors live, and what does moving them cost?

# %% [markdown] lang="de"
# ### Was du sehen solltest
#
# | Profil | float32 | schneller Datentyp | Hinweise |
# |---|---|---|---|
# | CPU, 2 Kerne (die CI-Maschinen dieses Kurses) | numpy ≈ 0,25, torch ≈ 0,21 TFLOP/s | torch bf16 ≈ 0,95 TFLOP/s (AVX512-BF16) | zwei Threads; mit einem etwa die Hälfte; der BLAS-Kernel macht viel aus |
# | Colab T4 | Spitze 8,1 TFLOP/s | fp16: Spitze 65, dauerhaft ≈ 24 TFLOP/s (70-W-Grenze) | bf16 wird emuliert: langsamer als fp32 |
# | Kaggle T4 x2 | pro GPU wie oben | wie oben | diese Lektion nutzt eine GPU |
# | Colab TPU v5e-1 | läuft in bf16-Durchgängen | bf16: Spitze 197 TFLOP/s | große, feste Array-Formen zahlen sich aus (Lektion 04) |
# | H200 | tf32-Spitze 495 | bf16 ≈ 770–800 von 989 TFLOP/s bei n = 8192 (≈ 80 %) | |
#
# *Spitzenwerte: Datenblätter von NVIDIA und Google Cloud (geprüft im November 2026). Gemessene Werte:
# die CPU-Zeilen auf einem AMD EPYC (Zen 5) mit 2 Kernen und `OPENBLAS_CORETYPE=Haswell`, die T4- und
# H200-Zeilen wie 2026 für diese Chips berichtet. Deine Zahlen werden abweichen, die Form der Kurven
# nicht.*
#
# ## Teste dich selbst
#
# <details><summary>1. Eine Kollegin misst <code>y = model(x)</code> auf einer GPU mit <code>time.time()</code> und erhält 0,1 ms für ein großes Modell. Was ist schiefgegangen?</summary>
#
# Der Aufruf hat die Arbeit nur eingereiht. Synchronisiere, bevor du die Uhr anhältst
# (`torch.cuda.synchronize()`), oder nimm einen Timer, der das tut.
# </details>
#
# <details><summary>2. Warum kann eine elementweise Addition nie die FLOP/s einer Matrixmultiplikation erreichen?</summary>
#
# Sie rechnet 1 FLOP pro 12 bewegte Bytes; ihre Geschwindigkeit ist durch die Speicherbandbreite
# begrenzt, ihre Intensität liegt weit unter dem Knickpunkt jedes modernen Chips.
# </details>
#
# <details><summary>3. Deine GPU ist bei n = 64 langsamer als die CPU. Ist die GPU kaputt?</summary>
#
# Nein: Bei dieser Größe sind die festen Kosten pro Aufruf (Start, Dispatch, Kopien) größer als die
# Arbeit.
# </details>
#
# ## Zusammenfassung
#
# - Eine Matrixmultiplikation kostet 2·m·k·n FLOPs; FLOP/s = FLOPs / Zeit.
# - Miss richtig: Warte auf das Ergebnis, lass den ersten Aufruf weg, nimm Zufallsdaten, gib die
#   Threads an; nimm den Median von Blöcken und achte auf die Streuung.
# - Kleine Probleme sind overheadgebunden, große Matrixmultiplikationen rechengebunden, elementweise
#   Operationen speichergebunden.
# - „10- bis 1000-mal“ hängt von Größe, Datentyp, Vergleichsbasis und davon ab, ob Kopien mitzählen.
#
# **Glossar:** FLOP, FLOP/s, FMA, asynchrone Ausführung, Aufwärmen, Median, IQR, Spitzenleistung,
# arithmetische Intensität, Roofline, Knickpunkt.
#
# **Weiter:** Lab 01, dann Lektion 02: Wo liegen Tensoren, und was kostet es, sie zu bewegen?

# %% tags=["guard"] jupyter={"source_hidden": true}
# en: Checks of the course itself (not part of the lesson): the cells above measured what they show.
# de: Prüfungen des Kurses selbst (nicht Teil der Lektion): Die Zellen oben maßen, was sie zeigen.
assert queued <= done
assert torch.get_num_threads() == threads_before
assert right.n >= 5 and right.median * right.number >= 0.01
assert all(len(r) >= len(cpu_sizes) for r in sweep.values())
assert python_loop.median > numpy_tiny.median
assert add_intensity < ridge < max(i for i, _ in mm_points)
