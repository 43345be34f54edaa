# ---
# jupyter:
#   course:
#     duration:
#       cpu: 25
#       t4: 25
#       tpu: 25
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
#       de: 'JAX und TPU: kompilieren und auf Batches abbilden'
#       en: 'JAX on TPU: compile and batch'
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# Three exercises on lesson 04: time compilation and execution separately, batch a function with
# `vmap` (then see how much faster it is than a Python loop), and measure on this device whether
# jit beats eager dispatch. Splitting arrays over several devices is lab 08.
#
# Replace each `____` by your code and run the cell. `qN.hint()` and `qN.solution()` help; the last
# cell shows your score. Run the setup cell and the two cells below it first.

# %% [markdown] lang="de"
# Drei Aufgaben zu Lektion 04: Kompilieren und Ausführen getrennt messen, eine Funktion mit
# `vmap` auf Batches erweitern (und sehen, wie viel schneller das ist als eine Python-Schleife)
# und auf diesem Gerät messen, ob jit das Eager-Dispatching schlägt. Wie du Arrays auf mehrere
# Geräte verteilst, zeigt Lab 08.
#
# Ersetze jedes `____` durch deinen Code und führe die Zelle aus. `qN.hint()` und `qN.solution()`
# helfen; die letzte Zelle zeigt deine Punkte. Führe zuerst die Setup-Zelle und die beiden Zellen
# darunter aus.

# %%
import jax
import jax.numpy as jnp

from labs.kit import ____  # noqa: F401  # en: the blank you replace | de: die Lücke, die du ersetzt
from utils.i18n import say

say(
    "jax {version} | {backend} | {n} device(s)",
    "jax {version} | {backend} | {n} Gerät(e)",
    version=jax.__version__,
    backend=jax.default_backend(),
    n=len(jax.devices()),
)

# %% tags=["checks"] jupyter={"source_hidden": true} cellView="form"
# en: @title Checks (run me)
# de: @title Prüfungen (ausführen)
from labs.checks.lab04 import lab, q1, q2, q3

lab.ready()

# %% [markdown] lang="en"
# ## 1. Compile time and run time
#
# Write `compile_and_run(f, x)`: return `(compile_seconds, run_seconds)`, the time to trace and
# compile `jax.jit(f)` for `x`, and the time of one run of the compiled program. The check hands you a
# function that sleeps a moment while it is traced (so compiling takes a known minimum) and then
# computes for about 30 ms. Two traps wait: `jax.jit(f)` by itself compiles nothing, and a call
# returns before its work is done. Time with `time.perf_counter()` (or `time.monotonic()`,
# `time.time()`, their `_ns` forms, `timeit`): the check notes your clock readings and works out
# which stretch of your function each number measured, so its verdict is the same on a busy machine.

# %% [markdown] lang="de"
# ## 1. Kompilierzeit und Laufzeit
#
# Schreib `compile_and_run(f, x)`: Gib `(compile_seconds, run_seconds)` zurück, die Zeit, um
# `jax.jit(f)` für `x` zu tracen und zu kompilieren, und die Zeit eines Laufs des kompilierten
# Programms. Die Prüfung gibt dir eine Funktion, die beim Tracen kurz pausiert (das Kompilieren
# dauert also mindestens eine bekannte Zeit) und dann etwa 30 ms rechnet. Zwei Fallen lauern:
# `jax.jit(f)` allein kompiliert nichts, und ein Aufruf kehrt zurück, bevor seine Arbeit erledigt
# ist. Miss mit `time.perf_counter()` (oder `time.monotonic()`, `time.time()`, ihren `_ns`-Formen,
# `timeit`): Die Prüfung merkt sich, wann du die Uhr abliest, und ermittelt daraus, welchen
# Abschnitt deiner Funktion jede Zahl misst. So urteilt sie auf einem ausgelasteten Rechner genauso
# wie auf einem freien.

# %%
import time

import jax


