"""The lessons' measurements at full size on a CUDA GPU: achieved TFLOP/s per dtype and % of the
data-sheet peak, the timer against reference timers, and host↔device bandwidth.

    python benchmarks/gpu_check.py          (or: make gpu-check)

On an H200 the bf16 matmul should reach at least 75 % of its 989 TFLOP/s peak.
Without a CUDA GPU it says so and exits with 1.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from utils import bench, hardware, units  # noqa: E402

SIZES = (4096, 8192, 16384)
DTYPES = {
    "float32": torch.float32,
    "tf32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}


def matmul_table(report=print) -> None:
    gpu = hardware.detect_cuda(torch)[0][0]
    report(f"{gpu.name}, {gpu.memory_gib} GiB, compute capability {gpu.compute_capability}")
    for label, dtype in DTYPES.items():
        if label == "bfloat16" and not gpu.has_fast_bf16:
            report("bfloat16: skipped, emulated on this GPU (compute capability < 8.0)")
            continue
        torch.backends.cuda.matmul.allow_tf32 = label == "tf32"
        for n in SIZES:
            bytes_needed = 3 * n * n * torch.tensor([], dtype=dtype).element_size()
            if bytes_needed > 0.5 * gpu.memory_gib * 2**30:
                continue
            a = torch.randn(n, n, device="cuda", dtype=dtype)  # random data: zeros run faster
            m = bench.measure(torch.matmul, a, a, flops=2 * n**3, dtype=label, min_time=1.0)
            share = (
                f"{m.percent_of_peak:.0f} % of peak"
                if m.percent_of_peak is not None
                else "peak unknown"
            )
            report(
                f"{label:9s} n={n:6d}  {units.format_rate(m.flops_per_second):>14s}  {share}  "
                f"(median {units.format_seconds(m.median)}, IQR {units.format_seconds(m.iqr)})"
            )
            del a
    torch.backends.cuda.matmul.allow_tf32 = False


def main() -> int:
    if not torch.cuda.is_available():
        print(
            "gpu-check needs a CUDA GPU; this machine has none (see `python -m utils.preflight`)."
        )
        return 1
    print("== matmul throughput (lesson 01 at full size)")
    matmul_table()
    for name in ("bench_timer", "bench_transfer"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        print(f"== {name}")
        if name == "bench_timer":
            module.compare("cuda")
        else:
            module.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
