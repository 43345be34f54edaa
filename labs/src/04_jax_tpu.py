# ---
# jupyter:
#   course:
#     title:
#       en: "JAX on TPU: compile, shard, parallelise"
#       de: "JAX und TPU: kompilieren, verteilen, parallelisieren"
#     level: 2
#     duration: {t4: 40, cpu: 40}
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

jaxcompat.simulate_cpu_devices(8)  # first: JAX fixes its device count when it starts

import math
import time

import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from utils.checks import ____  # noqa: F401 (the blank you replace · die Lücke, die du ersetzt)

print(
    "jax", jax.__version__, "|", jax.default_backend(), "|", len(jax.devices("cpu")), "CPU devices"
)

# %% tags=["checks"] jupyter={"source_hidden": true} cellView="form"
# @title Checks · Prüfungen (run me · ausführen)
# The checks of this lab. They try your code on random inputs; each mistake has its own message.
import math  # noqa: F811 -- this cell also runs on its own (grader, tests)
import time  # noqa: F811

import jax
import jax.numpy as jnp  # noqa: F811
import numpy as np  # noqa: F811
from jax.sharding import AxisType, NamedSharding  # noqa: F811
from jax.sharding import PartitionSpec as P  # noqa: F811

from utils import jaxcompat, tr
from utils.checks import Lab, LearnerError, Wrong, allclose, as_number, call, diagnose, matching

lab = Lab(
    "04",
    title=(
        "JAX on TPU: compile, shard, parallelise",
        "JAX und TPU: kompilieren, verteilen, parallelisieren",
    ),
)


def _mesh_devices():
    """The 8 devices the checks shard over; a clear message (no traceback) if this kernel has fewer."""
    try:
        return jaxcompat.mesh_devices(8)
    except RuntimeError as err:
        raise Wrong("few_devices", str(err)) from None


def _ms(seconds):
    return f"{seconds * 1e3:.1f} ms"


# --- q1: compile time and run time ---------------------------------------------------------------
def _body(i, y):
    return jnp.tanh(y @ y)  # one matmul per step; tanh keeps the numbers bounded


_loop = jax.jit(
    lambda x, count: jax.lax.fori_loop(0, count, _body, x)
)  # count is traced: one compile
_probe = jax.jit(lambda v: v + 1)
_WORK = {}


def _fastest(x, steps):
    """The fastest of three runs: other programs on the machine only ever add time."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        _loop(x, steps).block_until_ready()
        times.append(time.perf_counter() - start)
    return min(times)


def _work():
    """(steps, seconds): a loop of 128×128 matmuls that runs about 45 ms on this device, long
    enough to tell a finished run from a queued one, short next to the check's tracing sleep."""
    if "steps" not in _WORK:
        x = jnp.full((128, 128), 0.01)
        _WORK["probe"] = jnp.ones(4)
        _probe(_WORK["probe"]).block_until_ready()
        steps = 8
        _loop(x, steps).block_until_ready()
        while (elapsed := _fastest(x, steps)) < 0.01 and steps < 2**24:
            steps *= 4
        steps = max(1, round(steps * 0.045 / elapsed))  # scale to the target
        _WORK.update(steps=steps, seconds=_fastest(x, steps))
    return _WORK["steps"], _WORK["seconds"]


def _still_busy():
    """Seconds a tiny computation on the default device waits: the device runs its work in order,
    so this is how much of the learner's last run was still queued when their function returned."""
    start = time.perf_counter()
    _probe(_WORK["probe"]).block_until_ready()
    return time.perf_counter() - start


def _pair(got):
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        raise Wrong(
            "not_a_pair",
            tr(
                f"Return two numbers, (compile_seconds, run_seconds); you returned {got!r:.60}.",
                f"Gib zwei Zahlen zurück, (compile_seconds, run_seconds); du hast {got!r:.60} zurückgegeben.",
            ),
        )
    return (
        as_number(got[0], ("the compile time", "die Kompilierzeit")),
        as_number(got[1], ("the run time", "die Laufzeit")),
    )


