"""The fit calculator (utils/fit.py) against measured peaks of the packaged SmolLM2-135M.

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_fit.py

Each configuration (dtype × mode × batch) runs in a clean child forked from one helper process
(utils.peakmem.measure_peak); the table shows predicted / measured.  A benchmark: it prints ratios and asserts nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from transformers import AutoConfig  # noqa: E402

from utils import fit, peakmem  # noqa: E402
from utils.models import smollm2_location  # noqa: E402
from utils.units import format_bytes  # noqa: E402

RUNS = [
    ("inference", "float32", 1, 128),
    ("inference", "bfloat16", 4, 128),
    ("full", "float32", 1, 64),
    ("full", "float32", 4, 128),
    ("full", "float32", 8, 128),
    ("full", "bfloat16", 1, 32),
    ("full", "bfloat16", 4, 128),
]


def main() -> None:
    config = AutoConfig.from_pretrained(smollm2_location()[0])
    print(
        f"{'mode':<10}{'dtype':<10}{'batch':>6}{'seq':>5}{'predicted':>12}{'measured':>12}{'ratio':>7}"
    )
    for run, measured in zip(RUNS, peakmem.measure_peak(RUNS), strict=True):
        predicted = fit.fit(config, run[1], run[0], run[2], run[3], device="cpu").total
        print(
            f"{run[0]:<10}{run[1]:<10}{run[2]:>6}{run[3]:>5}{format_bytes(predicted):>12}"
            f"{format_bytes(measured):>12}{predicted / measured:>7.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
