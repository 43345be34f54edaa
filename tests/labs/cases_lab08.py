"""Lab 08's answers: right ones in several styles, wrong ones each with the feedback it must get.
Collected by tests/labs/test_labs.py.

The JAX checks of lab 08 shard over 8 devices. JAX fixes its number of CPU devices when its
backends start, so this module asks for 8 while it is imported, at collection time, before any
test has used JAX.
"""

from __future__ import annotations

import contextlib
import math
import time

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from tests.labs.labcase import Case

with contextlib.suppress(RuntimeError):  # JAX started already: the q3/q4 checks say so
    jax.config.update("jax_num_cpu_devices", 8)

LAB = "08_multi_device"


# --- q1: the bytes of a ring all-reduce ----------------------------------------------------------
def ring_fraction(n_bytes, devices):
    return 2 * (devices - 1) / devices * n_bytes


def ring_chunks(n_bytes, devices):  # two phases of N-1 chunks of whole bytes
    chunk = math.ceil(n_bytes / devices)
    return np.int64(2 * (devices - 1) * chunk)


def ring_two_phases(n_bytes, devices):  # reduce-scatter, then all-gather, in a loop
    chunk = n_bytes / devices
    sent = 0
    for _phase in ("reduce-scatter", "all-gather"):
        for _step in range(devices - 1):
            sent += chunk
    return sent


def ring_whole_ring(n_bytes, devices):  # the traffic of all devices together
    return devices * ring_fraction(n_bytes, devices)


def ring_gigabytes(n_bytes, devices):
    return ring_fraction(n_bytes, devices) / 1e9


def ring_bits_to_bytes(n_bytes, devices):  # divides by 8 as if the size were in bits
    return ring_fraction(n_bytes, devices) / 8


