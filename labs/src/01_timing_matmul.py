# ---
# jupyter:
#   course:
#     title:
#       en: "Timing a matrix multiplication"
#       de: "Matrixmultiplikation messen"
#     level: 1
#     duration: {t4: 30, cpu: 30}
#     profiles: [CPU, Colab T4, Kaggle T4 x2, Colab TPU, Kaggle TPU, NVIDIA, MPS]
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# Five exercises on lesson 01: counting FLOPs, a timer that survives asynchronous devices, FLOP/s
# and % of peak, the size from which an accelerator wins, and the roofline question "compute or
# memory?". Each check tries your code on fresh random inputs; a wrong answer gets its own message.
#
# Replace each `____` by your code and run the cell. `qN.hint()` and `qN.solution()` help; the last
# cell shows your score. Run the setup cell and the two cells below it first.

# %% [markdown] lang="de"
# Fünf Aufgaben zu Lektion 01: FLOPs zählen, ein Timer, der asynchrone Geräte übersteht, FLOP/s und
# Anteil an der Spitzenleistung, die Größe, ab der ein Beschleuniger gewinnt, und die Roofline-Frage
# „Rechenleistung oder Speicher?“. Jede Prüfung probiert deinen Code mit frischen Zufallseingaben aus;
# jeder Fehler bekommt seine eigene Meldung.
#
# Ersetze jedes `____` durch deinen Code und führe die Zelle aus. `qN.hint()` und `qN.solution()`
# helfen; die letzte Zelle zeigt deine Punkte. Führe zuerst die Setup-Zelle und die beiden Zellen
# darunter aus.

# %%
import time

from utils.asyncsim import SimulatedAccelerator  # noqa: F401 (for you to try your timer on)
from utils.checks import ____  # noqa: F401 (the blank you replace · die Lücke, die du ersetzt)

print("time.perf_counter:", time.get_clock_info("perf_counter"))

# %% tags=["checks"] jupyter={"source_hidden": true} cellView="form"
# @title Checks · Prüfungen (run me · ausführen)
# The checks of this lab. They try your code on random inputs; each mistake has its own message.
from utils import asyncsim, tr
from utils.checks import Lab, Wrong, as_number, call, close, diagnose, matching

lab = Lab("01", title=("Timing a matrix multiplication", "Matrixmultiplikation messen"))


# --- q1: FLOPs of a batched matmul -----------------------------------------------------------------
def _batched_message(key, b, m, k, n, got, want):
    messages = {
        "no_batch": ("You counted one matmul: there are b of them.", "Du hast eine Matmul gezählt: Es sind b Stück."),
        "mkn": ("One multiply-add is two FLOPs (a multiplication and an addition).",
                "Ein Multiplizieren-Addieren sind zwei FLOPs (eine Multiplikation und eine Addition)."),
        "outputs_only": ("You counted the outputs; each is a sum of k products.",
                         "Du hast die Ergebnisse gezählt; jedes ist eine Summe aus k Produkten."),
        "wrong": (f"your function returns {got:,}, but it is {want:,} FLOPs.",
                  f"deine Funktion liefert {got:,}, es sind aber {want:,} FLOPs."),
    }
    return tr(f"For b={b}, m={m}, k={k}, n={n}: ", f"Für b={b}, m={m}, k={k}, n={n}: ") + tr(*messages[key])


def test_batched(batched_matmul_flops, rng):
    failures = []
    for _ in range(5):
        b, m, k, n = rng.sample(range(2, 2000), 4)
        got, want = as_number(call(batched_matmul_flops, b, m, k, n)), 2 * b * m * k * n
        if not close(got, want):
            mistakes = {"no_batch": 2 * m * k * n, "mkn": b * m * k * n, "outputs_only": [b * m * n, 2 * b * m * n]}
            failures.append((matching(got, mistakes), dict(b=b, m=m, k=k, n=n, got=got, want=want)))
    if failures:
        diagnose(failures, _batched_message)
    return tr("Correct! A batch of b matmuls costs b times one matmul.",
              "Richtig! Ein Stapel von b Matmuls kostet b-mal eine Matmul.")


