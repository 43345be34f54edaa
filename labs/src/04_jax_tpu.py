# ---
# jupyter:
#   course:
#     duration:
#       cpu: 40
#       t4: 40
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
#       de: 'JAX und TPU: kompilieren, verteilen, parallelisieren'
#       en: 'JAX on TPU: compile, shard, parallelise'
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# Four exercises on lesson 04: time compilation and execution separately, predict how an array is
# split over a mesh, write a data-parallel gradient that matches the single-device one, and batch a
# function with `vmap`. The checks run on **8 devices**: the simulated CPU devices of lesson 04
# (or the 8 TPU devices on Kaggle's TPU v5e-8).
#
# Replace each `____` by your code and run the cell. `qN.hint()` and `qN.solution()` help; the last
# cell shows your score. Run the setup cell and the two cells below it first, **before anything else
# uses JAX**: the first one asks JAX for its 8 devices.

# %% [markdown] lang="de"
# Vier Aufgaben zu Lektion 04: Kompilieren und Ausführen getrennt messen, vorhersagen, wie ein Array
# über ein Mesh verteilt wird, einen datenparallelen Gradienten schreiben, der mit dem auf einem Gerät
# übereinstimmt, und eine Funktion mit `vmap` auf Batches erweitern. Die Prüfungen laufen auf
# **8 Geräten**: den simulierten CPU-Geräten aus Lektion 04 (oder den 8 TPU-Geräten auf Kaggles TPU
# v5e-8).
#
# Ersetze jedes `____` durch deinen Code und führe die Zelle aus. `qN.hint()` und `qN.solution()`
# helfen; die letzte Zelle zeigt deine Punkte. Führe zuerst die Setup-Zelle und die beiden Zellen
# darunter aus, **bevor irgendetwas anderes JAX benutzt**: Die erste verlangt von JAX seine 8 Geräte.

# %%
import jax

from utils import jaxcompat
from utils.i18n import say

jaxcompat.simulate_cpu_devices(
    8
)  # en: first: JAX fixes its device count at start | de: zuerst: JAX legt die Gerätezahl beim Start fest

import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from utils.checks import ____  # noqa: F401  # en: the blank you replace | de: die Lücke, die du ersetzt

say(
    "jax {version} | {backend} | {n} CPU devices",
    "jax {version} | {backend} | {n} CPU-Geräte",
    version=jax.__version__,
    backend=jax.default_backend(),
    n=len(jax.devices("cpu")),
)

# %% tags=["checks"] jupyter={"source_hidden": true} cellView="form"
# en: @title Checks (run me)
# de: @title Prüfungen (ausführen)
from labs.checks.lab04 import lab, q1, q2, q3, q4

lab.ready()

# %% [markdown] lang="en"
# ## 1. Compile time and run time
#
# Write `compile_and_run(f, x)`: return `(compile_seconds, run_seconds)`, the time to trace and
# compile `jax.jit(f)` for `x`, and the time of one run of the compiled program. The check hands you a
# function that sleeps a moment while it is traced (so compiling takes a known minimum) and then
# computes for about 60 ms. Two traps wait: `jax.jit(f)` by itself compiles nothing, and a call
# returns before its work is done.

# %% [markdown] lang="de"
# ## 1. Kompilierzeit und Laufzeit
#
# Schreib `compile_and_run(f, x)`: Gib `(compile_seconds, run_seconds)` zurück, die Zeit, um
# `jax.jit(f)` für `x` zu tracen und zu kompilieren, und die Zeit eines Laufs des kompilierten
# Programms. Die Prüfung gibt dir eine Funktion, die beim Tracing kurz schläft (Kompilieren dauert also
# mindestens eine bekannte Zeit) und dann etwa 60 ms rechnet. Zwei Fallen warten: `jax.jit(f)` allein
# kompiliert nichts, und ein Aufruf kehrt zurück, bevor seine Arbeit erledigt ist.


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
# ## 2. Predict the shard shape
#
# Write `shard_shape(shape, spec, mesh_shape)`: the shape of the block each device holds when an
# array of `shape` is placed with `NamedSharding(mesh, P(*spec))`. `spec` is a tuple with one entry
# per dimension, `None`, an axis name or a tuple of axis names, and may be shorter than `shape`;
# `mesh_shape` maps axis names to sizes, e.g. `{"data": 4, "model": 2}`. Work it out from the numbers
# (the sizes always divide evenly); the check then asks JAX on the 8 devices. Try it:

# %% [markdown] lang="de"
# ## 2. Die Shard-Form vorhersagen
#
# Schreib `shard_shape(shape, spec, mesh_shape)`: die Form des Blocks, den jedes Gerät hält, wenn ein
# Array der Form `shape` mit `NamedSharding(mesh, P(*spec))` abgelegt wird. `spec` ist ein Tupel mit
# einem Eintrag pro Dimension, `None`, ein Achsenname oder ein Tupel von Achsennamen, und darf kürzer
# als `shape` sein; `mesh_shape` ordnet Achsennamen Größen zu, z. B. `{"data": 4, "model": 2}`.
# Rechne es aus den Zahlen aus (die Größen gehen immer glatt auf); die Prüfung fragt danach JAX auf den
# 8 Geräten. Probier es aus:

# %%
example_mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto),
                             devices=jaxcompat.mesh_devices(8))  # fmt: skip
