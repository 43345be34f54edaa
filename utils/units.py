"""Units: bytes in powers of 1024, and bytes, seconds and FLOP/s written for the learner.

    from utils.units import GIB, MIB, format_bytes, format_seconds, format_rate
    format_bytes(3 * GIB)      # '3.00 GiB'   (German: '3,00 GiB')
    format_seconds(0.00013)    # '130 µs'
    format_rate(2.5e11)        # '250 GFLOP/s'

Sizes count in powers of 1024 (KiB, MiB, GiB), as PyTorch and nvidia-smi do; rates and
bandwidths in powers of 1000 (GB/s, TFLOP/s), as data sheets do.  Every number goes through
`text(...)`, so German gets German decimals.
"""

from __future__ import annotations

from .i18n import text

KIB = 2**10
MIB = 2**20
GIB = 2**30


def format_bytes(nbytes: float) -> str:
    """1536 -> '1.50 KiB': powers of 1024, as PyTorch and nvidia-smi count."""
    for unit, scale in (("PiB", 2**50), ("TiB", 2**40), ("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if abs(nbytes) >= scale:
            return text("{v:.2f} {unit}", v=nbytes / scale, unit=unit)
    return text("{v:.0f} B", v=nbytes)


def format_seconds(seconds: float) -> str:
    """0.00013 -> '130 µs' (German decimals in German: '1,5 ms')."""
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return text("{v:.3g} {unit}", v=seconds / scale, unit=unit)
    return text("{v:.3g} {unit}", v=seconds / 1e-9, unit="ns")


def format_rate(flops_per_second: float) -> str:
    """2.5e11 -> '250 GFLOP/s' (German decimals in German: '1,5 TFLOP/s')."""
    for unit, scale in (("TFLOP/s", 1e12), ("GFLOP/s", 1e9), ("MFLOP/s", 1e6)):
        if flops_per_second >= scale:
            return text("{v:.3g} {unit}", v=flops_per_second / scale, unit=unit)
    return text("{v:.3g} {unit}", v=flops_per_second, unit="FLOP/s")
