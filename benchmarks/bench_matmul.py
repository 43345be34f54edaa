"""Is the matmul throughput that lesson 01 reports the real thing?  One run measures float32
matmul in numpy, torch and jitted JAX like with like, and sets the lesson's figure (the better of
numpy and torch, what lesson 01 shows) against the best of the three and the CPU's theoretical
peak.  Target: the lesson's figure is at least 95 % of the best library figure.

    python benchmarks/bench_matmul.py                 (or: make bench)
    python benchmarks/bench_matmul.py --threads 2 --sizes 1024 --rounds 5

Like with like:
- one statistic for every library: utils.timing.bench.measure, the lesson's own timer (a cold call, then
  blocks of >= 20 ms, the median over >= 5 blocks and >= 0.2 s); a library's own timer (timeit for
  numpy, torch.utils.benchmark for torch, timeit with block_until_ready after every call for
  JAX, as JAX's documentation times) runs the same number of blocks of the same size next to it
  and gives its median too, so a timer that favoured one library would show;
- one thread count for every library: torch.set_num_threads, threadpoolctl for numpy's BLAS;
  JAX has no such call: with one thread XLA_FLAGS turns off its Eigen pool (read once, when JAX
  starts, so this script sets it before importing JAX), with fewer threads than cores the process
  is narrowed to that many cores (sched_setaffinity), with all cores XLA takes them all.
  One thread by default: on a busy machine a BLAS that waits for all its threads stalls whenever
  one of them is descheduled, and the libraries suffer unequally (with 2 threads on 2 loaded
  cores, n=256, numpy fell to 0.5 GFLOP/s while JAX kept 77; 2026-12-01). `--threads` asks for
  more. The CPU time each measurement used per second of wall time is printed: the cores it
  really kept busy;
- one clock for every timer: by default the process's CPU time (`--clock cpu`), which counts
  only the time this process computed, so other processes on a shared machine can't stretch it
  (with one thread, the figure is what the core does while it is ours: on an idle machine the
  wall-clock figure); `--clock wall` uses time.perf_counter, as the lesson does;
- rounds interleaved (numpy, torch, JAX, numpy, ...), so that the machine's load drifts hit every
  library alike; each round gives its own ratio, and the line shows their median and range.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import timeit
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SIZES = (512, 1024, 2048)
ROUNDS = 3
LIBRARIES = ("numpy", "torch", "jax")
LESSON = ("numpy", "torch")  # lesson 01 measures these two and reports the better one


def xla_flags(threads: int, current: str = "") -> str:
    """XLA_FLAGS for JAX's CPU backend: one thread turns off Eigen's thread pool; more threads
    come from the cores the process may use (set_threads narrows them with sched_setaffinity)."""
    kept = [f for f in current.split() if "xla_cpu_multi_thread_eigen" not in f]
    if threads == 1:
        kept.append("--xla_cpu_multi_thread_eigen=false")
    return " ".join(kept)


@dataclass
class Figure:
    """One library in one round: FLOP/s by the lesson's timer and by the library's own timer."""

    library: str
    lesson_timer: float
    own_timer: float
    busy_cores: float  # CPU seconds per wall second while the lesson's timer ran: the load


def flops(n: int) -> float:
    return 2.0 * n**3


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
_LIMITS: list[object] = []


def _own_timer_median(call: Callable[[], object], number: int, blocks: int, clock) -> float:
    """The library's own timer, same block size and same statistic: median seconds per call."""
    timer = timeit.Timer(call, timer=clock)
    return statistics.median(timer.repeat(number=number, repeat=blocks)) / number


def measure_library(library: str, n: int, threads: int, clock=time.process_time) -> Figure:
    import numpy as np

    from utils.timing import bench

    a = np.random.default_rng(n).standard_normal((n, n), dtype=np.float32)  # never zeros
    if library == "numpy":
        fn, args = np.matmul, (a, a)

        def own(m) -> float:
            return _own_timer_median(lambda: np.matmul(a, a), m.number, m.n, clock)

    elif library == "torch":
        import torch
        import torch.utils.benchmark as torch_benchmark

        t = torch.from_numpy(a)
        fn, args = torch.matmul, (t, t)

        def own(m) -> float:
            timer = torch_benchmark.Timer(
                "torch.matmul(a, a)",
                globals={"torch": torch, "a": t},
                num_threads=threads,
                timer=clock,
            )
            return statistics.median(
                timer.timeit(m.number).median for _ in range(m.n)
            )  # one block of m.number calls per timeit

    else:
        import jax
        import jax.numpy as jnp

        j = jnp.asarray(a)
        jitted = jax.jit(jnp.matmul)
        fn, args = jitted, (j, j)

        def own(m) -> float:
            return _own_timer_median(lambda: jitted(j, j).block_until_ready(), m.number, m.n, clock)

    cpu, wall = time.process_time(), time.perf_counter()
    m = bench.measure(fn, *args, flops=flops(n), dtype="float32", clock=clock)
    busy = (time.process_time() - cpu) / (time.perf_counter() - wall)
    return Figure(library, m.flops_per_second, flops(n) / own(m), busy)