def test_compile_and_run(compile_and_run, rng):
    steps, run = _work()
    trace_s = rng.uniform(0.15, 0.2)

    def f(x):
        time.sleep(trace_s)  # Python runs only while JAX traces: this is part of compiling
        return jax.lax.fori_loop(0, steps, _body, x)

    x = jnp.full((128, 128), 0.01) + 1e-3 * jax.random.normal(
        jax.random.key(rng.randrange(2**31)), (128, 128)
    )
    start = time.perf_counter()
    got = call(compile_and_run, f, x)
    pending = _still_busy()
    total = time.perf_counter() - start - pending  # the learner's function, from call to return
    compile_s, run_s = _pair(got)
    if compile_s > 20 or run_s > 20:
        raise Wrong(
            "milliseconds",
            tr(
                f"You returned {compile_s:.4g} and {run_s:.4g}: that looks like milliseconds. Return seconds "
                "(time.perf_counter() counts in seconds).",
                f"Du hast {compile_s:.4g} und {run_s:.4g} zurückgegeben: Das sieht nach Millisekunden aus. Gib "
                "Sekunden zurück (time.perf_counter() zählt in Sekunden).",
            ),
        )
    # The sleep is a hard lower bound: anything that includes tracing takes at least trace_s.
    if compile_s < 0.9 * trace_s and run_s >= trace_s + 0.5 * run:  # the run included the tracing
        raise Wrong(
            "swapped",
            tr(
                f"Your compile time ({_ms(compile_s)}) is shorter than the {_ms(trace_s)} the check's function "
                f"sleeps while it is traced, and your run time ({_ms(run_s)}) is longer: the two look swapped. "
                "Return (compile_seconds, run_seconds) in this order, and time the compiled program only after "
                "compiling (the first call of jax.jit(f) traces and compiles).",
                f"Deine Kompilierzeit ({_ms(compile_s)}) ist kürzer als die {_ms(trace_s)}, die die Funktion der "
                f"Prüfung beim Tracing schläft, und deine Laufzeit ({_ms(run_s)}) ist länger: Die beiden sehen "
                "vertauscht aus. Gib (compile_seconds, run_seconds) in dieser Reihenfolge zurück, und miss das "
                "kompilierte Programm erst nach dem Kompilieren (der erste Aufruf von jax.jit(f) traced und "
                "kompiliert).",
            ),
        )
    if compile_s < 0.9 * trace_s:
        raise Wrong(
            "compile_too_short",
            tr(
                f"Your compile time is {_ms(compile_s)}, but the check's function sleeps {_ms(trace_s)} while "
                "it is traced. jax.jit(f) alone compiles nothing, and a function already traced is not traced "
                "again: time jax.jit(f).lower(x).compile() on the fresh function, before you call it.",
                f"Deine Kompilierzeit ist {_ms(compile_s)}, aber die Funktion der Prüfung schläft {_ms(trace_s)} "
                "lang, während sie getraced wird. jax.jit(f) allein kompiliert nichts, und eine schon getracte "
                "Funktion wird nicht noch einmal getraced: Miss jax.jit(f).lower(x).compile() an der frischen "
                "Funktion, bevor du sie aufrufst.",
            ),
        )
    if pending > 0.5 * run or run_s < 0.1 * run:  # still busy, or stopped the clock before waiting
        raise Wrong(
            "no_sync",
            tr(
                f"Your run time is {_ms(run_s)}, but one run takes about {_ms(run)} here, and the device was still "
                f"busy for {_ms(pending)} when your function returned: the clock stopped when the work was queued, "
                "not when it was done. Call .block_until_ready() on the result before you read the clock.",
                f"Deine Laufzeit ist {_ms(run_s)}, ein Lauf dauert hier aber etwa {_ms(run)}, und das Gerät war "
                f"noch {_ms(pending)} beschäftigt, als deine Funktion zurückkehrte: Die Uhr hat angehalten, als die "
                "Arbeit eingereiht war, nicht als sie fertig war. Ruf .block_until_ready() auf dem Ergebnis auf, "
                "bevor du die Uhr abliest.",
            ),
        )
    if compile_s + run_s > 1.02 * total + 0.002:
        raise Wrong(
            "includes_compile",
            tr(
                f"Your compile time ({_ms(compile_s)}) and run time ({_ms(run_s)}) add up to more than your whole "
                f"function took ({_ms(total)}): the run time counts the compilation again. Restart the clock "
                "after compiling, and time the compiled program after one untimed call.",
                f"Deine Kompilierzeit ({_ms(compile_s)}) und Laufzeit ({_ms(run_s)}) ergeben zusammen mehr, als "
                f"deine ganze Funktion gedauert hat ({_ms(total)}): Die Laufzeit zählt das Kompilieren noch "
                "einmal mit. Starte die Uhr nach dem Kompilieren neu, und miss das kompilierte Programm nach "
                "einem Aufruf ohne Uhr.",
            ),
        )
    return tr(
        f"Correct! Compiling took {_ms(compile_s)} (of which {_ms(trace_s)} the check's deliberate sleep "
        f"while tracing), one run {_ms(run_s)}.",
        f"Richtig! Kompilieren dauerte {_ms(compile_s)} (davon {_ms(trace_s)} der absichtliche Schlaf der "
        f"Prüfung beim Tracing), ein Lauf {_ms(run_s)}.",
    )


