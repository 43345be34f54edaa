"""Lab 03's answers: right ones in several styles, wrong ones each with the feedback it must get.
Collected by tests/labs/test_labs.py."""

from __future__ import annotations

import math

import numpy as np
import torch

from tests.labs.cases_lab05 import timed_cases, timed_raises, timed_slips
from tests.labs.labcase import Case

LAB = "03_precision_memory"
_B = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int8": 1, "int4": 0.5}
_BITS = {"float64": 64, "float32": 32, "float16": 16, "bfloat16": 16, "int8": 8, "int4": 4}


def bytes_numpy(shape, dtype):
    return np.ceil(np.prod(shape, dtype=np.int64) * _BITS[dtype] / 8).astype(np.int64)


# --- careful_sum: right ways to keep the small terms, and the ways that lose them --------------


def sum_loop32(values):
    total = torch.zeros((), dtype=torch.float32)  # a wide accumulator in a plain loop
    for v in values:
        total = total + v.float()
        dtype = v.dtype
    return total.to(dtype).item()


def sum_kahan16(values):
    first = next(values)  # Kahan: the lost low bits carried along in 16 bits
    total, carry = first, torch.zeros((), dtype=first.dtype)
    for v in values:
        y = v - carry
        t = total + y
        carry = (t - total) - y
        total = t
    return total


def sum_pairwise16(values):
    values = torch.stack(list(values))
    while len(values) > 1:  # pairwise, all in 16 bits: neighbours first, then pairs of pairs
        if len(values) % 2:
            values = torch.cat([values, torch.zeros(1, dtype=values.dtype)])
        values = values[0::2] + values[1::2]
    return values[0]


def sum_numpy(values):
    values = list(values)
    total = np.sum([v.float().item() for v in values], dtype=np.float64)
    return torch.tensor(total).to(values[0].dtype)


def sum_running16(values):
    values = list(values)
    total = torch.zeros((), dtype=values[0].dtype)  # lesson 03's loop: the total stays 16-bit
    for v in values:
        total = total + v
    return total


def sum_sorted16(values):
    return sum_running16(iter(torch.sort(torch.stack(list(values))).values))


def sum_into_first(values):
    total = next(values).clone()  # the total starts as the first 16-bit value: it stays 16-bit
    for v in values:
        total += v.float()
    return total


def sum_rounded_each_step(values):
    total = torch.zeros((), dtype=torch.float32)
    for v in values:
        total = (total + v.float()).to(v.dtype).float()  # a wide total, rounded after each term
    return total.to(v.dtype)


def sum_first_lost(values):
    dtype = next(values).dtype  # reads (and drops) the first value
    total = torch.zeros((), dtype=torch.float32)
    for v in values:
        total += v.float()
    return total.to(dtype)


def _stack(values):
    """The values, once read, kept as one tensor (a plain iterator can be read only once)."""
    if not isinstance(values, torch.Tensor):
        values = torch.stack(list(values))
    return values


# --- unscale_and_clip -------------------------------------------------------------------------


def clip_with_scaler(grads, scale, max_norm):
    """The real thing: GradScaler.unscale_, clip_grad_norm_, and whether scaler.step skipped."""
    params = [torch.nn.Parameter(torch.zeros_like(g)) for g in grads]
    for p, g in zip(params, grads, strict=True):
        p.grad = g
    opt = torch.optim.SGD(params, lr=1.0)
    scaler = torch.amp.GradScaler("cpu", init_scale=scale)
    scaler.scale(torch.zeros(()))  # en: the scaler starts on its first scale()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(params, max_norm)
    clipped = [p.grad.clone() for p in params]
    scaler.step(opt)
    scaler.update()
    return clipped, scaler.get_scale() < scale  # a skipped step halves the scale


def clip_plain_tensors(grads, scale, max_norm):
    unscaled = [g / scale for g in grads]
    norm = torch.nn.utils.clip_grad_norm_(unscaled, max_norm)  # no .grad here: clips nothing
    return unscaled, not torch.isfinite(norm)


def clip_numpy(grads, scale, max_norm):
    arrays = [g.numpy().astype(np.float64) / scale for g in grads]
    norm = np.sqrt(sum((a**2).sum() for a in arrays))
    if not np.isfinite(norm):
        return arrays, np.True_
    return [a * min(1.0, max_norm / (norm + 1e-6)) for a in arrays], np.False_


def clip_scaled_norm(grads, scale, max_norm):
    """Clips the scaled gradients to max_norm × scale, then unscales: the same gradients."""
    norm = torch.sqrt(sum((g**2).sum() for g in grads))
    if not torch.isfinite(norm):
        return grads, True
    coef = min(1.0, float(max_norm * scale / (norm + 1e-6)))
    return [g * coef / scale for g in grads], False


