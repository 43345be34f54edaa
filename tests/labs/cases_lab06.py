"""Lab 06's answers: right ones in several styles, wrong ones each with the feedback it must get.
Collected by tests/labs/test_labs.py."""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from tests.labs.cases_lab05 import timed_answer, timed_cases, timed_raises
from tests.labs.labcase import Case

LAB = "06_quantization"


# q1: absmax int8 per channel
def absmax_right(w):
    scale = w.abs().amax(dim=1, keepdim=True) / 127
    return torch.round(w / scale).clamp(-127, 127).to(torch.int8), scale


def absmax_right_numpy(w):
    a = w.numpy()
    scale = np.abs(a).max(axis=1, keepdims=True) / 127
    return torch.from_numpy(
        np.clip(np.round(a / scale), -127, 127).astype(np.int8)
    ), torch.from_numpy(scale)


def absmax_per_tensor(w):
    scale = w.abs().max() / 127
    return torch.round(w / scale).to(torch.int8), scale


def absmax_wrong_axis(w):
    scale = w.abs().amax(dim=0, keepdim=True) / 127
    return torch.round(w / scale).clamp(-127, 127).to(torch.int8), scale


def absmax_round_first(w):
    scale = w.abs().amax(dim=1, keepdim=True) / 127
    return torch.round(w) / scale, scale


def absmax_truncated(w):
    scale = w.abs().amax(dim=1, keepdim=True) / 127
    return (w / scale).to(torch.int8), scale


def absmax_float_q(w):
    scale = w.abs().amax(dim=1, keepdim=True) / 127
    return torch.round(w / scale).clamp(-127, 127), scale


def absmax_flat_scale(w):
    scale = w.abs().amax(dim=1) / 127
    return torch.round(w / scale[:, None]).clamp(-127, 127).to(torch.int8), scale


def absmax_raises(w):
    scale = w.abs().amax(dim=1, keepdim=True) / 127
    return torch.round(w / scale).to(torch.int8), scale.item()


# q2: zero-point
def zp_right(x, bits):
    levels = 2**bits - 1
    scale = (x.max() - x.min()) / levels
    zero = torch.round(-x.min() / scale)
    return torch.clamp(torch.round(x / scale) + zero, 0, levels), scale, zero


def zp_right_floats(x, bits):
    lo, hi = float(x.min()), float(x.max())
    scale = (hi - lo) / (2**bits - 1)
    zero = round(-lo / scale)
    q = torch.clamp(torch.round(x / scale) + zero, 0, 2**bits - 1).to(torch.uint8)
    return q, scale, zero


def zp_range_16(x, bits):
    scale = (x.max() - x.min()) / 2**bits
    zero = torch.round(-x.min() / scale)
    return torch.clamp(torch.round(x / scale) + zero, 0, 2**bits), scale, zero


def zp_forgot_zero(x, bits):
    levels = 2**bits - 1
    scale = (x.max() - x.min()) / levels
    return torch.clamp(torch.round(x / scale), 0, levels), scale, 0


def zp_symmetric(x, bits):
    scale = x.abs().max() / (2 ** (bits - 1) - 1)
    zero = 2 ** (bits - 1)
    return torch.clamp(torch.round(x / scale) + zero, 0, 2**bits - 1), scale, zero


def zp_fractional_zero(x, bits):
    levels = 2**bits - 1
    scale = (x.max() - x.min()) / levels
    zero = -x.min() / scale
    return torch.clamp(torch.round(x / scale + zero), 0, levels), scale, zero


def zp_raises(x, bits):
    return x.quantize(bits)


# q3: per block
def block_right(w, block, bits):  # the solution: zeros fill the last block
    qmax = 2 ** (bits - 1) - 1
    flat = w.flatten()
    b = torch.nn.functional.pad(flat, (0, -flat.numel() % block)).reshape(-1, block)
    s = b.abs().amax(dim=1, keepdim=True) / qmax
    q = torch.round(b / s).clamp(-qmax, qmax) * s
    return q.flatten()[: flat.numel()].reshape(w.shape)


def block_right_loop(w, block, bits):
    qmax = 2 ** (bits - 1) - 1
    flat = w.flatten().clone()
    for i in range(0, flat.numel(), block):
        chunk = flat[i : i + block]
        s = chunk.abs().max() / qmax
        flat[i : i + block] = torch.round(chunk / s) * s
    return flat.view_as(w)


