"""utils.devices: choosing devices, explaining mixed-device errors, link figures, copies, sizes, and
surviving out-of-memory (with fake out-of-memory errors, so all of it runs on a CPU)."""

from __future__ import annotations

import importlib.util
import weakref
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from utils import devices, i18n, nvsmi  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def pretend(monkeypatch, kind: str | None, count: int = 1) -> None:
    """Let torch.accelerator report `count` devices of `kind` (None: no accelerator)."""
    monkeypatch.setattr(torch.accelerator, "is_available", lambda: kind is not None)
    monkeypatch.setattr(
        torch.accelerator,
        "current_accelerator",
        lambda *args, **kwargs: torch.device(kind) if kind else None,
    )
    monkeypatch.setattr(torch.accelerator, "device_count", lambda: count if kind else 0)


# --- choosing a device -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["cuda", "mps", "xpu"])
def test_pick_device_asks_torch_accelerator(monkeypatch, kind):
    pretend(monkeypatch, kind)
    assert devices.pick_device().type == kind


def test_pick_device_without_torch_accelerator(monkeypatch):
    # torch before 2.6 has no torch.accelerator: ask CUDA, then MPS, then take the CPU.
    monkeypatch.delattr(torch, "accelerator")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert devices.pick_device() == torch.device("cpu")
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert devices.pick_device() == torch.device("mps")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert devices.pick_device() == torch.device("cuda")


def test_pick_device_here_matches_torch():
    if torch.accelerator.is_available():
        assert devices.pick_device() == torch.accelerator.current_accelerator()
    else:
        assert devices.pick_device() == torch.device("cpu")


def test_list_devices(monkeypatch):
    pretend(monkeypatch, "cuda", 2)
    assert devices.list_devices() == [torch.device(x) for x in ("cpu", "cuda:0", "cuda:1")]
    pretend(monkeypatch, None)
    assert devices.list_devices() == [torch.device("cpu")]


def test_try_gpu_with_two_gpus(monkeypatch, capsys):
    pretend(monkeypatch, "cuda", 2)
    assert devices.try_gpu(1) == torch.device("cuda:1")
    assert devices.try_gpu() == torch.device("cuda:0")
    assert capsys.readouterr().out == ""


def test_try_gpu_falls_back_and_says_why(monkeypatch, capsys):
    pretend(monkeypatch, "cuda", 1)  # Colab: one T4
    assert devices.try_gpu(1) == torch.device("cuda:0")
    out = capsys.readouterr().out
    assert "no GPU number 1" in out and "cuda:0" in out
    i18n.set_language("de")
    pretend(monkeypatch, None)
    assert devices.try_gpu(1) == torch.device("cpu")
    assert "keine GPU Nummer 1" in capsys.readouterr().out
    assert devices.try_gpu(3, quiet=True) == torch.device("cpu")
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("index", [-1, 1.0, True, "1"])
def test_try_gpu_rejects_odd_indices(index):
    with pytest.raises(ValueError, match="whole number"):
        devices.try_gpu(index)


@pytest.mark.skipif(torch.cuda.device_count() >= 2, reason="this machine has cuda:1")
def test_hard_coded_second_gpu_fails_here():
    # What the lesson shows: code written for Kaggle's T4 x2 stops on a machine with fewer GPUs.
    with pytest.raises((RuntimeError, AssertionError)):
        torch.ones(1, device="cuda:1")


# --- where things live, and the mixed-device error --------------------------------------------------


def test_where():
    net = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Linear(3, 1))
    assert devices.where(torch.ones(2)) == "cpu"
    assert devices.where(net) == "cpu"
    net[1].to("meta")
    assert devices.where(net) == "cpu (2×) + meta (2×)"
    assert devices.where([torch.ones(1), torch.ones(1, device="meta")]) == "cpu (1×) + meta (1×)"
    assert devices.where({"x": torch.ones(1)}) == "cpu"
    assert devices.where(torch.nn.ReLU()) == "no parameters"
    assert devices.where(3.0) == "not a tensor (float)"


MIXED = [
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
    "(when checking argument for argument mat1 in method wrapper_CUDA_addmm)",
    "Expected all tensors to be on the same device, but got mat2 is on cuda:0, different from other "
    "tensors on cpu (when checking argument in method wrapper_CUDA_mm)",
    "Tensor on device meta is not on the expected device cpu!",
    "Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same or "
    "input should be a MKLDNN tensor and weight is a dense tensor",
    "Input and parameter tensors are not at the same device, found input tensor at cpu and "
    "parameter tensor at cuda:0",
    "indices should be either on cpu or on the same device as the indexed tensor (cpu)",
    "Placeholder storage has not been allocated on MPS device!",
    "Expected object of device type cuda but got device type cpu for argument #1 'self'",
]