q1 = lab.exercise(
    "compile_and_run",
    title=("Compile time and run time", "Kompilierzeit und Laufzeit"),
    points=2,
    test=test_compile_and_run,
    hint=(
        "compiled = jax.jit(f).lower(x).compile() does tracing and compiling: time that line. Then call "
        "compiled(x).block_until_ready() once untimed, and time a second call, with .block_until_ready().",
        "compiled = jax.jit(f).lower(x).compile() erledigt Tracing und Kompilieren: Miss diese Zeile. Dann "
        "compiled(x).block_until_ready() einmal ohne Uhr aufrufen und einen zweiten Aufruf messen, mit "
        ".block_until_ready().",
    ),
    solution=(
        "import time\n\nimport jax\n\n\ndef compile_and_run(f, x):\n    start = time.perf_counter()\n"
        "    compiled = jax.jit(f).lower(x).compile()  # trace and compile\n"
        "    compile_seconds = time.perf_counter() - start\n"
        "    compiled(x).block_until_ready()  # one untimed run\n    start = time.perf_counter()\n"
        "    compiled(x).block_until_ready()  # wait until the work is done\n"
        "    return compile_seconds, time.perf_counter() - start",
        "import time\n\nimport jax\n\n\ndef compile_and_run(f, x):\n    start = time.perf_counter()\n"
        "    compiled = jax.jit(f).lower(x).compile()  # tracen und kompilieren\n"
        "    compile_seconds = time.perf_counter() - start\n"
        "    compiled(x).block_until_ready()  # ein Lauf ohne Uhr\n    start = time.perf_counter()\n"
        "    compiled(x).block_until_ready()  # warten, bis die Arbeit fertig ist\n"
        "    return compile_seconds, time.perf_counter() - start",
    ),
)


# --- q2: the shape of one shard --------------------------------------------------------------------
MESHES = {
    (4, 2): ("data", "model"),
    (2, 4): ("data", "model"),
    (8,): ("x",),
    (2, 2, 2): ("a", "b", "c"),
}


def _axes(entry):
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


