"""Does it fit?  The memory a transformer needs, part by part, computed offline (lesson 03).

    report = fit(model_or_n_params, "bfloat16", mode="full", batch=4, seq=128, device="T4")
    print(report)            # a table: weights, gradients, optimizer states, activations, ...
    report.total, report.fits

Modes: "inference" (weights, KV cache, the largest activations of one forward pass), "full"
(AdamW on every parameter), "lora" (a frozen 16-bit base plus trained adapters) and "qlora" (a
frozen 4-bit NF4 base plus adapters).  `mixed=True` is mixed precision as torch.autocast does it:
fp32 master weights, gradients and Adam moments, plus the 16-bit copies of the weights.
The rules of thumb (docs/facts.md §5) come out of these parts; utils.memory.peakmem measures peaks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from utils.i18n import text
from utils.units import GIB, format_bytes

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
    tied: bool = False  # the input embedding is also the output head

    @property
    def largest(self) -> int:
        """The largest parameter tensor: the embedding, or an MLP matrix."""
        return max(self.vocab * self.hidden, self.hidden * self.intermediate)

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
    Llama-like stack whose blocks hold the parameters, heads 64 wide, 4 query heads per kv head,
    a 32k vocabulary)."""
    if isinstance(model, int | float):
        n = int(model)
        layers = max(2, round((n / (12 * 64**2)) ** (1 / 3)))
        # a block's linear layers hold 14.5·hidden² (q, o: h²; k, v: h²/4 each; MLP: 3·4·h²)
        hidden = 64 * max(1, round(math.sqrt(n / (14.5 * layers)) / 64))
        return Shape(n, layers, hidden, 4 * hidden, hidden // 64, max(1, hidden // 256), 32000)
    config = getattr(model, "config", model)
    n = sum(p.numel() for p in model.parameters()) if hasattr(model, "parameters") else None
    hidden, heads = config.hidden_size, config.num_attention_heads
    layers, vocab = config.num_hidden_layers, config.vocab_size
    inter = getattr(config, "intermediate_size", 4 * hidden)
    kv = getattr(config, "num_key_value_heads", None) or heads
    tied = bool(getattr(config, "tie_word_embeddings", False))
    if n is None:  # a config only: count the parameters from the layout
        block = sum(a * b for a, b in Shape(0, 1, hidden, inter, heads, kv, 1).linear_shapes)
        n = layers * (block + 2 * hidden) + vocab * hidden * (1 if tied else 2) + hidden
    return Shape(n, layers, hidden, inter, heads, kv, vocab, tied)


LINEAR_NAMES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
ALL_LINEAR = LINEAR_NAMES  # LoRA's default here: an adapter on every linear layer of a block


def block_activations(
    shape: Shape, b: float, trained: tuple[str, ...], full: bool = False
) -> dict[str, float]:
    """Bytes one block keeps for backward per token, by part (measured with saved-tensor hooks
    on SmolLM2 in fp32, bf16 and under autocast).  `b`: bytes of the compute dtype; `trained`:
    the linear layers that train (full fine-tuning) or carry an adapter (LoRA), whose inputs
    backward needs for their gradients; `full`: the norms' weights train too."""
    h, kv, i = shape.hidden, shape.kv_width, shape.intermediate
    # a linear layer's input is kept once per input (q, k, v share theirs; gate and up too)
    inputs = {("q_proj", "k_proj", "v_proj"): h, ("o_proj",): h, ("gate_proj", "up_proj"): h}
    inputs[("down_proj",)] = i
    kept = sum(width for names, width in inputs.items() if set(names) & set(trained))
    return {
        # RMSNorm squares its input in fp32 and keeps it; trained norm weights keep their input
        "norms": 2 * h * 4.0 + (2 * h * b if full else 0),
        # attention keeps q, k, v and its output (k and v only kv_heads wide)
        "attention": (2 * h + 2 * kv) * b,
        # SiLU keeps its input, the product keeps silu(gate) and up
        "mlp": 3 * i * b,
        "linear inputs": kept * b,
    }


def loss_head_bytes(shape: Shape, tokens: int) -> float:
    """The loss over the vocabulary, always in fp32 (transformers upcasts the logits): its
    log-softmax is kept, and backward makes two more of that size (the gradients of the
    log-softmax and of the logits) before the head's matmul shrinks them to the hidden width."""
    return 3 * tokens * shape.vocab * 4.0


def activation_bytes(
    shape: Shape,
    batch: int,
    seq: int,
    mode: str,
    b: float,
    trained: tuple[str, ...] = ALL_LINEAR,
    checkpointing: bool = False,
) -> float:
    """Bytes held for backward at its start (training), or at the end of a forward pass
    (inference: the KV cache of every block, the logits, one MLP's intermediates)."""
    tokens = batch * seq
    if mode == "inference":
        per_token = shape.layers * 2 * shape.kv_width + shape.vocab + 4 * shape.intermediate
        return tokens * per_token * b
    block = sum(block_activations(shape, b, trained, full=mode == "full").values())
    if checkpointing:  # keep each block's input, recompute one block at a time in backward
        blocks = tokens * (shape.layers * shape.hidden * b + block)
    else:
        blocks = tokens * shape.layers * block
    return blocks + loss_head_bytes(shape, tokens)


def linear_params(shape: Shape) -> int:
    """Parameters in the blocks' linear layers: what QLoRA stores in 4 bits."""
    return shape.layers * sum(a * b for a, b in shape.linear_shapes)


def lora_params(shape: Shape, rank: int = 16, targets: tuple[str, ...] = ALL_LINEAR) -> int:
    """Trainable parameters of LoRA on the `targets` of every block: r·(in + out) each."""
    pairs = zip(LINEAR_NAMES, shape.linear_shapes, strict=True)
    return shape.layers * sum(rank * (a + b) for name, (a, b) in pairs if name in targets)


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
    def fits(self) -> bool | None:  # None: no device memory to hold it against
        return None if self.capacity is None else self.total <= self.capacity

    def per_param(self, n_params: int) -> float:
        """Bytes per parameter without the activations: the rule-of-thumb number."""
        held = {k: v for k, v in self.parts.items() if k not in ("activations", "context")}
        return (sum(held.values()) - held.get("step_temporaries", 0)) / n_params

    def __str__(self) -> str:
        lines = []
        for part, size in self.parts.items():
            lines.append(f"{text(*PART_NAMES.get(part, (part,) * 2)):<28} {format_bytes(size):>11}")
        for phase, size in self.phases.items():
            label = text("peak ({phase})", "Spitze ({phase})", phase=text(*PHASE_NAMES[phase]))
            lines.append(f"{label:<28} {format_bytes(size):>11}")
        if self.capacity is not None:
            lines.append(fit_verdict(self.total, self.capacity, self.device))
        return "\n".join(lines)


def fit_verdict(total: float, capacity: float, device: str) -> str:
    """The line under a memory table: whether `total` bytes fit the `capacity` of `device`, and
    which share of it they take (the training fit and the serving fit say it alike)."""
    verdict = text("fits", "passt") if total <= capacity else text("does NOT fit", "passt NICHT")
    return text(
        "{verdict} on {device} ({capacity}: {share:.0f}% of it)",
        "{verdict} auf {device} ({capacity}: {share:.0f} % davon)",
        verdict=verdict,
        device=device,
        capacity=format_bytes(capacity),
        share=100 * total / capacity,
    )


_TRANSIENT = ("activations", "gradients", "step_temporaries")
BLOCK_PARTS = {  # the parts of block_activations, for a table
    "norms": ("norms (fp32)", "Normen (fp32)"),
    "attention": ("attention", "Attention"),
    "mlp": ("MLP", "MLP"),
    "linear inputs": ("inputs of trained layers", "Eingaben trainierter Schichten"),
}
PHASE_NAMES = {"forward": ("forward", "Vorwärts"), "backward": ("backward", "Rückwärts")}
PHASE_NAMES["step"] = ("optimizer step", "Optimiererschritt")
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
    foreach: bool | None = None,
    targets: tuple[str, ...] = ALL_LINEAR,
) -> Fit:
    """Memory by part for `model` (a model, a config, a Shape or a parameter count).

    `dtype`: the weights' dtype (full, inference), the frozen base's (LoRA) or the compute dtype
    (QLoRA; with `mixed`, full fine-tuning's 16-bit dtype).  `mixed`: under torch.autocast.
    `rank`, `targets`: LoRA's adapters.  `foreach`: AdamW updates all parameters at once
    (torch's default on CUDA; None: not on "cpu")."""
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
    foreach = name != "cpu" if foreach is None else foreach
    if mode == "inference":
        report.parts["weights"] = n * b
    elif mode == "full":  # AdamW; autocast (mixed): fp32 master weights, gradients and moments
        m = 4.0 if mixed else b
        report.parts["weights"] = m * n
        if mixed:
            report.parts["weight_copies"] = b * n
        report.parts.update(optimizer=2 * m * n, gradients=m * n)
        # the step: foreach AdamW computes √v of all parameters at once, one more copy of them;
        # per tensor (torch on the CPU) √v and √v / c of the largest tensor, and a tied
        # embedding's two gradients summed into a third
        temporaries = n if foreach else (2 + shape.tied) * shape.largest
        report.parts["step_temporaries"] = m * temporaries
    else:  # LoRA: a frozen base in `dtype`; QLoRA: NF4 linear layers, the rest in fp32
        if mode == "lora":
            report.parts["weights"] = n * b
        else:  # peft's prepare_model_for_kbit_training casts what is not 4-bit to fp32
            linear = min(n, linear_params(shape))
            report.parts["weights"] = linear * NF4_BYTES + (n - linear) * 4.0
        # fp32 adapters: weight, gradient, Adam's m and v, 4 bytes each
        report.parts["adapters"] = 16.0 * lora_params(shape, rank, targets)
        if mixed and b > 2:  # autocast casts each frozen fp32 weight to 16 bits and keeps the copy
            report.parts["weight_copies"] = 2.0 * linear_params(shape)
    compute = 2.0 if mixed else b
    trained = ALL_LINEAR if mode in ("full", "inference") else targets
    report.parts["activations"] = activation_bytes(
        shape, batch, seq, mode, compute, trained, checkpointing and mode != "inference"
    )
    if name not in ("cpu",) and not name.startswith("TPU"):
        report.parts["context"] = CUDA_CONTEXT
    return report
