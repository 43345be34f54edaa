# ---
# jupyter:
#   course:
#     accelerator: TPU
#     duration:
#       cpu: 30
#       t4: 30
#       tpu: 30
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
#       de: "JAX und TPU: jit, Kompilieren und Ger\xE4te"
#       en: 'JAX on TPU: jit, compiling and devices'
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# TPUs are programmed mostly through **JAX**: NumPy's interface, compiled by XLA for CPUs, GPUs and
# TPUs. This lesson teaches JAX on **one** accelerator the way it is used on TPUs today, and it runs
# everywhere: on a laptop, on Colab's one-device TPU v5e-1 and on Kaggle's eight-device TPU v5e-8.
# You will
#
# - learn JAX in one page if you know PyTorch: `jax.numpy`, pure functions, explicit random keys,
#   `jit`, `grad`, `vmap`;
# - measure compile time and run time separately, watch a new shape trigger a recompile, and meet the
#   asynchronous-dispatch trap again;
# - list devices and place arrays on them;
# - see why TPUs like bf16 and large, fixed shapes, and time the same matmul in JAX and PyTorch.
#
# Splitting one array over several devices (meshes, `NamedSharding`, `shard_map`) is lesson 08's
# topic. Run the setup cell, then the code cell of section 0, **before anything else**: it decides
# how many CPU devices JAX will have.

# %% [markdown] lang="de"
# TPUs programmierst du vor allem mit **JAX**: die Schnittstelle von NumPy, von XLA für CPUs, GPUs
# und TPUs kompiliert. Diese Lektion zeigt JAX auf **einem** Beschleuniger so, wie es heute auf TPUs
# eingesetzt wird, und sie läuft überall: auf dem Laptop, auf Colabs TPU v5e-1 mit einem Gerät und
# auf Kaggles TPU v5e-8 mit acht Geräten. Du wirst
#
# - JAX auf einer Seite kennenlernen, wenn du PyTorch kennst: `jax.numpy`, reine Funktionen,
#   explizite Zufallsschlüssel, `jit`, `grad`, `vmap`;
# - Kompilierzeit und Laufzeit getrennt messen, zusehen, wie eine neue Form neu kompiliert wird, und
#   der Falle des asynchronen Dispatchings wieder begegnen;
# - Geräte auflisten und Arrays darauf ablegen;
# - sehen, warum TPUs bf16 und große, feste Formen mögen, und dieselbe Matrixmultiplikation in JAX
#   und PyTorch messen.
#
# Ein Array auf mehrere Geräte aufzuteilen (Meshes, `NamedSharding`, `shard_map`) ist das Thema von
# Lektion 08. Führe die Setup-Zelle aus und gleich danach die Code-Zelle von Abschnitt 0, **vor
# allem anderen**: Sie legt fest, wie viele CPU-Geräte JAX haben wird.

# %% [markdown] lang="en"
# ## 0. Two CPU devices, before JAX starts
#
# Section 3 moves arrays between devices, so it needs two. A laptop and the CI machines have one
# CPU, but JAX can split it into **simulated devices**, each with its own memory. JAX reads their
# number **once**, when it starts its backends (at the first array, the first `jax.devices()` call
# or computation); importing jax does not start them. So this cell comes first:
# `jaxdevices.simulate_cpu_devices(2)` runs `jax.config.update("jax_num_cpu_devices", 2)` (open
# `utils/parallel/jaxdevices.py` to read it). Computed with JAX earlier in this kernel? The cell says so and
# how to restart. On a GPU or TPU the accelerator stays JAX's default device.

# %% [markdown] lang="de"
# ## 0. Zwei CPU-Geräte, bevor JAX startet
#
# Abschnitt 3 verschiebt Arrays zwischen Geräten, braucht also zwei. Ein Laptop und die CI-Maschinen
# haben eine CPU, aber JAX kann sie in **simulierte Geräte** aufteilen, jedes mit eigenem Speicher.
# JAX liest ihre Anzahl **ein einziges Mal**, wenn es seine Backends startet (beim ersten Array,
# beim ersten Aufruf von `jax.devices()` oder bei der ersten Rechnung); `import jax` allein startet
# sie nicht. Deshalb kommt diese Zelle zuerst: `jaxdevices.simulate_cpu_devices(2)` führt
# `jax.config.update("jax_num_cpu_devices", 2)` aus (öffne `utils/parallel/jaxdevices.py`, um es zu
# lesen). Hast du in diesem Kernel schon mit JAX gerechnet? Dann sagt dir die Zelle das und wie du
# neu startest. Auf einer GPU oder TPU bleibt der Beschleuniger das Standardgerät von JAX.

# %%
import jax

from utils.i18n import say, text
from utils.parallel import jaxdevices

# en: before any JAX array exists
# de: bevor es ein JAX-Array gibt
cpu_count = jaxdevices.simulate_cpu_devices(2)

import time

import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import torch

from utils import diagrams, units
from utils.platform import hardware, profiles, runtime
from utils.platform.chips import CHIPS
from utils.predict import reveal
from utils.timing import bench

hw = hardware.detect()
profile = profiles.hardware_profile(runtime.detect_platform(), hw)
backend = jax.default_backend()
print("jax", jax.__version__, "|", profile.label, "|", hw.summary())
say(
    "JAX's default backend: {backend} with {n} device(s); CPU backend: {cpus} device(s)",
    "Standard-Backend von JAX: {backend} mit {n} Gerät(en); CPU-Backend: {cpus} Gerät(e)",
    backend=backend,
    n=len(jax.devices()),
    cpus=cpu_count,
)


# en: How close two float32 results must be. On a CPU they differ only by the order of the
# en: additions; a TPU's default matmul precision uses bf16 passes (section 4), recent NVIDIA GPUs
# en: use TF32.
# de: Wie nah zwei float32-Ergebnisse beieinander liegen müssen. Auf einer CPU unterscheiden sie
# de: sich nur durch die Reihenfolge der Additionen; die Standardgenauigkeit einer TPU rechnet
# de: Matmuls in bf16-Durchgängen (Abschnitt 4), neuere NVIDIA-GPUs nutzen TF32.
def tolerance(platform: str) -> dict:
    return {"rtol": 1e-4, "atol": 1e-4} if platform == "cpu" else {"rtol": 2e-2, "atol": 2e-2}


TOL = tolerance(backend)

# %% [markdown] lang="en"
# ## 1. JAX in one page, for PyTorch users
#
# | | PyTorch | JAX |
# |---|---|---|
# | arrays | `torch.Tensor`, changed in place (`x[0] = 1`, `x.add_()`) | `jax.Array`, **immutable**: `x.at[0].set(1)` returns a new array |
# | functions | modules with state (`nn.Linear` holds its weights) | **pure functions**: parameters go in as arguments, results come out |
# | randomness | a global generator (`torch.manual_seed`) | an explicit **key** you pass and split |
# | gradients | `loss.backward()` fills `.grad` | `jax.grad(loss)` is a new function that returns the gradient |
# | speed | eager by default, `torch.compile` optional | `jax.jit` traces once and compiles with XLA |
# | batching | write the batch dimension yourself | `jax.vmap` adds it to a one-example function |
#
# Start with the arrays:

