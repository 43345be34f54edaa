"""Checks of lab 08 (beyond one device): the bytes a ring all-reduce sends per device, a DDP step
simulated rank by rank in one process, the shape of one shard of an array on a JAX mesh, a
data-parallel gradient on a mesh of 8 devices, which parallelism (one GPU, DDP, FSDP or none) a
model's training state allows, and whether an all-reduce or a step's computation takes longer.

q2 and q4 check the mechanism as well as the numbers: q2's model factory notes the seed and the
batch of each rank's model, q4's loss function how x and y arrive on the devices.  q5 asks on every
seed for states exactly as large as one GPU and as all of them, one parameter more, within the 7 %
between GB and GiB of both limits, one GPU, and the lesson's models.
"""

from __future__ import annotations

import contextlib
import functools
import math
import operator
import statistics
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from labs.kit import Lab, Mistake, Mistakes, Wrong, allclose, as_number, call, close, to_numpy
from utils.i18n import text
from utils.memory.fit import DEVICE_MEMORY
from utils.parallel import jaxdevices
from utils.units import GIB

with contextlib.suppress(RuntimeError):  # before JAX starts: 8 simulated CPU devices
    jax.config.update("jax_num_cpu_devices", 8)

lab = Lab("08")


@functools.cache
def _mesh(shape: tuple[int, ...] = (8,), names: tuple[str, ...] = ("data",)) -> jax.sharding.Mesh:
    """A mesh over the 8 devices the checks shard over, built once per shape; a clear message
    (no traceback) where there are fewer."""
    try:
        devices = jaxdevices.mesh_devices(8)
    except RuntimeError as err:
        raise Wrong("few_devices", str(err)) from None
    return jax.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(shape), devices=devices)


def _arrays(got: Any, like: list | dict) -> list | dict | None:
    """The answer as numpy arrays in the structure of `like` (a list, or a dict by key), each in
    the shape of its counterpart; None if it is not."""
    try:
        if isinstance(like, dict):
            if not isinstance(got, dict) or set(got) != set(like):
                return None
            arrays = {k: to_numpy(got[k]) for k in like}
        else:
            arrays = [to_numpy(g) for g in got]
    except Exception:
        return None
    pairs = arrays.items() if isinstance(arrays, dict) else enumerate(arrays)
    if len(arrays) != len(like) or any(
        a.dtype.kind not in "biuf" or a.shape != tuple(like[k].shape) for k, a in pairs
    ):
        return None
    return arrays


def _all_close(got, want, atol: float, times: float = 1) -> bool:
    """Each array of `got` close to `times` its counterpart in `want` (both lists, or dicts)."""
    keys = want if isinstance(want, dict) else range(len(want))
    return all(allclose(got[k], times * want[k], rtol=1e-4, atol=atol) for k in keys)


# --- q1: the bytes of a ring all-reduce ----------------------------------------------------------
# Filled with size (the bytes to reduce), n (the devices), want (the bytes each device sends).
RING = Mistakes(
    Mistake(
        "one_phase",
        "That is half, one phase: an all-reduce is a reduce-scatter and then an all-gather, each "
        "(N−1)/N · size.",
        "Das ist die Hälfte, eine Phase: Ein All-Reduce ist ein Reduce-Scatter und danach ein "
        "All-Gather, jeder mit (N−1)/N · size.",
        gives=lambda size, n, **_: (n - 1) / n * size,
    ),
    Mistake(
        "bits",
        "That is 8 times too many, bits: return bytes.",
        "Das ist 8-mal zu viel, das sind Bits: Gib Bytes zurück.",
        gives=lambda want, **_: 8 * want,
    ),
    Mistake(
        "naive",
        "That is (N−1) · size, every device sending its whole array to every other. The ring "
        "sends chunks of size/N: 2·(N−1)/N · size = {want:,.0f}.",
        "Das ist (N−1) · size: Jedes Gerät schickt sein ganzes Array an jedes andere. Der Ring "
        "schickt Stücke von size/N: 2·(N−1)/N · size = {want:,.0f}.",
        gives=lambda size, n, **_: (n - 1) * size,
    ),
    Mistake(
        "whole_ring",
        "That is the traffic of the whole ring, all {n} devices together. Each device sends "
        "2·(N−1)/N · size = {want:,.0f}.",
        "Das ist der Verkehr des ganzen Rings, aller {n} Geräte zusammen. Jedes Gerät sendet "
        "2·(N−1)/N · size = {want:,.0f}.",
        gives=lambda want, n, **_: n * want,
    ),
    Mistake(
        "gigabytes",
        "That is in GB: return bytes, {want:,.0f}.",
        "Das ist in GB: Gib Bytes zurück, {want:,.0f}.",
        gives=lambda want, **_: want / 1e9,
    ),
    Mistake(
        "eighth",
        "That is 8 times too few: n_bytes is already in bytes, nothing to divide by 8.",
        "Das ist 8-mal zu wenig: n_bytes ist schon in Bytes, da ist nichts durch 8 zu teilen.",
        gives=lambda want, **_: want / 8,
    ),
    Mistake(
        "one_device",
        "With one device there is nothing to exchange: 0 bytes.",
        "Mit einem Gerät gibt es nichts auszutauschen: 0 Byte.",
        when=lambda got, n, **_: n == 1,
    ),
    Mistake(
        "int_division",
        "2·(N−1)//N is 1 for every N ≥ 2: integer division drops the fraction before it "
        "multiplies the size. Divide with /, or multiply first.",
        "2·(N−1)//N ist 1 für jedes N ≥ 2: Die Ganzzahldivision wirft den Bruch weg, bevor er "
        "mit der Größe multipliziert wird. Teile mit / oder multipliziere zuerst.",
        gives=lambda size, n, **_: 2 * (n - 1) // n * size,
    ),
    Mistake(
        "no_fraction",
        "That is 2 · size, the limit for many devices. Each device sends N−1 chunks of size/N "
        "per phase: {want:,.0f}.",
        "Das ist 2 · size, die Grenze für viele Geräte. Jedes Gerät sendet pro Phase N−1 Stücke "
        "von size/N: {want:,.0f}.",
        gives=lambda size, **_: 2 * size,
    ),
    Mistake(
        "wrong",
        "A ring all-reduce sends {want:,.0f} bytes per device.",
        "Ein Ring-All-Reduce sendet {want:,.0f} Byte pro Gerät.",
    ),
    head=(
        "For size = {size:,} bytes and N = {n} you return {got:,.0f}.",
        "Für size = {size:,} Byte und N = {n} gibst du {got:,.0f} zurück.",
    ),
)


@lab.exercise(
    "ring_bytes",
    points=2,
    hint=(
        "Picture the ring: each device's array is cut into as many chunks as there are devices. "
        "How many steps does a chunk take to visit every device once to be summed, and how many "
        "more to bring the sum back to everyone?",
        "Stell dir den Ring vor: Das Array jedes Geräts wird in so viele Stücke geschnitten, wie "
        "es Geräte gibt. Wie viele Schritte braucht ein Stück, bis es einmal bei jedem Gerät "
        "aufaddiert wurde, und wie viele, bis die Summe wieder bei allen ist?",
    ),
)
def q1(ring_allreduce_bytes, rng):
    # an odd size: never a whole number of chunks; whole-byte chunks (rounded either way) pass
    size = rng.choice([1, 3, 7]) * 2 ** rng.randint(24, 30) + 2 * rng.randint(0, 999) + 1
    # one device (a wrong answer there says so first), two (the fraction is 1, where twice the
    # bytes is the whole ring as well as 2 · size), a ring of 8, a large odd one: the slip that
    # explains every failing ring says
    failures = []
    for n in (1, 2, 8, rng.choice([3, 5, 6, 1000])):
        got = call(ring_allreduce_bytes, size, n)
        got = as_number(got, ("the byte count", "die Anzahl der Bytes"), returned=True)
        want = 2 * (n - 1) / n * size
        if not close(got, want, abs_tol=2 * (n - 1)):
            failures.append((got, dict(size=size, n=n, want=want)))
    if failures and failures[0][1]["n"] == 1:
        raise RING.wrong_for(*failures[0])
    RING.diagnose(failures)
    return text(
        "Correct! On 8 devices each sends {f:.2f}× the gradients' size, on many almost 2×: the "
        "cost per device hardly grows with the number of devices.",
        "Richtig! Auf 8 Geräten sendet jedes das {f:.2f}-Fache der Gradientengröße, auf vielen "
        "fast das 2-Fache: Die Kosten pro Gerät wachsen kaum mit der Zahl der Geräte.",
        f=2 * 7 / 8,
    )