def _block(shape, spec, mesh_shape, divide=None):
    """Each dimension divided by the product of the sizes of the mesh axes its spec entry names."""
    divide = divide or (lambda size, axes: size // math.prod(mesh_shape[a] for a in axes))
    entries = list(spec) + [None] * (len(shape) - len(spec))
    return tuple(
        divide(size, _axes(entry)) if _axes(entry) else size
        for size, entry in zip(shape, entries, strict=True)
    )


def _q2_cases(rng):
    """Five layouts each time: both axes, one axis, a tuple of axes, a spec shorter than the array, a 1-D mesh."""
    two = rng.choice([(4, 2), (2, 4)])
    d, m = MESHES[two]
    layouts = [
        (two, 2, (d, m)),
        (two, 2, (None, d)),
        ((2, 2, 2), 2, (("a", "c"), "b")) if rng.random() < 0.5 else (two, 2, ((d, m), None)),
        (two, 3, (m,)),
        ((8,), 2, (None, "x")),
    ]
    for mesh_shape, ndim, spec in layouts:
        sizes = dict(zip(MESHES[mesh_shape], mesh_shape, strict=True))
        entries = list(spec) + [None] * (ndim - len(spec))
        shape = tuple(
            math.prod(sizes[a] for a in _axes(e)) * rng.randint(1, 6) * rng.choice([1, 2, 3])
            for e in entries
        )
        yield shape, spec, sizes, mesh_shape


def _confirm(shape, spec, mesh_shape, want):
    """JAX agrees on 8 real (or simulated) devices; skipped in a kernel that has fewer."""
    try:
        devices = jaxcompat.mesh_devices(8)
    except RuntimeError:
        return None
    mesh = jax.make_mesh(
        mesh_shape,
        MESHES[mesh_shape],
        axis_types=(AxisType.Auto,) * len(mesh_shape),
        devices=devices,
    )
    placed = jax.device_put(np.zeros(shape, np.float32), NamedSharding(mesh, P(*spec)))
    shapes = {s.data.shape for s in placed.addressable_shards}
    if shapes != {want}:
        raise AssertionError(f"lab 04 q2: expected {want}, JAX made {shapes}")  # a bug in the check
    return placed


def _shard_message(key, shape, spec, mesh, got, want):
    messages = {
        "global_shape": (
            "you returned the whole array's shape. Each device holds only a block: divide each "
            "dimension by the size of the mesh axis its spec entry names.",
            "Du hast die Form des ganzen Arrays zurückgegeben. Jedes Gerät hält nur einen Block: "
            "Teile jede Dimension durch die Größe der Mesh-Achse, die ihr Spec-Eintrag nennt.",
        ),
        "all_devices": (
            "you divided by all 8 devices. A dimension is split only over the mesh axes its own spec "
            "entry names (mesh_shape[name]); the other axes hold copies.",
            "Du hast durch alle 8 Geräte geteilt. Eine Dimension wird nur über die Mesh-Achsen "
            "aufgeteilt, die ihr eigener Spec-Eintrag nennt (mesh_shape[name]); die anderen Achsen "
            "halten Kopien.",
        ),
        "first_axis_only": (
            "a spec entry can be a tuple of axes, such as ('data', 'model'): the dimension is "
            "then split over all of them, the product of their sizes. You used only the first.",
            "Ein Spec-Eintrag kann ein Tupel von Achsen sein, etwa ('data', 'model'): Die "
            "Dimension wird dann über alle aufgeteilt, das Produkt ihrer Größen. Du hast nur die "
            "erste genommen.",
        ),
        "multiplied": (
            "your block is bigger than the array: divide by the axis size, don't multiply.",
            "Dein Block ist größer als das Array: Teile durch die Achsengröße, statt zu multiplizieren.",
        ),
        "wrong": (
            f"each device holds a block of shape {want}, not {got}.",
            f"Jedes Gerät hält einen Block der Form {want}, nicht {got}.",
        ),
    }
    return tr(
        f"For shape {shape}, spec {spec} on mesh {mesh}: ",
        f"Für Form {shape}, Spec {spec} auf Mesh {mesh}: ",
    ) + tr(*messages[key])


def test_shard_shape(shard_shape, rng):
    failures = []
    confirmed = None
    for shape, spec, sizes, mesh_shape in _q2_cases(rng):
        got = call(shard_shape, shape, spec, dict(sizes))
        want = _block(shape, spec, sizes)
        if not isinstance(got, (tuple, list)) or not all(
            isinstance(v, (int, np.integer, float, np.floating)) for v in got
        ):
            raise Wrong(
                "not_a_shape",
                tr(
                    f"Return the shape as a tuple of whole numbers, such as {want}; "
                    f"you returned {got!r:.60}.",
                    f"Gib die Form als Tupel ganzer Zahlen zurück, etwa {want}; du hast "
                    f"{got!r:.60} zurückgegeben.",
                ),
            )
        if len(got) != len(shape):
            raise Wrong(
                "dims",
                tr(
                    f"For shape {shape} and spec {spec} you returned {len(got)} dimension(s), but a block has as many "
                    "dimensions as the array. Dimensions the spec does not mention (it may be shorter) stay whole.",
                    f"Für Form {shape} und Spec {spec} hast du {len(got)} Dimension(en) zurückgegeben, ein Block hat "
                    "aber so viele Dimensionen wie das Array. Dimensionen, die die Spec nicht erwähnt (sie darf "
                    "kürzer sein), bleiben ganz.",
                ),
            )
        if any(isinstance(v, (float, np.floating)) for v in got):
            raise Wrong(
                "not_integers",
                tr(
                    f"Shapes are whole numbers, but you returned {tuple(got)}: use // instead of / (the sizes here "
                    "always divide evenly).",
                    f"Formen sind ganze Zahlen, du hast aber {tuple(got)} zurückgegeben: Nimm // statt / (die Größen "
                    "hier gehen immer glatt auf).",
                ),
            )
        got = tuple(int(v) for v in got)
        placed = _confirm(shape, spec, mesh_shape, want)
        if confirmed is None:
            confirmed = placed
        if got != want:
            mistakes = {
                "global_shape": tuple(shape),
                "all_devices": _block(shape, spec, sizes, lambda size, axes: size // 8),
                "first_axis_only": _block(
                    shape, spec, sizes, lambda size, axes, s=sizes: size // s[axes[0]]
                ),
                "multiplied": _block(
                    shape,
                    spec,
                    sizes,
                    lambda size, axes, s=sizes: size * math.prod(s[a] for a in axes),
                ),
            }
            failures.append(
                (
                    matching(got, mistakes),
                    dict(shape=shape, spec=spec, mesh=dict(sizes), got=got, want=want),
                )
            )
    if failures:
        diagnose(failures, _shard_message)
    note = ""
    if confirmed is not None:
        block = confirmed.addressable_shards[0].data.shape
        note = tr(
            f" jax.device_put on this machine's 8 devices agrees, e.g. blocks of {block} for shape "
            f"{confirmed.shape}.",
            f" jax.device_put auf den 8 Geräten dieser Maschine stimmt zu, z. B. Blöcke der Form {block} "
            f"für die Form {confirmed.shape}.",
        )
    return (
        tr("Correct! You predict every shard shape.", "Richtig! Du sagst jede Shard-Form voraus.")
        + note
    )


q2 = lab.exercise(
    "shard_shape",
    title=("Predict the shard shape", "Die Shard-Form vorhersagen"),
    points=3,
    test=test_shard_shape,
    hint=(
        "Go through the dimensions: the spec entry of a dimension is None (whole), an axis name, or a tuple "
        "of names; divide the size by the product of mesh_shape[name] over those names. A spec shorter "
        "than the shape leaves the remaining dimensions whole.",
        "Geh die Dimensionen durch: Der Spec-Eintrag einer Dimension ist None (ganz), ein Achsenname oder ein "
        "Tupel von Namen; teile die Größe durch das Produkt von mesh_shape[name] über diese Namen. Eine Spec, "
        "die kürzer als die Form ist, lässt die übrigen Dimensionen ganz.",
    ),
    solution=(
        "import math\n\n\ndef shard_shape(shape, spec, mesh_shape):\n    block = []\n"
        "    for i, size in enumerate(shape):\n        entry = spec[i] if i < len(spec) else None\n"
        "        if entry is None:\n            block.append(size)  # not split\n            continue\n"
        "        axes = (entry,) if isinstance(entry, str) else entry\n"
        "        block.append(size // math.prod(mesh_shape[a] for a in axes))\n    return tuple(block)",
        "import math\n\n\ndef shard_shape(shape, spec, mesh_shape):\n    block = []\n"
        "    for i, size in enumerate(shape):\n        entry = spec[i] if i < len(spec) else None\n"
        "        if entry is None:\n            block.append(size)  # nicht aufgeteilt\n            continue\n"
        "        axes = (entry,) if isinstance(entry, str) else entry\n"
        "        block.append(size // math.prod(mesh_shape[a] for a in axes))\n    return tuple(block)",
    ),
)


# --- q3: a data-parallel gradient ----------------------------------------------------------------
def _q3_inputs(rng):
    features, outputs = (
        rng.choice([3, 5, 6, 7]),
        rng.choice([2, 3]),
    )  # not multiples of 8: only the batch splits
    batch = 8 * rng.randint(2, 6)
    keys = jax.random.split(jax.random.key(rng.randrange(2**31)), 4)
    params = {
        "w": jax.random.normal(keys[0], (features, outputs)),
        "b": jax.random.normal(keys[1], (outputs,)),
    }
    x = jax.random.normal(keys[2], (batch, features))
    y = jax.random.normal(keys[3], (batch, outputs))
    return params, x, y


def _mse(params, x, y):
    return jnp.mean((x @ params["w"] + params["b"] - y) ** 2)


def _mse_grads(params, x, y):
    """The gradient of _mse by hand, in float64 numpy: the single-device answer, exactly."""
    w, b, x, y = (np.asarray(a, np.float64) for a in (params["w"], params["b"], x, y))
    error = 2 * (x @ w + b - y) / y.size
    return {"w": x.T @ error, "b": error.sum(axis=0)}


def test_data_parallel(dp_grads, rng):
    devices = _mesh_devices()
    mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,), devices=devices)
    params, x, y = _q3_inputs(rng)
    seen = []

    def loss_fn(params, x, y):  # the model's loss; it also notes how x is laid out
        jax.debug.inspect_array_sharding(
            x, callback=lambda sharding: seen.append((x.shape, sharding))
        )
        return _mse(params, x, y)

    with jax.default_matmul_precision("float32"):  # a TPU's default would round to bf16
        got = call(dp_grads, loss_fn, params, x, y, mesh)
    want = _mse_grads(params, x, y)
    shard_size = x.shape[0] // 8
    one_shard = _mse_grads(params, x[:shard_size], y[:shard_size])
    if not (isinstance(got, dict) and set(got) == set(params)):
        raise Wrong(
            "structure",
            tr(
                f"Return the gradients as a dict with the keys of params, {sorted(params)}, like "
                f"jax.grad(loss_fn) does; you returned {type(got).__name__}.",
                f"Gib die Gradienten als dict mit den Schlüsseln von params zurück, {sorted(params)}, wie "
                f"jax.grad(loss_fn) es tut; du hast {type(got).__name__} zurückgegeben.",
            ),
        )
    tol = {"rtol": 1e-4, "atol": 1e-5}
    if not all(allclose(got[k], want[k], **tol) for k in params):
        if all(allclose(got[k], 8 * want[k], **tol) for k in params):
            raise Wrong(
                "summed",
                tr(
                    "Your gradients are 8 times too large: they were summed over the 8 devices instead of "
                    "averaged. (Inside shard_map, jax.grad of a replicated parameter already sums over the "
                    "devices.) jax.jit with shardings gets the mean right by itself.",
                    "Deine Gradienten sind 8-mal zu groß: Sie wurden über die 8 Geräte summiert statt gemittelt. "
                    "(In shard_map summiert jax.grad eines replizierten Parameters schon über die Geräte.) "
                    "jax.jit mit Shardings bildet den Mittelwert von selbst richtig.",
                ),
            )
        if all(allclose(got[k], one_shard[k], **tol) for k in params):
            raise Wrong(
                "one_shard",
                tr(
                    "Your gradients are those of one device's share of the batch only. The gradient of the mean "
                    "loss needs every example: let jit combine the shards.",
                    "Deine Gradienten gehören nur zum Anteil eines Geräts am Batch. Der Gradient des mittleren "
                    "Verlusts braucht jedes Beispiel: Lass jit die Teile zusammenführen.",
                ),
            )
        raise Wrong(
            "wrong_gradients",
            tr(
                "Your gradients differ from those of the same loss on one device. Compute "
                "jax.grad(loss_fn)(params, x, y), only with x and y split over the mesh.",
                "Deine Gradienten weichen von denen desselben Verlusts auf einem Gerät ab. Rechne "
                "jax.grad(loss_fn)(params, x, y), nur mit x und y über das Mesh verteilt.",
            ),
        )
    if seen:
        shape, sharding = seen[-1]
        rows = sharding.shard_shape(shape)[0]
        if len(sharding.device_set) == 1:
            raise Wrong(
                "one_device",
                tr(
                    "Right gradients, but all on one device: x arrived in loss_fn whole, on a single device. "
                    "Put x and y split over the mesh, NamedSharding(mesh, P('data')), and params replicated, "
                    "NamedSharding(mesh, P()).",
                    "Richtige Gradienten, aber alle auf einem Gerät: x kam ganz und auf einem einzigen Gerät in "
                    "loss_fn an. Leg x und y über das Mesh verteilt ab, NamedSharding(mesh, P('data')), und params "
                    "repliziert, NamedSharding(mesh, P()).",
                ),
            )
        if rows == x.shape[0]:
            raise Wrong(
                "batch_replicated",
                tr(
                    f"Right gradients, but every device computed all {x.shape[0]} examples: x was copied to the 8 "
                    "devices, not split. Split its first dimension: P('data').",
                    f"Richtige Gradienten, aber jedes Gerät hat alle {x.shape[0]} Beispiele gerechnet: x wurde auf "
                    "die 8 Geräte kopiert, nicht aufgeteilt. Teile seine erste Dimension: P('data').",
                ),
            )
        if rows != shard_size:
            raise Wrong(
                "not_all_devices",
                tr(
                    f"Right gradients, but each device got {rows} of the {x.shape[0]} examples instead of "
                    f"{shard_size}: split the batch over all 8 devices of the mesh.",
                    f"Richtige Gradienten, aber jedes Gerät bekam {rows} der {x.shape[0]} Beispiele statt "
                    f"{shard_size}: Teile den Batch über alle 8 Geräte des Meshs auf.",
                ),
            )
    return tr(
        f"Correct! Each device computed the gradient of {shard_size} of the {x.shape[0]} examples, and the "
        "combined gradient equals the single-device one.",
        f"Richtig! Jedes Gerät hat den Gradienten von {shard_size} der {x.shape[0]} Beispiele gerechnet, und "
        "der zusammengeführte Gradient ist gleich dem auf einem Gerät.",
    )


