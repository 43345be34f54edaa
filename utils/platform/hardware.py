"""What hardware is here: CPU, NVIDIA GPUs, Apple MPS, TPUs.

Two depths:
- `quick_accelerator()` reads only files and environment variables (no torch, no jax),
  fast enough for the setup cell of every notebook;
- `detect()` asks torch (and jax, if the notebook has imported it) for the details.
Every probe takes its framework module as an argument, so tests can hand in fakes.  Which of the
course's hardware profiles this is, is `utils.platform.profiles.hardware_profile`.
"""

from __future__ import annotations

import os
import platform as _platform
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from utils.i18n import text
from utils.units import GIB


@dataclass(frozen=True)
class GPU:
    index: int
    name: str
    memory_gib: float
    compute_capability: tuple[int, int] | None

    @property
    def has_fast_bf16(self) -> bool:
        # A T4 (7.5) reports bf16 as "supported" but emulates it slower than fp32:
        # decide by compute capability, not by torch.cuda.is_bf16_supported().
        return self.compute_capability is not None and self.compute_capability >= (8, 0)

    @property
    def fast_dtype(self) -> str:
        return "bfloat16" if self.has_fast_bf16 else "float16"


@dataclass(frozen=True)
class CPU:
    model: str
    cores: int
    flags: frozenset[str] = frozenset()

    @property
    def has_fast_bf16(self) -> bool:
        return bool({"avx512_bf16", "amx_bf16"} & self.flags)


@dataclass(frozen=True)
class TPU:
    kind: str
    count: int


@dataclass(frozen=True)
class Hardware:
    cpu: CPU
    gpus: tuple[GPU, ...] = ()
    mps: bool = False
    tpu: TPU | None = None
    problems: tuple[str, ...] = field(default=())  # what went wrong while probing

    @property
    def accelerator(self) -> str:
        """ "tpu", "cuda", "mps" or "cpu": the device a lesson computes on."""
        if self.tpu:
            return "tpu"
        if self.gpus:
            return "cuda"
        return "mps" if self.mps else "cpu"

    def summary(self) -> str:
        if self.tpu:
            return text("TPU: {count} × {kind}", count=self.tpu.count, kind=self.tpu.kind)
        if self.gpus:
            return text(
                "GPU: {count} × {names} ({memory:.1f} GiB)",
                count=len(self.gpus),
                names=" + ".join(sorted({g.name for g in self.gpus})),
                memory=self.gpus[0].memory_gib,
            )
        if self.mps:
            return "Apple GPU (MPS)"
        return text(
            "CPU: {cores} cores, no accelerator",
            "CPU: {cores} Kerne, kein Beschleuniger",
            cores=self.cpu.cores,
        )


# --- CPU -------------------------------------------------------------------------------


