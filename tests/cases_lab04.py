"""Lab 04's answers: right ones in several styles, wrong ones each with the feedback it must get.
Collected by tests/test_labs.py; tests/test_lab04.py adds what is particular to this lab.

The checks of lab 04 shard over 8 devices. JAX fixes its number of CPU devices when its backends
start, so this module asks for 8 while it is imported, at collection time, before any test has
used JAX. tests/test_lab04.py asserts that it worked.
"""

from __future__ import annotations

import contextlib
import math
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from tests.labcase import Case
from utils.bench import measure

with contextlib.suppress(RuntimeError):  # JAX started already: test_lab04 reports it
    jax.config.update("jax_num_cpu_devices", 8)

LAB = "04_jax_tpu"


# --- q1: compile time and run time ---------------------------------------------------------------
def aot(f, x):  # the solution: ahead-of-time compile, then a synced run
    start = time.perf_counter()
    compiled = jax.jit(f).lower(x).compile()
    compile_seconds = time.perf_counter() - start
    compiled(x).block_until_ready()
    start = time.perf_counter()
    compiled(x).block_until_ready()
    return compile_seconds, time.perf_counter() - start


def aot_ns(f, x):  # nanosecond clock, jax.block_until_ready, lower and compile apart
    start = time.perf_counter_ns()
    lowered = jax.jit(f).lower(x)
    compiled = lowered.compile()
    compile_ns = time.perf_counter_ns() - start
    jax.block_until_ready(compiled(x))
    start = time.perf_counter_ns()
    jax.block_until_ready(compiled(x))
    return compile_ns / 1e9, (time.perf_counter_ns() - start) / 1e9


def first_call(f, x):  # the first call traces, compiles *and runs*: a compile time with a run
    jitted = jax.jit(f)
    start = time.perf_counter()
    jitted(x).block_until_ready()
    first = time.perf_counter() - start
    start = time.perf_counter()
    jitted(x).block_until_ready()
    return first, time.perf_counter() - start


def aot_mean_of_three(f, x):  # the mean of three synced runs
    start = time.perf_counter()
    compiled = jax.jit(f).lower(x).compile()
    compile_seconds = time.perf_counter() - start
    compiled(x).block_until_ready()
    start = time.perf_counter()
    for _ in range(3):
        compiled(x).block_until_ready()
    return compile_seconds, (time.perf_counter() - start) / 3


def with_bench(f, x):  # cold minus median: off by a run's spread under load, and it includes
    m = measure(jax.jit(f), x, min_time=0.05, min_blocks=3)  # the first run's extra cost
    return m.cold - m.median, m.median


def no_sync(f, x):  # the clock stops when the work is queued
    start = time.perf_counter()
    compiled = jax.jit(f).lower(x).compile()
    compile_seconds = time.perf_counter() - start
    compiled(x).block_until_ready()
    start = time.perf_counter()
    compiled(x)
    return compile_seconds, time.perf_counter() - start


def clock_not_restarted(f, x):  # the run is timed from before compiling
    start = time.perf_counter()
    compiled = jax.jit(f).lower(x).compile()
    compile_seconds = time.perf_counter() - start
    compiled(x).block_until_ready()
    return compile_seconds, time.perf_counter() - start


def jit_is_lazy(f, x):  # jax.jit(f) alone compiles nothing
    start = time.perf_counter()
    jitted = jax.jit(f)
    compile_seconds = time.perf_counter() - start
    jitted(x).block_until_ready()
    start = time.perf_counter()
    jitted(x).block_until_ready()
    return compile_seconds, time.perf_counter() - start


def run_timed_first(f, x):  # times the first call as "run", then compiles a cached program
    jitted = jax.jit(f)
    start = time.perf_counter()
    jitted(x).block_until_ready()
    run_seconds = time.perf_counter() - start
    start = time.perf_counter()
    jitted.lower(x).compile()
    return time.perf_counter() - start, run_seconds


def in_milliseconds(f, x):
    compile_seconds, run_seconds = aot(f, x)
    return compile_seconds * 1e3, run_seconds * 1e3


def ten_runs_undivided(f, x):  # ten runs timed, not divided by ten
    start = time.perf_counter()
    compiled = jax.jit(f).lower(x).compile()
    compile_seconds = time.perf_counter() - start
    compiled(x).block_until_ready()
    start = time.perf_counter()
    for _ in range(10):
        compiled(x).block_until_ready()
    return compile_seconds, time.perf_counter() - start


def sleep_and_constants(f, x):  # the old check passed it: no compile, plausible numbers
    time.sleep(0.3)
    return 0.15, 0.04


