# ---
# jupyter:
#   course:
#     accelerator: GPU
#     duration:
#       cpu: 35
#       t4: 35
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
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# A typical glossary page on AI hardware says GPUs and TPUs speed up AI work "often by a factor of
# 10 to 1000" over CPUs, because models are mostly matrix multiplications (claims C1 and C2 in the
# list of lesson 00, `docs/claims.md`). In this lesson you test that claim on your own hardware, and you learn to measure *correctly*, which most
# tutorials don't. You will
#
# - count the floating-point operations (FLOPs) of a matrix multiplication,
# - fall into the four classic timing traps on purpose, and see each one,
# - measure the right way, sweep sizes and plot time and FLOP/s,
# - find the size from which an accelerator wins, with and without copying the data to it,
# - hold the measured speed-up against "10 to 1000 times", and compare with the hardware's peak,
# - draw a roofline: why a matmul can use the hardware and an addition cannot,
# - and read your first profiler table.

# %% [markdown] lang="de"
# Eine typische Glossarseite über KI-Hardware sagt: GPUs und TPUs beschleunigen KI-Arbeit „oft um
# den Faktor 10 bis 1000“ gegenüber CPUs, weil Modelle vor allem aus Matrixmultiplikationen bestehen
# (Behauptungen C1 und C2 in der Liste von Lektion 00, `docs/claims.md`). In dieser Lektion prüfst
# du diese Aussage auf deiner eigenen Hardware, und du lernst, *richtig* zu messen, was die meisten
# Tutorials nicht tun. Du wirst
#
# - die Gleitkommaoperationen (FLOPs) einer Matrixmultiplikation zählen,
# - absichtlich in die vier klassischen Messfallen tappen und jede davon sehen,
# - richtig messen, Größen durchlaufen und Zeit und FLOP/s zeichnen,
# - die Größe finden, ab der ein Beschleuniger gewinnt, mit und ohne Kopieren der Daten dorthin,
# - den gemessenen Faktor mit „10 bis 1000“ und mit der Spitzenleistung der Hardware vergleichen,
# - eine Roofline zeichnen: warum eine Matrixmultiplikation die Hardware auslasten kann und eine
#   Addition nicht,
# - und deine erste Profiler-Tabelle lesen.

# %%
import re
import time

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import torch

from utils import diagrams, units
from utils.i18n import get_language, say, text
from utils.platform import hardware, profiles, runtime
from utils.platform.chips import CHIPS, chip_for, cpu_estimate
from utils.predict import reveal
from utils.timing import bench

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
# GPUs, TPUs und JAX (sogar auf der CPU) arbeiten **asynchron**: Ein Aufruf stellt die Arbeit in
# eine Warteschlange und kehrt sofort zurück. Eine Stoppuhr um den Aufruf misst, wie lange das
# *Einreihen* gedauert hat. `block_until_ready()` (JAX) bzw. `torch.cuda.synchronize()` (PyTorch)
# wartet, bis die Arbeit *fertig* ist.

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
# The same two numbers as a timeline: Python queues the work and gets control back at once; the
# device works through its queue in the background. A stopwatch that stops when the call returns
# measures only the top bar's first piece.

# %% [markdown] lang="de"
# Dieselben zwei Zahlen als Zeitstrahl: Python reiht die Arbeit ein und hat sofort wieder die
# Kontrolle; das Gerät arbeitet seine Warteschlange im Hintergrund ab. Eine Stoppuhr, die anhält,
# sobald der Aufruf zurückkehrt, misst nur das erste Stück des oberen Balkens.

# %%
diagrams.timeline(
    [
        (
            text("Python", "Python"),
            [(text("call", "Aufruf"), queued), (text("wait", "Warten"), done - queued)],
        ),
        (
            text("device", "Gerät"),
            [("", queued), (text("matmul runs", "Matmul läuft"), done - queued)],
        ),
    ],
    text(
        "Asynchronous execution, measured: n = {n}", "Asynchrone Ausführung, gemessen: n = {n}", n=n
    ),
)
plt.show()

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
# bf16 matmuls on zeros than on random numbers. Always time random data.
#
# One comparison needs more than two medians: the machine's load changes while you measure. So we
# time both inputs in **rounds**, alternating (zeros, random, zeros, random, ...), and look at the
# range of the round medians. If the two ranges overlap, the difference is **noise**: this run
# cannot tell the two apart. Only ranges that do not overlap show an **effect**. Here is this
# machine:

# %% [markdown] lang="de"
# ### Falle 3: Nullen messen
#
# `torch.zeros` ist der schnellste Weg zu einer Testmatrix, und der falsche. Auf einer CPU hängt die
# Zeit einer Matrixmultiplikation kaum von den Werten ab. Auf einer GPU schon: Transistoren, die
# nicht schalten, brauchen weniger Strom, also hält der Chip einen höheren Takt. Horace He hat das
# 2024 gezeigt („Strangely, matrix multiplications on GPUs run faster when given predictable data“);
# eine H200 war bei bf16-Matrixmultiplikationen mit Nullen 12 % schneller als mit Zufallszahlen.
# Miss immer mit Zufallsdaten.
#
# Für einen Vergleich reichen zwei Mediane nicht: Die Last der Maschine ändert sich, während du
# misst. Deshalb messen wir beide Eingaben in **Runden**, abwechselnd (Nullen, Zufall, Nullen,
# Zufall, …), und schauen auf den Bereich der Rundenmediane. Überlappen sich die beiden Bereiche,
# ist der Unterschied **Rauschen**: Dieser Lauf kann die beiden nicht unterscheiden. Nur Bereiche,
# die sich nicht überlappen, zeigen einen **Effekt**. So sieht es auf dieser Maschine aus:

# %% jupyter={"source_hidden": true} cellView="form"
# en: @title in_rounds, report_rounds, plot_rounds: timing in alternating rounds (folded: printing)
# de: @title in_rounds, report_rounds, plot_rounds: Messen in abwechselnden Runden (eingeklappt)
ROUNDS = 5


def in_rounds(candidates, rounds=ROUNDS, before=None):
    # en: Time every candidate once per round, alternating, so that a change of load hits all.
    # de: Jeder Kandidat einmal pro Runde, abwechselnd, damit eine Laständerung alle trifft.
    medians = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, fn in candidates.items():
            if before is not None:
                before(name)
            medians[name].append(fn().median)
    return medians


def verdict(a, b):
    # en: "effect" only if the ranges (min–max of the round medians) do not overlap
    # de: „Effekt“ nur, wenn sich die Bereiche (Min–Max der Rundenmediane) nicht überlappen
    overlap = min(a) <= max(b) and min(b) <= max(a)
    return "noise" if overlap else "effect"


def say_range(name, times):
    say(
        "  {name:<10} median {t}, range {lo} – {hi} over {k} rounds",
        "  {name:<10} Median {t}, Bereich {lo} – {hi} über {k} Runden",
        name=name,
        t=units.format_seconds(float(np.median(times))),
        lo=units.format_seconds(min(times)),
        hi=units.format_seconds(max(times)),
        k=len(times),
    )


def say_verdict(a_name, a, b_name, b):
    ratio_lo, ratio_hi = min(b) / max(a), max(b) / min(a)
    if verdict(a, b) == "noise":
        say(
            "  {b} / {a} lies between {lo:.2f} and {hi:.2f}: the ranges overlap → noise, no "
            "measurable difference in this run",
            "  {b} / {a} liegt zwischen {lo:.2f} und {hi:.2f}: Die Bereiche überlappen sich → "
            "Rauschen, in diesem Lauf kein messbarer Unterschied",
            a=a_name,
            b=b_name,
            lo=ratio_lo,
            hi=ratio_hi,
        )
    else:
        say(
            "  {b} / {a} lies between {lo:.2f} and {hi:.2f}: the ranges do not overlap → an "
            "effect ({b} is {faster})",
            "  {b} / {a} liegt zwischen {lo:.2f} und {hi:.2f}: Die Bereiche überlappen sich "
            "nicht → ein Effekt ({b} ist {faster})",
            a=a_name,
            b=b_name,
            lo=ratio_lo,
            hi=ratio_hi,
            faster=text("faster", "schneller") if ratio_hi < 1 else text("slower", "langsamer"),
        )


def report_rounds(title, results):
    print(title)
    for name, times in results.items():
        say_range(name, times)
    if len(results) > 1:
        say_verdict(*[item for pair in results.items() for item in pair])


def plot_rounds(by_input, by_threads):
    fig, (ax_in, ax_th) = plt.subplots(1, 2, figsize=(11, 3.6))
    for ax, results, title in (
        (ax_in, by_input, text("trap 3: input values", "Falle 3: Eingabewerte")),
        (ax_th, by_threads, text("trap 4: threads", "Falle 4: Threads")),
    ):
        for i, times in enumerate(results.values()):
            ms = [t * 1e3 for t in times]
            ax.plot([i] * len(ms), ms, "o", alpha=0.6)
            ax.vlines(i, min(ms), max(ms), linewidth=6, alpha=0.3)
        ax.set_xticks(range(len(results)), list(results))
        ax.set(
            title=title,
            ylabel=text("ms per matmul (round medians)", "ms pro Matmul (Rundenmediane)"),
        )
        ax.set_xlim(-0.5, len(results) - 0.5)
    plt.tight_layout()
    plt.show()


