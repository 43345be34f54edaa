# ---
# jupyter:
#   course:
#     duration:
#       cpu: 30
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
#       de: Matrixmultiplikation messen
#       en: Timing a matrix multiplication
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# Six exercises on lesson 01: counting FLOPs, a timer that survives asynchronous devices, FLOP/s
# and % of peak, the size from which an accelerator wins, the roofline question "compute or
# memory?", and a measurement on your own device: which matmul size gets the most out of it. Each check tries your code on fresh random inputs; a wrong answer gets its own message.
#
# Replace each `____` by your code and run the cell. `qN.hint()` and `qN.solution()` help; the last
# cell shows your score. Run the setup cell and the two cells below it first.

# %% [markdown] lang="de"
# Sechs Aufgaben zu Lektion 01: FLOPs zählen, ein Timer, der auch bei asynchronen Geräten richtig
# misst, FLOP/s und Anteil an der Spitzenleistung, die Größe, ab der ein Beschleuniger gewinnt, die
# Roofline-Frage „Rechenleistung oder Speicher?“ und eine Messung auf deinem eigenen Gerät: Mit
# welcher Matmul-Größe holst du am meisten aus ihm heraus? Jede Prüfung probiert deinen Code mit frischen
# Zufallseingaben aus; jeder typische Fehler bekommt seine eigene Meldung.
#
# Ersetze jedes `____` durch deinen Code und führe die Zelle aus. `qN.hint()` und `qN.solution()`
# helfen; die letzte Zelle zeigt deine Punkte. Führe zuerst die Setup-Zelle und die beiden Zellen
# darunter aus.

# %%
import time

from labs.kit import ____  # noqa: F401
from utils.i18n import say
from utils.sim.asyncsim import SimulatedAccelerator  # noqa: F401

# en: SimulatedAccelerator is there for you to try your timer on; ____ is the blank you replace.
# de: Mit SimulatedAccelerator probierst du deinen Timer aus; ____ ist die Lücke, die du ersetzt.
clock = time.get_clock_info("perf_counter")
say(
    "time.perf_counter reads {name}, resolution {resolution:.0e} s",
    "time.perf_counter liest {name}, Auflösung {resolution:.0e} s",
    name=clock.implementation,
    resolution=clock.resolution,
)

# %% tags=["checks"] jupyter={"source_hidden": true} cellView="form"
# en: @title Checks (run me)
# de: @title Prüfungen (ausführen)
from labs.checks.lab01 import lab, q1, q2, q3, q4, q5, q6

lab.ready()

# %% [markdown] lang="en"
# ## 1. FLOPs of a batched matmul
#
# `torch.bmm(A, B)` multiplies b pairs of matrices at once: A has shape (b, m, k), B (b, k, n).
# Write `batched_matmul_flops(b, m, k, n)`.

# %% [markdown] lang="de"
# ## 1. FLOPs einer Batch-Matmul
#
# `torch.bmm(A, B)` multipliziert b Matrixpaare auf einmal: A hat die Form (b, m, k), B (b, k, n).
# Schreib `batched_matmul_flops(b, m, k, n)`.


# %%
def batched_matmul_flops(b, m, k, n):
    ### BEGIN SOLUTION
    # STARTER: return ____
    return 2 * b * m * k * n
    ### END SOLUTION


q1.check(batched_matmul_flops)

# %%
# q1.hint()
# q1.solution()

# %% [markdown] lang="en"
# ## 2. A timer for an asynchronous device
#
# `SimulatedAccelerator` behaves like a GPU: `device.matmul()` only queues the work and returns at
# once; `device.synchronize()` waits until everything queued is done; and the first call compiles.
# Write `time_per_call(fn, sync, repeats=20)` that returns the seconds one call of `fn` takes. Try
# it yourself first: `device = SimulatedAccelerator(seconds_per_call=0.003)`, then
# `time_per_call(device.matmul, device.synchronize)` should give about 0.003.