def clip_no_sqrt(grads, scale, max_norm):
    unscaled = [g / scale for g in grads]
    return _global(unscaled, max_norm, sum((g**2).sum() for g in unscaled)), not _finite(grads)


def _global(grads, max_norm, norm=None):
    norm = torch.sqrt(sum((g**2).sum() for g in grads)) if norm is None else norm
    coef = torch.clamp(max_norm / (norm + 1e-6), max=1.0)
    return [g * coef for g in grads]


def _finite(grads):
    return not any((~torch.isfinite(g)).any() for g in grads)


def clip(order="unscale_first", skip="isfinite"):
    """unscale_and_clip with one slip: the order of unscaling and clipping, or the skip test."""

    def answer(grads, scale, max_norm):
        if order == "unscale_first":
            out = _global([g / scale for g in grads], max_norm)
        elif order == "clip_first":
            out = [g / scale for g in _global(grads, max_norm)]
        elif order == "no_unscale":
            out = _global(grads, max_norm)
        elif order == "twice":
            out = _global([g / scale / scale for g in grads], max_norm)
        elif order == "no_clip":
            out = [g / scale for g in grads]
        elif order == "per_tensor":
            out = [_global([g / scale], max_norm)[0] for g in grads]
        elif order == "sum_of_norms":
            unscaled = [g / scale for g in grads]
            out = _global(unscaled, max_norm, sum(torch.linalg.vector_norm(g) for g in unscaled))
        elif order == "normalize":  # always scaled to max_norm, even when below it
            unscaled = [g / scale for g in grads]
            norm = torch.sqrt(sum((g**2).sum() for g in unscaled))
            out = [g * max_norm / norm for g in unscaled]
        if skip == "isfinite":
            flag = not _finite(grads)
        elif skip == "never":
            flag = False
        elif skip == "isinf":
            flag = any(torch.isinf(g).any() for g in grads)
        elif skip == "fp16_range":
            flag = not _finite(grads) or any((g.abs() > 65504).any() for g in grads)
        return out, flag

    return answer


