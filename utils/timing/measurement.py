"""What one timing holds, and how it reads: median, IQR, FLOP/s, % of peak, a noise warning.

`utils.timing.bench.measure` makes a `Measurement`; `print(m)` shows it in the learner's language,
one line each: the median with its IQR and the number of blocks, the first (cold) call, FLOP/s and
% of peak when the FLOPs are known, the thread settings, and a warning when the spread is large.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from utils.i18n import text
from utils.platform.chips import Chip
from utils.units import format_rate, format_seconds

SPREAD_WARNING = 0.10  # IQR / median above this: the measurement is noisy


def _quartiles(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


@dataclass
class Measurement:
    """Seconds per call: one value per block of `number` calls."""

    name: str
    times: list[float]
    number: int
    cold: float
    backend: str
    flops: float | None = None
    dtype: str | None = None
    peak: Chip | None = None
    threads: dict[str, Any] = field(default_factory=dict)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def iqr(self) -> float:
        low, high = _quartiles(self.times)
        return high - low

    @property
    def n(self) -> int:
        return len(self.times)

    @property
    def spread(self) -> float:
        return self.iqr / self.median if self.median > 0 else math.inf

    @property
    def noisy(self) -> bool:
        return self.spread > SPREAD_WARNING

    @property
    def flops_per_second(self) -> float | None:
        return self.flops / self.median if self.flops else None

    @property
    def percent_of_peak(self) -> float | None:
        peak = self.peak.for_dtype(self.dtype) if self.peak and self.dtype else None
        rate = self.flops_per_second
        return 100 * rate / (peak * 1e12) if peak and rate else None

    def __str__(self) -> str:
        parts = [
            text(
                "{name} [{backend}]: median {median} (IQR {iqr}, n={n} × {number} calls)",
                "{name} [{backend}]: Median {median} (IQR {iqr}, n={n} × {number} Aufrufe)",
                name=self.name or "measure",
                backend=self.backend,
                median=format_seconds(self.median),
                iqr=format_seconds(self.iqr),
                n=self.n,
                number=self.number,
            ),
            text("  first call: {t}", "  erster Aufruf: {t}", t=format_seconds(self.cold)),
        ]
        if self.flops_per_second:
            line = "  " + format_rate(self.flops_per_second)
            if self.percent_of_peak is not None:
                line += text(
                    " = {p:.0f}% of the {chip} peak ({dtype})",
                    " = {p:.0f} % der Spitzenleistung der {chip} ({dtype})",
                    p=self.percent_of_peak,
                    chip=self.peak.name,
                    dtype=self.dtype,
                )
                if self.peak.estimate:
                    line += text(", peak estimated", ", Spitzenleistung geschätzt")
            elif self.dtype:
                line += text(
                    " (no peak known for this device and dtype)",
                    " (für dieses Gerät und diesen dtype ist keine Spitzenleistung bekannt)",
                )
            parts.append(line)
        if self.threads:
            parts.append("  " + ", ".join(f"{k}={v}" for k, v in self.threads.items()))
        if self.noisy:
            parts.append(
                text(
                    "  WARNING: spread (IQR/median) is {p:.0f}%: something else is using this "
                    "machine, or the blocks are too short. Measure again before you trust it.",
                    "  WARNUNG: Die Streuung (IQR/Median) beträgt {p:.0f} %: Etwas anderes nutzt "
                    "die Maschine, oder die Blöcke sind zu kurz. Miss noch einmal, bevor du dem "
                    "Ergebnis traust.",
                    p=100 * self.spread,
                )
            )
        return "\n".join(parts)