# %% [markdown] lang="de"
# ## 2. Ein Timer für asynchrone Geräte
#
# `SimulatedAccelerator` verhält sich wie eine GPU: `device.matmul()` reiht die Arbeit nur ein und
# kehrt sofort zurück; `device.synchronize()` wartet, bis alles Eingereihte fertig ist; und der
# erste Aufruf kompiliert. Schreib `time_per_call(fn, sync, repeats=20)`: Die Funktion gibt die Sekunden
# pro Aufruf von `fn` zurück. Probier deinen Timer zuerst selbst aus: Mit
# `device = SimulatedAccelerator(seconds_per_call=0.003)` sollte
# `time_per_call(device.matmul, device.synchronize)` etwa 0,003 ergeben.


# %%
import time


def time_per_call(fn, sync, repeats=20):
    ### BEGIN SOLUTION
    # STARTER: return ____
    fn()  # en: warm-up: the first call compiles | de: Aufwärmen: Der erste Aufruf kompiliert
    sync()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    # en: wait until the queued work is done
    # de: warten, bis die eingereihte Arbeit fertig ist
    sync()
    return (time.perf_counter() - start) / repeats
    ### END SOLUTION


q2.check(time_per_call)

# %%
# q2.hint()
# q2.solution()

# %% [markdown] lang="en"
# ## 3. TFLOP/s and % of peak
#
# A square n×n matmul took `seconds`. Write `achieved(n, seconds, peak_tflops)` that returns the pair
# `(tflops, percent)`: the TFLOP/s reached and their share of the device's peak in percent, both
# unrounded.

# %% [markdown] lang="de"
# ## 3. TFLOP/s und Anteil an der Spitzenleistung
#
# Eine quadratische n×n-Matmul hat `seconds` Sekunden gedauert. Schreib
# `achieved(n, seconds, peak_tflops)`: Die Funktion gibt das Paar `(tflops, percent)` zurück, die
# erreichten TFLOP/s und ihren Anteil an der Spitzenleistung des Geräts in Prozent, beide
# ungerundet.


# %%
def achieved(n, seconds, peak_tflops):
    ### BEGIN SOLUTION
    # STARTER: return ____
    tflops = 2 * n**3 / seconds / 1e12
    return tflops, 100 * tflops / peak_tflops
    ### END SOLUTION


q3.check(achieved)

# %%
# q3.hint()
# q3.solution()

# %% [markdown] lang="en"
# ## 4. Where the accelerator starts to win
#
# You timed matmuls of growing size on the CPU and on an accelerator. Write
# `crossover(sizes, cpu_seconds, accelerator_seconds)`: the smallest size from which the accelerator
# is faster at that size *and every larger one* (one of `sizes`, as a number), or `None`.
# Measurements are noisy: one lucky win at a small size must not decide it.

# %% [markdown] lang="de"
# ## 4. Ab wann der Beschleuniger gewinnt
#
# Du hast Matmuls wachsender Größe auf der CPU und auf einem Beschleuniger gemessen. Schreib
# `crossover(sizes, cpu_seconds, accelerator_seconds)`: die kleinste Größe, ab der der Beschleuniger
# bei dieser *und jeder größeren* Größe schneller ist (eine der Größen aus `sizes`, als Zahl),
# sonst `None`. Messungen rauschen: Ein Glückstreffer bei einer kleinen Größe darf nicht
# entscheiden.


# %%
def crossover(sizes, cpu_seconds, accelerator_seconds):
    ### BEGIN SOLUTION
    # STARTER: return ____
    wins = [a < c for c, a in zip(cpu_seconds, accelerator_seconds, strict=True)]
    for i, size in enumerate(sizes):
        if all(wins[i:]):
            return size
    return None
    ### END SOLUTION


q4.check(crossover)

# %%
# q4.hint()
# q4.solution()

# %% [markdown] lang="en"
# ## 5. Compute- or memory-bound?
#
# An operation does `flops` FLOPs and moves `bytes_moved` bytes on a chip with `peak_flops` FLOP/s
# and `bandwidth` bytes/s. Write `bound(...)` that returns `"compute"` or `"memory"`: which of the two
# limits its speed (lesson 01, section 8). Exactly at the ridge point both limits are equal: answer
# `"memory"` there, it is compute-bound only above it.