# %% [markdown] lang="de"
# ## 1. JAX auf einer Seite, für alle, die PyTorch kennen
#
# | | PyTorch | JAX |
# |---|---|---|
# | Arrays | `torch.Tensor`, wird an Ort und Stelle geändert (`x[0] = 1`, `x.add_()`) | `jax.Array`, **unveränderlich**: `x.at[0].set(1)` gibt ein neues Array zurück |
# | Funktionen | Module mit Zustand (`nn.Linear` hält seine Gewichte) | **reine Funktionen**: Parameter gehen als Argumente hinein, Ergebnisse kommen heraus |
# | Zufall | ein globaler Generator (`torch.manual_seed`) | ein expliziter **Schlüssel** (key), den du weitergibst und teilst |
# | Gradienten | `loss.backward()` füllt `.grad` | `jax.grad(loss)` ist eine neue Funktion, die den Gradienten zurückgibt |
# | Tempo | standardmäßig eager, `torch.compile` optional | `jax.jit` tract die Funktion einmal und kompiliert sie mit XLA |
# | Batches | die Batch-Dimension schreibst du selbst | `jax.vmap` fügt sie einer Funktion für ein Beispiel hinzu |
#
# Zuerst die Arrays:

# %%
x = jnp.arange(6.0).reshape(2, 3)
print(x, x.dtype)
try:
    x[0, 0] = 10.0
    changed_in_place = True
except TypeError as err:
    changed_in_place = False
    say(
        "In-place assignment fails: {e} ...",
        "Zuweisung an Ort und Stelle scheitert: {e} …",
        e=str(err).splitlines()[0][:80],
    )
# en: a new array; x stays as it was
# de: ein neues Array; x bleibt, wie es war
y = x.at[0, 0].set(10.0)
say("x[0, 0] = {x:.1f} | y[0, 0] = {y:.1f}", x=float(x[0, 0]), y=float(y[0, 0]))
assert not changed_in_place and x[0, 0] == 0 and y[0, 0] == 10
# en: JAX's default; numpy's would be float64
# de: Standard von JAX; bei numpy wäre es float64
assert x.dtype == jnp.float32

# %% [markdown] lang="en"
# Random numbers come from a **key**. The same key always gives the same numbers; for new numbers you
# split a key into new ones. No hidden global state means a function gives the same result wherever,
# and on however many devices, it runs.

# %% [markdown] lang="de"
# Zufallszahlen kommen aus einem **Schlüssel**. Derselbe Schlüssel liefert immer dieselben Zahlen;
# für neue Zahlen teilst du einen Schlüssel in neue auf. Weil es keinen versteckten globalen Zustand
# gibt, liefert eine Funktion dasselbe Ergebnis, wo auch immer und auf wie vielen Geräten auch immer
# sie läuft.

# %%
key = jax.random.key(0)
first = jax.random.normal(key, (3,))
again = jax.random.normal(key, (3,))
key_a, key_b = jax.random.split(key)
other = jax.random.normal(key_a, (3,))
print(first, again, other, sep="\n")
assert (first == again).all() and not (first == other).all()

# %% [markdown] lang="en"
# `jax.grad` turns a function into its gradient function. Here it is for a mean squared error,
# checked against the formula and against PyTorch's autograd:

# %% [markdown] lang="de"
# `jax.grad` macht aus einer Funktion ihre Gradientenfunktion. Hier für einen mittleren
# quadratischen Fehler, verglichen mit der Formel und mit Autograd von PyTorch:


