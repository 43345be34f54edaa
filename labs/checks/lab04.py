"""Checks of lab 04 (JAX on TPU): compile time and run time of a jitted function, the shape of one
shard of a sharded array, a data-parallel gradient on a mesh of 8 devices, and batching with vmap.

q1 judges the learner's timer by what happened while it ran, not by how fast this machine is: the
check's function records when it is traced, JAX reports when the compile ended, so the compile
time must cover exactly that (a run inside it, about 60 ms, shows); the run time is bracketed on
both sides by the median of runs measured right before and after, under the same load.
q4 checks the mechanism: `predict` must be traced by vmap (its argument is a batching tracer).
"""

from __future__ import annotations

import contextlib
import math
import statistics
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from utils import jaxcompat
from utils.checks import (
    Lab,
    LearnerError,
    Wrong,
    allclose,
    as_number,
    call,
    diagnose,
    matching,
    to_numpy,
)
from utils.i18n import text

with contextlib.suppress(RuntimeError):  # before JAX starts: 8 simulated CPU devices
    jax.config.update("jax_num_cpu_devices", 8)

lab = Lab("04")


def _mesh_devices():
    """The 8 devices the checks shard over; a clear message (no traceback) if there are fewer."""
    try:
        return jaxcompat.mesh_devices(8)
    except RuntimeError as err:
        raise Wrong("few_devices", str(err)) from None


# --- q1: compile time and run time ---------------------------------------------------------------
_REAL_CLOCK = time.perf_counter
_REAL_SLEEP = time.sleep
_RUN_TARGET = 0.06  # seconds of compute per run: far above the cost of a clock read or a dispatch


def _body(i, y):
    return jnp.tanh(y @ y)  # one matmul per step; tanh keeps the numbers bounded


class _Recorder:
    """What happened while the learner's function ran: when the check's `f` was traced (it
    sleeps while it is) and when JAX finished compiling (JAX's own monitoring event)."""

    def __init__(self):
        self.active = False
        self.traces: list[tuple[float, float]] = []
        self.compiled: list[float] = []

    @staticmethod
    def now() -> float:
        return _REAL_CLOCK()


_RECORDER: _Recorder | None = None


def _on_event(event: str, duration: float, **kwargs: Any) -> None:
    recorder = _RECORDER
    if recorder is not None and recorder.active and event.endswith("backend_compile_duration"):
        recorder.compiled.append(recorder.now())


jax.monitoring.register_event_duration_secs_listener(_on_event)
_STATE: dict[str, Any] = {}


def _warm() -> tuple[int, Any]:
    """(steps, loop): a loop of 128×128 matmuls that runs at least 60 ms here, compiled once."""
    if "steps" not in _STATE:
        loop = jax.jit(lambda x, count: jax.lax.fori_loop(0, count, _body, x))
        x = jnp.full((128, 128), 0.01)
        steps = 8
        loop(x, steps).block_until_ready()
        while (elapsed := _fastest_run(loop, x, steps, 3)) < 0.01 and steps < 2**24:
            steps *= 4
        _STATE["steps"] = max(1, round(steps * _RUN_TARGET / elapsed))
        _STATE["loop"] = loop
        _STATE["fastest"] = math.inf
    return _STATE["steps"], _STATE["loop"]


def _runs(loop, x, steps, count) -> list[float]:
    times = []
    for _ in range(count):
        start = _REAL_CLOCK()
        loop(x, steps).block_until_ready()
        times.append(_REAL_CLOCK() - start)
    if (
        "fastest" in _STATE
    ):  # the fastest run ever seen: no run, however idle the machine, is faster
        _STATE["fastest"] = min(_STATE["fastest"], *times)
    return times


def _fastest_run(loop, x, steps, count) -> float:
    """The length of the work itself: other programs on the machine only ever add time."""
    return min(_runs(loop, x, steps, count))


@contextlib.contextmanager
def _recording(recorder: _Recorder):
    """JAX's compile events go to `recorder` while the block runs."""
    global _RECORDER
    _RECORDER, recorder.active = recorder, True
    try:
        yield recorder
    finally:
        recorder.active = False


def _ms(seconds: float) -> float:
    return seconds * 1e3


def _pair(got):
    if not (isinstance(got, tuple | list) and len(got) == 2):
        raise Wrong(
            "not_a_pair",
            text(
                "Return two numbers, (compile_seconds, run_seconds); you returned {got}.",
                "Gib zwei Zahlen zurück, (compile_seconds, run_seconds); du hast {got} "
                "zurückgegeben.",
                got=repr(got)[:60],
            ),
        )
    return (
        as_number(got[0], ("the compile time", "die Kompilierzeit")),
        as_number(got[1], ("the run time", "die Laufzeit")),
    )