q1 = lab.exercise(
    "batched_flops",
    title=("FLOPs of a batched matmul", "FLOPs einer Stapel-Matmul"),
    points=2,
    test=test_batched,
    hint=("torch.bmm multiplies b independent (m×k)·(k×n) pairs; one pair costs 2·m·k·n.",
          "torch.bmm multipliziert b unabhängige (m×k)·(k×n)-Paare; ein Paar kostet 2·m·k·n."),
    solution=("def batched_matmul_flops(b, m, k, n):\n    return 2 * b * m * k * n",
              "def batched_matmul_flops(b, m, k, n):\n    return 2 * b * m * k * n"),
)


# --- q2: a timer for an asynchronous device ------------------------------------------------------
def test_timer(time_per_call, rng):
    for _ in range(2):
        true = rng.uniform(0.002, 0.004)
        device = asyncsim.SimulatedAccelerator(seconds_per_call=true, compile_seconds=0.15)
        got = as_number(call(time_per_call, device.matmul, device.synchronize))
        device.synchronize()
        if close(got, true, rel_tol=0.3):
            continue
        if got < true / 3:
            raise Wrong("no_sync", tr(
                f"Your timer says {got * 1e3:.3f} ms, but each call takes {true * 1e3:.1f} ms: it stops the "
                "clock while the work is still queued. Call sync() before you read the clock.",
                f"Dein Timer meldet {got * 1e3:.3f} ms, jeder Aufruf dauert aber {true * 1e3:.1f} ms: Er hält "
                "die Uhr an, während die Arbeit noch in der Warteschlange steht. Ruf sync() auf, bevor du "
                "die Uhr abliest."))
        warm = asyncsim.SimulatedAccelerator(seconds_per_call=true, compile_seconds=0.0)
        warm_got = as_number(call(time_per_call, warm.matmul, warm.synchronize))
        warm.synchronize()
        if close(warm_got, true, rel_tol=0.3):
            raise Wrong("first_call", tr(
                f"Your timer says {got * 1e3:.1f} ms instead of {true * 1e3:.1f} ms because it includes the "
                "first call, which compiles. Call fn() once and sync() before you start the clock.",
                f"Dein Timer meldet {got * 1e3:.1f} ms statt {true * 1e3:.1f} ms, weil er den ersten Aufruf "
                "mitmisst, der kompiliert. Ruf fn() einmal auf und sync(), bevor du die Uhr startest."))
        if got > 3 * true:
            raise Wrong("not_per_call", tr(
                f"Your timer says {got * 1e3:.1f} ms, each call takes {true * 1e3:.1f} ms: divide the time "
                "of the loop by the number of calls.",
                f"Dein Timer meldet {got * 1e3:.1f} ms, jeder Aufruf dauert {true * 1e3:.1f} ms: Teile die "
                "Zeit der Schleife durch die Zahl der Aufrufe."))
        raise Wrong("wrong", tr(f"Your timer says {got * 1e3:.2f} ms; each call takes {true * 1e3:.2f} ms.",
                                f"Dein Timer meldet {got * 1e3:.2f} ms; jeder Aufruf dauert {true * 1e3:.2f} ms."))
    return tr("Correct! Warm-up first, then sync around the timed calls: this is what utils.bench does.",
              "Richtig! Erst aufwärmen, dann um die gemessenen Aufrufe herum synchronisieren: So macht es "
              "utils.bench.")