q3 = lab.exercise(
    "data_parallel",
    title=("A data-parallel gradient", "Ein datenparalleler Gradient"),
    points=3,
    test=test_data_parallel,
    hint=(
        "Two shardings on the mesh: NamedSharding(mesh, P('data')) for x and y (rows split 8 ways) and "
        "NamedSharding(mesh, P()) for params (a copy on every device). jax.device_put each, then "
        "return jax.jit(jax.grad(loss_fn))(params, x, y).",
        "Zwei Shardings auf dem Mesh: NamedSharding(mesh, P('data')) für x und y (Zeilen in 8 Teile) und "
        "NamedSharding(mesh, P()) für params (eine Kopie auf jedem Gerät). Jeweils jax.device_put, dann "
        "jax.jit(jax.grad(loss_fn))(params, x, y) zurückgeben.",
    ),
    solution=(
        "import jax\nfrom jax.sharding import NamedSharding\nfrom jax.sharding import PartitionSpec as P\n\n\n"
        "def dp_grads(loss_fn, params, x, y, mesh):\n    batch = NamedSharding(mesh, P('data'))  # rows split\n"
        "    replicated = NamedSharding(mesh, P())  # a copy everywhere\n"
        "    params = jax.device_put(params, replicated)\n"
        "    x, y = jax.device_put(x, batch), jax.device_put(y, batch)\n"
        "    return jax.jit(jax.grad(loss_fn))(params, x, y)",
        "import jax\nfrom jax.sharding import NamedSharding\nfrom jax.sharding import PartitionSpec as P\n\n\n"
        "def dp_grads(loss_fn, params, x, y, mesh):\n    batch = NamedSharding(mesh, P('data'))  # Zeilen aufgeteilt\n"
        "    replicated = NamedSharding(mesh, P())  # überall eine Kopie\n"
        "    params = jax.device_put(params, replicated)\n"
        "    x, y = jax.device_put(x, batch), jax.device_put(y, batch)\n"
        "    return jax.jit(jax.grad(loss_fn))(params, x, y)",
    ),
)


