# ---
# jupyter:
#   course:
#     duration:
#       cpu: 45
#       t4: 45
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
#       de: 'Mehr als eine GPU: All-Reduce, DDP und Sharding'
#       en: 'Beyond one GPU: all-reduce, DDP and sharding'
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# Six exercises on lesson 08: the bytes a ring all-reduce sends, a DDP step simulated rank by rank
# in one process, the shape of one shard on a JAX mesh, a data-parallel gradient on 8 devices,
# which parallelism a model's training state allows, and whether communication or computation
# takes longer on your hardware.
# The JAX checks run on the **8 simulated CPU devices** of lesson 08 (or the 8 TPU devices on
# Kaggle's TPU v5e-8).
#
# Replace each `____` by your code and run the cell. `qN.hint()` and `qN.solution()` help; the last
# cell shows your score. Run the setup cell and the two cells below it first, **before anything else
# uses JAX**: the first one asks JAX for its 8 devices.

# %% [markdown] lang="de"
# Sechs Aufgaben zu Lektion 08: die Bytes, die ein Ring-All-Reduce sendet, ein DDP-Schritt, Rang für
# Rang in einem Prozess simuliert, die Form eines Shards auf einem JAX-Mesh, ein datenparalleler
# Gradient auf 8 Geräten, welche Parallelität der Trainingszustand eines Modells zulässt, und ob auf
# deiner Hardware die Kommunikation oder das Rechnen länger dauert. Die JAX-Prüfungen laufen auf den
# **8 simulierten CPU-Geräten** aus Lektion 08 (oder den 8 TPU-Geräten auf Kaggles TPU v5e-8).
#
# Ersetze jedes `____` durch deinen Code und führe die Zelle aus. `qN.hint()` und `qN.solution()`
# helfen; die letzte Zelle zeigt deine Punkte. Führe zuerst die Setup-Zelle und die beiden Zellen
# darunter aus, **bevor irgendetwas anderes JAX benutzt**: Die erste fordert bei JAX die 8 Geräte an.

# %%
import jax

from utils.i18n import say
from utils.parallel import jaxdevices, sharding

jaxdevices.simulate_cpu_devices(
    8
)  # en: first: JAX fixes its device count | de: zuerst: JAX legt die Gerätezahl fest

import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from labs.kit import ____  # noqa: F401  # en: the blank you replace | de: die Lücke, die du ersetzt

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
from labs.checks.lab08 import lab, q1, q2, q3, q4, q5, q6

lab.ready()

# %% [markdown] lang="en"
# ## 1. The bytes of a ring all-reduce
#
# Write `ring_allreduce_bytes(n_bytes, devices)`: how many bytes **each** device sends when
# `devices` devices all-reduce an array of `n_bytes` bytes with the ring algorithm (lesson 08,
# section 1). One device sends nothing. The exact value may be a fraction of a byte; whole-byte
# chunks, rounded up or down, are right too.

# %% [markdown] lang="de"
# ## 1. Die Bytes eines Ring-All-Reduce
#
# Schreib `ring_allreduce_bytes(n_bytes, devices)`: wie viele Bytes **jedes** Gerät sendet, wenn
# `devices` Geräte ein Array von `n_bytes` Byte mit dem Ring-Algorithmus per All-Reduce addieren
# (Lektion 08, Abschnitt 1). Ein einzelnes Gerät sendet nichts. Der genaue Wert darf
# Nachkommastellen haben; Stücke aus ganzen Bytes, auf- oder abgerundet, sind auch richtig.


# %%
def ring_allreduce_bytes(n_bytes, devices):
    ### BEGIN SOLUTION
    # STARTER: return ____
    # en: reduce-scatter + all-gather, each N-1 chunks of n_bytes/N
    # de: Reduce-Scatter + All-Gather, je N-1 Stücke von n_bytes/N
    return 2 * (devices - 1) / devices * n_bytes
    ### END SOLUTION


q1.check(ring_allreduce_bytes)

# %%
# q1.hint()
# q1.solution()