# %%
device = accelerator or torch.device("cpu")
size = profile.pick(cpu=512, cuda=4096, mps=2048)
zeros = torch.zeros(size, size, device=device)
randoms = torch.randn(size, size, device=device)
by_input = in_rounds(
    {
        text("zeros", "Nullen"): lambda: bench.measure(torch.matmul, zeros, zeros, min_time=0.05),
        text("random", "Zufall"): lambda: bench.measure(
            torch.matmul, randoms, randoms, min_time=0.05
        ),
    }
)
report_rounds(text("{device}, n = {n}:", device=device, n=size), by_input)

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
# und Testumgebungen legen oft einen einzigen Thread fest (`OMP_NUM_THREADS=1`). Gib bei jeder
# CPU-Zahl die Threads an; `bench.measure` tut das.

# %%
cpu_a = torch.randn(size, size)
threads_before = torch.get_num_threads()
thread_counts = sorted({1, hw.cpu.cores})
# en: the same rounds, with the thread count set before each candidate
# de: dieselben Runden, vor jedem Kandidaten wird die Thread-Zahl gesetzt
names = {text("{k} thread(s)", "{k} Thread(s)", k=k): k for k in thread_counts}
by_threads = in_rounds(
    {name: (lambda: bench.measure(torch.matmul, cpu_a, cpu_a, min_time=0.05)) for name in names},
    before=lambda name: torch.set_num_threads(names[name]),
)
torch.set_num_threads(threads_before)
report_rounds(
    text("CPU, n = {n}, {c} core(s):", "CPU, n = {n}, {c} Kern(e):", n=size, c=hw.cpu.cores),
    by_threads,
)
plot_rounds(by_input, by_threads)

# %% [markdown] lang="en"
# With more than one core, more threads are usually faster, unless something else is using the
# cores at the same time (another notebook, a test run): then the extra threads wait for each
# other, and the result can even turn around. The verdict above is computed, not typed: on an idle
# machine it usually says "effect", on a busy one it may say "noise" or even show the reversal.
#
# ## 3. The right way
#
# `utils.timing.bench.measure(fn, *args)` avoids all four traps: it times the cold call separately, warms
# up while finding a block of calls that lasts at least 20 ms (so the timer's own cost of about
# 40 ns disappears; should a stall have slowed the warm-up, a later block comes out shorter, and
# then it grows the block and starts the blocks again), synchronises every block for the backend the result lives on, repeats until
# it has at least 0.2 s of blocks, and reports the median, the interquartile range (IQR) and the
# thread settings. With the FLOPs it also gives FLOP/s and the share of the device's peak.
# Open `utils/timing/bench.py`: it is short, and reading it is part of this lesson.

# %% [markdown] lang="de"
# Bei mehr als einem Kern sind mehr Threads meist schneller, es sei denn, etwas anderes nutzt die
# Kerne gleichzeitig (ein anderes Notebook, ein Testlauf): Dann warten die zusätzlichen Threads
# aufeinander, und das Ergebnis kann sich sogar umdrehen. Das Urteil oben ist berechnet, nicht
# eingetippt: Auf einer freien Maschine lautet es meist „Effekt“, auf einer belasteten vielleicht
# „Rauschen“, oder es zeigt sogar die Umkehrung.
#
# ## 3. So misst du richtig
#
# `utils.timing.bench.measure(fn, *args)` vermeidet alle vier Fallen: Es misst den kalten Aufruf
# getrennt, wärmt auf, während es einen Block von Aufrufen sucht, der mindestens 20 ms dauert (so
# fallen die etwa 40 ns nicht mehr ins Gewicht, die der Timer selbst kostet; hat eine Verzögerung
# das Aufwärmen gebremst, fällt ein späterer Block kürzer aus, dann vergrößert es den Block und
# beginnt die Blöcke von vorn), synchronisiert jeden Block für das Backend, auf dem das Ergebnis
# liegt, wiederholt, bis es mindestens 0,2 s an Blöcken hat, und meldet Median, Interquartilsabstand
# (IQR) und Thread-Einstellungen. Mit den FLOPs liefert es auch FLOP/s und den Anteil an der
# Spitzenleistung des Geräts. Öffne `utils/timing/bench.py`: Es ist kurz, und es zu lesen gehört zu
# dieser Lektion.

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
# in float32, PyTorch on the CPU in bfloat16 where a probe at n = 256 finds it less than 4× as slow
# as float32 (that takes bf16 instructions in the CPU *and* kernels in torch that use them), and the
# accelerator in float32 and in its fast format (fp16 on a T4, bf16 on newer GPUs and TPUs).
# Half-precision float16 on a CPU is left out on purpose: without hardware for it, a CPU runs it
# dozens of times slower than float32.

# %% [markdown] lang="de"
# ## 4. Größen durchlaufen
#
# Eine Größe sagt wenig. Wir messen quadratische Matrixmultiplikationen von winzig bis groß: numpy
# und PyTorch auf der CPU in float32, PyTorch auf der CPU in bfloat16, wo eine Probe bei n = 256 es
# weniger als 4-mal so langsam wie float32 findet (dafür braucht es bf16-Befehle in der CPU *und*
# Kernel in torch, die sie nutzen), und den Beschleuniger in float32 und in seinem schnellen Format
# (fp16 auf einer T4, bf16 auf neueren GPUs und TPUs). float16 auf der CPU fehlt absichtlich: Ohne
# Hardware dafür rechnet eine CPU es um ein Vielfaches langsamer als float32.

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
# en: bf16 in the CPU's flags is not enough: torch's kernels must use it. A probe at n = 256 decides.
# de: bf16 in den Flags der CPU reicht nicht: Die Kernel von torch müssen es nutzen. Eine Probe
# de: bei n = 256 entscheidet.
probe = {dtype: time_torch(256, dtype, "cpu").median for dtype in ("float32", "bfloat16")}
bf16_cost = probe["bfloat16"] / probe["float32"]
bf16_flags = sorted({"avx512_bf16", "amx_bf16"} & hw.cpu.flags) or [text("none", "keine")]
say(
    "torch bfloat16 at n = 256 takes {r:.2f}× the time of float32 here (bf16 flags: {flags})",
    "torch bfloat16 braucht hier bei n = 256 das {r:.2f}-Fache der Zeit von float32 "
    "(bf16-Flags: {flags})",
    r=bf16_cost,
    flags=", ".join(bf16_flags),
)
if bf16_cost < 4:
    sweep["torch bfloat16 (CPU)"] = {n: time_torch(n, "bfloat16", "cpu") for n in cpu_sizes}
else:
    say(
        "  → left out of the sweep: torch has no fast bf16 path on this CPU, and the sweep would "
        "take minutes",
        "  → nicht im Durchlauf: torch hat auf dieser CPU keinen schnellen bf16-Weg, und der "
        "Durchlauf würde Minuten dauern",
    )
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
caches = hardware.cpu_caches()
# en: where a float32 matmul's working set (A, B and the result: 3·n²·4 bytes) outgrows a cache
# de: wo die Arbeitsmenge einer float32-Matmul (A, B und Ergebnis: 3·n²·4 Bytes) einem Cache entwächst
cache_edge = {
    level: (size / (3 * 4)) ** 0.5
    for level, size in caches.sizes().items()
    if size is not None and level != "L1d"
}
for level, edge in cache_edge.items():
    ax_rate.axvline(edge, color="gray", linestyle=":", linewidth=1)
    ax_rate.text(edge, ax_rate.get_ylim()[0], f" {level}", color="gray", fontsize=8, va="bottom")
ax_rate.set(xlabel="n", ylabel="FLOP/s", title=text("throughput", "Durchsatz"))
ax_rate.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown] lang="en"
# Read the right-hand plot from left to right. At small sizes the throughput is low: each call
# has a fixed cost (Python, dispatch, a kernel launch) that the little work cannot hide; time is
# almost flat in n, the **overhead-bound** regime. As n grows, the time grows like n³ and the
# FLOP/s level off near what the hardware can do: the **compute-bound** regime. The dotted lines
# mark where a matmul's working set outgrows this machine's L2 and L3 caches (the *Deeper* section
# at the end explains what happens there).

# %% [markdown] lang="de"
# Lies das rechte Diagramm von links nach rechts. Bei kleinen Größen ist der Durchsatz niedrig:
# Jeder Aufruf hat feste Kosten (Python, Dispatch, ein Kernel-Start), die die wenige Arbeit nicht
# verdecken kann; die Zeit ändert sich mit n kaum. Das ist der **overheadgebundene** Bereich. Wächst
# n, wächst die Zeit mit n³, und die FLOP/s pendeln sich nahe dem ein, was die Hardware schafft: der
# **rechengebundene** Bereich. Die gepunkteten Linien zeigen, wo die Arbeitsmenge einer Matmul
# den L2- und den L3-Cache dieser Maschine übersteigt (was dort passiert, erklärt der Abschnitt
# *Vertiefung* am Ende).


