"""Does my context fit?  The memory of serving a model: weights, KV cache, activations and the
framework's overhead, computed offline (lesson 10), and the measured memory of a real prefill.

    kv_bytes_per_token(30, 3, 64, 2)              # SmolLM2-135M in bf16: 23,040 bytes
    kv_cache_bytes(model.config, tokens=8192, batch=4)
    report = serving_fit("Llama-3-8B", weights="bfloat16", batch=1, context=8192, device="T4")
    print(report); report.parts["kv_cache"], report.total, report.fits

The KV cache keeps a key and a value vector per layer, per KV head and per token: 2 · layers ·
KV heads · head dim numbers per token.  Grouped-query attention shares one KV head among several
query heads, so the cache shrinks by heads ÷ KV heads.  `measure_prefill` runs the packaged
SmolLM2-135M in a clean child process and returns what its cache holds and the peak of the pass
(utils.memory.peakmem's method: resident memory on the CPU, torch.cuda on a GPU).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from utils.i18n import text
from utils.memory.fit import (
    BYTES,
    CUDA_CONTEXT,
    DEVICE_MEMORY,
    NF4_BYTES,
    Shape,
    _capacity,
    fit_verdict,
)
from utils.units import format_bytes

# Bytes per number of the weights: the fit's dtypes plus 4-bit (NF4 with its block constants).
WEIGHT_BYTES = {**BYTES, "int4": NF4_BYTES, "nf4": NF4_BYTES}

# Sizes from each model's config.json on the Hugging Face hub (docs/facts.md, "Serving").
KNOWN: dict[str, dict[str, Any]] = {
    "SmolLM2-135M": dict(
        n_params=134_515_008,
        layers=30,
        hidden=576,
        intermediate=1536,
        heads=9,
        kv_heads=3,
        vocab=49152,
        tied=True,
    ),
    "SmolLM2-1.7B": dict(
        n_params=1_711_376_384,
        layers=24,
        hidden=2048,
        intermediate=8192,
        heads=32,
        kv_heads=32,
        vocab=49152,
        tied=True,
    ),
    "Llama-2-7B": dict(
        n_params=6_738_415_616,
        layers=32,
        hidden=4096,
        intermediate=11008,
        heads=32,
        kv_heads=32,
        vocab=32000,
    ),
    "Mistral-7B": dict(
        n_params=7_241_732_096,
        layers=32,
        hidden=4096,
        intermediate=14336,
        heads=32,
        kv_heads=8,
        vocab=32000,
    ),
    "Llama-3-8B": dict(
        n_params=8_030_261_248,
        layers=32,
        hidden=4096,
        intermediate=14336,
        heads=32,
        kv_heads=8,
        vocab=128256,
    ),
    "Llama-3-70B": dict(
        n_params=70_553_706_496,
        layers=80,
        hidden=8192,
        intermediate=28672,
        heads=64,
        kv_heads=8,
        vocab=128256,
    ),
}
DEVICES = {**DEVICE_MEMORY, "L4": 24 * 1024**3, "RTX 4090": 24 * 1024**3}
# The CUDA context plus what the allocator keeps in reserve: the 0.4 GiB context of
# utils.memory.fit and 10 % of the rest (a caching allocator's fragmentation).
FRAGMENTATION = 0.10


def kv_bytes_per_token(layers: int, kv_heads: int, head_dim: int, dtype_bytes: float) -> int:
    """Bytes the KV cache grows by per token: a key and a value per layer and KV head."""
    return int(2 * layers * kv_heads * head_dim * dtype_bytes)


def _kv_layout(config_or_shape: Any) -> tuple[int, int, int]:
    """(layers, KV heads, head dim) of a model, a Hugging Face config, a fit.Shape, a dict of
    config fields or a name in KNOWN."""
    source = config_or_shape
    if isinstance(source, str):
        source = KNOWN[source]
    if isinstance(source, dict):
        from types import SimpleNamespace

        source = SimpleNamespace(**source)
    source = getattr(source, "config", source)
    if isinstance(source, Shape):
        return source.layers, source.kv_heads, source.hidden // source.heads
    layers = getattr(source, "num_hidden_layers", None) or source.layers
    heads = getattr(source, "num_attention_heads", None) or source.heads
    kv = getattr(source, "num_key_value_heads", None) or getattr(source, "kv_heads", None) or heads
    hidden = getattr(source, "hidden_size", None) or source.hidden
    head_dim = getattr(source, "head_dim", None) or hidden // heads
    return int(layers), int(kv), int(head_dim)


def kv_cache_bytes(
    config_or_shape: Any, tokens: int, batch: int = 1, dtype_bytes: float = 2
) -> int:
    """Bytes of the KV cache for `batch` sequences of `tokens` tokens each."""
    layers, kv, head_dim = _kv_layout(config_or_shape)
    return int(batch * tokens * kv_bytes_per_token(layers, kv, head_dim, dtype_bytes))


def shape_for(model: Any) -> Shape:
    """A fit.Shape from a name in KNOWN, a Shape, a config or a model."""
    if isinstance(model, Shape):
        return model
    if isinstance(model, str):
        return Shape(**KNOWN[model])
    from utils.memory.fit import shape_of

    return shape_of(model)


@dataclass
class ServingFit:
    """The parts of serving in bytes (weights, kv_cache, activations, overhead), their total and
    the device memory they are held against."""

    parts: dict[str, float] = field(default_factory=dict)
    capacity: float | None = None
    device: str = ""

    @property
    def total(self) -> float:
        return sum(self.parts.values())

    @property
    def fits(self) -> bool | None:  # None: no device memory to hold it against
        return None if self.capacity is None else self.total <= self.capacity

    def __str__(self) -> str:
        lines = [
            f"{text(*PART_NAMES[part]):<24} {format_bytes(size):>11}"
            for part, size in self.parts.items()
        ]
        lines.append(f"{text('total', 'gesamt'):<24} {format_bytes(self.total):>11}")
        if self.capacity is not None:
            lines.append(fit_verdict(self.total, self.capacity, self.device))
        return "\n".join(lines)


PART_NAMES = {
    "weights": ("weights", "Gewichte"),
    "kv_cache": ("KV cache", "KV-Cache"),
    "activations": ("activations (prefill)", "Aktivierungen (Prefill)"),
    "overhead": ("framework overhead", "Overhead des Frameworks"),
}


def prefill_activation_bytes(shape: Shape, batch: int, tokens: int, dtype_bytes: float) -> float:
    """The largest transient of a forward pass over `tokens` new tokens per sequence: in one block
    the hidden state, q, k and v repeated for every query head (grouped-query attention in
    transformers' SDPA path) or the MLP's intermediates (gate, up and their product,
    `intermediate` wide), and the last position's logits in fp32 (generate keeps only those)."""
    per_token = 3 * shape.intermediate + 4 * shape.hidden
    return batch * (tokens * per_token * dtype_bytes + shape.vocab * 4.0)


def serving_fit(
    model: Any,
    weights: str = "bfloat16",
    batch: int = 1,
    context: int = 4096,
    kv_dtype: str | None = None,
    prefill: int | None = None,
    device: Any = "T4",
) -> ServingFit:
    """Memory by part to serve `model` (a name in KNOWN, a model, a config or a fit.Shape) to
    `batch` sequences of `context` tokens: weights in `weights` ("float32", "bfloat16", "int8",
    "fp8", "int4"/"nf4"), the KV cache in `kv_dtype` (default: the weights' 16- or 32-bit dtype,
    bf16 under 4/8-bit weights), the activations of a prefill of `prefill` tokens per sequence
    (default: the whole context at once) and, on a GPU, the overhead: the CUDA context and the
    allocator's reserve.  On "cpu" there is no device memory to compare with and no overhead."""
    if weights not in WEIGHT_BYTES:
        raise ValueError(
            text(
                "weights must be one of {known}, not {w!r}",
                "weights muss eins von {known} sein, nicht {w!r}",
                known=", ".join(WEIGHT_BYTES),
                w=weights,
            )
        )
    shape = shape_for(model)
    compute = WEIGHT_BYTES[weights] if WEIGHT_BYTES[weights] >= 2 else 2.0
    kv_bytes = BYTES[kv_dtype] if kv_dtype else compute
    if isinstance(device, str) and device in DEVICES and device not in DEVICE_MEMORY:
        capacity, name = float(DEVICES[device]), device
    else:
        capacity, name = _capacity(device)
    report = ServingFit(capacity=capacity, device=name)
    report.parts["weights"] = shape.n_params * WEIGHT_BYTES[weights]
    report.parts["kv_cache"] = float(kv_cache_bytes(shape, context, batch, kv_bytes))
    tokens = context if prefill is None else prefill
    report.parts["activations"] = prefill_activation_bytes(shape, batch, tokens, compute)
    if name != "cpu" and not name.startswith("TPU"):
        held = sum(report.parts.values())
        report.parts["overhead"] = CUDA_CONTEXT + FRAGMENTATION * held
    return report


def longest_context(model: Any, weights: str, batch: int, device: Any, **options: Any) -> int:
    """The longest context (a multiple of 256 tokens) whose serving fit still fits `device`."""
    low, high = 0, 1 << 22
    while high - low > 256:
        mid = (low + high) // 2 // 256 * 256
        if serving_fit(model, weights, batch, mid, device=device, **options).fits:
            low = mid
        else:
            high = mid
    return low


def cache_bytes(cache: Any) -> int:
    """Bytes a transformers cache holds in its tensors: the keys and values of every layer, and
    of a quantized layer the quantized states and the full-precision rest it keeps."""
    import torch

    total = 0
    for layer in cache.layers:
        held = [getattr(layer, "keys", None), getattr(layer, "values", None)]
        for name in ("_quantized_keys", "_quantized_values"):
            held.extend(getattr(layer, name, None) or ())
        total += sum(t.numel() * t.element_size() for t in held if isinstance(t, torch.Tensor))
    return total


def fp8_cache(model: Any) -> Any | None:
    """An empty KV cache that stores keys and values in fp8 (e4m3, one scale per tensor):
    transformers' own `QuantizedCache` backend, which needs no other package.  None where this
    transformers has no such backend."""
    try:
        from transformers.cache_utils import QuantizedCache

        return QuantizedCache("fp8", model.config)
    except (ImportError, ValueError, TypeError):
        return None


def cache_argument() -> str:
    """The keyword `generate` takes a cache object by: "cache" in newer transformers,
    "past_key_values" before (the first of the names it looks for)."""
    from transformers.generation import utils

    return getattr(utils, "ALL_CACHE_NAMES", ["past_key_values"])[0]


def _measure(where: str, runs: list, dtype: str, device: str) -> list[dict]:
    """In the child: load once, warm up, then per (batch, tokens) one prefill that keeps its cache:
    the bytes the cache holds afterwards and the peak of the pass, both over what was held
    before it."""
    import ctypes
    import gc

    import torch
    from transformers import AutoModelForCausalLM

    from utils.memory.peakmem import _rss, _status, exact_peaks, reset_peak

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(where, dtype=getattr(torch, dtype))
    model = model.to(device).eval()
    cuda = device == "cuda"

    def settle() -> int:
        gc.collect()
        if cuda:
            torch.cuda.synchronize()
            return torch.cuda.memory_allocated()
        if sys.platform.startswith("linux"):
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        return _rss()

    results = []
    with torch.inference_mode():
        model(torch.zeros(1, 8, dtype=torch.long, device=device), logits_to_keep=1)
        for batch, tokens in runs:
            ids = torch.randint(0, model.config.vocab_size, (batch, tokens), device=device)
            before = settle()
            if cuda:
                torch.cuda.reset_peak_memory_stats()
            elif exact_peaks():
                reset_peak()
            out = model(ids, use_cache=True, logits_to_keep=1)
            cache = out.cache if hasattr(out, "cache") else out.past_key_values
            del out
            if cuda:
                peak = torch.cuda.max_memory_allocated() - before
            else:
                peak = (_status("VmHWM") if exact_peaks() else _rss()) - before
            held = settle() - before
            results.append({"held": held, "peak": peak, "cache_tensors": cache_bytes(cache)})
            del cache, ids
    return results


def measure_prefill(
    runs: list[tuple[int, int]], dtype: str = "float32", device: str = "cpu"
) -> list[dict]:
    """For each (batch, tokens): one prefill of the packaged SmolLM2-135M (or the hub's, where
    reachable) in a clean child process.  Returns dicts: `held` (bytes still held with the cache
    kept), `peak` (the pass's peak over what was held before it) and `cache_tensors` (the bytes of
    the cache's own tensors)."""
    from utils.memory.peakmem import in_clean_process

    code = (
        "import json, sys; from utils.models.loading import smollm2_location; "
        "from utils.memory.serving import _measure; a = json.loads(sys.argv[1]); "
        "print(json.dumps(_measure(str(smollm2_location()[0]), *a)))"
    )
    return in_clean_process(code, [runs, dtype, device])