CASES = {
    (LAB, "tensor_bytes"): Case(
        right=[
            lambda s, d: math.ceil(math.prod(s) * _BITS[d] / 8),
            lambda s, d: (math.prod(s) * _BITS[d] + 7) // 8,
            bytes_numpy,
        ],
        wrong=[
            (lambda s, d: math.prod(s) * _B[d], "half_byte"),
            (lambda s, d: math.prod(s) * _BITS[d], "bits"),
            (
                lambda s, d: -(-math.prod(s) * (32 if d == "bfloat16" else _BITS[d]) // 8),
                "fp32_always",
            ),
            (lambda s, d: math.prod(s) * 4, "fp32_always"),
            (lambda s, d: math.prod(s) * 4, "fp32_always"),
            (lambda s, d: math.prod(s) * 2 + 1, "wrong"),
            (lambda s, d: math.prod(s) * _BITS[d] // 8, "half_byte"),  # floor
            (lambda s, d: round(math.prod(s) * _BITS[d] / 8), "half_byte"),  # 0.5 rounds to even
            (lambda s, d: math.prod(s) * max(1, _BITS[d] // 8), "int4_one_byte"),
            (lambda s, d: math.ceil(sum(s) * _BITS[d] / 8), "numel"),
        ],
        raising=lambda s, d: math.prod(s) * _B[d.name],
        raising_line="d.name",
    ),
    (LAB, "largest_exact"): Case(
        right=[
            lambda m: 2 ** (m + 1),
            lambda m: int(torch.tensor(2.0) ** (m + 1)),
            lambda m: 1 << (m + 1),
            lambda m: 2.0 ** (m + 1),
        ],
        wrong=[
            (lambda m: 2**m - 1, "no_implicit_bit_minus_one"),
            (lambda m: 2 ** (m + 1) + 1, "first_inexact"),
            (lambda m: 2 ** (m + 2), "sign_bit"),
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
            (lambda g, s: g.clone(), "no_fp16"),
            (lambda g, s: g * s / s, "no_fp16"),
            (lambda g, s: (g * s).bfloat16().float() / s, "bf16"),
            (lambda g, s: (g / s).half().float() * s, "divided_first"),
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
            (
                lambda n, a, m: (16 * n if m == "full" else 2 * n + 2 * n + 16 * a) / 2**30,
                "fp32_base",
            ),
            (lambda n, a, m: (16 * n if m == "full" else 6 * n + 16 * a) / 2**30, "base_gradients"),
            (lambda n, a, m: 16 * (n if m == "full" else a) / 2**30, "no_base"),
            (lambda n, a, m: 16 * n if m == "full" else 2 * n + 16 * a, "bytes"),
        ],
        raising=lambda n, a, m: 16 * n / 2**30 if m.value == "full" else 0,
        raising_line="m.value",
    ),
    (LAB, "autocast_dtype"): Case(
        right=[
            lambda d, cc: torch.bfloat16 if d == "cpu" or cc >= (8, 0) else torch.float16,
            lambda d, cc: torch.float16 if d == "cuda" and cc[0] < 8 else torch.bfloat16,
            lambda d, cc: (
                torch.bfloat16 if d == "cpu" or float(f"{cc[0]}.{cc[1]}") >= 8 else torch.float16
            ),
        ],
        wrong=[
            (lambda d, cc: torch.bfloat16, "bf16_on_t4"),
            (lambda d, cc: torch.float16, "fp16_on_cpu"),
            (lambda d, cc: torch.float16 if d == "cuda" else torch.bfloat16, "fp16_on_ampere"),
            (
                lambda d, cc: (
                    torch.float16
                    if d == "cuda" and f"{cc[0]}.{cc[1]}" < "8.0"
                    else (torch.bfloat16)
                ),
                "as_text",
            ),
            (lambda d, cc: "bfloat16" if d == "cpu" or cc >= (8, 0) else "float16", "not_a_dtype"),
            (
                lambda d, cc: torch.bfloat16 if d == "cpu" or cc > (8, 0) else torch.float16,
                "fp16_on_ampere",
            ),
            (
                lambda d, cc: (
                    torch.bfloat16 if d == "cpu" or str(cc) >= "(8, 0)" else torch.float16
                ),
                "as_text",
            ),
            (
                lambda d, cc: (
                    torch.float32
                    if d == "cpu"
                    else torch.bfloat16
                    if cc >= (8, 0)
                    else torch.float16
                ),
                "not_16bit",
            ),
        ],
        raising=lambda d, cc: torch.float16 if cc.major < 8 else torch.bfloat16,
        raising_line="cc.major",
    ),
    (LAB, "careful_sum"): Case(
        right=[
            lambda v: (lambda t: t.float().sum().to(t.dtype))(_stack(v)),
            sum_loop32,
            sum_kahan16,
            sum_pairwise16,
            sum_numpy,
        ],
        wrong=[
            (sum, "running_16bit"),  # a plain sum: the total stays 16-bit
            (sum_running16, "running_16bit"),
            (sum_sorted16, "sorted"),
            (lambda v: (lambda t: t.float().mean().to(t.dtype))(_stack(v)), "mean"),
            (lambda v: _stack(v).double().sum().item(), "not_rounded"),
            (lambda v: _stack(v).float().sum(), "not_rounded"),
            (lambda v: _stack(v).float().sum().half(), "wrong_format"),
            (lambda v: _stack(v).float().sum().half().item(), "wrong_format"),
            (lambda v: _stack(v).float().sum().bfloat16().item(), "wrong_format"),
            (lambda v: sum_loop32(v) * torch.ones(1), "not_a_number"),
            (lambda v: [sum_loop32(v)], "not_a_number"),
            (lambda v: 2 * sum_loop32(v), "wrong"),
            (sum_into_first, "running_16bit"),
            (sum_rounded_each_step, "running_16bit"),
            (sum_first_lost, "first_lost"),
        ],
        raising=lambda v: v.float().summ(),
        raising_line="v.float().summ()",
    ),
    (LAB, "unscale_and_clip"): Case(
        right=[clip(), clip_with_scaler, clip_numpy, clip_scaled_norm],
        wrong=[
            (clip("clip_first"), "clip_first"),
            (clip("no_unscale"), "not_unscaled"),
            (lambda g, s, m: (g, not _finite(g)), "not_unscaled"),
            (clip("twice"), "unscaled_twice"),
            (clip("no_clip"), "no_clip"),
            (clip_plain_tensors, "no_clip"),
            (clip("per_tensor"), "per_tensor"),
            (clip("sum_of_norms"), "sum_of_norms"),
            (clip(skip="never"), "no_skip"),
            (clip(skip="isinf"), "nan_not_skipped"),
            (clip(skip="fp16_range"), "skip_finite"),
            (clip("normalize"), "always_clipped"),
            (clip_no_sqrt, "no_sqrt"),
            (lambda g, s, m: clip()([x * s * s for x in g], s, m), "always_clipped"),
            (clip("no_clip", skip="never"), "no_clip"),
            (lambda g, s, m: clip()(g, s, m)[0], "type"),
            (lambda g, s, m: (clip()(g, s, m)[0], "no"), "type"),
            (lambda g, s, m: ((x for x in clip()(g, s, m)[0]), False), "type"),
        ],
        raising=lambda g, s, m: ([x / s.value for x in g], False),
        raising_line="s.value",
    ),
    (LAB, "faster_dtype"): timed_cases(min, max, timed_raises),
}

CASES[LAB, "faster_dtype"].wrong.extend(timed_slips(min))
