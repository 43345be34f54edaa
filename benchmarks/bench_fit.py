"""The fit calculator (utils/memory/fit.py) against measured peaks of the packaged SmolLM2-135M, for
every mode the course teaches: inference, full fine-tuning, LoRA and QLoRA, in fp32 and bf16.

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_fit.py

Each configuration runs in a clean child forked from one helper process
(utils.memory.peakmem.measure_peak); the table shows predicted and measured side by side and their
ratio.  Memory does not depend on the machine's load, only on what the run holds.  LoRA and
QLoRA use lesson 07's adapters (r = 8 on q, k, v, o, via PEFT); QLoRA is bitsandbytes' NF4 with
double quantization, prepared as lesson 07 does it.  A benchmark: it prints and asserts nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from transformers import AutoConfig  # noqa: E402

from utils.memory import fit, peakmem  # noqa: E402
from utils.models.loading import smollm2_location  # noqa: E402
from utils.units import format_bytes  # noqa: E402

CKPT, AMP = {"checkpointing": True}, {"mixed": True}
RUNS = [  # (mode, dtype, batch, seq[, options]); dtype: see fit.fit's docstring
    ("inference", "float32", 1, 128),
    ("inference", "bfloat16", 4, 128),
    ("full", "float32", 1, 64),
    ("full", "float32", 4, 128),
    ("full", "bfloat16", 4, 128),  # pure bf16: weights, gradients and moments in 16 bits
    ("full", "bfloat16", 4, 128, AMP),  # autocast: fp32 master weights + bf16 copies
    ("lora", "float32", 4, 128),  # lesson 07 on a CPU
    ("lora", "float32", 4, 128, AMP),  # fp32 base under autocast
    ("lora", "bfloat16", 4, 128, AMP),  # lesson 07 on a GPU: a 16-bit base under autocast
    ("qlora", "float32", 4, 128),
    ("qlora", "float32", 4, 128, CKPT),  # lesson 07's QLoRA: NF4 base, checkpointing
    ("qlora", "bfloat16", 4, 128, CKPT),
]


def predict(config, run) -> fit.Fit:
    mode, dtype, batch, seq, *rest = run
    options = {**peakmem.LORA, **(rest[0] if rest else {})}
    return fit.fit(
        config,
        dtype,
        mode,
        batch,
        seq,
        device="cpu",
        mixed=options.get("mixed", False),
        rank=options["rank"],
        targets=tuple(options["targets"]),
        checkpointing=options.get("checkpointing", False),
    )


def main() -> None:
    config = AutoConfig.from_pretrained(smollm2_location()[0])
    head = f"{'mode':<10}{'dtype':<9}{'options':<15}{'batch×seq':>10}"
    print(f"{head}{'predicted':>12}{'measured':>12}{'error':>8}")
    for run, measured in zip(RUNS, peakmem.measure_peak(RUNS), strict=True):
        predicted = predict(config, run).total
        options = ",".join(run[4]) if len(run) > 4 else ""
        print(
            f"{run[0]:<10}{run[1]:<9}{options:<15}{f'{run[2]}×{run[3]}':>10}"
            f"{format_bytes(predicted):>12}{format_bytes(measured):>12}"
            f"{100 * (predicted - measured) / measured:>+7.1f}%",
            flush=True,
        )


if __name__ == "__main__":
    main()