# --- q2: a DDP step, rank by rank ---------------------------------------------------------------
# Filled with world (the ranks), batch (its rows), rows (per rank), n (the parameters), seeds (the
# seeds the ranks built their models with), models and seen (the models built, the batch sizes
# their forward passes saw).
DDP = Mistakes(
    Mistake(
        "structure",
        "Return a list with one averaged gradient per parameter, in the order of "
        "model.parameters(): {n} tensors with the parameters' shapes.",
        "Gib eine Liste mit einem gemittelten Gradienten pro Parameter zurück, in der "
        "Reihenfolge von model.parameters(): {n} Tensoren in den Formen der Parameter.",
    ),
    Mistake(
        "seed_per_rank",
        "Your ranks built their models with different seeds, {seeds}: from different weights, "
        "their gradients cannot be averaged. DDP starts every rank from the same weights (it "
        "broadcasts rank 0's): make_model(0) on each.",
        "Deine Ränge haben ihre Modelle mit verschiedenen Seeds gebaut, {seeds}: Bei "
        "verschiedenen Gewichten lassen sich ihre Gradienten nicht mitteln. DDP startet jeden "
        "Rang mit denselben Gewichten (es sendet die von Rang 0 an alle): make_model(0) auf jedem.",
    ),
    Mistake(
        "summed",
        "Your gradients are {world} times too large: you summed the ranks' gradients. Each "
        "rank's loss is already a mean over its rows; DDP averages (the all-reduce sums, then "
        "divides by the {world} ranks).",
        "Deine Gradienten sind {world}-mal zu groß: Du hast die Gradienten der Ränge summiert. "
        "Der Verlust jedes Rangs ist schon ein Mittelwert über seine Zeilen; DDP mittelt (das "
        "All-Reduce summiert, dann teilt es durch die {world} Ränge).",
        when=lambda got, want, world, **_: _all_close(got, want, 1e-6, world),
    ),
    Mistake(
        "by_batch",
        "Your gradients are {rows} times too small: you divided the summed gradients by the "
        "{batch} rows. Each rank's loss is already a mean over its {rows} rows: divide by the "
        "{world} ranks.",
        "Deine Gradienten sind {rows}-mal zu klein: Du hast die summierten Gradienten durch die "
        "{batch} Zeilen geteilt. Der Verlust jedes Rangs ist schon ein Mittelwert über seine "
        "{rows} Zeilen: Teile durch die {world} Ränge.",
        when=lambda got, want, rows, **_: rows > 1 and _all_close(got, want, 1e-6, 1 / rows),
    ),
    Mistake(
        "loss_sum",
        "Your gradients are {factor} times too large: your loss sums the squared errors "
        '(reduction="sum") over each rank\'s {rows}×{outputs} numbers ({rows} rows, {outputs} '
        "outputs each). The full batch's mse_loss is their mean: keep mse_loss's default "
        "reduction, the mean, on every rank, and average the ranks.",
        "Deine Gradienten sind {factor}-mal zu groß: Dein Verlust summiert die quadrierten "
        'Fehler (reduction="sum") über die {rows}×{outputs} Zahlen jedes Rangs ({rows} '
        "Zeilen, je {outputs} Ausgaben). Der mse_loss des ganzen Batches ist ihr Mittelwert: "
        "Behalte auf jedem Rang die Voreinstellung von mse_loss, den Mittelwert, und mittle "
        "über die Ränge.",
        when=lambda got, want, factor, **_: factor > 1 and _all_close(got, want, 1e-6, factor),
    ),
    Mistake(
        "outputs_summed",
        "Your gradients are {outputs} times too large: your loss divides the summed squared "
        "errors by the {rows} rows, but each row has {outputs} outputs. mse_loss takes the mean "
        "over every number, rows × outputs: use it as it is.",
        "Deine Gradienten sind {outputs}-mal zu groß: Dein Verlust teilt die summierten "
        "quadrierten Fehler durch die {rows} Zeilen, aber jede Zeile hat {outputs} Ausgaben. "
        "mse_loss mittelt über alle Zahlen, Zeilen × Ausgaben: Nimm es, wie es ist.",
        when=lambda got, want, outputs, **_: outputs > 1 and _all_close(got, want, 1e-6, outputs),
    ),
    Mistake(
        "not_zeroed",
        "Your gradients add up from rank to rank: one model's .grad accumulates over its "
        "backward() calls, so the later ranks' gradients include the earlier ones'. Build a "
        "model per rank, make_model(0), as each DDP process has its own.",
        "Deine Gradienten summieren sich von Rang zu Rang: Das .grad eines Modells sammelt sich "
        "über seine backward()-Aufrufe an, also enthalten die Gradienten der späteren Ränge die "
        "der früheren. Bau ein Modell pro Rang, make_model(0), wie jeder DDP-Prozess sein "
        "eigenes hat.",
        when=lambda got, accumulated, **_: _all_close(got, accumulated, 1e-6),
    ),
    Mistake(
        "one_rank",
        "Those are the gradients of one rank's share of the batch only: the all-reduce averages "
        "the gradients of all {world} ranks.",
        "Das sind nur die Gradienten vom Anteil eines Rangs am Batch: Das All-Reduce mittelt die "
        "Gradienten aller {world} Ränge.",
        when=lambda got, per_rank, **_: any(_all_close(got, g, 1e-6) for g in per_rank),
    ),
    Mistake(
        "wrong_gradients",
        "Your averaged gradients differ from the full-batch gradient of the {batch} rows, the "
        "mean of the {world} ranks' gradients, each from mse_loss on the rank's share ({rows} "
        "of the {batch} rows) with its own model.",
        "Deine gemittelten Gradienten weichen vom Gradienten des ganzen Batches mit {batch} "
        "Zeilen ab, dem Mittelwert der Gradienten der {world} Ränge, jeder aus mse_loss auf dem "
        "Anteil des Rangs ({rows} der {batch} Zeilen) mit seinem eigenen Modell.",
    ),
    Mistake(
        "not_split",
        "Right numbers, but the batch was not split: {world} ranks should build {world} models, "
        "each seeing {rows} of the {batch} rows; yours built {models} and saw batches of {seen}.",
        "Richtige Zahlen, aber der Batch wurde nicht aufgeteilt: {world} Ränge sollten {world} "
        "Modelle bauen, die je {rows} der {batch} Zeilen sehen; deine haben {models} gebaut und "
        "Batches von {seen} gesehen.",
    ),
    Mistake(
        "one_model",
        "Right numbers, and the batch is split into {world} equal parts, but {built} for the "
        "{world} ranks. Each rank is its own process with its own model: build one per rank "
        "with make_model(0).",
        "Richtige Zahlen, und der Batch ist in {world} gleiche Teile aufgeteilt, aber {built} für "
        "die {world} Ränge. Jeder Rang ist ein eigener Prozess mit eigenem Modell: Bau eines pro "
        "Rang mit make_model(0).",
    ),
)


class _Factory:
    """make_model(seed): a small MLP, built after torch.manual_seed(seed); notes every seed and
    every batch its models see."""

    def __init__(self, features: int, hidden: int, outputs: int):
        self.shape = (features, hidden, outputs)
        self.seeds: list[int] = []
        self.batches: list[int] = []

    def __call__(self, seed: int = 0) -> torch.nn.Module:
        self.seeds.append(int(seed))
        torch.manual_seed(int(seed))
        f, h, o = self.shape
        model = torch.nn.Sequential(torch.nn.Linear(f, h), torch.nn.Tanh(), torch.nn.Linear(h, o))
        model.register_forward_pre_hook(lambda _m, args: self.batches.append(len(args[0])))
        return model


def _gradients(shape, x, y) -> list[torch.Tensor]:
    """The gradients of mse_loss on (x, y) of the model make_model(0) builds."""
    model = _Factory(*shape)(0)
    torch.nn.functional.mse_loss(model(x), y).backward()
    return [p.grad for p in model.parameters()]