q2 = lab.exercise(
    "async_timer",
    title=("A timer for asynchronous devices", "Ein Timer für asynchrone Geräte"),
    points=3,
    test=test_timer,
    hint=("Four steps: fn(); sync() (warm-up, untimed). start = time.perf_counter(); call fn() "
          "repeats times; sync(); return (time.perf_counter() - start) / repeats.",
          "Vier Schritte: fn(); sync() (Aufwärmen, ohne Uhr). start = time.perf_counter(); fn() "
          "repeats-mal aufrufen; sync(); return (time.perf_counter() - start) / repeats."),
    solution=("import time\n\n\ndef time_per_call(fn, sync, repeats=20):\n    fn()  # warm-up: the first call compiles\n"
              "    sync()\n    start = time.perf_counter()\n    for _ in range(repeats):\n        fn()\n"
              "    sync()  # wait until the queued work is done\n    return (time.perf_counter() - start) / repeats",
              "import time\n\n\ndef time_per_call(fn, sync, repeats=20):\n    fn()  # Aufwärmen: der erste Aufruf kompiliert\n"
              "    sync()\n    start = time.perf_counter()\n    for _ in range(repeats):\n        fn()\n"
              "    sync()  # warten, bis die eingereihte Arbeit fertig ist\n    return (time.perf_counter() - start) / repeats"),
)


# --- q3: achieved TFLOP/s and % of peak ------------------------------------------------------------
def _achieved_message(key, n, seconds, peak, got, want):
    messages = {
        "mkn": ("Your TFLOP/s are half of what they should be: a square matmul is 2·n³ FLOPs.",
                "Deine TFLOP/s sind halb so groß wie richtig: Eine quadratische Matmul sind 2·n³ FLOPs."),
        "fraction": ("The percentage is a fraction: multiply by 100.", "Der Prozentwert ist ein Bruchteil: mal 100 nehmen."),
        "gflops": ("That is GFLOP/s: one TFLOP/s is 10¹² FLOP/s.", "Das sind GFLOP/s: Ein TFLOP/s sind 10¹² FLOP/s."),
        "inverted": ("You divided seconds by FLOPs; FLOP/s is FLOPs divided by seconds.",
                     "Du hast Sekunden durch FLOPs geteilt; FLOP/s sind FLOPs durch Sekunden."),
        "wrong": (f"got {got}, expected ({want[0]:.4g} TFLOP/s, {want[1]:.4g} %).",
                  f"erhalten {got}, erwartet ({want[0]:.4g} TFLOP/s, {want[1]:.4g} %)."),
    }
    return tr(f"For n={n}, {seconds:.3g} s, peak {peak} TFLOP/s: ", f"Für n={n}, {seconds:.3g} s, Spitze {peak} TFLOP/s: ") + tr(*messages[key])


def test_achieved(achieved, rng):
    failures = []
    for _ in range(5):
        n, seconds, peak = rng.choice([1024, 2048, 4096, 8192]), rng.uniform(1e-3, 0.5), rng.choice([8.1, 65, 312, 989])
        answer = call(achieved, n, seconds, peak)
        if not (isinstance(answer, tuple | list) and len(answer) == 2):
            raise Wrong("not_a_pair", tr("Return two numbers: (tflops, percent).", "Gib zwei Zahlen zurück: (tflops, prozent)."))
        got = (as_number(answer[0]), as_number(answer[1]))
        tflops = 2 * n**3 / seconds / 1e12
        want = (tflops, 100 * tflops / peak)
        if not (close(got[0], want[0], rel_tol=1e-6) and close(got[1], want[1], rel_tol=1e-6)):
            mistakes = {
                "mkn": [(want[0] / 2, want[1] / 2)],
                "fraction": [(want[0], want[1] / 100)],
                "gflops": [(want[0] * 1000, want[1] * 1000), (want[0] * 1000, want[1])],
                "inverted": [(1 / (2 * n**3 / seconds) * 1e12, 100 * (1 / (2 * n**3 / seconds) * 1e12) / peak)],
            }
            failures.append((matching(got, mistakes), dict(n=n, seconds=seconds, peak=peak, got=got, want=want)))
    if failures:
        diagnose(failures, _achieved_message)
    return tr("Correct! This is how bench.measure turns a median into FLOP/s and % of peak.",
              "Richtig! So macht bench.measure aus einem Median FLOP/s und den Anteil an der Spitze.")


