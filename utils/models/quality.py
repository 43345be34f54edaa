"""How good is a compressed model? The measures several lessons share (quantization, LoRA).

    from utils.models import quality
    words = quality.course_text()                       # the short text shipped in data/
    ids = tokenizer(words, return_tensors="pt").input_ids
    logits = quality.next_token_logits(model, tokenizer, ids)   # tokens × vocabulary
    quality.perplexity_from_logits(logits, ids)         # exp(mean next-token loss); lower is better
    quality.top1_agreement(logits, reference_logits)    # share of positions with the same argmax
    quality.embedding_cosine(a, b)                      # per-row cosine of two embedding batches
    quality.model_bytes(model)                          # bytes of weights, scales included
    quality.quiet_libraries()                           # bitsandbytes/torchao log noise off

`model_bytes` counts what quantized models really store: bitsandbytes keeps a 4-bit layer's
block scales in a `quant_state` beside the packed weight, and torchao's weights are tensor
subclasses whose inner tensors (int data, scales, zero points) hold the bytes.  `numel()` of such
a tensor counts logical elements, so `numel() * element_size()` would be wrong for both.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import torch

from utils.course import ROOT
from utils.models.loading import IMPORT_NOISE

DATA = ROOT / "data"

# Loggers whose warnings repeat on CPU (once per matmul in bitsandbytes' 8-bit layers, once per
# missing optional kernel at import in torchao): docs/facts.md §10.
NOISY_LOGGERS = ("bitsandbytes", *IMPORT_NOISE)


def quiet_libraries() -> None:
    """Silence the repeated warnings of bitsandbytes and torchao (errors still show).  Call it
    before importing them: some messages come at import time."""
    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="bitsandbytes")
    warnings.filterwarnings("ignore", module="torchao")
    warnings.filterwarnings("ignore", message=".*MatMul8bitLt.*")


def course_text(name: str = "perplexity_en.txt") -> str:
    """A short text that ships with the course (`data/`), for perplexity without a download."""
    return (DATA / name).read_text(encoding="utf-8").strip()


def _ids(tokenizer: Any, words: str | torch.Tensor, device: Any = None) -> torch.Tensor:
    if isinstance(words, torch.Tensor):
        ids = words if words.dim() == 2 else words.unsqueeze(0)
    else:
        ids = tokenizer(words, return_tensors="pt").input_ids
    return ids.to(device) if device is not None else ids


def _device(model: torch.nn.Module) -> torch.device:
    return next(iter(model.parameters())).device


@torch.no_grad()
def next_token_logits(model: Any, tokenizer: Any, words: str | torch.Tensor) -> torch.Tensor:
    """The model's logits at every position of `words` (shape tokens × vocabulary, float32)."""
    ids = _ids(tokenizer, words, _device(model))
    return model(ids).logits[0].float().cpu()


def perplexity_from_logits(logits: torch.Tensor, ids: torch.Tensor) -> float:
    """exp of the mean cross-entropy of predicting token t+1 from the logits at t: how many tokens
    the model hesitates between, on average.  1 would be certainty; a uniform guess over the
    vocabulary gives the vocabulary size."""
    ids = ids.reshape(-1).to(logits.device)
    loss = torch.nn.functional.cross_entropy(logits[:-1].float(), ids[1:])
    return float(torch.exp(loss))


def top1_agreement(logits: torch.Tensor, reference: torch.Tensor) -> float:
    """Share (0..1) of positions where both predict the same next token."""
    if logits.shape != reference.shape:
        raise ValueError(f"shapes differ: {tuple(logits.shape)} vs {tuple(reference.shape)}")
    return float((logits.argmax(-1) == reference.argmax(-1)).float().mean())


@torch.no_grad()
def sentence_embeddings(encoder: Any, tokenizer: Any, sentences: list[str]) -> torch.Tensor:
    """Mean-pooled, L2-normalized embeddings (how all-MiniLM-L6-v2 is meant to be used)."""
    batch = tokenizer(sentences, padding=True, truncation=True, return_tensors="pt")
    batch = {k: v.to(_device(encoder)) for k, v in batch.items()}
    hidden = encoder(**batch).last_hidden_state.float()
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
    return torch.nn.functional.normalize(pooled, dim=-1).cpu()


def embedding_cosine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Cosine similarity of each row of `a` with the same row of `b` (1 = same direction)."""
    return torch.nn.functional.cosine_similarity(a.float(), b.float(), dim=-1)


def tensor_bytes(t: Any) -> int:
    """Bytes a tensor really stores: the inner tensors of a tensor subclass (torchao), the packed
    data plus its quantization state (bitsandbytes), else numel × element size."""
    from torch.utils._python_dispatch import is_traceable_wrapper_subclass

    if is_traceable_wrapper_subclass(t):
        names, _ = t.__tensor_flatten__()
        return sum(tensor_bytes(getattr(t, n)) for n in names)
    return t.numel() * t.element_size() + _state_bytes(getattr(t, "quant_state", None))


def _state_bytes(state: Any) -> int:
    """Bytes of bitsandbytes' QuantState: absmax, code and (double quantization) its own state."""
    if state is None:
        return 0
    total = 0
    for value in vars(state).values():
        if isinstance(value, torch.Tensor):
            total += value.numel() * value.element_size()
        elif type(value).__name__ == "QuantState":
            total += _state_bytes(value)
    return total


def model_bytes(model: torch.nn.Module) -> int:
    """Bytes of a model's parameters and buffers as stored (shared tensors counted once), scales
    of quantized layers included: the model's memory, fp32 or int4 alike."""
    seen: set[int] = set()
    total = 0
    for module in model.modules():
        tensors = [*module._parameters.values(), *module._buffers.values()]
        scb = getattr(getattr(module, "weight", None), "SCB", None)  # bitsandbytes 8-bit scales
        if scb is not None:
            tensors.append(scb)
        for t in tensors:
            if t is None or id(t) in seen:
                continue
            seen.add(id(t))
            total += tensor_bytes(t)
    return total
