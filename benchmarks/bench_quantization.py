"""What does a quantized linear layer cost against a dense one on this machine?  For SmolLM2-sized
layers (576 → 1536 and 1536 → 576) and 1 or 128 tokens: dense fp32 and bf16, our from-scratch
dequantize-then-matmul (int8 per channel, NF4 block 64, as lesson 06 writes them), bitsandbytes
(LLM.int8, NF4) and torchao (int8 and int4 weight-only), each as a ratio to dense fp32.  A
benchmark, never a test: the ratios depend on the CPU, its threads and the library versions.

    OMP_NUM_THREADS=1 python benchmarks/bench_quantization.py
"""

from __future__ import annotations

import copy
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from utils.models import quality  # noqa: E402

SHAPES = ((576, 1536), (1536, 576))
TOKENS = (1, 128)


def seconds(fn: Callable[[], object], budget: float = 0.3) -> float:
    """Median of single calls after a warm-up, for about `budget` seconds."""
    fn()
    times: list[float] = []
    start = time.perf_counter()
    while time.perf_counter() - start < budget or len(times) < 5:
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def nf4_levels() -> torch.Tensor:
    normal = torch.distributions.Normal(0.0, 1.0)
    pos = normal.icdf(torch.linspace(0.9677083, 0.5, 9, dtype=torch.float64)[:-1])
    neg = -normal.icdf(torch.linspace(0.9677083, 0.5, 8, dtype=torch.float64)[:-1])
    levels = torch.cat([neg, torch.zeros(1, dtype=torch.float64), pos]).sort().values
    return (levels / levels.abs().max()).float()


def ours(linear: torch.nn.Linear) -> dict[str, Callable[[torch.Tensor], torch.Tensor]]:
    w = linear.weight.detach()
    scale = w.abs().amax(dim=1, keepdim=True) / 127
    q8 = torch.round(w / scale).to(torch.int8)
    levels = nf4_levels()
    blocks = w.reshape(-1, 64)
    absmax = blocks.abs().amax(dim=1, keepdim=True)
    idx = (blocks / absmax).unsqueeze(-1).sub(levels).abs().argmin(-1).to(torch.uint8)
    return {
        "ours int8/channel": lambda x: torch.nn.functional.linear(x, q8.float() * scale),
        "ours NF4/block64": lambda x: torch.nn.functional.linear(
            x, (levels[idx.long()] * absmax).reshape(w.shape)
        ),
    }


def libraries(linear: torch.nn.Linear) -> dict[str, Callable[[torch.Tensor], torch.Tensor]]:
    found: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {}
    try:
        import bitsandbytes as bnb

        l8 = bnb.nn.Linear8bitLt(
            linear.in_features,
            linear.out_features,
            bias=False,
            has_fp16_weights=False,
            threshold=6.0,
        )
        l8.load_state_dict({"weight": linear.weight.detach()})
        found["bitsandbytes LLM.int8"] = l8.to("cpu")
        l4 = bnb.nn.Linear4bit(
            linear.in_features,
            linear.out_features,
            bias=False,
            quant_type="nf4",
            compute_dtype=torch.float32,
        )
        l4.load_state_dict({"weight": linear.weight.detach()})
        found["bitsandbytes NF4"] = l4.to("cpu")
    except Exception as error:  # noqa: BLE001
        print(f"bitsandbytes: skipped ({type(error).__name__}: {error})")
    try:
        from torchao.quantization import Int8WeightOnlyConfig, IntxWeightOnlyConfig, quantize_
        from torchao.quantization.granularity import PerGroup

        for name, config in (
            ("torchao int8 weight-only", Int8WeightOnlyConfig()),
            ("torchao int4 group32", IntxWeightOnlyConfig(torch.int4, PerGroup(32))),
        ):
            layer = torch.nn.Sequential(copy.deepcopy(linear))
            quantize_(layer, config)
            found[name] = layer
    except Exception as error:  # noqa: BLE001
        print(f"torchao: skipped ({type(error).__name__}: {error})")
    return found


def run() -> list[dict[str, object]]:
    quality.quiet_libraries()
    torch.manual_seed(0)
    rows = []
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    for n_in, n_out in SHAPES:
        linear = torch.nn.Linear(n_in, n_out, bias=False)
        linear.weight.data.normal_(0, 0.02)
        bf16 = copy.deepcopy(linear).to(torch.bfloat16)
        formats = {"dense bf16": lambda x, m=bf16: m(x.bfloat16())}
        formats.update(ours(linear))
        formats.update(libraries(linear))
        for tokens in TOKENS:
            x = torch.randn(tokens, n_in)
            with torch.no_grad():
                dense = seconds(lambda x=x, m=linear: m(x))
                print(f"\n{n_in}→{n_out}, {tokens} token(s): dense fp32 {dense * 1e3:.3f} ms")
                for name, fn in formats.items():
                    try:
                        t = seconds(lambda fn=fn, x=x: fn(x))
                    except Exception as error:  # noqa: BLE001
                        print(f"  {name:<26} failed: {type(error).__name__}")
                        continue
                    rows.append(
                        {
                            "shape": (n_in, n_out),
                            "tokens": tokens,
                            "format": name,
                            "ms": t * 1e3,
                            "ratio": t / dense,
                        }
                    )
                    print(f"  {name:<26} {t * 1e3:8.3f} ms  {t / dense:6.2f}× dense")
    return rows


if __name__ == "__main__":
    run()