q3 = lab.exercise(
    "achieved",
    title=("TFLOP/s and % of peak", "TFLOP/s und Anteil an der Spitze"),
    points=2,
    test=test_achieved,
    hint=("FLOPs = 2·n³; TFLOP/s = FLOPs / seconds / 10¹²; percent = 100 · TFLOP/s / peak.",
          "FLOPs = 2·n³; TFLOP/s = FLOPs / Sekunden / 10¹²; Prozent = 100 · TFLOP/s / Spitze."),
    solution=("def achieved(n, seconds, peak_tflops):\n    tflops = 2 * n**3 / seconds / 1e12\n"
              "    return tflops, 100 * tflops / peak_tflops",
              "def achieved(n, seconds, peak_tflops):\n    tflops = 2 * n**3 / seconds / 1e12\n"
              "    return tflops, 100 * tflops / peak_tflops"),
)


# --- q4: the crossover size --------------------------------------------------------------------------
def _timings(rng, winner_from):
    """Sizes and times: the accelerator wins from index `winner_from` on, with one lucky win before."""
    sizes = [2**p for p in range(5, 5 + rng.randint(6, 9))]
    cpu = [2 * s**3 / 2e11 + 2e-6 for s in sizes]
    acc = [c * (rng.uniform(0.05, 0.5) if i >= winner_from else rng.uniform(1.5, 20)) for i, c in enumerate(cpu)]
    if winner_from >= 2:
        lucky = rng.randrange(0, min(winner_from, len(sizes)) - 1)
        acc[lucky] = cpu[lucky] * 0.9  # noise: one small size where the accelerator happens to win
    return sizes, cpu, acc


def test_crossover(crossover, rng):
    for trial in range(6):
        if trial == 5:  # the accelerator never wins
            sizes, cpu, acc = _timings(rng, 99)
            want = None
        else:
            winner_from = rng.randint(2, 5)
            sizes, cpu, acc = _timings(rng, winner_from)
            want = sizes[winner_from]
        got = call(crossover, list(sizes), list(cpu), list(acc))
        if got == want:
            continue
        wins = [a < c for c, a in zip(cpu, acc, strict=True)]
        if want is not None and got == sizes.index(want):
            raise Wrong("index", tr("You returned the position in the list; return the size itself.",
                                    "Du gibst die Position in der Liste zurück; gib die Größe selbst zurück."))
        if True in wins and got == sizes[wins.index(True)]:
            raise Wrong("first_win", tr(
                f"You returned the first size where the accelerator was faster ({got}), but at a larger size "
                "it lost again: one lucky measurement. Return the size from which it wins at every larger size.",
                f"Du gibst die erste Größe zurück, bei der der Beschleuniger schneller war ({got}), aber bei "
                "einer größeren hat er wieder verloren: eine Glücksmessung. Gib die Größe zurück, ab der er bei "
                "jeder größeren Größe gewinnt."))
        if want is None:
            raise Wrong("never", tr(f"Here the accelerator never wins: return None, not {got!r}.",
                                    f"Hier gewinnt der Beschleuniger nie: Gib None zurück, nicht {got!r}."))
        raise Wrong("wrong", tr(f"For these times the answer is {want}, not {got!r}.",
                                f"Für diese Zeiten ist die Antwort {want}, nicht {got!r}."))
    return tr("Correct! A crossover must hold for every larger size, or noise decides it.",
              "Richtig! Ein Übergang muss für jede größere Größe gelten, sonst entscheidet das Rauschen.")