@lab.exercise(
    "ddp_step",
    points=3,
    hint=(
        "Every rank must start from the same weights, or their gradients cannot be combined. "
        "Each rank's loss is a mean over its own rows: what do you do with the ranks' gradients "
        "so that the result is the gradient of the mean over all rows?",
        "Jeder Rang muss mit denselben Gewichten starten, sonst lassen sich ihre Gradienten "
        "nicht kombinieren. Der Verlust jedes Rangs ist ein Mittelwert über seine eigenen "
        "Zeilen: Was machst du mit den Gradienten der Ränge, damit der Gradient des Mittelwerts "
        "über alle Zeilen herauskommt?",
    ),
)
def q2(ddp_gradients, rng):
    # every seed: one row per rank (the smallest split), then several, on 2, 3 or 4 ranks
    for world, rows in ((rng.choice([2, 3, 4]), 1), (rng.choice([2, 3, 4]), rng.randint(2, 5))):
        # one output at one row per rank; then several, where a loss that sums over the rows or
        # the outputs shows, and never grows by exactly the ranks' number (summed gradients do)
        outputs = 1 if rows == 1 else rng.choice([o for o in (2, 3) if world not in (o, rows * o)])
        shape = rng.randint(3, 6), rng.randint(4, 8), outputs
        generator = torch.Generator().manual_seed(rng.randrange(2**31))
        x = torch.randn(world * rows, shape[0], generator=generator)
        y = torch.randn(world * rows, shape[2], generator=generator)
        want = _gradients(shape, x, y)
        factory = _Factory(*shape)
        got = _arrays(call(ddp_gradients, factory, x, y, world), want)
        v = dict(world=world, batch=world * rows, rows=rows, n=len(want), outputs=outputs)
        if got is None:
            raise DDP.wrong("structure", **v)
        if len(set(factory.seeds)) > 1:
            raise DDP.wrong("seed_per_rank", seeds=sorted(set(factory.seeds)))
        if not _all_close(got, want, 1e-6):
            # the course's gradients of each rank's rows, and what one model's .grad holds
            # after each of them when nothing zeroes it
            per_rank = [
                _gradients(shape, x[r * rows : (r + 1) * rows], y[r * rows : (r + 1) * rows])
                for r in range(world)
            ]
            accumulated = [
                sum(sum(g[i] for g in per_rank[: r + 1]) for r in range(world)) / world
                for i in range(len(want))
            ]
            slips = dict(
                want=want, per_rank=per_rank, accumulated=accumulated, factor=rows * outputs, **v
            )
            raise DDP.wrong_for(got, slips, otherwise="wrong_gradients")
        if sorted(factory.batches) != [rows] * world:
            raise DDP.wrong("not_split", models=len(factory.seeds), seen=factory.batches, **v)
        if len(factory.seeds) != world:
            built = (
                text("you built one model", "du hast ein einziges Modell gebaut")
                if len(factory.seeds) == 1
                else text(
                    "you built {m} models", "du hast {m} Modelle gebaut", m=len(factory.seeds)
                )
            )
            raise DDP.wrong("one_model", built=built, **v)
    return text(
        "Correct! {world} ranks, {rows} rows each, the same initial weights: the mean of their "
        "gradients is the full-batch gradient. That is what DDP's all-reduce computes.",
        "Richtig! {world} Ränge, je {rows} Zeilen, dieselben Anfangsgewichte: Der Mittelwert "
        "ihrer Gradienten ist der Gradient des ganzen Batches. Genau das rechnet das All-Reduce "
        "von DDP.",
        **v,
    )


# --- q3: the shape of one shard ------------------------------------------------------------------
MESHES = {
    (4, 2): ("data", "model"),
    (2, 4): ("data", "model"),
    (8,): ("x",),
    (2, 2, 2): ("a", "b", "c"),
}


def _axes(entry) -> tuple[str, ...]:
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


def _dividing(divide):
    """The block for (shape, spec, mesh) when each dimension that its spec entry splits becomes
    `divide(size, axes, mesh, i)` (i: its position); the rest stay whole (a spec may be shorter
    than the shape). The answer and each slip below are one such `divide`."""

    def block(shape, spec, mesh, **_):
        entries = [_axes(e) for e in spec] + [()] * (len(shape) - len(spec))
        return tuple(
            divide(size, axes, mesh, i) if axes else size
            for i, (size, axes) in enumerate(zip(shape, entries, strict=True))
        )

    return block