# %% [markdown] lang="en"
# ## 5. When does the accelerator win?
#
# An accelerator has a higher plateau but also a higher fixed cost, and the data has to get there:
# two n×n inputs in, one result back, over PCIe. We look for the smallest size from which the
# accelerator is faster at every larger size, once counting only the matmul and once with the
# copies.
#
# The cell below is folded: in lab 01 (exercise 4) you write this function yourself. Open it
# afterwards and compare.

# %% [markdown] lang="de"
# ## 5. Ab wann gewinnt der Beschleuniger?
#
# Ein Beschleuniger hat ein höheres Plateau, aber auch höhere feste Kosten, und die Daten müssen
# erst dorthin: zwei n×n-Eingaben hin, ein Ergebnis zurück, über PCIe. Wir suchen die kleinste
# Größe, ab der der Beschleuniger bei jeder weiteren Größe schneller ist: einmal nur für die
# Matrixmultiplikation gerechnet und einmal mit den Kopien.
#
# Die Zelle unten ist eingeklappt: In Lab 01 (Aufgabe 4) schreibst du diese Funktion selbst. Öffne
# sie danach und vergleiche.


# %% jupyter={"source_hidden": true} cellView="form"
# en: @title crossover(sizes, cpu_seconds, accelerator_seconds): folded, lab 01 asks for it
# de: @title crossover(sizes, cpu_seconds, accelerator_seconds): eingeklappt, Lab 01 fragt danach
def crossover(sizes, cpu_seconds, accelerator_seconds):
    found = None
    for size, cpu, acc in reversed(list(zip(sizes, cpu_seconds, accelerator_seconds, strict=True))):
        if acc >= cpu:
            break
        found = size
    return found


# %%
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
        "… und ab n = {n} mit den Kopien zum Gerät und zurück",
        n=crossover(cpu_sizes, cpu_times, copied),
    )
if not accelerated:
    say(
        "No accelerator here: the cell below models a T4 instead, from its data sheet.",
        "Hier gibt es keinen Beschleuniger: Die Zelle unten modelliert eine T4 nach Datenblatt.",
    )

# %% [markdown] lang="en"
# Without an accelerator we can still reason about one with a **model** (not a measurement):
# a call costs a fixed launch overhead plus FLOPs divided by the rate the GPU sustains; each of
# the three copies (two inputs in, the result back) costs a fixed **latency** plus bytes divided by
# the PCIe bandwidth. The latency is what makes small copies expensive: a few kilobytes cross the
# link in well under a microsecond, but every copy first goes through the driver and waits for the
# copy engine. The assumptions are printed with the result; run this notebook on a T4 to replace
# them by measurements. The sizes are finer here than in the sweep, so that the two crossovers can
# land on different sizes.

# %% [markdown] lang="de"
# Ohne Beschleuniger können wir trotzdem über einen nachdenken, mit einem **Modell** (keiner
# Messung): Ein Aufruf kostet einen festen Start-Overhead plus FLOPs geteilt durch die Rate, die die
# GPU dauerhaft schafft; jede der drei Kopien (zwei Eingaben hin, das Ergebnis zurück) kostet eine
# feste **Latenz** plus Bytes geteilt durch die PCIe-Bandbreite. Die Latenz macht kleine Kopien
# teuer: Ein paar Kilobyte sind in weit unter einer Mikrosekunde über die Verbindung, aber jede
# Kopie geht erst durch den Treiber und wartet auf die Kopier-Einheit. Die Annahmen stehen beim
# Ergebnis; führe dieses Notebook auf einer T4 aus, um sie durch Messungen zu ersetzen. Die Größen
# sind hier feiner gestuft als im Durchlauf, damit die beiden Übergangsgrößen (mit und ohne Kopien)
# auseinanderfallen können.

# %%
T4 = CHIPS["T4"]
model = {
    # en: a kernel launch plus PyTorch's dispatch: about 10 µs
    # de: ein Kernel-Start plus das Dispatching von PyTorch: etwa 10 µs
    "launch_seconds": 10e-6,
    # en: a large fp32 matmul reaches roughly this share of the peak
    # de: eine große fp32-Matmul erreicht ungefähr diesen Anteil an der Spitzenleistung
    "fp32_share_of_peak": 0.6,
    # en: PCIe 3.0 x16 with pinned memory, in practice (chips.PCIE_PINNED_TYPICAL)
    # de: PCIe 3.0 x16 mit gepinntem Speicher, in der Praxis (chips.PCIE_PINNED_TYPICAL)
    "pcie_bytes_per_second": 12e9,
    # en: An assumption, not a data-sheet figure: about 10 µs per cudaMemcpy (driver call, copy
    # en: engine start, completion). NVIDIA's "How to Optimize Data Transfers in CUDA C/C++"
    # en: (Mark Harris, 2012) explains this fixed cost per transfer; lesson 02 measures copies.
    # de: Eine Annahme, kein Datenblattwert: etwa 10 µs pro cudaMemcpy (Treiberaufruf, Start der
    # de: Kopier-Einheit, Abschluss). NVIDIAs „How to Optimize Data Transfers in CUDA C/C++“
    # de: (Mark Harris, 2012) erklärt diese festen Kosten pro Kopie; Lektion 02 misst Kopien.
    "copy_latency_seconds": 10e-6,
}


def t4_model_seconds(n, with_copies=False):
    compute = matmul_flops(n, n, n) / (T4.for_dtype("float32") * 1e12 * model["fp32_share_of_peak"])
    copies = 0.0
    if with_copies:
        copies = 3 * (model["copy_latency_seconds"] + n * n * 4 / model["pcie_bytes_per_second"])
    return model["launch_seconds"] + compute + copies


fine_sizes = [8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512]
fine_cpu = []
for n_fine in fine_sizes:
    a_fine = torch.randn(n_fine, n_fine)
    fine_cpu.append(bench.measure(torch.matmul, a_fine, a_fine, min_time=0.03).median)
t4_only = [t4_model_seconds(n) for n in fine_sizes]
t4_copies = [t4_model_seconds(n, True) for n in fine_sizes]
modelled = crossover(fine_sizes, fine_cpu, t4_only)
modelled_copies = crossover(fine_sizes, fine_cpu, t4_copies)
say(
    "Model of a T4 from NVIDIA's T4 data sheet, assuming a launch overhead of {launch:.0f} µs, "
    "{share:.0f}% of the fp32 peak, {pcie:.0f} GB/s over PCIe and {lat:.0f} µs per copy:",
    "Modell einer T4 laut NVIDIA-Datenblatt zur T4, mit {launch:.0f} µs Start-Overhead, "
    "{share:.0f} % der fp32-Spitzenleistung, {pcie:.0f} GB/s über PCIe und {lat:.0f} µs pro "
    "Kopie:",
    launch=model["launch_seconds"] * 1e6,
    share=model["fp32_share_of_peak"] * 100,
    pcie=model["pcie_bytes_per_second"] / 1e9,
    lat=model["copy_latency_seconds"] * 1e6,
)
say(
    "  against this CPU (torch, {threads} thread(s)) it would win from n = {n} (matmul only), "
    "from n = {n_copies} with copies",
    "  gegen diese CPU (torch, {threads} Thread(s)) gewänne sie ab n = {n} (nur die Matmul), "
    "ab n = {n_copies} mit Kopien",
    threads=torch.get_num_threads(),
    n=modelled,
    n_copies=modelled_copies,
)
index_64 = fine_sizes.index(64)
say(
    "  at n = 64 the copies add {c:.0f} µs to a {m:.0f} µs matmul: {f:,.0f}× the work itself",
    "  bei n = 64 kommen zu einer Matmul von {m:.0f} µs Kopien von {c:.0f} µs: das {f:,.0f}-Fache "
    "der Arbeit selbst",
    c=(t4_copies[index_64] - t4_only[index_64]) * 1e6,
    m=t4_only[index_64] * 1e6,
    f=(t4_copies[index_64] - t4_only[index_64]) / t4_only[index_64],
)

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.loglog(fine_sizes, fine_cpu, "o-", label=text("CPU, measured", "CPU, gemessen"))
ax.loglog(fine_sizes, t4_only, "s--", label=text("T4 model, matmul only", "T4-Modell, nur Matmul"))
ax.loglog(
    fine_sizes, t4_copies, "^--", label=text("T4 model, with copies", "T4-Modell, mit Kopien")
)
for found, color in ((modelled, "tab:orange"), (modelled_copies, "tab:green")):
    if found is not None:
        ax.axvline(found, color=color, linestyle=":")
