"""The timing helper: synchronisation matters, the cold call is separate, arguments are checked."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from utils import i18n, units
from utils.platform import chips
from utils.sim.asyncsim import SimulatedAccelerator, VirtualClock, virtual_time
from utils.timing import bench, sync


def test_numpy_matmul_with_flops_and_peak():
    a = np.random.default_rng(0).standard_normal((128, 128), dtype=np.float32)
    m = bench.measure(np.matmul, a, a, flops=2 * 128**3, dtype=a.dtype, min_time=0.05)
    assert m.backend == "cpu" and m.dtype == "float32"
    assert m.n >= 5 and m.number >= 1 and m.median > 0
    assert sum(m.times) * m.number >= 0.05
    assert m.flops_per_second == pytest.approx(2 * 128**3 / m.median)
    shown = str(m)  # whatever speed this machine has: the rate shown is the one measured
    assert "median" in shown and units.format_rate(m.flops_per_second) in shown


def test_synchronisation_makes_the_difference():
    """On an asynchronous device a call only queues work: without a sync, only the queueing is
    timed. (Virtual time: the verdict does not depend on this machine's speed or load.)"""
    device = SimulatedAccelerator(seconds_per_call=0.002, launch_seconds=1e-5, clock=VirtualClock())
    with virtual_time(device.clock):
        synced = bench.measure(device.matmul, sync=device.synchronize, min_time=0.05)
        unsynced = bench.measure(device.matmul, sync=lambda r: None, min_time=0.05)
    assert device.pending_seconds > 1  # the unsynced work piled up, unmeasured
    assert synced.median == pytest.approx(0.002, rel=0.01)
    assert unsynced.median == pytest.approx(1e-5, rel=0.01)  # only the queueing was timed


def test_cold_call_is_reported_separately():
    clock = VirtualClock()
    calls = []

    def slow_first():
        clock.advance(0.05 if not calls else 0.001)  # the first call compiles
        calls.append(1)

    m = bench.measure(slow_first, min_time=0.01, min_block=0.001, clock=clock.read)
    assert m.cold == pytest.approx(0.05) and m.median == pytest.approx(0.001)


def test_jax_is_synchronised_and_compile_is_cold(monkeypatch):
    """Real JAX: every block ends in jax.block_until_ready on its result."""
    jax = pytest.importorskip("jax")
    x = jax.numpy.ones((256, 256))
    f = jax.jit(lambda x: (x @ x).sum())
    waited = []
    real = jax.block_until_ready
    monkeypatch.setattr(jax, "block_until_ready", lambda r: waited.append(r) or real(r))
    m = bench.measure(f, x, flops=2 * 256**3, dtype="float32", min_time=0.05)
    assert m.backend == "jax" and m.cold > m.median  # the compilation is in the cold call only
    assert len(waited) >= m.n + 1 and all(isinstance(r, jax.Array) for r in waited)


def test_torch_cpu():
    torch = pytest.importorskip("torch")
    a = torch.randn(64, 64)
    m = bench.measure(torch.matmul, a, a, min_time=0.02)
    assert m.backend == "cpu" and "torch_threads" in m.threads


def test_backend_of_recognises_devices():
    def fake(module: str, device: str | None = None):
        cls = type("Tensor", (), {"__module__": module})
        obj = cls()
        obj.device = SimpleNamespace(type=device)
        return obj

    assert sync.backend_of(fake("torch", "cuda")) == "cuda"
    assert sync.backend_of(fake("torch", "mps")) == "mps"
    assert sync.backend_of(fake("torch", "cpu")) == "cpu"
    assert sync.backend_of(fake("jaxlib._jax")) == "jax"
    assert sync.backend_of((fake("torch", "cpu"), fake("torch", "cuda"))) == "cuda"
    assert sync.backend_of(3.0) == "cpu"


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"fn": 42}, TypeError, "needs a function"),
        ({"fn": print, "min_time": -1}, ValueError, "min_time must be a positive"),
        ({"fn": print, "min_blocks": 0}, ValueError, "min_blocks"),
        ({"fn": print, "backend": "tpu0"}, ValueError, "unknown backend 'tpu0'"),
    ],
)
def test_wrong_arguments_get_clear_errors(kwargs, error, words):
    fn = kwargs.pop("fn")
    with pytest.raises(error, match=words):
        bench.measure(fn, **kwargs)


def test_wrong_arguments_in_german():
    before = i18n.get_language()
    i18n.set_language("de")
    try:
        with pytest.raises(TypeError, match="braucht eine Funktion"):
            bench.measure(np.zeros(3))
    finally:
        i18n.set_language(before)


