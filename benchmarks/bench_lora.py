"""What does a LoRA training step cost against full fine-tuning, by rank and target layers?
SmolLM2-135M (the packaged model offline, `utils.models.loading`), batch 4 × 64 tokens, AdamW: for
r ∈ {4, 8, 16, 64} on q,v and on all seven linear layers of each block, the trainable
parameters, the median step time, and the memory: the adapter's training state (16 bytes per
trainable parameter) and the step's peak (on Linux the rise of the resident high-water mark over
the process before the step, activations included; on CUDA `max_memory_allocated`).  Full fp32
fine-tuning is the first row, for the ratios.  A benchmark, never a test.

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_lora.py [--steps 5] [--quick]
"""

from __future__ import annotations

import argparse
import copy
import ctypes
import gc
import math
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from utils.models.loading import load_smollm2  # noqa: E402

TARGETS = {
    "q,v": {"q_proj", "v_proj"},
    "all linear": {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"},
}
RANKS = (4, 8, 16, 64)


class LoRALinear(nn.Module):
    """The layer of lesson 07: a frozen nn.Linear plus (alpha / r) · B A x, B = 0 at the start."""

    def __init__(self, base: nn.Linear, r: int, alpha: float):
        super().__init__()
        self.base, self.scale = base, alpha / r
        base.weight.requires_grad_(False)
        self.A = nn.Parameter(torch.empty(r, base.in_features, device=base.weight.device))
        nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = nn.Parameter(torch.zeros(base.out_features, r, device=base.weight.device))

    def forward(self, x):
        low = nn.functional.linear(nn.functional.linear(x, self.A), self.B)
        return self.base(x) + low * self.scale


def add_lora(model: nn.Module, targets: set[str], r: int) -> None:
    model.requires_grad_(False)
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.Linear) and name in targets:
                setattr(parent, name, LoRALinear(child, r, 2 * r))


def _status(field: str) -> int | None:
    try:
        with open("/proc/self/status") as status:
            line = next(line for line in status if line.startswith(field))
        return int(line.split()[1]) * 1024
    except (OSError, StopIteration):
        return None


def _reset_peak(device: str) -> int | None:
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        return torch.cuda.memory_allocated()
    if sys.platform.startswith("linux"):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        try:
            with open("/proc/self/clear_refs", "w") as refs:
                refs.write("5")
        except OSError:
            return None
    return _status("VmRSS")


def _peak(device: str, start: int | None) -> float:
    if device == "cuda":
        return float(torch.cuda.max_memory_allocated() - start)
    hwm = _status("VmHWM")
    return float("nan") if hwm is None or start is None else float(hwm - start)


def run_one(base: nn.Module, ids: torch.Tensor, steps: int, targets=None, r=0) -> dict:
    model = copy.deepcopy(base)
    if targets is None:
        model.requires_grad_(True)
    else:
        add_lora(model, targets, r)
    params = [p for p in model.parameters() if p.requires_grad]
    trainable = sum(p.numel() for p in params)
    opt = torch.optim.AdamW(params, lr=1e-4)
    model.train()
    start = _reset_peak(ids.device.type)
    times = []
    for _ in range(steps + 1):  # the first step (allocations, Adam's moments) is not timed
        t = time.perf_counter()
        model(ids, labels=ids).loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if ids.device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    peak = _peak(ids.device.type, start)
    del model, opt, params
    gc.collect()
    return {"trainable": trainable, "s": statistics.median(times[1:]), "peak": peak}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=5, help="timed steps per setting")
    parser.add_argument("--quick", action="store_true", help="r 4 and 64 only, 2 steps")
    args = parser.parse_args(argv)
    ranks = (4, 64) if args.quick else RANKS
    steps = 2 if args.quick else args.steps
    device = "cuda" if torch.cuda.is_available() else "cpu"
    t = time.perf_counter()
    base, _, source = load_smollm2(device=device)
    print(
        f"{source}; loaded in {time.perf_counter() - t:.1f} s; device {device}, "
        f"torch threads {torch.get_num_threads()}, batch 4 × 64 tokens, {steps} timed steps"
    )
    total = sum(p.numel() for p in base.parameters())
    ids = torch.randint(
        0, base.config.vocab_size, (4, 64), generator=torch.Generator().manual_seed(0)
    )
    ids = ids.to(device)
    rows = [("full fp32", "-", run_one(base, ids, steps))]
    for name, targets in TARGETS.items():
        for r in ranks:
            rows.append((name, r, run_one(base, ids, steps, targets, r)))
    full = rows[0][2]
    print(
        f"\n{'targets':<12}{'r':>4}{'trainable':>13}{'%':>8}{'state MiB':>11}{'peak MiB':>10}"
        f"{'s/step':>9}{'× full':>8}"
    )
    for name, r, m in rows:
        state = 16 * m["trainable"] / 2**20
        print(
            f"{name:<12}{r!s:>4}{m['trainable']:>13,}{100 * m['trainable'] / total:>8.2f}"
            f"{state:>11.1f}{m['peak'] / 2**20:>10.0f}{m['s']:>9.2f}{m['s'] / full['s']:>8.2f}"
        )
    print(
        "\nstate = 16 B per trainable parameter (fp32 value, gradient, Adam m and v); peak = the "
        "step's rise in resident memory (CPU) or allocated memory (CUDA), activations included."
    )


if __name__ == "__main__":
    main()