ax.set(
    xlabel="n",
    ylabel=text("seconds per matmul", "Sekunden pro Matmul"),
    title=text("Where the accelerator starts to win", "Ab wann der Beschleuniger gewinnt"),
)
ax.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown] lang="en"
# ## 6. "10 to 1000 times faster"?
#
# The speed-up is a ratio, and both halves matter. Here are three honest ratios from this run.

# %% [markdown] lang="de"
# ## 6. „10- bis 1000-mal schneller“?
#
# Der Beschleunigungsfaktor ist ein Verhältnis: Es kommt auf Zähler *und* Nenner an, also darauf,
# womit du vergleichst. Hier drei faire Vergleiche aus diesem Lauf.

# %% [markdown] lang="en"
# **Predict first.** Comparison (a) multiplies two 48×48 matrices twice: with the textbook triple
# loop of section 1 in pure Python, and with numpy, on the same CPU. How many times faster is
# numpy? Write your number, then run the next cell.

# %% [markdown] lang="de"
# **Erst schätzen.** Vergleich (a) multipliziert zwei 48×48-Matrizen zweimal: mit der
# Dreifachschleife aus Abschnitt 1 in reinem Python und mit numpy, auf derselben CPU. Wie viel
# schneller ist numpy? Schreib deine Zahl hin, dann führe die nächste Zelle aus.

# %%
my_numpy_speedup = None  # en: your guess, e.g. 10 | de: deine Schätzung, z. B. 10

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
reveal(my_numpy_speedup, python_loop.median / numpy_tiny.median, unit="×")

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
# en: claim C1 (docs/claims.md): "often 10 to 1000 times faster"; the verdict from (b) and (c)
# de: Behauptung C1 (docs/claims.md): „oft 10- bis 1000-mal schneller“; das Urteil aus (b) und (c)
in_range = [n for n, f in speedups.items() if 10 <= f <= 1000]
if len(in_range) == len(speedups):
    say(
        "C1: holds at both sizes in this run",
        "C1: stimmt in diesem Lauf bei beiden Größen",
    )
elif in_range:
    say(
        "C1: holds at n = {n} only; at the other size the factor is {f:,.2f}",
        "C1: stimmt nur bei n = {n}; bei der anderen Größe ist der Faktor {f:,.2f}",
        n=in_range[0],
        f=min(f for n, f in speedups.items() if n not in in_range),
    )