# --- q4: batching with vmap ------------------------------------------------------------------------
def test_vmap(predict_all, rng):
    features, outputs = rng.randint(3, 8), rng.randint(2, 4)
    n = rng.randint(features + 4, 40)  # never equal to features: mapping the wrong axis shows
    keys = jax.random.split(jax.random.key(rng.randrange(2**31)), 2)
    w = jax.random.normal(keys[0], (outputs, features))
    xs = jax.random.normal(keys[1], (n, features))
    calls = []

    def predict(w, x):  # written for one example: x has shape (features,)
        calls.append(tuple(x.shape))
        return jnp.tanh(w @ x)

    want = np.stack([np.tanh(np.asarray(w) @ np.asarray(x)) for x in xs])
    wrong_axis = Wrong(
        "in_axes",
        tr(
            f"predict is written for one example of shape ({features},), with the same w for all. Map over "
            "axis 0 of xs and not over w: jax.vmap(predict, in_axes=(None, 0))(w, xs).",
            f"predict ist für ein Beispiel der Form ({features},) geschrieben, mit demselben w für alle. Bilde über "
            "Achse 0 von xs ab und nicht über w: jax.vmap(predict, in_axes=(None, 0))(w, xs).",
        ),
    )
    try:
        got = call(predict_all, predict, w, xs)
    except LearnerError as failure:
        if any(shape != (features,) for shape in calls) or "vmap" in str(failure.error):
            raise wrong_axis from None
        raise
    if any(shape != (features,) for shape in calls):
        raise wrong_axis
    shape = getattr(got, "shape", None)
    if shape == (outputs, n) and allclose(np.asarray(got).T, want, rtol=1e-4, atol=1e-5):
        raise Wrong(
            "transposed",
            tr(
                f"Your result has shape {shape}: one column per example. vmap puts the batch first, "
                f"({n}, {outputs}); leave out_axes at 0.",
                f"Dein Ergebnis hat die Form {shape}: eine Spalte pro Beispiel. vmap stellt den Batch nach vorn, "
                f"({n}, {outputs}); lass out_axes bei 0.",
            ),
        )
    if shape != want.shape or not allclose(got, want, rtol=1e-4, atol=1e-5):
        raise Wrong(
            "wrong",
            tr(
                f"For {n} examples your result should be predict(w, x) for each row x of xs, shape {want.shape}; "
                f"yours has shape {shape} or other values.",
                f"Für {n} Beispiele sollte dein Ergebnis predict(w, x) für jede Zeile x von xs sein, Form "
                f"{want.shape}; deines hat die Form {shape} oder andere Werte.",
            ),
        )
    if len(calls) >= n:
        raise Wrong(
            "python_loop",
            tr(
                f"Right values, but predict ran {len(calls)} times, once per example: a Python loop. "
                "jax.vmap calls it once, on the whole batch.",
                f"Richtige Werte, aber predict lief {len(calls)}-mal, einmal pro Beispiel: eine Python-Schleife. "
                "jax.vmap ruft es einmal auf, für den ganzen Batch.",
            ),
        )
    program = str(jax.make_jaxpr(lambda w, xs: predict_all(predict, w, xs))(w, xs))
    if "while" in program or "scan" in program:
        raise Wrong(
            "sequential",
            tr(
                "Right values, but the compiled program is a loop (lax.map or lax.scan): one example after the "
                "other. jax.vmap turns the function into batched operations instead.",
                "Richtige Werte, aber das kompilierte Programm ist eine Schleife (lax.map oder lax.scan): ein "
                "Beispiel nach dem anderen. jax.vmap macht aus der Funktion stattdessen Batch-Operationen.",
            ),
        )
    return tr(
        f"Correct! One call of predict handled all {n} examples.",
        f"Richtig! Ein Aufruf von predict hat alle {n} Beispiele erledigt.",
    )


