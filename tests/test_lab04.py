"""Lab 04, beyond the tests every lab gets (tests/test_labs.py runs the answers in
tests/cases_lab04.py: right ones pass on fresh random inputs, each wrong one gets its feedback in
both languages, the solution notebook scores full marks, the student notebook zero).

Here: the checks really run on 8 devices; a kernel in which JAX started too early gets an
explanation instead of a traceback; and the shard shapes the checks expect are JAX's own on many
random layouts."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tests.cases_lab04 as cases  # asks JAX for 8 CPU devices, at collection time
from tests import test_labs as labs  # its helpers; its tests are not collected here
from utils.checks import PASSED, WRONG

jax = pytest.importorskip("jax")
ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "labs/solutions/en/04_jax_tpu.ipynb"


def checks():
    """The lab's checks module, as the notebook's checks cell imports it."""
    return labs.load_lab(cases.LAB)


def test_the_checks_run_on_eight_devices():
    devices = jax.devices("cpu")
    assert len(devices) == 8, (
        "JAX started before tests/cases_lab04.py could ask for 8 CPU devices: some module computes "
        "with JAX while pytest imports it. Move that computation into a test."
    )
    mesh = checks()._mesh_devices()
    assert [d.id for d in mesh] == list(range(8))


def test_expected_shard_shapes_are_jaxs_own():
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    block, meshes = checks()._block, checks().MESHES
    devices = jax.devices("cpu")[:8]
    rng = random.Random(0)
    for _ in range(300):
        mesh_shape = rng.choice(list(meshes))
        names = list(meshes[mesh_shape])
        sizes = dict(zip(names, mesh_shape, strict=True))
        rng.shuffle(names)
        spec = []
        for _ in range(rng.randint(1, 3)):  # one entry per dimension: None, a name or a tuple
            take = rng.randint(0, min(2, len(names)))
            axes, names = names[:take], names[take:]
            spec.append(None if not axes else axes[0] if take == 1 else tuple(axes))
        ndim = rng.randint(len(spec), 3)
        entries = spec + [None] * (ndim - len(spec))
        ways = [
            1 if e is None else math.prod(sizes[a] for a in ((e,) if isinstance(e, str) else e))
            for e in entries
        ]
        shape = tuple(
            w * rng.randint(1, 4) for w in ways
        )  # sizes that divide evenly, as in the lab
        mesh = jax.make_mesh(
            mesh_shape,
            meshes[mesh_shape],
            axis_types=(AxisType.Auto,) * len(mesh_shape),
            devices=devices,
        )
        want = NamedSharding(mesh, P(*spec)).shard_shape(shape)
        assert block(shape, tuple(spec), sizes) == tuple(want), (shape, spec, mesh_shape)


@pytest.mark.parametrize(
    "lang, restart", [("en", "Restart the kernel"), ("de", "Starte den Kernel neu")]
)
def test_a_kernel_where_jax_started_early_gets_an_explanation(lang, restart):
    """The learner computed with JAX before the lab's first cell: one CPU device. The device-free
    exercises still grade; the data-parallel one says why it cannot and how to restart."""
    code = f"""
        import sys; sys.path.insert(0, {str(ROOT)!r})
        import jax, jax.numpy as jnp
        jnp.ones(3)  # JAX starts with one CPU device
        import json, nbformat
        from utils import i18n
        i18n.set_language({lang!r})
        from utils import jaxcompat
        jaxcompat.simulate_cpu_devices(8)  # the lab's first cell: prints how to restart
        namespace = {{"__name__": "lab_04"}}
        for cell in nbformat.read({str(SOLUTION)!r}, as_version=4).cells:
            if "checks" in cell.metadata.get("tags", []):
                exec(cell.source, namespace)
        import tests.cases_lab04 as cases
        results = {{}}
        for name, answer in (("shard_shape", cases.shard_loop), ("data_parallel", cases.dp_device_put)):
            exercise = next(e for e in namespace["lab"].exercises if e.name == name)
            result = exercise.evaluate(answer, seed=0)
            results[name] = [result.status, result.key, result.message]
        print(json.dumps(results))
    """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    *printed, last = done.stdout.strip().splitlines()
    results = json.loads(last)
    assert restart in "\n".join(printed)
    assert results["shard_shape"][0] == PASSED
    status, key, message = results["data_parallel"]
    assert (
        (status, key) == (WRONG, "few_devices")
        and restart in message
        and "Traceback" not in message
    )


def test_cases_module_covers_every_exercise():
    names = {e.name for e in checks().lab.exercises}
    assert {name for _, name in cases.CASES} == names
