"""Training throughput: tokens per second and MFU against the peak of the device you are on.

    from utils.timing.throughput import Meter, flops_per_token, peak_tflops
    fpt = flops_per_token(n_params, n_layers=4, d_model=128, seq_len=64)
    meter = Meter(fpt, peak_tflops(device, "bfloat16"))
    meter.add(tokens, seconds)              # after each synchronised step
    meter.tokens_per_s, meter.mfu           # 12_345.0, 0.031 (a fraction of the peak)

MFU (model FLOPs utilisation, PaLM paper, Chowdhery et al. 2022, appendix B) = the FLOP/s the
model's arithmetic needs at the measured speed ÷ the device's peak.  One token costs about 6·N
FLOPs for the weights (2 forward, 4 backward) plus 12·L·d·T for attention's scores and weighted
sum (L layers, width d, context T), as in nanoGPT's `estimate_mfu`.  nanoGPT then divides by an
A100's 312 TFLOP/s whatever the device; here the peak is the detected device's, for the dtype
the matmuls run in (`utils.platform.chips`; a CPU's peak is an estimate).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from utils.i18n import text
from utils.platform.chips import Chip, chip_for, cpu_estimate


def flops_per_token(n_params: int, *, n_layers: int, d_model: int, seq_len: int) -> float:
    """Training FLOPs per token: 6·N (weights, forward + backward) + 12·L·d·T (attention)."""
    return 6 * n_params + 12 * n_layers * d_model * seq_len


def count_params(model: torch.nn.Module, exclude: tuple[torch.nn.Module, ...] = ()) -> int:
    """Parameters of a model, less those of `exclude` (nanoGPT leaves out the position
    embedding: a table look-up, no matmul)."""
    skip = {id(p) for m in exclude for p in m.parameters()}
    return sum(p.numel() for p in model.parameters() if id(p) not in skip)


def device_chip(device: torch.device | str) -> Chip | None:
    """The data-sheet row of a torch device (CUDA), the CPU's estimate, or None (unknown)."""
    device = torch.device(device)
    if device.type == "cuda":
        return chip_for(torch.cuda.get_device_name(device))
    if device.type == "cpu":
        from utils.platform.hardware import detect_cpu

        return cpu_estimate(detect_cpu().cores)
    return None


def peak_tflops(device: torch.device | str, dtype: str | torch.dtype = "float32") -> float | None:
    """The peak TFLOP/s of `device` in `dtype`; None where it is not known.

    On NVIDIA GPUs fp32 matmuls may run as tf32 when `torch.backends.cuda.matmul.allow_tf32`
    is on; then the tf32 peak is the honest one."""
    name = str(dtype).replace("torch.", "")
    name = {"float": "float32", "half": "float16", "bf16": "bfloat16", "fp16": "float16"}.get(
        name, name
    )
    chip = device_chip(device)
    if chip is None:
        return None
    on_cuda = torch.device(device).type == "cuda"
    if name == "float32" and on_cuda and tf32_matmuls():
        return chip.for_dtype("tf32") or chip.for_dtype(name)
    return chip.for_dtype(name)


def tf32_matmuls() -> bool:
    """Do CUDA float32 matmuls run as tf32?  torch >= 2.9 sets it with `fp32_precision`; reading
    the old `allow_tf32` after the new setting was used raises, so ask the new one first."""
    matmul = torch.backends.cuda.matmul
    precision = getattr(matmul, "fp32_precision", "none")
    if precision != "none":
        return precision == "tf32"
    return bool(matmul.allow_tf32)


def mfu(tokens_per_s: float, flops_per_token: float, peak_tflops: float) -> float:
    """Model FLOPs utilisation as a fraction (0.42 is 42 %)."""
    if not peak_tflops or peak_tflops <= 0:
        raise ValueError(
            text(
                "MFU needs a positive peak in TFLOP/s, not {peak!r}.",
                "MFU braucht eine positive Spitzenleistung in TFLOP/s, nicht {peak!r}.",
                peak=peak_tflops,
            )
        )
    return tokens_per_s * flops_per_token / (peak_tflops * 1e12)


@dataclass
class Meter:
    """Adds up tokens and seconds of (synchronised) steps; skip the first ones (warm-up)."""

    flops_per_token: float
    peak_tflops: float | None = None
    skip: int = 1  # steps not counted: the first includes allocation (and compilation)
    tokens: int = 0
    seconds: float = 0.0
    steps: int = 0
    history: list[float] = field(default_factory=list)  # tokens/s of each counted step

    def add(self, tokens: int, seconds: float) -> None:
        self.steps += 1
        if self.steps <= self.skip:
            return
        self.tokens += tokens
        self.seconds += seconds
        self.history.append(tokens / seconds if seconds > 0 else float("inf"))

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0

    @property
    def flops_per_s(self) -> float:
        return self.tokens_per_s * self.flops_per_token

    @property
    def mfu(self) -> float | None:
        if not self.peak_tflops:
            return None
        return mfu(self.tokens_per_s, self.flops_per_token, self.peak_tflops)

    def __str__(self) -> str:
        if self.mfu is None:
            return text(
                "{tps:,.0f} tokens/s, {tf:.3g} TFLOP/s (peak unknown: no MFU)",
                "{tps:,.0f} Tokens/s, {tf:.3g} TFLOP/s (Spitzenleistung unbekannt: keine MFU)",
                tps=self.tokens_per_s,
                tf=self.flops_per_s / 1e12,
            )
        return text(
            "{tps:,.0f} tokens/s, {tf:.3g} TFLOP/s, MFU {m:.1f}%",
            "{tps:,.0f} Tokens/s, {tf:.3g} TFLOP/s, MFU {m:.1f} %",
            tps=self.tokens_per_s,
            tf=self.flops_per_s / 1e12,
            m=100 * self.mfu,
        )
