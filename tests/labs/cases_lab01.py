"""Lab 01's answers: right ones in several styles, wrong ones each with the feedback it must get.
Collected by tests/labs/test_labs.py."""

from __future__ import annotations

import math
import statistics
import time
import timeit
from time import perf_counter

import numpy as np
import torch

from tests.labs.labcase import Case

LAB = "01_timing_matmul"


# q2: timers. Right: warm up, then sync around the timed loop (or around each call).
def timer_loop(fn, sync, repeats=20):
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    sync()
    return (time.perf_counter() - start) / repeats


def timer_median_of_synced_calls(fn, sync, repeats=20):
    fn()
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def timer_without_sync(fn, sync, repeats=20):  # the classic: the clock stops while work is queued
    fn()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


def timer_sync_only_before(fn, sync, repeats=20):  # syncs, but before the clock starts only
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


def timer_with_first_call(fn, sync, repeats=20):  # no warm-up: the compile is timed too
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    sync()
    return (time.perf_counter() - start) / repeats


def timer_total(fn, sync, repeats=20):  # forgets to divide by the number of calls
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    sync()
    return time.perf_counter() - start


def timer_median_no_warmup(fn, sync, repeats=20):  # the median drops the compiling first call
    times = []
    for _ in range(repeats):
        start = perf_counter()
        fn()
        sync()
        times.append(perf_counter() - start)
    return statistics.median(times)


def timer_ns(fn, sync, repeats=20):
    fn()
    sync()
    start = time.perf_counter_ns()
    for _ in range(repeats):
        fn()
    sync()
    return (time.perf_counter_ns() - start) / repeats / 1e9


def timer_milliseconds(fn, sync, repeats=20):  # ms instead of s
    return timer_loop(fn, sync, repeats) * 1e3


def timer_constant(fn, sync, repeats=20):  # a constant: 3 ms is "about right" for one device only
    return 0.003


def timer_sleeps(fn, sync, repeats=20):  # measures a sleep of its own, not the calls
    start = time.perf_counter()
    time.sleep(0.003)
    return time.perf_counter() - start


def timer_reads_internals(fn, sync, repeats=20):  # the device's setting, not a measurement
    fn()
    sync()
    device = next(c.cell_contents for c in fn.__closure__ if hasattr(c.cell_contents, "clock"))
    return device.seconds_per_call


def timer_off_by_some(fn, sync, repeats=20):  # loops more often than it divides by
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(repeats + 5):
        fn()
    sync()
    return (time.perf_counter() - start) / repeats


def timer_warmup_not_synced(fn, sync, repeats=20):  # the compile is still queued at the start
    fn()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    sync()
    return (time.perf_counter() - start) / repeats


def timer_raising(fn, sync, repeats=20):
    fn()
    sync(wait=True)
    return 0.0


# q4: crossover
def crossover_right(sizes, cpu, acc):
    wins = [a < c for c, a in zip(cpu, acc, strict=True)]
    return next((s for i, s in enumerate(sizes) if all(wins[i:])), None)


def crossover_numpy(sizes, cpu, acc):
    wins = np.asarray(acc) < np.asarray(cpu)
    for i in range(len(sizes)):
        if wins[i:].all():
            return sizes[i]
    return None


def crossover_first_win(sizes, cpu, acc):  # trusts one lucky measurement
    for size, c, a in zip(sizes, cpu, acc, strict=True):
        if a < c:
            return size
    return None


def crossover_index(sizes, cpu, acc):  # the position, not the size
    wins = [a < c for c, a in zip(cpu, acc, strict=True)]
    return next((i for i in range(len(sizes)) if all(wins[i:])), None)


def crossover_last_loss(sizes, cpu, acc):  # one too early: the last size the CPU won
    right = crossover_right(sizes, cpu, acc)
    return sizes[sizes.index(right) - 1] if right is not None else None


def crossover_ties_win(sizes, cpu, acc):  # <= : a tie counted as a win
    wins = [a <= c for c, a in zip(cpu, acc, strict=True)]
    return next((s for i, s in enumerate(sizes) if all(wins[i:])), None)


def crossover_misses_last(sizes, cpu, acc):  # never looks at the last size alone
    wins = [a < c for c, a in zip(cpu, acc, strict=True)]
    return next((sizes[i] for i in range(len(sizes) - 1) if all(wins[i:])), None)


def crossover_skips_first(sizes, cpu, acc):  # starts at the second size
    wins = [a < c for c, a in zip(cpu, acc, strict=True)]
    return next((sizes[i] for i in range(1, len(sizes)) if all(wins[i:])), None)


def crossover_two_in_a_row(sizes, cpu, acc):  # two wins in a row taken as the crossover
    wins = [a < c for c, a in zip(cpu, acc, strict=True)]
    return next((sizes[i] for i in range(len(sizes) - 1) if wins[i] and wins[i + 1]), None)