# %% [markdown] lang="de"
# ## 5. Rechen- oder speichergebunden?
#
# Eine Operation führt `flops` FLOPs aus und bewegt `bytes_moved` Byte, auf einem Chip mit
# `peak_flops` FLOP/s und `bandwidth` Byte/s. Schreib `bound(...)`: Die Funktion gibt `"compute"`
# oder `"memory"` zurück, je nachdem, welche der beiden Grenzen die Geschwindigkeit der Operation
# bestimmt (Lektion 01, Abschnitt 8). Genau am Knickpunkt sind beide Grenzen gleich: Antworte dort
# `"memory"`; rechengebunden ist die Operation erst darüber.


# %%
def bound(flops, bytes_moved, peak_flops, bandwidth):
    ### BEGIN SOLUTION
    # STARTER: return ____
    intensity = flops / bytes_moved
    ridge = peak_flops / bandwidth
    return "compute" if intensity > ridge else "memory"
    ### END SOLUTION


q5.check(bound)

# %%
# q5.hint()
# q5.solution()

# %% [markdown] lang="en"
# ## 6. Which size gets the most out of your device?
#
# Now measure for real, on the device this notebook runs on. `runs` maps a size n to a function
# without arguments: one call multiplies n×n matrices (on a GPU if there is one, and waits for it),
# a few times for the small sizes so that a call is long enough to time. `flops[n]` is the FLOPs
# of one such call. Write `best_size(runs, flops)` that returns the pair `(ms, verdict)`: `ms`
# a dict with a typical time of one call in milliseconds for each n (time several calls with a
# wall clock, the first one left out), and `verdict` the size n that reaches the most FLOP/s by
# *your* numbers. The check times the same calls and only accepts times that really occurred.
# Before you run it: does the size with the fastest call win?

# %% [markdown] lang="de"
# ## 6. Welche Größe holt am meisten aus deinem Gerät heraus?
#
# Jetzt misst du wirklich, auf dem Gerät, auf dem dieses Notebook läuft. `runs` ordnet jeder Größe
# n eine Funktion ohne Argumente zu: Ein Aufruf multipliziert n×n-Matrizen (auf einer GPU, wenn es
# eine gibt, und wartet auf sie), bei den kleinen Größen mehrmals, damit ein Aufruf lang genug zum
# Messen ist. `flops[n]` sind die FLOPs eines solchen Aufrufs. Schreib `best_size(runs, flops)`: Die
# Funktion gibt das Paar `(ms, verdict)` zurück, `ms` ein Dict mit der typischen Zeit eines
# Aufrufs in Millisekunden für jedes n (miss mehrere Aufrufe in verstrichener Zeit, ohne den
# ersten), und `verdict` die Größe n, die nach *deinen* Zahlen die meisten FLOP/s erreicht. Die
# Prüfung misst dieselben Aufrufe mit und nimmt nur Zeiten an, die wirklich vorkamen. Bevor du sie
# ausführst: Gewinnt die Größe mit dem schnellsten Aufruf?


# %%
import statistics
import time


def best_size(runs, flops):
    ### BEGIN SOLUTION
    # STARTER: return ____
    ms = {}
    for n, run in runs.items():
        run()  # en: warm-up, not timed | de: Aufwärmen, ohne Uhr
        times = []
        for _ in range(5):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        ms[n] = 1e3 * statistics.median(times)
    verdict = max(ms, key=lambda n: flops[n] / ms[n])
    return ms, verdict
    ### END SOLUTION


q6.check(best_size)

# %%
# q6.hint()
# q6.solution()

# %% [markdown] lang="en"
# ## Your score
#
# **Next:** lesson 02: where do tensors live, and what does moving them cost?

# %% [markdown] lang="de"
# ## Deine Punkte
#
# **Weiter:** Lektion 02: Wo liegen Tensoren, und was kostet es, sie zu bewegen?

# %%
lab.score()