def _judge(compile_s, run_s, rec, run, total) -> str | None:
    # Lower bound: the fastest run seen in this kernel (load only ever adds time). Upper bound:
    # three runs as they take now (the median of five measured around the learner's function).
    """The key of the first mistake in (compile_s, run_s), or None; see `q1`."""
    trace_start = rec.traces[0][0]
    done = [c for c in rec.compiled if c >= trace_start]
    low = (done[0] if done else rec.traces[0][1]) - trace_start  # trace + compile: the least
    if compile_s < low - 0.25 * run - 1e-6:
        return "swapped" if run_s >= low - 0.25 * run else "compile_too_short"
    if compile_s > low + 0.6 * run:
        return "compile_includes_run"
    if compile_s + run_s > total + 1e-6:
        return "includes_compile"
    if run_s < 0.5 * _STATE["fastest"]:
        return "no_sync"  # the clock stopped when the run was queued, far below any run
    if run_s > 3 * run:
        return "run_too_long"
    return None


def _q1_message(key: str, **v: Any) -> str:
    messages = {
        "swapped": (
            "Your compile time ({c:.1f} ms) is shorter than tracing and compiling took here "
            "({low:.1f} ms), and your run time ({r:.1f} ms) is longer: the two look swapped. "
            "Return (compile_seconds, run_seconds) in this order.",
            "Deine Kompilierzeit ({c:.1f} ms) ist kürzer, als Tracen und Kompilieren hier gedauert "
            "haben ({low:.1f} ms), und deine Laufzeit ({r:.1f} ms) ist länger: Die beiden sehen "
            "vertauscht aus. Gib (compile_seconds, run_seconds) in dieser Reihenfolge zurück.",
        ),
        "compile_too_short": (
            "Your compile time is {c:.1f} ms, but tracing and compiling took {low:.1f} ms here "
            "(the check's function sleeps {sleep:.1f} ms while it is traced). jax.jit(f) alone "
            "compiles nothing: time jax.jit(f).lower(x).compile() on the fresh function.",
            "Deine Kompilierzeit ist {c:.1f} ms, Tracen und Kompilieren haben hier aber "
            "{low:.1f} ms gedauert (die Funktion der Prüfung schläft {sleep:.1f} ms, während sie "
            "getract wird). jax.jit(f) allein kompiliert nichts: Miss "
            "jax.jit(f).lower(x).compile() an der frischen Funktion.",
        ),
        "compile_includes_run": (
            "Your compile time ({c:.1f} ms) is longer than tracing and compiling took "
            "({low:.1f} ms) by about a run ({run:.1f} ms): it includes a run. The first call of "
            "jax.jit(f) traces, compiles and runs; time jax.jit(f).lower(x).compile() instead.",
            "Deine Kompilierzeit ({c:.1f} ms) ist um etwa einen Lauf ({run:.1f} ms) länger, als "
            "Tracen und Kompilieren gedauert haben ({low:.1f} ms): Sie enthält einen Lauf. Der "
            "erste Aufruf von jax.jit(f) tract, kompiliert und rechnet; miss stattdessen "
            "jax.jit(f).lower(x).compile().",
        ),
        "includes_compile": (
            "Your compile time ({c:.1f} ms) and run time ({r:.1f} ms) add up to more than your "
            "whole function took ({total:.1f} ms): the run time counts the compilation again. "
            "Restart the clock after compiling.",
            "Deine Kompilierzeit ({c:.1f} ms) und Laufzeit ({r:.1f} ms) ergeben zusammen mehr, als "
            "deine ganze Funktion gedauert hat ({total:.1f} ms): Die Laufzeit zählt das "
            "Kompilieren noch einmal mit. Starte die Uhr nach dem Kompilieren neu.",
        ),
        "no_sync": (
            "Your run time is {r:.1f} ms, but one run takes about {run:.1f} ms here: the clock "
            "stopped when the work was queued, not when it was done. Call .block_until_ready() "
            "on the result before you read the clock.",
            "Deine Laufzeit ist {r:.1f} ms, ein Lauf dauert hier aber etwa {run:.1f} ms: Die Uhr "
            "hat angehalten, als die Arbeit eingereiht war, nicht als sie fertig war. Ruf "
            ".block_until_ready() auf dem Ergebnis auf, bevor du die Uhr abliest.",
        ),
        "run_too_long": (
            "Your run time is {r:.1f} ms, but one run takes about {run:.1f} ms here: time one run "
            "of the compiled program (or divide by the number of runs you timed).",
            "Deine Laufzeit ist {r:.1f} ms, ein Lauf dauert hier aber etwa {run:.1f} ms: Miss einen "
            "Lauf des kompilierten Programms (oder teile durch die Zahl der gemessenen Läufe).",
        ),
        "milliseconds": (
            "You returned {c:.4g} and {r:.4g}: milliseconds. Return seconds (time.perf_counter() "
            "counts in seconds).",
            "Du hast {c:.4g} und {r:.4g} zurückgegeben: Millisekunden. Gib Sekunden zurück "
            "(time.perf_counter() zählt in Sekunden).",
        ),
        "microseconds": (
            "You returned {c:.4g} and {r:.4g}: microseconds. Return seconds (time.perf_counter() "
            "counts in seconds).",
            "Du hast {c:.4g} und {r:.4g} zurückgegeben: Mikrosekunden. Gib Sekunden zurück "
            "(time.perf_counter() zählt in Sekunden).",
        ),
    }
    return text(*messages[key], **v)