q4 = lab.exercise(
    "crossover",
    title=("Where the accelerator starts to win", "Ab wann der Beschleuniger gewinnt"),
    points=2,
    test=test_crossover,
    hint=("Go through the sizes from small to large and return the first one from which "
          "accelerator < cpu holds for it and for all larger sizes (all(...) over the rest); None if none.",
          "Geh die Größen von klein nach groß durch und gib die erste zurück, ab der accelerator < cpu für "
          "sie und alle größeren gilt (all(...) über den Rest); None, wenn keine."),
    solution=("def crossover(sizes, cpu_seconds, accelerator_seconds):\n"
              "    wins = [a < c for c, a in zip(cpu_seconds, accelerator_seconds)]\n"
              "    for i, size in enumerate(sizes):\n        if all(wins[i:]):\n            return size\n    return None",
              "def crossover(sizes, cpu_seconds, accelerator_seconds):\n"
              "    wins = [a < c for c, a in zip(cpu_seconds, accelerator_seconds)]\n"
              "    for i, size in enumerate(sizes):\n        if all(wins[i:]):\n            return size\n    return None"),
)


# --- q5: compute- or memory-bound? -----------------------------------------------------------------------
def _bound_message(key, intensity, ridge, got, want):
    messages = {
        "inverted": ("The other way round: above the ridge point an operation has enough work per byte and "
                     "is compute-bound; below it, it waits for memory.",
                     "Umgekehrt: Oberhalb des Knickpunkts hat eine Operation genug Arbeit pro Byte und ist "
                     "rechengebunden; darunter wartet sie auf den Speicher."),
        "ignores_bandwidth": ("Compare the intensity (FLOPs per byte) with the ridge point, peak ÷ bandwidth, "
                              "not with the peak itself.",
                              "Vergleiche die Intensität (FLOPs pro Byte) mit dem Knickpunkt, Spitze ÷ Bandbreite, "
                              "nicht mit der Spitze selbst."),
        "constant": (f"Your function always answers {got!r}; it depends on the operation and the chip.",
                     f"Deine Funktion antwortet immer {got!r}; es hängt aber von Operation und Chip ab."),
        "wrong": (f"Here it is {want!r}, not {got!r}.", f"Hier ist es {want!r}, nicht {got!r}."),
    }
    return tr(f"Intensity {intensity:.3g} FLOP/byte, ridge point {ridge:.3g}: ",
              f"Intensität {intensity:.3g} FLOP/Byte, Knickpunkt {ridge:.3g}: ") + tr(*messages[key])


def test_bound(bound, rng):
    chips = [(65e12, 320e9), (989e12, 4.8e12), (197e12, 819e9), (0.5e12, 20e9)]
    answers, failures = [], []
    for i in range(12):
        peak, bandwidth = rng.choice(chips)
        ridge = peak / bandwidth
        # Alternate below and above the ridge point, so both answers are asked for.
        intensity = ridge * (rng.uniform(0.01, 0.7) if i % 2 else rng.uniform(1.4, 100))
        nbytes = rng.uniform(1e6, 1e10)
        want = "compute" if intensity > ridge else "memory"
        got = call(bound, intensity * nbytes, nbytes, peak, bandwidth)
        if got not in ("compute", "memory"):
            raise Wrong("not_a_label", tr(f"Return 'compute' or 'memory', not {got!r}.",
                                          f"Gib 'compute' oder 'memory' zurück, nicht {got!r}."))
        answers.append(got)
        if got != want:
            failures.append(dict(intensity=intensity, ridge=ridge, got=got, want=want))
    if failures:
        if len(failures) == len(answers):
            key = "inverted"  # wrong every time: the comparison is the wrong way round
        elif set(answers) == {"memory"}:
            key = "ignores_bandwidth"  # intensity vs. the peak itself: always "memory"
        elif len(set(answers)) == 1:
            key = "constant"
        else:
            key = "wrong"
        raise Wrong(key, _bound_message(key, **failures[0]))
    return tr("Correct! An elementwise add (1/12 FLOP per byte) is memory-bound on every chip.",
              "Richtig! Eine elementweise Addition (1/12 FLOP pro Byte) ist auf jedem Chip speichergebunden.")