# %% [markdown] lang="en"
# ## 2. A DDP step, rank by rank
#
# DDP runs one process per device; here you play all of them in one process. Write
# `ddp_gradients(make_model, x, y, world)`: for each of the `world` ranks, build the model with
# `make_model(seed)`, compute `torch.nn.functional.mse_loss` on **that rank's share** of the rows of
# `x` and `y` (contiguous, equal parts) and call `.backward()`; then return what DDP's all-reduce
# produces: for each parameter (in the order of `model.parameters()`) the gradient averaged over the
# ranks. It must equal the gradient of the whole batch in one process.

# %% [markdown] lang="de"
# ## 2. Ein DDP-Schritt, Rang für Rang
#
# DDP startet einen Prozess pro Gerät; hier spielst du alle in einem Prozess. Schreib
# `ddp_gradients(make_model, x, y, world)`: Baue für jeden der `world` Ränge das Modell mit
# `make_model(seed)`, rechne `torch.nn.functional.mse_loss` auf **dem Anteil dieses Rangs** an den
# Zeilen von `x` und `y` (zusammenhängende, gleich große Teile) und ruf `.backward()` auf; gib dann
# zurück, was das All-Reduce von DDP liefert: für jeden Parameter (in der Reihenfolge von
# `model.parameters()`) den über die Ränge gemittelten Gradienten. Er muss mit dem Gradienten des
# ganzen Batches in einem Prozess übereinstimmen.


# %%
import torch


def ddp_gradients(make_model, x, y, world):
    ### BEGIN SOLUTION
    # STARTER: return ____
    rows = len(x) // world
    grads = []
    for rank in range(world):
        model = make_model(0)  # en: the same seed on every rank | de: derselbe Seed auf jedem Rang
        part = slice(rank * rows, (rank + 1) * rows)
        torch.nn.functional.mse_loss(model(x[part]), y[part]).backward()
        grads.append([p.grad for p in model.parameters()])
    # en: the all-reduce: sum over the ranks, divided by their number
    # de: das All-Reduce: Summe über die Ränge, geteilt durch ihre Zahl
    return [sum(per_rank) / world for per_rank in zip(*grads, strict=True)]
    ### END SOLUTION


q2.check(ddp_gradients)

# %%
# q2.hint()
# q2.solution()

# %% [markdown] lang="en"
# ## 3. Predict the shard shape
#
# Write `shard_shape(shape, spec, mesh_shape)`: the shape of the block each device holds when an
# array of `shape` is placed with `NamedSharding(mesh, P(*spec))`. `spec` is a tuple with one entry
# per dimension, `None`, an axis name or a tuple of axis names, and may be shorter than `shape`;
# `mesh_shape` maps axis names to sizes, e.g. `{"data": 4, "model": 2}`. Work it out from the numbers
# (the sizes always divide evenly); the check then asks JAX on the 8 devices. Try it:

# %% [markdown] lang="de"
# ## 3. Die Shard-Form vorhersagen
#
# Schreib `shard_shape(shape, spec, mesh_shape)`: die Form des Blocks, den jedes Gerät hält, wenn ein
# Array der Form `shape` mit `NamedSharding(mesh, P(*spec))` abgelegt wird. `spec` ist ein Tupel mit
# einem Eintrag pro Dimension, `None`, ein Achsenname oder ein Tupel von Achsennamen, und darf kürzer
# als `shape` sein; `mesh_shape` ordnet Achsennamen Größen zu, z. B. `{"data": 4, "model": 2}`.
# Rechne es aus den Zahlen aus (die Größen gehen immer glatt auf); die Prüfung fragt danach JAX auf den
# 8 Geräten. Probier es aus:

# %%
axis_types = (AxisType.Auto, AxisType.Auto)
example_mesh = jax.make_mesh(
    (4, 2), ("data", "model"), axis_types=axis_types, devices=jaxdevices.mesh_devices(8)
)
example = jax.device_put(jnp.zeros((16, 6)), NamedSharding(example_mesh, P(("data", "model"))))
sharding.show_layout(example)


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


q3.check(shard_shape)

