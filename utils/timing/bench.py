"""Timing a computation correctly, on any backend: the one timer every lesson uses.

    from utils.timing.bench import measure
    m = measure(torch.matmul, a, b, flops=2 * n**3)
    print(m)            # median, IQR, n, FLOP/s, % of peak, threads

What it does, and why (docs/facts.md §3):
1. The first ("cold") call is timed on its own and reported separately: it includes
   compilation, memory allocation and library start-up.
2. Calls are grouped into blocks long enough (≥ `min_block` s) that the timer's own cost
   disappears; finding the block size is also the warm-up.  A later block that comes out
   shorter than `min_block` (the warm-up was slowed by a stall, so the count is too small) grows
   the count and starts the blocks again: every block kept lasts at least `min_block`, whatever
   the load.
3. Each block is synchronised (`utils.timing.sync`): accelerators run asynchronously, so without
   a sync the clock stops when the work was *queued*, not when it was *done*.
4. Several blocks give a median and an interquartile range (IQR); a large spread is flagged
   (`utils.timing.measurement`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from utils.i18n import text
from utils.platform.chips import Chip, chip_for, cpu_estimate
from utils.timing.measurement import Measurement
from utils.timing.sync import BACKENDS, backend_of, synchronizer


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


def device_peak(backend: str, result: Any = None) -> Chip | None:
    """The peak of the device a result lives on (datasheet), or an estimate for the CPU."""
    try:
        if backend == "cuda":
            import torch

            return chip_for(torch.cuda.get_device_name(getattr(result, "device", None)))
        if backend == "jax":
            import jax

            device = jax.devices()[0]
            if device.platform != "cpu":
                return chip_for(device.device_kind)
        if backend in ("cpu", "jax"):
            from utils.platform.hardware import detect_cpu

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
    peak: Chip | None = None,
    clock: Callable[[], float] | None = None,
    **kwargs: Any,
) -> Measurement:
    """Time `fn(*args, **kwargs)`: cold call, warm-up, synchronised blocks, median and IQR.

    backend   where the work runs; found from the first result when left out
    sync      a function(result) that waits for the work, for backends this module doesn't know
    flops     floating-point operations of one call: gives FLOP/s and % of peak
    dtype     the dtype the FLOPs are done in (for % of peak)
    clock     seconds as a float; None: `time.perf_counter`, looked up when `measure` runs (so a
              test or a lab can hand in a fake clock, or `utils.sim.asyncsim.virtual_time` swap it)
    """
    _check_arguments(fn, min_block, min_time, max_time, min_blocks, backend)
    clock = clock or time.perf_counter

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
    # The blocks.  A stall during the warm-up (another process took the core, the OS swapped a
    # page in) makes the calls look slower than they are, so `number` can come out too small and
    # every later block too short.  A block under min_block is therefore not kept: the count
    # grows and the block is run again, and the blocks kept so far are re-scaled to the new count
    # only by dropping them (a mix of block sizes would weigh the timer's own cost differently).
    times: list[float] = []
    while len(times) < min_blocks or sum(times) * number < min_time:
        elapsed = run_block(number)
        spent += elapsed
        if elapsed < min_block and spent < max_time / 2:
            number *= 10 if elapsed < min_block / 10 else 2
            times = []
            continue
        times.append(elapsed / number)
        if spent >= max_time and len(times) >= 2:
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
