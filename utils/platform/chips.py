"""The chips the course knows: data-sheet peaks per dtype and host links, each with its source.

    from utils.platform.chips import CHIPS, chip_for
    t4 = chip_for("Tesla T4")         # how torch or JAX names the device -> the row, or None
    t4.tflops["float16"], t4.bandwidth_gbs, t4.link   # 65.0, 320, PCIe Gen3 x16: 15.75 GB/s

Peaks are dense (no sparsity), in TFLOP/s (INT8 in TOPS); `pcie` is the host link (generation,
lanes).  A device not in the table gets an honest "unknown" (None); for a CPU, `cpu_estimate`
computes a peak from what the machine reports (docs/facts.md §3, §4).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from utils.i18n import text, when

# PCI Express per lane and direction: transfer rate (GT/s) × line-code efficiency / 8 bits.
# Source: PCI-SIG base specifications 1.0-6.0 (Gen 6 counts its FLIT efficiency 242/256);
# checked 2026-11.
PCIE_RATES = {
    1: (2.5, 8 / 10),
    2: (5.0, 8 / 10),
    3: (8.0, 128 / 130),
    4: (16.0, 128 / 130),
    5: (32.0, 128 / 130),
    6: (64.0, 242 / 256),
}
# What pinned host->device copies reach in practice: a rule of thumb collected for this course
# from published bandwidth tests (2026-11); pageable memory is clearly slower.
PCIE_PINNED_TYPICAL = {3: (12.0, 12.0), 4: (25.0, 25.0), 5: (35.0, 53.0)}
LINK_CHECKED = "2026-11"
LINK_SOURCE = (
    f"PCI-SIG specifications; NVIDIA data sheets (checked {when(LINK_CHECKED, 'en')})",
    f"PCI-SIG-Spezifikationen; NVIDIA-Datenblätter (Stand: {when(LINK_CHECKED, 'de')})",
)


def pcie_gbs(generation: int, lanes: int = 16) -> float:
    """Theoretical PCIe bandwidth, GB/s in one direction (Gen 3 x16: 15.75 GB/s)."""
    if generation not in PCIE_RATES:
        raise ValueError(
            text(
                "PCIe generation {generation!r} is unknown: use one of {known}.",
                "PCIe-Generation {generation!r} ist unbekannt: Nimm eine aus {known}.",
                generation=generation,
                known=sorted(PCIE_RATES),
            )
        )
    rate, efficiency = PCIE_RATES[generation]
    return rate * efficiency / 8 * lanes


@dataclass(frozen=True)
class Link:
    """The link between host memory and a GPU."""

    generation: int
    lanes: int
    source: str  # "nvidia-smi" or the data sheet

    @property
    def gbs(self) -> float:
        return pcie_gbs(self.generation, self.lanes)

    @property
    def typical_pinned_gbs(self) -> tuple[float, float] | None:
        return PCIE_PINNED_TYPICAL.get(self.generation)

    def __str__(self) -> str:
        return text(
            "PCIe Gen{generation} x{lanes}: {gbs:.2f} GB/s ({source})",
            generation=self.generation,
            lanes=self.lanes,
            gbs=self.gbs,
            source=self.source,
        )


@dataclass(frozen=True)
class Chip:
    """One row of the table: a chip's data-sheet figures, where they come from and when."""

    name: str
    tflops: dict[str, float]  # dtype → dense TFLOP/s
    memory_gb: float | None
    bandwidth_gbs: float | None  # memory bandwidth, GB/s
    source: str
    date: str  # when the figures were checked
    pcie: tuple[int, int] | None = None  # host link: (PCIe generation, lanes)
    aliases: tuple[str, ...] = ()  # other names devices give it ("TPU v5 lite")
    estimate: bool = False

    def for_dtype(self, dtype: str) -> float | None:
        return self.tflops.get(dtype)

    @property
    def checked(self) -> str:
        """When the figures were checked, as the reader's language writes it: "November 2026"."""
        return when(self.date)

    @property
    def link(self) -> Link | None:
        """The host link from the data sheet, or None (a TPU, a CPU)."""
        if self.pcie is None:
            return None
        return Link(*self.pcie, text("data sheet {chip}", "Datenblatt {chip}", chip=self.name))


_CHECKED = "2026-11"
_NVIDIA = "NVIDIA {} datasheet"
_GOOGLE = "Google Cloud TPU documentation"
_FULL = ("float32", "tf32", "float16", "bfloat16", "int8")
CHIPS: dict[str, Chip] = {
    c.name: c
    for c in (
        Chip(
            "T4",
            {"float32": 8.1, "float16": 65.0, "int8": 130.0},
            16,
            320,
            _NVIDIA.format("T4"),
            _CHECKED,
            pcie=(3, 16),
        ),
        Chip(
            "P100",
            {"float32": 9.3, "float16": 18.7},
            16,
            732,
            _NVIDIA.format("P100 PCIe"),
            _CHECKED,
            pcie=(3, 16),
        ),
        Chip(
            "L4",
            dict(zip(_FULL, (30.3, 60.0, 121.0, 121.0, 242.0), strict=True)),
            24,
            300,
            _NVIDIA.format("L4"),
            _CHECKED,
            pcie=(4, 16),
        ),
        Chip(
            "A100",
            dict(zip(_FULL, (19.5, 156.0, 312.0, 312.0, 624.0), strict=True)),
            40,
            1555,
            _NVIDIA.format("A100") + " (40 GB model)",
            _CHECKED,
            pcie=(4, 16),
        ),
        Chip(
            "H100",
            dict(zip(_FULL, (67.0, 495.0, 989.0, 989.0, 1979.0), strict=True)),
            80,
            3350,
            _NVIDIA.format("H100 SXM"),
            _CHECKED,
            pcie=(5, 16),
        ),
        Chip(
            "H200",
            dict(zip(_FULL, (67.0, 495.0, 989.0, 989.0, 1979.0), strict=True)),
            141,
            4800,
            _NVIDIA.format("H200"),
            _CHECKED,
            pcie=(5, 16),
        ),
        Chip("TPU v3", {"bfloat16": 123.0}, 32, 900, _GOOGLE, _CHECKED),
        Chip(
            "TPU v5e",
            {"bfloat16": 197.0, "int8": 394.0},
            16,
            819,
            _GOOGLE,
            _CHECKED,
            aliases=("TPU v5 lite", "TPU v5lite"),
        ),
        Chip(
            "TPU v6e",
            {"bfloat16": 918.0, "int8": 1836.0},
            32,
            1638,
            _GOOGLE,
            _CHECKED,
            aliases=("TPU v6 lite", "TPU v6lite"),
        ),
    )
}


def chip_for(device_name: str) -> Chip | None:
    """The row for a device name ("Tesla T4", "NVIDIA A100-SXM4-40GB", "TPU v5 lite"), or None.

    The one rule: the chip's name or one of its aliases appears in the device's name as a whole
    word, in any case ("L4" is not found in "L40S").  The first row that matches wins."""
    for chip in CHIPS.values():
        for name in (chip.name, *chip.aliases):
            if re.search(rf"\b{re.escape(name)}\b", device_name, re.IGNORECASE):
                return chip
    return None


def cpu_estimate(
    cores: int, cpuinfo: Path = Path("/proc/cpuinfo"), flags: frozenset[str] | None = None
) -> Chip | None:
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
    return Chip(
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
