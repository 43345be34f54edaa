"""Lab 03's answers: right ones in several styles, wrong ones each with the feedback it must get.
Collected by tests/test_labs.py."""

from __future__ import annotations

import math

import numpy as np
import torch

from tests.labcase import Case

LAB = "03_precision_memory"
_B = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int8": 1, "int4": 0.5}
_BITS = {"float64": 64, "float32": 32, "float16": 16, "bfloat16": 16, "int8": 8, "int4": 4}


def bytes_numpy(shape, dtype):
    return np.int64(np.prod(shape, dtype=np.int64)) * _BITS[dtype] / 8


CASES = {
    (LAB, "tensor_bytes"): Case(
        right=[lambda s, d: math.prod(s) * _B[d], bytes_numpy],
        wrong=[
            (lambda s, d: math.prod(s) * _BITS[d], "bits"),
            (lambda s, d: math.prod(s) * 4, "fp32_always"),
            (lambda s, d: math.prod(s) * 2 + 1, "wrong"),
        ],
        raising=lambda s, d: math.prod(s) * _B[d.name],
        raising_line="d.name",
    ),
    (LAB, "largest_exact"): Case(
        right=[lambda m: 2 ** (m + 1), lambda m: int(torch.tensor(2.0) ** (m + 1))],
        wrong=[
            (lambda m: 2**m, "no_implicit_bit"),
            (lambda m: 2 ** (m + 1) - 1, "minus_one"),
            (lambda m: 2048 if m <= 10 else 2 ** (m + 1), "fp16_for_bf16"),
        ],
        raising=lambda m: 2 ** (m.bits + 1),
        raising_line="m.bits",
    ),
    (LAB, "loss_scaling"): Case(
        right=[
            lambda g, s: (g * s).half().float() / s,
            lambda g, s: (g * s).to(torch.float16).to(torch.float32) * (1 / s),
        ],
        wrong=[
            (lambda g, s: g.half().float(), "underflow"),
            (lambda g, s: (g * s).half().float(), "not_unscaled"),
            (lambda g, s: (g * s).half() / s, "not_fp32"),
            (lambda g, s: ((g * s).half() / s).tolist(), "not_a_tensor"),
            (lambda g, s: (g * s).half().float() / (2 * s), "wrong"),
        ],
        raising=lambda g, s: (g * s).half().float() / s.value,
        raising_line="s.value",
    ),
    (LAB, "finetune_gib"): Case(
        right=[
            lambda n, a, m: (16 * n if m == "full" else 2 * n + 16 * a) / 2**30,
            lambda n, a, m: (
                np.float64((4 + 4 + 8) * (n if m == "full" else a) + (0 if m == "full" else 2 * n))
                / 1024**3
            ),
        ],
        wrong=[
            (lambda n, a, m: (8 * n if m == "full" else 2 * n + 8 * a) / 2**30, "no_optimizer"),
            (lambda n, a, m: (12 * n if m == "full" else 2 * n + 12 * a) / 2**30, "no_gradients"),
            (lambda n, a, m: (16 * n if m == "full" else 2 * n + 16 * a) / 1e9, "gb_not_gib"),
            (lambda n, a, m: (16 * n if m == "full" else 4 * n + 16 * a) / 2**30, "fp32_base"),
            (lambda n, a, m: 16 * (n + (0 if m == "full" else a)) / 2**30, "base_trained"),
        ],
        raising=lambda n, a, m: 16 * n / 2**30 if m.value == "full" else 0,
        raising_line="m.value",
    ),
    (LAB, "autocast_dtype"): Case(
        right=[
            lambda d, cc: torch.bfloat16 if d == "cpu" or cc >= (8, 0) else torch.float16,
            lambda d, cc: torch.float16 if d == "cuda" and cc[0] < 8 else torch.bfloat16,
        ],
        wrong=[
            (lambda d, cc: torch.bfloat16, "bf16_on_t4"),
            (lambda d, cc: torch.float16, "fp16_on_cpu"),
            (lambda d, cc: torch.float16 if d == "cuda" else torch.bfloat16, "fp16_on_ampere"),
            (lambda d, cc: "bfloat16" if d == "cpu" or cc >= (8, 0) else "float16", "not_a_dtype"),
        ],
        raising=lambda d, cc: torch.float16 if cc.major < 8 else torch.bfloat16,
        raising_line="cc.major",
    ),
}
