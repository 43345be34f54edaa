"""benchmarks/bench_matmul.py compares like with like: one thread count, one statistic, one clock,
and it says which.  (It is a benchmark: nothing here asserts a speed.)"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("jax")

from benchmarks import bench_matmul
from utils.course import ROOT


def test_one_thread_turns_off_xla_eigen_pool_and_keeps_other_flags():
    flags = bench_matmul.xla_flags(1, "--xla_dump_to=/tmp/x --xla_cpu_multi_thread_eigen=true")
    assert flags.split() == ["--xla_dump_to=/tmp/x", "--xla_cpu_multi_thread_eigen=false"]
    assert bench_matmul.xla_flags(2, "--xla_cpu_multi_thread_eigen=false") == ""


def figures(**rates: float) -> dict[str, bench_matmul.Figure]:
    return {lib: bench_matmul.Figure(lib, rate, rate, 1.0) for lib, rate in rates.items()}


def test_the_ratio_is_the_lesson_libraries_best_over_all_three_per_round():
    row = bench_matmul.Row(
        512,
        [
            figures(numpy=90, torch=80, jax=100),  # JAX faster: the lesson reaches 90 %
            figures(numpy=70, torch=95, jax=50),  # torch is the lesson's better one: 100 %
        ],
    )
    assert row.ratios() == [pytest.approx(0.9), pytest.approx(1.0)]
    assert row.median("jax") == 75 and row.median("numpy", "own_timer") == 80


def test_a_small_run_states_threads_blas_statistic_and_clock():
    command = [sys.executable, "benchmarks/bench_matmul.py", "--sizes", "64", "--rounds", "1"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "every library runs on 1 thread(s)" in out and "torch threads 1;" in out
    blas = next(line for line in out.splitlines() if "numpy BLAS: " in line)
    assert blas.endswith(": 1 threads") or blas.endswith("none found by threadpoolctl")
    assert "XLA_FLAGS='--xla_cpu_multi_thread_eigen=false'" in out
    assert "statistic: median" in out and "clock: CPU time" in out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("    ")}
    assert sorted(lines) == ["jax", "numpy", "torch"]
    assert all("own timer" in line and "busy cores" in line for line in lines.values())
    assert "n=64: lesson " in out and "lesson / best = " in out
