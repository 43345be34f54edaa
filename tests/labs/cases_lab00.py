"""Lab 00's answers: right ones in several styles, wrong ones each with the feedback it must get.
Collected by tests/labs/test_labs.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tests.labs.cases_lab05 import timed_cases, timed_raises
from tests.labs.labcase import Case

LAB = "00_warmup"


# Lab 00 · q1. Which feedback a wrong device answer gets depends on the machine the test runs on.
if torch.cuda.is_available():
    MACHINE = "cuda"
elif torch.backends.mps.is_available():
    MACHINE = "mps"
else:
    MACHINE = "cpu"


def on(**keys: str) -> str:
    return keys[MACHINE]


def always(value):
    return lambda: value


def glossary_line():  # the seed's classic line: misses a Mac's GPU
    return "cuda" if torch.cuda.is_available() else "cpu"


def lesson_00_pick_device():  # lesson 00's version: torch.accelerator first
    if hasattr(torch, "accelerator") and torch.accelerator.is_available():
        return torch.accelerator.current_accelerator()
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def with_index():
    return (
        "cuda:0"
        if torch.cuda.is_available()
        else "mps"
        if torch.backends.mps.is_available()
        else "cpu"
    )


def mps_first():  # no machine has both: the order of the two questions does not matter
    if torch.backends.mps.is_available():
        return "mps"
    if torch.cuda.is_available():
        return "cuda"
    return "cpu"


def accelerator_or_cpu():
    return torch.accelerator.current_accelerator() or torch.device("cpu")


def second_gpu():  # GPUs counted from 1: there is no "cuda:1" on a machine with one
    if torch.cuda.is_available():
        return "cuda:1"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


# set once, as in an earlier cell: the function returns it whatever machine it runs on
DEVICE = (
    "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
)


def decided_once():
    return DEVICE


def more_than_one_gpu():  # an off-by-one: device_count() > 1 misses a single GPU
    if torch.cuda.device_count() > 1:
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def mps_built():  # is_built(): this torch was built with MPS, not that this machine has it
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_built():
        return "mps"
    return "cpu"


def device_raising():
    return {"cuda": "cuda"}["gpu"]


# Lab 00 · q3 and q4 get (shape, dtype) and (m, k, n, dtype).
def elements(shape):
    return math.prod(shape)


def moved(m, k, n):
    return m * k + k * n + m * n


def intensity(m, k, n, itemsize, extra=0):
    return 2 * m * k * n / ((moved(m, k, n) + extra) * itemsize)


# A lookup table of bytes per element that forgot bfloat16 (and falls back to 4).
BYTES_NO_BF16 = {torch.float32: 4, torch.float16: 2, torch.int8: 1}


def int32_product(*factors):  # np.prod(..., dtype=np.int32): wraps around above 2**31
    with np.errstate(over="ignore"):
        return int(np.prod(np.array(factors, dtype=np.int32), dtype=np.int32))


def jax_float32(value):
    jnp = pytest.importorskip("jax.numpy")
    return jnp.float32(value)


CASES: dict[tuple[str, str], Case] = {
    (LAB, "device"): Case(
        right=[
            lesson_00_pick_device,
            with_index,
            lambda: torch.device(with_index()),
            mps_first,
            accelerator_or_cpu,
        ],
        wrong=[
            (always("cuda"), on(cpu="no_cuda", mps="no_cuda", cuda="no_fallback")),
            (
                always("cpu"),
                on(cpu="ignores_cuda", mps="missed_accelerator", cuda="missed_accelerator"),
            ),
            (glossary_line, on(cpu="ignores_mps", mps="missed_accelerator", cuda="ignores_mps")),
            (always("mps"), on(cpu="no_mps", mps="no_fallback", cuda="no_mps")),
            (always("gpu"), "unknown_device"),
            (always("CPU"), "unknown_device"),
            # torch.accelerator without the fallback: None on a machine without an accelerator
            (lambda: torch.accelerator.current_accelerator(), "no_return"),
            (always(0), "not_a_device"),
            (second_gpu, "no_such_device"),
            (decided_once, "decided_once"),
            (
                more_than_one_gpu,
                on(
                    cpu="needs_two",
                    mps="needs_two",
                    cuda="needs_two" if torch.cuda.device_count() > 1 else "missed_accelerator",
                ),
            ),
            (mps_built, on(cpu="ignores_mps", mps="no_fallback", cuda="ignores_mps")),
            (lambda: ("cuda" if torch.cuda.is_available() else "cpu",), "not_a_device"),
        ],
        raising=device_raising,
        raising_line='return {"cuda": "cuda"}["gpu"]',
    ),
    (LAB, "flops"): Case(
        right=[
            lambda m, k, n: 2 * m * k * n,
            lambda m, k, n: float(2 * m * k * n),
            lambda m, k, n: np.int64(2) * m * k * n,
            lambda m, k, n: torch.tensor(2 * m * k * n),
            lambda m, k, n: jax_float32(2 * m * k * n),
        ],
        wrong=[
            (lambda m, k, n: m * k * n, "mkn"),
            (lambda m, k, n: m * n * (2 * k - 1), "exact_count"),
            (lambda m, k, n: m * n, "outputs_only"),
            (lambda m, k, n: 2 * n**3, "square"),
            (lambda m, k, n: m + k + n, "wrong"),
            # a 1-element tuple, list or array is not one number
            (lambda m, k, n: (2 * m * k * n,), "trailing_comma"),
            (lambda m, k, n: [2 * m * k * n], "not_a_number"),
            (lambda m, k, n: np.array([2 * m * k * n]), "not_a_number"),
            (lambda m, k, n: torch.tensor([2 * m * k * n]), "not_a_number"),
            (lambda m, k, n: None, "no_return"),
            (lambda m, k, n: 2 * m * k * n / 1e9, "gflop"),
            (lambda m, k, n: k * n * (2 * m - 1), "inner_size"),
            (lambda m, k, n: int32_product(2, m, k, n), "int32_overflow"),
            (lambda m, k, n: 2 * m * k * n / 1e12, "tflop"),  # the data sheets' unit
            (lambda m, k, n: 2 * m * k * k, "repeated_size"),  # B read as k×k
            (lambda m, k, n: 2 * m * n * n, "repeated_size"),
            (lambda m, k, n: f"{2 * m * k * n:,}", "not_a_number"),  # formatted for printing
        ],
        raising=lambda m, k, n: 2 * m * k * n / (m - m),
        raising_line="raising=lambda m, k, n: 2 * m * k * n / (m - m)",
    ),
    (LAB, "memory"): Case(
        right=[
            lambda shape, dtype: (  # bits per element from finfo/iinfo, ÷ 8
                elements(shape)
                * (torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)).bits
                / 8
                / 2**30
            ),
            lambda shape, dtype: elements(shape) * dtype.itemsize / 2**30,
            lambda shape, dtype: np.prod(shape, dtype=np.float64) * dtype.itemsize / 1024**3,
            lambda shape, dtype: (
                torch.tensor([], dtype=dtype).element_size() * elements(shape) / 2**30
            ),
            lambda shape, dtype: torch.tensor(elements(shape) * dtype.itemsize / 2**30),
        ],
        wrong=[
            (lambda shape, dtype: elements(shape) * dtype.itemsize / 1e9, "gb_not_gib"),
            (lambda shape, dtype: elements(shape) * dtype.itemsize * 8 / 2**30, "bits"),
            (lambda shape, dtype: elements(shape) * 4 / 2**30, "ignores_dtype"),
            (lambda shape, dtype: sum(shape) * dtype.itemsize / 2**30, "sum_not_product"),
            (lambda shape, dtype: round(elements(shape) * dtype.itemsize / 2**30, 2), "rounded"),
            (lambda shape, dtype: elements(shape) * dtype.itemsize / 2**20, "mib"),
            (lambda shape, dtype: elements(shape) * dtype.itemsize / 2**10, "kib"),
            (lambda shape, dtype: elements(shape) * dtype.itemsize, "bytes"),
            (lambda shape, dtype: elements(shape) * dtype.itemsize * 8 / 1e9, "bits"),
            (lambda shape, dtype: elements(shape) * 8 / 2**30, "ignores_dtype"),
            # every seed asks shapes of three and four dimensions
            (lambda shape, dtype: math.prod(shape[:2]) * dtype.itemsize / 2**30, "some_dims"),
            (lambda shape, dtype: math.prod(shape[-2:]) * dtype.itemsize / 2**30, "some_dims"),
            # every seed asks a tiny tensor, where rounding to 6 or 7 digits shows
            (lambda shape, dtype: round(elements(shape) * dtype.itemsize / 2**30, 6), "rounded"),
            (lambda shape, dtype: round(elements(shape) * dtype.itemsize / 2**30, 7), "rounded"),
            (lambda shape, dtype: elements(shape) * dtype.itemsize // 2**30, "integer_division"),
            (
                lambda shape, dtype: elements(shape) * BYTES_NO_BF16.get(dtype, 4) / 2**30,
                "wrong_itemsize",
            ),
            # a 1-element tuple or array is not one number
            (lambda shape, dtype: (elements(shape) * dtype.itemsize / 2**30,), "trailing_comma"),
            (
                lambda shape, dtype: np.array([elements(shape) * dtype.itemsize / 2**30]),
                "not_a_number",
            ),
            (lambda shape, dtype: None, "no_return"),
        ],
        # torch.finfo knows only float dtypes: fails for int8, which every check tries.
        raising=lambda shape, dtype: elements(shape) * torch.finfo(dtype).bits / 8 / 2**30,
        raising_line="torch.finfo(dtype).bits",
    ),
    (LAB, "intensity"): Case(
        right=[
            lambda m, k, n, dtype: 2 * m * k * n / (moved(m, k, n) * dtype.itemsize),
            lambda m, k, n, dtype: (
                np.float32(2 * m * k * n) / np.float32(moved(m, k, n) * dtype.itemsize)
            ),
            lambda m, k, n, dtype: (
                torch.tensor(2.0 * m * k * n) / (moved(m, k, n) * dtype.itemsize)
            ),
        ],
        wrong=[
            (  # every multiply-add counted as moving its own bytes
                lambda m, k, n, dtype: 2 * m * k * n / (m * k * n * dtype.itemsize),
                "wrong",
            ),
            (
                lambda m, k, n, dtype: 2 * m * k * n / ((m * k + k * n) * dtype.itemsize),
                "no_output",
            ),
            (
                lambda m, k, n, dtype: m * k * n / (moved(m, k, n) * dtype.itemsize),
                "flops_convention",
            ),
            (lambda m, k, n, dtype: moved(m, k, n) * dtype.itemsize / (2 * m * k * n), "inverted"),
            (lambda m, k, n, dtype: 2 * m * k * n / (moved(m, k, n) * 4), "ignores_dtype"),
            (lambda m, k, n, dtype: 2 * m * k * n / (moved(m, k, n) * dtype.itemsize * 8), "bits"),
            (lambda m, k, n, dtype: 2 * n / (3 * dtype.itemsize), "square"),
            (lambda m, k, n, dtype: intensity(m, k, n, dtype.itemsize, extra=m * n), "c_twice"),
            (
                lambda m, k, n, dtype: 2 * m * k * n / ((m * k + 2 * k * n) * dtype.itemsize),
                "mixed_sizes",
            ),
            (
                lambda m, k, n, dtype: 2 * m * k * n // (moved(m, k, n) * dtype.itemsize),
                "integer_division",
            ),
            (
                lambda m, k, n, dtype: intensity(m, k, n, BYTES_NO_BF16.get(dtype, 4)),
                "wrong_itemsize",
            ),
            (lambda m, k, n, dtype: intensity(m, k, n, 8), "ignores_dtype"),
            # every seed asks a size of 1, where rounding to 3 digits shows
            (lambda m, k, n, dtype: round(intensity(m, k, n, dtype.itemsize), 3), "rounded"),
            # a 1-element tuple or array is not one number
            (lambda m, k, n, dtype: (intensity(m, k, n, dtype.itemsize),), "trailing_comma"),
            (lambda m, k, n, dtype: np.array([intensity(m, k, n, dtype.itemsize)]), "not_a_number"),
            (lambda m, k, n, dtype: None, "no_return"),
        ],
        # A tensor has .element_size(), a dtype has not.
        raising=lambda m, k, n, dtype: 2 * m * k * n / (moved(m, k, n) * dtype.element_size()),
        raising_line="dtype.element_size()",
    ),
    # a measurement on this device: the same answers as lab 05's phases, with float32/float64
    (LAB, "time_matmuls"): timed_cases(max, min, timed_raises),
}
