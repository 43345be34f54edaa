"""Merging a LoRA adapter trained on a 4-bit base (QLoRA): into what, and what each way keeps.

A QLoRA adapter learns to correct `dequant(W4)`, the weights it was trained against, so the
merge that reproduces the trained model is `dequant(W4) + (α/r)·B A`, kept in 16 or 32 bits.
Lessons 06 and 07 and `tests/e2e/test_cpu_paths.py` call these helpers, so the lessons show what the
test checks on both of bitsandbytes' CPU paths:

    path = bnb_path(model4)                     # "cuda", "cpu-avx512bf16" or "cpu"
    weights = dequantized_weights(model4)       # before the first forward pass
    deltas = lora_deltas(peft_model)            # {"model.layers.0.self_attn.q_proj": (α/r)·B A}
    right = merged_copy(base, deltas, weights)  # dequant(W4) + BA
    kept = kept_share(before, after, delta)     # share of a delta that survived a re-quantization

bitsandbytes (0.50) repacks 4-bit weights on a layer's first forward pass on a CPU that has
AVX512-BF16 (`Linear4bit.support_avx512bf16_for_cpu`), into a layout only its fused kernel reads;
elsewhere (AVX2-only CPUs, CUDA) the stored weights keep their layout. What depends on that path
is reported as an observation in the lessons, never asserted (docs/facts.md §10).
"""

from __future__ import annotations

import copy
from typing import Any

import torch

PREFIX = "base_model.model."  # peft's wrapper in front of the base model's module names


def _linear4bit_layers(model: torch.nn.Module) -> dict[str, torch.nn.Module]:
    return {n: m for n, m in model.named_modules() if type(m).__name__ == "Linear4bit"}


def bnb_path(model: torch.nn.Module) -> str:
    """Which 4-bit path a bitsandbytes model takes: "cuda", "cpu-avx512bf16" (weights repacked on
    the first forward pass, a fused bf16 kernel) or "cpu" (dequantize, then a plain matmul)."""
    layers = list(_linear4bit_layers(model).values())
    if not layers:
        raise ValueError("no bitsandbytes Linear4bit layer in this model: load it in 4 bits first")
    layer = layers[0]
    if layer.weight.device.type == "cuda":
        return "cuda"
    return "cpu-avx512bf16" if getattr(layer, "support_avx512bf16_for_cpu", False) else "cpu"


def repacked(model: torch.nn.Module) -> int:
    """How many 4-bit layers bitsandbytes has repacked for its AVX512-BF16 kernel so far."""
    return sum(
        bool(getattr(m.weight.quant_state, "packing_format_for_cpu", False))
        for m in _linear4bit_layers(model).values()
    )


def dequantized_weights(
    model4: torch.nn.Module, dtype: torch.dtype = torch.float32
) -> dict[str, torch.Tensor]:
    """dequant(W4) of every 4-bit layer, by module name. Call it before the first forward pass:
    a repacked layer (AVX512-BF16 CPUs) no longer holds weights that `dequantize_4bit` reads."""
    import bitsandbytes.functional as bnbf

    if repacked(model4):
        raise RuntimeError(
            "bitsandbytes has already repacked these 4-bit weights for its CPU kernel (first "
            "forward pass): dequantize them right after loading, before running the model"
        )
    return {
        name: bnbf.dequantize_4bit(m.weight.data, m.weight.quant_state).to(dtype)
        for name, m in _linear4bit_layers(model4).items()
    }


def lora_deltas(peft_model: Any, adapter: str = "default") -> dict[str, torch.Tensor]:
    """(α/r)·B A of every LoRA layer, by the base model's module name, in fp32."""
    from peft.tuners.lora import LoraLayer

    return {
        name.removeprefix(PREFIX): module.get_delta_weight(adapter).detach().float()
        for name, module in peft_model.named_modules()
        if isinstance(module, LoraLayer) and hasattr(module, "lora_A")
    }


def merged_copy(
    base: torch.nn.Module,
    deltas: dict[str, torch.Tensor],
    weights: dict[str, torch.Tensor] | None = None,
    dtype: torch.dtype | None = None,
) -> torch.nn.Module:
    """A copy of the unquantized `base` with `weights` (e.g. dequant(W4)) put in and `deltas`
    added: `W + BA` without weights, `dequant(W4) + BA` with them. `base` is left unchanged."""
    target = copy.deepcopy(base)
    if dtype is not None:
        target = target.to(dtype)
    with torch.no_grad():
        for name, module in target.named_modules():
            if weights is not None and name in weights:
                module.weight.copy_(weights[name])
            if name in deltas:
                module.weight += deltas[name].to(module.weight.dtype)
    return target.eval()


def kept_share(before: torch.Tensor, after: torch.Tensor, delta: torch.Tensor) -> float:
    """Which share of `delta` a merge kept: the projection of (after − before) on delta, divided
    by |delta|² (1 = all of it, 0 = none, as if nothing had been added)."""
    change = (after.detach().float() - before.detach().float()).flatten()
    d = delta.detach().float().flatten()
    return float(change @ d / (d @ d).clamp(min=1e-30))


def random_adapter(base: torch.nn.Module, scale: float = 0.02, seed: int = 1, rank: int = 8) -> Any:
    """A LoRA adapter (r = `rank`, α = 2r, on q and v) with B drawn at `scale` like a trained one,
    or B = 0 (how LoRA starts) with `scale=0`. Wraps `base` in place, as `get_peft_model` does."""
    from utils.models.loading import peft_ready

    peft_ready()  # peft next to Colab's torchao refuses every LoRA layer until told
    import peft

    config = peft.LoraConfig(r=rank, lora_alpha=2 * rank, target_modules=["q_proj", "v_proj"])
    lora = peft.get_peft_model(base, config)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in lora.named_parameters():
            if "lora_B" in name:
                p.copy_(scale * torch.randn(p.shape, generator=generator))
    return lora.eval()


def kept_share_4bit(
    merged4: torch.nn.Module, before: dict[str, torch.Tensor], deltas: dict[str, torch.Tensor]
) -> float:
    """The share of the adapter that a merge into 4-bit layers kept, over all merged layers:
    dequantize the merged weights and project their change from `before` (dequant(W4)) on the
    deltas. Call it before `merged4` runs (see `dequantized_weights`)."""
    after = dequantized_weights(merged4)
    names = [n for n in deltas if n in after]
    if not names:
        raise ValueError("none of the adapter's layers is a 4-bit layer of this model")
    return kept_share(
        torch.cat([before[n].flatten() for n in names]),
        torch.cat([after[n].flatten() for n in names]),
        torch.cat([deltas[n].flatten() for n in names]),
    )