def crossover_raising(sizes, cpu, acc):
    wins = [a < c for c, a in zip(cpu, acc, strict=True)]
    return sizes[wins.index(True) + 99]


def crossover_never_none(sizes, cpu, acc):  # "the largest size" when the accelerator never wins
    return crossover_right(sizes, cpu, acc) or sizes[-1]


def crossover_from_the_end(sizes, cpu, acc):  # walks back from the largest size while it wins
    found = None
    for size, c, a in reversed(list(zip(sizes, cpu, acc, strict=True))):
        if not a < c:
            break
        found = size
    return found


def crossover_numpy_size(sizes, cpu, acc):  # a numpy integer from an array of the sizes
    wins = np.asarray(acc) < np.asarray(cpu)
    return next((np.asarray(sizes)[i] for i in range(len(sizes)) if wins[i:].all()), None)


def crossover_all_wins(sizes, cpu, acc):  # every size where it wins, as an array
    return np.asarray(sizes)[np.asarray(acc) < np.asarray(cpu)]


def crossover_in_a_list(sizes, cpu, acc):  # the right size, in an array of one
    right = crossover_right(sizes, cpu, acc)
    return np.array([right]) if right is not None else None


def crossover_cpu_wins(sizes, cpu, acc):  # the comparison the wrong way round
    wins = [c < a for c, a in zip(cpu, acc, strict=True)]
    return next((s for i, s in enumerate(sizes) if all(wins[i:])), None)


def crossover_zero_for_never(sizes, cpu, acc):  # 0 instead of None
    return crossover_right(sizes, cpu, acc) or 0


# q5: compute- or memory-bound
def bound_right(flops, nbytes, peak, bandwidth):
    return "compute" if flops / nbytes > peak / bandwidth else "memory"


def bound_not_monotone(flops, nbytes, peak, bandwidth):  # 'memory' again from 2x the ridge to 8x
    ratio = flops / nbytes / (peak / bandwidth)
    return "compute" if 1 < ratio < 2 or ratio > 8 else "memory"


def bound_times(flops, nbytes, peak, bandwidth):  # compute time against memory time
    return "compute" if flops / peak > nbytes / bandwidth else "memory"


def bound_torch(flops, nbytes, peak, bandwidth):
    return "compute" if torch.tensor(flops / nbytes) > peak / bandwidth else "memory"


# q6: the size with the most FLOP/s, timed on this device. Right: a typical call of several after
# a warm-up, the verdict by FLOPs per ms of the learner's own numbers.
def _most_flops(ms, flops):
    return max(ms, key=lambda n: flops[n] / ms[n])


def best_size_timed(reduce=statistics.median, unit=1e3, calls=5, warm_up=True, verdict=_most_flops):
    """Times each size `calls` times (after a warm-up call unless not `warm_up`) and reports
    `reduce` of them in `unit`s of a second, with the size `verdict(ms, flops)` names."""

    def answer(runs, flops):
        ms = {}
        for n, run in runs.items():
            if warm_up:
                run()
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                run()
                times.append(time.perf_counter() - start)
            ms[n] = unit * reduce(times)
        return ms, verdict(ms, flops)

    return answer


best_size_right = best_size_timed()


def best_size_loop(runs, flops):  # ten calls in one go, divided
    ms = {}
    for n, run in runs.items():
        run()
        start = perf_counter()
        for _ in range(10):
            run()
        ms[n] = (perf_counter() - start) / 10 * 1e3
    gflops = {n: flops[n] / ms[n] / 1e6 for n in ms}
    return ms, max(gflops, key=gflops.get)


def best_size_timeit(runs, flops):  # the fastest of five single calls, by timeit
    ms = {n: 1e3 * min(timeit.repeat(run, number=1, repeat=5)) for n, run in runs.items()}
    return ms, _most_flops(ms, flops)


def best_size_numpy(runs, flops):  # the times in a numpy array, the verdict by argmax
    sizes = list(runs)
    ms = np.zeros(len(sizes))
    for i, n in enumerate(sizes):
        runs[n]()
        times = []
        for _ in range(6):
            start = time.perf_counter_ns()
            runs[n]()
            times.append(time.perf_counter_ns() - start)
        ms[i] = np.median(times) / 1e6
    rates = np.array([flops[n] for n in sizes]) / ms
    return dict(zip(sizes, ms.tolist(), strict=True)), sizes[int(np.argmax(rates))]


def best_size_fastest_call(runs, flops):  # the quickest call, not the most work per time
    return best_size_timed(verdict=lambda ms, flops: min(ms, key=ms.get))(runs, flops)


def best_size_as_text(runs, flops):  # the verdict typed in as a word
    return best_size_right(runs, flops)[0], "large"