@pytest.mark.parametrize("text", MIXED)
def test_mixed_device_messages_are_recognised(text):
    assert devices.is_mixed_device_error(RuntimeError(text))


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
        RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"),
        ValueError("Expected all tensors to be on the same device"),  # not PyTorch's error type
    ],
)
def test_other_errors_are_not_mixed_device_errors(error):
    assert not devices.is_mixed_device_error(error)


def test_real_mixed_device_error_is_caught_and_explained(capsys):
    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    net.to("meta")
    batch = torch.randn(5, 4)
    with devices.catch_mixed_devices(model=net, batch=batch) as caught:
        net(batch)
        pytest.fail("the forward pass should have raised")  # pragma: no cover
    assert caught and devices.is_mixed_device_error(caught.error)
    out = capsys.readouterr().out
    assert out.strip() == caught.message
    assert "model  meta" in out and "batch  cpu" in out
    assert 'batch = batch.to("meta")' in out and "model.to(" not in out
    i18n.set_language("de")
    with devices.catch_mixed_devices(quiet=True, model=net, batch=batch) as caught:
        net(batch)
    assert "Bring zuerst alles auf ein Gerät" in caught.message
    assert capsys.readouterr().out == ""


def test_explanation_moves_the_model_to_the_accelerator_not_the_batch_back():
    net = torch.nn.Linear(2, 2)  # still on the CPU
    batch = torch.ones(1, 2, device="meta")  # already on the "accelerator"
    message = devices.explain_mixed_devices(RuntimeError(MIXED[2]), model=net, batch=batch)
    assert 'model.to("meta")' in message and "batch = batch" not in message


def test_explanation_when_the_culprit_is_made_inside_the_code():
    x = torch.ones(3, 4, device="meta")
    with devices.catch_mixed_devices(quiet=True, x=x) as caught:
        _ = x + torch.arange(4)  # arange makes its tensor on the CPU
    assert caught and "device=x.device" in caught.message


def test_catch_mixed_devices_lets_other_errors_through():
    with (
        pytest.raises(RuntimeError, match="shapes cannot be multiplied"),
        devices.catch_mixed_devices(a=torch.ones(2, 3)),
    ):
        _ = torch.ones(2, 3) @ torch.ones(4, 5)


def test_catch_mixed_devices_without_an_error():
    with devices.catch_mixed_devices(x=torch.ones(1)) as caught:
        _ = torch.ones(1) + 1
    assert not caught and caught.message is None


# --- links and copies -----------------------------------------------------------------------------


def test_pcie_figures():
    assert devices.pcie_gbs(3) == pytest.approx(15.754, abs=1e-3)  # 8 GT/s · 128/130 · 16 / 8
    assert devices.pcie_gbs(4) == pytest.approx(31.508, abs=1e-3)
    assert devices.pcie_gbs(5) == pytest.approx(63.015, abs=1e-3)
    assert devices.pcie_gbs(3, lanes=8) == pytest.approx(devices.pcie_gbs(3) / 2)
    assert devices.pcie_gbs(1) == 4.0  # 2.5 GT/s · 8/10 · 16 / 8
    with pytest.raises(ValueError, match="unknown"):
        devices.pcie_gbs(7)
    # The typical pinned figures stay below the theory they are quoted against.
    for generation, (low, high) in devices.PCIE_PINNED_TYPICAL.items():
        assert low <= high < devices.pcie_gbs(generation)


@pytest.mark.parametrize(
    "name, link",
    [
        ("Tesla T4", (3, 16)),
        ("Tesla P100-PCIE-16GB", (3, 16)),
        ("NVIDIA L4", (4, 16)),
        ("NVIDIA A100-SXM4-40GB", (4, 16)),
        ("NVIDIA H100 80GB HBM3", (5, 16)),
        ("NVIDIA H200", (5, 16)),
    ],
)
def test_link_for_name(name, link):
    found = devices.link_for_name(name)
    assert (found.generation, found.lanes) == link and "data sheet" in found.source


@pytest.mark.parametrize("name", ["NVIDIA L40S", "NVIDIA GeForce RTX 4090", "Apple M3"])
def test_link_for_unknown_name(name):
    assert devices.link_for_name(name) is None


def test_gpu_link_asks_nvidia_smi_then_the_data_sheet(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert devices.gpu_link() is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=None: "Tesla T4")
    rows = [{"index": "0", "pcie.link.gen.max": "4", "pcie.link.width.max": "8"}]
    monkeypatch.setattr(nvsmi, "query", lambda **kwargs: nvsmi.SmiResult(rows))
    assert devices.gpu_link(0) == devices.Link(4, 8, "nvidia-smi")
    rows[0]["pcie.link.gen.max"] = "[N/A]"  # a virtual machine may not say
    assert devices.gpu_link(0).source == "data sheet T4"
    monkeypatch.setattr(nvsmi, "query", lambda **kwargs: nvsmi.SmiResult([], "no nvidia-smi"))
    assert devices.gpu_link(0).generation == 3


