"""All-reduce bandwidth and DDP scaling efficiency, 1 vs. 2 processes, on this machine (lesson 08).

    .venv/bin/python benchmarks/bench_distributed.py [--backend gloo|nccl] [--mib 64]

Runs utils/parallel/ddp_demo.py under torchrun with 1 and with 2 processes and prints the
all-reduce's bus bandwidth (2(N-1)/N of the bytes per device over the time, as nccl-tests reports it), the step time
split into compute and the all-reduce left uncovered, and the scaling efficiency
throughput(2) / (2 × throughput(1)). A benchmark, never a test: the numbers depend on the load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "utils" / "parallel" / "ddp_demo.py"


def run(processes: int, backend: str, mib: float) -> dict:
    out = Path(tempfile.mkdtemp()) / "result.json"
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    command += [f"--nproc_per_node={processes}", str(SCRIPT), "--out", str(out)]
    command += ["--backend", backend, "--mib", str(mib), "--repeats", "20", "--steps", "20"]
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    subprocess.run(command, check=True, timeout=600, env=env, capture_output=True, text=True)
    return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="gloo", choices=["gloo", "nccl"])
    parser.add_argument("--mib", type=float, default=64.0)
    args = parser.parse_args()
    results = {n: run(n, args.backend, args.mib) for n in (1, 2)}
    for n, r in results.items():
        print(
            f"{n} process(es), {r['backend']}: step {r['step_s'] * 1e3:.1f} ms "
            f"(compute {r['compute_s'] * 1e3:.1f} ms), {r['samples_per_s']:,.0f} examples/s"
        )
    two = results[2]
    print(
        f"all-reduce {two['allreduce_bytes'] / 2**20:.0f} MiB, 2 processes: "
        f"{two['allreduce_s'] * 1e3:.1f} ms, bus bandwidth {two['allreduce_bus_gbs']:.2f} GB/s"
    )
    efficiency = two["samples_per_s"] / (2 * results[1]["samples_per_s"])
    print(f"scaling efficiency 1 -> 2 processes: {100 * efficiency:.0f}% on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
