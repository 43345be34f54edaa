"""Is the matmul throughput that lesson 01 reports the real thing?  In one run: the lesson's
measurement (utils.bench.measure of torch and numpy, the best of them), the best each library
reaches when timed its own way (numpy with timeit's best-of, torch with its benchmark Timer,
jitted JAX with block_until_ready), and the machine's theoretical peak.  Target: the lesson's
figure is at least 95 % of the best library figure.

    python benchmarks/bench_matmul.py       (or: make bench)
"""

from __future__ import annotations

import sys
import timeit
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import torch
import torch.utils.benchmark as torch_benchmark

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from utils import bench, hardware, units  # noqa: E402
from utils.chips import cpu_estimate  # noqa: E402

SIZES = (512, 1024, 2048)


def flops(n: int) -> float:
    return 2.0 * n**3


def lesson_figure(n: int) -> float:
    """What lesson 01 reports: bench.measure of numpy and torch float32, the better one."""
    a_np = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    a_t = torch.from_numpy(a_np.copy())
    return max(
        bench.measure(np.matmul, a_np, a_np, flops=flops(n)).flops_per_second,
        bench.measure(torch.matmul, a_t, a_t, flops=flops(n)).flops_per_second,
    )


def library_figures(n: int) -> dict[str, float]:
    a_np = np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)
    a_t = torch.from_numpy(a_np.copy())
    a_j = jnp.asarray(a_np)
    jitted = jax.jit(jnp.matmul)
    jitted(a_j, a_j).block_until_ready()
    timer = timeit.Timer(lambda: np.matmul(a_np, a_np))
    number = max(1, int(0.05 / max(timer.timeit(1), 1e-9)))
    numpy_best = min(timer.repeat(repeat=7, number=number)) / number
    torch_t = torch_benchmark.Timer(
        "torch.matmul(a, a)",
        globals={"torch": torch, "a": a_t},
        num_threads=torch.get_num_threads(),
    ).blocked_autorange(min_run_time=0.3)
    jax_timer = timeit.Timer(lambda: jitted(a_j, a_j).block_until_ready())
    jax_best = min(jax_timer.repeat(repeat=7, number=number)) / number
    return {
        "numpy (timeit best)": flops(n) / numpy_best,
        "torch (benchmark.Timer)": flops(n) / torch_t.median,
        "jax (jit, best)": flops(n) / jax_best,
    }


def run(report=print) -> None:
    cpu = hardware.detect_cpu()
    peak = cpu_estimate(cpu.cores)
    report(f"{cpu.model}, {cpu.cores} cores, {bench.thread_info()}")
    if peak:
        report(
            f"theoretical fp32 peak (estimate): {units.format_rate(peak.tflops['float32'] * 1e12)}"
        )
    for n in SIZES:
        libraries = library_figures(n)
        lesson = lesson_figure(n)
        best_name, best = max(libraries.items(), key=lambda item: item[1])
        report(
            f"n={n}: lesson {units.format_rate(lesson)}, best library {units.format_rate(best)} ({best_name}), "
            f"lesson / best = {lesson / best:.1%} (target ≥ 95 %)"
            + (f", {lesson / (peak.tflops['float32'] * 1e12):.0%} of peak" if peak else "")
        )
        for name, rate in libraries.items():
            report(f"    {name:24s} {units.format_rate(rate)}")


if __name__ == "__main__":
    run()
