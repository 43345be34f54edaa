"""Does it fit?  The memory a transformer needs, part by part, computed offline (lesson 03).

    report = fit(model_or_n_params, "bfloat16", mode="full", batch=4, seq=128, device="T4")
    print(report)            # a table: weights, gradients, optimizer states, activations, ...
    report.total, report.fits

Modes: "inference" (weights, KV cache, the largest activations of one forward pass), "full"
(AdamW on every parameter), "lora" (a frozen 16-bit base plus trained adapters) and "qlora" (a
frozen 4-bit NF4 base plus adapters).  `mixed=True` is mixed precision as torch.autocast does it:
fp32 master weights, gradients and Adam moments, plus the 16-bit copies of the weights.
The rules of thumb (docs/facts.md §5) come out of these parts; nothing here is measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .i18n import text
from .units import GIB, format_bytes

# Bytes per number.  NF4 (QLoRA) is 4 bits plus its block constants: one fp8 scale per 64 numbers
# and one fp32 scale per 256 of those (double quantization: 8/64 + 32/(64·256) bits per number).
BYTES = {"float32": 4.0, "tf32": 4.0, "float16": 2.0, "bfloat16": 2.0, "fp8": 1.0, "int8": 1.0}
NF4_BYTES = (4 + 8 / 64 + 32 / (64 * 256)) / 8
CUDA_CONTEXT = 0.4 * GIB  # driver, kernels and cuBLAS workspace; 0.3-0.5 GiB on a T4
DEVICE_MEMORY = {"T4": 15 * GIB, "A100": 40 * GIB, "H100": 80 * GIB, "TPU v5e": 16 * GIB}
MODES = ("inference", "full", "lora", "qlora")


@dataclass(frozen=True)
class Shape:
    """What the memory depends on: a decoder-only transformer's sizes."""

    n_params: int
    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    vocab: int

    @property
    def kv_width(self) -> int:
        return self.hidden * self.kv_heads // self.heads

    @property
    def linear_shapes(self) -> list[tuple[int, int]]:
        """(in, out) of the linear layers of one block: q, k, v, o, gate, up, down."""
        h, kv, i = self.hidden, self.kv_width, self.intermediate
        return [(h, h), (h, kv), (h, kv), (h, h), (h, i), (h, i), (i, h)]