else:
    say(
        "C1: does not hold at either size in this run (factors {lo:,.2f} and {hi:,.1f})",
        "C1: stimmt in diesem Lauf bei keiner der beiden Größen (Faktoren {lo:,.2f} und {hi:,.1f})",
        lo=min(speedups.values()),
        hi=max(speedups.values()),
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
# BLAS. Was **1000** ergibt: halbe Genauigkeit auf Tensor Cores gegen einen einzelnen CPU-Thread,
# oder, wie in (a), jede Bibliothek gegen eine Python-Schleife: Ein guter Teil berühmter
# Beschleunigungen geht auf das Konto der Vergleichsbasis. Was **unter 1** ergibt: kleine Größen,
# bei denen Start-Overhead und Kopien mehr kosten als die Arbeit. Die Aussage stimmt für große
# Modelle auf modernen GPUs, und sie hängt von Größe, Datentyp und davon ab, was du mitzählst.
#
# ## 7. Wie nah an der Spitzenleistung?
#
# Das Datenblatt nennt die Spitzenleistung, die Messung zeigt, was du bekommst. Für diese CPU wird
# sie aus Kerne × Takt × FLOPs pro Takt geschätzt (und als Schätzung gekennzeichnet). Sie zählt alle
# Kerne: Mit weniger Threads als Kernen erreichst du höchstens diesen Anteil davon.

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
# ## 8. A roofline
#
# A matmul of n×n matrices does 2n³ FLOPs on 3n² numbers: the larger n, the more work per byte
# moved. An elementwise addition does one FLOP per element and moves three numbers (two in, one
# out): 1 FLOP per 12 bytes in float32, whatever the size. This ratio, FLOPs per byte, is the
# **arithmetic intensity**. A device can do at most `peak` FLOP/s, and at most `bandwidth ×
# intensity` FLOP/s if every byte must come from memory; the lower of the two is its **roofline**.
# Above the *ridge point* (peak ÷ bandwidth) an operation is compute-bound, below it memory-bound.
#
# Neither half of the roof may come from the points we put under it, or every point sits on the
# roof by construction. So the **peak** comes from the hardware: the data-sheet table in
# `utils/platform/chips.py` on a GPU, on a CPU the estimate `utils.platform.chips.cpu_estimate` (cores × clock ×
# FLOPs per cycle, all cores). The **bandwidth** comes from a separate streaming measurement: a
# large copy and a sum, which do next to no arithmetic. Under this roof go kernels of different intensity:
# an addition, chains of multiply-adds on the same data (XLA fuses each chain into one pass over
# memory), a matrix-vector product, matmuls of several sizes and one in a 16-bit format.

# %% [markdown] lang="de"
# ## 8. Eine Roofline
#
# Eine Matrixmultiplikation von n×n-Matrizen rechnet 2n³ FLOPs auf 3n² Zahlen: Je größer n, desto
# mehr Arbeit pro bewegtem Byte. Eine elementweise Addition rechnet einen FLOP pro Element und
# bewegt drei Zahlen (zwei lesen, eine schreiben): 1 FLOP pro 12 Byte in float32, egal wie groß.
# Dieses Verhältnis, FLOPs pro Byte, heißt **arithmetische Intensität**. Ein Gerät schafft höchstens
# `Spitze` FLOP/s, und höchstens `Bandbreite × Intensität` FLOP/s, wenn jedes Byte aus dem Speicher
# kommen muss; das Kleinere von beiden ist seine **Roofline**. Oberhalb des *Knickpunkts* (Spitze ÷
# Bandbreite) ist eine Operation rechengebunden, darunter speichergebunden.
#
# Keiner der beiden Teile des Dachs darf aus den Punkten stammen, die wir darunter eintragen, sonst
# liegt jeder Punkt schon nach Konstruktion auf dem Dach. Die **Spitzenleistung** kommt deshalb von
# der Hardware: auf einer GPU aus der Datenblatt-Tabelle in `utils/platform/chips.py`, auf einer CPU
# aus der Schätzung `utils.platform.chips.cpu_estimate` (Kerne × Takt × FLOPs pro Takt, alle Kerne).
# Die **Bandbreite** kommt aus einer eigenen Streaming-Messung: einer großen Kopie, die gar nicht
# rechnet, und einer Summe, die kaum rechnet. Unter dieses Dach kommen Kernel verschiedener
# Intensität: eine Addition, Ketten von Multiplikationen und Additionen auf denselben Daten (XLA
# verschmilzt jede Kette zu einem Durchgang durch den Speicher), ein Matrix-Vektor-Produkt,
# Matrixmultiplikationen mehrerer Größen und eine in einem 16-Bit-Format.

# %% [markdown] lang="en"
# **Predict first.** Section 7 printed this device's float32 peak. Main memory delivers a few tens
# of GB/s to a CPU and hundreds of GB/s to a GPU. Where is the ridge point, in FLOPs per byte: how
# many FLOPs must an operation do per byte it moves before the memory stops being the limit?

# %% [markdown] lang="de"
# **Erst schätzen.** Abschnitt 7 hat die float32-Spitzenleistung dieses Geräts ausgegeben. Der
# Arbeitsspeicher liefert einer CPU einige zehn GB/s, einer GPU Hunderte GB/s. Wo liegt der
# Knickpunkt, in FLOPs pro Byte: Wie viele FLOPs muss eine Operation pro bewegtem Byte rechnen,
# bevor nicht mehr der Speicher die Grenze ist?

# %%
my_ridge_point = None  # en: your guess in FLOPs per byte | de: deine Schätzung in FLOPs pro Byte

# %%
threads_used = torch.get_num_threads()
mm_label = "torch float32 (CPU)" if accelerator is None else f"torch float32 ({accelerator.type})"
if device.type == "cuda":
    roof_chip = chip_for(torch.cuda.get_device_name(device))
elif device.type == "cpu":
    roof_chip = cpu_estimate(hw.cpu.cores)
else:
    roof_chip = None
half = fast_dtype if device.type == "cuda" else "bfloat16"
if roof_chip is not None:
    peak_flops = roof_chip.tflops["float32"] * 1e12
    peak_half = roof_chip.tflops.get(half, 0.0) * 1e12 or None
    roof_source = roof_chip.source
else:
    peak_flops, peak_half = None, None
    roof_source = text("no table row for this device", "keine Tabellenzeile für dieses Gerät")

# en: the roof's bandwidth: a large copy, read once and written once, no arithmetic
# de: die Bandbreite des Dachs: eine große Kopie, einmal gelesen und einmal geschrieben, ohne Rechnen
elements = profile.pick(cpu=16_000_000, cuda=128_000_000, mps=64_000_000)
stream_src = torch.randn(elements, device=device)
stream_dst = torch.empty_like(stream_src)
stream = bench.measure(stream_dst.copy_, stream_src, min_time=0.1, name="copy")
read = bench.measure(torch.sum, stream_src, min_time=0.1, name="sum")
# en: the faster of the two streams: a copy reads and writes, a sum only reads
# de: der schnellere der beiden Datenströme: Eine Kopie liest und schreibt, eine Summe liest nur
bandwidth = max(2 * 4 * elements / stream.median, 4 * elements / read.median)
if peak_flops is None:
    # en: no data sheet: the best matmul stands in for the peak, and the plot says so
    # de: kein Datenblatt: die beste Matmul steht für die Spitze, und das Diagramm sagt es
    peak_flops = max(m.flops_per_second for m in sweep[mm_label].values())
ridge = peak_flops / bandwidth

# en: each point: (name, FLOPs per byte, measurement, dtype)
# de: jeder Punkt: (Name, FLOPs pro Byte, Messung, Datentyp)
points = []


def add_point(name, flops, nbytes, fn, *args, dtype="float32", **kwargs):
    m = bench.measure(fn, *args, flops=flops, dtype=dtype, min_time=0.05, name=name, **kwargs)
    points.append((name, flops / nbytes, m, dtype))


n_add = elements // 4
u, v, w = (torch.randn(n_add, device=device) for _ in range(3))
add_point(text("addition", "Addition"), n_add, 12 * n_add, torch.add, u, v, out=w)
add_intensity = points[-1][1]

chain_x = jnp.asarray(rng.standard_normal(n_add, dtype=np.float32))
chain_costs = {}
if jax.default_backend() == {"cuda": "gpu"}.get(device.type, device.type):
    for k in (8, 64):

        def chain(x, k=k):
            for _ in range(k):
                x = x * 0.999 + 0.001
            return x

        chain_jit = jax.jit(chain)
        # en: XLA's own count of FLOPs and bytes for the fused chain (cost_analysis)
        # de: XLAs eigene Zählung von FLOPs und Bytes der verschmolzenen Kette (cost_analysis)
        cost = chain_jit.lower(chain_x).compile().cost_analysis()
        cost = cost[0] if isinstance(cost, list) else cost
        chain_costs[k] = cost
        add_point(
            text("{k} multiply-adds", "{k} Mult.-Add.", k=k),
            2 * k * n_add,
            8 * n_add,
            chain_jit,
            chain_x,
        )
else:
    say(
        "JAX computes on {jax_backend} here, torch on {device}: "
        "the multiply-add chains are left out",
        "JAX rechnet hier auf {jax_backend}, torch auf {device}: Die Ketten fallen weg",
        jax_backend=jax.default_backend(),
        device=device.type,
    )

n_mv = profile.pick(cpu=4096, cuda=16384, mps=8192)
mv_a, mv_x = torch.randn(n_mv, n_mv, device=device), torch.randn(n_mv, device=device)
add_point(
    text("matrix × vector", "Matrix × Vektor"),
    2 * n_mv**2,
    4 * (n_mv**2 + 2 * n_mv),
    torch.mv,
    mv_a,
    mv_x,
)
for n_mm, m in sweep[mm_label].items():
    points.append((f"matmul {n_mm}", 2 * n_mm**3 / (12 * n_mm**2), m, "float32"))
n_half = profile.pick(cpu=512, cuda=4096, mps=2048)
half_a = torch.randn(n_half, n_half, device=device, dtype=DTYPES[half])
add_point(
    f"matmul {n_half} {half}",
    2 * n_half**3,
    6 * n_half**2,
    torch.matmul,
    half_a,
    half_a,
    dtype=half,
)

diagrams.roofline(
    [(peak_flops, text("roof, float32", "Dach, float32"))]
    + ([(peak_half, text("roof, {d}", "Dach, {d}", d=half))] if peak_half else []),
    bandwidth,
    [(name, i, m.flops_per_second, dtype == "float32") for name, i, m, dtype in points],
    text(
        "Roofline ({device}): peak from the hardware, bandwidth from a copy",
        "Roofline ({device}): Spitze von der Hardware, Bandbreite aus einer Kopie",
        device=device.type,
    ),
)
plt.show()

say(
    "peak {peak} float32 ({source}); bandwidth {bw:,.1f} GB/s (measured: the faster of a copy "
    "and a sum of {size}, {threads} thread(s)); ridge point {ridge:,.1f} FLOPs per byte",
    "Spitze {peak} float32 ({source}); Bandbreite {bw:,.1f} GB/s (gemessen: das Schnellere aus "
    "Kopie und Summe von {size}, {threads} Thread(s)); Knickpunkt {ridge:,.1f} FLOPs pro Byte",
    peak=units.format_rate(peak_flops),
    source=roof_source,
    bw=bandwidth / 1e9,
    size=units.format_bytes(4 * elements),
    threads=threads_used,
    ridge=ridge,
)
shares = {}
for name, intensity, m, dtype in points:
    dtype_peak = peak_half if dtype != "float32" else peak_flops
    roof_here = min(dtype_peak or peak_flops, bandwidth * intensity)
    shares[name] = m.flops_per_second / roof_here
    say(
        "  {name:<20} {i:8.2f} FLOP/B  {rate:>14}  = {p:5.0f}% of the roof here",
        "  {name:<20} {i:8.2f} FLOP/B  {rate:>14}  = {p:5.0f} % des Dachs an dieser Stelle",
        name=name,
        i=intensity,
        rate=units.format_rate(m.flops_per_second),
        p=100 * shares[name],
    )
reveal(my_ridge_point, ridge, unit=text("FLOPs per byte", "FLOPs pro Byte"))


# %% [markdown] lang="en"
# This is why claim C2 (models are mostly matrix multiplications, so accelerators help) holds
# where it does: only operations with high arithmetic intensity can use the FLOP/s an accelerator
# offers. Lesson 03 (Precision and memory) comes back to this with the speed of each number
# format, lesson 05 (Training on an accelerator) with the share of the peak a whole training step
# uses (MFU).
#
# ## 9. A first profiler
#
# `bench.measure` gives one number per function. A **profiler** records every operation a piece of
# code runs, with its time and how often it ran. `torch.profiler` is built into PyTorch: wrap the
# code in `with profile(...)`, mark your own regions with `record_function`, and print the table.

# %% [markdown] lang="de"
# Deshalb gilt Behauptung C2 (Modelle sind vor allem Matrixmultiplikationen, also helfen
# Beschleuniger) genau dort, wo sie gilt: Nur Operationen mit hoher arithmetischer Intensität
# können die FLOP/s eines Beschleunigers nutzen. Lektion 03 (Zahlenformate und Speicher) kommt mit
# dem Tempo jedes Zahlenformats darauf zurück, Lektion 05 (Training auf dem Beschleuniger) mit dem
# Anteil an der Spitzenleistung, den ein ganzer Trainingsschritt nutzt (MFU).
#
# ## 9. Ein erster Profiler
#
# `bench.measure` liefert eine Zahl pro Funktion. Ein **Profiler** zeichnet jede Operation auf, die
# ein Stück Code ausführt, mit ihrer Zeit und wie oft sie lief. `torch.profiler` ist in PyTorch
# eingebaut: Pack den Code in `with profile(...)`, markiere eigene Abschnitte mit `record_function`
# und gib die Tabelle aus.

# %%
from torch.profiler import ProfilerActivity, record_function
from torch.profiler import profile as profile_run

activities = [ProfilerActivity.CPU]
if device.type == "cuda":
    activities.append(ProfilerActivity.CUDA)
prof_a = torch.randn(size, size, device=device)
prof_a @ prof_a  # en: warm: the first call is not what we want to read | de: aufwärmen
with profile_run(activities=activities) as prof, record_function("five_matmuls"):
    for _ in range(5):
        prof_out = prof_a @ prof_a
    if device.type == "cuda":
        torch.cuda.synchronize()
profile_table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=6)
if get_language() == "de":
    # en: torch prints 1.78%; the German notebook writes 1,78 %
    # de: torch schreibt 1.78%; das deutsche Notebook schreibt 1,78 %
    profile_table = re.sub(r"(\d)\.(\d)", r"\1,\2", profile_table).replace("%", " %")
print(profile_table)

events = {e.key: e for e in prof.key_averages()}
region, mm = events["five_matmuls"], events["aten::mm"]
say(
    "five_matmuls: {total} in all; aten::matmul ran {calls} times and handed the work to "
    "aten::mm, which spent {self_share:.0f}% of the region in itself ({per_call} per call)",
    "five_matmuls: {total} insgesamt; aten::matmul lief {calls}-mal und gab die Arbeit an "
    "aten::mm weiter, das {self_share:.0f} % des Abschnitts selbst verbrachte ({per_call} pro "
    "Aufruf)",
    total=units.format_seconds(region.cpu_time_total * 1e-6),
    calls=events["aten::matmul"].count,
    self_share=100 * mm.self_cpu_time_total / region.cpu_time_total,
    per_call=units.format_seconds(mm.cpu_time_total * 1e-6 / mm.count),
)
if device.type == "cuda":
    device_us = getattr(mm, "device_time_total", 0) or getattr(mm, "cuda_time_total", 0)
    say(
        "on the GPU: aten::mm's kernels took {t} per call; its CPU time is mostly the launch",
        "auf der GPU: Die Kernel von aten::mm brauchten {t} pro Aufruf; seine CPU-Zeit ist "
        "vor allem der Start",
        t=units.format_seconds(device_us * 1e-6 / mm.count),
    )