def block_right_split(w, block, bits):  # torch.split leaves the last chunk shorter
    qmax = 2 ** (bits - 1) - 1
    parts = [
        torch.round(c / (c.abs().max() / qmax)) * (c.abs().max() / qmax)
        for c in w.view(-1).split(block)
    ]
    return torch.cat(parts).view(w.shape)


def block_assumes_divisible(w, block, bits):  # right whenever block divides w.numel()
    qmax = 2 ** (bits - 1) - 1
    b = w.reshape(-1, block)
    s = b.abs().amax(dim=1, keepdim=True) / qmax
    return (torch.round(b / s).clamp(-qmax, qmax) * s).reshape(w.shape)


def block_tail_left(w, block, bits):  # whole blocks quantized, the shorter rest copied
    qmax = 2 ** (bits - 1) - 1
    flat = w.flatten()
    whole = flat.numel() // block * block
    b = flat[:whole].reshape(-1, block)
    s = b.abs().amax(dim=1, keepdim=True) / qmax
    q = torch.round(b / s).clamp(-qmax, qmax) * s
    return torch.cat([q.flatten(), flat[whole:]]).reshape(w.shape)


def block_per_tensor(w, block, bits):
    qmax = 2 ** (bits - 1) - 1
    s = w.abs().max() / qmax
    return torch.round(w / s) * s


def block_per_row(w, block, bits):
    qmax = 2 ** (bits - 1) - 1
    s = w.abs().amax(dim=1, keepdim=True) / qmax
    return torch.round(w / s) * s


def block_raises(w, block, bits):
    return w.reshape(block, -1, 3)


# q4: NF4 levels
def nf4_right(offset=0.9677083):
    normal = torch.distributions.Normal(0.0, 1.0)
    pos = normal.icdf(torch.linspace(offset, 0.5, 9, dtype=torch.float64)[:-1])
    neg = -normal.icdf(torch.linspace(offset, 0.5, 8, dtype=torch.float64)[:-1])
    levels = torch.cat([neg, torch.zeros(1, dtype=torch.float64), pos]).sort().values
    return levels / levels.abs().max()


def nf4_right_scipy_style(offset=0.9677083):
    from statistics import NormalDist

    nd = NormalDist()
    pos = [nd.inv_cdf(float(p)) for p in np.linspace(offset, 0.5, 9)[:-1]]
    neg = [-nd.inv_cdf(float(p)) for p in np.linspace(offset, 0.5, 8)[:-1]]
    v = sorted(pos + neg + [0.0])
    m = max(abs(x) for x in v)
    return [x / m for x in v]


def nf4_even(offset=0.9677083):
    return torch.linspace(-1, 1, 16)


def nf4_no_zero(offset=0.9677083):
    normal = torch.distributions.Normal(0.0, 1.0)
    levels = normal.icdf(torch.linspace(1 - offset, offset, 16, dtype=torch.float64))
    return levels / levels.abs().max()


def nf4_raises(offset=0.9677083):
    return torch.distributions.Normal(0.0, 1.0).icdf(offset).sort()


# q5: bytes
def bytes_right(n, block, s):
    return math.ceil(n / 2) + math.ceil(n / block) * s