q4 = lab.exercise(
    "vmap",
    title=("Batch a function with vmap", "Eine Funktion mit vmap auf Batches erweitern"),
    points=2,
    test=test_vmap,
    hint=(
        "jax.vmap(predict, in_axes=(None, 0)) is a new function: None = the same w for every example, "
        "0 = map over the rows of xs. Call it with (w, xs).",
        "jax.vmap(predict, in_axes=(None, 0)) ist eine neue Funktion: None = dasselbe w für jedes Beispiel, "
        "0 = über die Zeilen von xs abbilden. Ruf sie mit (w, xs) auf.",
    ),
    solution=(
        "import jax\n\n\ndef predict_all(predict, w, xs):\n"
        "    return jax.vmap(predict, in_axes=(None, 0))(w, xs)  # same w, one row of xs each",
        "import jax\n\n\ndef predict_all(predict, w, xs):\n"
        "    return jax.vmap(predict, in_axes=(None, 0))(w, xs)  # dasselbe w, je eine Zeile von xs",
    ),
)

# %% [markdown] lang="en"
# ## 1. Compile time and run time
#
# Write `compile_and_run(f, x)`: return `(compile_seconds, run_seconds)`, the time to trace and
# compile `jax.jit(f)` for `x`, and the time of one run of the compiled program. The check hands you a
# function that sleeps a moment while it is traced (so compiling takes a known minimum) and then
# computes for about 45 ms. Two traps wait: `jax.jit(f)` by itself compiles nothing, and a call
# returns before its work is done.