# %% [markdown] lang="en"
# How to read the table: **Self CPU** is the time spent in an operation itself, **CPU total**
# includes what it called. `aten::matmul` is PyTorch's front door: it checks shapes and calls
# `aten::mm`, the operation that does the work, so nearly all self time sits in `aten::mm`. Your
# own region (`five_matmuls`) holds everything. On a GPU the table gets device-time columns as
# well: there `aten::mm`'s CPU time is only the launch, and the kernel's time appears separately,
# the asynchronous execution of trap 1 made visible. A trace view and NVIDIA's Nsight Systems
# show more: see the *Deeper* section.
#
# ## 10. Explore
#
# Pick a size, a dtype and a device and click *Measure*. (On a static page or in a test run you
# see only the result for the defaults.)

# %% [markdown] lang="de"
# So liest du die Tabelle: **Self CPU** ist die Zeit in der Operation selbst, **CPU total** enthält,
# was sie aufgerufen hat. `aten::matmul` ist die Einstiegsfunktion von PyTorch: Sie prüft die Formen
# und ruft `aten::mm` auf, die Operation, die die Arbeit macht; deshalb liegt fast die ganze
# Self-Zeit bei `aten::mm`. Dein eigener Abschnitt (`five_matmuls`) enthält alles. Auf einer GPU
# bekommt die Tabelle zusätzlich Spalten mit der Gerätezeit: Dort ist die CPU-Zeit von `aten::mm`
# nur der Start, und die Zeit des Kernels erscheint getrennt, die asynchrone Ausführung aus Falle 1,
# sichtbar gemacht. Eine Trace-Ansicht und NVIDIAs Nsight Systems zeigen mehr: siehe den
# Abschnitt *Vertiefung*.
#
# ## 10. Selbst ausprobieren
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
    dict(n=256, dtype="float32", device="cpu"),
    labels=dict(
        n=text("size n", "Größe n"),
        dtype=text("data type", "Datentyp"),
        device=text("on device", "Gerät"),
    ),
    n=[64, 256, 1024, 2048, 4096, 8192],
    dtype=list(DTYPES),
    device=devices,
)

# %% [markdown] lang="en"
# ### What you should see
#
# | profile | float32 | fast dtype | notes |
# |---|---|---|---|
# | CPU, one thread (`OMP_NUM_THREADS=1`) | numpy and torch ≈ 0.02–0.1 TFLOP/s at n = 1024; which one is ahead depends on their BLAS and the load (section 4 prints both) | torch bf16 about 2–5× float32 with AVX512-BF16; without it, dozens of times slower than float32 (lesson 03) | a curve may fall where the working set leaves L2 or L3 (section 4, *Deeper*); with more threads up to the core count times more, on an idle machine |
# | Colab T4 | peak 8.1 TFLOP/s | fp16: peak 65, well below it in practice (70 W power limit): measured above | bf16 is emulated: slower than fp32 |
# | Kaggle T4 x2 | per GPU as above | as above | this lesson uses one GPU |
# | Colab TPU v5e-1 | runs as bf16 passes | bf16: peak 197 TFLOP/s | large, static shapes pay off (lesson 04) |
# | H200 | tf32 peak 495 | bf16 ≈ 770–800 of 989 TFLOP/s at n = 8192 (≈ 80 %) | |
#
# *Peaks: NVIDIA and Google Cloud data sheets (checked November 2026). Measured figures: the CPU
# row on a cloud VM with 2 vCPUs of an AMD EPYC (Zen 5), one thread, idle to busy, December 2026
# (the range is that wide because other processes share the cores); the T4 and
# H200 rows as reported for those chips in 2026. Your figures will differ; the shape of the curves
# will not.*
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
# intensity, roofline, ridge point, cache, BLAS.
#
# **Next:** lab 01, then lesson 02: where do tensors live, and what does moving them cost? The
# optional *Deeper* section below goes further into caches, the roofline's points and traces.

# %% [markdown] lang="de"
# ### Was du sehen solltest
#
# | Profil | float32 | schneller Datentyp | Hinweise |
# |---|---|---|---|
# | CPU, ein Thread (`OMP_NUM_THREADS=1`) | numpy und torch ≈ 0,02–0,1 TFLOP/s bei n = 1024; welche vorn liegt, hängt von ihrem BLAS und der Last ab (Abschnitt 4 gibt beide aus) | torch bf16 mit AVX512-BF16 etwa 2- bis 5-mal so schnell wie float32; ohne um ein Vielfaches langsamer als float32 (Lektion 03) | eine Kurve kann fallen, wo die Arbeitsmenge L2 oder L3 verlässt (Abschnitt 4, *Vertiefung*); mit mehr Threads bis zur Kernzahl mal mehr, auf einer freien Maschine |
# | Colab T4 | Spitze 8,1 TFLOP/s | fp16: Spitze 65, in der Praxis deutlich darunter (70-W-Grenze): oben gemessen | bf16 wird emuliert: langsamer als fp32 |
# | Kaggle T4 x2 | pro GPU wie oben | wie oben | diese Lektion nutzt eine GPU |
# | Colab TPU v5e-1 | läuft in bf16-Durchgängen | bf16: Spitze 197 TFLOP/s | große, feste Array-Formen zahlen sich aus (Lektion 04) |
# | H200 | tf32-Spitze 495 | bf16 ≈ 770–800 von 989 TFLOP/s bei n = 8192 (≈ 80 %) | |
#
# *Spitzenwerte: Datenblätter von NVIDIA und Google Cloud (Stand: November 2026). Gemessene Werte:
# die CPU-Zeile auf einer Cloud-VM mit 2 vCPUs eines AMD EPYC (Zen 5), ein Thread, von frei bis
# ausgelastet, Dezember 2026 (so breit, weil sich andere Prozesse die Kerne teilen); die T4- und
# H200-Zeilen wie 2026 für diese Chips berichtet. Deine Zahlen werden abweichen, die Form der Kurven
# nicht.*
#
# ## Prüf dich selbst
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
# arithmetische Intensität, Roofline, Knickpunkt, Cache, BLAS.
#
# **Weiter:** Lab 01, dann Lektion 02: Wo liegen Tensoren, und was kostet es, sie zu bewegen?
# Der freiwillige Abschnitt *Vertiefung* unten geht weiter: Caches, die Punkte der Roofline,
# Traces.

# %% [markdown] lang="en"
# ## Deeper (optional)
#
# Three topics for those who want more; the lesson is complete without them.
#
# ### Caches: why a CPU curve can fall again
#
# A CPU core keeps recently used data in small, fast **caches**: L1 and L2 belong to one core, L3
# is shared by several. A float32 matmul of size n touches three n×n matrices, 3·n²·4 bytes. Once
# that no longer fits a cache, the data has to come from the next, slower level, in the end from
# main memory (DRAM). The dotted lines in section 4's throughput plot mark the n at which this
# happens for the L2 and L3 sizes of *this* machine, read from the operating system. BLAS libraries cut the matmul into
# tiles that do fit, so a cliff is softened or hidden; how well depends on the library. numpy and
# PyTorch each bring their own BLAS, which is one reason why their curves differ. The next cell
# says which BLAS each used, and, for each CPU curve, where it fell the most and whether the working
# set left a cache at that step. It reports what it measured; it does not claim one library is the
# faster one.

# %% [markdown] lang="de"
# ## Vertiefung (optional)
#
# Drei Themen für alle, die mehr wollen; die Lektion ist auch ohne sie vollständig.
#
# ### Caches: warum eine CPU-Kurve wieder fallen kann
#
# Ein CPU-Kern hält Daten, die er gerade benutzt hat, in kleinen, schnellen **Caches**: L1 und L2
# gehören einem Kern, den L3 teilen sich mehrere. Eine float32-Matmul der Größe n fasst drei
# n×n-Matrizen an, also 3·n²·4 Bytes. Passt das nicht mehr in einen Cache, kommen die Daten aus der
# nächsten, langsameren Ebene, am Ende aus dem Arbeitsspeicher (DRAM). Die gepunkteten Linien im
# Durchsatz-Diagramm von Abschnitt 4 zeigen, bei welchem n das für die L2- und L3-Größen *deiner* Maschine passiert; die
# Größen liest der Code beim Betriebssystem aus. BLAS-Bibliotheken zerlegen die Matmul in Kacheln,
# die hineinpassen, und mildern so die Stufe ab oder verstecken sie ganz; wie gut, hängt von der
# Bibliothek ab. numpy und PyTorch bringen jeweils ihr eigenes BLAS mit, auch deshalb verlaufen ihre
# Kurven verschieden. Die nächste Zelle sagt dir, welches BLAS jede benutzt hat, und für jede
# CPU-Kurve, wo sie am stärksten gefallen ist und ob die Arbeitsmenge an dieser Stelle einen Cache
# verlassen hat. Sie berichtet, was sie gemessen hat; dass eine Bibliothek die schnellere sei,
# behauptet sie nicht.