def test_transfer_seconds():
    assert devices.transfer_seconds(12e9, 12.0) == pytest.approx(1.0)
    assert devices.transfer_seconds(256 * devices.MIB, 12.0) == pytest.approx(0.02237, rel=1e-3)


@pytest.mark.parametrize("fresh", [False, True])
def test_measure_copy_on_the_cpu(fresh):
    copy = devices.measure_copy(devices.MIB, fresh=fresh, min_time=0.01)
    assert copy.nbytes == devices.MIB and copy.seconds > 0 and copy.gbs > 0
    assert copy.label == "cpu->cpu" and copy.measurement.backend == "cpu"


@pytest.mark.skipif(devices.can_pin(), reason="this torch can pin memory")
def test_pinning_needs_an_accelerator():
    with pytest.raises(RuntimeError, match="can_pin"):
        devices.measure_copy(devices.MIB, pinned=True)


# --- sizes and counters -----------------------------------------------------------------------------


def test_sizes():
    assert devices.tensor_bytes((8192, 8192), torch.float16) == 128 * devices.MIB
    assert devices.tensor_bytes(torch.Size([3, 5]), torch.int8) == 15
    with torch.device("meta"):
        net = torch.nn.Linear(4096, 4096)
    assert devices.module_bytes(net) == (4096 * 4096 + 4096) * 4
    assert devices.module_bytes(net.to(torch.bfloat16)) == (4096 * 4096 + 4096) * 2


@pytest.mark.parametrize(
    "nbytes, text",
    [
        (512, "512 B"),
        (1536, "1.50 KiB"),
        (3 * 2**30, "3.00 GiB"),
        (2**50, "1.00 PiB"),
        (-2048, "-2.00 KiB"),
    ],
)
def test_format_bytes(nbytes, text):
    assert devices.format_bytes(nbytes) == text


def test_memory_stats_on_the_cpu():
    stats = devices.memory_stats("cpu")
    assert stats.allocated is None and "no memory counters" in str(stats)
    full = devices.MemoryStats("cuda:0", 2**30, 2**31, 2**32, 2**34)
    assert str(full) == "cuda:0: allocated 1.00 GiB, reserved 2.00 GiB, free 4.00 GiB of 16.00 GiB"


def test_german_messages_show_german_decimals():
    i18n.set_language("de")  # the autouse fixture of conftest.py switches back to English
    assert devices.format_bytes(1536) == "1,50 KiB" and devices.format_bytes(512) == "512 B"
    full = devices.MemoryStats("cuda:0", 2**30, 2**31, 2**32, 2**34)
    assert str(full) == "cuda:0: belegt 1,00 GiB, reserviert 2,00 GiB, frei 4,00 GiB von 16,00 GiB"
    assert str(devices.link_for_name("Tesla T4")) == "PCIe Gen3 x16: 15,75 GB/s (Datenblatt T4)"
    assert "Speicher voll" in devices.BatchSearch(0, [(1, False)]).table()
    i18n.set_language("en")
    assert str(devices.link_for_name("Tesla T4")) == "PCIe Gen3 x16: 15.75 GB/s (data sheet T4)"


def test_process_rss():
    rss = devices.process_rss()
    assert rss is None or rss > 10 * devices.MIB


# --- out of memory ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 MiB"),
        RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 14.75 GiB total)"),
        RuntimeError("MPS backend out of memory (MPS allocated: 17.00 GB, other allocations: 0 B)"),
        RuntimeError(
            "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
            "memory: you tried to allocate 1125899906842624 bytes."
        ),
        RuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4.00G"),
        MemoryError(),
    ],
)
def test_out_of_memory_errors_are_recognised(error):
    assert devices.is_oom(error)


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("mat1 and mat2 shapes cannot be multiplied (64x100 and 128x10)"),
        RuntimeError(MIXED[0]),
        ValueError("batch too large"),
    ],
)
def test_other_errors_are_not_out_of_memory(error):
    assert not devices.is_oom(error)


def test_a_real_out_of_memory_error_on_the_cpu_is_recognised_and_survived():
    with pytest.raises(RuntimeError) as caught:
        torch.empty(2**50, dtype=torch.uint8)  # a pebibyte: no machine has it
    assert devices.is_oom(caught.value)
    devices.free_memory()
    assert torch.ones(10).sum().item() == 10


def test_memory_budget():
    budget = devices.MemoryBudget(10 * devices.MIB, name="T4 (simulated)")
    with budget.hold(6 * devices.MIB), budget.hold(4 * devices.MIB):
        assert budget.used == 10 * devices.MIB
    assert budget.used == 0 and budget.peak == 10 * devices.MIB
    with (
        pytest.raises(torch.OutOfMemoryError, match=r"simulated.*Tried to allocate 11.00 MiB"),
        budget.hold(11 * devices.MIB),
    ):
        pass  # pragma: no cover
    assert budget.used == 0


