"""Every sync path of the timer waits for work that finishes late (utils.timing.sync, utils.timing.bench.measure).

The fake device is `utils.sim.asyncsim.SimulatedAccelerator` on a `VirtualClock`: a call only *queues*
2 ms of work (and the first call 50 ms of "compilation" more), and the work is done only when the
backend's own sync function runs -- the exact function `synchronizer` calls (torch.cuda.synchronize,
torch.mps.synchronize, jax.block_until_ready, torch_xla.sync(wait=True)), patched with monkeypatch.
A timer that skips the sync reads the 10 µs launch instead of the 2 ms of work, so dropping any
sync fails these tests.  The clock is virtual: no real time is read or asserted.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType, SimpleNamespace

import pytest

from utils.sim.asyncsim import SimulatedAccelerator, VirtualClock, virtual_time
from utils.timing import bench, sync

WORK = 0.002  # simulated seconds of device work per call
COMPILE = 0.05  # simulated seconds the first call compiles
LAUNCH = 1e-5  # simulated seconds the host spends queueing one call

# backend: (module the synchronizer imports, attribute path of the function it calls,
#           module and device type of a result that lives there)
PATHS = {
    "cuda": ("torch", "cuda.synchronize", "torch", "cuda"),
    "mps": ("torch", "mps.synchronize", "torch", "mps"),
    "jax": ("jax", "block_until_ready", "jaxlib._jax", None),
    "xla": ("torch_xla", "sync", "torch", "xla"),
}


def result_on(module: str, device_type: str | None) -> object:
    """An object `backend_of` reads as a tensor/array of that library on that device."""
    cls = type("Tensor", (), {"__module__": module})
    result = cls()
    result.device = SimpleNamespace(type=device_type)
    return result


def patch(monkeypatch, name: str, attribute: str, fake) -> None:
    """Replace `name.attribute` by `fake` in the installed module (torch, jax, torch_xla): it must
    exist there. Where the library is not installed, a stand-in module takes its place."""
    try:
        parent = importlib.import_module(name)
        installed = True
    except ImportError:
        parent, installed = ModuleType(name), False
        monkeypatch.setitem(sys.modules, name, parent)
    *parents, last = attribute.split(".")
    for part in parents:
        if not installed:
            monkeypatch.setattr(parent, part, SimpleNamespace(), raising=False)
        parent = getattr(parent, part)
    monkeypatch.setattr(parent, last, fake, raising=installed)


def late_sync(device: SimulatedAccelerator, backend: str):
    """The backend's sync function, faked: the only thing that makes the device's work finish."""
    if backend == "jax":

        def block_until_ready(x):
            device.synchronize()
            return x

        return block_until_ready
    if backend == "xla":

        def xla_sync(devices=None, wait=False):  # torch_xla.sync() without wait=True doesn't wait
            if wait:
                device.synchronize()

        return xla_sync
    return lambda device_index=None: device.synchronize()


@pytest.fixture
def late_device(monkeypatch):
    """`late_device(backend)` -> (device, fn): fn queues one call on the device and returns a
    result that lives on `backend`; only that backend's own sync function finishes the work."""

    def make(backend: str):
        module, attribute, result_module, device_type = PATHS[backend]
        device = SimulatedAccelerator(WORK, COMPILE, LAUNCH, clock=VirtualClock())
        patch(monkeypatch, module, attribute, late_sync(device, backend))
        result = result_on(result_module, device_type)

        def fn():
            device.matmul()
            return result

        return device, fn

    return make


@pytest.mark.parametrize("backend", list(PATHS))
def test_the_synchronizer_waits_for_the_queued_work(backend, late_device):
    device, fn = late_device(backend)
    result = fn()
    assert sync.backend_of(result) == backend
    assert device.pending_seconds == pytest.approx(COMPILE + WORK)
    sync.synchronizer(backend)(result)
    assert device.syncs == 1 and device.pending_seconds == 0


@pytest.mark.parametrize("backend", list(PATHS))
def test_measure_times_the_work_not_the_launch(backend, late_device):
    device, fn = late_device(backend)
    with virtual_time(device.clock):
        m = bench.measure(fn, min_time=0.05)
    assert m.backend == backend
    assert m.median == pytest.approx(WORK, rel=0.01)  # not LAUNCH: each block waited
    assert m.cold == pytest.approx(COMPILE + WORK, rel=0.01)  # the cold call waited too
    assert device.syncs >= m.n + 1 and device.pending_seconds == 0


@pytest.mark.parametrize("backend", list(PATHS))
def test_measure_with_the_backend_given(backend, late_device):
    device, fn = late_device(backend)
    m = bench.measure(fn, backend=backend, min_time=0.05, clock=device.clock.read)
    assert m.median == pytest.approx(WORK, rel=0.01)


def test_without_a_sync_only_the_launches_are_timed(late_device):
    """The fake device really is asynchronous: the tests above would catch a missing sync."""
    device, fn = late_device("cuda")
    with virtual_time(device.clock):
        m = bench.measure(fn, sync=lambda result: None, min_time=0.05)
    assert m.median == pytest.approx(LAUNCH, rel=0.01)
    assert m.cold == pytest.approx(LAUNCH, rel=0.01)  # the compilation was not waited for
    assert device.syncs == 0 and device.pending_seconds > 10 * WORK  # the work piled up


def test_cpu_results_need_no_sync():
    assert sync.backend_of(result_on("numpy", None)) == "cpu"
    assert sync.backend_of(result_on("torch", "cpu")) == "cpu"
    assert sync.synchronizer("cpu")(object()) is None