def test_noisy_measurement_is_flagged():
    m = bench.Measurement("x", [1.0, 1.0, 1.5, 2.0, 2.0], 1, 3.0, "cpu")
    assert m.noisy and "WARNING" in str(m)
    calm = bench.Measurement("x", [1.0, 1.01, 1.0, 0.99, 1.0], 1, 3.0, "cpu")
    assert not calm.noisy and "WARNING" not in str(calm)


def test_percent_of_peak():
    peak = chips.Chip("T4", {"float16": 65.0}, 16, 320, "datasheet", "2026-11")
    m = bench.Measurement(
        "mm", [0.01] * 5, 1, 0.1, "cuda", flops=0.65e12 * 0.01 * 10, dtype="float16", peak=peak
    )
    assert m.percent_of_peak == pytest.approx(10.0)
    assert "10% of the T4 peak" in str(m)
    assert (
        bench.Measurement(
            "mm", [0.01], 1, 0.1, "cuda", flops=1e9, dtype="bfloat16", peak=peak
        ).percent_of_peak
        is None
    )


def test_german_messages_show_german_decimals():
    i18n.set_language("de")  # the autouse fixture of conftest.py switches back to English
    assert units.format_seconds(0.0015) == "1,5 ms" and units.format_seconds(2e-7) == "200 ns"
    assert units.format_rate(2.5e12) == "2,5 TFLOP/s"
    peak = chips.Chip("T4", {"float16": 65.0}, 16, 320, "datasheet", "2026-11")
    m = bench.Measurement(
        "mm", [0.0135] * 5, 1, 0.0125, "cuda", flops=6.5e12 * 0.0135, dtype="float16", peak=peak
    )
    shown = str(m)
    assert "Median 13,5 ms" in shown and "erster Aufruf: 12,5 ms" in shown
    assert "6,5 TFLOP/s = 10 % der Spitzenleistung der T4 (float16)" in shown
    noisy = bench.Measurement("x", [1.0, 1.0, 1.5, 2.0, 2.0], 1, 3.0, "cpu")
    assert "Median 1,5 s" in str(noisy) and "Streuung (IQR/Median) beträgt 67 %" in str(noisy)
    i18n.set_language("en")
    assert "6.5 TFLOP/s = 10% of the T4 peak" in str(m) and "median 13.5 ms" in str(m)


def test_measure_reads_the_clock_it_is_given():
    now = [0.0]

    def clock():  # a fake clock: every read is 50 ms later, whatever the machine does
        now[0] += 0.05
        return now[0]

    m = bench.measure(lambda: None, min_time=0.1, clock=clock)
    assert m.cold == pytest.approx(0.05) and m.number == 1
    assert m.times == [pytest.approx(0.05)] * m.n and m.n >= 5


class StallingClock:
    """A fake clock and a fake function: each call costs `per_call` seconds of clock time, except
    the calls listed in `stalls`, which cost that much more (another process took the core)."""

    def __init__(self, per_call: float, stalls: dict[int, float]):
        self.now, self.calls, self.per_call, self.stalls = 0.0, 0, per_call, stalls

    def clock(self) -> float:
        return self.now

    def fn(self) -> None:
        self.calls += 1
        self.now += self.per_call + self.stalls.get(self.calls, 0.0)


def test_a_stall_in_the_warm_up_does_not_leave_short_blocks():
    # The second call (the warm-up's first block of one call) stalls for 30 ms: the warm-up
    # then believes one call lasts 30 ms and fixes one call per block.  The blocks after it
    # take 1 ms each, under min_block: measure must grow the count instead of keeping them.
    fake = StallingClock(per_call=0.001, stalls={2: 0.030})
    m = bench.measure(fake.fn, min_block=0.02, min_time=0.2, clock=fake.clock)
    assert m.number >= 20
    assert all(t * m.number >= 0.02 - 1e-12 for t in m.times)
    assert m.n >= 5 and sum(m.times) * m.number >= 0.2 - 1e-12
    assert m.median == pytest.approx(0.001)


def test_a_stall_in_a_later_block_is_kept_as_a_slow_block():
    # A stall inside a block makes that block long, never short: it is kept (the median and
    # the IQR are there to show it), and the count stays what the warm-up chose.
    fake = StallingClock(per_call=0.001, stalls={200: 0.5})
    m = bench.measure(fake.fn, min_block=0.02, min_time=0.2, clock=fake.clock)
    assert all(t * m.number >= 0.02 - 1e-12 for t in m.times)
    assert m.median == pytest.approx(0.001) and max(m.times) > 10 * m.median


def test_the_count_stops_growing_at_max_time():
    # A function that keeps getting faster would make the count grow forever; max_time ends it.
    fake = StallingClock(per_call=0.0, stalls={i: 1.0 / i**2 for i in range(1, 10**6)})
    m = bench.measure(fake.fn, min_block=0.02, min_time=0.2, max_time=1.0, clock=fake.clock)
    assert m.n >= 1 and fake.now < 5.0