@lab.exercise(
    "compile_and_run",
    title=("Compile time and run time", "Kompilierzeit und Laufzeit"),
    points=2,
    hint=(
        "compiled = jax.jit(f).lower(x).compile() does tracing and compiling: time that line. "
        "Then call compiled(x).block_until_ready() once untimed, and time a second call, with "
        ".block_until_ready().",
        "compiled = jax.jit(f).lower(x).compile() erledigt Tracen und Kompilieren: Miss diese "
        "Zeile. Ruf dann compiled(x).block_until_ready() einmal ohne Uhr auf und miss einen "
        "zweiten Aufruf, mit .block_until_ready().",
    ),
)
def q1(compile_and_run, rng):
    steps, loop = _warm()
    sleep_s = rng.uniform(0.06, 0.12)
    rec = _Recorder()

    def f(x):
        start = rec.now()
        _REAL_SLEEP(sleep_s)  # Python runs only while JAX traces: this is part of compiling
        rec.traces.append((start, rec.now()))
        return jax.lax.fori_loop(0, steps, _body, x)

    key = jax.random.key(rng.randrange(2**31))
    x = jnp.full((128, 128), 0.01) + 1e-3 * jax.random.normal(key, (128, 128))
    before = _runs(loop, x, steps, 2)  # runs measured around the learner's: the load of now
    if _STATE["fastest"] < 0.6 * _RUN_TARGET:  # calibrated under load: a run got short
        steps = _STATE["steps"] = max(1, round(steps * _RUN_TARGET / _STATE["fastest"]))
        _STATE["fastest"] = math.inf
        before = _runs(loop, x, steps, 2)
    with _recording(rec):
        start = rec.now()
        got = call(compile_and_run, f, x)
        total = rec.now() - start
    after = _runs(loop, x, steps, 3)
    run = statistics.median(before + after)  # one run now, under the load of now
    compile_s, run_s = _pair(got)
    values = dict(c=_ms(compile_s), r=_ms(run_s), run=_ms(run), total=_ms(total))
    if not rec.traces:
        raise Wrong(
            "not_compiled",
            text(
                "Your function never traced f, so it compiled nothing: time "
                "jax.jit(f).lower(x).compile() and a run of the compiled program.",
                "Deine Funktion hat f nie getract, also nichts kompiliert: Miss "
                "jax.jit(f).lower(x).compile() und einen Lauf des kompilierten Programms.",
            ),
        )
    trace_start = rec.traces[0][0]
    done = [c for c in rec.compiled if c >= trace_start]
    values.update(low=_ms((done[0] if done else rec.traces[0][1]) - trace_start))
    values.update(sleep=_ms(sleep_s))
    mistake = _judge(compile_s, run_s, rec, run, total)
    if mistake is not None:
        low = values["low"] / 1e3
        for unit, factor in (("milliseconds", 1e-3), ("microseconds", 1e-6)):
            if 0.3 * low <= compile_s * factor <= 3 * (low + run) and run_s * factor <= 3 * run:
                raise Wrong(unit, _q1_message(unit, **values))
        raise Wrong(mistake, _q1_message(mistake, **values))
    return text(
        "Correct! Compiling took {c:.1f} ms (of which {sleep:.1f} ms the check's deliberate "
        "sleep while tracing), one run {r:.1f} ms (a run takes about {run:.1f} ms here now).",
        "Richtig! Kompilieren dauerte {c:.1f} ms (davon {sleep:.1f} ms der absichtliche Schlaf "
        "der Prüfung beim Tracen), ein Lauf {r:.1f} ms (ein Lauf dauert hier gerade etwa "
        "{run:.1f} ms).",
        **values,
    )


