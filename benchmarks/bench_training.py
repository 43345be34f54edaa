"""Training throughput of a small GPT: tokens/s and MFU per dtype, with and without torch.compile.

    python benchmarks/bench_training.py            (CPU: tiny model; CUDA: the T4-sized one)

The model is lesson 05's shape (d, layers, heads, context) on random tokens; each line trains the
same steps, synchronised, after a warm-up, and gives tokens/s, TFLOP/s (6·N + 12·L·d·T per token)
and MFU against the detected device's peak for that dtype (`utils.timing.throughput`; a CPU's peak is an
estimate). torch.compile's compile time is reported on its own. Nothing is asserted.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from utils.platform import hardware, placement  # noqa: E402
from utils.timing import throughput
from utils.timing.sync import synchronizer  # noqa: E402


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, block, d, layers, heads):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(block, d)
        self.blocks = nn.Sequential(*(Block(d, heads) for _ in range(layers)))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, idx, targets):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        logits = self.head(self.ln(self.blocks(x)))
        return F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten())


def run(model, x, y, amp, scaler_on, steps, sync):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler(x.device.type, enabled=scaler_on)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast(x.device.type, dtype=amp or torch.float32, enabled=amp is not None):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    t0 = time.perf_counter()
    step()
    sync(None)
    first = time.perf_counter() - t0
    step()
    sync(None)
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    sync(None)
    return first, (time.perf_counter() - t0) / steps


def main() -> None:
    device = placement.pick_device()
    hw = hardware.detect()
    sync = synchronizer(device.type if device.type in ("cuda", "mps") else "cpu")
    cuda = device.type == "cuda"
    cfg = (
        dict(block=256, d=384, layers=6, heads=6)
        if cuda
        else dict(block=64, d=64, layers=2, heads=4)
    )
    batch, steps, vocab = (64, 20, 128) if cuda else (16, 15, 128)
    x = torch.randint(0, vocab, (batch, cfg["block"]), device=device)
    y = torch.randint(0, vocab, (batch, cfg["block"]), device=device)
    torch.manual_seed(0)
    probe = GPT(vocab, **cfg)
    n = throughput.count_params(probe, exclude=(probe.pos,))
    fpt = throughput.flops_per_token(
        n, n_layers=cfg["layers"], d_model=cfg["d"], seq_len=cfg["block"]
    )
    print(
        f"device {device} ({hw.summary()}), threads {torch.get_num_threads()}, torch {torch.__version__}"
    )
    print(f"model {cfg}, batch {batch}, {n:,} parameters, {fpt:,.0f} FLOPs/token")
    dtypes = [("float32", None, False)]
    if cuda:
        dtypes.append(("float16", torch.float16, True))
        if hw.gpus and hw.gpus[0].has_fast_bf16:
            dtypes.append(("bfloat16", torch.bfloat16, False))
    elif hw.cpu.has_fast_bf16:
        dtypes.append(("bfloat16", torch.bfloat16, False))
    print(
        f"{'dtype':>9} {'compile':>8} {'first s':>8} {'tokens/s':>11} {'TFLOP/s':>8} {'peak':>7} {'MFU':>7}"
    )
    base = None
    for name, amp, scaler_on in dtypes:
        for compiled in (False, True):
            torch.manual_seed(0)
            model = GPT(vocab, **cfg).to(device)
            if compiled:
                try:
                    model = torch.compile(model)
                except Exception as error:  # noqa: BLE001
                    print(f"{name:>9} {'yes':>8}  torch.compile unavailable: {error}")
                    continue
            try:
                first, per_step = run(model, x, y, amp, scaler_on, steps, sync)
            except Exception as error:  # noqa: BLE001 -- e.g. no C++ compiler for inductor
                print(
                    f"{name:>9} {'yes' if compiled else 'no':>8}  failed: {type(error).__name__}: {error}"[
                        :200
                    ]
                )
                continue
            tps = batch * cfg["block"] / per_step
            peak = throughput.peak_tflops(device, name)
            mfu = f"{100 * throughput.mfu(tps, fpt, peak):6.2f}%" if peak else "      -"
            base = base or tps
            print(
                f"{name:>9} {'yes' if compiled else 'no':>8} {first:8.2f} {tps:11,.0f} "
                f"{tps * fpt / 1e12:8.4f} {peak or 0:7.2f} {mfu}   ({tps / base:.2f}× fp32 eager)"
            )


if __name__ == "__main__":
    main()
