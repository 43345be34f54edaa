"""utils.timing.throughput: FLOPs per token, MFU against the detected device's peak, the meter."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")  # the Python 3.13 check of test-compat has no torch

from utils.platform.chips import CHIPS  # noqa: E402
from utils.timing import throughput  # noqa: E402 -- after the skip


def test_flops_per_token_is_6n_plus_attention():
    assert (
        throughput.flops_per_token(1000, n_layers=2, d_model=8, seq_len=16)
        == 6000 + 12 * 2 * 8 * 16
    )


def test_mfu_is_a_fraction_of_the_given_peak():
    assert throughput.mfu(1e4, 1e8, 65.0) == pytest.approx(1e12 / 65e12)
    with pytest.raises(ValueError):
        throughput.mfu(1e4, 1e8, 0)


def test_peaks_come_from_the_chip_table_or_the_cpu_estimate():
    cpu = throughput.peak_tflops("cpu", torch.float32)
    assert cpu is None or cpu > 0
    assert CHIPS["T4"].for_dtype("float16") == 65.0


def test_count_params_can_leave_out_a_module():
    model = torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.Linear(4, 2))
    assert throughput.count_params(model) == 40 + 10
    assert throughput.count_params(model, exclude=(model[0],)) == 10


def test_meter_skips_warm_up_and_reports():
    meter = throughput.Meter(flops_per_token=1e6, peak_tflops=1.0, skip=1)
    meter.add(1000, 10.0)  # warm-up: not counted
    meter.add(1000, 0.5)
    meter.add(1000, 0.5)
    assert meter.tokens_per_s == 2000
    assert meter.mfu == pytest.approx(2000 * 1e6 / 1e12)
    assert "MFU" in str(meter)
    assert "MFU" not in str(throughput.Meter(1e6, None)).split("(")[0]


def test_tf32_is_read_from_the_setting_torch_was_given():
    # torch >= 2.9 raises when allow_tf32 is read after fp32_precision was set: ask the new one first
    import torch

    from utils.timing.throughput import tf32_matmuls

    matmul = torch.backends.cuda.matmul
    if not hasattr(matmul, "fp32_precision"):
        assert tf32_matmuls() == matmul.allow_tf32
        return
    before = matmul.fp32_precision
    try:
        matmul.fp32_precision = "tf32"
        assert tf32_matmuls() is True
        matmul.fp32_precision = "ieee"
        assert tf32_matmuls() is False
    finally:
        matmul.fp32_precision = before