# %%
def biggest_fall(sizes, rates):
    # en: the step between two neighbouring sizes where FLOP/s fell the most: (before, after, ratio)
    # de: der Schritt zwischen zwei benachbarten Größen, bei dem die FLOP/s am stärksten fielen
    return min(
        ((sizes[i], sizes[i + 1], rates[i + 1] / rates[i]) for i in range(len(sizes) - 1)),
        key=lambda step: step[2],
    )


# en: the function on a made-up curve: it must find the step 2 → 3, not the rise 1 → 2
# de: die Funktion an einer ausgedachten Kurve: Sie muss den Schritt 2 → 3 finden, nicht 1 → 2
assert biggest_fall([1, 2, 3], [1.0, 2.0, 1.0]) == (2, 3, 0.5)

FALL = 0.8  # en: a fall to below 80 % counts | de: ein Abfall unter 80 % zählt
say(
    "caches of one core ({source}): L1d {l1}, L2 {l2}, L3 {l3}",
    "Caches eines Kerns ({source}): L1d {l1}, L2 {l2}, L3 {l3}",
    source=caches.source,
    **{
        key: units.format_bytes(size) if size else text("unknown", "unbekannt")
        for key, size in zip(("l1", "l2", "l3"), caches.sizes().values(), strict=True)
    },
)
for level, edge in cache_edge.items():
    say(
        "  a float32 matmul's working set (3·n²·4 bytes) outgrows {level} from n ≈ {n:,.0f}",
        "  die Arbeitsmenge einer float32-Matmul (3·n²·4 Bytes) ist ab n ≈ {n:,.0f} größer als "
        "{level}",
        level=level,
        n=edge,
    )
say(
    "  the sweep's largest float32 matmul (n = {n}) needs {ws}: {level}",
    "  die größte float32-Matmul des Durchlaufs (n = {n}) braucht {ws}: {level}",
    n=max(cpu_sizes),
    ws=units.format_bytes(3 * max(cpu_sizes) ** 2 * 4),
    level=hardware.cache_level_name(caches.level_for(3 * max(cpu_sizes) ** 2 * 4)),
)
blas = hardware.blas_info()
say(
    "numpy ran {blas} (threadpoolctl), {threads} thread(s)",
    "numpy lief mit {blas} (threadpoolctl), {threads} Thread(s)",
    blas=", ".join(f"{b['internal_api']} {b['version']} ({b['architecture']})" for b in blas)
    or text("a BLAS threadpoolctl does not see", "einem BLAS, das threadpoolctl nicht sieht"),
    threads=blas[0]["num_threads"] if blas else "?",
)
torch_blas = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
say(
    "torch ran its own build: BLAS {blas} (torch.__config__), CPU kernels for {cap}, {threads} "
    "thread(s)",
    "torch lief mit seinem eigenen Build: BLAS {blas} (torch.__config__), CPU-Kernel für {cap}, "
    "{threads} Thread(s)",
    blas=torch_blas.group(1) if torch_blas else text("unknown", "unbekannt"),
    cap=torch.backends.cpu.get_cpu_capability(),
    threads=torch.get_num_threads(),
)
for label, results in sweep.items():
    if "(CPU)" not in label:
        continue
    ns = sorted(results)
    before, after, ratio = biggest_fall(ns, [results[n].flops_per_second for n in ns])
    bytes_per_number = 2 if "bfloat16" in label else 4
    level_before = caches.level_for(3 * before**2 * bytes_per_number)
    level_after = caches.level_for(3 * after**2 * bytes_per_number)
    if ratio >= FALL:
        say(
            "{label}: no fall below {f:.0f}% from one size to the next",
            "{label}: von einer Größe zur nächsten kein Abfall unter {f:.0f} %",
            label=label,
            f=FALL * 100,
        )
        continue
    say(
        "{label}: FLOP/s fell to {p:.0f}% from n = {a} to n = {b}; the working set grew from {wa} "
        "({la}) to {wb} ({lb})",
        "{label}: Die FLOP/s fielen von n = {a} zu n = {b} auf {p:.0f} %; die Arbeitsmenge wuchs "
        "von {wa} ({la}) auf {wb} ({lb})",
        label=label,
        p=ratio * 100,
        a=before,
        b=after,
        wa=units.format_bytes(3 * before**2 * bytes_per_number),
        wb=units.format_bytes(3 * after**2 * bytes_per_number),
        la=hardware.cache_level_name(level_before),
        lb=hardware.cache_level_name(level_after),
    )
    if hardware.UNKNOWN in (level_before, level_after):
        say(
            "  → the cache sizes are unknown here, so this run cannot tell whether it is a cache",
            "  → die Cache-Größen sind hier unbekannt; ob es ein Cache ist, kann dieser Lauf "
            "nicht sagen",
        )
    elif level_before != level_after:
        say(
            "  → the working set left {la} at this step: a cache cliff fits this fall",
            "  → die Arbeitsmenge hat an dieser Stelle {la} verlassen: Eine Cache-Stufe passt zu "
            "diesem Abfall",
            la=hardware.cache_level_name(level_before),
        )
    else:
        say(
            "  → the working set stayed in {la}: not a cache boundary. A different kernel or "
            "blocking in the library, or another process on the core, fits better (time it again).",
            "  → die Arbeitsmenge blieb in {la}: keine Cache-Grenze. Ein anderer Kernel oder eine "
            "andere Kachelung in der Bibliothek oder ein anderer Prozess auf dem Kern passt "
            "besser (miss noch einmal).",
            la=hardware.cache_level_name(level_before),
        )
n_both = max(cpu_sizes)
numpy_rate = sweep["numpy float32 (CPU)"][n_both].flops_per_second
torch_rate = sweep["torch float32 (CPU)"][n_both].flops_per_second
say(
    "at n = {n}: numpy {a}, torch {b} in float32; numpy ran {r:.2f}× torch's rate in this run. "
    "Two libraries with two BLAS: the ratio says which was faster here, on this CPU, now.",
    "bei n = {n}: numpy {a}, torch {b} in float32; numpy schaffte in diesem Lauf das {r:.2f}-Fache "
    "der Rate von torch. Zwei Bibliotheken mit zwei BLAS: Das Verhältnis sagt, welche hier, auf "
    "dieser CPU und jetzt schneller war.",
    n=n_both,
    a=units.format_rate(numpy_rate),
    b=units.format_rate(torch_rate),
    r=numpy_rate / torch_rate,
)


# %% [markdown] lang="en"
# ### Why each point of the roofline sits where it does
#
# Why a point sits where it does, decided in code from the numbers of section 8 (a point is "on the roof"
# from 70% of it):

# %% [markdown] lang="de"
# ### Warum jeder Punkt der Roofline dort liegt, wo er liegt
#
# Warum ein Punkt dort liegt, wo er liegt, im Code aus den Zahlen von Abschnitt 8 entschieden (ein Punkt gilt
# ab 70 % als „am Dach“):


# %%
def why(name, intensity, m, dtype):
    share = shares[name]
    memory_bound = intensity < ridge
    if share > 1.05:
        if memory_bound:
            return text(
                "above the roof: it streamed its {size} faster than the copy and the sum did; the "
                "measured bandwidth is one measurement, not the hardware's limit",
                "über dem Dach: Die Operation hat ihre {size} schneller gelesen als Kopie und "
                "Summe; die gemessene Bandbreite ist eine Messung, nicht die Grenze der Hardware",
                size=units.format_bytes(m.flops / intensity),
            )
        return text(
            "above the roof: the peak is an estimate, and the clock it uses is too low here",
            "über dem Dach: Die Spitze ist eine Schätzung, und ihr Takt ist hier zu niedrig",
        )
    if share >= 0.7:
        bound = (
            text("memory-bound", "speichergebunden")
            if memory_bound
            else text("compute-bound", "rechengebunden")
        )
        return text("on the roof: {bound}", "am Dach: {bound}", bound=bound)
    if m.median < 100e-6:
        return text(
            "below: a call takes only {t}; the fixed cost per call (Python, dispatch) weighs",
            "darunter: Ein Aufruf dauert nur {t}; die festen Kosten pro Aufruf (Python, Dispatch) "
            "fallen ins Gewicht",
            t=units.format_seconds(m.median),
        )
    if dtype != "float32" and peak_half is None:
        return text(
            "below: no {d} units here; the roof shown is float32's, and every value is converted",
            "darunter: keine {d}-Einheiten; das Dach ist das von float32, und jeder Wert wird "
            "umgerechnet",
            d=dtype,
        )
    if not memory_bound and device.type == "cpu" and threads_used < hw.cpu.cores:
        return text(
            "below: torch uses {t} of {c} cores, so at most {p:.0f}% of the peak is in reach; "
            "of that it gets {q:.0f}%",
            "darunter: torch nutzt {t} von {c} Kernen, also sind höchstens {p:.0f} % der Spitze "
            "erreichbar; davon schafft torch {q:.0f} %",
            t=threads_used,
            c=hw.cpu.cores,
            p=100 * threads_used / hw.cpu.cores,
            q=100 * share * hw.cpu.cores / threads_used,
        )
    if memory_bound:
        return text(
            "below: it reads its data in a pattern the copy does not (more streams, a reduction)",
            "darunter: Die Operation liest ihre Daten anders als die Kopie (mehr Datenströme, "
            "eine Reduktion)",
        )
    return text(
        "below: the kernel does not reach the peak at this size (tiles, caches, the BLAS kernel)",
        "darunter: Der Kernel erreicht die Spitze bei dieser Größe nicht (Kacheln, Caches, der "
        "BLAS-Kernel)",
    )