class FakeGPU:
    """A step that runs out of memory above `capacity` samples, as a GPU would: fake OOM injection."""

    def __init__(self, capacity: int, error=torch.OutOfMemoryError):
        self.capacity, self.error, self.tried = capacity, error, []

    def __call__(self, batch_size: int) -> float:
        self.tried.append(batch_size)
        if batch_size > self.capacity:
            raise self.error(f"CUDA out of memory. Tried to allocate {batch_size} MiB (fake)")
        return 0.0


@pytest.mark.parametrize("capacity", [1, 5, 37, 1000, 4095, 10**6])
def test_find_batch_size_doubles_until_out_of_memory(capacity):
    limit = 4096
    gpu = FakeGPU(capacity)
    search = devices.find_batch_size(gpu, limit=limit)
    want = 2 ** (min(capacity, limit).bit_length() - 1)
    assert search.batch_size == want
    assert max(gpu.tried) <= limit
    failed = [size for size in gpu.tried if size > capacity]
    assert failed == ([] if capacity >= limit else [gpu.tried[-1]])  # stops at the first OOM
    assert search.tries == [(size, size <= capacity) for size in gpu.tried]


@pytest.mark.parametrize("capacity", [1, 5, 37, 1000, 4095])
def test_find_batch_size_refines_to_the_exact_size(capacity):
    search = devices.find_batch_size(FakeGPU(capacity), limit=4096, refine=True)
    assert search.batch_size == capacity


def test_find_batch_size_when_nothing_fits():
    search = devices.find_batch_size(FakeGPU(0), limit=64, refine=True)
    assert search.batch_size == 0 and search.tries == [(1, False)]
    assert "out of memory" in search.table()


def test_find_batch_size_with_a_start():
    gpu = FakeGPU(100)
    assert devices.find_batch_size(gpu, start=24, limit=1000).batch_size == 96
    assert gpu.tried == [24, 48, 96, 192]


def test_old_style_out_of_memory_is_caught_too():
    # torch before 2.5 (and MPS, XLA) report a plain RuntimeError.
    assert devices.find_batch_size(FakeGPU(50, RuntimeError), limit=1024).batch_size == 32


@pytest.mark.parametrize(
    "bug", [RuntimeError("mat1 and mat2 shapes cannot be multiplied"), ValueError("bug")]
)
def test_find_batch_size_lets_bugs_through(bug):
    def step(batch_size):
        if batch_size >= 4:
            raise bug
        return 0.0

    with pytest.raises(type(bug)) as caught:
        devices.find_batch_size(step, limit=64)
    assert caught.value is bug


def test_find_batch_size_frees_memory_after_each_out_of_memory(monkeypatch):
    freed = []
    monkeypatch.setattr(devices, "free_memory", lambda: freed.append(True))
    search = devices.find_batch_size(FakeGPU(37), limit=4096, refine=True)
    assert len(freed) == sum(not ok for _, ok in search.tries) > 1


def test_a_failed_try_holds_no_memory_into_the_next():
    # The OOM's traceback keeps the failed step's tensors alive until the error is gone: the
    # finder must retry outside its except block.
    class Activations:
        pass

    alive = []

    def step(batch_size):
        assert all(ref() is None for ref in alive), "the failed try's activations are still alive"
        activations = Activations()
        if batch_size > 5:
            alive.append(weakref.ref(activations))
            raise torch.OutOfMemoryError("CUDA out of memory (fake)")
        return 0.0

    assert devices.find_batch_size(step, limit=64, refine=True).batch_size == 5


@pytest.mark.parametrize("start, limit", [(0, 8), (9, 8), (1.5, 8), (1, "8")])
def test_find_batch_size_rejects_odd_bounds(start, limit):
    with pytest.raises(ValueError, match="start"):
        devices.find_batch_size(FakeGPU(4), start=start, limit=limit)


# --- the benchmark ------------------------------------------------------------------------------


def test_bench_transfer_runs_here_and_reports_ratios():
    spec = importlib.util.spec_from_file_location(
        "bench_transfer", ROOT / "benchmarks/bench_transfer.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lines = []
    results = module.run(report=lines.append, nbytes=devices.MIB, min_time=0.01)
    assert results and all(gbs > 0 for gbs in results.values())
    text = "\n".join(lines)
    if not torch.cuda.is_available():
        assert lines[0].startswith("No CUDA GPU on this machine")
        assert {"cpu fresh", "cpu reused"} <= set(results) and "1.00×" in text
    else:  # pragma: no cover - on a GPU machine
        assert {"h2d pageable", "h2d pinned", "d2h pageable", "d2h pinned"} <= set(results)