# --- q2: the shape of one shard ------------------------------------------------------------------
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
    """Seven layouts each time: both axes, one axis, tuples of axes (on a 2-D and a 3-D mesh), a
    spec shorter than the array, a 1-D mesh, and the smallest blocks (each split dimension exactly
    as large as its axes)."""
    two = rng.choice([(4, 2), (2, 4)])
    d, m = MESHES[two]
    layouts = [
        (two, 2, (d, m), False),
        (two, 2, (None, d), False),
        (two, 2, ((d, m), None), False),
        ((2, 2, 2), 2, (("a", "c"), "b"), False),
        (two, 3, (m,), False),
        ((8,), 2, (None, "x"), False),
        (two, 2, (m, d), True),
    ]
    for mesh_shape, ndim, spec, smallest in layouts:
        sizes = dict(zip(MESHES[mesh_shape], mesh_shape, strict=True))
        entries = list(spec) + [None] * (ndim - len(spec))
        shape = tuple(
            math.prod(sizes[a] for a in _axes(e)) * _factor(rng, e, smallest) for e in entries
        )
        yield shape, spec, sizes, mesh_shape


def _factor(rng, entry, smallest):
    """How many blocks' worth a dimension holds: 1 at the smallest; at least 3 for a tuple of
    axes, so that adding the sizes instead of multiplying them always shows."""
    if smallest and _axes(entry):
        return 1
    if len(_axes(entry)) > 1:
        return rng.randint(3, 6)
    return rng.randint(1, 6) * rng.choice([1, 2, 3])


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
    sharding = NamedSharding(mesh, P(*spec))
    if tuple(sharding.shard_shape(shape)) != want:  # a bug in the check, not the learner's
        raise AssertionError(f"lab 04 q2: expected {want}, JAX says {sharding.shard_shape(shape)}")
    return shape, tuple(want)


def _shard_message(key, shape, spec, mesh, got, want):
    messages = {
        "global_shape": (
            "you returned the whole array's shape. Each device holds only a block: divide each "
            "dimension by the size of the mesh axis its spec entry names.",
            "Du hast die Form des ganzen Arrays zurückgegeben. Jedes Gerät hält nur einen Block: "
            "Teile jede Dimension durch die Größe der Mesh-Achse, die ihr Spec-Eintrag nennt.",
        ),
        "all_devices": (
            "you divided by all 8 devices. A dimension is split only over the mesh axes its own "
            "spec entry names (mesh_shape[name]); the other axes hold copies.",
            "Du hast durch alle 8 Geräte geteilt. Eine Dimension wird nur über die Mesh-Achsen "
            "aufgeteilt, die ihr eigener Spec-Eintrag nennt (mesh_shape[name]); die anderen "
            "Achsen halten Kopien.",
        ),
        "first_axis_only": (
            "a spec entry can be a tuple of axes, such as ('data', 'model'): the dimension is "
            "then split over all of them, the product of their sizes. You used only the first.",
            "Ein Spec-Eintrag kann ein Tupel von Achsen sein, etwa ('data', 'model'): Die "
            "Dimension wird dann über alle aufgeteilt, das Produkt ihrer Größen. Du hast nur die "
            "erste genommen.",
        ),
        "by_position": (
            "you divided dimension i by the size of mesh axis i. The spec names the axis: divide "
            "by mesh_shape[name] of the names in that dimension's entry.",
            "Du hast Dimension i durch die Größe der Mesh-Achse i geteilt. Die Spec nennt die "
            "Achse: Teile durch mesh_shape[name] der Namen im Eintrag dieser Dimension.",
        ),
        "added_sizes": (
            "a dimension split over a tuple of axes is split into the product of their sizes, "
            "not the sum.",
            "Eine Dimension, die über ein Tupel von Achsen aufgeteilt wird, zerfällt in so viele "
            "Teile, wie das Produkt ihrer Größen angibt, nicht die Summe.",
        ),
        "multiplied": (
            "your block is bigger than the array: divide by the axis size, don't multiply.",
            "Dein Block ist größer als das Array: Teile durch die Achsengröße, statt zu "
            "multiplizieren.",
        ),
        "wrong": (
            "each device holds a block of shape {want}, not {got}.",
            "Jedes Gerät hält einen Block der Form {want}, nicht {got}.",
        ),
    }
    values = dict(shape=shape, spec=spec, mesh=mesh, got=got, want=want)
    return text(
        "For shape {shape}, spec {spec} on mesh {mesh}: ",
        "Für die Form {shape}, Spec {spec} auf dem Mesh {mesh}: ",
        **values,
    ) + text(*messages[key], **values)


