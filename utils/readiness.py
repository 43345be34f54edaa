"""The pre-flight verdicts: one line per item, OK, WARN or FAIL, and for every WARN/FAIL the fix.

    checks = run_checks(platform, hw, versions, import_errors, python, free_bytes, dtype)
    print(checks[0].line())     # "OK    platform: local"

Each check is a pure function of what was detected (the platform, `utils.hardware.Hardware`,
package versions, free disk), so tests can feed it any machine; `utils.preflight` gathers the
facts of this one and prints the lines.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from . import hardware, runtime
from .i18n import text
from .units import GIB

STATUSES = ("OK", "WARN", "FAIL")
MIN_FREE_GIB = 5


@dataclass(frozen=True)
class Check:
    status: str  # "OK", "WARN" or "FAIL"
    item: str
    detail: str
    fix: str = ""

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, not {self.status!r}")

    def line(self) -> str:
        line = f"{self.status:<4}  {self.item}: {self.detail}"
        return f"{line}  →  {self.fix}" if self.fix else line


def install_command(package: str, platform: str) -> str:
    if runtime.is_hosted(platform):
        return f"%pip install {package}"  # in a notebook cell on Colab/Kaggle
    return f"{sys.executable} -m pip install {package}"


def check_python(version: tuple[int, int]) -> Check:
    found = f"{version[0]}.{version[1]}"  # a version, not a decimal number
    if version >= (3, 11):
        return Check("OK", "Python", found)
    return Check(
        "FAIL",
        "Python",
        found,
        text("install Python 3.11 or newer", "Installiere Python 3.11 oder neuer"),
    )


def check_packages(
    versions: dict[str, str | None], import_errors: dict[str, str], platform: str
) -> list[Check]:
    checks = []
    for name, version in versions.items():
        if version is None:
            checks.append(
                Check(
                    "FAIL",
                    name,
                    text("not installed", "nicht installiert"),
                    install_command(name, platform),
                )
            )
        elif name in import_errors:
            checks.append(
                Check(
                    "FAIL",
                    name,
                    text(
                        "{version} is installed but fails to import: {error}",
                        "{version} ist installiert, lässt sich aber nicht importieren: {error}",
                        version=version,
                        error=import_errors[name],
                    ),
                    text(
                        "restart the runtime/kernel; if it stays, reinstall: {command}",
                        "Starte Laufzeit/Kernel neu; hilft das nicht, installiere neu: {command}",
                        command=install_command(f"--force-reinstall {name}", platform),
                    ),
                )
            )
        else:
            checks.append(Check("OK", name, version))
    return checks


def check_accelerator(platform: str, hw: hardware.Hardware) -> list[Check]:
    checks = [
        Check(
            "FAIL",
            text("accelerator", "Beschleuniger"),
            problem,
            text(
                "restart the runtime; check the driver with nvidia-smi",
                "Starte die Laufzeit neu; prüfe den Treiber mit nvidia-smi",
            ),
        )
        for problem in hw.problems
    ]
    item = text("accelerator", "Beschleuniger")
    switch = {
        "colab": text(
            "Runtime → Change runtime type → T4 GPU", "Laufzeit → Laufzeittyp ändern → T4-GPU"
        ),
        "kaggle": "Session options → Accelerator → GPU T4 x2",  # Kaggle's menu is English only
    }.get(platform, "")
    if any("P100" in g.name for g in hw.gpus):
        checks.append(
            Check(
                "FAIL",
                item,
                text(
                    "Tesla P100: current PyTorch builds have no kernels for it (sm_60)",
                    "Tesla P100: aktuelle PyTorch-Builds haben dafür keine Kernel (sm_60)",
                ),
                switch or text("use a T4 or newer GPU", "Nimm eine T4 oder eine neuere GPU"),
            )
        )
    elif hw.accelerator == "cpu" and runtime.is_hosted(platform):
        checks.append(
            Check(
                "WARN",
                item,
                text(
                    "none - the lessons run, but on the CPU",
                    "keiner – die Lektionen laufen, aber auf der CPU",
                ),
                switch,
            )
        )
    elif hw.accelerator == "cpu":
        checks.append(
            Check(
                "OK",
                item,
                text(
                    "none, {cores} CPU cores (lessons use CPU sizes)",
                    "keiner, {cores} CPU-Kerne (die Lektionen wählen CPU-Größen)",
                    cores=hw.cpu.cores,
                ),
            )
        )
    else:
        detail = hw.summary()
        if hw.gpus and hw.gpus[0].compute_capability:
            detail += ", Compute Capability " + ".".join(map(str, hw.gpus[0].compute_capability))
        checks.append(Check("OK", item, detail))
    return checks


def check_dtype(dtype: str, hw: hardware.Hardware) -> Check:
    """Is the requested low-precision dtype fast on this device?"""
    item = f"dtype {dtype}"
    if dtype == "bfloat16":
        slow = [g for g in hw.gpus if not g.has_fast_bf16]
        if slow:
            cc = ".".join(map(str, slow[0].compute_capability or ("?",)))
            return Check(
                "WARN",
                item,
                text(
                    "{name} (compute capability {cc}) only emulates bf16: slower than fp32",
                    "{name} (Compute Capability {cc}) emuliert bf16 nur: langsamer als fp32",
                    name=slow[0].name,
                    cc=cc,
                ),
                text(
                    "use float16 (with loss scaling) on this GPU",
                    "Nimm auf dieser GPU float16 (mit Loss Scaling)",
                ),
            )
        if hw.accelerator == "cpu" and not hw.cpu.has_fast_bf16:
            return Check(
                "WARN",
                item,
                text(
                    "this CPU has no bf16 instructions (AVX512-BF16/AMX)",
                    "diese CPU hat keine bf16-Befehle (AVX512-BF16/AMX)",
                ),
                text("use float32 on this CPU", "Nimm auf dieser CPU float32"),
            )
    elif dtype == "float16" and hw.accelerator == "cpu":
        return Check(
            "WARN",
            item,
            text(
                "float16 matmul on a CPU is many times slower than float32",
                "eine float16-Matmul ist auf der CPU um ein Vielfaches langsamer als float32",
            ),
            text(
                "use bfloat16 (if the CPU has it) or float32",
                "Nimm bfloat16 (falls die CPU es kann) oder float32",
            ),
        )
    elif dtype not in ("float32", "float16", "bfloat16"):
        raise ValueError(
            text(
                "dtype must be float32, float16 or bfloat16, not {dtype!r}",
                "dtype muss float32, float16 oder bfloat16 sein, nicht {dtype!r}",
                dtype=dtype,
            )
        )
    return Check("OK", item, text("fast on this device", "auf diesem Gerät schnell"))


def check_disk(free_bytes: int) -> Check:
    free_gib = free_bytes / GIB
    item = text("disk", "Speicherplatz")
    if free_gib >= MIN_FREE_GIB:
        return Check("OK", item, text("{v:.0f} GiB free", "{v:.0f} GiB frei", v=free_gib))
    return Check(
        "WARN",
        item,
        text("only {v:.1f} GiB free", "nur {v:.1f} GiB frei", v=free_gib),
        text(
            "free at least {need} GiB for models and checkpoints",
            "Gib mindestens {need} GiB für Modelle und Checkpoints frei",
            need=MIN_FREE_GIB,
        ),
    )


def run_checks(
    platform: str,
    hw: hardware.Hardware,
    versions: dict[str, str | None],
    import_errors: dict[str, str],
    python: tuple[int, int],
    free_bytes: int,
    dtype: str | None = None,
) -> list[Check]:
    checks = [
        Check("OK", text("platform", "Plattform"), runtime.platform_name(platform)),
        check_python(python),
    ]
    checks += check_packages(versions, import_errors, platform)
    checks += check_accelerator(platform, hw)
    if dtype:
        checks.append(check_dtype(dtype, hw))
    checks.append(check_disk(free_bytes))
    return checks