# --- q2: a DDP step, rank by rank --------------------------------------------------------------
def ddp_loop(make_model, x, y, world, seed=lambda rank: 0, rows=None, reduce="mean", loss=None):
    rows = rows or (lambda rank: slice(rank * len(x) // world, (rank + 1) * len(x) // world))
    loss = loss or torch.nn.functional.mse_loss
    grads = []
    for rank in range(world):
        model = make_model(seed(rank))
        part = rows(rank)
        loss(model(x[part]), y[part]).backward()
        grads.append([p.grad for p in model.parameters()])
    total = [sum(g) for g in zip(*grads, strict=True)]
    return [t / world for t in total] if reduce == "mean" else total


def ddp_split_by_size(make_model, x, y, world):  # split(world): chunks of `world` rows each
    grads = []
    for xs, ys in zip(x.split(world), y.split(world), strict=True):
        model = make_model(0)
        torch.nn.functional.mse_loss(model(xs), ys).backward()
        grads.append([p.grad for p in model.parameters()])
    return [sum(g) / len(grads) for g in zip(*grads, strict=True)]


def ddp_strided(
    make_model, x, y, world
):  # rank r takes rows r, r + world, ... (DistributedSampler)
    grads = []
    for rank in range(world):
        model = make_model(0)
        torch.nn.functional.mse_loss(model(x[rank::world]), y[rank::world]).backward()
        grads.append([p.grad for p in model.parameters()])
    return [torch.stack(g).mean(0) for g in zip(*grads, strict=True)]


def ddp_chunks(make_model, x, y, world):  # torch.chunk and torch.stack(...).mean
    parts = list(zip(x.chunk(world), y.chunk(world), strict=True))
    per_rank = []
    for xs, ys in parts:
        model = make_model(seed=0)
        loss = ((model(xs) - ys) ** 2).mean()
        per_rank.append(torch.autograd.grad(loss, list(model.parameters())))
    return [torch.stack(g).mean(0) for g in zip(*per_rank, strict=True)]


def ddp_one_model(make_model, x, y, world):  # one model, .grad adds up over the ranks
    model = make_model(0)
    grads = []
    for xs, ys in zip(x.chunk(world), y.chunk(world), strict=True):
        torch.nn.functional.mse_loss(model(xs), ys).backward()
        grads.append([p.grad.clone() for p in model.parameters()])
    return [sum(g) / world for g in zip(*grads, strict=True)]


def ddp_by_batch(make_model, x, y, world):  # the summed gradients over the batch's rows
    total = ddp_loop(make_model, x, y, world, reduce="sum")
    return [t / len(x) for t in total]


def ddp_loss_sum(make_model, x, y, world):  # each rank's squared errors summed, not averaged
    return ddp_loop(
        make_model,
        x,
        y,
        world,
        loss=lambda out, y: torch.nn.functional.mse_loss(out, y, reduction="sum"),
    )


def ddp_loss_sum_by_rows(make_model, x, y, world):  # the summed loss divided by the rows alone
    return ddp_loop(
        make_model,
        x,
        y,
        world,
        loss=lambda out, y: torch.nn.functional.mse_loss(out, y, reduction="sum") / len(y),
    )


def ddp_loss_per_row(make_model, x, y, world):  # squared errors summed per row, rows averaged
    return ddp_loop(make_model, x, y, world, loss=lambda out, y: ((out - y) ** 2).sum(1).mean())


def ddp_losses_averaged(make_model, x, y, world):  # the ranks' losses averaged, one backward()
    rows = len(x) // world
    losses = []
    for rank in range(world):
        model = make_model(0)
        part = slice(rank * rows, (rank + 1) * rows)
        losses.append(torch.nn.functional.mse_loss(model(x[part]), y[part]))
    (sum(losses) / world).backward()  # each model gets its own loss's share, divided by world
    return [p.grad for p in model.parameters()]  # the last rank's model


def ddp_rank_zero(make_model, x, y, world):  # the all-reduce left out: rank 0's gradients
    model = make_model(0)
    rows = len(x) // world
    torch.nn.functional.mse_loss(model(x[:rows]), y[:rows]).backward()
    return [p.grad for p in model.parameters()]


def ddp_zeroed(make_model, x, y, world):  # one model, its gradients zeroed per rank
    model = make_model(0)
    total = None
    for xs, ys in zip(x.chunk(world), y.chunk(world), strict=True):
        model.zero_grad()
        torch.nn.functional.mse_loss(model(xs), ys).backward()
        grads = [p.grad.clone() for p in model.parameters()]
        total = grads if total is None else [t + g for t, g in zip(total, grads, strict=True)]
    return [t / world for t in total]


# --- q3: the shape of one shard ------------------------------------------------------------------
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


def shard_pieces(shape, spec, mesh_shape):  # how many pieces, not how large
    padded = list(spec) + [None] * (len(shape) - len(spec))
    return tuple(
        1 if e is None else math.prod(mesh_shape[a] for a in ((e,) if isinstance(e, str) else e))
        for e in padded
    )


def shard_tuple_ignored(shape, spec, mesh_shape):  # .get: a tuple entry is no axis name
    padded = list(spec) + [None] * (len(shape) - len(spec))
    return tuple(size // mesh_shape.get(e, 1) for size, e in zip(shape, padded, strict=True))


def shard_ceil(shape, spec, mesh_shape):  # ceil division: the same where the sizes divide
    padded = list(spec) + [None] * (len(shape) - len(spec))
    block = []
    for size, e in zip(shape, padded, strict=True):
        axes = () if e is None else (e,) if isinstance(e, str) else e
        block.append(-(-size // math.prod(mesh_shape[a] for a in axes)))
    return block


def shard_modulo(shape, spec, mesh_shape):  # % for //
    return tuple(
        size % math.prod(mesh_shape[a] for a in ((e,) if isinstance(e, str) else e))
        if e is not None
        else size
        for size, e in zip(shape, list(spec) + [None] * (len(shape) - len(spec)), strict=True)
    )


def shard_raising(shape, spec, mesh_shape):
    block = []
    for i, size in enumerate(shape):
        entry = spec[i]
        block.append(size if entry is None else size // 2)
    return tuple(block)


# --- q4: a data-parallel gradient ----------------------------------------------------------------
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


def dp_shard_map(loss_fn, params, x, y, mesh):  # lesson 08's step by hand
    def local_loss(params, x, y):  # this device's rows; psum adds the 8 partial means
        return jax.lax.psum(loss_fn(params, x, y), "data") / 8

    global_loss = jax.shard_map(
        local_loss, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P()
    )
    return jax.jit(jax.grad(global_loss))(params, x, y)


def dp_shard_map_pmean(loss_fn, params, x, y, mesh):  # each device's gradient, then their mean
    def local_grads(params, x, y):
        return jax.lax.pmean(jax.grad(loss_fn)(params, x, y), "data")

    step = jax.shard_map(
        local_grads,
        mesh=mesh,
        in_specs=(P(), P("data"), P("data")),
        out_specs=P(),
        check_vma=False,  # the gradient varies per device until pmean
    )
    return jax.jit(step)(params, x, y)


def dp_shard_map_replicated(loss_fn, params, x, y, mesh):  # every device gets every row
    def local_loss(params, x, y):
        return jax.lax.psum(loss_fn(params, x, y), "data") / 8

    global_loss = jax.shard_map(local_loss, mesh=mesh, in_specs=(P(), P(), P()), out_specs=P())
    return jax.jit(jax.grad(global_loss))(params, x, y)


def dp_shard_map_pmean_loss(loss_fn, params, x, y, mesh):  # pmean of the loss: psum / 8
    def local_loss(params, x, y):
        return jax.lax.pmean(loss_fn(params, x, y), "data")

    global_loss = jax.shard_map(
        local_loss, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P()
    )
    return jax.jit(jax.grad(global_loss))(params, x, y)


def dp_shard_map_psum_only(loss_fn, params, x, y, mesh):  # psum of the means, not divided
    def local_loss(params, x, y):
        return jax.lax.psum(loss_fn(params, x, y), "data")

    global_loss = jax.shard_map(
        local_loss, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P()
    )
    return jax.jit(jax.grad(global_loss))(params, x, y)


def dp_params_only(loss_fn, params, x, y, mesh):  # x and y left alone: jit copies them
    params = jax.device_put(params, NamedSharding(mesh, P()))
    return jax.jit(jax.grad(loss_fn))(params, x, y)


def dp_as_tuple(loss_fn, params, x, y, mesh):  # (w, b) instead of the dict
    grads = dp_device_put(loss_fn, params, x, y, mesh)
    return grads["w"], grads["b"]


def dp_x_replicated(loss_fn, params, x, y, mesh):  # y split, x copied
    params = jax.device_put(params, NamedSharding(mesh, P()))
    x = jax.device_put(x, NamedSharding(mesh, P()))
    y = jax.device_put(y, NamedSharding(mesh, P("data")))
    return jax.jit(jax.grad(loss_fn))(params, x, y)


def dp_chunks_one_device(loss_fn, params, x, y, mesh):  # 8 chunks, one after the other
    parts = zip(jnp.split(x, 8), jnp.split(y, 8), strict=True)
    grads = [jax.grad(loss_fn)(params, xs, ys) for xs, ys in parts]
    return jax.tree.map(lambda *g: sum(g) / 8, *grads)


def dp_one_device(loss_fn, params, x, y, mesh):
    return jax.jit(jax.grad(loss_fn))(params, x, y)


def dp_replicated(loss_fn, params, x, y, mesh):
    return jax.jit(jax.grad(loss_fn))(*placed(params, x, y, mesh, batch_spec=()))


def dp_labels_replicated(loss_fn, params, x, y, mesh):  # x split, y copied: check y too
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


# --- q5: which parallelism? -----------------------------------------------------------------------
def choose_ints(n_params, bytes_per_param, gpu_memory, gpus):
    state = n_params * bytes_per_param
    if state <= gpu_memory:
        return "single" if gpus == 1 else "ddp"
    return "fsdp" if state <= gpus * gpu_memory else "none"


def choose_gib(n_params, bytes_per_param, gpu_memory, gpus):  # both in GiB, the share as a float
    state_gib, memory_gib = n_params * bytes_per_param / 2**30, gpu_memory / 2**30
    if gpus == 1:
        return "single" if state_gib <= memory_gib else "none"
    if state_gib <= memory_gib:
        return "ddp"
    return "fsdp" if state_gib / gpus <= memory_gib else "none"


def choose_numpy(n_params, bytes_per_param, gpu_memory, gpus):  # the share per GPU, in numpy
    state = np.int64(n_params) * np.int64(bytes_per_param)
    per_gpu = np.array([state, state / gpus])  # a full copy, one shard
    fits = per_gpu <= np.float64(gpu_memory)
    return np.str_("single" if gpus == 1 else "ddp") if fits[0] else ["none", "fsdp"][int(fits[1])]


def choose_torch(n_params, bytes_per_param, gpu_memory, gpus):
    state = torch.tensor(n_params, dtype=torch.int64) * bytes_per_param
    if bool(state <= gpu_memory):
        return "ddp" if gpus > 1 else "single"
    return "fsdp" if bool(state <= gpus * torch.tensor(gpu_memory)) else "none"


def choose_float32(n_params, bytes_per_param, gpu_memory, gpus):  # rounds away the last bytes
    state = torch.tensor(n_params * bytes_per_param, dtype=torch.float32)
    if state <= gpu_memory:
        return "single" if gpus == 1 else "ddp"
    return "fsdp" if state / gpus <= gpu_memory else "none"


def choose_floor(n_params, bytes_per_param, gpu_memory, gpus):  # the smallest shard
    if n_params * bytes_per_param <= gpu_memory:
        return "single" if gpus == 1 else "ddp"
    return "fsdp" if n_params // gpus * bytes_per_param <= gpu_memory else "none"


def fits_in(need, have):
    return need <= have


def choose_with(
    fits=fits_in, share=lambda s, g: s / g, copy=lambda s, g: s, bpp=None, one_gpu="single"
):
    """The right rule with one piece swapped: the test of a fit, the state a GPU holds under
    FSDP (share) or DDP (copy), the bytes per parameter, the answer for one GPU."""

    def choose(n_params, bytes_per_param, gpu_memory, gpus):
        state = n_params * (bpp or bytes_per_param)
        if fits(copy(state, gpus), gpu_memory):
            return one_gpu if gpus == 1 else "ddp"
        return "fsdp" if fits(share(state, gpus), gpu_memory) else "none"

    return choose


def choose_fsdp_first(n_params, bytes_per_param, gpu_memory, gpus):
    state = n_params * bytes_per_param
    if gpus > 1 and state / gpus <= gpu_memory:
        return "fsdp"
    return "single" if state <= gpu_memory else "none"


def choose_ddp_when_several(n_params, bytes_per_param, gpu_memory, gpus):
    if gpus > 1:
        return "ddp"
    return "single" if n_params * bytes_per_param <= gpu_memory else "none"


def choose_no_last_check(n_params, bytes_per_param, gpu_memory, gpus):
    state = n_params * bytes_per_param
    if state <= gpu_memory:
        return "single" if gpus == 1 else "ddp"
    return "fsdp" if gpus > 1 else "none"


def choose_single_fits(n_params, bytes_per_param, gpu_memory, gpus):  # ignores the count
    state = n_params * bytes_per_param
    if state <= gpu_memory:
        return "single"
    return "fsdp" if state / gpus <= gpu_memory else "none"


def choose_always_fits_one(n_params, bytes_per_param, gpu_memory, gpus):
    if gpus == 1:
        return "single"
    return choose_ints(n_params, bytes_per_param, gpu_memory, gpus)


def choose_params_not_bytes(n_params, bytes_per_param, gpu_memory, gpus):  # n, not n × bytes
    if n_params <= gpu_memory:
        return "single" if gpus == 1 else "ddp"
    return "fsdp" if n_params / gpus <= gpu_memory else "none"


def choose_gb_against_bytes(n_params, bytes_per_param, gpu_memory, gpus):  # GB vs bytes
    state_gb = n_params * bytes_per_param / 1e9
    if state_gb <= gpu_memory:
        return "single" if gpus == 1 else "ddp"
    return "fsdp" if state_gb / gpus <= gpu_memory else "none"


def choose_weights_only(n_params, bytes_per_param, gpu_memory, gpus):  # bf16 weights, 2 bytes
    return choose_ints(n_params, 2, gpu_memory, gpus)


def choose_shard_ceil(n_params, bytes_per_param, gpu_memory, gpus):  # each GPU's whole shard
    state = n_params * bytes_per_param
    if state <= gpu_memory:
        return "single" if gpus == 1 else "ddp"
    return "fsdp" if -(-n_params // gpus) * bytes_per_param <= gpu_memory else "none"


def choose_raising(n_params, bytes_per_param, gpu_memory, gpus):
    shard = n_params * bytes_per_param / (gpus - 1)
    return "fsdp" if shard <= gpu_memory else "none"


def choose_strict_shard(n_params, bytes_per_param, gpu_memory, gpus):  # `<` for the shard only
    state = n_params * bytes_per_param
    if state <= gpu_memory:
        return "single" if gpus == 1 else "ddp"
    return "fsdp" if state / gpus < gpu_memory else "none"


# --- q6: communication or computation? ----------------------------------------------------------
def comm_measure(allreduce, step):  # the course's timer
    from utils.timing.bench import measure

    a, s = measure(allreduce).median, measure(step).median
    return a, s, "communication" if a > s else "compute"


def seconds_per_call(fn, calls=20):
    fn()  # warm-up
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def comm_loop(allreduce, step):  # perf_counter around a loop, in a list
    times = [seconds_per_call(allreduce), seconds_per_call(step)]
    return [*times, ["compute", "communication"][int(times[0] > times[1])]]


def comm_with(verdict=None, scale=1.0, swap=False):
    """The loop timer with one piece changed: a fixed verdict, a unit, the two times swapped."""

    def answer(allreduce, step):
        a, s, v = comm_loop(allreduce, step)
        a, s = a * scale, s * scale
        return (s, a, v) if swap else (a, s, verdict or v)

    return answer


def comm_total(allreduce, step, calls=20):  # the whole loop, not one call
    times = []
    for fn in (allreduce, step):
        fn()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append(time.perf_counter() - start)
    return times[0], times[1], "communication" if times[0] > times[1] else "compute"


def comm_min(allreduce, step):  # the fastest of several calls
    def fastest(fn):
        times = []
        for _ in range(10):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return min(times)

    a, s = fastest(allreduce), fastest(step)
    return a, s, "communication" if a > s else "compute"


def comm_inverted(allreduce, step):  # the larger time read as the faster side
    a, s, _ = comm_loop(allreduce, step)
    return a, s, "communication" if a < s else "compute"


def comm_called_not_timed(allreduce, step):  # calls both, then returns a guess
    allreduce(), step()
    return 0.0, 0.0, "compute"


def comm_raising(allreduce, step):
    return allreduce(1), step()


def lt(need, have):
    return need < have


CASES = {
    (LAB, "ring_bytes"): Case(
        right=[
            ring_fraction,
            ring_chunks,
            lambda n, d: 2 * (d - 1) * (n // d),
            ring_two_phases,
        ],
        wrong=[
            (ring_whole_ring, "whole_ring"),
            (ring_gigabytes, "gigabytes"),
            (ring_bits_to_bytes, "eighth"),
            (lambda n, d: 2 * (d - 1) // d * n, "int_division"),
            (lambda n, d: (d - 1) / d * n, "one_phase"),
            (lambda n, d: 2 * n, "one_device"),  # also wrong for one device, checked first
            (lambda n, d: 2 * n if d > 1 else 0, "no_fraction"),
            (lambda n, d: (d - 1) * n, "naive"),
            (lambda n, d: 8 * ring_fraction(n, d), "bits"),
            (lambda n, d: n / d, "one_device"),
            (lambda n, d: 3 * (d - 1) / d * n, "wrong"),
            (lambda n, d: "2(N-1)/N", "not_a_number"),
        ],
        raising=lambda n, d: 2 * (d - 1) / (d - 1) * n,
        raising_line="2 * (d - 1) / (d - 1) * n",
    ),
    (LAB, "ddp_step"): Case(
        right=[ddp_loop, ddp_chunks, ddp_strided],
        wrong=[
            (ddp_one_model, "not_zeroed"),
            (ddp_by_batch, "by_batch"),
            (ddp_rank_zero, "one_rank"),
            (ddp_zeroed, "one_model"),
            (ddp_split_by_size, "not_split"),
            (lambda f, x, y, w: ddp_loop(f, x, y, w, reduce="sum"), "summed"),
            (lambda f, x, y, w: ddp_loop(f, x, y, w, rows=lambda r: slice(None)), "not_split"),
            (lambda f, x, y, w: ddp_loop(f, x, y, w, seed=lambda r: r), "seed_per_rank"),
            (
                lambda f, x, y, w: ddp_loop(f, x, y, w, rows=lambda r: slice(0, 1)),
                "one_rank",  # every rank took the first row, rank 0's share at one row per rank
            ),
            (lambda f, x, y, w: ddp_loop(f, x, y, w)[:1], "structure"),
            # rows × outputs times too large, never the ranks' number: not told "summed"
            (ddp_loss_sum, "loss_sum"),
            # right for one output: every seed draws several in its second round
            (ddp_loss_sum_by_rows, "outputs_summed"),
            (ddp_loss_per_row, "outputs_summed"),
            (ddp_losses_averaged, "wrong_gradients"),
        ],
        raising=lambda f, x, y, w: ddp_loop(f, x, y, w, seed=lambda r: None),
        raising_line="model = make_model(seed(rank))",
    ),
    (LAB, "shard_shape"): Case(
        right=[shard_loop, shard_numpy, shard_ceil],
        wrong=[
            (shard_pieces, "pieces"),
            (shard_tuple_ignored, "tuple_ignored"),
            (shard_modulo, "wrong"),
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
            # the sum equals the product for ("a", "c") on 2×2×2: other meshes and axes catch it
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
        right=[
            dp_device_put,
            dp_in_shardings,
            dp_eager,
            dp_shard_map,
            dp_shard_map_pmean,
            dp_shard_map_pmean_loss,
        ],
        wrong=[
            (dp_shard_map_psum_only, "summed"),
            (dp_params_only, "batch_replicated"),
            (dp_as_tuple, "structure"),
            (dp_x_replicated, "batch_replicated"),
            (dp_one_device, "one_device"),
            (dp_chunks_one_device, "one_device"),
            (dp_shard_map_replicated, "batch_replicated"),
            (dp_replicated, "batch_replicated"),
            (dp_labels_replicated, "batch_replicated"),  # only the labels' sharding tells
            (dp_shard_map_summed, "summed"),
            (dp_first_shard, "one_shard"),
            (dp_value_and_grad, "structure"),
        ],
        raising=dp_raising,
        raising_line='params = jax.device_put(params, NamedSharding(mesh, P("data")))',
    ),
    (LAB, "which_parallelism"): Case(
        right=[choose_ints, choose_gib, choose_numpy, choose_torch, choose_shard_ceil],
        wrong=[
            (choose_params_not_bytes, "not_bytes"),
            (choose_gb_against_bytes, "not_bytes"),
            (choose_weights_only, "weights_only"),
            (choose_with(fits=lt), "strict"),
            (choose_strict_shard, "strict"),
            # GB for GiB, either way round: the state in GB against the memory in GiB, and back
            (choose_with(fits=lambda need, have: need / 1e9 <= have / 2**30), "gb_gib"),
            (choose_with(fits=lambda need, have: need / 2**30 <= have / 1e9), "gb_gib"),
            (choose_with(share=lambda s, g: s), "fsdp_not_divided"),
            (choose_with(copy=lambda s, g: s / g), "ddp_divided"),
            (choose_ddp_when_several, "ddp_too_big"),
            (choose_fsdp_first, "fsdp_fits"),
            (choose_no_last_check, "fsdp_too_big"),
            (choose_with(one_gpu="ddp"), "one_gpu"),
            (choose_single_fits, "several_gpus"),
            (choose_with(bpp=16), "fixed_bytes"),
            (choose_float32, "one_more"),
            (choose_floor, "one_more"),
            (choose_always_fits_one, "wrong"),
            (lambda n, b, m, g: None, "not_an_answer"),
            (lambda n, b, m, g: choose_ints(n, b, m, g).upper(), "not_an_answer"),
            (lambda n, b, m, g: (choose_ints(n, b, m, g),), "not_an_answer"),
        ],
        raising=choose_raising,
        raising_line="shard = n_params * bytes_per_param / (gpus - 1)",
    ),
    (LAB, "comm_or_compute"): Case(
        right=[comm_measure, comm_loop, comm_min],
        wrong=[
            (comm_total, "off"),
            (comm_inverted, "verdict"),
            (comm_with(scale=1e6), "off"),  # microseconds
            (comm_with(verdict="communication"), "verdict"),
            (comm_with(verdict="compute"), "verdict"),
            (comm_with(verdict="comms"), "not_a_verdict"),
            (comm_with(scale=1e3), "milliseconds"),
            (comm_with(swap=True), "swapped"),
            (comm_called_not_timed, "off"),
            (lambda allreduce, step: (0.01, 0.01, "compute"), "not_measured"),
            (lambda allreduce, step: comm_loop(allreduce, step)[:2], "not_a_triple"),
        ],
        raising=comm_raising,
        raising_line="return allreduce(1), step()",
        timing=True,
        rounds_under_load=1,
    ),
}