def compile_and_run(f, x):
    ### BEGIN SOLUTION
    # STARTER: return ____
    start = time.perf_counter()
    compiled = jax.jit(f).lower(x).compile()  # en: trace and compile | de: tracen und kompilieren
    compile_seconds = time.perf_counter() - start
    compiled(x).block_until_ready()  # en: one untimed run | de: ein Lauf ohne Uhr
    start = time.perf_counter()
    compiled(x).block_until_ready()  # en: wait for the result | de: aufs Ergebnis warten
    run_seconds = time.perf_counter() - start
    return compile_seconds, run_seconds
    ### END SOLUTION


q1.check(compile_and_run)

# %%
# q1.hint()
# q1.solution()

# %% [markdown] lang="en"
# ## 2. Batching with vmap
#
# `predict(w, x)` is written for **one** example `x` (a vector). Write `predict_all(predict, w, xs)`:
# the predictions for every row of `xs`, as one array with one row per example, using `jax.vmap`
# rather than a Python loop.

# %% [markdown] lang="de"
# ## 2. Batches mit vmap
#
# `predict(w, x)` ist für **ein** Beispiel `x` (einen Vektor) geschrieben. Schreib
# `predict_all(predict, w, xs)`: die Vorhersagen für jede Zeile von `xs`, als ein Array mit einer
# Zeile pro Beispiel, mit `jax.vmap` statt einer Python-Schleife.


# %%
import jax


def predict_all(predict, w, xs):
    ### BEGIN SOLUTION
    # STARTER: return ____
    # en: the same w for all, one row of xs each
    # de: dasselbe w für alle, je eine Zeile von xs
    return jax.vmap(predict, in_axes=(None, 0))(w, xs)
    ### END SOLUTION


q2.check(predict_all)

# %%
# q2.hint()
# q2.solution()

# %% [markdown] lang="en"
# How much faster is it? Once q2 passes, the cell below times your `predict_all` (jitted) against a
# Python loop that calls a jitted `predict` once per example, over the same 256 examples, with the
# course's timer. Two details make the comparison fair:
#
# - `for x in xs` over a JAX array is itself a JAX operation: the first time, JAX compiles the
#   splitting of `xs` into rows ("unstack"), which takes seconds and would land in the loop's first
#   call. The cell splits `xs` once, untimed, and the loop runs over the list of rows.
# - One call of the loop is 256 dispatches and takes milliseconds, so the timer needs only one call
#   per timed block ("× 1 call"); the vmap version is one dispatch, so it packs many calls into a
#   block. Compare the medians per call, not the counts.

# %% [markdown] lang="de"
# Wie viel schneller ist das? Sobald q2 bestanden ist, misst die Zelle unten dein `predict_all`
# (gejittet) gegen eine Python-Schleife, die ein gejittetes `predict` einmal pro Beispiel aufruft,
# über dieselben 256 Beispiele und mit dem Timer des Kurses. Zwei Details machen den Vergleich fair:
#
# - `for x in xs` über ein JAX-Array ist selbst eine JAX-Operation: Beim ersten Mal kompiliert JAX
#   das Zerlegen von `xs` in Zeilen („unstack“); das dauert Sekunden und fiele in den ersten
#   gemessenen Aufruf der Schleife. Die Zelle zerlegt `xs` deshalb einmal ohne Uhr, und die Schleife
#   läuft über die Liste der Zeilen.
# - Ein Aufruf der Schleife besteht aus 256 Dispatches und dauert Millisekunden; der Timer braucht
#   deshalb nur einen Aufruf pro gemessenem Block („× 1 Aufruf“). Die vmap-Fassung ist ein einziger
#   Dispatch; der Timer packt viele ihrer Aufrufe in einen Block. Vergleiche die Mediane pro Aufruf,
#   nicht die Anzahlen.

# %%
from labs.kit import PASSED
from utils.timing.bench import measure


def predict(w, x):
    return jnp.tanh(w @ x)