def usable_cores() -> int:
    """Cores this process may run on (a container or taskset can allow fewer than the machine
    has)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def detect_cpu(cpuinfo: Path = Path("/proc/cpuinfo")) -> CPU:
    model, flags = _platform.processor() or _platform.machine(), frozenset()
    try:
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "model name":
                model = value.strip()
            elif key == "flags":
                flags = frozenset(value.split())
            if model and flags:
                break
    except OSError:
        pass  # macOS, Windows: no /proc
    cores = usable_cores()
    return CPU(model=model or "unknown", cores=cores, flags=flags)


def blas_info() -> list[dict]:
    """Which BLAS numpy calls, with how many threads (threadpoolctl)."""
    try:
        import numpy  # noqa: F401  -- loads the BLAS library threadpoolctl looks for
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    return [
        {k: info.get(k) for k in ("internal_api", "version", "num_threads", "architecture")}
        for info in threadpool_info()
        if info.get("user_api") == "blas"
    ]


# --- CPU caches ---------------------------------------------------------------------------

CACHE_LEVELS = ("L1d", "L2", "L3")
MEMORY, UNKNOWN = "memory", "unknown"  # level_for's answers beyond the caches


def cache_level_name(level: str) -> str:
    """A level from `Caches.level_for`, as the learner reads it: "L2", "main memory", "unknown"."""
    names = {MEMORY: text("main memory", "Hauptspeicher"), UNKNOWN: text("unknown", "unbekannt")}
    return names.get(level, level)


@dataclass(frozen=True)
class Caches:
    """Data-cache sizes in bytes one core sees (None: unknown), and where they were read."""

    l1d: int | None = None
    l2: int | None = None
    l3: int | None = None
    source: str = "unknown"

    def sizes(self) -> dict[str, int | None]:
        return dict(zip(CACHE_LEVELS, (self.l1d, self.l2, self.l3), strict=True))

    def level_for(self, nbytes: float) -> str:
        """The smallest cache that holds `nbytes`, "memory" if none does, "unknown" if no size
        beyond it is known (a working set larger than every known cache may still fit one
        that was not reported).  A working set as large as a cache does not fit it: code, the
        stack and other processes need room there too."""
        known = [(name, size) for name, size in self.sizes().items() if size is not None]
        for name, size in known:
            if nbytes < size:
                return name
        return MEMORY if self.l3 is not None else UNKNOWN


def _cache_bytes(value: str) -> int | None:
    """'32K', '1024K', '32M', '1 MiB' (sysfs, lscpu) → bytes."""
    value = value.strip().replace("iB", "").replace(" ", "").upper()
    factor = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(value[-1:], 1)
    digits = value.rstrip("KMGB")
    return int(float(digits) * factor) if digits.replace(".", "", 1).isdigit() else None


def cpu_caches(
    sysfs: Path = Path("/sys/devices/system/cpu/cpu0/cache"),
    sysctl: Callable[[str], str | None] | None = None,
) -> Caches:
    """The caches of core 0: Linux's sysfs (what `lscpu` reads), else macOS's `sysctl`, else
    unknown.  Only data and unified caches count: instructions don't hold a matrix."""
    found: dict[str, int] = {}
    for index in sorted(sysfs.glob("index[0-9]*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = _cache_bytes((index / "size").read_text())
        except (OSError, ValueError):
            continue
        name = "L1d" if level == 1 else f"L{level}"
        if kind in ("Data", "Unified") and name in CACHE_LEVELS and size:
            found[name] = size
    if found:
        return Caches(found.get("L1d"), found.get("L2"), found.get("L3"), "sysfs")
    if sysctl is None and sys.platform == "darwin":
        sysctl = _sysctl
    if sysctl is not None:
        keys = ("hw.l1dcachesize", "hw.l2cachesize", "hw.l3cachesize")
        values = [sysctl(key) for key in keys]
        sizes = [int(v) if v and v.strip().isdigit() and int(v) > 0 else None for v in values]
        if any(sizes):
            return Caches(*sizes, source="sysctl")
    return Caches()


def _sysctl(key: str) -> str | None:
    import subprocess

    try:
        done = subprocess.run(["sysctl", "-n", key], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


# --- accelerators through the frameworks -------------------------------------------------


def detect_cuda(torch: ModuleType | None) -> tuple[list[GPU], list[str]]:
    """GPUs torch can use, and problems met on the way (a broken driver is a problem, not a
    crash)."""
    if torch is None:
        return [], []
    try:
        if not torch.cuda.is_available():
            return [], []
        gpus = []
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            gpus.append(GPU(i, p.name, round(p.total_memory / GIB, 1), (p.major, p.minor)))
        return gpus, []
    except Exception as err:  # noqa: BLE001 -- any driver error becomes a report line
        return [], [f"CUDA: {type(err).__name__}: {err}"]


def detect_mps(torch: ModuleType | None) -> bool:
    try:
        return bool(torch is not None and torch.backends.mps.is_available())
    except Exception:  # noqa: BLE001
        return False


def detect_tpu(jax: ModuleType | None) -> tuple[TPU | None, list[str]]:
    if jax is None:
        return None, []
    try:
        devices = jax.devices("tpu")
    except RuntimeError:
        return None, []  # JAX says: no TPU backend here
    except Exception as err:  # noqa: BLE001
        return None, [f"TPU: {type(err).__name__}: {err}"]
    if not devices:
        return None, []
    return TPU(kind=devices[0].device_kind, count=len(devices)), []


def _import_or_none(name: str) -> tuple[ModuleType | None, list[str]]:
    try:
        return __import__(name), []
    except ImportError:
        return None, []
    except Exception as err:  # noqa: BLE001 -- e.g. a torch built for another CUDA
        return None, [f"import {name}: {type(err).__name__}: {err}"]


def detect(use_jax: bool | None = None) -> Hardware:
    """Everything about this machine.  JAX is asked only if the notebook already imported it
    (or use_jax=True): importing it here would fix its device configuration too early."""
    torch, problems = _import_or_none("torch")
    gpus, cuda_problems = detect_cuda(torch)
    if use_jax is None:
        use_jax = "jax" in sys.modules
    jax, jax_problems = _import_or_none("jax") if use_jax else (None, [])
    tpu, tpu_problems = detect_tpu(jax)
    return Hardware(
        cpu=detect_cpu(),
        gpus=tuple(gpus),
        mps=detect_mps(torch),
        tpu=tpu,
        problems=tuple(problems + cuda_problems + jax_problems + tpu_problems),
    )


# --- the quick look for the setup cell -------------------------------------------------------


def quick_accelerator(
    environ: Mapping[str, str] | None = None,
    proc: Path = Path("/proc"),
    dev: Path = Path("/dev"),
) -> str:
    """A one-line guess from files and environment variables only (milliseconds, no imports)."""
    env = os.environ if environ is None else environ
    tpu_type = env.get("TPU_ACCELERATOR_TYPE")
    if tpu_type or env.get("ISTPUVM") == "1" or any(dev.glob("accel[0-9]*")):
        return text("TPU ({kind})", kind=tpu_type) if tpu_type else "TPU"
    models = []
    for info in sorted(proc.glob("driver/nvidia/gpus/*/information")):
        try:
            for line in info.read_text().splitlines():
                if line.startswith("Model:"):
                    models.append(line.split(":", 1)[1].strip())
        except OSError:
            continue
    if models:
        return text(
            "GPU: {count} × {names}", count=len(models), names=" + ".join(sorted(set(models)))
        )
    if sys.platform == "darwin" and _platform.machine() == "arm64":
        return "Apple GPU (MPS)"
    return text("CPU ({cores} cores)", "CPU ({cores} Kerne)", cores=usable_cores())
