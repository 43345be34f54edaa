"""utils.parallel.jaxdevices and utils.parallel.sharding: simulated devices before and after JAX starts, the choice of mesh devices, the
text picture of a layout, and the collectives found in compiled code.

JAX fixes its device count once per process, so everything that needs a fresh JAX runs in a child
process; the rest uses fakes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import types
from dataclasses import dataclass

import pytest

from utils import i18n
from utils.course import ROOT
from utils.parallel import jaxdevices, sharding

pytest.importorskip("jax")


def run_fresh(code: str, lang: str = "en") -> dict:
    """Run `code` in a new Python (a fresh JAX); it prints one JSON line last."""
    prelude = f"from utils import i18n\ni18n.set_language({lang!r})\n"  # cwd: the checkout
    done = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    *printed, last = done.stdout.strip().splitlines()
    return {**json.loads(last), "printed": "\n".join(printed)}


# --- simulated devices -----------------------------------------------------------------------------


def test_fresh_jax_gets_eight_cpu_devices():
    got = run_fresh("""
        from utils.parallel import jaxdevices, sharding
        import jax  # importing is fine: the backends start at the first computation
        count = jaxdevices.simulate_cpu_devices(8)
        again = jaxdevices.simulate_cpu_devices(8)  # running the cell twice changes nothing
        devices = jaxdevices.mesh_devices(8)
        import json
        print(json.dumps({"count": count, "again": again, "cpus": len(jax.devices("cpu")),
                          "mesh": [[d.platform, d.id] for d in devices]}))
    """)
    assert got["count"] == got["again"] == got["cpus"] == 8
    assert got["mesh"] == [["cpu", i] for i in range(8)]
    assert got["printed"] == ""  # nothing to warn about


@pytest.mark.parametrize(
    "lang, words", [("en", "Restart the kernel"), ("de", "Starte den Kernel neu")]
)
def test_too_late_is_explained_not_raised(lang, words):
    got = run_fresh(
        """
        import jax, jax.numpy as jnp
        jnp.ones(3)  # a computation: JAX starts its backends with one CPU device
        from utils.parallel import jaxdevices, sharding
        count = jaxdevices.simulate_cpu_devices(8)
        try:
            jaxdevices.mesh_devices(8)
            error = ""
        except RuntimeError as err:
            error = str(err)
        import json
        print(json.dumps({"count": count, "error": error}))
        """,
        lang,
    )
    assert got["count"] == 1
    assert words in got["printed"] and "1" in got["printed"]
    assert "8" in got["error"] and words in got["error"]


def test_count_is_validated():
    with pytest.raises(ValueError, match="whole number"):
        jaxdevices.simulate_cpu_devices(0)


# --- which devices a mesh gets ---------------------------------------------------------------------


@dataclass(frozen=True)
class FakeDevice:
    platform: str
    id: int


def fake_jax(monkeypatch, default: list, cpus: list) -> None:
    import jax

    monkeypatch.setattr(jax, "devices", lambda backend=None: cpus if backend == "cpu" else default)


def test_a_tpu_with_eight_devices_is_used(monkeypatch):  # Kaggle's TPU v5e-8
    tpus = [FakeDevice("tpu", i) for i in range(8)]
    fake_jax(monkeypatch, tpus, [FakeDevice("cpu", i) for i in range(8)])
    assert jaxdevices.mesh_devices(8) == tpus


def test_a_one_device_tpu_falls_back_to_simulated_cpus(monkeypatch):  # Colab's TPU v5e-1
    cpus = [FakeDevice("cpu", i) for i in range(8)]
    fake_jax(monkeypatch, [FakeDevice("tpu", 0)], cpus)
    assert jaxdevices.mesh_devices(8) == cpus
    fake_jax(monkeypatch, [FakeDevice("gpu", 0), FakeDevice("gpu", 1)], cpus)  # Kaggle T4 x2
    assert jaxdevices.mesh_devices(8) == cpus


def test_too_few_devices_anywhere_says_how_to_restart(monkeypatch):
    fake_jax(monkeypatch, [FakeDevice("tpu", 0)], [FakeDevice("cpu", 0)])
    with pytest.raises(RuntimeError, match=r"needs 8 JAX devices.*1 TPU and 1 CPU.*Restart"):
        jaxdevices.mesh_devices(8)


def test_device_label_reads_attributes_not_names():
    assert jaxdevices.device_label(FakeDevice("cpu", 3)) == "CPU 3"


# --- the layout picture ----------------------------------------------------------------------------


class FakeSharding:
    """A sharding as layout() sees it: which slices each device holds."""

    def __init__(self, blocks: dict, block_shape: tuple):
        self.blocks, self.block_shape = blocks, block_shape

    def devices_indices_map(self, shape):
        return self.blocks

    def shard_shape(self, shape):
        return self.block_shape


def fake_array(shape, blocks, block_shape):
    return types.SimpleNamespace(shape=shape, sharding=FakeSharding(blocks, block_shape))


def test_layout_of_a_grid_names_each_blocks_device():
    d = [FakeDevice("cpu", i) for i in range(4)]
    rows, cols = (slice(0, 2), slice(2, 4)), (slice(0, 3), slice(3, 6))
    blocks = {d[2 * r + c]: (rows[r], cols[c]) for r in range(2) for c in range(2)}
    picture = sharding.layout(fake_array((4, 6), blocks, (2, 3)))
    lines = picture.splitlines()
    assert lines[0] == "shape (4, 6), one block (2, 3):"
    assert "0:3" in lines[1] and "3:6" in lines[1]
    assert lines[3].split("|")[1:3] == [" CPU 0 ", " CPU 1 "]
    assert lines[5].split("|")[1:3] == [" CPU 2 ", " CPU 3 "]
    assert lines[3].startswith("0:2") and lines[5].startswith("2:4")


def test_layout_lists_every_device_of_a_replicated_block():
    d = [FakeDevice("tpu", i) for i in range(4)]
    halves = (slice(0, 4), slice(4, 8))
    blocks = {d[i]: (halves[i % 2],) for i in (3, 0, 1, 2)}  # any order in, sorted out
    picture = sharding.layout(fake_array((8,), blocks, (4,)))
    assert "TPU 0,2" in picture and "TPU 1,3" in picture


def test_layout_in_german_and_for_other_ranks():
    i18n.set_language("de")
    d = FakeDevice("cpu", 0)
    picture = sharding.layout(fake_array((2,), {d: (slice(None),)}, (2,)))
    assert picture.startswith("Form (2,), ein Block (2,):")
    with pytest.raises(ValueError, match="Forme es"):
        sharding.layout(fake_array((2, 2, 2), {}, (2, 2, 2)))


def test_show_layout_without_rich_prints_text(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "rich", None)  # `import rich` raises ImportError
    d = FakeDevice("cpu", 0)
    sharding.show_layout(fake_array((2,), {d: (slice(None),)}, (2,)))
    assert "CPU 0" in capsys.readouterr().out


def test_show_layout_with_rich_uses_jax(monkeypatch):
    import jax

    drawn = []
    monkeypatch.setitem(sys.modules, "rich", types.ModuleType("rich"))
    monkeypatch.setattr(jax.debug, "visualize_array_sharding", drawn.append)
    sharding.show_layout("the array")
    assert drawn == ["the array"]


# --- collectives in compiled code ------------------------------------------------------------------

HLO = """
ENTRY %main {
  %p = f32[64,16]{1,0} parameter(0)
  %all-reduce.1 = f32[64,16]{1,0} all-reduce(%p), replica_groups={{0,1,2,3,4,5,6,7}}
  %all-gather-start = (f32[8,16], f32[64,16]) all-gather-start(%p), dimensions={0}
  %all-gather-done = f32[64,16]{1,0} all-gather-done(%all-gather-start)
  %rs = f32[8,16]{1,0} reduce-scatter(%all-reduce.1), dimensions={0}
  ROOT %t = (f32[8,16]) tuple(%rs)
}
"""


def test_collectives_counts_each_operation_once():
    assert sharding.collectives(HLO) == {"all-reduce": 1, "all-gather": 1, "reduce-scatter": 1}
    assert sharding.collectives("%x = f32[4] add(%a, %b)") == {}
    assert sharding.collectives(types.SimpleNamespace(as_text=lambda: HLO))["all-reduce"] == 1


def test_real_programs_on_eight_devices_in_both_jax_versions():
    """What lesson 04 asserts, in a fresh JAX: the layout picture and the communication of the
    three sharded matmuls."""
    got = run_fresh("""
        from utils.parallel import jaxdevices, sharding
        jaxdevices.simulate_cpu_devices(8)
        import json, jax, jax.numpy as jnp
        from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
        devices = jaxdevices.mesh_devices(8)
        grid = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2, devices=devices)
        line = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,), devices=devices)
        m = jax.device_put(jnp.zeros((16, 8)), NamedSharding(grid, P("data", None)))
        a, b = jnp.ones((64, 32)), jnp.ones((32, 16))
        found = []
        for sa, sb in ((P("x", None), P()), (P(None, "x"), P("x", None)), (P("x", None), P(None, "x"))):
            args = (jax.device_put(a, NamedSharding(line, sa)), jax.device_put(b, NamedSharding(line, sb)))
            found.append(sharding.collectives(jax.jit(jnp.matmul).lower(*args).compile()))
        print(json.dumps({"layout": sharding.layout(m), "found": found}))
    """)
    assert got["layout"].splitlines()[3] == "  0:4 | CPU 0,1 |"
    assert got["layout"].count("CPU") == 4
    rows, inner, gather = got["found"]
    assert rows == {} and "all-reduce" in inner and "all-gather" in gather


@pytest.mark.parametrize("devices", [2, 3, 4, 8])
def test_the_ring_all_reduce_sums_everything_and_sends_two_n_minus_one_over_n(devices):
    from utils.parallel import pictures

    states, sends = pictures.ring_allreduce(devices)
    everyone = frozenset(range(devices))
    assert all(chunk == everyone for row in states[-1] for chunk in row)
    assert len(sends) == 2 * (devices - 1)
    for device in range(devices):
        chunks = sum(1 for step in sends for src, _, _ in step if src == device)
        assert chunks / devices == pytest.approx(2 * (devices - 1) / devices)
    # after the reduce-scatter each device holds one complete chunk
    assert all(sum(c == everyone for c in row) == 1 for row in states[devices - 1])


def test_memory_per_device_follows_what_each_strategy_splits():
    from utils.parallel import pictures

    held = pictures.per_device("Llama-3-8B", devices=4, batch=8, seq=2048)
    states = {s: sum(v for k, v in held[s].items() if k != "activations") for s in held}
    assert held["ddp"]["weights"] == held["single"]["weights"]
    assert held["ddp"]["activations"] == pytest.approx(held["single"]["activations"] / 4, rel=0.2)
    for split in ("fsdp", "tp", "pp"):
        assert states[split] < states["ddp"] / 3
    assert held["fsdp"] != held["pp"] and held["fsdp"]["gathered"] > 0
    assert held["tp"]["activations"] > held["fsdp"]["activations"]