# %%
def mse(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


key_w, key_x, key_y = jax.random.split(jax.random.key(1), 3)
w = jax.random.normal(key_w, (3,))
X = jax.random.normal(key_x, (5, 3))
Y = jax.random.normal(key_y, (5,))

grad_jax = jax.grad(mse)(w, X, Y)  # en: derivative with respect to w | de: Ableitung nach w
grad_formula = 2 / len(X) * X.T @ (X @ w - Y)

w_torch = torch.tensor(np.asarray(w), requires_grad=True)
loss_torch = ((torch.tensor(np.asarray(X)) @ w_torch - torch.tensor(np.asarray(Y))) ** 2).mean()
loss_torch.backward()
say(
    "jax.grad: {j:.5f} | torch: {t:.5f}",
    j=np.asarray(grad_jax).tolist(),
    t=w_torch.grad.numpy().tolist(),
)
assert np.allclose(grad_jax, grad_formula, **TOL) and np.allclose(grad_jax, w_torch.grad, **TOL)

# %% [markdown] lang="en"
# `jax.jit` **traces** a function: it runs the Python code once with placeholders (tracers) that
# record each operation, and XLA compiles the recording. A Python side effect, such as appending to a
# list, therefore happens only while tracing. `jax.make_jaxpr` shows the recording:

# %% [markdown] lang="de"
# `jax.jit` **tract** eine Funktion: Es führt den Python-Code einmal mit Platzhaltern
# (Tracern) aus, die jede Operation aufzeichnen, und XLA kompiliert die Aufzeichnung. Ein
# Python-Nebeneffekt, etwa das Anhängen an eine Liste, passiert deshalb nur beim Tracing.
# `jax.make_jaxpr` zeigt die Aufzeichnung:

# %%
traced_with = []


def scaled_tanh(x, scale):
    traced_with.append(str(x))  # en: runs only while JAX traces | de: läuft nur, während JAX tract
    return jnp.tanh(x * scale)


fast_tanh = jax.jit(scaled_tanh)
v = jnp.linspace(-2.0, 2.0, 5)
# en: same shapes and types
# de: gleiche Formen und Typen
out_2, out_3 = fast_tanh(v, 2.0), fast_tanh(v, 3.0)
say(
    "traced {n} time(s), with {x}", "{n}-mal getract, mit {x}", n=len(traced_with), x=traced_with[0]
)
assert len(traced_with) == 1
print(jax.make_jaxpr(scaled_tanh)(v, 2.0))

# %% tags=["guard"] jupyter={"source_hidden": true}
assert np.allclose(out_3, np.tanh(3 * np.asarray(v)), rtol=1e-5, atol=1e-6)

# %% [markdown] lang="en"
# `jax.vmap` takes a function written for **one** example and returns one for a batch. `in_axes`
# says which argument has the batch dimension (`None`: shared by all examples, like the weights):

# %% [markdown] lang="de"
# `jax.vmap` nimmt eine Funktion, die für **ein** Beispiel geschrieben ist, und gibt eine für einen
# Batch zurück. `in_axes` sagt, welches Argument die Batch-Dimension hat (`None`: für alle Beispiele
# gleich, wie die Gewichte):


# %%
# en: example: one vector of 4 features
# de: example: ein Vektor mit 4 Merkmalen
def predict(weights, example):
    return jnp.tanh(weights @ example)


weights = jax.random.normal(jax.random.key(2), (3, 4))
examples = jax.random.normal(jax.random.key(3), (6, 4))
looped = jnp.stack([predict(weights, e) for e in examples])
batched = jax.vmap(predict, in_axes=(None, 0))(weights, examples)
say("batched result: {s}", "Ergebnis für den Batch: {s}", s=batched.shape)
assert batched.shape == (6, 3) and np.allclose(batched, looped, **TOL)

# %% [markdown] lang="en"
# ## 2. Compile time and run time
#
# `jax.jit(f)` compiles nothing yet. The first call traces and compiles, later calls with the same
# shapes and dtypes reuse the compiled program. The ahead-of-time API splits the steps, so each can
# be timed on its own: `.lower(args)` traces, `.compile()` compiles. The run time then comes from the
# course's timer (lesson 01), which waits for the result and reports the median of many calls.

# %% [markdown] lang="de"
# ## 2. Kompilierzeit und Laufzeit
#
# `jax.jit(f)` kompiliert noch nichts. Der erste Aufruf tract und kompiliert, spätere Aufrufe mit
# denselben Formen und Datentypen benutzen das kompilierte Programm wieder. Die Ahead-of-time-API
# trennt die Schritte, sodass sich jeder einzeln messen lässt: `.lower(args)` tract, `.compile()`
# kompiliert. Die Laufzeit misst dann der Timer des Kurses (Lektion 01), der auf das Ergebnis wartet
# und den Median vieler Aufrufe angibt.

# %% [markdown] lang="en"
# **Predict first.** The function below is four layers, each a matmul of two 256×256 matrices
# (on a CPU) and a ReLU. Compiling it runs XLA's whole compiler once. How many runs of the compiled
# program cost as much time as that one compilation? Write a number, then run the two cells.

# %% [markdown] lang="de"
# **Erst schätzen.** Die Funktion unten besteht aus vier Schichten, jede eine Matmul zweier
# 256×256-Matrizen (auf einer CPU) und eine ReLU. Beim Kompilieren läuft einmal der ganze Compiler
# von XLA. Wie viele Läufe des kompilierten Programms kosten so viel Zeit wie diese eine
# Kompilierung? Schreib eine Zahl hin, dann führe die beiden Zellen aus.

# %%
my_compile_in_runs = None  # en: your guess, e.g. 10 | de: deine Schätzung, z. B. 10

# %%
n = profile.pick(cpu=256, cuda=2048, tpu=2048, mps=256)
depth = 4
layer_keys = jax.random.split(jax.random.key(4), depth)
layers = [jax.random.normal(k, (n, n)) / np.sqrt(n) for k in layer_keys]
batch = jax.random.normal(jax.random.key(5), (n, n))


def mlp(layers, x):
    for w in layers:
        x = jax.nn.relu(x @ w)
    return x


start = time.perf_counter()
# en: trace: run the Python once, record the operations
# de: tracen: den Python-Code einmal ausführen, die Operationen aufzeichnen
lowered = jax.jit(mlp).lower(layers, batch)
trace_s = time.perf_counter() - start
start = time.perf_counter()
# en: XLA: machine code for this device and these shapes
# de: XLA: Maschinencode für dieses Gerät und diese Formen
compiled = lowered.compile()
compile_s = time.perf_counter() - start
run = bench.measure(compiled, layers, batch, flops=depth * 2 * n**3, dtype=jnp.float32, name="mlp")
print(run)
say(
    "trace {t:.1f} ms + compile {c:.1f} ms, then {r:.2f} ms per run: "
    "compiling costs as much as {k:.0f} runs.",
    "Tracing {t:.1f} ms + Kompilieren {c:.1f} ms, danach {r:.2f} ms pro Lauf: "
    "Kompilieren kostet so viel wie {k:.0f} Läufe.",
    t=trace_s * 1e3,
    c=compile_s * 1e3,
    r=run.median * 1e3,
    k=compile_s / run.median,
)
reveal(my_compile_in_runs, compile_s / run.median, unit=text("runs", "Läufe"))

# %% tags=["guard"] jupyter={"source_hidden": true}
assert np.allclose(compiled(layers, batch), mlp(layers, batch), **TOL)

# %% [markdown] lang="en"
# The same three measurements on one time axis: the first call of a fresh `jax.jit` pays for all
# three phases, every later call with the same shapes only for the run.

# %% [markdown] lang="de"
# Dieselben drei Messungen auf einer Zeitachse: Der erste Aufruf eines frischen `jax.jit` bezahlt
# alle drei Phasen, jeder weitere Aufruf mit denselben Formen nur den Lauf.

# %%
tracing, compiling = (
    (text("trace", "Tracing"), trace_s),
    (text("compile", "Kompilieren"), compile_s),
)
running = (text("run", "Lauf"), run.median)
diagrams.timeline(
    [
        (text("first call", "erster Aufruf"), [tracing, compiling, running]),
        (text("every later call", "jeder weitere Aufruf"), [running]),
    ],
    text(
        "jax.jit on {backend}: trace and compile once, then run (measured)",
        "jax.jit auf {backend}: einmal tracen und kompilieren, dann laufen (gemessen)",
        backend=backend,
    ),
)
plt.show()

# %% [markdown] lang="en"
# The first call of a jitted function pays for tracing and compiling, which is why the course's timer
# reports that "cold" call on its own line ("first call" above is the first call of the already
# compiled program; for a fresh `jax.jit` it would include the compilation).
#
# ### A new shape is a new program
#
# XLA compiles for **fixed shapes and dtypes**. Call a jitted function with a shape it has not seen,
# and it traces and compiles again. The list below records each trace. **Predict first:** the
# function is called with vectors of lengths 1000, 1000, 1001, 1000, 1002 and 1001. How many
# times will JAX trace it?

# %% [markdown] lang="de"
# Der erste Aufruf einer gejitteten Funktion bezahlt Tracing und Kompilieren; deshalb gibt der Timer
# des Kurses diesen „kalten“ Aufruf in einer eigenen Zeile an („erster Aufruf“ oben ist der erste
# Aufruf des schon kompilierten Programms; bei einem frischen `jax.jit` enthielte er das
# Kompilieren).
#
# ### Eine neue Form ist ein neues Programm
#
# XLA kompiliert für **feste Formen und Datentypen**. Rufst du eine gejittete Funktion mit einer
# Form auf, die sie noch nicht kennt, tract und kompiliert sie erneut. Die Liste unten zeichnet
# jedes Tracing auf. **Erst schätzen:** Die Funktion wird mit Vektoren der Längen 1000, 1000, 1001,
# 1000, 1002 und 1001 aufgerufen. Wie oft tract JAX sie?

# %%
my_traces = None  # en: your guess | de: deine Schätzung

# %%
traced_shapes = []


@jax.jit
def standardise(v):
    traced_shapes.append(v.shape)
    return (v - v.mean()) / (v.std() + 1e-6)


lengths = [1000, 1000, 1001, 1000, 1002, 1001]
inputs = [jax.random.normal(jax.random.key(length), (length,)) for length in lengths]
yes, no = text("yes", "ja"), text("no", "nein")
calls = []
say("length   traced?   time", "Länge    getract?  Zeit")
for length, values in zip(lengths, inputs, strict=True):
    before = len(traced_shapes)
    start = time.perf_counter()
    standardise(values).block_until_ready()
    seconds = time.perf_counter() - start
    again = len(traced_shapes) > before
    calls.append((again, seconds))
    print(f"{length:6}   {yes if again else no:8}  {units.format_seconds(seconds)}")
assert traced_shapes == [(1000,), (1001,), (1002,)]
recompiles = [seconds for again, seconds in calls if again]
cached = [seconds for again, seconds in calls if not again]
say(
    "each new shape cost {lo} – {hi} (trace + compile), a cached call {c}: one compilation of "
    "this tiny function costs at least as much as {k:,.0f} cached calls on this {backend}.",
    "jede neue Form kostete {lo} – {hi} (Tracing + Kompilieren), ein Aufruf aus dem Cache {c}: "
    "Eine Kompilierung dieser winzigen Funktion kostet hier ({backend}) mindestens so viel wie "
    "{k:,.0f} Aufrufe aus dem Cache.",
    lo=units.format_seconds(min(recompiles)),
    hi=units.format_seconds(max(recompiles)),
    c=units.format_seconds(max(cached)),
    k=min(recompiles) / max(cached),
    backend=backend,
)
reveal(my_traces, len(traced_shapes), unit=text("traces", "Tracings"))

# %% [markdown] lang="en"
# Three lengths, three compilations, and the cell measured what each cost on this device. Even for
# a function of three operations a compilation is not cheap: XLA runs its whole compiler for every
# new shape, and the first call of a function also pays for setting up `jit` itself. A large model
# compiles for longer on any device; that is why JAX can keep compiled programs on disk between
# runs (JAX documentation, "Persistent compilation cache", reviewed 2024-11-07). On a TPU, run this
# cell to see its figures. Batches of varying length (sentences, the last smaller batch of an
# epoch) recompile again and again. Section 4 shows the cure: pad to a few fixed sizes.
#
# ### The asynchronous-dispatch trap, once more
#
# A jitted call returns as soon as the work is **queued**; the array it returns is a promise.
# `block_until_ready()` waits until the work is done. You met this trap in lesson 01; here it is in
# one call:

# %% [markdown] lang="de"
# Drei Längen, drei Kompilierungen, und die Zelle hat gemessen, was jede auf diesem Gerät gekostet
# hat. Selbst bei einer Funktion aus drei Operationen ist Kompilieren nicht billig: XLA lässt für
# jede neue Form seinen ganzen Compiler laufen, und der erste Aufruf einer Funktion bezahlt
# zusätzlich das Einrichten von `jit`. Ein großes Modell braucht auf jedem Gerät länger; deshalb
# kann JAX kompilierte Programme zwischen zwei Läufen auf der Festplatte aufheben
# (JAX-Dokumentation, „Persistent compilation cache“, abgerufen im November 2024). Auf einer TPU
# führst du die Zelle aus und siehst ihre Zahlen. Batches wechselnder Länge (Sätze, der kleinere
# letzte Batch einer Epoche) kompilieren wieder und wieder. Abschnitt 4 zeigt das Gegenmittel: auf
# wenige feste Größen auffüllen (Padding).
#
# ### Die Falle des asynchronen Dispatchings, noch einmal
#
# Ein gejitteter Aufruf kehrt zurück, sobald die Arbeit **eingereiht** ist; das Array, das er
# zurückgibt, ist ein Versprechen. `block_until_ready()` wartet, bis die Arbeit erledigt ist. Diese
# Falle kennst du aus Lektion 01; hier ist sie in einem einzigen Aufruf:

# %%
size = profile.pick(cpu=1024, cuda=8192, tpu=8192, mps=1024)
big = jax.random.normal(jax.random.key(6), (size, size))
square = jax.jit(lambda a: a @ a)
# en: compiled and warm: below, only the waiting differs
# de: kompiliert und aufgewärmt: Unten unterscheidet sich nur das Warten
square(big).block_until_ready()

start = time.perf_counter()
result = square(big)
# en: what a stopwatch around the call shows
# de: was eine Stoppuhr um den Aufruf zeigt
returned_s = time.perf_counter() - start
result.block_until_ready()
# en: when the result really exists
# de: wann das Ergebnis wirklich da ist
done_s = time.perf_counter() - start
say(
    "the call returned after {r}, the result was ready after {d}",
    "der Aufruf kehrte nach {r} zurück, das Ergebnis war nach {d} fertig",
    r=units.format_seconds(returned_s),
    d=units.format_seconds(done_s),
)
assert returned_s <= done_s

# %% [markdown] lang="en"
# ## 3. Devices
#
# `jax.devices()` lists the devices of the default backend (TPU before GPU before CPU);
# `jax.devices("cpu")` lists the CPU's. Compare devices by their attributes (`platform`, `id`,
# `device_kind`), never by their printed names: JAX 0.10 renamed `TFRT_CPU_0` to `cpu:0`, and Colab
# runs 0.7.2.

# %% [markdown] lang="de"
# ## 3. Geräte
#
# `jax.devices()` listet die Geräte des Standard-Backends auf (TPU vor GPU vor CPU),
# `jax.devices("cpu")` die der CPU. Vergleiche Geräte über ihre Attribute (`platform`, `id`,
# `device_kind`), nie über ihre ausgegebenen Namen: JAX 0.10 hat `TFRT_CPU_0` in `cpu:0` umbenannt,
# und Colab verwendet 0.7.2.

# %%
for device in jax.devices():
    say(
        "{p:4} id={i}  kind={k!r}  printed as {d}",
        "{p:4} id={i}  kind={k!r}  ausgegeben als {d}",
        p=device.platform,
        i=device.id,
        k=device.device_kind,
        d=device,
    )
cpus = jax.devices("cpu")

# %% tags=["guard"] jupyter={"source_hidden": true}
assert len(cpus) == cpu_count and all(d.platform == "cpu" for d in cpus)

# %% [markdown] lang="en"
# A new array lands on the default device. `jax.device_put(x, device)` copies it to a device and
# **commits** it there: computations with it run on that device. Two arrays committed to different
# devices do not mix, just like PyTorch's "Expected all tensors to be on the same device":

# %% [markdown] lang="de"
# Ein neues Array landet auf dem Standardgerät. `jax.device_put(x, device)` kopiert es auf ein Gerät
# und **bindet** es dort (committed): Rechnungen damit laufen auf diesem Gerät. Zwei Arrays, die an
# verschiedene Geräte gebunden sind, lassen sich nicht mischen, genau wie bei PyTorchs „Expected all
# tensors to be on the same device“:

# %%
a = jnp.arange(4.0)  # en: on the default device | de: auf dem Standardgerät
b = jax.device_put(a, cpus[1])  # en: a copy, committed to CPU 1 | de: eine Kopie, an CPU 1 gebunden
doubled = b * 2  # en: runs where b lives | de: läuft dort, wo b liegt
say(
    "a lives on {a} | b * 2 was computed on {b}",
    "a liegt auf {a} | b * 2 wurde berechnet auf {b}",
    a=[jaxdevices.device_label(d) for d in a.devices()],
    b=[jaxdevices.device_label(d) for d in doubled.devices()],
)
try:
    b + jax.device_put(a, cpus[0])
    mixed = True
except ValueError as err:
    mixed = False
    print("CPU 1 + CPU 0:", str(err)[:90], "...")
assert doubled.devices() == {cpus[1]} and not mixed

# %% [markdown] lang="en"
# ### What you should see
#
# | profile | `jax.default_backend()` | `jax.devices()` | `device_kind` |
# |---|---|---|---|
# | CPU (laptop, CI) | `cpu` | 2 × `CpuDevice` (simulated) | `cpu` |
# | Colab T4 | `gpu` | 1 × `CudaDevice` | `Tesla T4` |
# | Kaggle T4 x2 | `gpu` | 2 × `CudaDevice` | `Tesla T4` |
# | Colab TPU v5e-1 | `tpu` | 1 × `TpuDevice` | `TPU v5 lite` |
# | Kaggle TPU v5e-8 | `tpu` | 8 × `TpuDevice` (8 chips, linked chip to chip: lesson 08) | `TPU v5 lite` |
# | Mac (MPS) | `cpu` | 2 × `CpuDevice` (JAX has no MPS backend by default) | `cpu` |
#
# *As of November 2026. Sources: Colab's package lists (googlecolab/backend-info: jax 0.7.2 with its
# CUDA plugin on GPU runtimes), googlecolab/colabtools#5566 (TPU v5e-1 replaced the v2-8 in September
# 2025), jax-ml/jax-ai-stack#242 ("can no longer demo SPMD on Colab", Kaggle's v5e-8); JAX reports a
# v5e chip as "TPU v5 lite" (marin-community/marin#2195).*

# %% [markdown] lang="de"
# ### Was du sehen solltest
#
# | Profil | `jax.default_backend()` | `jax.devices()` | `device_kind` |
# |---|---|---|---|
# | CPU (Laptop, CI) | `cpu` | 2 × `CpuDevice` (simuliert) | `cpu` |
# | Colab T4 | `gpu` | 1 × `CudaDevice` | `Tesla T4` |
# | Kaggle T4 x2 | `gpu` | 2 × `CudaDevice` | `Tesla T4` |
# | Colab TPU v5e-1 | `tpu` | 1 × `TpuDevice` | `TPU v5 lite` |
# | Kaggle TPU v5e-8 | `tpu` | 8 × `TpuDevice` (8 Chips, direkt verbunden: Lektion 08) | `TPU v5 lite` |
# | Mac (MPS) | `cpu` | 2 × `CpuDevice` (JAX hat standardmäßig kein MPS-Backend) | `cpu` |
#
# *Stand: November 2026. Quellen: Colabs Paketlisten (googlecolab/backend-info: jax 0.7.2 mit
# CUDA-Plugin auf GPU-Laufzeiten), googlecolab/colabtools#5566 (TPU v5e-1 ersetzt seit September
# 2025 die v2-8), jax-ml/jax-ai-stack#242 („can no longer demo SPMD on Colab“, Kaggles v5e-8); JAX
# meldet einen v5e-Chip als „TPU v5 lite“ (marin-community/marin#2195).*

# %% [markdown] lang="en"
# ## 4. What a TPU likes: bf16 and large, fixed shapes
#
# A TPU's matrix units (MXUs; a v5e has four in its one TensorCore, lesson 00) are systolic arrays
# that multiply **bf16** numbers and add them up in float32. Its data sheet has no float32 peak at all. A float32 matmul still works: at JAX's default
# precision the TPU rounds the inputs to bf16 passes; `precision="highest"` asks for full float32 at
# several times the cost. On a CPU the default is exact float32. The cell measures the relative error
# of each variant against a float64 reference on this machine:

# %% [markdown] lang="de"
# ## 4. Was eine TPU mag: bf16 und große, feste Formen
#
# Die Matrixeinheiten einer TPU (MXUs; eine v5e hat vier in ihrem einen TensorCore, Lektion 00) sind
# systolische Arrays, die **bf16**-Zahlen multiplizieren und in float32 aufsummieren. Ihr Datenblatt
# nennt gar keinen float32-Spitzenwert. Eine float32-Matrixmultiplikation funktioniert trotzdem: Mit
# der Standardgenauigkeit von JAX rechnet die TPU die Eingaben in bf16-Durchgängen;
# `precision="highest"` verlangt volles float32, zum mehrfachen Preis. Auf einer CPU ist der
# Standard exaktes float32. Die Zelle misst den relativen Fehler jeder Variante im Vergleich zu
# einer float64-Referenz auf dieser Maschine:

# %%
rng = np.random.default_rng(0)
a64 = rng.standard_normal((512, 512))
exact = a64 @ a64  # en: float64 on the host: the reference | de: float64 auf dem Host: die Referenz
a32 = jnp.asarray(a64, dtype=jnp.float32)
a16 = a32.astype(jnp.bfloat16)


def relative_error(result) -> float:
    return float(np.linalg.norm(np.asarray(result, np.float64) - exact) / np.linalg.norm(exact))


errors = {
    "float32, precision='highest'": relative_error(jnp.matmul(a32, a32, precision="highest")),
    text("float32, default precision", "float32, Standardgenauigkeit"): relative_error(a32 @ a32),
    "bfloat16": relative_error(a16 @ a16),
}
relative = text("relative error", "relativer Fehler")
for variant, error in errors.items():
    say("{v:34} {relative} {e:.1e}", v=variant, relative=relative, e=error)
say(
    "bf16 keeps 8 significant bits: a relative rounding error up to 2^-8 = {eps:.1e} per number; "
    "it halves the bytes: {b16:.1f} MiB instead of {b32:.1f} MiB.",
    "bf16 behält 8 signifikante Bits, also einen relativen Rundungsfehler von bis zu 2^-8 "
    "≈ {percent:.2f} % pro Zahl, und halbiert die Bytes: {b16:.1f} MiB statt {b32:.1f} MiB.",
    eps=2**-8,
    percent=100 * 2**-8,
    b16=a16.nbytes / 2**20,
    b32=a32.nbytes / 2**20,
)
v5e = CHIPS["TPU v5e"]
f32 = v5e.tflops.get("float32")
say(
    "TPU v5e peak ({source}, {date}): {bf16:.0f} TFLOP/s in bf16, float32: {f32}",
    "Spitzenleistung der TPU v5e ({source}, {date}): {bf16:.0f} TFLOP/s in bf16, float32: {f32}",
    source=v5e.source,
    date=v5e.checked,
    bf16=v5e.tflops["bfloat16"],
    f32=text("no figure", "keine Angabe") if f32 is None else f32,
)
assert errors["bfloat16"] < 2**-6 and a16.nbytes * 2 == a32.nbytes
if backend == "cpu":
    # en: a CPU computes float32 exactly
    # de: Eine CPU rechnet float32 exakt
    assert max(list(errors.values())[:2]) < 1e-5

# %% [markdown] lang="en"
# On a TPU the middle line lands near the bf16 line (JAX's documentation of `jax.lax.Precision`:
# the default "performs computations in bfloat16" on TPUs); on a CPU or a T4 it stays near float32's
# 1e-7. Now the speed of both dtypes on this device, at the profile's size:

# %% [markdown] lang="de"
# Auf einer TPU landet die mittlere Zeile nahe an der bf16-Zeile (JAX-Dokumentation zu
# `jax.lax.Precision`: Der Standard „performs computations in bfloat16“ auf TPUs); auf einer CPU
# oder einer T4 bleibt sie nahe beim für float32 typischen Wert 10⁻⁷. Jetzt das Tempo beider
# Datentypen auf diesem Gerät, in der Größe des Profils:

# %%
size = profile.pick(cpu=512, cuda=4096, tpu=4096, mps=512)
b32 = jax.random.normal(jax.random.key(12), (size, size))
b16 = b32.astype(jnp.bfloat16)
matmul = jax.jit(jnp.matmul)
speed, medians = {}, {"float32": [], "bfloat16": []}
# en: alternating rounds, as in lesson 01: a change of load hits both dtypes
# de: abwechselnde Runden wie in Lektion 01: Eine Laständerung trifft beide Datentypen
for _ in range(3):
    for array in (b32, b16):
        dtype = array.dtype.name
        speed[dtype] = bench.measure(
            matmul, array, array, flops=2 * size**3, dtype=dtype, name=f"matmul {dtype}"
        )
        medians[dtype].append(speed[dtype].median)
print(speed["float32"], speed["bfloat16"], sep="\n")
# en: bf16's speed relative to float32: the lowest and highest ratio the rounds allow
# de: Tempo von bf16 relativ zu float32: kleinstes und größtes Verhältnis, das die Runden zulassen
low = min(medians["float32"]) / max(medians["bfloat16"])
high = max(medians["float32"]) / min(medians["bfloat16"])
if low > 1:
    finding = text("bf16 was faster", "bf16 war schneller")
elif high < 1:
    finding = text("bf16 was slower", "bf16 war langsamer")
else:
    finding = text("no measurable difference", "kein messbarer Unterschied")
say(
    "bf16 ran at {lo:.2f}–{hi:.2f}× the speed of float32 over 3 rounds ({backend}, n = {n}): "
    "{finding} in this run.",
    "bf16 lief mit dem {lo:.2f}- bis {hi:.2f}-Fachen des Tempos von float32, über 3 Runden "
    "({backend}, n = {n}): {finding} in diesem Lauf.",
    lo=low,
    hi=high,
    backend=backend,
    n=size,
    finding=finding,
)
if backend == "cpu":
    flags = sorted({"avx512_bf16", "amx_bf16"} & hw.cpu.flags)
    say(
        "This CPU lists {flags} among its flags. Whether XLA's CPU kernels use such instructions "
        "depends on XLA's version, so the rounds above decide, not the flag.",
        "Diese CPU nennt unter ihren Flags: {flags}. Ob die CPU-Kernel von XLA solche Befehle "
        "nutzen, hängt von der XLA-Version ab; deshalb entscheiden die Runden oben, nicht das "
        "Flag.",
        flags=", ".join(flags) if flags else text("no bf16 instructions", "keine bf16-Befehle"),
    )

# %% [markdown] lang="en"
# What the verdict means depends on the device. On a CPU, bf16 halves the bytes, but whether the
# multiplications get faster depends on the CPU's instructions *and* on the library's kernels. On
# the course's 2-vCPU AMD EPYC (Zen 5, with AVX512-BF16), XLA's bf16 matmul at n = 512 came out
# between about as fast as and twice as fast as float32 from run to run (December 2026); lesson 01
# measured PyTorch's bf16 on its own. Nothing in this course assumes an order between the two:
# the lessons measure. On a TPU the MXUs multiply bf16 natively, and at JAX's default precision a
# float32 matmul already runs as bf16 passes (Cloud TPU documentation, "Improve your model's
# performance with bfloat16"; JAX documentation, "Matmul precision"; both read 2026-12-01). There,
# bf16 inputs mainly save memory and bandwidth: expect bf16 at least as fast as default float32,
# and float32 with `precision="highest"` clearly slower.
#
# **Large, fixed shapes.** The TPU works on tiles: data is laid out in 8 × 128 blocks, and XLA pads
# every dimension that is not a multiple up to the next one, computing on zeros (Cloud TPU
# performance guide: "Each TPU core uses two-dimensional 8 X 128 vector registers"; batch and feature
# sizes should be multiples of 8 and 128). And every new shape is a new compilation (section 2). The
# cure for data of varying length is to **pad to a few fixed sizes** ("buckets") and mask the padding:

# %% [markdown] lang="de"
# Was das Urteil bedeutet, hängt vom Gerät ab. Auf einer CPU halbiert bf16 die Bytes; ob aber das
# Multiplizieren schneller wird, hängt von den Befehlen der CPU *und* von den Kerneln der Bibliothek
# ab. Auf der Kursmaschine mit 2 vCPUs eines AMD EPYC (Zen 5, mit AVX512-BF16) war die
# bf16-Matrixmultiplikation von XLA bei n = 512 von Lauf zu Lauf etwa gleich schnell bis doppelt so
# schnell wie float32 (Dezember 2026); Lektion 01 hat PyTorchs bf16 eigens gemessen. Nichts in
# diesem Kurs setzt eine Reihenfolge der beiden voraus: Die Lektionen messen. Auf einer TPU
# multiplizieren die MXUs bf16 direkt, und mit der Standardgenauigkeit von JAX läuft schon eine
# float32-Matrixmultiplikation in bf16-Durchgängen (Cloud-TPU-Dokumentation, „Improve your model's
# performance with bfloat16“; JAX-Dokumentation, „Matmul precision“; beide abgerufen im Dezember
# 2026). Dort sparen bf16-Eingaben vor allem Speicher und Bandbreite: Rechne damit, dass bf16
# mindestens so schnell ist wie float32 mit Standardgenauigkeit und float32 mit
# `precision="highest"` deutlich langsamer.
#
# **Große, feste Formen.** Die TPU arbeitet mit Kacheln: Daten liegen in 8 × 128-Blöcken, und XLA
# füllt jede Dimension, die kein Vielfaches davon ist, bis zum nächsten auf und rechnet auf Nullen
# (Cloud-TPU-Leistungsleitfaden: „Each TPU core uses two-dimensional 8 X 128 vector registers“;
# Batch- und Merkmalsgrößen sollten Vielfache von 8 und 128 sein). Und jede neue Form ist eine neue
# Kompilierung (Abschnitt 2). Das Gegenmittel bei Daten wechselnder Länge: **auf wenige feste Größen
# auffüllen** („Buckets“) und das Aufgefüllte maskieren:


# %%
def bucket(length: int, multiple: int = 128) -> int:
    # en: round up to the next multiple
    # de: auf das nächste Vielfache aufrunden
    return -(-length // multiple) * multiple


compiles = {"exact": 0, "bucketed": 0}


@jax.jit
def mean_exact(values):
    compiles["exact"] += 1
    return values.mean()


@jax.jit
def mean_masked(padded, length):
    compiles["bucketed"] += 1
    # en: the real values; the rest is padding
    # de: die echten Werte; der Rest ist Padding
    mask = jnp.arange(padded.shape[0]) < length
    return jnp.sum(jnp.where(mask, padded, 0.0)) / length


lengths = rng.integers(100, 600, size=30).tolist()
sequences = [rng.standard_normal(length).astype(np.float32) for length in lengths]
seconds = {}
start = time.perf_counter()
exact_means = [float(mean_exact(s)) for s in sequences]
seconds["exact"] = time.perf_counter() - start
start = time.perf_counter()
padded_means = [
    float(mean_masked(np.pad(s, (0, bucket(len(s)) - len(s))), len(s))) for s in sequences
]
seconds["bucketed"] = time.perf_counter() - start
labels = {
    "exact": text("exact lengths", "exakte Längen"),
    "bucketed": text("padded to buckets", "auf Buckets aufgefüllt"),
}
for way in compiles:
    say(
        "{label:22}: {n:2} compilations, {s:.2f} s for 30 sequences",
        "{label:22}: {n:2} Kompilierungen, {s:.2f} s für 30 Sequenzen",
        label=labels[way],
        n=compiles[way],
        s=seconds[way],
    )
assert compiles["exact"] == len(set(lengths))
assert compiles["bucketed"] == len({bucket(length) for length in lengths}) <= 5
assert np.allclose(exact_means, padded_means, rtol=1e-4, atol=1e-5)

# %% [markdown] lang="en"
# ## 5. The same matmul in JAX and in PyTorch
#
# Both frameworks end up calling the device's matrix routines, so on the same device and dtype they
# should be close. The cell picks a device both can use in this one process:
#
# - a **GPU** if JAX and PyTorch both see it. JAX reserves 75 % of the GPU's memory when it starts
#   (`XLA_PYTHON_CLIENT_PREALLOCATE`, JAX documentation "GPU memory allocation"); PyTorch gets the rest,
#   plenty for one matmul.
# - on a **TPU**, the CPU: a TPU serves one framework per process, and JAX already holds it.
#   PyTorch/XLA operations would hang (pytorch/xla#6747: "Importing JAX will lock the TPU devices").
#   To time PyTorch on the TPU, run it in a notebook of its own.
# - otherwise the CPU.

# %% [markdown] lang="de"
# ## 5. Dieselbe Matrixmultiplikation in JAX und in PyTorch
#
# Beide Frameworks rufen am Ende die Matrixroutinen des Geräts auf; auf demselben Gerät mit
# demselben Datentyp sollten sie also nah beieinander liegen. Die Zelle wählt ein Gerät, das beide
# in diesem einen Prozess nutzen können:
#
# - eine **GPU**, wenn JAX und PyTorch sie beide sehen. JAX reserviert beim Start 75 % des
#   GPU-Speichers (`XLA_PYTHON_CLIENT_PREALLOCATE`, JAX-Dokumentation „GPU memory allocation“);
#   PyTorch bekommt den Rest, reichlich für eine Matrixmultiplikation.
# - auf einer **TPU** die CPU: Eine TPU bedient ein Framework pro Prozess, und JAX hält sie schon.
#   Operationen von PyTorch/XLA würden hängen bleiben (pytorch/xla#6747: „Importing JAX will lock
#   the TPU devices“). Um PyTorch auf der TPU zu messen, nimm ein eigenes Notebook.
# - sonst die CPU.

# %%
if backend == "gpu" and torch.cuda.is_available():
    where, jax_device, torch_device = "GPU", jax.devices()[0], torch.device("cuda")
else:
    where, jax_device, torch_device = "CPU", cpus[0], torch.device("cpu")
    if backend == "tpu":
        say(
            "JAX holds the TPU: both frameworks run on the CPU here.",
            "JAX hält die TPU: Beide Frameworks rechnen hier auf der CPU.",
        )
size = profile.pick(cpu=512, cuda=4096, tpu=512, mps=512)
a_host = rng.standard_normal((size, size), dtype=np.float32)
a_jax = jax.device_put(a_host, jax_device)
a_torch = torch.from_numpy(a_host).to(torch_device)

jax_run = bench.measure(
    jax.jit(jnp.matmul), a_jax, a_jax, flops=2 * size**3, dtype=jnp.float32, name="JAX"
)
torch_run = bench.measure(
    torch.matmul, a_torch, a_torch, flops=2 * size**3, dtype=torch.float32, name="PyTorch"
)
print(jax_run, torch_run, sep="\n")
say(
    "On the {where}, n = {n}, float32: PyTorch takes {r:.2f}× the time of JAX.",
    "Auf der {where}, n = {n}, float32: PyTorch braucht das {r:.2f}-Fache der Zeit von JAX.",
    where=where,
    n=size,
    r=torch_run.median / jax_run.median,
)
same = np.allclose(
    np.asarray(a_jax @ a_jax), (a_torch @ a_torch).cpu().numpy(), **tolerance(jax_device.platform)
)
# en: JAX and PyTorch computed the same product
# de: JAX und PyTorch haben dasselbe Produkt berechnet
assert same

# %% tags=["guard"] jupyter={"source_hidden": true}
assert jax_run.backend == "jax" and torch_run.backend == ("cuda" if where == "GPU" else "cpu")

# %% [markdown] lang="en"
# Read the thread lines under each measurement before you compare: on a CPU, PyTorch uses
# `torch.get_num_threads()` threads (one in the course's tests, where `OMP_NUM_THREADS=1`), while
# XLA runs its own thread pool. A ratio far from 1 on a CPU usually means different thread counts or
# a different kernel, not a better framework. On a GPU, check the precision too: on Ampere and newer
# (A100, H100) JAX's default float32 matmul uses TF32, PyTorch's does not
# (`torch.backends.cuda.matmul.allow_tf32` is False), so JAX can look several times faster. Compare
# like with like: `precision="highest"` in JAX, or TF32 switched on in PyTorch. A T4 has no TF32.

# %% [markdown] lang="de"
# Lies die Thread-Zeilen unter jeder Messung, bevor du vergleichst: Auf einer CPU nutzt PyTorch
# `torch.get_num_threads()` Threads (einen in den Tests des Kurses, wo `OMP_NUM_THREADS=1` gilt),
# während XLA seinen eigenen Thread-Pool betreibt. Ein Verhältnis weit weg von 1 bedeutet auf einer
# CPU meist andere Thread-Zahlen oder einen anderen Kernel, kein besseres Framework. Auf einer GPU
# prüf auch die Genauigkeit: Ab Ampere (A100, H100) rechnet die float32-Matrixmultiplikation von JAX
# standardmäßig in TF32, die von PyTorch nicht (`torch.backends.cuda.matmul.allow_tf32` ist
# `False`); JAX kann dann mehrfach schneller aussehen. Vergleiche Gleiches mit Gleichem:
# `precision="highest"` in JAX oder TF32 in PyTorch eingeschaltet. Eine T4 hat kein TF32.

# %% [markdown] lang="en"
# ### What you should see
#
# | profile | compile vs. run | bf16 vs. float32 | JAX vs. PyTorch |
# |---|---|---|---|
# | CPU (laptop, CI) | compiling ≈ 20–40 runs of the 256-wide MLP; each new shape of the tiny `standardise` 0.2–0.5 s, the first call up to about 1 s (2-core CI machine) | bf16 at 0.97–2.1× the speed of float32 from run to run on the CI machine's Zen 5 with AVX512-BF16 (XLA's CPU backend); on another CPU it can be slower: the cell's verdict says | on the CPU; the ratio follows the threads |
# | Colab T4 | compiling costs many runs of the 2048-wide MLP | bf16 slower: a T4 has no fast bf16 (lesson 03) | on the GPU, both through cuBLAS |
# | Kaggle T4 x2 | as Colab T4 (JAX uses GPU 0) | as Colab T4 | on GPU 0 |
# | Colab TPU v5e-1 | compiling costs many runs | default float32 error near bf16's; bf16 at least as fast as default float32, which already multiplies in bf16 | on the CPU: JAX holds the TPU |
# | Kaggle TPU v5e-8 | as v5e-1 (one of its 8 devices) | as v5e-1 | as v5e-1 |
#
# *Hardware facts as of November 2026 (sources in sections 3 and 4). The CPU row was measured on
# the course's CI machine (2 vCPUs of an AMD EPYC Zen 5), idle and busy, December 2026. Times differ
# between runs; the asserts in this notebook check structure and numbers, never speed.*
#
# ## Check yourself
#
# <details><summary>1. You call <code>jax.numpy.ones(3)</code>, then <code>jax.config.update("jax_num_cpu_devices", 2)</code>. How many CPU devices does JAX have?</summary>
#
# One. The first array started the backends; the update raises a `RuntimeError` and changes nothing.
# Restart the kernel and set the number before any JAX computation.
# </details>
#
# <details><summary>2. A function is jitted and called on batches of 32, 32, 31 and 32 examples. How many times is it compiled?</summary>
#
# Twice: once for 32, once for 31. Pad the last batch to 32 and mask it, and it compiles once.
# </details>
#
# <details><summary>3. You time <code>y = f(x)</code> for a jitted <code>f</code> and get 0.05 ms for a matmul that should take 50 ms. What happened?</summary>
#
# The call returned when the work was queued (asynchronous dispatch). Call `y.block_until_ready()`
# before reading the clock, and time a warm call, not the first one, which also compiles.
# </details>
#
# <details><summary>4. Why pad sequence lengths to multiples of 128 on a TPU?</summary>
#
# Twice the benefit: a few fixed shapes mean a few compilations instead of one per length, and the
# TPU lays data out in 8 × 128 tiles, so it pads odd sizes anyway and computes on the zeros.
# </details>
#
# ## Summary
#
# - JAX: immutable arrays, pure functions, explicit keys; `grad`, `jit` and `vmap` transform
#   functions.
# - `jit` traces once per shape and dtype; time compile (`lower().compile()`) and run
#   (`block_until_ready`, the course's timer) separately; pad to buckets to avoid recompiles.
# - Devices are compared by `platform` and `id`; an array committed to a device computes there.
# - TPUs compute in bf16 and like large shapes in multiples of 8 and 128.
#
# **Glossary:** tracing, jaxpr, XLA, compile time, asynchronous dispatch, PRNG key, device,
# committed array, bf16, padding, bucket.
#
# **Next:** lab 04 (compile vs. run time, `vmap`), then
# lesson 05: training on an accelerator end to end. Meshes and sharding over
# 8 devices follow in lesson 08.

# %% [markdown] lang="de"
# ### Was du sehen solltest
#
# | Profil | Kompilieren vs. Laufen | bf16 vs. float32 | JAX vs. PyTorch |
# |---|---|---|---|
# | CPU (Laptop, CI) | Kompilieren ≈ 20–40 Läufe des MLP mit Breite 256; jede neue Form des winzigen `standardise` 0,2–0,5 s, der erste Aufruf bis etwa 1 s (CI-Maschine mit 2 Kernen) | bf16 von Lauf zu Lauf mit dem 0,97- bis 2,1-Fachen des Tempos von float32 auf dem Zen 5 der CI-Maschine mit AVX512-BF16 (CPU-Backend von XLA); auf einer anderen CPU kann es langsamer sein: Das Urteil der Zelle sagt es dir | auf der CPU; das Verhältnis folgt den Threads |
# | Colab T4 | Kompilieren kostet viele Läufe des MLP mit Breite 2048 | bf16 langsamer: Eine T4 hat kein schnelles bf16 (Lektion 03) | auf der GPU, beide über cuBLAS |
# | Kaggle T4 x2 | wie Colab T4 (JAX nimmt GPU 0) | wie Colab T4 | auf GPU 0 |
# | Colab TPU v5e-1 | Kompilieren kostet viele Läufe | Fehler von float32 (Standard) nahe bei bf16; bf16 mindestens so schnell wie float32 mit Standardgenauigkeit, das schon in bf16 multipliziert | auf der CPU: JAX hält die TPU |
# | Kaggle TPU v5e-8 | wie v5e-1 (eines ihrer 8 Geräte) | wie v5e-1 | wie v5e-1 |
#
# *Stand der Hardware-Angaben: November 2026 (Quellen in den Abschnitten 3 und 4). Die CPU-Zeile ist
# auf der CI-Maschine des Kurses gemessen (2 vCPUs eines AMD EPYC Zen 5), frei und ausgelastet,
# Dezember 2026. Zeiten schwanken von Lauf zu Lauf; die Asserts in diesem Notebook prüfen Struktur
# und Zahlen, nie Tempo.*
#
# ## Prüf dich selbst
#
# <details><summary>1. Du rufst <code>jax.numpy.ones(3)</code> auf, danach <code>jax.config.update("jax_num_cpu_devices", 2)</code>. Wie viele CPU-Geräte hat JAX?</summary>
#
# Eins. Das erste Array hat die Backends gestartet; das Update wirft einen `RuntimeError` und ändert
# nichts. Starte den Kernel neu und setze die Zahl vor der ersten JAX-Rechnung.
# </details>
#
# <details><summary>2. Eine Funktion ist gejittet und wird mit Batches aus 32, 32, 31 und 32 Beispielen aufgerufen. Wie oft wird sie kompiliert?</summary>
#
# Zweimal: einmal für 32, einmal für 31. Füll den letzten Batch auf 32 auf und maskiere ihn, dann
# kompiliert sie einmal.
# </details>
#
# <details><summary>3. Du misst <code>y = f(x)</code> für ein gejittetes <code>f</code> und bekommst 0,05 ms für eine Matmul, die 50 ms dauern sollte. Was ist passiert?</summary>
#
# Der Aufruf kehrte zurück, als die Arbeit eingereiht war (asynchrones Dispatching). Ruf
# `y.block_until_ready()` auf, bevor du die Uhr abliest, und miss einen warmen Aufruf, nicht den
# ersten, der auch kompiliert.
# </details>
#
# <details><summary>4. Warum füllst du Sequenzlängen auf einer TPU auf Vielfache von 128 auf?</summary>
#
# Doppelter Gewinn: Wenige feste Formen bedeuten wenige Kompilierungen statt einer pro Länge, und
# die TPU legt Daten in 8 × 128-Kacheln ab; ungerade Größen füllt sie ohnehin auf und rechnet auf
# den Nullen.
# </details>
#
# ## Zusammenfassung
#
# - JAX: unveränderliche Arrays, reine Funktionen, explizite Schlüssel; `grad`, `jit` und `vmap`
#   verwandeln Funktionen.
# - `jit` tract einmal pro Form und Datentyp; miss Kompilieren (`lower().compile()`) und Laufen
#   (`block_until_ready`, der Timer des Kurses) getrennt; füll auf Buckets auf, um Neukompilieren zu
#   vermeiden.
# - Vergleiche Geräte über `platform` und `id`; ein an ein Gerät gebundenes Array rechnet dort.
# - TPUs rechnen in bf16 und mögen große Formen in Vielfachen von 8 und 128.
#
# **Glossar:** Tracing, Jaxpr, XLA, Kompilierzeit, asynchrones Dispatching, PRNG-Schlüssel, Gerät,
# gebundenes Array, bf16, Padding, Bucket.
#
# **Weiter:** Lab 04 (Kompilier- vs. Laufzeit, `vmap`), dann
# Lektion 05: Training auf dem Beschleuniger, von Anfang bis Ende. Meshes und
# Sharding über 8 Geräte folgen in Lektion 08.
