"""The pre-flight's verdicts on the accelerator: is there one, does its driver answer, which dtype
is fast on it (only where measured or known), and what the pre-flight cannot know without torch."""

from __future__ import annotations

from utils.i18n import text
from utils.platform import hardware, runtime
from utils.preflight.verdict import Check


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
    """Is the requested dtype a good idea on this device?  "Fast" only where the course measured
    it or the hardware is documented to have units for it; otherwise the line says so."""
    item = f"dtype {dtype}"
    if dtype not in ("float32", "float16", "bfloat16"):
        raise ValueError(
            text(
                "dtype must be float32, float16 or bfloat16, not {dtype!r}",
                "dtype muss float32, float16 oder bfloat16 sein, nicht {dtype!r}",
                dtype=dtype,
            )
        )
    if dtype == "float32":
        return Check("OK", item, text("the reference precision", "die Referenzgenauigkeit"))
    if hw.gpus:
        gpu = hw.gpus[0]
        cc = ".".join(map(str, gpu.compute_capability or ("?",)))
        if dtype == "bfloat16" and not gpu.has_fast_bf16:
            return Check(
                "WARN",
                item,
                text(
                    "{name} (compute capability {cc}) only emulates bf16: slower than fp32",
                    "{name} (Compute Capability {cc}) emuliert bf16 nur: langsamer als fp32",
                    name=gpu.name,
                    cc=cc,
                ),
                text(
                    "use float16 (with loss scaling) on this GPU",
                    "Nimm auf dieser GPU float16 (mit Loss Scaling)",
                ),
            )
        known = gpu.compute_capability is not None and gpu.compute_capability >= (7, 0)
        if known:  # tensor cores: fp16 from 7.0 (V100, T4), bf16 from 8.0 (A100 on)
            return Check(
                "OK",
                item,
                text(
                    "{name} has tensor cores for it (compute capability {cc})",
                    "{name} hat Tensor Cores dafür (Compute Capability {cc})",
                    name=gpu.name,
                    cc=cc,
                ),
            )
    elif hw.tpu and dtype == "bfloat16":
        return Check(
            "OK",
            item,
            text("TPUs multiply in bf16 natively", "TPUs multiplizieren nativ in bf16"),
        )
    elif hw.accelerator == "cpu" and dtype == "float16":
        return Check(
            "WARN",
            item,
            text(
                "float16 matmul on a CPU is many times slower than float32",
                "eine float16-Matmul ist auf der CPU um ein Vielfaches langsamer als float32",
            ),
            text(
                "use float32 on the CPU (bfloat16 only where you measured it)",
                "Nimm auf der CPU float32 (bfloat16 nur, wo du es gemessen hast)",
            ),
        )
    elif hw.accelerator == "cpu" and not hw.cpu.has_fast_bf16:
        return Check(
            "WARN",
            item,
            text(
                "this CPU has no bf16 instructions (AVX512-BF16/AMX)",
                "diese CPU hat keine bf16-Befehle (AVX512-BF16/AMX)",
            ),
            text("use float32 on this CPU", "Nimm auf dieser CPU float32"),
        )
    elif hw.accelerator == "cpu":
        # docs/facts.md §7: torch's bf16 matmul beat fp32 on such a CPU, JAX's did not (lesson 04).
        return Check(
            "WARN",
            item,
            text(
                "this CPU has bf16 instructions, but it depends on the library: lesson 04 "
                "measured JAX's bf16 matmul at 0.6–0.75× fp32 on such a CPU",
                "diese CPU hat bf16-Befehle, aber es hängt von der Bibliothek ab: Lektion 04 maß "
                "JAX' bf16-Matmul auf so einer CPU mit 0,6–0,75× fp32",
            ),
            text(
                "measure before you rely on it (lessons 03 and 04), or use float32",
                "Miss, bevor du dich darauf verlässt (Lektionen 03 und 04), oder nimm float32",
            ),
        )
    return Check(
        "OK",
        item,
        text(
            "not measured on this device: time it against float32 (lesson 03)",
            "auf diesem Gerät nicht gemessen: miss es gegen float32 (Lektion 03)",
        ),
    )


def check_accelerator_known(versions: dict[str, str | None], import_errors: dict[str, str]):
    """Without a working torch the pre-flight cannot see a GPU: it says so instead of "none"."""
    if versions.get("torch") and "torch" not in import_errors:
        return None
    return Check(
        "WARN",
        text("accelerator", "Beschleuniger"),
        text(
            "unknown: without torch the pre-flight cannot tell whether there is a GPU",
            "unbekannt: ohne torch kann der Pre-Flight-Check nicht erkennen, ob es eine GPU gibt",
        ),
        text(
            "install the course's environment (make lab), then run the pre-flight again",
            "Installiere die Umgebung des Kurses (make lab) und führ den Check noch einmal aus",
        ),
    )
