"""Timing a computation correctly, on any backend: the one timer every lesson uses.

    from utils.bench import measure
    m = measure(torch.matmul, a, b, flops=2 * n**3)
    print(m)            # median, IQR, n, FLOP/s, % of peak, threads

What it does, and why (docs/facts.md §3):
1. The first ("cold") call is timed on its own and reported separately: it includes
   compilation, memory allocation and library start-up.
2. Calls are grouped into blocks long enough (≥ `min_block` s) that the timer's own cost
   disappears; finding the block size is also the warm-up.
3. Each block is synchronised: accelerators run asynchronously, so without a sync the clock
   stops when the work was *queued*, not when it was *done*.
4. Several blocks give a median and an interquartile range (IQR); a large spread is flagged.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .i18n import text
from .peaks import Peak, cpu_estimate, peak_for

BACKENDS = ("cpu", "cuda", "mps", "jax", "xla")
SPREAD_WARNING = 0.10  # IQR / median above this: the measurement is noisy


# --- synchronisation per backend -----------------------------------------------------------------


def backend_of(value: Any) -> str:
    """Where a result lives: "jax", "cuda", "mps", "xla" or "cpu" (numpy, Python numbers)."""
    items = value if isinstance(value, (tuple, list)) else (value,)
    for item in items:
        module = type(item).__module__
        if module.startswith(("jax", "jaxlib")):
            return "jax"
        device = getattr(item, "device", None)
        kind = getattr(device, "type", None)
        if module.startswith("torch") and kind in ("cuda", "mps", "xla"):
            return kind
    return "cpu"


def synchronizer(backend: str) -> Callable[[Any], None]:
    """A function that waits until the work producing `result` has finished."""
    if backend == "cuda":
        import torch

        return lambda result: torch.cuda.synchronize()
    if backend == "mps":
        import torch

        return lambda result: torch.mps.synchronize()
    if backend == "jax":
        import jax

        return lambda result: jax.block_until_ready(result)
    if backend == "xla":
        import torch_xla

        return lambda result: torch_xla.sync(wait=True)
    return lambda result: None  # numpy and torch on the CPU return when the work is done


# --- the measurement -----------------------------------------------------------------------------


def _dtype_name(dtype: Any) -> str | None:
    if dtype is None:
        return None
    if isinstance(dtype, type):  # a scalar type: numpy.float32, jax.numpy.bfloat16
        import numpy

        if issubclass(dtype, numpy.generic):
            dtype = numpy.dtype(dtype)
        elif isinstance(getattr(dtype, "dtype", None), numpy.dtype):
            dtype = dtype.dtype  # JAX's scalar types carry their numpy dtype
    name = str(getattr(dtype, "name", dtype)).replace("torch.", "")
    return {
        "float": "float32",
        "half": "float16",
        "bf16": "bfloat16",
        "fp16": "float16",
        "fp32": "float32",
    }.get(name, name)


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
    peak: Peak | None = None
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
                    chip=self.peak.chip,
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


def thread_info() -> dict[str, Any]:
    """Threads the libraries will use: they change CPU timings by a factor of the core count."""
    info: dict[str, Any] = {}
    torch = sys.modules.get("torch")
    if torch is not None:
        info["torch_threads"] = torch.get_num_threads()
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return info
    for pool in threadpool_info():
        if pool.get("user_api") == "blas":
            info[f"{pool['internal_api']}_threads"] = pool["num_threads"]
            if pool.get("architecture"):
                info[f"{pool['internal_api']}_kernel"] = pool["architecture"]
    return info


def device_peak(backend: str, result: Any = None) -> Peak | None:
    """The peak of the device a result lives on (datasheet), or an estimate for the CPU."""
    try:
        if backend == "cuda":
            import torch

            return peak_for(torch.cuda.get_device_name(getattr(result, "device", None)))
        if backend == "jax":
            import jax

            device = jax.devices()[0]
            if device.platform != "cpu":
                return peak_for(device.device_kind)
        if backend in ("cpu", "jax"):
            from .hardware import detect_cpu

            return cpu_estimate(detect_cpu().cores)
    except Exception:  # noqa: BLE001 -- a peak is extra information, never a reason to fail
        return None
    return None


def _check_arguments(fn, min_block, min_time, max_time, min_blocks, backend) -> None:
    if not callable(fn):
        raise TypeError(
            text(
                "measure() needs a function to call, got {kind}. Pass the function itself, "
                "e.g. measure(torch.matmul, a, b), not its result.",
                "measure() braucht eine Funktion, bekam aber {kind}. Übergib die Funktion selbst, "
                "z. B. measure(torch.matmul, a, b), nicht ihr Ergebnis.",
                kind=type(fn).__name__,
            )
        )
    for name, value in (("min_block", min_block), ("min_time", min_time), ("max_time", max_time)):
        if not (isinstance(value, (int, float)) and value > 0):
            raise ValueError(
                text(
                    "{name} must be a positive number of seconds, not {value!r}",
                    "{name} muss eine positive Zahl von Sekunden sein, nicht {value!r}",
                    name=name,
                    value=value,
                )
            )
    if not (isinstance(min_blocks, int) and min_blocks >= 1):
        raise ValueError(
            text(
                "min_blocks must be a whole number ≥ 1, not {value!r}",
                "min_blocks muss eine ganze Zahl ≥ 1 sein, nicht {value!r}",
                value=min_blocks,
            )
        )
    if backend is not None and backend not in BACKENDS:
        raise ValueError(
            text(
                "unknown backend {backend!r}: use one of {known} or leave it out",
                "unbekanntes Backend {backend!r}: Nimm eines von {known} oder lass es weg",
                backend=backend,
                known=", ".join(BACKENDS),
            )
        )


def measure(
    fn: Callable,
    *args: Any,
    flops: float | None = None,
    dtype: Any = None,
    name: str = "",
    backend: str | None = None,
    sync: Callable[[Any], None] | None = None,
    min_block: float = 0.02,
    min_time: float = 0.2,
    max_time: float = 10.0,
    min_blocks: int = 5,
    peak: Peak | None = None,
    **kwargs: Any,
) -> Measurement:
    """Time `fn(*args, **kwargs)`: cold call, warm-up, synchronised blocks, median and IQR.

    backend   where the work runs; found from the first result when left out
    sync      a function(result) that waits for the work, for backends this module doesn't know
    flops     floating-point operations of one call: gives FLOP/s and % of peak
    dtype     the dtype the FLOPs are done in (for % of peak)
    """
    _check_arguments(fn, min_block, min_time, max_time, min_blocks, backend)
    clock = time.perf_counter

    start = clock()
    result = fn(*args, **kwargs)
    backend = backend or backend_of(result)
    wait = sync or synchronizer(backend)
    wait(result)
    cold = clock() - start

    def run_block(number: int) -> float:
        wait(result)  # nothing from before may leak into this block
        start = clock()
        # Drop each result at once, as a loop in real code would: holding it while the next
        # call allocates its own doubles the live memory and, for large outputs, makes the
        # allocator map fresh pages on every call (seen as a 9x slower add of 16 MB arrays).
        for _ in range(number - 1):
            fn(*args, **kwargs)
        out = fn(*args, **kwargs)  # the last one is kept: waiting for it waits for all
        wait(out)
        return clock() - start

    # Find a block size that lasts at least min_block seconds; this is the warm-up too.
    number, spent = 1, 0.0
    while True:
        elapsed = run_block(number)
        spent += elapsed
        if elapsed >= min_block or spent >= max_time / 2:
            break
        number *= 10 if elapsed < min_block / 10 else 2
    times: list[float] = []
    while len(times) < min_blocks or sum(times) * number < min_time:
        times.append(run_block(number) / number)
        if spent + sum(times) * number >= max_time and len(times) >= 2:
            break
    return Measurement(
        name=name or getattr(fn, "__name__", ""),
        times=times,
        number=number,
        cold=cold,
        backend=backend,
        flops=flops,
        dtype=_dtype_name(dtype),
        peak=peak if peak is not None else (device_peak(backend, result) if flops else None),
        threads=thread_info() if backend in ("cpu", "jax") else {},
    )
