"""DDP and FSDP2 with torch.distributed, for lesson 08: a script that `torchrun` starts.

    torchrun --standalone --nproc_per_node=2 utils/parallel/ddp_demo.py --out result.json

Every process (a "rank") runs this file. They find each other through the environment torchrun
sets (RANK, WORLD_SIZE, MASTER_ADDR, ...), join a process group (gloo on CPUs, NCCL on NVIDIA
GPUs) and then:

1. DDP: the same small MLP on every rank (same seed), each rank trains on its half of the batch;
   DDP averages the gradients with an all-reduce. Rank 0 then trains the same model in one
   process on the whole batch and records the largest difference of the weights.
2. FSDP2: `fully_shard` on a device mesh of all ranks; each rank holds 1/N of every parameter.
   After a few AdamW steps the gathered weights are compared with one process's.
3. Timing: an all-reduce of `--mib` MiB (bus bandwidth, as nccl-tests reports it), and one
   training step of a larger MLP split into compute and the gradient all-reduce.

Rank 0 writes everything to `--out` as JSON. The script only needs torch (no course modules), so
it runs the same on a laptop, in CI, on Colab and on Kaggle's T4 x2 (`--backend nccl`).
Why a script: `torch.multiprocessing.spawn` pickles the function it starts, and a function defined
in a notebook (`__main__`) cannot be pickled in a new process (Lightning issues #7550, #10511).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import torch
import torch.distributed as dist
from torch import nn


def make_model(seed: int, width: int = 32) -> nn.Module:
    torch.manual_seed(seed)  # the same seed on every rank: the same initial weights
    return nn.Sequential(nn.Linear(16, width), nn.Tanh(), nn.Linear(width, 4))


def make_data(batch: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(1234)
    x = torch.randn(batch, 16, generator=generator)
    return x, torch.sin(x[:, :4] * 2)


def train(model, x, y, steps, optimizer) -> None:
    for _ in range(steps):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()  # the mean over this rank's examples
        optimizer.step()


def flat(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1).cpu() for p in model.parameters()])


def ddp_check(rank, world, device, steps=20) -> dict:
    from torch.nn.parallel import DistributedDataParallel as DDP

    x, y = make_data()
    mine = slice(rank * len(x) // world, (rank + 1) * len(x) // world)  # this rank's half
    model = make_model(0).to(device)
    ddp = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    train(
        ddp, x[mine].to(device), y[mine].to(device), steps, torch.optim.SGD(ddp.parameters(), 0.1)
    )
    result = {"ddp_rows_per_rank": len(x[mine])}
    if rank == 0:  # the reference: one process, the whole batch
        single = make_model(0).to(device)
        train(single, x.to(device), y.to(device), steps, torch.optim.SGD(single.parameters(), 0.1))
        result["ddp_max_diff"] = float((flat(model) - flat(single)).abs().max())
        result["ddp_moved"] = float((flat(model) - flat(make_model(0))).abs().max())
    return result


def fsdp_check(rank, world, device, steps=5) -> dict:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    x, y = make_data()
    mine = slice(rank * len(x) // world, (rank + 1) * len(x) // world)
    model = make_model(0, width=64).to(device)
    total = sum(p.numel() for p in model.parameters())
    mesh = init_device_mesh(device.type, (world,))
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    local = sum(p.to_local().numel() for p in model.parameters())  # DTensors: this rank's shard
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    train(model, x[mine].to(device), y[mine].to(device), steps, optimizer)
    gathered = torch.cat([p.full_tensor().detach().reshape(-1).cpu() for p in model.parameters()])
    result = {f"fsdp_local_params_rank{rank}": local, "fsdp_total_params": total}
    shares = [None] * world
    dist.all_gather_object(shares, local)
    result["fsdp_local_params"] = shares
    if rank == 0:
        single = make_model(0, width=64).to(device)
        train(
            single, x.to(device), y.to(device), steps, torch.optim.AdamW(single.parameters(), 1e-2)
        )
        result["fsdp_max_diff"] = float((gathered - flat(single)).abs().max())
    return result


def sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def allreduce_bandwidth(world, device, mib: float, repeats: int) -> dict:
    numel = int(mib * 2**20 / 4)
    buffer = torch.ones(numel, device=device)
    dist.all_reduce(buffer)  # warm-up: the first call sets up the connections
    sync(device)
    times = []
    for _ in range(repeats):
        dist.barrier()
        start = time.perf_counter()
        dist.all_reduce(buffer)
        sync(device)
        times.append(time.perf_counter() - start)
    seconds = sorted(times)[len(times) // 2]
    size = numel * 4
    # nccl-tests' "bus bandwidth": what each link carries in a ring, 2(N-1)/N of the data
    bus = size * 2 * (world - 1) / world / seconds if world > 1 else 0.0
    return {"allreduce_bytes": size, "allreduce_s": seconds, "allreduce_bus_gbs": bus / 1e9}


def step_timing(rank, world, device, steps: int, width: int, batch: int) -> dict:
    """One DDP training step of a wider MLP on `batch` examples per rank: total, and compute alone
    (DDP's no_sync() skips the all-reduce), the difference is the communication left uncovered."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width)).to(device)
    ddp = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    x = torch.randn(batch, width, device=device)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=1e-3)

    def one(skip_sync: bool) -> float:
        sync(device)
        dist.barrier()
        start = time.perf_counter()
        optimizer.zero_grad()
        if skip_sync:
            with ddp.no_sync():
                ddp(x).square().mean().backward()
        else:
            ddp(x).square().mean().backward()
        optimizer.step()
        sync(device)
        return time.perf_counter() - start

    for _ in range(2):
        one(False), one(True)
    full = sorted(one(False) for _ in range(steps))[steps // 2]
    compute = sorted(one(True) for _ in range(steps))[steps // 2]
    params = sum(p.numel() for p in model.parameters())
    return {
        "step_s": full,
        "compute_s": compute,
        "samples_per_s": world * batch / full,
        "grad_bytes": params * 4,
        "width": width,
        "batch_per_rank": batch,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--backend", default="gloo", choices=["gloo", "nccl"])
    parser.add_argument("--checks", action="store_true", help="the DDP and FSDP2 equality runs")
    parser.add_argument("--mib", type=float, default=16.0, help="size of the timed all-reduce")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--batch", type=int, default=256, help="examples per rank and step")
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if args.backend == "nccl":
        local = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
    else:
        device = torch.device("cpu")
    dist.init_process_group(args.backend)
    try:
        result = {"world_size": world, "backend": args.backend, "torch": torch.__version__}
        if args.checks:
            result |= ddp_check(rank, world, device)
            result |= fsdp_check(rank, world, device)
        if args.repeats:
            result |= allreduce_bandwidth(world, device, args.mib, args.repeats)
        if args.steps:
            result |= step_timing(rank, world, device, args.steps, args.width, args.batch)
        if rank == 0:
            with open(args.out, "w") as out:
                json.dump(result, out, indent=1)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