def _by_position(shape, spec, sizes):
    names = list(sizes)
    entries = list(spec) + [None] * (len(shape) - len(spec))
    return tuple(
        size // sizes[names[i]] if _axes(e) and i < len(names) else size
        for i, (size, e) in enumerate(zip(shape, entries, strict=True))
    )


@lab.exercise(
    "shard_shape",
    title=("Predict the shard shape", "Die Shard-Form vorhersagen"),
    points=3,
    hint=(
        "Go through the dimensions: the spec entry of a dimension is None (whole), an axis name, "
        "or a tuple of names; divide the size by the product of mesh_shape[name] over those "
        "names. A spec shorter than the shape leaves the remaining dimensions whole.",
        "Geh die Dimensionen durch: Der Spec-Eintrag einer Dimension ist None (ganz), ein "
        "Achsenname oder ein Tupel von Namen; teile die Größe durch das Produkt von "
        "mesh_shape[name] über diese Namen. Eine Spec, die kürzer als die Form ist, lässt die "
        "übrigen Dimensionen ganz.",
    ),
)
def q2(shard_shape, rng):
    failures = []
    confirmed = None
    for shape, spec, sizes, mesh_shape in _q2_cases(rng):
        got = call(shard_shape, shape, spec, dict(sizes))
        want = _block(shape, spec, sizes)
        if not isinstance(got, tuple | list) or not all(
            isinstance(v, int | np.integer | float | np.floating) and not isinstance(v, bool)
            for v in got
        ):
            raise Wrong(
                "not_a_shape",
                text(
                    "Return the shape as a tuple of whole numbers, such as {want}; you returned "
                    "{got} ({kind}).",
                    "Gib die Form als Tupel ganzer Zahlen zurück, etwa {want}; du hast {got} "
                    "({kind}) zurückgegeben.",
                    want=want,
                    got=repr(got)[:60],
                    kind=type(got).__name__,
                ),
            )
        if len(got) != len(shape):
            raise Wrong(
                "dims",
                text(
                    "For shape {shape} and spec {spec} you returned {k} dimension(s), but a block "
                    "has as many dimensions as the array. Dimensions the spec does not mention "
                    "(it may be shorter) stay whole.",
                    "Für die Form {shape} und Spec {spec} hast du {k} Dimension(en) "
                    "zurückgegeben, ein Block hat aber so viele Dimensionen wie das Array. "
                    "Dimensionen, die die Spec nicht erwähnt (sie darf kürzer sein), bleiben ganz.",
                    shape=shape,
                    spec=spec,
                    k=len(got),
                ),
            )
        if any(isinstance(v, float | np.floating) for v in got):
            raise Wrong(
                "not_integers",
                text(
                    "Shapes are whole numbers, but you returned {got}: use // instead of / (the "
                    "sizes here always divide evenly).",
                    "Formen sind ganze Zahlen, du hast aber {got} zurückgegeben: Nimm // statt / "
                    "(die Größen hier gehen immer glatt auf).",
                    got=tuple(float(v) for v in got),
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
                "by_position": _by_position(shape, spec, sizes),
                "added_sizes": _block(
                    shape, spec, sizes, lambda size, axes, s=sizes: size // sum(s[a] for a in axes)
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
    if confirmed is None:
        return text(
            "Correct! You predict every shard shape.", "Richtig! Du sagst jede Shard-Form voraus."
        )
    return text(
        "Correct! You predict every shard shape, and JAX's NamedSharding on this machine's 8 "
        "devices agrees, e.g. blocks of {block} for shape {shape}.",
        "Richtig! Du sagst jede Shard-Form voraus, und JAXs NamedSharding auf den 8 Geräten "
        "dieser Maschine stimmt zu, z. B. Blöcke der Form {block} für die Form {shape}.",
        shape=confirmed[0],
        block=confirmed[1],
    )


# --- q3: a data-parallel gradient ----------------------------------------------------------------
def _q3_inputs(rng):
    features = rng.choice([3, 5, 6, 7])  # not multiples of 8: only the batch can split
    outputs = rng.choice([2, 3])
    batch = 8 * rng.choice([1, rng.randint(2, 6)])  # 8 rows: the smallest batch, one per device
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


def _layout_wrong(name, shape, sharding, shard_size):
    """The key and message if `name` (x or y) did not arrive in loss_fn split 8 ways, else None."""
    rows = sharding.shard_shape(shape)[0]
    v = dict(name=name, n=shape[0], rows=rows, want=shard_size)
    if len(sharding.device_set) == 1:
        return "one_device", text(
            "Right gradients, but all on one device: {name} arrived in loss_fn whole, on a single "
            "device. Put x and y split over the mesh, NamedSharding(mesh, P('data')), and params "
            "replicated, NamedSharding(mesh, P()).",
            "Richtige Gradienten, aber alle auf einem Gerät: {name} kam ganz und auf einem "
            "einzigen Gerät in loss_fn an. Leg x und y über das Mesh verteilt ab, "
            "NamedSharding(mesh, P('data')), und params repliziert, NamedSharding(mesh, P()).",
            **v,
        )
    if rows == shape[0]:
        return "batch_replicated", text(
            "Right gradients, but every device got all {n} rows of {name}: it was copied to the 8 "
            "devices, not split. Split its first dimension: P('data').",
            "Richtige Gradienten, aber jedes Gerät bekam alle {n} Zeilen von {name}: Es wurde auf "
            "die 8 Geräte kopiert, nicht aufgeteilt. Teile seine erste Dimension: P('data').",
            **v,
        )
    if rows != shard_size:
        return "not_all_devices", text(
            "Right gradients, but each device got {rows} of the {n} rows of {name} instead of "
            "{want}: split the batch over all 8 devices of the mesh.",
            "Richtige Gradienten, aber jedes Gerät bekam {rows} der {n} Zeilen von {name} statt "
            "{want}: Teile den Batch über alle 8 Geräte des Meshs auf.",
            **v,
        )
    return None


@lab.exercise(
    "data_parallel",
    title=("A data-parallel gradient", "Ein datenparalleler Gradient"),
    points=3,
    hint=(
        "Two shardings on the mesh: NamedSharding(mesh, P('data')) for x and y (rows split 8 "
        "ways) and NamedSharding(mesh, P()) for params (a copy on every device). jax.device_put "
        "each, then return jax.jit(jax.grad(loss_fn))(params, x, y).",
        "Zwei Shardings auf dem Mesh: NamedSharding(mesh, P('data')) für x und y (Zeilen in 8 "
        "Teile) und NamedSharding(mesh, P()) für params (eine Kopie auf jedem Gerät). Leg jedes "
        "mit jax.device_put ab und gib dann jax.jit(jax.grad(loss_fn))(params, x, y) zurück.",
    ),
)
def q3(dp_grads, rng):
    devices = _mesh_devices()
    mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,), devices=devices)
    params, x, y = _q3_inputs(rng)
    seen = {"x": [], "y": []}

    def loss_fn(params, x, y):  # the model's loss; it also notes how x and y are laid out
        for name, array in (("x", x), ("y", y)):
            jax.debug.inspect_array_sharding(
                array, callback=lambda s, n=name, a=array: seen[n].append((a.shape, s))
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
            text(
                "Return the gradients as a dict with the keys of params, {keys}, like "
                "jax.grad(loss_fn) does; you returned {kind}.",
                "Gib die Gradienten als dict mit den Schlüsseln von params zurück, {keys}, wie "
                "jax.grad(loss_fn) es tut; du hast {kind} zurückgegeben.",
                keys=sorted(params),
                kind=type(got).__name__,
            ),
        )
    for k in params:
        if getattr(to_numpy(got[k]), "shape", None) != want[k].shape:
            raise Wrong(
                "structure",
                text(
                    "The gradient for {k} should have the shape of params[{k!r}], {want}; yours "
                    "has {shape}.",
                    "Der Gradient für {k} sollte die Form von params[{k!r}] haben, {want}; deiner "
                    "hat {shape}.",
                    k=k,
                    want=want[k].shape,
                    shape=getattr(to_numpy(got[k]), "shape", None),
                ),
            )
    tol = {"rtol": 1e-4, "atol": 1e-5}
    if not all(allclose(got[k], want[k], **tol) for k in params):
        if all(allclose(got[k], 8 * want[k], **tol) for k in params):
            raise Wrong(
                "summed",
                text(
                    "Your gradients are 8 times too large: they were summed over the 8 devices "
                    "instead of averaged. (Inside shard_map, jax.grad of a replicated parameter "
                    "already sums over the devices.) jax.jit with shardings gets the mean right "
                    "by itself.",
                    "Deine Gradienten sind 8-mal zu groß: Sie wurden über die 8 Geräte summiert "
                    "statt gemittelt. (In shard_map summiert jax.grad eines replizierten "
                    "Parameters schon über die Geräte.) jax.jit mit Shardings bildet den "
                    "Mittelwert von selbst richtig.",
                ),
            )
        if shard_size < x.shape[0] and all(allclose(got[k], one_shard[k], **tol) for k in params):
            raise Wrong(
                "one_shard",
                text(
                    "Your gradients are those of one device's share of the batch only. The "
                    "gradient of the mean loss needs every example: let jit combine the shards.",
                    "Deine Gradienten gehören nur zum Anteil eines Geräts am Batch. Der Gradient "
                    "des mittleren Verlusts braucht jedes Beispiel: Lass jit die Teile "
                    "zusammenführen.",
                ),
            )
        raise Wrong(
            "wrong_gradients",
            text(
                "Your gradients differ from those of the same loss on one device. Compute "
                "jax.grad(loss_fn)(params, x, y), only with x and y split over the mesh.",
                "Deine Gradienten weichen von denen desselben Verlusts auf einem Gerät ab. Rechne "
                "jax.grad(loss_fn)(params, x, y), nur mit x und y über das Mesh verteilt.",
            ),
        )
    if not seen["x"]:
        raise Wrong(
            "loss_not_called",
            text(
                "Right numbers, but not from loss_fn: compute the gradient of the loss_fn you "
                "are given, jax.grad(loss_fn), so the check can see how x arrives there.",
                "Richtige Zahlen, aber nicht aus loss_fn: Rechne den Gradienten des übergebenen "
                "loss_fn, jax.grad(loss_fn), damit die Prüfung sieht, wie x dort ankommt.",
            ),
        )
    for name in ("x", "y"):
        shape, sharding = seen[name][-1]
        wrong = _layout_wrong(name, shape, sharding, shard_size)
        if wrong is not None:
            raise Wrong(*wrong)
    return text(
        "Correct! x and y arrived in loss_fn split over the 8 devices, {rows} of the {n} rows "
        "each, and the gradient equals the single-device one.",
        "Richtig! x und y kamen auf die 8 Geräte verteilt in loss_fn an, je {rows} der {n} "
        "Zeilen, und der Gradient ist gleich dem auf einem Gerät.",
        rows=shard_size,
        n=x.shape[0],
    )


# --- q4: batching with vmap ----------------------------------------------------------------------
def _batched(value: Any) -> bool:
    """True for the tracer jax.vmap hands a function (a batching tracer, in every JAX version)."""
    return isinstance(value, jax.core.Tracer) and type(value).__name__ == "BatchTracer"


def _refused_by_vmap(error: BaseException, calls: list) -> bool:
    """jax.vmap refused the axes before predict ran (by type and context: a ValueError, and
    predict never called; JAX hides its own frames from the traceback)."""
    return not calls and isinstance(error, ValueError)


@lab.exercise(
    "vmap",
    title=("Batching with vmap", "Batches mit vmap"),
    points=2,
    hint=(
        "jax.vmap(predict, in_axes=(None, 0)) is a new function: None = the same w for every "
        "example, 0 = map over the rows of xs. Call it with (w, xs).",
        "jax.vmap(predict, in_axes=(None, 0)) ist eine neue Funktion: None = dasselbe w für "
        "jedes Beispiel, 0 = über die Zeilen von xs abbilden. Ruf sie mit (w, xs) auf.",
    ),
)
def q4(predict_all, rng):
    features, outputs = rng.randint(3, 8), rng.choice([1, 3, rng.randint(3, 5)])
    n = rng.choice([2, rng.randint(features + 4, 40)])  # never equal to features or outputs
    keys = jax.random.split(jax.random.key(rng.randrange(2**31)), 2)
    w = jax.random.normal(keys[0], (outputs, features))
    xs = jax.random.normal(keys[1], (n, features))
    calls = []

    def predict(w, x):  # written for one example: x has shape (features,)
        calls.append((tuple(w.shape), tuple(x.shape), _batched(x), _batched(w)))
        return jnp.tanh(w @ x)

    want = np.stack([np.tanh(np.asarray(w) @ np.asarray(x)) for x in xs])
    v = dict(features=features, n=n, outputs=outputs, want=want.shape)
    wrong_axis = Wrong(
        "in_axes",
        text(
            "predict is written for one example of shape ({features},), with the same w for all. "
            "Map over axis 0 of xs and not over w: jax.vmap(predict, in_axes=(None, 0))(w, xs).",
            "predict ist für ein Beispiel der Form ({features},) geschrieben, mit demselben w für "
            "alle. Bilde über Achse 0 von xs ab und nicht über w: "
            "jax.vmap(predict, in_axes=(None, 0))(w, xs).",
            **v,
        ),
    )

    def mapped_wrong() -> bool:
        return any(c[:2] != (w.shape, (features,)) or c[3] for c in calls)

    try:
        got = call(predict_all, predict, w, xs)
    except LearnerError as failure:
        if mapped_wrong() or _refused_by_vmap(failure.error, calls):
            raise wrong_axis from None
        raise
    if mapped_wrong():
        raise wrong_axis
    try:
        array = to_numpy(got)
    except Exception:
        array = None
    if array is None or array.dtype.kind not in "fiu":
        raise Wrong(
            "not_an_array",
            text(
                "Return one array of shape {want} (what jax.vmap returns), not {kind}.",
                "Gib ein Array der Form {want} zurück (das, was jax.vmap liefert), nicht {kind}.",
                kind=type(got).__name__,
                **v,
            ),
        )
    shape = array.shape
    if shape == (outputs, n) and outputs != n and allclose(array.T, want, rtol=1e-4, atol=1e-5):
        raise Wrong(
            "transposed",
            text(
                "Your result has shape {shape}: one column per example. vmap puts the batch "
                "first, {want}; leave out_axes at 0.",
                "Dein Ergebnis hat die Form {shape}: eine Spalte pro Beispiel. vmap stellt den "
                "Batch nach vorn, {want}; lass out_axes bei 0.",
                shape=shape,
                **v,
            ),
        )
    if shape != want.shape or not allclose(array, want, rtol=1e-4, atol=1e-5):
        raise Wrong(
            "wrong",
            text(
                "For {n} examples your result should be predict(w, x) for each row x of xs, "
                "shape {want}; yours has shape {shape} or other values.",
                "Für {n} Beispiele sollte dein Ergebnis predict(w, x) für jede Zeile x von xs "
                "sein, Form {want}; deins hat die Form {shape} oder andere Werte.",
                shape=shape,
                **v,
            ),
        )
    if not calls:
        raise Wrong(
            "not_vmapped",
            text(
                "Right values, but predict never ran: you wrote the batched formula by hand. The "
                "exercise is to let jax.vmap batch the function you are given, whatever it "
                "computes: jax.vmap(predict, in_axes=(None, 0))(w, xs).",
                "Richtige Werte, aber predict lief nie: Du hast die Batch-Formel von Hand "
                "geschrieben. Die Aufgabe ist, jax.vmap die übergebene Funktion auf Batches "
                "erweitern zu lassen, was immer sie rechnet: "
                "jax.vmap(predict, in_axes=(None, 0))(w, xs).",
            ),
        )
    vmapped = [c for c in calls if c[2]]
    if not vmapped and len(calls) > 1:
        raise Wrong(
            "python_loop",
            text(
                "Right values, but predict ran {k} times, once per example: a Python loop. "
                "jax.vmap traces it once, for the whole batch.",
                "Richtige Werte, aber predict lief {k}-mal, einmal pro Beispiel: eine "
                "Python-Schleife. jax.vmap tract es einmal, für den ganzen Batch.",
                k=len(calls),
            ),
        )
    program = str(jax.make_jaxpr(lambda w, xs: predict_all(predict, w, xs))(w, xs))
    if not vmapped or "while" in program or "scan" in program:
        raise Wrong(
            "sequential",
            text(
                "Right values, but predict handled one example at a time (lax.map, lax.scan or "
                "a loop over a jitted predict), not the batch. jax.vmap turns the function into "
                "batched operations instead.",
                "Richtige Werte, aber predict hat ein Beispiel nach dem anderen bearbeitet "
                "(lax.map, lax.scan oder eine Schleife über ein gejittetes predict), nicht den "
                "Batch. jax.vmap macht aus der Funktion stattdessen Batch-Operationen.",
            ),
        )
    return text(
        "Correct! jax.vmap traced predict once, with a batch of all {n} examples, and the "
        "program has no loop.",
        "Richtig! jax.vmap hat predict einmal getract, mit einem Batch aller {n} Beispiele, und "
        "das Programm enthält keine Schleife.",
        n=n,
    )