def best_size_gflops(runs, flops):  # the GFLOP/s reached instead of the size that reaches them
    ms = best_size_right(runs, flops)[0]
    return ms, max(flops[n] / ms[n] / 1e6 for n in ms)


def best_size_data_sheet(runs, flops):  # ms from a data sheet's peak (989 TFLOP/s), not timed
    ms = {n: flops[n] / 989e12 * 1e3 for n in runs}
    return ms, _most_flops(ms, flops)


def best_size_typed(runs, flops):  # timed, then times typed in, far from any the calls could give
    ms = best_size_right(runs, flops)[0]
    return {n: 1e9 * (i + 1) for i, n in enumerate(ms)}, _most_flops(ms, flops)


def best_size_raises(runs, flops):
    return {n: runs[n].ms for n in runs}, 256


CASES = {
    (LAB, "batched_flops"): Case(
        right=[
            lambda b, m, k, n: 2 * b * m * k * n,
            lambda b, m, k, n: float(b) * 2 * m * k * n,
            lambda b, m, k, n: torch.tensor(2 * b * m * k * n),
            lambda b, m, k, n: 2 * math.prod((b, m, k, n)),
            lambda b, m, k, n: 2 * np.prod([b, m, k, n], dtype=np.int64),
        ],
        wrong=[
            (lambda b, m, k, n: 2 * m * k * n, "no_batch"),
            (lambda b, m, k, n: b * m * k * n, "mkn"),
            (lambda b, m, k, n: b * m * n, "outputs_only"),
            (lambda b, m, k, n: b * m * n * (2 * k - 1), "exact_adds"),
            (
                lambda b, m, k, n: int((np.array([2 * b * m], dtype=np.int32) * k * n)[0]),
                "overflow",
            ),
            (lambda b, m, k, n: 2 * b * (m + k + n), "wrong"),
            (lambda b, m, k, n: 2 * b * b * m * k * n, "wrong"),  # the batch counted twice
            (lambda b, m, k, n: 2 * b * m * k * n + b * m * n, "wrong"),  # adds a bias
            (lambda b, m, k, n: 2 * b * m * m * n, "wrong"),  # m for k: square in the head
        ],
        raising=lambda b, m, k, n: 2 * b * m * k * n / (b - b),
        raising_line="raising=lambda b, m, k, n: 2 * b * m * k * n / (b - b)",
    ),
    (LAB, "async_timer"): Case(
        right=[timer_loop, timer_median_of_synced_calls, timer_median_no_warmup, timer_ns],
        wrong=[
            (timer_without_sync, "no_sync"),
            (timer_sync_only_before, "sync_before"),
            (timer_with_first_call, "first_call"),
            (timer_warmup_not_synced, "first_call"),
            (timer_total, "not_per_call"),
            (timer_milliseconds, "milliseconds"),
            (timer_constant, "constant"),
            (timer_sleeps, "constant"),
            (timer_reads_internals, "internals"),
            (timer_off_by_some, "wrong"),
        ],
        raising=timer_raising,
        raising_line="sync(wait=True)",
        timing=True,
    ),
    (LAB, "achieved"): Case(
        right=[
            lambda n, s, peak: (2 * n**3 / s / 1e12, 200 * n**3 / s / 1e12 / peak),
            lambda n, s, peak: [
                np.float64(2.0 * n**3 / s / 1e12),
                np.float64(2.0 * n**3 / s / 1e10 / peak),
            ],
            lambda n, s, peak: np.array([2 * n**3 / s / 1e12, 200 * n**3 / s / 1e12 / peak]),
            lambda n, s, peak: (
                torch.tensor(2.0 * n**3 / s / 1e12, dtype=torch.float64),
                200 * n**3 / s / 1e12 / peak,
            ),
        ],
        wrong=[
            (lambda n, s, peak: (n**3 / s / 1e12, 100 * n**3 / s / 1e12 / peak), "mkn"),
            (lambda n, s, peak: (2 * n**3 / s / 1e12, 2 * n**3 / s / 1e12 / peak), "fraction"),
            (lambda n, s, peak: (2 * n**3 / s / 1e9, 200 * n**3 / s / 1e9 / peak), "gflops"),
            (
                lambda n, s, peak: (s / (2 * n**3) * 1e12, 100 * s / (2 * n**3) * 1e12 / peak),
                "inverted",
            ),
            (lambda n, s, peak: (2 * n**3 / s / 1e9, 200 * n**3 / s / 1e12 / peak), "gflops"),
            (
                lambda n, s, peak: (
                    2 * n**3 / (s * 1e3) / 1e12,
                    200 * n**3 / (s * 1e3) / 1e12 / peak,
                ),
                "ms_as_s",
            ),
            (
                lambda n, s, peak: (2 * n**3 / s / 1e12, 200 * n**3 / s / 1e12 / (2 * peak)),
                "sparse_peak",
            ),
            (lambda n, s, peak: (200 * n**3 / s / 1e12 / peak, 2 * n**3 / s / 1e12), "swapped"),
            (lambda n, s, peak: 2 * n**3 / s / 1e12, "not_a_pair"),
            (lambda n, s, peak: {"tflops": 2 * n**3 / s / 1e12}, "not_a_pair"),
            (
                lambda n, s, peak: (
                    round(2 * n**3 / s / 1e12, 1),
                    round(200 * n**3 / s / 1e12 / peak, 1),
                ),
                "rounded",
            ),
            (
                lambda n, s, peak: (2 * n**3 / s / 1e12, int(200 * n**3 / s / 1e12 / peak)),
                "rounded",
            ),
            (lambda n, s, peak: (2 * n**3 / s / 2**40, 200 * n**3 / s / 2**40 / peak), "wrong"),
            (lambda n, s, peak: (2 * n**3 / s / 1e12, 2 * n**3 / s / peak), "wrong"),
        ],
        raising=lambda n, s, peak: (2 * n**3 / s / 1e12, 100 * 2 * n**3 / s / 1e12 / peak.value),
        raising_line="peak.value",
    ),
    (LAB, "crossover"): Case(
        right=[crossover_right, crossover_numpy, crossover_from_the_end, crossover_numpy_size],
        wrong=[
            (crossover_first_win, "first_win"),
            (crossover_index, "index"),
            (crossover_never_none, "never"),
            (crossover_last_loss, "wrong"),
            (crossover_ties_win, "tie"),
            (crossover_misses_last, "misses_last"),
            (crossover_skips_first, "skips_first"),
            (crossover_two_in_a_row, "first_win"),
            (crossover_all_wins, "not_a_size"),
            (crossover_in_a_list, "not_a_size"),
            (lambda sizes, cpu, acc: str(crossover_right(sizes, cpu, acc)), "not_a_size"),
            (crossover_cpu_wins, "wrong"),
            (crossover_zero_for_never, "never"),
        ],
        raising=crossover_raising,
        raising_line="return sizes[wins.index(True) + 99]",
    ),
    (LAB, "bound"): Case(
        right=[
            bound_right,
            bound_torch,
            bound_times,
            lambda f, b, p, bw: "memory" if b / f >= bw / p else "compute",  # bytes per FLOP
        ],
        wrong=[
            (lambda f, b, p, bw: "memory" if f / b > p / bw else "compute", "inverted"),
            (lambda f, b, p, bw: "compute" if f / b > p else "memory", "ignores_bandwidth"),
            (lambda f, b, p, bw: "compute", "constant"),
            (bound_not_monotone, "wrong"),
            (lambda f, b, p, bw: f / b > p / bw, "not_a_label"),
            (lambda f, b, p, bw: "compute" if f / b >= p / bw else "memory", "at_ridge"),
            (lambda f, b, p, bw: "compute" if f / (2 * b) > p / bw else "memory", "threshold"),
            (lambda f, b, p, bw: "compute" if f / b > 8 * p / bw else "memory", "threshold"),
            (lambda f, b, p, bw: "compute" if 2 * f / b > p / bw else "memory", "threshold"),
            (lambda f, b, p, bw: "compute" if f // b > p // bw else "memory", "floor"),
            (lambda f, b, p, bw: "Compute" if f / b > p / bw else "Memory", "not_a_label"),
            (
                lambda f, b, p, bw: "compute-bound" if f / b > p / bw else "memory-bound",
                "not_a_label",
            ),
        ],
        raising=lambda f, b, p, bw: "compute" if f / b > p / bw.ridge else "memory",
        raising_line="bw.ridge",
    ),
    (LAB, "best_size"): Case(
        right=[best_size_right, best_size_loop, best_size_timeit, best_size_numpy],
        wrong=[
            (best_size_timed(unit=1), "seconds"),
            (best_size_timed(unit=1e6), "microseconds"),
            (best_size_timed(reduce=sum, calls=10), "total"),
            (best_size_timed(calls=1, warm_up=False), "too_few"),
            (best_size_data_sheet, "too_few"),
            (best_size_typed, "not_measured"),
            (best_size_fastest_call, "fastest"),
            (best_size_as_text, "verdict"),
            (best_size_gflops, "verdict"),
            (lambda runs, flops: best_size_right(runs, flops)[::-1], "type"),
            (lambda runs, flops: best_size_right(runs, flops)[0], "type"),
        ],
        raising=best_size_raises,
        raising_line="return {n: runs[n].ms for n in runs}, 256",
        under_load=True,  # fast enough for the 50-seed sweep
        rounds_under_load=1,  # each round times real work on every seed
    ),
}