if q2.result is not None and q2.result.status == PASSED:
    w = jax.random.normal(jax.random.key(0), (16, 64))
    xs = jax.random.normal(jax.random.key(1), (256, 64))
    rows = list(
        xs
    )  # en: split once, untimed (JAX compiles the unstack) | de: einmal zerlegen, ohne Uhr
    predict_one = jax.jit(predict)
    predict_one(w, rows[0]).block_until_ready()  # en: compile once | de: einmal kompilieren
    looped = measure(lambda w: jnp.stack([predict_one(w, x) for x in rows]), w, name="loop")
    batched = measure(jax.jit(lambda w, xs: predict_all(predict, w, xs)), w, xs, name="vmap")
    print(looped, batched, sep="\n")
    say(
        "vmap is {x:.0f}× as fast as the Python loop: one call instead of {n} calls, each with "
        "its own dispatch.",
        "vmap ist {x:.0f}-mal so schnell wie die Python-Schleife: ein Aufruf statt {n} Aufrufen "
        "mit je eigenem Dispatching.",
        x=looped.median / batched.median,
        n=len(rows),
    )
else:
    say("Solve q2 first, then run this cell.", "Löse zuerst q2 und führe dann diese Zelle aus.")

# %% [markdown] lang="en"
# ## 3. Jit or eager? Measure it here
#
# Lesson 04 says that `jax.jit` turns a chain of elementwise ops into one compiled program, while
# without it (eager) each op is sent to the device on its own. `runs` holds two functions that
# compute the same chain of 20 elementwise ops on a 128 × 128 array on this notebook's device:
# `runs["eager"]()` op by op, `runs["jitted"]()` as one program, compiled beforehand. Both return
# when the result is ready. Write `jit_or_eager(runs)`: measure both here and return
# `(ms, verdict)`, with `ms` a dict of milliseconds per call and `verdict` the name of the faster
# one by your numbers (`"jitted"` or `"eager"`). The check times the same calls and accepts any
# verdict that follows from your own numbers.

# %% [markdown] lang="de"
# ## 3. Jit oder eager? Miss es hier
#
# Lektion 04 sagt: `jax.jit` macht aus einer Kette elementweiser Operationen ein einziges
# kompiliertes Programm; ohne jit (eager) wird jede Operation einzeln ans Gerät geschickt. `runs`
# enthält zwei Funktionen, die dieselbe Kette aus 20 elementweisen Operationen auf einem
# 128 × 128-Array auf dem Gerät dieses Notebooks rechnen: `runs["eager"]()` Operation für
# Operation, `runs["jitted"]()` als ein Programm, vorab kompiliert. Beide kehren erst zurück, wenn
# das Ergebnis fertig ist. Schreib `jit_or_eager(runs)`: Miss beide hier und gib `(ms, verdict)`
# zurück, `ms` ein Dict mit den Millisekunden pro Aufruf und `verdict` den Namen der Fassung, die
# nach deinen Zahlen schneller ist (`"jitted"` oder `"eager"`). Die Prüfung misst dieselben Aufrufe
# mit und akzeptiert jedes Urteil, das aus deinen eigenen Zahlen folgt.


# %%
import statistics
from time import perf_counter


def jit_or_eager(runs):
    ### BEGIN SOLUTION
    # STARTER: return ____
    ms = {}
    for name, run in runs.items():
        run()  # en: the first call warms up | de: der erste Aufruf wärmt auf
        times = []
        for _ in range(5):
            start = perf_counter()
            run()
            times.append(1e3 * (perf_counter() - start))
        ms[name] = statistics.median(times)
    return ms, min(ms, key=ms.get)
    ### END SOLUTION


q3.check(jit_or_eager)

# %%
# q3.hint()
# q3.solution()

# %% [markdown] lang="en"
# ## Your score
#
# Run the cell below. A trainer grades the same way: `python -m labs.kit.grade` runs your notebook from
# top to bottom and reads this table (see `labs/README.md`).
#
# **Next:** lesson 05 trains a model end to end on an accelerator; lab 08 shards arrays over 8
# devices.

# %% [markdown] lang="de"
# ## Deine Punkte
#
# Führe die Zelle unten aus. Trainerinnen und Trainer bewerten genauso: `python -m labs.kit.grade`
# führt dein Notebook von oben nach unten aus und liest diese Tabelle (siehe `labs/README.md`).
#
# **Weiter:** Lektion 05 trainiert ein Modell von Anfang bis Ende auf einem Beschleuniger; Lab 08
# verteilt Arrays auf 8 Geräte.

# %%
lab.score()