def set_threads(threads: int, cores: int) -> dict[str, object]:
    """The same thread count for all three libraries; returns what each reports afterwards."""
    if 1 < threads < cores and hasattr(os, "sched_setaffinity"):
        # XLA sizes its pool by the cores it may use: give the whole process `threads` of them.
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:threads])
    os.environ["XLA_FLAGS"] = xla_flags(threads, os.environ.get("XLA_FLAGS", ""))
    import torch
    from threadpoolctl import threadpool_info, threadpool_limits

    torch.set_num_threads(threads)
    _LIMITS.append(threadpool_limits(threads, user_api="blas"))  # kept: the limit lasts
    blas = [p for p in threadpool_info() if p.get("user_api") == "blas"]
    return {
        "torch": torch.get_num_threads(),
        "blas": ", ".join(
            f"{p['internal_api']} {p.get('version')} ({p.get('architecture')}): "
            f"{p['num_threads']} threads"
            for p in blas
        )
        or "none found by threadpoolctl",
        "XLA_FLAGS": os.environ["XLA_FLAGS"],
    }


@dataclass
class Row:
    n: int
    rounds: list[dict[str, Figure]]

    def median(self, library: str, which: str = "lesson_timer") -> float:
        return statistics.median(getattr(r[library], which) for r in self.rounds)

    def ratios(self) -> list[float]:
        """Per round: the lesson's figure over the best library's, both by the lesson's timer."""
        return [
            max(r[lib].lesson_timer for lib in LESSON)
            / max(r[lib].lesson_timer for lib in LIBRARIES)
            for r in self.rounds
        ]


def measure_size(n: int, threads: int, rounds: int, clock=time.process_time) -> Row:
    row = Row(n, [])
    for index in range(rounds):
        order = LIBRARIES[index % 3 :] + LIBRARIES[: index % 3]  # nobody always goes first
        row.rounds.append({lib: measure_library(lib, n, threads, clock) for lib in order})
    return row


def run(
    report: Callable[[str], None] = print,
    threads: int | None = None,
    sizes: tuple[int, ...] = SIZES,
    rounds: int = ROUNDS,
    clock: str = "cpu",
) -> list[Row]:
    from utils import units
    from utils.platform import hardware
    from utils.platform.chips import cpu_estimate

    cpu = hardware.detect_cpu()
    threads = threads or 1
    settings = set_threads(threads, cpu.cores)  # before JAX is imported: XLA reads its flags once
    peak = cpu_estimate(threads)
    report(f"{cpu.model}, {cpu.cores} usable cores; every library runs on {threads} thread(s)")
    report(f"  torch threads {settings['torch']}; numpy BLAS: {settings['blas']}")
    report(f"  JAX: XLA_FLAGS={settings['XLA_FLAGS']!r}")
    report(
        "statistic: median FLOP/s over blocks of >= 20 ms (utils.timing.bench.measure, the lesson's "
        f"timer), {rounds} interleaved rounds; 'own' = the library's timer, same blocks, median"
    )
    report(
        "clock: "
        + (
            "CPU time of this process (other processes' load doesn't count; with more than "
            "one thread the figures are per CPU second, i.e. per core)"
            if clock == "cpu"
            else "wall time (time.perf_counter), as the lesson measures"
        )
    )
    if peak:
        report(
            f"theoretical fp32 peak of {threads} core(s) (estimate): "
            f"{units.format_rate(peak.tflops['float32'] * 1e12)}"
        )
    rows = []
    for n in sizes:
        row = measure_size(n, threads, rounds, CLOCKS[clock])
        rows.append(row)
        ratios = row.ratios()
        lesson = max(row.median(lib) for lib in LESSON)
        report(
            f"n={n}: lesson {units.format_rate(lesson)}, lesson / best = "
            f"{statistics.median(ratios):.1%} (rounds {min(ratios):.1%}-{max(ratios):.1%}; "
            "target >= 95 %)"
            + (f", {lesson / (peak.tflops['float32'] * 1e12):.0%} of peak" if peak else "")
        )
        for lib in LIBRARIES:
            ours, own = row.median(lib), row.median(lib, "own_timer")
            busy = statistics.median(r[lib].busy_cores for r in row.rounds)
            report(
                f"    {lib:6s} {units.format_rate(ours):>14s}  own timer "
                f"{units.format_rate(own):>14s} ({ours / own:.3f})  busy cores {busy:.2f}"
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, help="threads for every library (default: 1)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument(
        "--clock", choices=sorted(CLOCKS), default="cpu", help="cpu (default) or wall"
    )
    args = parser.parse_args(argv)
    run(threads=args.threads, sizes=tuple(args.sizes), rounds=args.rounds, clock=args.clock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
