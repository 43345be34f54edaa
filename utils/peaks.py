"""Theoretical peak throughput of common accelerators, each row with its source and date.

Peaks are dense (no sparsity), in TFLOP/s (INT8 in TOPS). A device not in the table gets an
honest "unknown"; for a CPU, `cpu_estimate` computes a peak from what the machine reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .i18n import text


@dataclass(frozen=True)
class Peak:
    chip: str
    tflops: dict[str, float]  # dtype → dense TFLOP/s
    memory_gb: float | None
    bandwidth_gbs: float | None  # memory bandwidth, GB/s
    source: str
    date: str  # when the figure was checked
    estimate: bool = False

    def for_dtype(self, dtype: str) -> float | None:
        return self.tflops.get(dtype)


_DATASHEETS = "2026-11"
PEAKS: dict[str, Peak] = {
    p.chip: p
    for p in (
        Peak(
            "T4",
            {"float32": 8.1, "float16": 65.0, "int8": 130.0},
            16,
            320,
            "NVIDIA T4 datasheet",
            _DATASHEETS,
        ),
        Peak(
            "P100",
            {"float32": 9.3, "float16": 18.7},
            16,
            732,
            "NVIDIA P100 PCIe datasheet",
            _DATASHEETS,
        ),
        Peak(
            "L4",
            {"float32": 30.3, "tf32": 60.0, "float16": 121.0, "bfloat16": 121.0, "int8": 242.0},
            24,
            300,
            "NVIDIA L4 datasheet",
            _DATASHEETS,
        ),
        Peak(
            "A100",
            {"float32": 19.5, "tf32": 156.0, "float16": 312.0, "bfloat16": 312.0, "int8": 624.0},
            40,
            1555,
            "NVIDIA A100 datasheet (40 GB model)",
            _DATASHEETS,
        ),
        Peak(
            "H100",
            {"float32": 67.0, "tf32": 495.0, "float16": 989.0, "bfloat16": 989.0, "int8": 1979.0},
            80,
            3350,
            "NVIDIA H100 SXM datasheet",
            _DATASHEETS,
        ),
        Peak(
            "H200",
            {"float32": 67.0, "tf32": 495.0, "float16": 989.0, "bfloat16": 989.0, "int8": 1979.0},
            141,
            4800,
            "NVIDIA H200 datasheet",
            _DATASHEETS,
        ),
        Peak("TPU v3", {"bfloat16": 123.0}, 32, 900, "Google Cloud TPU documentation", _DATASHEETS),
        Peak(
            "TPU v5e",
            {"bfloat16": 197.0, "int8": 394.0},
            16,
            819,
            "Google Cloud TPU documentation",
            _DATASHEETS,
        ),
        Peak(
            "TPU v6e",
            {"bfloat16": 918.0, "int8": 1836.0},
            32,
            1638,
            "Google Cloud TPU documentation",
            _DATASHEETS,
        ),
    )
}

# How devices name themselves → the chip in PEAKS.  Order matters: first match wins.
_NAMES = (
    (r"\bT4\b", "T4"),
    (r"P100", "P100"),
    (r"\bL4\b", "L4"),
    (r"A100", "A100"),
    (r"H100", "H100"),
    (r"H200", "H200"),
    (r"TPU v3", "TPU v3"),
    (r"TPU v5 ?(lite|e)", "TPU v5e"),
    (r"TPU v6 ?(lite|e)", "TPU v6e"),
)


def peak_for(device_name: str) -> Peak | None:
    """The datasheet peak for a device name such as "Tesla T4" or "TPU v5 lite", or None."""
    for pattern, chip in _NAMES:
        if re.search(pattern, device_name, re.IGNORECASE):
            return PEAKS[chip]
    return None


def cpu_estimate(
    cores: int, cpuinfo: Path = Path("/proc/cpuinfo"), flags: frozenset[str] | None = None
) -> Peak | None:
    """cores × clock × FLOPs per cycle: 2 FMA units × vector width × 2 (multiply and add).

    An estimate: the clock in /proc/cpuinfo may be the base or the current one, and not every
    CPU has two FMA units per core.  None where the clock is unknown (macOS, Windows)."""
    try:
        info = cpuinfo.read_text()
    except OSError:
        return None
    mhz = [float(m) for m in re.findall(r"^cpu MHz\s*:\s*([\d.]+)", info, re.MULTILINE)]
    if not mhz:
        return None
    if flags is None:
        found = re.search(r"^flags\s*:(.*)$", info, re.MULTILINE)
        flags = frozenset(found[1].split()) if found else frozenset()
    lanes = 16 if "avx512f" in flags else 8 if "avx2" in flags else 4  # fp32 lanes per vector
    fp32 = cores * max(mhz) * 1e6 * 2 * lanes * 2 / 1e12
    tflops = {"float32": fp32}
    if {"avx512_bf16", "amx_bf16"} & flags:
        tflops["bfloat16"] = 2 * fp32  # a bf16 dot-product instruction does twice the work
    return Peak(
        "CPU",
        tflops,
        None,
        None,
        text(
            "estimate from /proc/cpuinfo: cores × clock × FLOPs/cycle",
            "Schätzung aus /proc/cpuinfo: Kerne × Takt × FLOPs/Takt",
        ),
        "computed",
        estimate=True,
    )
