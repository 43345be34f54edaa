"""How accurate is utils.timing.bench.measure?  Compared with torch.utils.benchmark.Timer (and, on CUDA,
triton.testing.do_bench) on the same operations and sizes, with the same thread settings,
interleaved in one run.  Prints the ratio of medians per case; the target is within ±3 % for
operations of 1 ms and more.

    python benchmarks/bench_timer.py        (or: make bench)
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import torch
import torch.utils.benchmark as torch_benchmark

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from utils import units  # noqa: E402
from utils.timing import bench

ROUNDS = 3  # A, B, A, B, ... so that drifts of the machine hit both timers alike


def ours(fn, *args) -> float:
    return bench.measure(fn, *args, min_time=0.2).median


def torch_timer(fn, *args) -> float:
    timer = torch_benchmark.Timer(
        stmt="fn(*args)", globals={"fn": fn, "args": args}, num_threads=torch.get_num_threads()
    )
    return timer.blocked_autorange(min_run_time=0.2).median


def triton_timer(fn, *args) -> float | None:
    try:
        from triton.testing import do_bench
    except ImportError:
        return None
    return do_bench(lambda: fn(*args), return_mode="median") / 1e3  # ms → s


def cases(device: str):
    for n in (64, 256, 512, 1024) if device == "cpu" else (256, 1024, 4096, 8192):
        a = torch.randn(n, n, device=device)
        yield f"matmul {n}", torch.matmul, (a, a)
    for power in (22, 24) if device == "cpu" else (24, 27):  # in cache, and well beyond it
        v = torch.randn(2**power, device=device)
        yield f"add 2^{power}", torch.add, (v, v)


def compare(device: str, report=print) -> list[tuple[str, float, float]]:
    rows = []
    report(f"device {device}, torch threads {torch.get_num_threads()}")
    report(f"{'case':16s} {'ours':>10s} {'torch Timer':>12s} {'ratio':>7s}  target")
    for name, fn, args in cases(device):
        mine, theirs = [], []
        for _ in range(ROUNDS):
            mine.append(ours(fn, *args))
            theirs.append(torch_timer(fn, *args))
        a, b = statistics.median(mine), statistics.median(theirs)
        target = "±3 %" if b >= 1e-3 else "(< 1 ms: info)"
        ok = "" if b < 1e-3 else ("ok" if abs(a / b - 1) <= 0.03 else "OUTSIDE")
        report(
            f"{name:16s} {units.format_seconds(a):>10s} {units.format_seconds(b):>12s} {a / b:7.3f}  {target} {ok}"
        )
        if device == "cuda" and (t := triton_timer(fn, *args)) is not None:
            report(
                f"{'':16s} triton do_bench {units.format_seconds(t)}, ours / triton = {a / t:.3f}"
            )
        rows.append((name, a, b))
    return rows


def run(report=print) -> None:
    compare("cpu", report)
    if torch.cuda.is_available():
        compare("cuda", report)


if __name__ == "__main__":
    run()