_block = _dividing(lambda size, axes, mesh, i: size // math.prod(mesh[a] for a in axes))

# Filled with shape, spec, mesh (axis name → size) and want (the block) of the layout, and got:
# first what is no shape, then the slips found by value, each message opened by its layout.
SHARD = Mistakes(
    Mistake(
        "not_a_shape",
        "Return the shape as a tuple of whole numbers, such as {want}, not {shown} ({kind}).",
        "Gib die Form als Tupel ganzer Zahlen zurück, etwa {want}, nicht {shown} ({kind}).",
    ),
    Mistake(
        "dims",
        "For shape {shape} and spec {spec} you returned {k} dimension(s), but a block has as many "
        "as the array. Dimensions the spec does not mention (it may be shorter) stay whole.",
        "Für die Form {shape} und Spec {spec} hast du {k} Dimension(en) zurückgegeben, ein Block "
        "hat aber so viele wie das Array. Dimensionen, die die Spec nicht erwähnt (sie darf "
        "kürzer sein), bleiben ganz.",
    ),
    Mistake(
        "not_integers",
        "Shapes are whole numbers, not {floats}: use // instead of / (the sizes here divide "
        "evenly).",
        "Formen sind ganze Zahlen, nicht {floats}: Nimm // statt / (die Größen hier gehen glatt "
        "auf).",
    ),
) + Mistakes(
    Mistake(
        "global_shape",
        "you returned the whole array's shape. Each device holds only a block: divide each "
        "dimension by the size of the mesh axis its spec entry names.",
        "Du hast die Form des ganzen Arrays zurückgegeben. Jedes Gerät hält nur einen Block: "
        "Teile jede Dimension durch die Größe der Mesh-Achse, die ihr Spec-Eintrag nennt.",
        gives=lambda shape, **_: tuple(shape),
    ),
    Mistake(
        "all_devices",
        "you divided by all 8 devices. A dimension is split only over the mesh axes its own "
        "spec entry names (mesh_shape[name]); the other axes hold copies.",
        "Du hast durch alle 8 Geräte geteilt. Eine Dimension wird nur über die Mesh-Achsen "
        "aufgeteilt, die ihr Spec-Eintrag nennt (mesh_shape[name]); die anderen halten Kopien.",
        gives=_dividing(lambda size, axes, mesh, i: size // 8),
    ),
    Mistake(
        "first_axis_only",
        "a spec entry can be a tuple of axes, such as ('data', 'model'): the dimension is then "
        "split over all of them, the product of their sizes. You used only the first.",
        "Ein Spec-Eintrag kann ein Tupel von Achsen sein, etwa ('data', 'model'): Die Dimension "
        "wird dann über alle aufgeteilt, das Produkt ihrer Größen. Du hast nur die erste genommen.",
        gives=_dividing(lambda size, axes, mesh, i: size // mesh[axes[0]]),
    ),
    Mistake(
        "by_position",
        "you divided dimension i by the size of mesh axis i. The spec names the axis: divide by "
        "mesh_shape[name] of the names in that dimension's entry.",
        "Du hast Dimension i durch die Größe der Mesh-Achse i geteilt. Die Spec nennt die "
        "Achse: Teile durch mesh_shape[name] der Namen im Eintrag dieser Dimension.",
        gives=_dividing(
            lambda size, axes, mesh, i: size // list(mesh.values())[i] if i < len(mesh) else size
        ),
    ),
    Mistake(
        "tuple_ignored",
        "a spec entry that is a tuple of axes, such as ('data', 'model'), splits its dimension "
        "too, into the product of their sizes; you left that dimension whole.",
        "Ein Spec-Eintrag, der ein Tupel von Achsen ist, etwa ('data', 'model'), teilt seine "
        "Dimension auch auf, in so viele Teile, wie das Produkt ihrer Größen angibt; du hast "
        "diese Dimension ganz gelassen.",
        gives=_dividing(
            lambda size, axes, mesh, i: size // mesh[axes[0]] if len(axes) == 1 else size
        ),
    ),
    Mistake(
        "added_sizes",
        "a dimension split over a tuple of axes is cut into the product of their sizes, not the "
        "sum.",
        "Eine Dimension, die über ein Tupel von Achsen aufgeteilt wird, zerfällt in so viele "
        "Teile, wie das Produkt ihrer Größen angibt, nicht die Summe.",
        gives=_dividing(lambda size, axes, mesh, i: size // sum(mesh[a] for a in axes)),
    ),
    Mistake(
        "pieces",
        "you returned into how many pieces each dimension is cut, {got}. The block's shape is "
        "each size divided by that number: {want}.",
        "Du hast zurückgegeben, in wie viele Stücke jede Dimension geschnitten wird, {got}. Die "
        "Form des Blocks ist jede Größe geteilt durch diese Zahl: {want}.",
        gives=lambda shape, spec, mesh, **_: tuple(
            math.prod(mesh[a] for a in _axes(e))
            for e in list(spec) + [None] * (len(shape) - len(spec))
        ),
    ),
    Mistake(
        "multiplied",
        "your block is bigger than the array: divide by the axis size, don't multiply.",
        "Dein Block ist größer als das Array: Teile durch die Achsengröße, multipliziere nicht.",
        gives=_dividing(lambda size, axes, mesh, i: size * math.prod(mesh[a] for a in axes)),
    ),
    Mistake(
        "wrong",
        "each device holds a block of shape {want}, not {got}.",
        "Jedes Gerät hält einen Block der Form {want}, nicht {got}.",
    ),
    head=(
        "For shape {shape}, spec {spec} on mesh {mesh}: ",
        "Für die Form {shape}, Spec {spec} auf dem Mesh {mesh}: ",
    ),
)


def _q3_layouts(rng):
    """Seven layouts each time: both axes, one axis, tuples of axes (on a 2-D and a 3-D mesh), a
    spec shorter than the array, a 1-D mesh, and the smallest blocks (each split dimension exactly
    as large as its axes). Yields (shape, spec, mesh: axis name → size)."""
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
        mesh = dict(zip(MESHES[mesh_shape], mesh_shape, strict=True))
        shape = []
        for entry in list(spec) + [None] * (ndim - len(spec)):
            axes = _axes(entry)
            # blocks' worth: 1 at the smallest; at least 3 for a tuple of axes, so that adding
            # the axes' sizes instead of multiplying them always shows
            if smallest and axes:
                blocks = 1
            elif len(axes) > 1:
                blocks = rng.randint(3, 6)
            else:
                blocks = rng.randint(1, 6) * rng.choice([1, 2, 3])
            shape.append(math.prod(mesh[a] for a in axes) * blocks)
        yield tuple(shape), spec, mesh


def _jax_block(shape, spec, mesh, want) -> tuple[int, ...] | None:
    """JAX's block on 8 real (or simulated) devices, which must be `want`; None in a kernel
    with fewer devices."""
    try:
        devices = _mesh(tuple(mesh.values()), tuple(mesh))
    except Wrong:
        return None
    block = tuple(NamedSharding(devices, P(*spec)).shard_shape(shape))
    if block != want:  # a bug in the check, not the learner's
        raise AssertionError(f"lab 08 q3: expected {want}, JAX says {block}")
    return block


def _whole_numbers(got, shape, spec, want) -> tuple[int, ...]:
    """The answer as a tuple of ints, one per dimension of the array, else the Wrong why not."""
    numbers = isinstance(got, tuple | list) and all(
        isinstance(v, int | np.integer | float | np.floating) and not isinstance(v, bool)
        for v in got
    )
    if not numbers:
        raise SHARD.wrong("not_a_shape", want=want, shown=repr(got)[:60], kind=type(got).__name__)
    if len(got) != len(shape):
        raise SHARD.wrong("dims", shape=shape, spec=spec, k=len(got))
    if any(isinstance(v, float | np.floating) for v in got):
        raise SHARD.wrong("not_integers", floats=tuple(float(v) for v in got))
    return tuple(int(v) for v in got)


@lab.exercise(
    "shard_shape",
    points=3,
    hint=(
        "Go through the dimensions one by one. A spec entry names the mesh axes a dimension is "
        "cut along; into how many pieces do those axes cut it? A dimension without an entry is "
        "not cut.",
        "Geh die Dimensionen einzeln durch. Ein Spec-Eintrag nennt die Mesh-Achsen, entlang "
        "derer eine Dimension geschnitten wird; in wie viele Stücke schneiden diese Achsen sie? "
        "Eine Dimension ohne Eintrag wird nicht geschnitten.",
    ),
)
def q3(shard_shape, rng):
    failures, confirmed = [], []
    for shape, spec, mesh in _q3_layouts(rng):
        want = _block(shape, spec, mesh)
        got = _whole_numbers(call(shard_shape, shape, spec, dict(mesh)), shape, spec, want)
        confirmed.append((shape, _jax_block(shape, spec, mesh, want)))
        if got != want:
            failures.append((got, dict(shape=shape, spec=spec, mesh=mesh, want=want)))
    SHARD.diagnose(failures)
    shape, block = confirmed[0]
    if block is None:
        return text(
            "Correct! You predict every shard shape.", "Richtig! Du sagst jede Shard-Form voraus."
        )
    return text(
        "Correct! You predict every shard shape, and JAX's NamedSharding on this machine's 8 "
        "devices agrees, e.g. blocks of {block} for shape {shape}.",
        "Richtig! Du sagst jede Shard-Form voraus, und JAXs NamedSharding auf den 8 Geräten "
        "dieser Maschine stimmt zu, z. B. Blöcke der Form {block} für die Form {shape}.",
        shape=shape,
        block=block,
    )


# --- q4: a data-parallel gradient ----------------------------------------------------------------
# Filled with keys and shapes (of params) and yours (what came back); the slips found by value
# read want (the gradients) and one_shard (those of the first device's rows alone).
GRADIENTS = Mistakes(
    Mistake(
        "structure",
        "Return the gradients as jax.grad(loss_fn) does: a dict with the keys of params, {keys}, "
        "each in the shape of its parameter, {shapes}; you returned {yours}.",
        "Gib die Gradienten so zurück wie jax.grad(loss_fn): ein dict mit den Schlüsseln von "
        "params, {keys}, jeden in der Form seines Parameters, {shapes}; du hast {yours} "
        "zurückgegeben.",
    ),
    Mistake(
        "summed",
        "Your gradients are 8 times too large: summed over the 8 devices, not averaged. (Inside "
        "shard_map, jax.grad of a replicated parameter already sums over the devices.) jax.jit "
        "with shardings gets the mean right by itself.",
        "Deine Gradienten sind 8-mal zu groß: über die 8 Geräte summiert statt gemittelt. (In "
        "shard_map summiert jax.grad eines replizierten Parameters schon über die Geräte.) "
        "jax.jit mit Shardings bildet den Mittelwert von selbst.",
        when=lambda got, want, **_: _all_close(got, want, 1e-5, 8),
    ),
    Mistake(
        "one_shard",
        "Your gradients are those of one device's share of the batch only. The gradient of "
        "the mean loss needs every example: let jit combine the shards.",
        "Deine Gradienten gehören nur zum Anteil eines Geräts am Batch. Der Gradient des "
        "mittleren Verlusts braucht jedes Beispiel: Lass jit die Teile zusammenführen.",
        when=lambda got, one_shard, **_: _all_close(got, one_shard, 1e-5),
    ),
    Mistake(
        "wrong_gradients",
        "Your gradients differ from those of the same loss on one device. Compute "
        "jax.grad(loss_fn)(params, x, y), only with x and y split over the mesh.",
        "Deine Gradienten weichen von denen desselben Verlusts auf einem Gerät ab. Rechne "
        "jax.grad(loss_fn)(params, x, y), nur mit x und y über das Mesh verteilt.",
    ),
)

# The right gradients, then how x and y arrived in loss_fn, in this order. Filled with name (x or
# y), n (its rows), devices and rows (the devices it was on and the rows each held), and
# per_device (the rows each device should hold); noted: whether loss_fn saw it at all.
LAYOUT = Mistakes(
    Mistake(
        "loss_not_called",
        "Right numbers, but not from loss_fn: compute jax.grad of the loss_fn you are given, so "
        "the check can see how x arrives there.",
        "Richtige Zahlen, aber nicht aus loss_fn: Rechne jax.grad des übergebenen loss_fn, damit "
        "die Prüfung sieht, wie x dort ankommt.",
        when=lambda got, noted, **_: not noted,
    ),
    Mistake(
        "one_device",
        "Right gradients, but {name} arrived in loss_fn on a single device. Put x and y split "
        "over the mesh, NamedSharding(mesh, P('data')), and params replicated, "
        "NamedSharding(mesh, P()).",
        "Richtige Gradienten, aber {name} kam auf einem einzigen Gerät in loss_fn an. Leg x und y "
        "über das Mesh verteilt ab, NamedSharding(mesh, P('data')), und params repliziert, "
        "NamedSharding(mesh, P()).",
        when=lambda got, devices, **_: devices == 1,
    ),
    Mistake(
        "batch_replicated",
        "Right gradients, but every device got all {n} rows of {name}: copied to the 8 devices, "
        "not split. Split its first dimension: P('data').",
        "Richtige Gradienten, aber jedes Gerät bekam alle {n} Zeilen von {name}: auf die 8 Geräte "
        "kopiert, nicht aufgeteilt. Teile seine erste Dimension: P('data').",
        when=lambda got, rows, n, **_: rows == n,
    ),
    Mistake(
        "not_all_devices",
        "Right gradients, but each device got {rows} of the {n} rows of {name} instead of "
        "{per_device}: split the batch over all 8 devices of the mesh.",
        "Richtige Gradienten, aber jedes Gerät bekam {rows} der {n} Zeilen von {name} statt "
        "{per_device}: Teile den Batch über alle 8 Geräte des Meshs auf.",
        when=lambda got, rows, per_device, **_: rows != per_device,
    ),
)

# A few shapes, so that JAX compiles each operation on them once, not once per draw: features
# and outputs not multiples of 8 (only the batch can split), one row per device or several.
Q4_SHAPES = ((3, 2), (5, 3))
Q4_ROWS = (3, 5)


def _q4_inputs(rng, batch):
    """params (w, b), x and y as float32 JAX arrays, drawn by numpy: no compilation per draw."""
    features, outputs = rng.choice(Q4_SHAPES)
    draw = np.random.default_rng(rng.randrange(2**31)).standard_normal
    shapes = (features, outputs), outputs, (batch, features), (batch, outputs)
    w, b, x, y = (jnp.asarray(draw(shape), jnp.float32) for shape in shapes)
    return {"w": w, "b": b}, x, y


def _mse(params, x, y):
    return jnp.mean((x @ params["w"] + params["b"] - y) ** 2)


def _mse_grads(params, x, y):
    """The gradient of _mse by hand, in float64 numpy: the single-device answer, exactly."""
    w, b, x, y = (np.asarray(a, np.float64) for a in (params["w"], params["b"], x, y))
    error = 2 * (x @ w + b - y) / y.size
    return {"w": x.T @ error, "b": error.sum(axis=0)}


def _watched_loss():
    """The model's loss, as the learner gets it, and what it notes: for x and y, on how many
    devices each arrived and how many rows each device held (inside shard_map over "data" an
    array is already one device's block, on all 8)."""
    seen: dict[str, tuple[int, int]] = {}

    def note(name, shape, local, sharding):
        if local:
            seen[name] = (8, shape[0])
        else:
            seen[name] = (len(sharding.device_set), sharding.shard_shape(shape)[0])

    def loss_fn(params, x, y):
        try:
            jax.lax.axis_index("data")
            local = True
        except NameError:  # not inside shard_map
            local = False
        for name, array in (("x", x), ("y", y)):
            jax.debug.inspect_array_sharding(
                array, callback=functools.partial(note, name, array.shape, local)
            )
        return _mse(params, x, y)

    return loss_fn, seen


@lab.exercise(
    "data_parallel",
    points=3,
    hint=(
        "Data parallelism is a placement: say how x and y are laid out over the mesh and how "
        "params are, and let jit compile the ordinary gradient. Which dimension of x is the "
        "batch, and which arrays does every device need whole?",
        "Datenparallelität ist eine Platzierung: Sag, wie x und y über das Mesh verteilt sind "
        "und wie params, und lass jit den gewöhnlichen Gradienten kompilieren. Welche Dimension "
        "von x ist der Batch, und welche Arrays braucht jedes Gerät ganz?",
    ),
)
def q4(dp_grads, rng):
    # every seed: one row per device (the smallest batch), then several
    for batch in (8, 8 * rng.choice(Q4_ROWS)):
        params, x, y = _q4_inputs(rng, batch)
        loss_fn, seen = _watched_loss()
        with jax.default_matmul_precision("float32"):  # a TPU's default would round to bf16
            answer = call(dp_grads, loss_fn, params, x, y, _mesh())
        want = _mse_grads(params, x, y)
        got = _arrays(answer, want)
        if got is None:
            shapes = {k: want[k].shape for k in sorted(want)}
            kind = type(answer).__name__
            yours = jax.tree.map(np.shape, answer) if isinstance(answer, dict) else kind
            raise GRADIENTS.wrong("structure", keys=sorted(want), shapes=shapes, yours=yours)
        if not _all_close(got, want, 1e-5):
            one_shard = _mse_grads(params, x[: batch // 8], y[: batch // 8])
            raise GRADIENTS.wrong_for(got, dict(want=want, one_shard=one_shard), "wrong_gradients")
        for name in ("x", "y"):  # how x and y arrived in loss_fn
            devices, rows = seen.get(name, (0, 0))
            case = dict(name=name, n=batch, per_device=batch // 8, devices=devices, rows=rows)
            if found := LAYOUT.explaining(None, dict(case, noted=name in seen)):
                raise LAYOUT.wrong(found[0], **case)
    return text(
        "Correct! x and y arrived in loss_fn split over the 8 devices, {rows} of the {n} rows "
        "each, and the gradient equals the single-device one.",
        "Richtig! x und y kamen auf die 8 Geräte verteilt in loss_fn an, je {rows} der {n} "
        "Zeilen, und der Gradient ist gleich dem auf einem Gerät.",
        rows=batch // 8,
        n=batch,
    )


# --- q5: which parallelism? ----------------------------------------------------------------------
CHOICES = ("single", "ddp", "fsdp", "none")
GPU_NAMES = ("T4", "A100", "H100")  # 15, 40 and 80 GiB (utils.memory.fit, lesson 03)
LESSON_BYTES = 16  # AdamW in mixed precision: fp32 weights 4, gradients 4, two moments 8


def _rule(state, memory, gpus, fits=operator.le):
    """The simplest way to train a state of `state` bytes on `gpus` GPUs of `memory` bytes."""
    if fits(state, memory):
        return "single" if gpus == 1 else "ddp"
    if fits(state, gpus * memory):  # FSDP: each GPU holds state / gpus
        return "fsdp"
    return "none"


# Parts of the messages below that depend on the question: the share per GPU (several GPUs
# only), what is exactly full, and the limit a state one parameter too large goes over.
SPLIT = (
    " ({share_gib:,.2f} GiB per GPU when split)",
    " ({share_gib:,.2f} GiB pro GPU, wenn aufgeteilt)",
)
FULL_STATE = (
    "The state is exactly as large as one GPU's memory",
    "Der Zustand ist genau so groß wie der Speicher einer GPU",
)
FULL_SHARE = (
    "Each GPU's share, {share:,} bytes, is exactly as large as its memory",
    "Der Anteil jeder GPU, {share:,} Byte, ist genau so groß wie ihr Speicher",
)
ONE_GPU = ("one GPU's memory", "der Speicher einer GPU")
ALL_GPUS = ("all {gpus} GPUs together", "alle {gpus} GPUs zusammen")


def _question(n_params, bpp, memory, gpus) -> dict[str, Any]:
    """One question, as the messages and the slips' conditions read it: its arguments, the
    answer (want), what `<` for `<=` answers (strict) and GB for GiB either way round (units);
    boundary: exactly full, where only `<` goes wrong; unit_case: where GB for GiB does; near: a
    few bytes over a limit, where a rounded state (float32, GiB, floor division) goes wrong."""
    n = int(n_params)
    state = n * bpp
    want, strict = _rule(state, memory, gpus), _rule(state, memory, gpus, operator.lt)
    units = {_rule(state * f, memory, gpus) for f in (GIB / 1e9, 1e9 / GIB)}
    boundary = strict != want
    unit_case = not boundary and units != {want}
    one = want == "fsdp" or gpus == 1  # over one GPU's memory, or over all of them
    limit = memory if one else gpus * memory
    full = FULL_STATE if state == memory else FULL_SHARE
    return dict(
        n=n,
        bpp=bpp,
        memory=memory,
        gpus=gpus,
        want=want,
        strict=strict,
        units=units,
        boundary=boundary,
        unit_case=unit_case,
        near=not boundary and min(abs(state - memory), abs(state - gpus * memory)) <= bpp * gpus,
        state=state,
        state_gib=state / GIB,
        share_gib=state / gpus / GIB,
        mem_gib=memory / GIB,
        gb=state / 1e9,
        mem_gb=memory / 1e9,
        pct=(GIB / 1e9 - 1) * 100,
        split="" if gpus == 1 else text(*SPLIT, share_gib=state / gpus / GIB),
        full=text(*full, share=state // gpus),
        over=state - limit,
        limit=limit,
        what=text(*ONE_GPU) if one else text(*ALL_GPUS, gpus=gpus),
    )


# Filled with a question's values (_question) and got, the answer. Each slip names the answer it
# gives: first those of the questions far from every limit, then those near one.
ANSWER = Mistakes(
    Mistake(
        "not_an_answer",
        "You returned {got!r} ({kind}). Return one of the strings 'single', 'ddp', 'fsdp' or "
        "'none', exactly so (lowercase, no spaces; 'none' is a string, not None).",
        "Du hast {got!r} ({kind}) zurückgegeben. Gib einen der Strings 'single', 'ddp', 'fsdp' "
        "oder 'none' zurück, genau so (kleingeschrieben, ohne Leerzeichen; 'none' ist ein "
        "String, nicht None).",
    ),
    Mistake(
        "fixed_bytes",
        "For {n:,} parameters at {bpp} bytes each you return {got!r}, the answer for 16 bytes per "
        "parameter. Use the bytes_per_param you are given: {state_gib:,.1f} GiB of state, "
        "{mem_gib:,.0f} GiB per GPU: {want!r}.",
        "Für {n:,} Parameter mit je {bpp} Byte gibst du {got!r} zurück, die Antwort für 16 Byte "
        "pro Parameter. Nimm das übergebene bytes_per_param: {state_gib:,.1f} GiB Zustand, "
        "{mem_gib:,.0f} GiB pro GPU: {want!r}.",
        when=lambda got, n, bpp, memory, gpus, **_: (
            bpp != LESSON_BYTES and got == _rule(n * LESSON_BYTES, memory, gpus)
        ),
    ),
    Mistake(
        "not_bytes",
        "For {n:,} parameters at {bpp} bytes each you return {got!r}, the answer for a state far "
        "smaller than it is: you compared the parameters, or the state in GB or GiB, with "
        "gpu_memory, which is in bytes. The state is n_params × bytes_per_param = {state:,} bytes "
        "({state_gib:,.1f} GiB), a GPU has {mem_gib:,.0f} GiB: {want!r}.",
        "Für {n:,} Parameter mit je {bpp} Byte gibst du {got!r} zurück, die Antwort für einen "
        "viel kleineren Zustand: Du hast die Parameter oder den Zustand in GB oder GiB mit "
        "gpu_memory verglichen, und das ist in Bytes. Der Zustand ist n_params × bytes_per_param "
        "= {state:,} Byte ({state_gib:,.1f} GiB), eine GPU hat {mem_gib:,.0f} GiB: {want!r}.",
        when=lambda got, n, bpp, memory, gpus, **_: any(
            got == _rule(n * bpp / unit, memory, gpus) for unit in (bpp, 1e9, GIB)
        ),
    ),
    Mistake(
        "weights_only",
        "For {n:,} parameters at {bpp} bytes each you return {got!r}, the answer for the weights "
        "alone (2 or 4 bytes per parameter). Training also keeps gradients and optimizer "
        "states: bytes_per_param counts them all, {state_gib:,.1f} GiB of state on GPUs of "
        "{mem_gib:,.0f} GiB: {want!r}.",
        "Für {n:,} Parameter mit je {bpp} Byte gibst du {got!r} zurück, die Antwort für die "
        "Gewichte allein (2 oder 4 Byte pro Parameter). Das Training hält auch Gradienten und "
        "Optimiererzustände: bytes_per_param zählt sie alle mit, {state_gib:,.1f} GiB Zustand "
        "auf GPUs mit {mem_gib:,.0f} GiB: {want!r}.",
        when=lambda got, n, memory, gpus, **_: any(
            got == _rule(n * weights, memory, gpus) for weights in (2, 4)
        ),
    ),
    Mistake(
        "wrong",
        "For n_params = {n:,}, bytes_per_param = {bpp}, gpu_memory = {memory:,} bytes "
        "({mem_gib:,.0f} GiB) and gpus = {gpus} you return {got!r}; the answer is {want!r}. "
        "The state is {state:,} bytes, {state_gib:,.2f} GiB{split}.",
        "Für n_params = {n:,}, bytes_per_param = {bpp}, gpu_memory = {memory:,} Byte "
        "({mem_gib:,.0f} GiB) und gpus = {gpus} gibst du {got!r} zurück; die Antwort ist "
        "{want!r}. Der Zustand ist {state:,} Byte groß, {state_gib:,.2f} GiB{split}.",
    ),
)
FAR = Mistakes(
    Mistake(
        "one_gpu",
        "With one GPU there is nothing to copy and nothing to split, yet you return {got!r} for "
        "gpus = 1. One GPU of {mem_gib:,.0f} GiB holds the {state_gib:,.1f} GiB of training state "
        "or it does not: {want!r}.",
        "Mit einer GPU gibt es nichts zu kopieren und nichts aufzuteilen, trotzdem gibst du "
        "{got!r} für gpus = 1 zurück. Eine GPU mit {mem_gib:,.0f} GiB fasst die {state_gib:,.1f} "
        "GiB Trainingszustand oder nicht: {want!r}.",
        when=lambda got, gpus, **_: gpus == 1 and got in ("ddp", "fsdp"),
    ),
) + Mistakes(
    Mistake(
        "several_gpus",
        "'single' is for one GPU only: {want!r}.",
        "'single' gilt nur für eine GPU: {want!r}.",
        when=lambda got, gpus, **_: gpus > 1 and got == "single",
    ),
    Mistake(
        "ddp_too_big",
        "DDP keeps the whole state on every GPU, and even split {gpus} ways it is "
        "{share_gib:,.1f} GiB per GPU, more than a GPU has: 'none'.",
        "DDP hält den ganzen Zustand auf jeder GPU, und selbst in {gpus} Teile aufgeteilt sind "
        "es {share_gib:,.1f} GiB pro GPU, mehr als eine GPU hat: 'none'.",
        when=lambda got, want, **_: got == "ddp" and want == "none",
    ),
    Mistake(
        "ddp_divided",
        "DDP splits the batch, not the model: every GPU would hold all of the state. Only FSDP "
        "divides it, {share_gib:,.1f} GiB per GPU: 'fsdp'.",
        "DDP teilt den Batch auf, nicht das Modell: Jede GPU hielte den ganzen Zustand. Nur FSDP "
        "teilt ihn auf, {share_gib:,.1f} GiB pro GPU: 'fsdp'.",
        when=lambda got, want, **_: got == "ddp" and want == "fsdp",
    ),
    Mistake(
        "fsdp_not_divided",
        "FSDP splits weights, gradients and optimizer states {gpus} ways: {share_gib:,.1f} GiB "
        "per GPU, and that fits: 'fsdp'.",
        "FSDP teilt Gewichte, Gradienten und Optimiererzustände in {gpus} Teile: "
        "{share_gib:,.1f} GiB pro GPU, und das passt: 'fsdp'.",
        when=lambda got, want, **_: got == "none" and want == "fsdp",
    ),
    Mistake(
        "fsdp_fits",
        "The whole state fits on one GPU, so nothing needs splitting: 'ddp' keeps a full copy "
        "on each and sends only the gradients.",
        "Der ganze Zustand passt auf eine GPU, also muss nichts aufgeteilt werden: 'ddp' hält "
        "auf jeder eine volle Kopie und sendet nur die Gradienten.",
        when=lambda got, want, **_: got == "fsdp" and want == "ddp",
    ),
    Mistake(
        "fsdp_too_big",
        "Even split {gpus} ways the state is {share_gib:,.1f} GiB per GPU, more than a GPU has: "
        "'none'. The shards must fit too.",
        "Selbst in {gpus} Teile aufgeteilt ist der Zustand {share_gib:,.1f} GiB pro GPU groß, "
        "mehr als eine GPU hat: 'none'. Auch die Teile müssen passen.",
        when=lambda got, want, **_: got == "fsdp" and want == "none",
    ),
    head=(
        "For {n:,} parameters ({state_gib:,.1f} GiB of training state) on {gpus} GPUs of "
        "{mem_gib:,.0f} GiB you return {got!r}.",
        "Für {n:,} Parameter ({state_gib:,.1f} GiB Trainingszustand) auf {gpus} GPUs mit "
        "{mem_gib:,.0f} GiB gibst du {got!r} zurück.",
    ),
)
NEAR = Mistakes(
    Mistake(
        "gb_gib",
        "For {n:,} parameters × {bpp} bytes = {gb:,.2f} GB = {state_gib:,.2f} GiB{split} on "
        "{gpus} GPU(s) of {mem_gib:,.0f} GiB = {mem_gb:,.2f} GB you return {got!r}; the answer is "
        "{want!r}. That is a GB/GiB slip: 1 GB = 10⁹ bytes, 1 GiB = 2³⁰ bytes, {pct:.1f}% more. "
        "Both numbers come in bytes: compare them as they are.",
        "Für {n:,} Parameter × {bpp} Byte = {gb:,.2f} GB = {state_gib:,.2f} GiB{split} auf "
        "{gpus} GPU(s) mit {mem_gib:,.0f} GiB = {mem_gb:,.2f} GB gibst du {got!r} zurück; die "
        "Antwort ist {want!r}. Das ist eine Verwechslung von GB und GiB: 1 GB = 10⁹ Byte, 1 GiB "
        "= 2³⁰ Byte, {pct:.1f} % mehr. Beide Zahlen sind in Byte angegeben: Vergleiche sie "
        "direkt.",
        when=lambda got, unit_case, near, units, **_: unit_case and not near and got in units,
    ),
) + Mistakes(
    Mistake(
        "strict",
        "{full}, and that still fits (<=, not <): {want!r}.",
        "{full}, und das passt noch (<=, nicht <): {want!r}.",
        when=lambda got, boundary, strict, **_: boundary and got == strict,
    ),
    Mistake(
        "one_more",
        "The answer is {want!r}: the state is {over:,} bytes more than {limit:,} bytes, {what}, "
        "one parameter too many to fit. Compare the exact whole numbers; float32, rounding to GiB "
        "or n_params // gpus lose those bytes.",
        "Die Antwort ist {want!r}: Der Zustand ist {over:,} Byte größer als {limit:,} Byte, "
        "{what}, ein Parameter zu viel, um zu passen. Vergleiche die genauen ganzen Zahlen; "
        "float32, Runden auf GiB oder n_params // gpus verlieren diese Bytes.",
        when=lambda got, near, **_: near,
    ),
    head=(
        "For {n:,} parameters × {bpp} bytes = {state:,} bytes on {gpus} GPU(s) of {memory:,} "
        "bytes you return {got!r}.",
        "Für {n:,} Parameter × {bpp} Byte = {state:,} Byte auf {gpus} GPU(s) mit {memory:,} "
        "Byte gibst du {got!r} zurück.",
    ),
)


def _q5_questions(rng):
    """Every seed: each answer, the lesson's models, states exactly as large as one GPU and as
    all of them (they fit) and one parameter more (they don't), states within the 7 % between GB
    and GiB on both sides of both limits, one GPU, and 18 bytes per parameter once."""

    def memory():
        return DEVICE_MEMORY[rng.choice(GPU_NAMES)]

    def sized(ratio, gpus, bpp=LESSON_BYTES):  # a state of ratio × one GPU's memory
        m = memory()
        return _question(round(ratio * m / bpp), bpp, m, gpus)

    def several():
        return rng.choice([2, 4, 8])

    h100 = DEVICE_MEMORY["H100"]
    lesson = (1.5e9, 8), (7e9, 8), (70e9, 8), (70e9, 64), (7e9, 1)  # ddp, fsdp, none, fsdp, none
    questions = [_question(n, LESSON_BYTES, h100, gpus) for n, gpus in lesson]
    questions += [
        sized(rng.uniform(0.2, 0.85), 1),
        sized(rng.uniform(0.2, 0.85), several()),
        sized(2 * rng.uniform(0.6, 0.85), 2),
        sized(rng.uniform(1.15, 4), 1),
        sized(rng.uniform(1.09, 1.11), 1, bpp=18),  # with 16 bytes it would fit
    ]
    g = rng.choice([4, 8, 16])
    questions.append(sized(g * rng.uniform(0.3, 0.85), g))
    g = several()
    questions.append(sized(g * rng.uniform(1.15, 3), g))
    g = rng.choice([2, 4, 8, 16])
    for gpus, limit in ((1, 1), (several(), 1), (g, g)):  # exactly full, then one parameter more
        m = memory()
        questions += [_question(n, 16, m, gpus) for n in (limit * m // 16, limit * m // 16 + 1)]
    g = rng.choice([4, 8])
    for gpus, limit in ((1, 1), (several(), 1), (g, g)):  # just below, just above the limit
        questions += [
            sized(limit * rng.uniform(0.94, 0.965), gpus),
            sized(limit * rng.uniform(1.03, 1.06), gpus),
        ]
    return questions


def _q5_verdict(answers: list[tuple[str, dict[str, Any]]]) -> None:
    """The slip the wrong answers show: a state of the wrong size (a fixed 16 bytes if every
    question far from a limit shows it; not in bytes, or the weights alone, if every answer is
    the one for that state), else the first slip a question far from the limits shows, else the
    first one near a limit shows."""
    wrong = [(got, q) for got, q in answers if got != q["want"]]
    far = [(got, q) for got, q in wrong if not q["boundary"] and not q["unit_case"]]
    if far and all(ANSWER.by_key["fixed_bytes"].fits(got, q) for got, q in far):
        raise ANSWER.wrong("fixed_bytes", got=far[0][0], **far[0][1])
    # a state not in bytes, or of the weights alone: every answer, right or wrong, is the one
    # for that smaller state (other slips agree with it only on some questions)
    for key in ("not_bytes", "weights_only"):
        if far and all(ANSWER.by_key[key].fits(got, q) for got, q in answers):
            raise ANSWER.wrong(key, got=far[0][0], **far[0][1])
    slips, failures = (FAR, far) if far else (NEAR, wrong)
    for slip in slips:
        for got, q in failures:
            if slip.fits(got, q):
                raise slips.wrong(slip.key, got=got, **q)
    if failures:
        raise ANSWER.wrong("wrong", got=failures[0][0], **failures[0][1])


@lab.exercise(
    "which_parallelism",
    points=2,
    hint=(
        "Ask in order: does one full copy of the state fit on one GPU? If not, does each GPU's "
        "share fit? Compare in the same unit as gpu_memory, and remember that exactly full still "
        "fits.",
        "Frag der Reihe nach: Passt eine volle Kopie des Zustands auf eine GPU? Wenn nicht, passt "
        "der Anteil jeder GPU? Vergleiche in derselben Einheit wie gpu_memory, und denk daran, "
        "dass genau voll noch passt.",
    ),
)
def q5(choose, rng):
    answers = []
    for q in _q5_questions(rng):
        got = call(choose, q["n"], q["bpp"], q["memory"], q["gpus"])
        if not (isinstance(got, str) and got in CHOICES):
            raise ANSWER.wrong("not_an_answer", got=got, kind=type(got).__name__)
        answers.append((got, q))
    _q5_verdict(answers)
    gib = [b * 1e9 * LESSON_BYTES / GIB for b in (1.5, 7, 70)]  # their training state
    return text(
        "Correct! The lesson's models on H100s of {h:.0f} GiB: {b:.1f}B parameters need "
        "{s15:,.0f} GiB, DDP on 8; 7B need {s7:,.0f} GiB, FSDP with {p7:,.0f} GiB per GPU on 8; "
        "70B need {s70:,.0f} GiB, {p70:,.0f} GiB per GPU on 8 (no), {q70:,.1f} GiB on 64 (FSDP).",
        "Richtig! Die Modelle der Lektion auf H100 mit {h:.0f} GiB: {b:.1f} Mrd. Parameter "
        "brauchen {s15:,.0f} GiB, DDP auf 8; 7 Mrd. brauchen {s7:,.0f} GiB, FSDP mit {p7:,.0f} "
        "GiB pro GPU auf 8; 70 Mrd. brauchen {s70:,.0f} GiB, {p70:,.0f} GiB pro GPU auf 8 "
        "(nein), {q70:,.1f} GiB auf 64 (FSDP).",
        **dict(h=DEVICE_MEMORY["H100"] / GIB, b=1.5, s15=gib[0], s7=gib[1], p7=gib[1] / 8),
        **dict(s70=gib[2], p70=gib[2] / 8, q70=gib[2] / 64),
    )


# --- q6: communication or computation? -----------------------------------------------------------
VERDICTS = ("communication", "compute")

# Filled with what (the function's name), got (the answer's number or verdict) and got_ms, median
# (seconds), median_ms, lo_ms and hi_ms (how long the check saw that function's calls take), and
# want (the verdict the answer's own two times give).
TIMES = Mistakes(
    Mistake(
        "not_a_triple",
        "Return three things: the seconds of one all-reduce, the seconds of one step, and "
        "'communication' or 'compute'; you returned {kind}{size}.",
        "Gib drei Dinge zurück: die Sekunden eines All-Reduce, die Sekunden eines Schritts und "
        "'communication' oder 'compute'; du hast {kind}{size} zurückgegeben.",
    ),
    Mistake(
        "not_measured",
        "Your function never called {what}(): the time must come from a measurement on this "
        "device, e.g. measure({what}).median.",
        "Deine Funktion hat {what}() nie aufgerufen: Die Zeit muss aus einer Messung auf diesem "
        "Gerät kommen, z. B. measure({what}).median.",
    ),
    Mistake(
        "milliseconds",
        "Your time for {what}() is {got:,.3g}, about a thousand times the {median_ms:,.2f} ms "
        "a call took here: milliseconds? Return seconds.",
        "Deine Zeit für {what}() ist {got:,.3g}, etwa das Tausendfache der {median_ms:,.2f} "
        "ms, die ein Aufruf hier gedauert hat: Millisekunden? Gib Sekunden zurück.",
        when=lambda got, median, **_: 250 * median <= got <= 4000 * median,
    ),
    Mistake(
        "swapped",
        "Your time for {what}() is {got_ms:,.2f} ms, the other function's: the two times are "
        "swapped. First the all-reduce, then the step.",
        "Deine Zeit für {what}() ist {got_ms:,.2f} ms, die der anderen Funktion: Die beiden "
        "Zeiten sind vertauscht. Zuerst das All-Reduce, dann der Schritt.",
        when=lambda got, swapped, **_: swapped,
    ),
    Mistake(
        "off",
        "Your time for {what}() is {got_ms:,.2f} ms, but its calls took {lo_ms:,.2f} to "
        "{hi_ms:,.2f} ms here (median {median_ms:,.2f} ms). Time several calls after a warm-up "
        "and return one call's time in seconds.",
        "Deine Zeit für {what}() ist {got_ms:,.2f} ms, ihre Aufrufe haben hier aber {lo_ms:,.2f} "
        "bis {hi_ms:,.2f} ms gedauert (Median {median_ms:,.2f} ms). Miss mehrere Aufrufe nach dem "
        "Aufwärmen und gib die Zeit eines Aufrufs in Sekunden zurück.",
    ),
    Mistake(
        "not_a_verdict",
        "The third item should be exactly 'communication' or 'compute', not {got!r}.",
        "Das dritte Element sollte genau 'communication' oder 'compute' sein, nicht {got!r}.",
    ),
    Mistake(
        "verdict",
        "Your times are right, but your verdict {got!r} does not follow from them: the all-reduce "
        "takes {a_ms:,.2f} ms and the step {s_ms:,.2f} ms, so {want!r} takes longer.",
        "Deine Zeiten stimmen, aber dein Urteil {got!r} folgt nicht aus ihnen: Das All-Reduce "
        "dauert {a_ms:,.2f} ms und der Schritt {s_ms:,.2f} ms, also dauert {want!r} länger.",
    ),
)


class _Timed:
    """One of the check's functions, warmed up; it notes how long each call takes (it waits for
    the result, so a learner's timer needs no sync)."""

    def __init__(self, fn, *args):
        self.fn, self.args, self.times = fn, args, []
        self.first = self.last = 0.0  # the first call's start, the last call's end
        jax.block_until_ready(fn(*args))  # compiled before the learner times it

    def __call__(self):
        start = time.perf_counter()
        out = jax.block_until_ready(self.fn(*self.args))
        self.last = time.perf_counter()
        self.first = self.first or start
        self.times.append(self.last - start)
        return out

    def wall_per_call(self) -> float:
        """The wall time from the first call's start to the last one's end, per call after the
        first (a warm-up): a loop's clock also runs between the calls, when the machine is busy
        for milliseconds at a time."""
        return (self.last - self.first) / max(len(self.times) - 1, 1)


@functools.cache
def _psum():
    """The all-reduce of a gradient over the 8 devices of the mesh, compiled once per size."""
    return jax.jit(
        jax.shard_map(
            lambda g: jax.lax.psum(g, "data"), in_specs=P("data"), out_specs=P(), mesh=_mesh()
        )
    )


_layer = jax.jit(lambda a: jnp.tanh(a @ a))  # a step's computation: a matmul and its activation


def _plausible(seconds: float, fn: _Timed) -> bool:
    """Whether a time per call could come from these calls: a timer may report their minimum,
    median or mean, or the wall time of a loop around them, and a busy machine makes a few calls
    slow."""
    top = max(statistics.median(fn.times), statistics.fmean(fn.times), fn.wall_per_call())
    return min(fn.times) / 3 <= seconds <= 3 * top


def _seconds(got, fn: _Timed, other: _Timed, what: str) -> float:
    """The answer's time for `fn`, if its calls could have given it, else the Wrong why not."""
    if not fn.times:
        raise TIMES.wrong("not_measured", what=what)
    got = as_number(got, ("the time", "die Zeit"))
    if _plausible(got, fn):
        return got
    median = statistics.median(fn.times)
    swapped = bool(other.times) and _plausible(got, other)
    ms = dict(got_ms=got * 1e3, median_ms=median * 1e3, lo_ms=min(fn.times) * 1e3)
    case = dict(what=what, median=median, hi_ms=max(fn.times) * 1e3, swapped=swapped, **ms)
    raise TIMES.wrong_for(got, case, otherwise="off")


@lab.exercise(
    "comm_or_compute",
    points=2,
    hint=(
        "Time each function on its own, as lesson 01 taught: a warm-up, then many calls, the "
        "median of one. Then ask which of the two a DDP step would wait for longer.",
        "Miss jede Funktion für sich, wie in Lektion 01: aufwärmen, dann viele Aufrufe, der "
        "Median eines einzigen. Dann frag dich, auf welche der beiden ein DDP-Schritt länger "
        "warten würde.",
    ),
)
def q6(comm_or_compute, rng):
    mesh = _mesh()
    # a large gradient with little computation, then a small one with much: both verdicts
    rounds = ((2**21, rng.choice([96, 128])), (2 ** rng.randint(6, 8), rng.choice([896, 1024])))
    measured = []
    for floats, n in rounds:
        grads = jax.device_put(jnp.ones((8, floats), jnp.float32), NamedSharding(mesh, P("data")))
        square = jax.device_put(jnp.full((n, n), 0.01, jnp.float32), mesh.devices.flat[0])
        allreduce, step = _Timed(_psum(), grads), _Timed(_layer, square)
        got = call(comm_or_compute, allreduce, step)
        if not (isinstance(got, tuple | list) and len(got) == 3):
            sized = isinstance(got, tuple | list | dict | str)
            size = text(" of {n} items", " mit {n} Elementen", n=len(got)) if sized else ""
            raise TIMES.wrong("not_a_triple", kind=type(got).__name__, size=size)
        a = _seconds(got[0], allreduce, step, "allreduce")
        s = _seconds(got[1], step, allreduce, "step")
        if got[2] not in VERDICTS:
            raise TIMES.wrong("not_a_verdict", got=got[2])
        want = "communication" if a > s else "compute"
        if got[2] != want:
            raise TIMES.wrong("verdict", got=got[2], a_ms=a * 1e3, s_ms=s * 1e3, want=want)
        measured.append(a)
    return text(
        "Correct! Here the all-reduce of {mb:.0f} MB took {ms:.1f} ms. Where it takes longer than "
        "the step, more devices make each step slower, not faster.",
        "Richtig! Hier hat das All-Reduce von {mb:.0f} MB {ms:.1f} ms gedauert. Wo es länger "
        "dauert als der Schritt, macht jedes weitere Gerät den Schritt langsamer, nicht schneller.",
        mb=8 * rounds[0][0] * 4 / 1e6,
        ms=measured[0] * 1e3,
    )