q5 = lab.exercise(
    "bound",
    title=("Compute- or memory-bound?", "Rechen- oder speichergebunden?"),
    points=2,
    test=test_bound,
    hint=("intensity = flops / bytes_moved; ridge = peak_flops / bandwidth; above the ridge it is 'compute'.",
          "Intensität = flops / bytes_moved; Knickpunkt = peak_flops / bandwidth; darüber ist es 'compute'."),
    solution=("def bound(flops, bytes_moved, peak_flops, bandwidth):\n"
              "    intensity = flops / bytes_moved\n    ridge = peak_flops / bandwidth\n"
              "    return 'compute' if intensity > ridge else 'memory'",
              "def bound(flops, bytes_moved, peak_flops, bandwidth):\n"
              "    intensity = flops / bytes_moved\n    ridge = peak_flops / bandwidth\n"
              "    return 'compute' if intensity > ridge else 'memory'"),
)
print(tr(f"Lab {lab.number}: {len(lab.exercises)} exercises ready.", f"Lab {lab.number}: {len(lab.exercises)} Aufgaben bereit."))

# %% [markdown] lang="en"
# ## 1. FLOPs of a batched matmul
#
# `torch.bmm(A, B)` multiplies b pairs of matrices at once: A has shape (b, m, k), B (b, k, n).
# Write `batched_matmul_flops(b, m, k, n)`.

# %% [markdown] lang="de"
# ## 1. FLOPs einer Stapel-Matmul
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
# kehrt sofort zurück; `device.synchronize()` wartet, bis alles Eingereihte fertig ist; und der erste
# Aufruf kompiliert. Schreib `time_per_call(fn, sync, repeats=20)`, das die Sekunden für einen Aufruf
# von `fn` zurückgibt. Probier ihn zuerst selbst aus: `device = SimulatedAccelerator(seconds_per_call=0.003)`,
# dann sollte `time_per_call(device.matmul, device.synchronize)` etwa 0,003 ergeben.


# %%
def time_per_call(fn, sync, repeats=20):
    ### BEGIN SOLUTION
    # STARTER: return ____
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
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
# `(tflops, percent)`: the TFLOP/s reached and their share of the device's peak in percent.

# %% [markdown] lang="de"
# ## 3. TFLOP/s und Anteil an der Spitze
#
# Eine quadratische n×n-Matmul hat `seconds` gedauert. Schreib `achieved(n, seconds, peak_tflops)`,
# das das Paar `(tflops, percent)` zurückgibt: die erreichten TFLOP/s und ihren Anteil an der
# Spitzenleistung des Geräts in Prozent.


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
# is faster at that size *and every larger one*, or `None`. Measurements are noisy: one lucky win at
# a small size must not count.

# %% [markdown] lang="de"
# ## 4. Ab wann der Beschleuniger gewinnt
#
# Du hast Matmuls wachsender Größe auf der CPU und auf einem Beschleuniger gemessen. Schreib
# `crossover(sizes, cpu_seconds, accelerator_seconds)`: die kleinste Größe, ab der der Beschleuniger
# bei dieser *und jeder größeren* Größe schneller ist, sonst `None`. Messungen rauschen: Ein
# Glückstreffer bei einer kleinen Größe darf nicht zählen.


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
# limits its speed (lesson 01, section 8).

# %% [markdown] lang="de"
# ## 5. Rechen- oder speichergebunden?
#
# Eine Operation rechnet `flops` FLOPs und bewegt `bytes_moved` Bytes, auf einem Chip mit `peak_flops`
# FLOP/s und `bandwidth` Byte/s. Schreib `bound(...)`, das `"compute"` oder `"memory"` zurückgibt:
# welche der beiden Grenzen seine Geschwindigkeit bestimmt (Lektion 01, Abschnitt 8).


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
# ## Your score
#
# **Next:** lesson 02: where do tensors live, and what does moving them cost?

# %% [markdown] lang="de"
# ## Deine Punkte
#
# **Weiter:** Lektion 02: Wo liegen Tensoren, und was kostet es, sie zu bewegen?

# %%
lab.score()