# %%
# q3.hint()
# q3.solution()

# %% [markdown] lang="en"
# ## 4. A data-parallel gradient
#
# Write `dp_grads(loss_fn, params, x, y, mesh)`: the gradient of `loss_fn(params, x, y)` with respect
# to `params` (a dict of arrays), computed **data-parallel** on `mesh`, a line of 8 devices with the
# axis `"data"`: the rows of `x` and `y` split over the devices, `params` replicated. It must equal the
# gradient on one device. `jax.jit` with shardings and the lesson's `shard_map` step both do it. The
# batch always divides by 8. The check looks inside `loss_fn` to see how `x` arrives there.

# %% [markdown] lang="de"
# ## 4. Ein datenparalleler Gradient
#
# Schreib `dp_grads(loss_fn, params, x, y, mesh)`: den Gradienten von `loss_fn(params, x, y)` nach
# `params` (ein dict von Arrays), **datenparallel** gerechnet auf `mesh`, einer Reihe von 8 Geräten
# mit der Achse `"data"`: die Zeilen von `x` und `y` über die Geräte verteilt, `params` repliziert. Er
# muss mit dem Gradienten auf einem Gerät übereinstimmen. `jax.jit` mit Shardings und der
# `shard_map`-Schritt der Lektion leisten das beide. Der Batch ist immer durch 8 teilbar. Die Prüfung
# schaut in `loss_fn` hinein, wie `x` dort ankommt.


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


q4.check(dp_grads)

# %%
# q4.hint()
# q4.solution()

# %% [markdown] lang="en"
# ## 5. Which parallelism?
#
# Write `choose(n_params, bytes_per_param, gpu_memory, gpus)`: how to train a model of `n_params`
# parameters on `gpus` equal GPUs with `gpu_memory` **bytes** each. Its training state takes
# `n_params · bytes_per_param` bytes: 16 per parameter for AdamW in mixed precision (fp32 weights 4,
# gradients 4, the two Adam moments 8; lesson 08, section 1). Ignore activations and the one layer
# that FSDP gathers for a moment. Return one of four strings, the simplest that fits:
#
# - `"single"`: one GPU, and the whole state fits on it;
# - `"ddp"`: several GPUs, and the whole state fits on one (DDP keeps a full copy on every GPU);
# - `"fsdp"`: the state does not fit on one GPU, but its share `state / gpus` does (FSDP/ZeRO-3
#   splits weights, gradients and optimizer states over the GPUs);
# - `"none"`: not even that.
#
# "Fits" means at most `gpu_memory` bytes: a state exactly as large as the memory fits. Example: a
# 7B model needs 112 GB = 104 GiB, more than an 80 GiB H100; on 8 of them each holds 13 GiB:
# `choose(7_000_000_000, 16, 80 * 2**30, 8)` is `"fsdp"`.

# %% [markdown] lang="de"
# ## 5. Welche Parallelität?
#
# Schreib `choose(n_params, bytes_per_param, gpu_memory, gpus)`: wie man ein Modell mit `n_params`
# Parametern auf `gpus` gleichen GPUs mit je `gpu_memory` **Byte** trainiert. Sein
# Trainingszustand belegt `n_params · bytes_per_param` Byte: 16 pro Parameter für AdamW in Mixed
# Precision (fp32-Gewichte 4, Gradienten 4, die beiden Adam-Momente 8; Lektion 08, Abschnitt 1).
# Aktivierungen und die eine Schicht, die FSDP kurz einsammelt, lässt du weg. Gib einen von vier
# Strings zurück, den einfachsten, der passt:
#
# - `"single"`: eine GPU, und der ganze Zustand passt darauf;
# - `"ddp"`: mehrere GPUs, und der ganze Zustand passt auf eine (DDP hält auf jeder GPU eine volle
#   Kopie);
# - `"fsdp"`: Der Zustand passt nicht auf eine GPU, aber sein Anteil `state / gpus` schon
#   (FSDP/ZeRO-3 teilt Gewichte, Gradienten und Optimiererzustände auf die GPUs auf);
# - `"none"`: nicht einmal das.
#
# „Passt“ heißt: höchstens `gpu_memory` Byte; ein Zustand, der genau so groß ist wie der Speicher,
# passt. Beispiel: Ein 7B-Modell braucht 112 GB = 104 GiB, mehr als eine H100 mit 80 GiB hat; auf 8
# davon hält jede 13 GiB: `choose(7_000_000_000, 16, 80 * 2**30, 8)` ist `"fsdp"`.