# %% [markdown] lang="de"
# ## 1. Kompilierzeit und Laufzeit
#
# Schreib `compile_and_run(f, x)`: Gib `(compile_seconds, run_seconds)` zurück, die Zeit, um
# `jax.jit(f)` für `x` zu tracen und zu kompilieren, und die Zeit eines Laufs des kompilierten
# Programms. Die Prüfung gibt dir eine Funktion, die beim Tracing kurz schläft (Kompilieren dauert also
# mindestens eine bekannte Zeit) und dann etwa 45 ms rechnet. Zwei Fallen warten: `jax.jit(f)` allein
# kompiliert nichts, und ein Aufruf kehrt zurück, bevor seine Arbeit erledigt ist.


# %%
def compile_and_run(f, x):
    ### BEGIN SOLUTION
    # STARTER: return ____
    start = time.perf_counter()
    compiled = jax.jit(f).lower(x).compile()  # trace and compile
    compile_seconds = time.perf_counter() - start
    compiled(x).block_until_ready()  # one untimed run
    start = time.perf_counter()
    compiled(x).block_until_ready()  # wait until the work is done
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
def shard_shape(shape, spec, mesh_shape):
    ### BEGIN SOLUTION
    # STARTER: return ____
    block = []
    for i, size in enumerate(shape):
        entry = spec[i] if i < len(spec) else None
        if entry is None:
            block.append(size)  # not split
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
def dp_grads(loss_fn, params, x, y, mesh):
    ### BEGIN SOLUTION
    # STARTER: return ____
    batch = NamedSharding(mesh, P("data"))  # rows split 8 ways
    replicated = NamedSharding(mesh, P())  # a copy on every device
    params = jax.device_put(params, replicated)
    x, y = jax.device_put(x, batch), jax.device_put(y, batch)
    return jax.jit(jax.grad(loss_fn))(params, x, y)
    ### END SOLUTION


q3.check(dp_grads)

# %%
# q3.hint()
# q3.solution()

# %% [markdown] lang="en"
# ## 4. Batching with `vmap`
#
# `predict(w, x)` is written for **one** example `x` (a vector). Write `predict_all(predict, w, xs)`:
# the predictions for every row of `xs`, as one array with one row per example, using `jax.vmap`
# rather than a Python loop.

# %% [markdown] lang="de"
# ## 4. Batches mit `vmap`
#
# `predict(w, x)` ist für **ein** Beispiel `x` (einen Vektor) geschrieben. Schreib
# `predict_all(predict, w, xs)`: die Vorhersagen für jede Zeile von `xs`, als ein Array mit einer
# Zeile pro Beispiel, mit `jax.vmap` statt einer Python-Schleife.


# %%
def predict_all(predict, w, xs):
    ### BEGIN SOLUTION
    # STARTER: return ____
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
    print(tr(f"vmap is {looped.median / batched.median:.0f}× as fast as the Python loop: one call instead of "
             f"{len(xs)} calls, each with its own dispatch.",
             f"vmap ist {looped.median / batched.median:.0f}-mal so schnell wie die Python-Schleife: ein Aufruf "
             f"statt {len(xs)} Aufrufen mit je eigenem Dispatch."))  # fmt: skip
else:
    print(
        tr("Solve q4 first, then run this cell.", "Löse zuerst q4 und führe dann diese Zelle aus.")
    )

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