def compile_method(f, x):
    compiled = jax.jit(f).compile()
    return compiled, compiled


# --- q2: the shape of one shard --------------------------------------------------------------------
def shard_loop(shape, spec, mesh_shape):
    block = []
    for i, size in enumerate(shape):
        entry = spec[i] if i < len(spec) else None
        axes = () if entry is None else (entry,) if isinstance(entry, str) else entry
        block.append(size // math.prod(mesh_shape[a] for a in axes))
    return tuple(block)


def shard_numpy(shape, spec, mesh_shape):
    padded = list(spec) + [None] * (len(shape) - len(spec))
    ways = [
        1
        if e is None
        else mesh_shape[e]
        if isinstance(e, str)
        else np.prod([mesh_shape[a] for a in e])
        for e in padded
    ]
    return list(np.array(shape) // np.array(ways, dtype=int))


def shard_with(divide):
    def shard(shape, spec, mesh_shape):
        padded = list(spec) + [None] * (len(shape) - len(spec))
        return tuple(
            size if e is None else divide(size, (e,) if isinstance(e, str) else e, mesh_shape)
            for size, e in zip(shape, padded, strict=True)
        )

    return shard


def shard_by_position(shape, spec, mesh_shape):  # dimension i divided by mesh axis i
    names = list(mesh_shape)
    padded = list(spec) + [None] * (len(shape) - len(spec))
    return tuple(
        size // mesh_shape[names[i]] if e is not None and i < len(names) else size
        for i, (size, e) in enumerate(zip(shape, padded, strict=True))
    )


def shard_truncated(shape, spec, mesh_shape):  # zip stops at the shorter spec
    block = []
    for size, entry in zip(shape, spec):  # noqa: B905
        axes = () if entry is None else (entry,) if isinstance(entry, str) else entry
        block.append(size // math.prod(mesh_shape[a] for a in axes))
    return tuple(block)


def shard_raising(shape, spec, mesh_shape):
    block = []
    for i, size in enumerate(shape):
        entry = spec[i]
        block.append(size if entry is None else size // 2)
    return tuple(block)


# --- q3: a data-parallel gradient ----------------------------------------------------------------
def placed(params, x, y, mesh, batch_spec=("data",)):
    batch = NamedSharding(mesh, P(*batch_spec))
    params = jax.device_put(params, NamedSharding(mesh, P()))
    return params, jax.device_put(x, batch), jax.device_put(y, batch)


def dp_device_put(loss_fn, params, x, y, mesh):
    return jax.jit(jax.grad(loss_fn))(*placed(params, x, y, mesh))


def dp_in_shardings(loss_fn, params, x, y, mesh):
    batch, replicated = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    step = jax.jit(jax.grad(loss_fn), in_shardings=(replicated, batch, batch))
    return step(params, x, y)


def dp_eager(loss_fn, params, x, y, mesh):  # no jit: each operation runs sharded
    return jax.grad(loss_fn)(*placed(params, x, y, mesh))


def dp_one_device(loss_fn, params, x, y, mesh):
    return jax.jit(jax.grad(loss_fn))(params, x, y)


def dp_replicated(loss_fn, params, x, y, mesh):
    return jax.jit(jax.grad(loss_fn))(*placed(params, x, y, mesh, batch_spec=()))


def dp_labels_replicated(loss_fn, params, x, y, mesh):  # x split, y copied: the old check passed it
    params = jax.device_put(params, NamedSharding(mesh, P()))
    x = jax.device_put(x, NamedSharding(mesh, P("data")))
    y = jax.device_put(y, NamedSharding(mesh, P()))
    return jax.jit(jax.grad(loss_fn))(params, x, y)


def dp_shard_map_summed(loss_fn, params, x, y, mesh):  # each device's gradient, then psum'd by grad
    per_device = jax.shard_map(
        jax.grad(loss_fn), mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P()
    )
    return jax.jit(per_device)(*placed(params, x, y, mesh))


def dp_first_shard(loss_fn, params, x, y, mesh):
    rows = x.shape[0] // 8
    return jax.jit(jax.grad(loss_fn))(params, x[:rows], y[:rows])


def dp_value_and_grad(loss_fn, params, x, y, mesh):
    return jax.jit(jax.value_and_grad(loss_fn))(*placed(params, x, y, mesh))


def dp_raising(loss_fn, params, x, y, mesh):
    params = jax.device_put(params, NamedSharding(mesh, P("data")))
    return jax.grad(loss_fn)(params, x, y)


# --- q4: batching with vmap --------------------------------------------------------------------
def loop_over_jit(predict, w, xs):  # predict is traced once by jit, then called once per row
    one = jax.jit(predict)
    return jnp.stack([one(w, x) for x in xs])


# --- the cases ---------------------------------------------------------------------------------
CASES = {
    (LAB, "compile_and_run"): Case(
        right=[aot, aot_ns, aot_mean_of_three],
        wrong=[
            (no_sync, "no_sync"),
            (clock_not_restarted, "includes_compile"),
            (jit_is_lazy, "compile_too_short"),
            (run_timed_first, "swapped"),
            (first_call, "compile_includes_run"),  # the old check passed it
            (ten_runs_undivided, "run_too_long"),  # the old check passed it
            (sleep_and_constants, "not_compiled"),  # the old check passed it
            (lambda f, x: (150.0, 15.0), "not_compiled"),  # constants: nothing compiled
            (in_milliseconds, "milliseconds"),
            (lambda f, x: 0.15, "not_a_pair"),
            (lambda f, x: ("fast", 0.1), "not_a_number"),
        ],
        raising=compile_method,
        raising_line="compiled = jax.jit(f).compile()",
        timing=True,
    ),
    (LAB, "shard_shape"): Case(
        right=[shard_loop, shard_numpy],
        wrong=[
            (lambda shape, spec, mesh_shape: tuple(shape), "global_shape"),
            (shard_with(lambda size, axes, mesh: size // 8), "all_devices"),
            (shard_with(lambda size, axes, mesh: size // mesh[axes[0]]), "first_axis_only"),
            (
                shard_with(lambda size, axes, mesh: size * math.prod(mesh[a] for a in axes)),
                "multiplied",
            ),
            (
                shard_with(lambda size, axes, mesh: size / math.prod(mesh[a] for a in axes)),
                "not_integers",
            ),
            # the old check passed it whenever its one tuple of axes was ("a", "c") on 2×2×2
            (
                shard_with(lambda size, axes, mesh: size // sum(mesh[a] for a in axes)),
                "added_sizes",
            ),
            (shard_by_position, "by_position"),
            (shard_truncated, "dims"),
            (shard_with(lambda size, axes, mesh: size // (2 * len(axes))), "wrong"),
            (lambda shape, spec, mesh_shape: f"{shape}", "not_a_shape"),
            (lambda shape, spec, mesh_shape: (True,) * len(shape), "not_a_shape"),
        ],
        raising=shard_raising,
        raising_line="entry = spec[i]",
    ),
    (LAB, "data_parallel"): Case(
        right=[dp_device_put, dp_in_shardings, dp_eager],
        wrong=[
            (dp_one_device, "one_device"),
            (dp_replicated, "batch_replicated"),
            (dp_labels_replicated, "batch_replicated"),  # the old check passed it
            (dp_shard_map_summed, "summed"),
            (dp_first_shard, "one_shard"),
            (dp_value_and_grad, "structure"),
        ],
        raising=dp_raising,
        raising_line='params = jax.device_put(params, NamedSharding(mesh, P("data")))',
    ),
    (LAB, "vmap"): Case(
        right=[
            lambda predict, w, xs: jax.vmap(predict, in_axes=(None, 0))(w, xs),
            lambda predict, w, xs: jax.vmap(lambda x: predict(w, x))(xs),
            lambda predict, w, xs: jax.jit(jax.vmap(predict, in_axes=(None, 0)))(w, xs),
        ],
        wrong=[
            (lambda predict, w, xs: jnp.stack([predict(w, x) for x in xs]), "python_loop"),
            # the old check passed these two: by hand, and a loop over a jitted predict
            (lambda predict, w, xs: jnp.tanh(xs @ w.T), "not_vmapped"),
            (loop_over_jit, "sequential"),
            (lambda predict, w, xs: jax.vmap(predict)(w, xs), "in_axes"),
            (lambda predict, w, xs: jax.vmap(predict, in_axes=(None, 1))(w, xs), "in_axes"),
            (lambda predict, w, xs: jax.vmap(predict, (None, 0), out_axes=1)(w, xs), "transposed"),
            (lambda predict, w, xs: jax.lax.map(lambda x: predict(w, x), xs), "sequential"),
            (lambda predict, w, xs: jax.vmap(predict, in_axes=(None, 0))(w, xs)[:-1], "wrong"),
            (lambda predict, w, xs: "predictions", "not_an_array"),
        ],
        raising=lambda predict, w, xs: jax.vmap(predict, in_axes=(None, 0))(w, xs).numpy(),
        raising_line=".numpy()",
    ),
}