def shape_of(model: Any) -> Shape:
    """The Shape of a Hugging Face model, a config, or a parameter count (then a guess: a
    Llama-like stack 64·layers wide, 4 kv-head groups, a 32k vocabulary)."""
    if isinstance(model, int | float):
        n = int(model)
        layers = max(2, round((n / (12 * 64**2)) ** (1 / 3)))
        hidden = 64 * max(1, round(math.sqrt(n / (12 * layers)) / 64))
        return Shape(n, layers, hidden, 4 * hidden, hidden // 64, max(1, hidden // 256), 32000)
    config = getattr(model, "config", model)
    n = sum(p.numel() for p in model.parameters()) if hasattr(model, "parameters") else None
    hidden, heads = config.hidden_size, config.num_attention_heads
    layers, vocab = config.num_hidden_layers, config.vocab_size
    inter = getattr(config, "intermediate_size", 4 * hidden)
    kv = getattr(config, "num_key_value_heads", None) or heads
    if n is None:  # a config only: count the parameters from the layout
        block = sum(a * b for a, b in Shape(0, 1, hidden, inter, heads, kv, 1).linear_shapes)
        tied = getattr(config, "tie_word_embeddings", False)
        n = layers * (block + 2 * hidden) + vocab * hidden * (1 if tied else 2) + hidden
    return Shape(n, layers, hidden, inter, heads, kv, vocab)


def activation_bytes(shape: Shape, batch: int, seq: int, mode: str, b: float) -> float:
    """Bytes held for backward at its start.  Per block and token: the two norms' inputs and
    outputs (4·h), q, k, v and their rotated copies (2·h + 3·kv), k and v widened to all heads
    (2·h), the attention output and o's output (2·h), the residual (h), and in the MLP gate, up,
    silu(gate) and their product (4·i): 11·h + 3·kv + 4·i numbers.  The head: the logits, their
    fp32 copy and log-softmax for the loss and the logits' gradient (2 in dtype, 2 in fp32).
    Inference keeps the KV cache (2·kv per block), the logits and one MLP's intermediates."""
    tokens = batch * seq
    if mode == "inference":
        per_token = shape.layers * 2 * shape.kv_width + shape.vocab + 4 * shape.intermediate
        return tokens * per_token * b
    h, kv, i = shape.hidden, shape.kv_width, shape.intermediate
    return tokens * (shape.layers * (11 * h + 3 * kv + 4 * i) * b + shape.vocab * (2 * b + 8))


def lora_params(shape: Shape, rank: int = 16) -> int:
    """Trainable parameters of LoRA on every linear layer of every block: r·(in + out) each."""
    return shape.layers * sum(rank * (a + b) for a, b in shape.linear_shapes)


@dataclass
class Fit:
    """The parts in bytes, their total, and the device memory they are held against."""

    mode: str
    dtype: str
    parts: dict[str, float] = field(default_factory=dict)
    capacity: float | None = None
    device: str = ""

    @property
    def phases(self) -> dict[str, float]:
        """What is held at the two high points of a training step: the start of backward (all
        activations, no gradients yet) and the optimizer step (gradients and the step's
        temporaries, no activations).  Inference has one."""
        always = sum(v for k, v in self.parts.items() if k not in _TRANSIENT)
        if self.mode == "inference":
            return {"forward": always + self.parts["activations"]}
        step = self.parts.get("gradients", 0) + self.parts.get("step_temporaries", 0)
        return {"backward": always + self.parts["activations"], "step": always + step}

    @property
    def total(self) -> float:
        """The peak: the larger of the phases."""
        return max(self.phases.values())

    @property
    def fits(self) -> bool | None:
        return None if self.capacity is None else self.total <= self.capacity

    def per_param(self, n_params: int) -> float:
        """Bytes per parameter without the activations: the rule-of-thumb number."""
        held = {k: v for k, v in self.parts.items() if k not in ("activations", "context")}
        return (sum(held.values()) - held.get("step_temporaries", 0)) / n_params

    def __str__(self) -> str:
        lines = []
        for part, size in self.parts.items():
            name = text(*PART_NAMES.get(part, (part, part)))
            lines.append(f"{name:<24} {format_bytes(size):>11}")
        for phase, size in self.phases.items():
            label = text("peak ({phase})", "Spitze ({phase})", phase=text(*PHASE_NAMES[phase]))
            lines.append(f"{label:<24} {format_bytes(size):>11}")
        if self.capacity is not None:
            lines.append(
                text(
                    "{verdict} on {device} ({capacity}: {share:.0f}% of it)",
                    "{verdict} auf {device} ({capacity}: {share:.0f} % davon)",
                    verdict=text("fits", "passt")
                    if self.fits
                    else text("does NOT fit", "passt NICHT"),
                    device=self.device,
                    capacity=format_bytes(self.capacity),
                    share=100 * self.total / self.capacity,
                )
            )
        return "\n".join(lines)


_TRANSIENT = ("activations", "gradients", "step_temporaries")
PHASE_NAMES = {
    "forward": ("forward", "Vorwärts"),
    "backward": ("backward", "Rückwärts"),
    "step": ("optimizer step", "Optimiererschritt"),
}
PART_NAMES = {
    "weights": ("weights", "Gewichte"),
    "weight_copies": ("16-bit weight copies", "16-Bit-Kopien der Gewichte"),
    "gradients": ("gradients", "Gradienten"),
    "optimizer": ("optimizer (Adam m, v)", "Optimierer (Adam m, v)"),
    "adapters": ("adapters (+grad, Adam)", "Adapter (+Grad., Adam)"),
    "activations": ("activations", "Aktivierungen"),
    "step_temporaries": ("step temporaries", "Zwischenwerte des Schritts"),
    "context": ("CUDA context", "CUDA-Kontext"),
}


def _capacity(device: Any) -> tuple[float | None, str]:
    if device is None or device == "cpu":
        return None, "cpu"
    if isinstance(device, int | float):
        return float(device), format_bytes(device)
    name = str(device)
    if name.startswith("cuda"):
        import torch

        props = torch.cuda.get_device_properties(torch.device(name))
        return float(props.total_memory), props.name
    for chip, size in DEVICE_MEMORY.items():
        if chip.lower() in name.lower():
            return float(size), chip
    raise ValueError(
        text(
            "unknown device {name!r}: pass a number of bytes, 'cpu', 'cuda' or one of {known}",
            "unbekanntes Gerät {name!r}: Gib eine Zahl von Bytes, 'cpu', 'cuda' oder eins von "
            "{known} an",
            name=name,
            known=", ".join(DEVICE_MEMORY),
        )
    )


def fit(
    model: Any,
    dtype: str = "float32",
    mode: str = "inference",
    batch: int = 1,
    seq: int = 512,
    device: Any = "T4",
    mixed: bool = False,
    rank: int = 16,
    checkpointing: bool = False,
) -> Fit:
    """Memory by part for `model` (a model, a config, a Shape or a parameter count)."""
    if mode not in MODES or dtype not in BYTES:
        raise ValueError(
            text(
                "mode must be one of {modes} and dtype one of {dtypes}",
                "mode muss eins von {modes} sein und dtype eins von {dtypes}",
                modes=", ".join(MODES),
                dtypes=", ".join(BYTES),
            )
        )
    shape = model if isinstance(model, Shape) else shape_of(model)
    n, b = shape.n_params, BYTES[dtype]
    capacity, name = _capacity(device)
    report = Fit(mode, dtype, capacity=capacity, device=name)
    # torch's foreach AdamW computes sqrt(v) for all parameters at once: one more gradient
    if mode == "inference":
        report.parts["weights"] = n * b
    elif mode == "full" and mixed:  # autocast: fp32 master weights, grads and moments
        report.parts.update(weights=4.0 * n, weight_copies=b * n, optimizer=8.0 * n)
        report.parts.update(gradients=4.0 * n, step_temporaries=4.0 * n)
    elif mode == "full":  # AdamW keeps its moments in the parameters' dtype
        report.parts.update(weights=n * b, optimizer=2 * n * b)
        report.parts.update(gradients=n * b, step_temporaries=n * b)
    else:
        b = 2.0  # LoRA computes in 16 bits; QLoRA de-quantizes to them
        report.parts["weights"] = n * (2.0 if mode == "lora" else NF4_BYTES)
        report.parts["adapters"] = 16.0 * lora_params(shape, rank)
    act = activation_bytes(shape, batch, seq, mode, b)
    if checkpointing and mode != "inference":  # keep one input per block, recompute one block
        act = batch * seq * shape.layers * shape.hidden * b + act / shape.layers
    report.parts["activations"] = act
    if name not in ("cpu",) and not name.startswith("TPU"):
        report.parts["context"] = CUDA_CONTEXT
    return report


# --- measuring it: a fresh process, so nothing else this kernel holds counts -----------------

_CHILD = """
import ctypes, gc, json, sys, torch
from transformers import LlamaForCausalLM
from utils.fit import _hwm
from utils.memory import process_rss
from utils.models import load_smollm2
for mode, dtype, batch, seq, device, steps in json.loads(sys.argv[1]):
    torch.manual_seed(0)
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # give freed memory back, so the next run counts
    base = process_rss()
    model = load_smollm2(dtype=getattr(torch, dtype), device=device)[0]
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the high-water mark to what is held now
    ids = torch.randint(0, model.config.vocab_size, (batch, seq), device=device)
    if mode == "inference":
        with torch.no_grad():
            model(ids)
    else:
        model.train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
        for _ in range(steps):  # a second step runs with Adam's moments already there
            model(ids, labels=ids).loss.backward()
            opt.step()
            opt.zero_grad()
    peak = torch.cuda.max_memory_allocated() if device == "cuda" else _hwm() - base
    print(json.dumps(peak), flush=True)
    del model, ids
    opt = None
"""


def _hwm() -> int:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmHWM"))
    return int(line.split()[1]) * 1024


def measure_peak(runs: list[tuple], device: str = "cpu", steps: int = 2) -> list[int]:
    """Peak bytes of (mode, dtype, batch, seq) runs of the packaged SmolLM2-135M, one after the
    other in a fresh process: on the CPU the rise of the resident memory's high-water mark over
    the process before the model was loaded (Linux), on CUDA torch.cuda.max_memory_allocated
    (without the CUDA context).  `steps` training steps per run."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"}
    todo = json.dumps([[*run, device, steps] for run in runs])
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, todo], capture_output=True, text=True, env=env, check=True
    )
    return [int(line) for line in done.stdout.split()]
