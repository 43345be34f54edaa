"""utils.timing.transfers: the host link asked from nvidia-smi or the data sheet, copies timed on the CPU,
and the transfer benchmark."""

from __future__ import annotations

import importlib.util

import pytest

from utils.course import ROOT

torch = pytest.importorskip("torch")

from utils import units  # noqa: E402
from utils.platform import chips, nvsmi  # noqa: E402
from utils.timing import transfers  # noqa: E402

# --- the link and copies ------------------------------------------------------------------------


def test_gpu_link_asks_nvidia_smi_then_the_data_sheet(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert transfers.gpu_link() is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=None: "Tesla T4")
    rows = [{"index": "0", "pcie.link.gen.max": "4", "pcie.link.width.max": "8"}]
    monkeypatch.setattr(nvsmi, "query", lambda **kwargs: nvsmi.SmiResult(rows))
    assert transfers.gpu_link(0) == chips.Link(4, 8, "nvidia-smi")
    rows[0]["pcie.link.gen.max"] = "[N/A]"  # a virtual machine may not say
    assert transfers.gpu_link(0).source == "data sheet T4"
    monkeypatch.setattr(nvsmi, "query", lambda **kwargs: nvsmi.SmiResult([], "no nvidia-smi"))
    assert transfers.gpu_link(0).generation == 3


def test_transfer_seconds():
    assert transfers.transfer_seconds(12e9, 12.0) == pytest.approx(1.0)
    assert transfers.transfer_seconds(256 * units.MIB, 12.0) == pytest.approx(0.02237, rel=1e-3)


@pytest.mark.parametrize("fresh", [False, True])
def test_measure_copy_on_the_cpu(fresh):
    copy = transfers.measure_copy(units.MIB, fresh=fresh, min_time=0.01)
    assert copy.nbytes == units.MIB and copy.seconds > 0 and copy.gbs > 0
    assert copy.label == "cpu->cpu" and copy.measurement.backend == "cpu"


@pytest.mark.skipif(transfers.can_pin(), reason="this torch can pin memory")
def test_pinning_needs_an_accelerator():
    with pytest.raises(RuntimeError, match="can_pin"):
        transfers.measure_copy(units.MIB, pinned=True)


# --- the benchmark ------------------------------------------------------------------------------


def test_bench_transfer_runs_here_and_reports_ratios():
    spec = importlib.util.spec_from_file_location(
        "bench_transfer", ROOT / "benchmarks/bench_transfer.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lines = []
    results = module.run(report=lines.append, nbytes=units.MIB, min_time=0.01)
    assert results and all(gbs > 0 for gbs in results.values())
    text = "\n".join(lines)
    if not torch.cuda.is_available():
        assert lines[0].startswith("No CUDA GPU on this machine")
        assert {"cpu fresh", "cpu reused"} <= set(results) and "1.00×" in text
    else:  # pragma: no cover - on a GPU machine
        assert {"h2d pageable", "h2d pinned", "d2h pageable", "d2h pinned"} <= set(results)


def test_measure_copy_reads_the_clock_it_is_given():
    now = [0.0]

    def clock():  # a fake clock: 50 ms pass between any two reads (longer than a block)
        now[0] += 0.05
        return now[0]

    copy = transfers.measure_copy(units.MIB, min_time=0.01, clock=clock)
    assert copy.seconds == pytest.approx(0.05) and copy.gbs == pytest.approx(units.MIB / 0.05 / 1e9)
