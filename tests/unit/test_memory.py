"""utils.memory.usage and utils.sim.memsim: sizes, counters, and surviving out-of-memory (with fake
out-of-memory errors, so all of it runs on a CPU)."""

from __future__ import annotations

import weakref

import pytest

torch = pytest.importorskip("torch")

from utils import i18n, units  # noqa: E402
from utils.memory import usage  # noqa: E402
from utils.platform import chips  # noqa: E402
from utils.sim import memsim  # noqa: E402

# --- sizes and counters -----------------------------------------------------------------------------


def test_sizes():
    assert usage.tensor_bytes((8192, 8192), torch.float16) == 128 * units.MIB
    assert usage.tensor_bytes(torch.Size([3, 5]), torch.int8) == 15
    with torch.device("meta"):
        net = torch.nn.Linear(4096, 4096)
    assert usage.module_bytes(net) == (4096 * 4096 + 4096) * 4
    assert usage.module_bytes(net.to(torch.bfloat16)) == (4096 * 4096 + 4096) * 2


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
    assert units.format_bytes(nbytes) == text


def test_memory_stats_on_the_cpu():
    stats = usage.memory_stats("cpu")
    assert stats.allocated is None and "no memory counters" in str(stats)
    full = usage.MemoryStats("cuda:0", 2**30, 2**31, 2**32, 2**34)
    assert str(full) == "cuda:0: allocated 1.00 GiB, reserved 2.00 GiB, free 4.00 GiB of 16.00 GiB"


def test_german_messages_show_german_decimals():
    i18n.set_language("de")  # the autouse fixture of conftest.py switches back to English
    assert units.format_bytes(1536) == "1,50 KiB" and units.format_bytes(512) == "512 B"
    full = usage.MemoryStats("cuda:0", 2**30, 2**31, 2**32, 2**34)
    assert str(full) == "cuda:0: belegt 1,00 GiB, reserviert 2,00 GiB, frei 4,00 GiB von 16,00 GiB"
    assert str(chips.CHIPS["T4"].link) == "PCIe Gen3 x16: 15,75 GB/s (Datenblatt T4)"
    assert "Speicher voll" in usage.BatchSearch(0, [(1, False)]).table()
    i18n.set_language("en")
    assert str(chips.CHIPS["T4"].link) == "PCIe Gen3 x16: 15.75 GB/s (data sheet T4)"


def test_process_rss():
    rss = usage.process_rss()
    assert rss is None or rss > 10 * units.MIB


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
    assert usage.is_oom(error)


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("mat1 and mat2 shapes cannot be multiplied (64x100 and 128x10)"),
        RuntimeError(
            "Expected all tensors to be on the same device, but found at least two devices"
        ),
        ValueError("batch too large"),
    ],
)
def test_other_errors_are_not_out_of_memory(error):
    assert not usage.is_oom(error)


def test_a_real_out_of_memory_error_on_the_cpu_is_recognised_and_survived():
    with pytest.raises(RuntimeError) as caught:
        torch.empty(2**50, dtype=torch.uint8)  # a pebibyte: no machine has it
    assert usage.is_oom(caught.value)
    usage.free_memory()
    assert torch.ones(10).sum().item() == 10


def test_memory_budget():
    budget = memsim.MemoryBudget(10 * units.MIB, name="T4 (simulated)")
    with budget.hold(6 * units.MIB), budget.hold(4 * units.MIB):
        assert budget.used == 10 * units.MIB
    assert budget.used == 0 and budget.peak == 10 * units.MIB
    with (
        pytest.raises(torch.OutOfMemoryError, match=r"simulated.*Tried to allocate 11.00 MiB"),
        budget.hold(11 * units.MIB),
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
    search = usage.find_batch_size(gpu, limit=limit)
    want = 2 ** (min(capacity, limit).bit_length() - 1)
    assert search.batch_size == want
    assert max(gpu.tried) <= limit
    failed = [size for size in gpu.tried if size > capacity]
    assert failed == ([] if capacity >= limit else [gpu.tried[-1]])  # stops at the first OOM
    assert search.tries == [(size, size <= capacity) for size in gpu.tried]


@pytest.mark.parametrize("capacity", [1, 5, 37, 1000, 4095])
def test_find_batch_size_refines_to_the_exact_size(capacity):
    search = usage.find_batch_size(FakeGPU(capacity), limit=4096, refine=True)
    assert search.batch_size == capacity


def test_find_batch_size_when_nothing_fits():
    search = usage.find_batch_size(FakeGPU(0), limit=64, refine=True)
    assert search.batch_size == 0 and search.tries == [(1, False)]
    assert "out of memory" in search.table()


def test_find_batch_size_with_a_start():
    gpu = FakeGPU(100)
    assert usage.find_batch_size(gpu, start=24, limit=1000).batch_size == 96
    assert gpu.tried == [24, 48, 96, 192]


def test_old_style_out_of_memory_is_caught_too():
    # torch before 2.5 (and MPS, XLA) report a plain RuntimeError.
    assert usage.find_batch_size(FakeGPU(50, RuntimeError), limit=1024).batch_size == 32


@pytest.mark.parametrize(
    "bug", [RuntimeError("mat1 and mat2 shapes cannot be multiplied"), ValueError("bug")]
)
def test_find_batch_size_lets_bugs_through(bug):
    def step(batch_size):
        if batch_size >= 4:
            raise bug
        return 0.0

    with pytest.raises(type(bug)) as caught:
        usage.find_batch_size(step, limit=64)
    assert caught.value is bug


def test_find_batch_size_frees_memory_after_each_out_of_memory(monkeypatch):
    freed = []
    monkeypatch.setattr(usage, "free_memory", lambda: freed.append(True))
    search = usage.find_batch_size(FakeGPU(37), limit=4096, refine=True)
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

    assert usage.find_batch_size(step, limit=64, refine=True).batch_size == 5


@pytest.mark.parametrize("start, limit", [(0, 8), (9, 8), (1.5, 8), (1, "8")])
def test_find_batch_size_rejects_odd_bounds(start, limit):
    with pytest.raises(ValueError, match="start"):
        usage.find_batch_size(FakeGPU(4), start=start, limit=limit)