example = jax.device_put(jnp.zeros((16, 6)), NamedSharding(example_mesh, P(("data", "model"))))
jaxcompat.show_layout(example)


# %%
import math


def shard_shape(shape, spec, mesh_shape):
    ### BEGIN SOLUTION
    # STARTER: return ____
    block = []
    for i, size in enumerate(shape):
        entry = spec[i] if i < len(spec) else None
        if entry is None:
            block.append(size)  # en: not split | de: nicht aufgeteilt
            continue
        axes = (entry,) if isinstance(entry, str) else entry
        block.append(size // math.prod(mesh_shape[a] for a in axes))
    return tuple(block)
    ### END SOLUTION


q2.check(shard_shape)

# %%
# q2.hint()
# q2.solution()

# %% [markdown] lang="en"
# ## 3. A data-parallel gradient
#
# Write `dp_grads(loss_fn, params, x, y, mesh)`: the gradient of `loss_fn(params, x, y)` with respect
# to `params` (a dict of arrays), computed **data-parallel** on `mesh`, a line of 8 devices with the
# axis `"data"`: the rows of `x` and `y` split over the devices, `params` replicated. It must equal the
# gradient on one device. The check looks inside `loss_fn` to see how `x` arrives there.

# %% [markdown] lang="de"
# ## 3. Ein datenparalleler Gradient
#
# Schreib `dp_grads(loss_fn, params, x, y, mesh)`: den Gradienten von `loss_fn(params, x, y)` nach
# `params` (ein dict von Arrays), **datenparallel** gerechnet auf `mesh`, einer Reihe von 8 Geräten
# mit der Achse `"data"`: die Zeilen von `x` und `y` über die Geräte verteilt, `params` repliziert. Er
# muss gleich dem Gradienten auf einem Gerät sein. Die Prüfung schaut in `loss_fn` hinein, wie `x` dort
# ankommt.


# %%
import jax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


def dp_grads(loss_fn, params, x, y, mesh):
    ### BEGIN SOLUTION
    # STARTER: return ____
    batch = NamedSharding(mesh, P("data"))  # en: rows split 8 ways | de: Zeilen in 8 Teile
    replicated = NamedSharding(mesh, P())  # en: a copy on every device | de: eine Kopie je Gerät
    params = jax.device_put(params, replicated)
    x, y = jax.device_put(x, batch), jax.device_put(y, batch)
    return jax.jit(jax.grad(loss_fn))(params, x, y)
    ### END SOLUTION


q3.check(dp_grads)

# %%
# q3.hint()
# q3.solution()

# %% [markdown] lang="en"
# ## 4. Batching with vmap
#
# `predict(w, x)` is written for **one** example `x` (a vector). Write `predict_all(predict, w, xs)`:
# the predictions for every row of `xs`, as one array with one row per example, using `jax.vmap`
# rather than a Python loop.

# %% [markdown] lang="de"
# ## 4. Batches mit vmap
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


q4.check(predict_all)

# %%
# q4.hint()
# q4.solution()

# %% [markdown] lang="en"
# How much faster is it? Once q4 passes, the cell below times your `predict_all` (jitted) against a
# Python loop that calls a jitted `predict` once per example, over the same 256 examples, with the
# course's timer.

# %% [markdown] lang="de"
# Wie viel schneller ist das? Sobald q4 bestanden ist, misst die Zelle unten dein `predict_all`
# (gejittet) gegen eine Python-Schleife, die ein gejittetes `predict` einmal pro Beispiel aufruft, über
# dieselben 256 Beispiele, mit dem Timer des Kurses.

# %%
from utils.bench import measure
from utils.checks import PASSED


def predict(w, x):
    return jnp.tanh(w @ x)


if q4.result is not None and q4.result.status == PASSED:
    w = jax.random.normal(jax.random.key(0), (16, 64))
    xs = jax.random.normal(jax.random.key(1), (256, 64))
    predict_one = jax.jit(predict)
    looped = measure(lambda w, xs: jnp.stack([predict_one(w, x) for x in xs]), w, xs, name="loop")
    batched = measure(jax.jit(lambda w, xs: predict_all(predict, w, xs)), w, xs, name="vmap")
    print(looped, batched, sep="\n")
    say(
        "vmap is {x:.0f}× as fast as the Python loop: one call instead of {n} calls, each with "
        "its own dispatch.",
        "vmap ist {x:.0f}-mal so schnell wie die Python-Schleife: ein Aufruf statt {n} Aufrufen "
        "mit je eigenem Dispatching.",
        x=looped.median / batched.median,
        n=len(xs),
    )
else:
    say("Solve q4 first, then run this cell.", "Löse zuerst q4 und führe dann diese Zelle aus.")

# %% [markdown] lang="en"
# ## Your score
#
# Run the cell below. A trainer grades the same way: `python -m utils.grade` runs your notebook from
# top to bottom and reads this table (see `labs/README.md`).
#
# **Next:** lesson 05 trains a model end to end on an accelerator.

# %% [markdown] lang="de"
# ## Deine Punkte
#
# Führe die Zelle unten aus. Trainerinnen und Trainer bewerten genauso: `python -m utils.grade` führt
# dein Notebook von oben nach unten aus und liest diese Tabelle (siehe `labs/README.md`).
#
# **Weiter:** Lektion 05 trainiert ein Modell von Anfang bis Ende auf einem Beschleuniger.

# %%
lab.score()