for point in points:
    say("  {name:<20} {why}", "  {name:<20} {why}", name=point[0], why=why(*point))
for k, cost in chain_costs.items():
    if cost and "flops" in cost:
        say(
            "XLA's cost_analysis() for {k} multiply-adds: {f:,.0f} FLOPs and {b} accessed: "
            "{i:.1f} FLOPs per byte, as counted above",
            "XLAs cost_analysis() für {k} Mult.-Add.: {f:,.0f} FLOPs und {b} gelesen/geschrieben: "
            "{i:.1f} FLOPs pro Byte, wie oben gezählt",
            k=k,
            f=cost["flops"],
            b=units.format_bytes(cost["bytes accessed"]),
            i=cost["flops"] / cost["bytes accessed"],
        )

# %% [markdown] lang="en"
# ### Traces, Nsight Systems and XLA's own count
#
# On a GPU two tools show more than section 9's table:
#
# - **A trace view**: the file the next cell writes shows every operation on a time line, CPU threads
#   and GPU streams one above the other, so gaps (the GPU waiting for Python, a copy blocking the
#   compute) become visible. Open it at ui.perfetto.dev (on Colab: download it from the file panel
#   on the left). TensorBoard shows the same kind of trace in its profile view, which is how
#   JAX's `jax.profiler.trace(log_dir)` is read: `%load_ext tensorboard`, then
#   `%tensorboard --logdir log_dir`.
# - **Nsight Systems** (NVIDIA): `nsys profile -o report python script.py` records CUDA API
#   calls, kernels and PCIe copies with the copy engines' own timestamps, below what PyTorch sees.
#   It is not part of a Colab runtime: record on a machine that has it, or copy the `.nsys-rep`
#   file to your computer and open it in the Nsight Systems GUI.

# %% [markdown] lang="de"
# ### Traces, Nsight Systems und die Zählung von XLA
#
# Auf einer GPU zeigen zwei Werkzeuge mehr als die Tabelle aus Abschnitt 9:
#
# - **Eine Trace-Ansicht**: Die Datei, die die nächste Zelle schreibt, zeigt jede Operation auf einem Zeitstrahl,
#   CPU-Threads und GPU-Streams übereinander, sodass Lücken sichtbar werden (die GPU wartet auf
#   Python, eine Kopie blockiert das Rechnen). Öffne sie auf ui.perfetto.dev (auf Colab: lade sie
#   über den Dateibereich links herunter). TensorBoard zeigt dieselbe Art Trace in seiner
#   Profil-Ansicht; so liest du auch die Traces von `jax.profiler.trace(log_dir)`:
#   `%load_ext tensorboard`, dann `%tensorboard --logdir log_dir`.
# - **Nsight Systems** (NVIDIA): `nsys profile -o report python script.py` zeichnet
#   CUDA-API-Aufrufe, Kernel und PCIe-Kopien mit den Zeitstempeln der Kopier-Einheiten auf,
#   unterhalb dessen, was PyTorch sieht. Zu einer Colab-Laufzeit gehört es nicht: Zeichne auf einer
#   Maschine auf, die es hat, oder kopiere die `.nsys-rep`-Datei auf deinen Rechner und öffne sie in
#   der Oberfläche von Nsight Systems.

# %%
import os
import tempfile

trace_path = os.path.join(tempfile.mkdtemp(), "matmul_trace.json")
prof.export_chrome_trace(trace_path)
say(
    "trace written to {path} ({size}): open it at ui.perfetto.dev",
    "Trace geschrieben nach {path} ({size}): Öffne ihn auf ui.perfetto.dev",
    path=trace_path,
    size=units.format_bytes(os.path.getsize(trace_path)),
)
# en: JAX's view of the same matmul: XLA counts FLOPs and bytes of the compiled program
# de: JAX' Sicht auf dieselbe Matmul: XLA zählt FLOPs und Bytes des kompilierten Programms
xla_cost = jax_matmul.lower(x, x).compile().cost_analysis()
xla_cost = xla_cost[0] if isinstance(xla_cost, list) else xla_cost
if xla_cost and "flops" in xla_cost:
    say(
        "XLA cost_analysis() of the n = {n} matmul: {f:,.0f} FLOPs (2n³ = {g:,.0f}), {b} accessed",
        "XLA-cost_analysis() der Matmul mit n = {n}: {f:,.0f} FLOPs (2n³ = {g:,.0f}), {b} bewegt",
        n=n,
        f=xla_cost["flops"],
        g=matmul_flops(n, n, n),
        b=units.format_bytes(xla_cost["bytes accessed"]),
    )
else:
    say(
        "this JAX version gives no cost_analysis() here",
        "diese JAX-Version liefert hier keine cost_analysis()",
    )

# %% [markdown] lang="en"
# **Class results (optional).** To add this run's figures to your group's comparison, set
# `SAVE_RESULTS = True` below and run the cell (or start Jupyter with `COURSE_RESULTS=folder`). It
# writes a small anonymous file to `results/` for your trainer to collect: the hardware, the
# library versions, the best float32 matmul FLOP/s on the CPU, the best on the accelerator, the
# size from which the accelerator wins and the threads; no names, no paths. Nothing is sent
# anywhere.

# %% [markdown] lang="de"
# **Ergebnisse der Gruppe (freiwillig).** Um die Zahlen dieses Laufs zum Vergleich deiner Gruppe
# beizusteuern, setz unten `SAVE_RESULTS = True` und führe die Zelle aus (oder starte Jupyter mit
# `COURSE_RESULTS=Ordner`). Sie schreibt eine kleine anonyme Datei nach `results/`, die deine
# Trainerin oder dein Trainer einsammelt: Hardware, Bibliotheksversionen, die besten
# float32-Matmul-FLOP/s auf der CPU, die besten auf dem Beschleuniger, die Größe, ab der der
# Beschleuniger gewinnt, und die Threads; keine Namen, keine Pfade. Es wird nichts verschickt.

# %%
# en: True saves this run's figures to results/, anonymously (see above)
# de: True speichert die Zahlen dieses Laufs anonym nach results/ (siehe oben)
SAVE_RESULTS = False
from utils.workshop.results import record

rates = {label: max(m.flops_per_second for m in s.values()) for label, s in sweep.items()}
on_cpu = [r for label, r in rates.items() if "float32 (CPU)" in label]
on_accelerator = [r for label, r in rates.items() if "(CPU)" not in label]
figures = {
    "cpu_fp32_best_gflops": max(on_cpu) / 1e9,
    "accel_best_gflops": max(on_accelerator) / 1e9 if on_accelerator else None,
    "crossover_n": only_matmul if accelerated else None,
    "threads": threads_used,
}
record("01", figures, save=SAVE_RESULTS, hw=hw)

# %% tags=["guard"] jupyter={"source_hidden": true}
# en: Checks of the course itself (not part of the lesson): the cells above measured what they show.
# de: Prüfungen des Kurses selbst (nicht Teil der Lektion): Die Zellen oben maßen, was sie zeigen.
assert queued <= done
assert torch.get_num_threads() == threads_before
assert right.n >= 5 and right.median * right.number >= 0.01
assert all(len(r) >= len(cpu_sizes) for r in sweep.values())
assert python_loop.median > numpy_tiny.median
assert add_intensity < ridge
# en: the roof does not come from the points: some of them fall below it
# de: das Dach kommt nicht von den Punkten: einige liegen darunter
assert min(shares.values()) < 0.7
assert verdict(*by_input.values()) in ("noise", "effect")
# en: the copies' latency moves the crossover to a larger size
# de: die Latenz der Kopien verschiebt die Übergangsgröße nach oben
assert modelled is not None and modelled_copies is not None and modelled_copies > modelled
assert region.count == 1 and mm.count == 5