# %%
def choose(n_params, bytes_per_param, gpu_memory, gpus):
    ### BEGIN SOLUTION
    # STARTER: return ____
    state = n_params * bytes_per_param  # en: bytes, like gpu_memory | de: Bytes, wie gpu_memory
    if state <= gpu_memory:  # en: a full copy fits | de: eine volle Kopie passt
        return "single" if gpus == 1 else "ddp"
    if state <= gpus * gpu_memory:  # en: state / gpus per GPU | de: state / gpus pro GPU
        return "fsdp"
    return "none"
    ### END SOLUTION


q5.check(choose)

# %%
# q5.hint()
# q5.solution()

# %% [markdown] lang="en"
# ## 6. Communication or computation? Measure it
#
# In a DDP step every device computes its gradients and then waits for the all-reduce. Whether more
# devices help depends on which of the two takes longer **on your hardware**. Write
# `comm_or_compute(allreduce, step)`: time `allreduce()` (an all-reduce of a gradient over the 8
# devices) and `step()` (the computation of one step on one device), each in **seconds per call**,
# and return `(allreduce_seconds, step_seconds, verdict)`, the verdict `"communication"` if the
# all-reduce takes longer, else `"compute"`. Both functions wait for their result. The check hands
# you two pairs: a large gradient with little computation, and a small one with much.

# %% [markdown] lang="de"
# ## 6. Kommunikation oder Rechnen? Miss es
#
# In einem DDP-Schritt rechnet jedes Gerät seine Gradienten und wartet dann auf das All-Reduce. Ob
# mehr Geräte helfen, hängt davon ab, was von beidem **auf deiner Hardware** länger dauert. Schreib
# `comm_or_compute(allreduce, step)`: Miss `allreduce()` (ein All-Reduce eines Gradienten über die 8
# Geräte) und `step()` (die Berechnung eines Schritts auf einem Gerät), jeweils in **Sekunden pro
# Aufruf**, und gib `(allreduce_seconds, step_seconds, verdict)` zurück, das Urteil
# `"communication"`, wenn das All-Reduce länger dauert, sonst `"compute"`. Beide Funktionen warten
# auf ihr Ergebnis. Die Prüfung gibt dir zwei Paare: einen großen Gradienten mit wenig Rechenarbeit
# und einen kleinen mit viel.


# %%
from utils.timing.bench import measure


def comm_or_compute(allreduce, step):
    ### BEGIN SOLUTION
    # STARTER: return ____
    # en: median seconds of one call, after a warm-up
    # de: Median der Sekunden eines Aufrufs, nach dem Aufwärmen
    allreduce_s, step_s = measure(allreduce).median, measure(step).median
    return allreduce_s, step_s, "communication" if allreduce_s > step_s else "compute"
    ### END SOLUTION


q6.check(comm_or_compute)

# %%
# q6.hint()
# q6.solution()

# %% [markdown] lang="en"
# ## Your score
#
# Run the cell below. A trainer grades the same way: `python -m labs.kit.grade` runs your notebook from
# top to bottom and reads this table (see `labs/README.md`).
#
# **Next:** lesson 09 weighs what the devices of this lesson cost.

# %% [markdown] lang="de"
# ## Deine Punkte
#
# Führe die Zelle unten aus. Trainerinnen und Trainer bewerten genauso: `python -m labs.kit.grade` führt
# dein Notebook von oben nach unten aus und liest diese Tabelle (siehe `labs/README.md`).
#
# **Weiter:** Lektion 09 wägt ab, was die Geräte dieser Lektion kosten.

# %%
lab.score()