def bytes_right_bits(n, block, s):
    return (4 * n + 8 * s * -(-n // block) + 7) // 8


def bytes_scales_free(n, block, s):
    return math.ceil(n / 2)


def bytes_in_bits(n, block, s):
    return 8 * (math.ceil(n / 2) + math.ceil(n / block) * s)


def bytes_one_per_weight(n, block, s):
    return n + math.ceil(n / block) * s


def bytes_floor_blocks(n, block, s):
    return math.ceil(n / 2) + (n // block) * s


def bytes_raises(n, block, s):
    return n.bit_length() / block.size


# q6: choose the block size
def choose_right(w, candidates, budget):
    fitting = [b for b in candidates if 4 + 8 * w.itemsize / b <= budget]
    return min(fitting) if fitting else None


def choose_right_sorted_loop(w, candidates, budget):
    for b in sorted(candidates):
        if 4 * b + 8 * w.itemsize <= budget * b:  # the bits of one block
            return b
    return None


def choose_right_numpy(w, candidates, budget):
    blocks = np.array(candidates)
    bits = 4 + np.finfo(np.asarray(w).dtype).bits / blocks
    fitting = blocks[bits <= budget]
    return fitting.min() if fitting.size else None


def choose_right_torch(w, candidates, budget):
    blocks = torch.tensor(candidates)
    bits = 4 + torch.as_tensor(w).element_size() * 8 / blocks
    fitting = blocks[bits <= budget]
    return fitting.min() if fitting.numel() else None


def choose_bytes(w, candidates, budget):
    fitting = [b for b in candidates if 4 + w.itemsize / b <= budget]
    return min(fitting) if fitting else None


def choose_no_overhead(w, candidates, budget):
    fitting = [b for b in candidates if budget >= 4]  # the scales forgotten
    return min(fitting) if fitting else None


def choose_strict(w, candidates, budget):
    fitting = [b for b in candidates if 4 + 8 * w.itemsize / b < budget]
    return min(fitting) if fitting else None


def choose_largest(w, candidates, budget):
    fitting = [b for b in candidates if 4 + 8 * w.itemsize / b <= budget]
    return max(fitting) if fitting else None


def choose_assumes_sorted(w, candidates, budget):
    for b in candidates:
        if 4 + 8 * w.itemsize / b <= budget:
            return b
    return None


def choose_fp16_always(w, candidates, budget):
    fitting = [b for b in candidates if 4 + 16 / b <= budget]
    return min(fitting) if fitting else None


def choose_fp32_always(w, candidates, budget):
    fitting = [b for b in candidates if 4 + 32 / b <= budget]
    return min(fitting) if fitting else None


def choose_no_fit_largest(w, candidates, budget):
    fitting = [b for b in candidates if 4 + 8 * w.itemsize / b <= budget]
    return min(fitting) if fitting else max(candidates)


def choose_no_fit_raises(w, candidates, budget):
    return min(b for b in candidates if 4 + 8 * w.itemsize / b <= budget)


def choose_raises(w, candidates, budget):
    return candidates.sort(key=budget)


# q1: held-out slips
def absmax_like_the_lesson(w):  # lesson 06's absmax_quantize(w, bits=8, dim=1)
    qmax = 2 ** (8 - 1) - 1
    scale = w.abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / qmax
    return torch.clamp(torch.round(w / scale), -qmax, qmax).to(torch.int8), scale


def absmax_by_128(w):
    scale = w.abs().amax(dim=1, keepdim=True) / 128
    return torch.round(w / scale).clamp(-128, 127).to(torch.int8), scale


def absmax_no_abs(w):
    scale = w.amax(dim=1, keepdim=True) / 127
    return torch.round(w / scale).clamp(-127, 127).to(torch.int8), scale


def absmax_swapped(w):
    scale = w.abs().amax(dim=1, keepdim=True) / 127
    return scale, torch.round(w / scale).clamp(-127, 127).to(torch.int8)


def absmax_dequantized(w):
    scale = w.abs().amax(dim=1, keepdim=True) / 127
    return torch.round(w / scale).clamp(-127, 127) * scale, scale


# q2: held-out slips
def zp_zero_sign(x, bits):
    levels = 2**bits - 1
    scale = (x.max() - x.min()) / levels
    zero = torch.round(x.min() / scale)
    return torch.clamp(torch.round(x / scale) + zero, 0, levels), scale, zero


def zp_signed_int8(x, bits):
    q, scale, zero = zp_right(x, bits)
    return q.to(torch.int8), scale, zero


def zp_truncated_zero(x, bits):
    levels = 2**bits - 1
    scale = (x.max() - x.min()) / levels
    zero = int(-x.min() / scale)
    return torch.clamp(torch.round(x / scale) + zero, 0, levels), scale, zero


def zp_shifted_rounding(x, bits):  # rounds x − min, then subtracts a rounded zero-point
    levels = 2**bits - 1
    scale = (x.max() - x.min()) / levels
    zero = torch.round(-x.min() / scale)
    return torch.clamp(torch.round((x - x.min()) / scale), 0, levels), scale, zero


# q3: held-out slips
def block_like_the_lesson(w, block, bits):  # lesson 06's absmax per block, the tail padded
    qmax = 2 ** (bits - 1) - 1
    flat = w.flatten()
    padded = torch.cat([flat, flat.new_zeros(-flat.numel() % block)])
    amax = padded.reshape(-1, block).abs().amax(dim=1, keepdim=True)
    scale = amax.clamp(min=1e-12) / qmax
    q = torch.clamp(torch.round(padded.reshape(-1, block) / scale), -qmax, qmax)
    return (q * scale).flatten()[: flat.numel()].reshape(w.shape)


def block_qmax_unsigned(w, block, bits):
    qmax = 2**bits - 1
    return torch.cat(
        [
            torch.round(c / (c.abs().max() / qmax)) * (c.abs().max() / qmax)
            for c in w.flatten().split(block)
        ]
    ).reshape(w.shape)


def block_codes_only(w, block, bits):
    qmax = 2 ** (bits - 1) - 1
    return torch.cat(
        [torch.round(c / (c.abs().max() / qmax)) for c in w.flatten().split(block)]
    ).reshape(w.shape)


def block_flat(w, block, bits):
    return block_right(w, block, bits).flatten()


def block_by_columns(w, block, bits):  # blocks run down the columns
    return block_right(w.T.contiguous(), block, bits).T


# q4: held-out slips
def nf4_float32(offset=0.9677083):
    normal = torch.distributions.Normal(0.0, 1.0)
    pos = normal.icdf(torch.linspace(offset, 0.5, 9)[:-1])
    neg = -normal.icdf(torch.linspace(offset, 0.5, 8)[:-1])
    levels = torch.cat([neg, torch.zeros(1), pos]).sort().values
    return levels / levels.abs().max()


def nf4_not_normalized(offset=0.9677083):
    normal = torch.distributions.Normal(0.0, 1.0)
    pos = normal.icdf(torch.linspace(offset, 0.5, 9, dtype=torch.float64)[:-1])
    neg = -normal.icdf(torch.linspace(offset, 0.5, 8, dtype=torch.float64)[:-1])
    return torch.cat([neg, torch.zeros(1, dtype=torch.float64), pos]).sort().values


def nf4_unsorted(offset=0.9677083):
    normal = torch.distributions.Normal(0.0, 1.0)
    pos = normal.icdf(torch.linspace(offset, 0.5, 9, dtype=torch.float64)[:-1])
    neg = -normal.icdf(torch.linspace(offset, 0.5, 8, dtype=torch.float64)[:-1])
    levels = torch.cat([pos, torch.zeros(1, dtype=torch.float64), neg])
    return levels / levels.abs().max()


def nf4_mirrored(offset=0.9677083):  # 8 negative levels and 7 positive ones
    normal = torch.distributions.Normal(0.0, 1.0)
    pos = normal.icdf(torch.linspace(offset, 0.5, 8, dtype=torch.float64)[:-1])
    neg = -normal.icdf(torch.linspace(offset, 0.5, 9, dtype=torch.float64)[:-1])
    levels = torch.cat([neg, torch.zeros(1, dtype=torch.float64), pos]).sort().values
    return levels / levels.abs().max()


def nf4_half_kept(offset=0.9677083):  # the quantile 0.5 kept: two zeros, 17 values
    normal = torch.distributions.Normal(0.0, 1.0)
    pos = normal.icdf(torch.linspace(offset, 0.5, 9, dtype=torch.float64))
    neg = -normal.icdf(torch.linspace(offset, 0.5, 8, dtype=torch.float64)[:-1])
    levels = torch.cat([neg, torch.zeros(1, dtype=torch.float64), pos]).sort().values
    return levels / levels.abs().max()


# q5: held-out slips
def bytes_half_byte(n, block, s):
    return n / 2 + math.ceil(n / block) * s


def bytes_fractional_blocks(n, block, s):
    return math.ceil(n / 2) + n / block * s


def bytes_extra_block(n, block, s):
    return math.ceil(n / 2) + (n // block + 1) * s


def bytes_right_divmod(n, block, s):
    blocks, rest = divmod(n, block)
    return (n + 1) // 2 + (blocks + (rest > 0)) * s


# q6: held-out slips
def choose_nbytes(w, candidates, budget):  # the whole tensor's bytes as the scale
    fitting = [b for b in candidates if 4 + 8 * w.nbytes / b <= budget]
    return min(fitting) if fitting else None


def choose_bytes_per_weight(w, candidates, budget):  # bytes per weight against a budget in bits
    fitting = [b for b in candidates if 0.5 + w.itemsize / b <= budget]
    return min(fitting) if fitting else None


def choose_returns_bits(w, candidates, budget):
    fitting = [4 + 8 * w.itemsize / b for b in candidates if 4 + 8 * w.itemsize / b <= budget]
    return max(fitting) if fitting else None


def nf4_column(offset=0.9677083):
    return nf4_right(offset)[:, None]


# q7: held-out slips
def int8_time_one_function(runs):  # the float32 layer timed under both names
    ms = timed_answer(min)({"float32": runs["float32"]})[0]
    ms = {"float32": ms["float32"], "int8": ms["float32"]}
    return ms, "float32"


def int8_time_dtype_name(runs):  # a name of its own, not one of the keys
    ms, verdict = timed_answer(min)(runs)
    return ms, {"float32": "fp32", "int8": "int8 weights"}[verdict]


def int8_time_unsynced_sum(runs):  # the first, cold call counted with the others
    ms = {}
    for name, run in runs.items():
        start = time.perf_counter()
        for _ in range(5):
            run()
        ms[name] = (time.perf_counter() - start) * 1e3
    return ms, min(ms, key=ms.get)


CASES = {
    (LAB, "absmax_channel"): Case(
        right=[absmax_right, absmax_right_numpy, absmax_like_the_lesson],
        wrong=[
            (absmax_per_tensor, "per_tensor"),
            (absmax_wrong_axis, "wrong_axis"),
            (absmax_round_first, "round_first"),
            (absmax_truncated, "rounding"),
            (absmax_float_q, "q_dtype"),
            (absmax_flat_scale, "scale_shape"),
            (absmax_by_128, "scale"),
            (absmax_no_abs, "scale"),
            (absmax_swapped, "order"),
            (absmax_dequantized, "dequantized"),
        ],
        raising=absmax_raises,
        raising_line="return torch.round(w / scale).to(torch.int8), scale.item()",
    ),
    (LAB, "zeropoint"): Case(
        right=[zp_right, zp_right_floats],
        wrong=[
            (zp_range_16, "range_16"),
            (zp_forgot_zero, "no_zero_point"),
            (zp_symmetric, "symmetric"),
            (zp_fractional_zero, "zero_fraction"),
            (zp_zero_sign, "zero_sign"),
            (zp_signed_int8, "signed"),
            (zp_truncated_zero, "zero_truncated"),
            (zp_shifted_rounding, "shifted_rounding"),
        ],
        raising=zp_raises,
        raising_line="return x.quantize(bits)",
    ),
    (LAB, "per_block"): Case(
        right=[block_right, block_right_loop, block_right_split, block_like_the_lesson],
        wrong=[
            (block_per_tensor, "per_tensor"),
            (block_per_row, "per_row"),
            (block_assumes_divisible, "not_divisible"),
            (block_tail_left, "tail_unquantized"),
            (block_qmax_unsigned, "qmax"),
            (block_codes_only, "levels_only"),
            (block_flat, "shape"),
            (block_by_columns, "wrong"),
        ],
        raising=block_raises,
        raising_line="return w.reshape(block, -1, 3)",
    ),
    (LAB, "nf4_levels"): Case(
        right=[nf4_right, nf4_right_scipy_style, nf4_float32],
        wrong=[
            (nf4_even, "evenly_spaced"),
            (nf4_no_zero, "no_zero"),
            (nf4_not_normalized, "not_normalized"),
            (nf4_unsorted, "unsorted"),
            (nf4_mirrored, "mirrored"),
            (nf4_half_kept, "wrong"),
            (nf4_column, "shape"),
        ],
        raising=nf4_raises,
        raising_line="return torch.distributions.Normal(0.0, 1.0).icdf(offset).sort()",
    ),
    (LAB, "int4_bytes"): Case(
        right=[bytes_right, bytes_right_bits, bytes_right_divmod],
        wrong=[
            (bytes_scales_free, "scales_free"),
            (bytes_in_bits, "bits"),
            (bytes_one_per_weight, "byte_per_weight"),
            (bytes_floor_blocks, "partial_block"),
            (bytes_half_byte, "half_byte"),
            (bytes_fractional_blocks, "partial_block"),
            (bytes_extra_block, "extra_block"),
        ],
        raising=bytes_raises,
        raising_line="return n.bit_length() / block.size",
    ),
    (LAB, "choose_block"): Case(
        right=[choose_right, choose_right_sorted_loop, choose_right_numpy, choose_right_torch],
        wrong=[
            (choose_bytes, "bytes"),
            (choose_no_overhead, "no_overhead"),
            (choose_strict, "strict"),
            (choose_largest, "largest"),
            (choose_assumes_sorted, "sorted"),
            (choose_fp16_always, "scale_dtype"),
            (choose_fp32_always, "scale_dtype"),
            (choose_no_fit_largest, "no_fit"),
            (choose_no_fit_raises, "no_fit"),
            (choose_nbytes, "wrong"),
            (choose_bytes_per_weight, "no_overhead"),
            (choose_returns_bits, "not_a_block"),
        ],
        raising=choose_raises,
        raising_line="return candidates.sort(key=budget)",
    ),
    (LAB, "int8_time"): timed_cases(min, max, timed_raises),
}
CASES[LAB, "int8_time"].wrong += [
    (int8_time_one_function, "too_few"),
    (int8_time_dtype_name, "verdict"),
    (int8_time_unsynced_sum, "total"),
]
